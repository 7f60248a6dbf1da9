"""The log pass of ``verify-index``: one streaming read of a ``.log``, its own checks, and the batches
its indexes ask about.

Per batch (``FileRecords.scan``'s header tuples: no object per v2 batch) the pass checks the CRC
verdict, that offsets increase and stay at or above the segment's base offset, and that the last
offset is not below the base offset; after the last batch, trailing bytes that do not frame a batch
(Kafka's recovery truncates them).  It records, in a :class:`~kseg.ops.verify.result.LogScan`,
only the batches an index entry can ask about (:class:`~kseg.ops.verify.result.IndexKeys`):
memory follows the index entries, not the batches, so a segment of one-record batches costs what a
segment of large ones does.

With the compiled engine the pass runs a window per call (``verify_window``): every batch of the
window that raises nothing is framed, checked and, when asked about, recorded in C; the batch it stops
at (a problem, an epoch to judge, a batch that is not a whole v2 batch in the window) takes the
per-batch path here (:meth:`_LogPass.batch`, the reference, which the Python engine runs for every
batch), then the window loop goes on.  Both share the running values (:data:`STATE`) and the key
streams' cursors (:class:`~kseg.ops.verify.keys.KeyStream`).
"""

from __future__ import annotations

from array import array

from kseg import engine
from kseg.errors import InputError, KsegError
from kseg.format.v2 import HEADER_SIZE_UP_TO_MAGIC, java_long
from kseg.format.v2 import LEADER_EPOCH as _EPOCH
from kseg.limits import INT64_MAX
from kseg.ops.verify.keys import PAST_ALL, KeyStream
from kseg.ops.verify.result import IndexFiles, IndexKeys, LogScan, SegmentResult
from kseg.ops.verify.sieve import Sieve
from kseg.storage.context import ReadFile, Store
from kseg.storage.leader_epochs import NO_EPOCH, EpochCheck
from kseg.storage.records import FileRecords, ScanItem

#: The slots of ``verify_window``'s int64 state (the C source says what each holds), by name.
STATE = (
    *("V_BASE_OFFSET", "V_LIMIT", "V_EPOCHS", "V_EPOCH_LO", "V_EPOCH_HI", "V_EPOCH_EXPECTED", "V_EPOCH_FROM"),
    *("V_EVERY", "V_HAS_MAX", "V_MAX_LAST", "V_RUNNING", "V_BATCHES", "V_VALID_END", "V_RECORDED"),
)
V_BASE_OFFSET, V_LIMIT, V_EPOCHS, V_EPOCH_LO, V_EPOCH_HI, V_EPOCH_EXPECTED, V_EPOCH_FROM = range(7)
V_EVERY, V_HAS_MAX, V_MAX_LAST, V_RUNNING, V_BATCHES, V_VALID_END, V_RECORDED = range(7, 14)
V_AT = 14  # three slots: each key stream's cursor
V_MORE = 17  # three slots: whether it has keys past its array
V_FIELDS = 20
#: Why ``verify_window`` returned: the batch at its position takes the per-batch path; its rows are full;
#: a key stream's array is used up.
VERIFY_PYTHON, VERIFY_FULL, VERIFY_KEYS = range(3)
#: The rows (batches recorded) ``verify_window`` writes per call at most.
OUT_ROWS = 4096
#: The most batches taken by the per-batch path between two window calls that stop where they start.
MAX_BACKOFF = 256

engine.check(
    {
        **{name: i for i, name in enumerate(STATE)},
        **{"V_AT": V_AT, "V_MORE": V_MORE, "V_FIELDS": V_FIELDS},
        **{"VERIFY_PYTHON": VERIFY_PYTHON, "VERIFY_FULL": VERIFY_FULL, "VERIFY_KEYS": VERIFY_KEYS},
    }
)


def scan_log(
    res: SegmentResult,
    path: str,
    keys: IndexKeys | None = None,
    max_message_size: int | None = None,
    epochs: EpochCheck | None = None,
    *,
    store: Store,
    opened: ReadFile | KsegError | None = None,
) -> LogScan:
    """One pass over the log at ``path`` (in ``store``, its segment's; ``opened``: the log opened with its
    segment, or the error opening it, ``Segment.open``): its checks into ``res``, and the batches ``keys`` ask
    about (every batch when ``keys`` is None).  The recorded batches answer the index
    checks only when the log's last offsets strictly increase and the keys ascend; when they do not, a second
    pass records the batches answering every entry's questions (:mod:`kseg.ops.verify.sieve`: memory follows
    the entries, not the batches; none when the first keys read already do not ascend: the first pass sifts).
    A batch larger than ``max_message_size`` (``--max-message-size``) is a problem.  Each batch with a valid CRC
    goes to ``epochs`` (the leader-epoch check) in the first pass.  An I/O error
    is raised (:class:`InputError`): the segment failed, it is not corrupt."""
    first = _LogPass(res, path, keys, max_message_size, epochs, store=store)
    scan = first.run(opened)
    if not first.every and not (scan.ordered and all([s.ascends() for s in first.streams])):
        again = SegmentResult(res.partition, res.segment, res.base_offset, path, names=res.names)
        files = None if keys is None else keys.files
        scan = _LogPass(again, path, None, max_message_size, None, store=store, sift=files).run()
    return scan


class _LogPass:
    """One read of a log: :meth:`batch` is called for each batch in file order."""

    __slots__ = (
        "res",
        "path",
        "scan",
        "every",
        "positions",
        "offsets",
        "streams",
        "p",
        "o",
        "prev_last",
        "max_last",
        "running",
        "limit",
        "epochs",
        "store",
        "sieve",
        "sift",
    )

    def __init__(
        self,
        res: SegmentResult,
        path: str,
        keys: IndexKeys | None,
        max_message_size: int | None = None,
        epochs: EpochCheck | None = None,
        *,
        store: Store,
        sift: IndexFiles | None = None,
    ) -> None:
        self.res, self.path, self.epochs, self.store = res, path, epochs, store
        self.limit = max_message_size
        self.scan = LogScan()
        # the indexes whose entries' questions choose the batches kept (the sieve, made once the log's size is
        # known: when set, every batch is recorded and the sieve drops those answering nothing)
        self.sift = sift
        self.sieve: Sieve | None = None
        self.every = keys is None or sift is not None  # record every batch
        self.positions = KeyStream(() if keys is None else keys.positions)
        self.offsets = tuple(KeyStream(o) for o in (() if keys is None else keys.offsets))
        # the three streams verify_window walks: positions, then two of offsets (an empty one for an index missing)
        self.streams = (self.positions, *self.offsets, *[KeyStream(()) for _ in range(2 - len(self.offsets))])
        if not all(stream.ascending for stream in self.streams):  # garbage, seen in the first keys: sifted
            self.every = True
            self.sift = None if keys is None else keys.files
            self.positions, self.offsets = KeyStream(()), ()
            self.streams = (self.positions, KeyStream(()), KeyStream(()))
        # the first position and the first offset the log has not passed yet (each stream's head)
        self.p = self.o = 0
        self._heads()
        self.prev_last: int | None = None  # the last batch's last offset
        self.max_last: int | None = None  # the largest last offset so far
        self.running = -1  # the largest batch max timestamp so far

    def run(self, log: ReadFile | KsegError | None = None) -> LogScan:
        res, scan = self.res, self.scan
        try:
            if isinstance(log, KsegError):
                raise log
            opened = FileRecords(self.path, store=self.store, opened=log)
        except InputError:
            raise
        except KsegError as exc:  # a tiered segment whose manifest cannot be read: none of its log was read
            res.problem("corrupt-batch", self.path, exc.describe(), position=None)
            return scan
        with opened as records:
            scan.size = res.bytes = records.size
            if self.sift is not None:
                self.sieve = Sieve.read(self.sift, records.size)
            try:
                state = self._state() if engine.C is not None else None
                if state is not None:
                    self._windows(records, state)
                else:
                    item = self.item
                    for items in records.scan():
                        for one in items:
                            item(one)
            except InputError:  # no corruption: the segment failed (verify_segment), no index check follows
                res.bytes = scan.valid_end  # what was read: the summary counts no bytes that were not
                raise
            except KsegError as exc:
                res.problem("corrupt-batch", self.path, exc.message, position=exc.position)
                self._sift()
            else:
                self._sift()
                trailing = records.size - scan.valid_end
                if trailing > 0:
                    res.problem(
                        "trailing-bytes",
                        self.path,
                        f"{trailing} invalid bytes at the end of the log (Kafka's recovery would truncate them)",
                        position=scan.valid_end,
                    )
        res.batches, res.last_offset = scan.batches, self.max_last
        return scan

    def item(self, item: ScanItem) -> None:
        """:meth:`batch` for one of ``FileRecords.scan``'s items."""
        pos, size, h, verdict = item
        if h is not None:  # a v2 header tuple (kseg.format.v2.BatchHeader's order)
            self.batch(pos, size, h[0], h[0] + h[6], h[8], verdict, h[4], h[_EPOCH])
        else:  # a legacy entry, or a v2 batch too odd or too large for the fast path
            last = verdict.h[0] + verdict.h[6] if verdict.magic >= 2 else verdict.last_offset
            self.batch(
                pos,
                size,
                verdict.base_offset,
                last,
                verdict.max_timestamp,
                verdict.is_valid(),
                verdict.checksum,
                verdict.h[_EPOCH] if verdict.magic >= 2 else NO_EPOCH,
            )

    def batch(
        self, pos: int, size: int, base: int, last: int, max_ts: int, valid: bool, stored_crc: int, epoch: int
    ) -> None:
        """Check one batch's header, and record it if an index entry can ask about it."""
        res, path, scan = self.res, self.path, self.scan
        epochs = self.epochs
        if epochs is not None and valid and not (epochs.lo <= base < epochs.hi and epoch == epochs.expected):
            epochs.batch(base, last, epoch)  # (a batch inside the range its predecessor agreed with agrees too)
        if self.limit is not None and size > self.limit:
            res.problem_at(
                "batch-too-large",
                path,
                "batch larger than --max-message-size",
                pos,
                f"<= {self.limit} bytes",
                f"{size} bytes",
            )
        if not valid:
            res.problem_at(
                "crc",
                path,
                "batch CRC does not match its contents",
                pos,
                "a valid checksum",
                f"stored crc {stored_crc}",
            )
        if base < res.base_offset:
            res.problem_at(
                "offset-below-base",
                path,
                "batch offset below the segment's base offset",
                pos,
                f">= {res.base_offset}",
                base,
            )
        max_last = self.max_last
        if max_last is not None and base <= max_last:
            res.problem_at(
                "offsets-not-increasing", path, "batch offsets do not increase", pos, f"base offset > {max_last}", base
            )
        if last > INT64_MAX:  # baseOffset + lastOffsetDelta past a long: Kafka's lastOffset() wraps
            res.problem_at(
                "bad-last-offset",
                path,
                "batch last offset past 2^63-1 (baseOffset + lastOffsetDelta overflows a 64-bit offset)",
                pos,
                f"<= {INT64_MAX}",
                last,
            )
            last = java_long(last)
        elif last < base:
            res.problem_at("bad-last-offset", path, "batch last offset below its base offset", pos, f">= {base}", last)
        if max_last is None or last > max_last:
            self.max_last = last
        if self.prev_last is not None and last <= self.prev_last:
            scan.ordered = False
        self.prev_last = last
        if max_ts > self.running:
            self.running = max_ts
        scan.batches += 1
        scan.valid_end = pos + size
        if not self.every and not self._asked_about(pos, last):
            return
        scan.positions.append(pos)
        scan.base_offsets.append(base)
        scan.last_offsets.append(last)
        scan.running_max.append(self.running)
        if self.sieve is not None:
            self._sift(OUT_ROWS)

    def _sift(self, least: int = 0) -> None:
        """The batches recorded since the last sift that answer no entry's question dropped, once there are
        ``least`` of them (the sieve's memory: a few thousand rows)."""
        sieve = self.sieve
        if sieve is not None and len(self.scan.positions) - sieve.kept >= least:
            sieve.sift(self.scan)

    def _asked_about(self, pos: int, last: int) -> bool:
        """Whether an ``.index`` entry names ``pos``, or this is the first batch reaching an offset an
        entry names (last offsets increasing: the first whose last offset is >= it)."""
        p = self.p
        if p < pos:
            self.positions.skip(pos)
            p = self.p = self.positions.head()
        if self.o <= last:  # some stream names an offset up to here: pass them all
            for stream in self.offsets:
                stream.skip(last + 1)
            self.o = min([stream.head() for stream in self.offsets])
            return True
        return p == pos

    def _heads(self) -> None:
        """:attr:`p` and :attr:`o` from the key streams (after the window loop moved them)."""
        self.p = self.positions.head()
        self.o = min([stream.head() for stream in self.offsets], default=PAST_ALL)

    # -- the compiled engine's window loop --------------------------------------------------------------
    def _state(self) -> array | None:
        """``verify_window``'s state for this pass, or None when a value it holds is past int64 (the
        per-batch path takes such a segment)."""
        state = array("q", bytes(8 * V_FIELDS))
        epochs = self.epochs
        start = None if epochs is None else epochs.judged_from
        try:
            state[V_BASE_OFFSET] = self.res.base_offset
            state[V_LIMIT] = -1 if self.limit is None else min(self.limit, INT64_MAX)
            state[V_EVERY] = self.every
            if epochs is not None and start is not None:
                state[V_EPOCHS] = 1
                state[V_EPOCH_FROM] = start
        except OverflowError:
            return None
        self._put(state)
        return state

    def _put(self, state: array) -> None:
        """The running values of the per-batch path into ``state``, before a window call."""
        if self.max_last is not None:
            state[V_HAS_MAX], state[V_MAX_LAST] = 1, self.max_last
        state[V_RUNNING], state[V_BATCHES], state[V_VALID_END] = self.running, self.scan.batches, self.scan.valid_end
        epochs = self.epochs
        if state[V_EPOCHS] and epochs is not None:
            lo, hi = epochs.lo, min(epochs.hi, INT64_MAX)  # (a range ending past int64 ends at it: the
            if lo < hi:  # batch at INT64_MAX takes the per-batch path, which judges it as ever)
                state[V_EPOCH_LO], state[V_EPOCH_HI], state[V_EPOCH_EXPECTED] = lo, hi, epochs.expected
            else:
                state[V_EPOCH_LO], state[V_EPOCH_HI] = 0, 0
        for k, stream in enumerate(self.streams):
            state[V_AT + k], state[V_MORE + k] = stream.at, stream.more

    def _take(self, state: array, out: array) -> None:
        """What a window call read, from ``state`` and ``out`` into this pass."""
        scan = self.scan
        if state[V_BATCHES] != scan.batches:
            scan.batches, scan.valid_end = state[V_BATCHES], state[V_VALID_END]
            # every batch it read raised nothing: its last offset is above every earlier one
            self.max_last = self.prev_last = state[V_MAX_LAST]
            self.running = state[V_RUNNING]
        n = state[V_RECORDED]
        if n:
            rows = len(out) // 4
            scan.positions.extend(out[0:n])
            scan.base_offsets.extend(out[rows : rows + n])
            scan.last_offsets.extend(out[2 * rows : 2 * rows + n])
            scan.running_max.extend(out[3 * rows : 3 * rows + n])
            state[V_RECORDED] = 0
            self._sift(OUT_ROWS)
        for k, stream in enumerate(self.streams):
            stream.at = state[V_AT + k]
        self._heads()

    def _windows(self, records: FileRecords, state: array) -> None:
        """The batches of ``records`` a window per call (``verify_window``); the batch it stops at, if any,
        takes :meth:`item`, then the window loop goes on."""
        assert engine.C is not None
        verify_window = engine.C.verify_window
        out = array("q", bytes(32 * OUT_ROWS))
        end = records.end
        stop = end - HEADER_SIZE_UP_TO_MAGIC
        pos = 0
        fast = True
        # batches the per-batch path takes before the next window call: none while the calls make progress;
        # doubling while each stops where it started (a log whose every batch is a problem costs per batch
        # what the Python engine's pass does, not a call more)
        wait = backoff = 0
        while True:
            if fast and pos < stop and not wait:
                try:
                    view, i, n = records.window_from(pos)
                except KsegError:  # a read failing past pos: the per-batch path reads up to it and raises there
                    fast = False
                    continue
                start = pos
                self._put(state)
                streams = self.streams
                pos, why, used_up = verify_window(
                    view, pos - i, i + n, pos, end, state, streams[0].keys, streams[1].keys, streams[2].keys, out
                )
                self._take(state, out)
                if why == VERIFY_KEYS:
                    streams[used_up].refill()
                    self._heads()
                if why != VERIFY_PYTHON:
                    continue
                backoff = 0 if pos != start else min(2 * backoff or 1, MAX_BACKOFF)
                wait = backoff
            if wait >= MAX_BACKOFF:  # a run of batches: FileRecords.scan's lists (it frames a list ahead)
                at = self._per_batch(records, pos, wait)
                if at is None:
                    return
                pos, wait = at, 0
                continue
            item = records.scan_item(pos, end)
            if item is None:
                return
            self.item(item)
            pos += item[1]
            wait = max(wait - 1, 0)

    def _per_batch(self, records: FileRecords, pos: int, want: int) -> int | None:
        """``want`` batches from ``pos`` by the per-batch path; where they end, or None where the log's
        batches end first."""
        item = self.item
        for items in records.scan(pos):
            for one in items:
                item(one)
                pos += one[1]
                want -= 1
                if not want:
                    return pos
        return None
