"""What :class:`kseg.render.dump.Dumper` reports to (``DumpSink``) and the buffered writer the sinks share.

A sink receives what the dump reads, in file order, and writes it in one
form: :class:`kseg.render.text.TextSink` (Kafka's text, byte for byte) or
:class:`kseg.render.jsonl.JsonSink` (JSON Lines).  Every sink implements
every method of :class:`DumpSink`, the two bulk ones included, so the
dumper never probes a sink for what it can do.
"""

from __future__ import annotations

from typing import Callable, Protocol

from kseg.errors import KsegError, error_line

FLUSH_AT = 1 << 16  # characters buffered before a write to the output stream


class DumpSink(Protocol):
    """The output of ``kseg dump`` (``DumpLogSegments``' prints, in order)."""

    # -- file level
    def dumping(self, path: str) -> None: ...
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

    def record(self, b, rec, extra: str | None, key_text: str | None, payload_text: str | None) -> None:
        """One v2 record (:class:`kseg.format.v2.Record`); ``extra`` a control record's text."""

    def legacy_record(self, b, rec, key_text: str | None, payload_text: str | None) -> None:
        """One v0/v1 record (:class:`kseg.format.legacy.LegacyRecord`)."""

    def v2_records(self, b, records: list, key_decoder: Callable | None = None,
                   value_decoder: Callable | None = None) -> None:
        """A chunk of a v2 data batch's records (``V2Batch.record_chunks``), the deep hot path:
        without decoders key and value are sizes, with them slices to decode."""

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


class BufferedWriter:
    """Text buffered in memory and written to binary ``out`` as UTF-8; diagnostics to binary ``err``.

    Each text passed to :meth:`write` or :meth:`write_lines` ends with its
    own newline.  stdout is flushed before anything goes to stderr, so the
    two streams interleave as Kafka's tool prints them.
    """

    def __init__(self, out, err) -> None:
        self.out = out
        self.err = err
        self._parts: list[str] = []
        self._size = 0

    def write(self, text: str) -> None:
        self._parts.append(text)
        self._size += len(text)
        if self._size > FLUSH_AT:
            self.flush()

    def write_lines(self, lines: list[str]) -> None:
        """Several lines at once (the hot paths build a list and hand it over)."""
        if lines:
            self.write("".join(lines))

    def flush(self) -> None:
        if self._parts:
            self.out.write("".join(self._parts).encode("utf-8", "replace"))
            self._parts.clear()
            self._size = 0
        self.out.flush()

    def close(self) -> None:
        self.flush()

    def err_line(self, line: str) -> None:
        """One line on stderr, after what stdout has so far."""
        self.flush()
        self.err.write((line + "\n").encode("utf-8", "replace"))
        self.err.flush()

    def note(self, message: str) -> None:
        self.err_line(f"kseg: note: {message}")

    def error(self, exc: KsegError) -> None:
        self.err_line(error_line(exc))
