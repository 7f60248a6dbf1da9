"""The buffered writer the dump sinks share (the sinks implement :class:`kseg.ops.dump.dump.DumpSink`).

A sink receives what the dump reads, in file order, and writes it in one
form: :class:`kseg.render.text.TextSink` (Kafka's text, byte for byte) or
:class:`kseg.render.jsonl.JsonSink` (JSON Lines).
"""

from __future__ import annotations

from typing import BinaryIO

from kseg.errors import KsegError, error_line

FLUSH_AT = 1 << 16  # characters buffered before a write to the output stream


def write_all(out: BinaryIO, data: bytes) -> None:
    """Write all of ``data`` and flush.  A pipe whose reader goes away in the middle of a large write
    (``kseg tiered ... | head -1``) takes part of it and ``BufferedWriter.write`` returns that count
    without an error; only the next write raises ``BrokenPipeError`` (death by SIGPIPE,
    ``kseg.cli.ending.closed_stdout``).  Without it the run went on and exited 0 or 1: a verdict."""
    view = memoryview(data)
    while view:
        view = view[out.write(view) :]
    out.flush()


class BufferedWriter:
    """Text buffered in memory and written to binary ``out`` as UTF-8; diagnostics to binary ``err``.

    Each text passed to :meth:`write` or :meth:`write_lines` ends with its
    own newline; :meth:`write_encoded` takes lines already encoded (the
    compiled engine's), in order with the text.  stdout is flushed before
    anything goes to stderr, so the two streams interleave as Kafka's tool
    prints them.
    """

    def __init__(self, out, err) -> None:
        self.out = out
        self.err = err
        self._parts: list[str] = []  # text not yet encoded
        self._encoded: list[bytes] = []  # encoded, before the text in _parts
        self._size = 0
        self.quiet = False  # --quiet: no note lines

    def write(self, text: str) -> None:
        self._parts.append(text)
        self._size += len(text)
        if self._size > FLUSH_AT:
            self.flush()

    def write_lines(self, lines: list[str]) -> None:
        """Several lines at once (the hot paths build a list and hand it over)."""
        if lines:
            self.write("".join(lines))

    def write_encoded(self, pieces: list[bytes]) -> None:
        """Lines already encoded as :meth:`flush` encodes text (UTF-8, ``replace``)."""
        if pieces:
            encoded = self._encoded
            if self._parts:
                encoded.append("".join(self._parts).encode("utf-8", "replace"))
                self._parts.clear()
            encoded += pieces
            for data in pieces:
                self._size += len(data)
            if self._size > FLUSH_AT:
                self.flush()

    def flush(self) -> None:
        encoded = self._encoded
        if self._parts:
            encoded.append("".join(self._parts).encode("utf-8", "replace"))
            self._parts.clear()
        if encoded:
            write_all(self.out, encoded[0] if len(encoded) == 1 else b"".join(encoded))
            encoded.clear()
        else:
            self.out.flush()
        self._size = 0

    def close(self) -> None:
        self.flush()

    def err_line(self, line: str) -> None:
        """One line on stderr, after what stdout has so far."""
        self.flush()
        self.err.write((line + "\n").encode("utf-8", "replace"))
        self.err.flush()

    def note(self, message: str) -> None:
        if not self.quiet:
            self.err_line(f"kseg: note: {message}")

    def error(self, exc: KsegError) -> None:
        self.err_line(error_line(exc))
