"""Kafka's text output, byte for byte (``DumpLogSegments.printBatchLevel`` and the record lines).

Quirks kept on purpose (each a golden in ``tests/data/corpus``): ``deleteHorizonMs:
OptionalLong.empty``; an empty line for a control record with ``--skip-record-metadata``.
Up to Kafka 4.2 (the Scala tool; ``--kafka-version``, :mod:`kseg.format.releases`): the
stray ``}`` after a legacy record's crc; lists of index mismatches and
non-consecutive offsets printed in reverse discovery order; a leading space
before ``payload:`` with ``--skip-record-metadata`` and no key; a trailing space
on a producer-snapshot line without batch metadata.  From 4.3 (the Java tool) none
of these: mismatches sorted by index offset descending and non-consecutive
offsets ascending (one entry per key, the last found), ``| payload:``, and the
not-found header naming the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from kseg import engine
from kseg.format import releases, timestamp_type, v2, v2_records
from kseg.format.compression import codec_name
from kseg.format.strings import decode_text
from kseg.render import text28, window
from kseg.render.record_line import (  # noqa: F401 - record_line and skip_metadata_line: render.text's, re-exported
    decoded_line,
    legacy_line,
    record_head,
    record_line,
    skip_metadata_line,
    sliced,
)
from kseg.render.sink import BufferedWriter
from kseg.render.values import KRaftText, control_text, optional_long, string_decoder
from kseg.render.values import bool_text as _bool

if TYPE_CHECKING:
    from kseg.storage.context import Store


class TextSink(BufferedWriter):
    """Writes Kafka's text to binary ``out`` (stdout) and ``err`` (stderr) streams (a :class:`DumpSink`)."""

    def __init__(
        self,
        out,
        err,
        *,
        skip_record_metadata: bool = False,
        kraft_text: KRaftText | None = None,
        release: releases.Release = releases.LATEST,
    ) -> None:
        super().__init__(out, err)
        self.skip = skip_record_metadata
        self.release = release
        self.java = release.java_tool
        #: printed before each .log/.checkpoint's first line: Kafka 3.9 builds its decoders there
        #: (``opts.messageParser``) and says "kafka.serializer.X is deprecated ..." for an old class name
        self.preamble = ""
        self.kraft_text = kraft_text
        self._batch_parts: dict = {}
        #: Kafka 2.8 (kseg.render.text28): the batch's fields on every record line
        self.r28 = release.record_line_28
        self._position = 0
        self._legacy_base: tuple = (None, 0)
        #: the compiled engine's window loop (DumpSink.window_lines) where it writes this text
        self.window_lines = (
            self._window_lines if window.C_WINDOW is not None and not self.skip and not self.r28 else None
        )
        #: :meth:`partial_record` left a line without its newline
        self._open_line = False

    # -- file level -------------------------------------------------------------
    def dumping(self, path: str, store: Store) -> None:
        # a partial record line left by a decoder's death in the previous file (Kafka would have stopped)
        self.write(f"{chr(10) if self._open_line else ''}Dumping {path}\n")
        self._open_line = False

    def unknown_file(self, path: str) -> None:
        self.err_line(f"Ignoring unknown file {path}")

    def log_start(self, base_offset: int) -> None:
        self.write(f"{self.preamble}{self.release.log_start_label}{base_offset}\n")

    def bootstrap_snapshot(self) -> None:
        self.write(f"{self.preamble}KRaft bootstrap snapshot\n")

    def snapshot_start(self, end_offset: int, epoch: int) -> None:
        self.write(f"{self.preamble}Snapshot end offset: {end_offset}, epoch: {epoch}\n")

    def trailing_bytes(self, n: int, name: str) -> None:
        self.write(f"Found {n} invalid bytes at the end of {name}\n")

    # -- batches --------------------------------------------------------------------
    def batch(self, b, position: int) -> None:
        """The line of one batch: a v2 one through :meth:`batch_lines`, a legacy entry here."""
        self._position = position
        if b.magic >= 2:
            self.batch_lines([(position, b.size, b.h, b.is_valid())])
            return
        self.write(
            f"offset: {b.offset} position: {position} {b.timestamp_type}: {b.max_timestamp} size: {b.size} "
            f"magic: {b.magic} compresscodec: {self._codec(b.codec)} crc: {b.crc} isvalid: {_bool(b.is_valid())}\n"
        )

    def _codec(self, codec_id: int) -> str:
        return text28.enum_codec(codec_id) if self.r28 else codec_name(codec_id)

    def batch_lines(self, items: list) -> None:
        """The v2 batch line (``DumpLogSegments.printBatchLevel``), for a list from ``FileRecords.scan``.

        The one formatter of a v2 batch line.  The parts that repeat from
        batch to batch (producer, epochs, flags, timestamp type, magic,
        codec) are formatted once per distinct header and reused: the hot
        path of shallow iteration.  Items without a header (legacy entries)
        go to :meth:`batch`.
        """
        c_batch_lines = _c_batch_lines
        if c_batch_lines is not None:
            self._c_batch_lines(items, c_batch_lines)
        else:
            self._py_batch_lines(items)

    def _window_lines(self, *args) -> tuple[int, int, bool]:
        """:attr:`DumpSink.window_lines` through the compiled engine: the batch lines of :meth:`batch_lines`
        and the record lines of :meth:`v2_records` / :meth:`v2_spans` for a window, in one call."""
        return window.window_lines(self, self._parts_of, 0, *args)

    def _py_batch_lines(self, items: list) -> None:
        """:meth:`batch_lines` in pure Python: the rule itself."""
        lines: list[str] = []
        append = lines.append
        cache = self._batch_parts
        try:
            for position, size, h, valid in items:
                if h is None:  # any batch that is not a whole v2 batch in the window
                    self.write_lines(lines)
                    lines.clear()
                    self.batch(valid, position)
                    continue
                bo, _, epoch, magic, crc, attrs, delta, base_ts, max_ts, pid, pepoch, base_seq, count = h
                key = (epoch, pid, pepoch, attrs, magic, base_ts if attrs & v2.DELETE_HORIZON_FLAG else None)
                parts = cache.get(key)
                if parts is None:
                    parts = cache[key] = self._batch_line_parts(h)
                if base_seq == -1:  # no producer sequence: the common case, two numbers fewer
                    append(
                        f"baseOffset: {bo} lastOffset: {v2.last_offset(bo, delta)} count: {count} baseSequence: -1 "
                        f"lastSequence: -1 {parts[0]}position: {position} {parts[1]}{max_ts} size: {size} "
                        f"{parts[2]}{crc} isvalid: {'true' if valid else 'false'}\n"
                    )
                else:
                    append(
                        f"baseOffset: {bo} lastOffset: {v2.last_offset(bo, delta)} count: {count} "
                        f"baseSequence: {base_seq} lastSequence: {v2.increment_sequence(base_seq, delta)} "
                        f"{parts[0]}position: {position} {parts[1]}{max_ts} size: {size} {parts[2]}{crc} "
                        f"isvalid: {'true' if valid else 'false'}\n"
                    )
        finally:
            self.write_lines(lines)

    def _c_batch_lines(self, items: list, c_batch_lines: Callable[..., tuple[str, int, bool]]) -> None:
        """:meth:`batch_lines` through the compiled engine's ``c_batch_lines`` (:mod:`kseg.engine`): the same
        lines; an item without a header goes to :meth:`batch`, one whose numbers pass int64 to the Python
        formatter."""
        i, n = 0, len(items)
        while i < n:
            text, i, slow = c_batch_lines(items, i, self._parts_of)
            if text:
                self.write(text)
            if i < n:
                if slow:
                    self._py_batch_lines([items[i]])
                else:
                    self.batch(items[i][3], items[i][0])
                i += 1

    def _parts_of(self, h) -> tuple[str, str, str]:
        """The cached constant parts of the batch line of header ``h`` (:meth:`_batch_line_parts`)."""
        attrs = h[5]
        key = (h[2], h[9], h[10], attrs, h[3], h[7] if attrs & v2.DELETE_HORIZON_FLAG else None)
        parts = self._batch_parts.get(key)
        if parts is None:
            parts = self._batch_parts[key] = self._batch_line_parts(h)
        return parts

    def _batch_line_parts(self, h) -> tuple[str, str, str]:
        """The constant parts of a v2 batch line, in the order :meth:`batch_lines` writes them."""
        if len(self._batch_parts) > 4096:  # bound the cache: producers can be many
            self._batch_parts.clear()
        h = v2.BatchHeader._make(h)  # scan's plain tuple, named on this cold path
        attrs = h.attributes
        horizon = h.base_timestamp if attrs & v2.DELETE_HORIZON_FLAG else None
        # Kafka 3.0/3.1's batch line ends at isControl (deleteHorizonMs: 3.2+)
        horizon_text = f"deleteHorizonMs: {optional_long(horizon)} " if self.release.delete_horizon else ""
        return (
            f"producerId: {h.producer_id} producerEpoch: {h.producer_epoch} "
            f"partitionLeaderEpoch: {h.partition_leader_epoch} "
            f"isTransactional: {_bool(attrs & v2.TRANSACTIONAL_FLAG)} isControl: {_bool(attrs & v2.CONTROL_FLAG)} "
            f"{horizon_text}",
            f"{timestamp_type.of_attributes(attrs)}: ",
            f"magic: {h.magic} compresscodec: {self._codec(attrs & v2.CODEC_MASK)} crc: ",
        )

    # -- records --------------------------------------------------------------------
    def control_text(self, b, key, value) -> str:
        return control_text(b, key, value, self.kraft_text)

    def record(self, b, rec, extra, key_text, payload_text) -> None:
        """The line of one v2 record (a :class:`kseg.format.v2_records.Record`), texts already made."""
        if self.skip:
            self.write(skip_metadata_line(key_text, payload_text, self.java))
            return
        self.write(self._record_text(b, rec, extra, key_text, payload_text))

    def partial_record(self, b, rec) -> None:
        """What Kafka's tool has written of a data record's line when its decoder dies on the record: the
        fields before `` key:`` (``print``, not ``println``: the JVM's ``System.out`` flushes each
        ``print``), no newline; nothing with ``--skip-record-metadata``."""
        if self.skip:
            return
        if b.magic < 2:
            text = self._legacy_text(b, rec, None, None)
        else:
            text = self._record_text(b, rec, None, None, None)
        self.write(text[:-1])
        self._open_line = True

    def _record_text(self, b, rec, extra, key_text, payload_text) -> str:
        key, value = rec.key, rec.value
        line = record_line(
            b.timestamp_type,
            rec.offset,
            rec.timestamp,
            rec.sequence,
            -1 if key is None else len(key),
            -1 if value is None else len(value),
            rec.headers,
            extra,
            key_text,
            payload_text,
        )
        return text28.v2_line(line, text28.v2_batch_fields(b, self._position)) if self.r28 else line

    def v2_records(self, b, records: list, key_decoder=None, value_decoder=None) -> None:
        """Record lines of a chunk of a v2 data batch's records (the hot path of deep iteration).

        Without decoders (``--deep-iteration``) ``records`` come from
        ``record_chunks(sizes=True)``: key and value are lengths.  With them
        (``--print-data-log``) key and value are slices, printed through the
        decoders.  The lines are those of :func:`record_line`; the two common
        cases (no headers; Kafka's string decoders) build them on its
        :func:`record_head` directly; every line made before a decoder fails is kept.
        """
        ts_type = timestamp_type.of_attributes(b.h[v2.ATTRIBUTES])
        if self.r28:
            self.write_lines(text28.v2_lines(b, self._position, ts_type, records, key_decoder, value_decoder))
            return
        if _c_lines is not None:
            # the compiled engine (kseg.engine): the same lines, encoded; a record it does not cover
            # (headers, null key or value, invalid UTF-8) gets the Python formatter's line through the fallback
            pieces: list[bytes] = []
            if key_decoder is None:
                try:
                    _c_lines(
                        records,
                        ts_type,
                        _sizes_line(ts_type),
                        v2_records.SIZES,
                        None,
                        pieces,
                    )
                finally:
                    self.write_encoded(pieces)
                return
            if key_decoder is string_decoder and value_decoder is string_decoder:
                try:
                    _c_lines(
                        records,
                        ts_type,
                        _strings_line(ts_type),
                        v2_records.SLICES,
                        None,
                        pieces,
                    )
                finally:
                    self.write_encoded(pieces)
                return
        lines: list[str] = []
        append = lines.append
        try:
            if key_decoder is None:
                for o, ts, seq, ks, vs, hs in records:
                    if hs:
                        append(record_line(ts_type, o, ts, seq, ks, vs, hs, None, None, None))
                    else:  # record_line without headers, extra, key or payload: the common case
                        append(record_head(ts_type, o, ts, seq, ks, vs, "") + "\n")
            elif key_decoder is string_decoder and value_decoder is string_decoder:
                # Kafka's default decoders, inlined: valid UTF-8 decodes in C; the rest as string_decoder
                for o, ts, seq, k, v, hs in records:
                    if k is not None and v is not None and not hs:
                        try:
                            kt = str(k, "utf-8")
                        except UnicodeDecodeError:
                            kt = string_decoder(k)
                        try:
                            vt = str(v, "utf-8")
                        except UnicodeDecodeError:
                            vt = string_decoder(v)
                        # record_line of a key and a payload, no headers
                        append(f"{record_head(ts_type, o, ts, seq, len(k), len(v), '')} key: {kt} payload: {vt}\n")
                    else:
                        append(decoded_line(ts_type, o, ts, seq, k, v, hs, string_decoder, string_decoder))
            else:
                for o, ts, seq, k, v, hs in records:
                    append(decoded_line(ts_type, o, ts, seq, k, v, hs, key_decoder, value_decoder))
        finally:
            self.write_lines(lines)

    @property
    def spans(self) -> bool:
        """Whether :meth:`v2_spans` is the faster path (the compiled engine prints from the buffer)."""
        return _c_lines is not None and not self.skip and not self.r28

    def v2_spans(self, b, records: list, buf) -> None:
        """:meth:`v2_records` with Kafka's string decoders, for records whose key and value are spans
        in ``buf`` (``record_chunks`` of form :data:`kseg.format.v2_records.SPANS`): the engine reads them there,
        no slice made; a record it does not cover gets :func:`record_line` through real slices."""
        ts_type = timestamp_type.of_attributes(b.h[v2.ATTRIBUTES])
        mv = buf if isinstance(buf, memoryview) else memoryview(buf)
        if _c_lines is None:
            self.v2_records(b, [sliced(mv, r) for r in records], string_decoder, string_decoder)
            return
        pieces: list[bytes] = []
        try:
            _c_lines(
                records,
                ts_type,
                _spans_line(ts_type, mv),
                v2_records.SPANS,
                mv,
                pieces,
            )
        finally:
            self.write_encoded(pieces)

    def decoded_record(self, b, rec, key_decoder, value_decoder) -> None:
        """A data record's line with its key and value decoded to text by a structured decoder."""
        headers = rec.headers if b.magic >= 2 else ()
        key_text = None if rec.key is None else decode_text(key_decoder, rec.key, headers)
        payload_text = None if rec.value is None else decode_text(value_decoder, rec.value, headers)
        if b.magic >= 2:
            self.record(b, rec, None, key_text, payload_text)
        else:
            self.legacy_record(b, rec, key_text, payload_text)

    def legacy_record(self, b, rec, key_text, payload_text) -> None:
        """The line of one v0/v1 record (a :class:`kseg.format.legacy.LegacyRecord`)."""
        if self.skip:
            self.write(skip_metadata_line(key_text, payload_text, self.java))
            return
        self.write(self._legacy_text(b, rec, key_text, payload_text))

    def _legacy_text(self, b, rec, key_text, payload_text) -> str:
        if self.r28:
            if self._legacy_base[0] is not b:  # the entry's first inner record: its baseOffset
                self._legacy_base = (b, rec.offset)
            fields = text28.legacy_batch_fields(b, self._legacy_base[1], self._position)
            return text28.legacy_line(rec, b.timestamp_type, fields, key_text, payload_text)
        return legacy_line(rec, b.timestamp_type, self.java, key_text, payload_text)

    # -- indexes, snapshots -------------------------------------------------------
    def index_empty(self, path: str) -> None:
        self.write(f"{path} is empty.\n")

    def sanity_passed(self, path: str) -> None:
        self.write(f"{path} passed sanity check.\n")

    def offset_entry(self, offset: int, position: int) -> None:
        self.write(f"offset: {offset} position: {position}\n")

    def time_entry(self, timestamp: int, offset: int) -> None:
        self.write(f"timestamp: {timestamp} offset: {offset}\n")

    def txn_entry(self, e) -> None:
        version = 0 if self.release.txn_index_highest_version else e[0]  # 4.4: AbortedTxn.HIGHEST_SUPPORTED_VERSION
        self.write(
            f"version: {version} producerId: {e[1]} firstOffset: {e[2]} lastOffset: {e[3]} lastStableOffset: {e[4]}\n"
        )

    def producer_entry(self, e) -> None:
        first = e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None
        if self.release.scala_txn_first_offset:  # Kafka 3.0-3.4: Scala's Option[Long]
            txn = "None" if first is None else f"Some({first})"
        else:
            txn = optional_long(first)
        line = (
            f"producerId: {e.producer_id} producerEpoch: {e.epoch} coordinatorEpoch: {e.coordinator_epoch} "
            f"currentTxnFirstOffset: {txn}"
        )
        if self.release.producer_last_timestamp:  # 3.1+
            line += f" lastTimestamp: {e.timestamp}"
        if e.last_offset >= 0:
            line += (
                f" firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} "
                f"lastOffset: {e.last_offset} offsetDelta: {e.offset_delta} timestamp: {e.timestamp}"
            )
        elif not self.java:
            line += " "  # Scala's tool: a trailing space when there is no batch metadata
        self.write(line + "\n")

    def snapshot_error(self, exc) -> None:
        self.err_line(exc.message)

    # -- the end-of-run reports -----------------------------------------------------
    def problems(self, p) -> None:
        lines = []
        java = self.java
        for path, pairs in p.index_mismatches.items():
            lines.append(f"Mismatches in :{path}")
            # Scala: a list built by prepending; Java: a TreeMap in reverse key order (the last value found wins)
            ordered = sorted(dict(pairs).items(), reverse=True) if java else reversed(pairs)
            lines.extend(f"  Index offset: {a}, log offset: {b}" for a, b in ordered)
        for path, pairs in p.time_mismatches.items():
            lines.append(f"Found timestamp mismatch in :{path}")
            lines.extend(f"  Index timestamp: {a}, log timestamp: {b}" for a, b in pairs)
        for path, pairs in p.out_of_order.items():
            lines.append(f"Found out of order timestamp in :{path}")
            lines.extend(f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in pairs)
        for path, pairs in p.not_found.items():
            lines.append(
                f"The following indexed offsets are not found in :{path}"
                if java
                else "The following indexed offsets are not found in the log."
            )
            lines.extend(f"Indexed offset: {a}, found log offset: {b}" for a, b in pairs)
        for path, pairs in p.non_consecutive.items():
            lines.append(f"Non-consecutive offsets in {path}")
            ordered = sorted(dict(pairs).items()) if java else reversed(pairs)  # Java: a TreeMap
            lines.extend(f"  {a} is followed by {b}" for a, b in ordered)
        if lines:
            self.err_line("\n".join(lines))


_c_lines = None if engine.C is None else engine.C.record_lines
_c_batch_lines = None if engine.C is None else engine.C.batch_lines


# The Python lines the compiled engine falls back to for a record it does not cover (headers, a null key or
# value, invalid UTF-8), one per record form it is handed (kseg.format.v2_records.SIZES, SLICES, SPANS).


def _sizes_line(ts_type: str) -> Callable[[tuple], str]:
    def line(r: tuple) -> str:
        o, ts, seq, k, v, hs = r
        return record_line(ts_type, o, ts, seq, k, v, hs, None, None, None)

    return line


def _strings_line(ts_type: str) -> Callable[[tuple], str]:
    def line(r: tuple) -> str:
        o, ts, seq, k, v, hs = r
        return decoded_line(ts_type, o, ts, seq, k, v, hs, string_decoder, string_decoder)

    return line


def _spans_line(ts_type: str, mv: memoryview) -> Callable[[tuple], str]:
    def line(r: tuple) -> str:
        o, ts, seq, k, v, hs = sliced(mv, r)
        return decoded_line(ts_type, o, ts, seq, k, v, hs, string_decoder, string_decoder)

    return line
