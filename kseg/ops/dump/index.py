"""``kseg dump`` of ``.index`` and ``.timeindex`` files (``DumpLogSegments.dumpIndex``/``dumpTimeIndex``).

A part of :class:`kseg.ops.dump.dump.Dumper`, handed what it needs: the same problems are collected
(index/log mismatches, time-index mismatches, out-of-order timestamps,
offsets not found) with Kafka's exact rules, including its stop at the first
zero entry of a preallocated index.
"""

from __future__ import annotations

from typing import Callable

from kseg.errors import CorruptIndexError, InputError, KsegError
from kseg.format.indexes import OffsetIndexView, TimeIndexView
from kseg.limits import NO_TIMESTAMP
from kseg.storage import files
from kseg.storage.context import Store
from kseg.storage.records import FileRecords

CHUNK = 1024  # index entries checked at once (FileRecords.last_offsets): bounded memory whatever the index


class IndexDumper:
    """Index dumping for :class:`~kseg.ops.dump.dump.Dumper`.

    ``fail(exc)`` reports an error and marks the run failed; ``base_offset(path,
    log_path, store)`` is the file's base offset (from its name, else the log's first batch).
    """

    def __init__(
        self, opts, sink, problems, fail: Callable[[KsegError], None], base_offset: Callable[[str, str, Store], int]
    ) -> None:
        self.opts = opts
        self.sink = sink
        self.problems = problems
        self._fail = fail
        self._base_offset = base_offset

    # -- .index ---------------------------------------------------------------
    def dump_index(self, path: str, store: Store) -> None:
        opts, sink = self.opts, self.sink
        log_path = files.sibling(path, files.LOG, store=store)
        base = self._base_offset(path, log_path, store)
        index = OffsetIndexView(files.open_index(path, store=store), base, files.display(path, store=store))
        if index.entries == 0:
            sink.index_empty(files.display(path, store=store))
            return
        if opts.index_sanity_check:
            index.sanity_check()
            sink.sanity_passed(files.display(path, store=store))
            return
        abs_path = files.absolute(path, store=store)
        printing = not opts.verify_index_only
        with self._open_log_for_index(log_path, store) as records:
            used = index.used_entries()  # Kafka's tool stops at a preallocated zero tail
            for start in range(0, used, CHUNK):
                offsets, positions = index.columns(start, min(start + CHUNK, used))
                lasts = None if records is None else records.last_offsets(positions, opts.max_message_size)
                if records is None or lasts == offsets:  # nothing to report in this chunk
                    if printing:
                        for offset, position in zip(offsets, positions, strict=True):
                            sink.offset_entry(offset, position)
                    continue
                for k, (offset, position) in enumerate(
                    zip(offsets, positions, strict=True)
                ):  # entry by entry, in order
                    if lasts is None:
                        batch_last = self._first_batch_last_offset(records, position, index, start + k)
                    else:
                        batch_last = lasts[k]
                    if batch_last != offset:
                        self.problems.add("index_mismatches", abs_path, (offset, batch_last))
                    if printing:
                        sink.offset_entry(offset, position)

    def _open_log_for_index(self, log_path: str, store: Store):
        try:
            return FileRecords(log_path, store=store)
        except InputError as exc:
            self._fail(exc.extended("; index entries are not checked against the log"))
            return _NoLog()

    def _first_batch_last_offset(self, records: FileRecords, position: int, index, i: int) -> int:
        """``fileRecords.slice(position, maxMessageSize).batches.iterator.next().lastOffset``, from the
        batch's head alone (:meth:`FileRecords.last_offset_at`)."""
        if position < 0 or position > records.size:
            raise CorruptIndexError(
                f"entry {i} points at log position {position}, outside the log of {records.size} bytes",
                path=index.path,
                position=i * 8,
            )
        last = records.last_offset_at(position, self.opts.max_message_size)
        if last is None:
            raise CorruptIndexError(
                f"entry {i}: no whole batch within --max-message-size ({self.opts.max_message_size}) bytes "
                f"at log position {position}",
                path=index.path,
                position=i * 8,
            )
        return last

    # -- .timeindex -------------------------------------------------------------
    def dump_time_index(self, path: str, store: Store) -> None:
        opts, sink = self.opts, self.sink
        log_path = files.sibling(path, files.LOG, store=store)
        base = self._base_offset(path, log_path, store)
        tindex = TimeIndexView(files.open_index(path, store=store), base, files.display(path, store=store))
        if opts.index_sanity_check:
            tindex.sanity_check()
            sink.sanity_passed(files.display(path, store=store))
            return
        if tindex.entries == 0:
            return
        index_path = files.sibling(path, files.INDEX, store=store)
        try:
            oindex = OffsetIndexView(files.open_index(index_path, store=store), base)
        except InputError as exc:
            sink.note(f"{exc.describe()}; looking up time-index offsets from log position 0")
            oindex = OffsetIndexView(b"", base)
        abs_path = files.absolute(path, store=store)
        problems = self.problems
        limit = opts.decompress_limit
        with FileRecords(log_path, store=store) as records:
            prev = NO_TIMESTAMP
            for i in range(tindex.used_entries()):  # Kafka's tool stops at a preallocated zero tail
                ts, offset = tindex.entry(i)
                position = oindex.lookup(offset).position
                found = None
                if i == 0 and opts.time_index_reads_to_end and 0 <= position <= records.size:
                    # Kafka 4.3+ (DumpLogSegments.java) collects every batch from the entry's position to
                    # the log's end before it looks: a corrupt batch anywhere after it kills the dump at the
                    # first entry, whose slice reaches furthest (reproduced only when 4.3/4.4 is asked for)
                    for _ in records.batches(position):
                        pass
                if 0 <= position <= records.size:
                    for batch in records.batches(position):
                        if batch.last_offset >= offset:
                            found = batch
                            break
                if found is None:
                    problems.add("not_found", abs_path, (offset, -1))
                elif found.last_offset != offset:
                    problems.add("not_found", abs_path, (offset, found.last_offset))
                else:
                    max_ts = found.max_record_timestamp(limit)
                    if max_ts != ts:
                        problems.add("time_mismatches", abs_path, (ts, max_ts))
                    if prev >= ts:
                        problems.add("out_of_order", abs_path, (ts, prev))
                if not opts.verify_index_only:
                    sink.time_entry(ts, offset)
                prev = ts


class _NoLog:
    """Stands in for a missing log: the index is dumped without checks."""

    def __enter__(self):
        return None

    def __exit__(self, *exc) -> None:
        return None
