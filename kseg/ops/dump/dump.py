"""``kseg dump``: the flow of Kafka's ``kafka.tools.DumpLogSegments``, output-agnostic.

:class:`Dumper` walks the files in the order given, dispatching on the
suffix exactly as the Scala does, and reports what it reads to a
:class:`DumpSink`, which the render layer implements
(:class:`kseg.render.text.TextSink` for Kafka's byte-identical text,
:class:`kseg.render.jsonl.JsonSink` for JSON Lines).  Problems that Kafka
collects while dumping (index/log mismatches, time-index errors,
non-consecutive offsets) are gathered here and handed to the sink at the end.

Where Kafka's tool dies with an exception, kseg reports one positioned
error line, marks the run as failed (exit 1) and goes on with the next file.
"""

from __future__ import annotations

import os
from typing import Callable

from kseg.errors import CorruptSnapshotError, InputError, KsegError, UncaughtJavaError
from kseg.format import compression
from kseg.format.indexes import iter_aborted_txns
from kseg.format.strings import decode_text, string_decoder
from kseg.format.v2 import ATTRIBUTES, CONTROL_FLAG, HEADER_SIZE_UP_TO_MAGIC, java_long
from kseg.format.v2_records import SIZES, SLICES, SPANS, WINDOW_SHALLOW, WINDOW_SIZES, WINDOW_STRINGS
from kseg.limits import (
    DEFAULT_MAX_MESSAGE_SIZE,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_PROBLEMS,
    INT32_MAX,
    decompression_limit,
)
from kseg.ops.dump.index import IndexDumper
from kseg.storage import files
from kseg.storage.batch import V2Batch
from kseg.storage.context import Store
from kseg.storage.records import FileRecords
from kseg.storage.snapshots import iter_snapshot
from kseg.storage.stores.discover import store_of
from kseg.valueclass import Protocol


class DumpProgress(Protocol):
    """A progress display over each ``.log`` file's bytes (``kseg.render.progress.ByteProgress``)."""

    def start(self, name: str, total: int) -> None: ...
    def advance_to(self, done: int) -> None: ...
    def close(self) -> None: ...


class DumpSink(Protocol):
    """The output of ``kseg dump`` (``DumpLogSegments``' prints, in order)."""

    # -- file level
    def dumping(self, path: str, store: Store) -> None: ...  # path as shown, of ``store``
    def unknown_file(self, path: str) -> None: ...
    def log_start(self, base_offset: int) -> None: ...
    def bootstrap_snapshot(self) -> None: ...
    def snapshot_start(self, end_offset: int, epoch: int) -> None: ...
    def trailing_bytes(self, n: int, name: str) -> None: ...
    def note(self, message: str) -> None: ...
    def error(self, exc: KsegError) -> None: ...

    # -- batches and records
    def batch(self, b, position: int) -> None:
        """One batch object (:class:`kseg.storage.batch.FileBatch`) at ``position``."""

    def batch_lines(self, items: list) -> None:
        """A list of :meth:`kseg.storage.records.FileRecords.scan` items (shallow iteration)."""

    window_lines: Callable[..., tuple[int, int, bool]] | None
    """The compiled engine's window loop, or None (no engine, or a text it does not write):
    ``window_lines(view, ws, wl, pos, end, mode, last_offset, gap, limit, codecs) -> (pos, last_offset, full)``
    writes the lines of every batch in ``view[:wl]`` (the file from ``ws``) from ``pos`` that it can, in
    ``mode`` (``WINDOW_*``; lz4 and zstd batches decompressed to at most ``limit`` bytes by what ``codecs``, a
    :class:`kseg.format.compression.WindowCodecs`, gives), and stops at the first it cannot (``full``: at an
    output bound, call again)."""

    def control_text(self, b, key, value) -> str:
        """What Kafka prints after a control record's metadata (the sink knows how to print it)."""

    def record(self, b, rec, extra: str | None, key_text: str | None, payload_text: str | None) -> None:
        """One v2 record (:class:`kseg.format.v2_records.Record`); ``extra`` its :meth:`control_text`."""

    def legacy_record(self, b, rec, key_text: str | None, payload_text: str | None) -> None:
        """One v0/v1 record (:class:`kseg.format.legacy.LegacyRecord`)."""

    def decoded_record(self, b, rec, key_decoder: Callable, value_decoder: Callable) -> None:
        """One data record (v0/v1 or v2) whose key and value go to a structured decoder (the registry's):
        its text, or in JSON its fields (the decoded value and its schema)."""

    def partial_record(self, b, rec) -> None:
        """A data record on which the topic decoder died (:class:`kseg.errors.UncaughtJavaError`): what
        Kafka's tool has printed of its line by then."""

    def v2_records(
        self, b, records: list, key_decoder: Callable | None = None, value_decoder: Callable | None = None
    ) -> None:
        """A chunk of a v2 data batch's records (``V2Batch.record_chunks``), the deep hot path:
        without decoders key and value are sizes, with them slices to decode."""

    spans: bool
    """Whether the sink takes ``--print-data-log`` records with Kafka's string decoders as spans
    (:meth:`v2_spans`) rather than slices (:meth:`v2_records`)."""

    def v2_spans(self, b, records: list, buf) -> None:
        """:meth:`v2_records` with Kafka's string decoders, key and value spans in ``buf``
        (``V2Batch.form_chunks`` of form :data:`kseg.format.v2_records.SPANS`)."""

    # -- indexes and snapshots
    def index_empty(self, path: str) -> None: ...
    def sanity_passed(self, path: str) -> None: ...
    def offset_entry(self, offset: int, position: int) -> None: ...
    def time_entry(self, timestamp: int, offset: int) -> None: ...
    def txn_entry(self, e) -> None: ...
    def producer_entry(self, e) -> None: ...
    def snapshot_error(self, exc: KsegError) -> None: ...

    # -- the end of the run
    def problems(self, p) -> None: ...
    def close(self) -> None: ...


class TopicParser(Protocol):
    """A topic's payload decoder (``kseg.decoders``): a record's key and value as ``(key text, payload
    text)``, the columns ``DumpLogSegments`` prints with ``--offsets-decoder`` and its kin."""

    def parse(self, offset: int, key: bytes | None, value: bytes | None) -> tuple: ...  # pragma: no cover


class DumpOptions:
    """The options of ``kafka-dump-log.sh``, with Kafka's defaults.

    A plain class, not a dataclass: ``dataclasses`` would add ~1 ms to every
    ``kseg dump`` start (measured).
    """

    __slots__ = (
        "print_data_log",
        "deep_iteration",
        "skip_record_metadata",
        "verify_index_only",
        "index_sanity_check",
        "max_message_size",
        "max_bytes",
        "key_decoder",
        "value_decoder",
        "parser",
        "gap_from_minus_one",
        "time_index_reads_to_end",
        "checkpoint_files",
    )

    def __init__(
        self,
        print_data_log: bool = False,
        deep_iteration: bool = False,
        skip_record_metadata: bool = False,
        verify_index_only: bool = False,
        index_sanity_check: bool = False,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_bytes: int = INT32_MAX,
        key_decoder: Callable = string_decoder,
        value_decoder: Callable = string_decoder,
        parser: TopicParser | None = None,  # a topic decoder with parse(offset, key, value)
        gap_from_minus_one: bool = False,  # Kafka 4.3+'s rule: a first offset N != 0 is "-1 is followed by N"
        time_index_reads_to_end: bool = False,  # Kafka 4.3+: a .timeindex dump reads the log to its end
        checkpoint_files: bool = True,  # Kafka 3.3+ dumps a .checkpoint; 3.0-3.2 ignore it as an unknown file
    ) -> None:
        # one line an option, as __slots__ lists them (a plain class: see the docstring)
        self.print_data_log = print_data_log
        self.deep_iteration = deep_iteration
        self.skip_record_metadata = skip_record_metadata
        self.verify_index_only = verify_index_only
        self.index_sanity_check = index_sanity_check
        self.max_message_size = max_message_size
        self.max_bytes = max_bytes
        self.key_decoder = key_decoder
        self.value_decoder = value_decoder
        self.parser = parser
        self.gap_from_minus_one = gap_from_minus_one
        self.time_index_reads_to_end = time_index_reads_to_end
        self.checkpoint_files = checkpoint_files

    @property
    def deep(self) -> bool:
        return self.deep_iteration or self.print_data_log

    @property
    def decompress_limit(self) -> int:
        """Most bytes one batch may decompress to: a small multiple of --max-message-size."""
        return decompression_limit(self.max_message_size)


class Problems:
    """What Kafka's tool reports on stderr after dumping every file: per absolute path, a list of pairs."""

    __slots__ = ("index_mismatches", "time_mismatches", "out_of_order", "not_found", "non_consecutive")

    def __init__(self) -> None:
        self.index_mismatches: dict = {}  # abs path -> [(index offset, log offset)]
        self.time_mismatches: dict = {}  # abs path -> [(index ts, log ts)]
        self.out_of_order: dict = {}  # abs path -> [(index ts, previous ts)]
        self.not_found: dict = {}  # abs path -> [(index offset, log offset)]
        self.non_consecutive: dict = {}  # abs path -> [(offset, next offset)]

    def add(self, kind: str, path: str, pair: tuple) -> None:
        getattr(self, kind).setdefault(path, []).append(pair)

    def __bool__(self) -> bool:
        return any(
            (self.index_mismatches, self.time_mismatches, self.out_of_order, self.not_found, self.non_consecutive)
        )


class Dumper:
    """Dump files to ``sink`` as Kafka's tool would; :meth:`run` returns the exit code."""

    def __init__(self, options: DumpOptions, sink: DumpSink) -> None:
        self.opts = options
        self.sink = sink
        self.problems = Problems()
        self.exit_code = EXIT_OK
        self.progress: DumpProgress | None = None  # a kseg.render.progress.ByteProgress for humans, or None
        self.indexes = IndexDumper(options, sink, self.problems, self._fail, self._base_offset)
        #: a structured decoder (the registry's): the per-record path hands its records to sink.decoded_record
        self._structured = options.parser is None and any(
            hasattr(d, "json_fields") for d in (options.key_decoder, options.value_decoder)
        )

    def run(self, paths: list[str]) -> int:
        try:
            for path in paths:
                self.dump_file(path)
        finally:
            if self.progress is not None:
                self.progress.close()
        self.sink.problems(self.problems)
        self.sink.close()
        return self.exit_code

    def _fail(self, exc: KsegError) -> None:
        code = EXIT_ERROR if isinstance(exc, InputError) else EXIT_PROBLEMS
        self.exit_code = max(self.exit_code, code)
        self.sink.error(exc)

    def dump_file(self, path: str) -> None:
        store = store_of(path)  # the file's, and its siblings' (the log an index is checked against)
        shown = files.display(path, store=store)
        self.sink.dumping(shown, store)
        if os.path.isdir(path):
            self._fail(
                InputError(
                    "is a directory; dump takes files (kseg verify-index takes partition directories)", path=shown
                )
            )
            return
        kind = files.suffix(path)
        handler = {
            files.LOG: self.dump_log,
            files.CHECKPOINT: self.dump_log,
            files.INDEX: self.indexes.dump_index,
            files.TIME_INDEX: self.indexes.dump_time_index,
            files.SNAPSHOT: self.dump_snapshot,
            files.TXN_INDEX: self.dump_txn_index,
        }.get(kind)
        if handler is None or (kind == files.CHECKPOINT and not self.opts.checkpoint_files):
            self.sink.unknown_file(shown)
            return
        try:
            handler(path, store)
        except KsegError as exc:
            self._fail(exc.at(shown))

    # -- base offsets -----------------------------------------------------
    def _base_offset(self, path: str, log_path: str, store: Store) -> int:
        """The base offset from the name, else the first batch's, with a note."""
        base = files.base_offset_from_name(path)
        if base is not None:
            return base
        inferred = 0
        try:
            with FileRecords(log_path, store=store) as records:
                batch = records.batch_at(0)
                if batch is not None:
                    inferred = batch.base_offset
        except KsegError:
            pass
        self.sink.note(
            f"{files.display(path, store=store)}: the file name carries no base offset; using {inferred}"
            + (" (the first batch's base offset)" if inferred else "")
        )
        return inferred

    # -- .log / .checkpoint -------------------------------------------------
    def dump_log(self, path: str, store: Store) -> None:
        name = os.path.basename(path)
        records = FileRecords(path, end=self.opts.max_bytes, store=store)  # open first: a missing file prints no header
        with records:
            self._log_header(path, name, store)
            self._dump_batches(records, path, name, store)

    def _log_header(self, path: str, name: str, store: Store) -> None:
        sink = self.sink
        if name.endswith(files.LOG):
            sink.log_start(self._base_offset(path, path, store))
        elif name == files.BOOTSTRAP_CHECKPOINT:
            sink.bootstrap_snapshot()
        else:
            parsed = files.parse_checkpoint_name(path)
            if parsed is None:
                shown = files.display(path, store=store)
                sink.note(f"{shown}: not a <offset>-<epoch>.checkpoint name; no end offset shown")
            else:
                sink.snapshot_start(*parsed)

    def _dump_batches(self, records: FileRecords, path: str, name: str, store: Store) -> None:
        sink = self.sink
        valid_bytes = 0
        last_offset = -1
        deep = self.opts.deep
        abs_path = files.absolute(path, store=store)
        progress = self.progress
        if progress is not None:
            progress.start(name, records.end)
        mode = self._window_mode()
        if mode is not None:
            valid_bytes = self._dump_windows(records, abs_path, mode)
        elif not deep:  # shallow: FileRecords.scan lists, no object per v2 batch
            for items in records.scan():
                sink.batch_lines(items)
                valid_bytes = items[-1][0] + items[-1][1]
                if progress is not None:
                    progress.advance_to(valid_bytes)
        else:
            fast = self._fast_records()
            for batch in records.batches():
                last_offset = self._dump_batch(batch, valid_bytes, last_offset, abs_path, fast)
                valid_bytes += batch.size
                if progress is not None:
                    progress.advance_to(valid_bytes)
        trailing = records.end - valid_bytes
        if trailing > 0 and self.opts.max_bytes == INT32_MAX:
            sink.trailing_bytes(trailing, name)

    def _dump_batch(self, batch, position: int, last_offset: int, abs_path: str, fast: tuple | None) -> int:
        """One batch of a deep dump, its line and its records' (the per-batch path); the last offset."""
        self.sink.batch(batch, position)
        if fast is not None and batch.__class__ is V2Batch and not batch.h[ATTRIBUTES] & CONTROL_FLAG:
            return self._dump_v2_chunks(batch, last_offset, abs_path, *fast)
        return self._dump_records(batch, last_offset, abs_path)

    def _window_mode(self) -> int | None:
        """What the sink's ``window_lines`` (the compiled engine's loop) writes for these options: a
        ``WINDOW_*`` mode, or None when there is no such loop or the options need the per-batch path
        (a topic parser, other decoders, ``--skip-record-metadata``).  Kafka's string decoders come as
        spans (the text sink) or as slices (the JSON sink)."""
        if self.sink.window_lines is None:
            return None
        if not self.opts.deep:
            return WINDOW_SHALLOW
        fast = self._fast_records()
        if fast is None:
            return None
        if fast[2] == SIZES:
            return WINDOW_SIZES
        if fast[2] == SPANS or fast[3] == (string_decoder, string_decoder):
            return WINDOW_STRINGS
        return None

    def _dump_windows(self, records: FileRecords, abs_path: str, mode: int) -> int:
        """:meth:`_dump_batches` a window per call: the sink's ``window_lines`` frames, checks and prints
        every batch of the window it can (the compiled engine); the batch it stops at, if any, takes the
        per-batch path (:meth:`_dump_batch`, or ``sink.batch`` when shallow), then the window loop goes on.
        Returns where the batches end (the valid bytes)."""
        window_lines = self.sink.window_lines
        assert window_lines is not None
        progress = self.progress
        fast = self._fast_records() if mode != WINDOW_SHALLOW else None
        gap = self.opts.gap_from_minus_one
        codecs = (self.opts.decompress_limit, compression.WindowCodecs())  # lz4 and zstd in the window loop
        end = records.end
        stop = end - HEADER_SIZE_UP_TO_MAGIC
        pos, last_offset = 0, -1
        while True:
            if window_lines is not None and pos < stop:
                try:
                    view, i, n = records.window_from(pos)
                except KsegError:
                    # a read that fails past pos (a tiered chunk that cannot be fetched, a file that shrank):
                    # the per-batch path reads as far as it can and raises where the batches reach it
                    window_lines = None
                    continue
                pos, last_offset, full = window_lines(view, pos - i, i + n, pos, end, mode, last_offset, gap, *codecs)
                if progress is not None:
                    progress.advance_to(pos)
                if full:
                    continue
            batch = records.frame_at(pos, end)
            if batch is None:
                return pos
            if mode == WINDOW_SHALLOW:
                self.sink.batch(batch, pos)
            else:
                last_offset = self._dump_batch(batch, pos, last_offset, abs_path, fast)
            pos += batch.size
            if progress is not None:
                progress.advance_to(pos)

    def _dump_records(self, batch, last_offset: int, abs_path: str) -> int:
        opts, sink = self.opts, self.sink
        print_data = opts.print_data_log
        is_control = batch.is_control
        legacy = batch.magic < 2
        for rec in batch.records(opts.decompress_limit):
            offset = last_offset = self._next_offset(last_offset, rec.offset, abs_path)
            key, value = rec.key, rec.value
            extra = None
            if is_control and not opts.skip_record_metadata:
                extra = sink.control_text(batch, key, value)
            key_text = payload_text = None
            if print_data and not is_control and self._structured:
                sink.decoded_record(batch, rec, opts.key_decoder, opts.value_decoder)
                continue
            if print_data and not is_control:
                try:
                    key_text, payload_text = self._parse(offset, key, value, () if legacy else rec.headers)
                except UncaughtJavaError:
                    sink.partial_record(batch, rec)
                    raise
            if legacy:
                sink.legacy_record(batch, rec, key_text, payload_text)
            else:
                sink.record(batch, rec, extra, key_text, payload_text)
        return last_offset

    def _fast_records(self) -> tuple | None:
        """``(emit, limit, form, decoders)`` for :meth:`_dump_v2_chunks`, or None when the options need
        :meth:`_dump_records` (a topic parser, ``--skip-record-metadata``).

        ``--deep-iteration`` needs sizes only; ``--print-data-log`` slices for the decoders, except
        that Kafka's string decoders take spans when the sink prints them from the buffer itself."""
        opts, sink = self.opts, self.sink
        if opts.parser is not None or opts.skip_record_metadata:
            return None
        limit = opts.decompress_limit
        if not opts.print_data_log:
            return sink.v2_records, limit, SIZES, ()
        if opts.key_decoder is string_decoder and opts.value_decoder is string_decoder and sink.spans:
            return sink.v2_spans, limit, SPANS, None
        return sink.v2_records, limit, SLICES, (opts.key_decoder, opts.value_decoder)

    def _dump_v2_chunks(
        self, batch, last_offset: int, abs_path: str, emit, limit: int, form: int, decoders: tuple | None
    ) -> int:
        """:meth:`_dump_records` for a v2 data (non-control) batch, in chunks, to ``emit``
        (``sink.v2_records`` with ``decoders``, or ``sink.v2_spans`` with the buffer when None)."""
        for buf, chunk, consecutive in batch.form_chunks(limit, form):
            args = (buf,) if decoders is None else decoders
            if consecutive and (
                (last_offset == -1 and not self.opts.gap_from_minus_one) or chunk[0][0] == java_long(last_offset + 1)
            ):
                last_offset = chunk[-1][0]
                emit(batch, chunk, *args)
                continue
            for rec in chunk:  # offsets out of step: the rule a record at a time
                last_offset = self._next_offset(last_offset, rec[0], abs_path)
                emit(batch, [rec], *args)
        return last_offset

    def _next_offset(self, last_offset: int, offset: int, abs_path: str) -> int:
        """Kafka's offset-continuity rule ("Non-consecutive offsets"): note a gap after ``last_offset``
        (-1: none yet) and return ``offset``.  :meth:`_dump_v2_chunks` checks a whole chunk against
        the same rule at once (the decoder tells whether a chunk's offsets run in steps of one) and comes
        here only when the chunk breaks it.  Kafka 4.3+ (``DumpLogSegments.java``) has no "none yet":
        its previous offset starts at -1, so a file whose first offset is N > 0 notes ``(-1, N)``
        (``gap_from_minus_one``; reproduced only under ``--kafka-version 4.3``/``4.4``)."""
        # Java long: MAX + 1 is MIN
        if (last_offset != -1 or self.opts.gap_from_minus_one) and offset != java_long(last_offset + 1):
            self.problems.add("non_consecutive", abs_path, (last_offset, offset))
        return offset

    def _parse(
        self, offset: int, key: bytes | memoryview | None, value: bytes | memoryview | None, headers: tuple = ()
    ) -> tuple:
        parser = self.opts.parser
        if parser is not None:
            return parser.parse(offset, None if key is None else bytes(key), None if value is None else bytes(value))
        key_text = None if key is None else decode_text(self.opts.key_decoder, key, headers)
        payload_text = None if value is None else decode_text(self.opts.value_decoder, value, headers)
        return key_text, payload_text

    # -- .snapshot and .txnindex ------------------------------------------------
    def dump_snapshot(self, path: str, store: Store) -> None:
        entries = iter_snapshot(
            path, store=store
        )  # streamed: the CRC is checked over the whole file before the first entry
        try:
            first = next(entries, None)
        except CorruptSnapshotError as exc:
            self.sink.snapshot_error(exc)  # Kafka prints the message and goes on (exit 0)
            return
        if first is not None:
            self.sink.producer_entry(first)
        for entry in entries:
            self.sink.producer_entry(entry)

    def dump_txn_index(self, path: str, store: Store) -> None:
        for entry in iter_aborted_txns(files.read_small_file(path, store=store)):
            self.sink.txn_entry(entry)
