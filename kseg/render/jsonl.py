"""``--format json``: the dump as JSON Lines, one object per line, for jq.

Every object has a ``"type"``; the schema is documented (and kept stable) in
``docs/json-output.md``.  The facts are the text output's facts; errors and
problems are objects on stdout too, and errors are also written to stderr
as the one-line text diagnostic.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from kseg.errors import error_line
from kseg.format import timestamp_type, v2
from kseg.format.compression import codec_name
from kseg.jsonlines import SCHEMA_VERSION, dumps  # noqa: F401 - the form of every kseg JSON line; re-exported
from kseg.render import window
from kseg.render.record_line import json_fields
from kseg.render.sink import BufferedWriter
from kseg.render.values import KRaftText, control_text, header_objects, string_decoder
from kseg.storage import files

if TYPE_CHECKING:
    from kseg.storage.context import Store


# -- batch and record objects: the one batch -> dict, used by dump and the lookups ------------------
def v2_batch_object(position: int, size: int, h, valid: bool) -> dict:
    """The ``"batch"`` object of a v2 batch from its header (a ``BatchHeader`` or scan's plain tuple)."""
    bo, _, epoch, magic, crc, attrs, delta, base_ts, max_ts, pid, pepoch, base_seq, count = h
    return {
        "type": "batch",
        "v": SCHEMA_VERSION,
        "position": position,
        "baseOffset": bo,
        "lastOffset": v2.last_offset(bo, delta),
        "count": count,
        "baseSequence": base_seq,
        "lastSequence": v2.last_sequence(base_seq, delta),
        "producerId": pid,
        "producerEpoch": pepoch,
        "partitionLeaderEpoch": epoch,
        "isTransactional": bool(attrs & v2.TRANSACTIONAL_FLAG),
        "isControl": bool(attrs & v2.CONTROL_FLAG),
        "deleteHorizonMs": base_ts if attrs & v2.DELETE_HORIZON_FLAG else None,
        "timestampType": timestamp_type.of_attributes(attrs),
        "maxTimestamp": max_ts,
        "size": size,
        "magic": magic,
        "compression": codec_name(attrs & v2.CODEC_MASK),
        "crc": crc,
        "isValid": valid,
    }


def batch_object(b, position: int) -> dict:
    """The ``"batch"`` object of a batch object (:class:`kseg.storage.batch.FileBatch`)."""
    if b.magic >= 2:
        return v2_batch_object(position, b.size, b.h, b.is_valid())
    return {
        "type": "batch",
        "v": SCHEMA_VERSION,
        "position": position,
        "baseOffset": b.base_offset,
        "lastOffset": b.last_offset,
        "count": None,
        "baseSequence": -1,
        "lastSequence": -1,
        "producerId": -1,
        "producerEpoch": -1,
        "partitionLeaderEpoch": -1,
        "isTransactional": False,
        "isControl": False,
        "deleteHorizonMs": None,
        "timestampType": b.timestamp_type,
        "maxTimestamp": b.max_timestamp,
        "size": b.size,
        "magic": b.magic,
        "compression": codec_name(b.codec),
        "crc": b.checksum,
        "isValid": b.is_valid(),
    }


def record_object(
    b, rec, extra: str | None, key_text: str | None, payload_text: str | None, value_decoder=None
) -> dict:
    """The ``"record"`` object of a v2 :class:`~kseg.format.v2_records.Record` or a v0/v1
    :class:`~kseg.format.legacy.LegacyRecord`; header values decoded with ``value_decoder``
    (:func:`~kseg.render.values.header_objects`)."""
    key, value = rec.key, rec.value
    obj = {
        "type": "record",
        "v": SCHEMA_VERSION,
        "offset": rec.offset,
        "timestampType": b.timestamp_type,
        "timestamp": rec.timestamp,
        "keySize": -1 if key is None else len(key),
        "valueSize": -1 if value is None else len(value),
    }
    if b.magic >= 2:
        obj["sequence"] = rec.sequence
        obj["headerKeys"] = [string_decoder(k) for k, _ in rec.headers]
        obj["headers"] = header_objects(rec.headers, value_decoder)
        if extra is not None:
            obj["control"] = extra.strip()
    else:
        obj["isValid"] = rec.valid
        obj["crc"] = rec.crc
    if key_text is not None:
        obj["key"] = key_text
    if payload_text is not None:
        obj["payload"] = payload_text
    return obj


def _json_value(text):
    """A topic decoder's JSON text as the JSON value it is (an object in the row, not a string to decode
    again); text that is not JSON stays a string."""
    if isinstance(text, str) and text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


class JsonSink(BufferedWriter):
    """Writes JSON Lines to binary ``out``; diagnostics to binary ``err`` (a :class:`DumpSink`)."""

    spans = False  # records always come as slices (DumpSink.v2_spans is TextSink's)

    def __init__(self, out, err, *, kraft_text: KRaftText | None = None) -> None:
        super().__init__(out, err)
        self._file: str | None = None
        self.kraft_text = kraft_text
        self.structured = False  # a topic decoder: keys and values are JSON text, written as JSON values
        self.header_decoder = None  # header values' decoder (None: Kafka's string decoder; base64 if not text)
        self._given: dict[str, str] = {}  # absolute path -> the path as given (a problem's "file")
        #: the compiled engine's window loop (DumpSink.window_lines): the rows of batch_lines and v2_records
        self.window_lines = self._window_lines if window.C_WINDOW is not None else None

    def _window_lines(self, *args) -> tuple[int, int, bool]:
        return window.window_lines(self, None, SCHEMA_VERSION, *args)

    def emit(self, obj: dict) -> None:
        self.write(dumps(obj) + "\n")

    # -- file level ---------------------------------------------------------------
    def dumping(self, path: str, store: Store) -> None:
        self._file = path
        self._given.setdefault(files.absolute(path, store=store), path)
        self.emit({"type": "file", "v": SCHEMA_VERSION, "path": path})

    def unknown_file(self, path: str) -> None:
        self.emit({"type": "ignored", "v": SCHEMA_VERSION, "file": path, "reason": "unknown file suffix"})
        self.err_line(f"Ignoring unknown file {path}")

    def log_start(self, base_offset: int) -> None:
        self.emit({"type": "log", "v": SCHEMA_VERSION, "file": self._file, "baseOffset": base_offset})

    def bootstrap_snapshot(self) -> None:
        self.emit({"type": "kraft_snapshot", "v": SCHEMA_VERSION, "file": self._file, "bootstrap": True})

    def snapshot_start(self, end_offset: int, epoch: int) -> None:
        self.emit(
            {
                "type": "kraft_snapshot",
                "v": SCHEMA_VERSION,
                "file": self._file,
                "bootstrap": False,
                "endOffset": end_offset,
                "epoch": epoch,
            }
        )

    def trailing_bytes(self, n: int, name: str) -> None:
        self.emit({"type": "trailing_bytes", "v": SCHEMA_VERSION, "file": self._file, "bytes": n})

    def error(self, exc) -> None:
        self.emit(
            {
                "type": "error",
                "v": SCHEMA_VERSION,
                "file": exc.path,
                "position": exc.position,
                "error": type(exc).__name__,
                "message": exc.message,
                "hint": exc.hint,
            }
        )
        self.err_line(error_line(exc))

    # -- batches and records ----------------------------------------------------------
    def batch(self, b, position: int) -> None:
        self.emit(batch_object(b, position))

    def batch_lines(self, items: list) -> None:
        for position, size, h, valid in items:
            if h is None:  # a batch object (legacy, or not a whole v2 batch in the window)
                self.emit(batch_object(valid, position))
            else:
                self.emit(v2_batch_object(position, size, h, valid))

    def control_text(self, b, key, value) -> str:
        return control_text(b, key, value, self.kraft_text)

    def record(self, b, rec, extra, key_text, payload_text) -> None:
        obj = record_object(b, rec, extra, key_text, payload_text, self.header_decoder)
        if self.structured:
            for name in ("key", "payload"):
                if name in obj:
                    obj[name] = _json_value(obj[name])
        self.emit(obj)

    def legacy_record(self, b, rec, key_text, payload_text) -> None:
        self.emit(record_object(b, rec, None, key_text, payload_text))

    def decoded_record(self, b, rec, key_decoder, value_decoder) -> None:
        """A record whose key and value a structured decoder (the registry's) gives as fields (the decoded
        value and its schema), v0/v1 records and ``--skip-record-metadata`` included."""
        header_decoder = getattr(value_decoder, "header_decoder", value_decoder)
        obj = record_object(b, rec, None, None, None, header_decoder)
        headers = rec.headers if b.magic >= 2 else ()
        if rec.key is not None:
            obj.update(json_fields(key_decoder, "key", rec.key, headers))
        if rec.value is not None:
            obj.update(json_fields(value_decoder, "payload", rec.value, headers))
        self.emit(obj)

    def partial_record(self, b, rec) -> None:
        """Kafka's partial text line has no JSON form: the error object that follows names the record."""

    def v2_records(self, b, records: list, key_decoder=None, value_decoder=None) -> None:
        """Record objects of a chunk of a v2 data batch: sizes without decoders, slices with them."""
        ts_type = b.timestamp_type
        if key_decoder is None:
            self._sized_records(ts_type, records, value_decoder)
            return
        for o, ts, seq, k, v, hs in records:
            sizes = (-1 if k is None else len(k), -1 if v is None else len(v))
            obj = self._record_object(ts_type, o, ts, seq, sizes, hs, value_decoder)
            if k is not None:
                obj.update(json_fields(key_decoder, "key", k, hs))
            if v is not None:
                obj.update(json_fields(value_decoder, "payload", v, hs))
            self.emit(obj)

    def _sized_records(self, ts_type: str, records: list, value_decoder) -> None:
        """:meth:`v2_records` without decoders (sizes: ``--deep-iteration``).  A record without headers, every
        field a number but the timestamp type's name, is written from one template, the text :func:`dumps`
        writes of its object (a batch of 600 k records: ~0.6 s instead of ~6 s of encoding objects)."""
        head = f'{{"type":"record","v":{SCHEMA_VERSION},"offset":'
        mid = f',"timestampType":{dumps(ts_type)},"timestamp":'
        tail = ',"headerKeys":[],"headers":[]}\n'
        lines = []
        for o, ts, seq, k, v, hs in records:
            if hs:
                lines.append(dumps(self._record_object(ts_type, o, ts, seq, (k, v), hs, value_decoder)) + "\n")
            else:
                lines.append(f'{head}{o}{mid}{ts},"keySize":{k},"valueSize":{v},"sequence":{seq}{tail}')
        self.write_lines(lines)

    def _record_object(self, ts_type: str, o: int, ts: int, seq: int, sizes: tuple, hs, value_decoder) -> dict:
        """A record's object up to its headers (a decoder's fields go after them); ``sizes``: key's, value's."""
        obj = {"type": "record", "v": SCHEMA_VERSION, "offset": o, "timestampType": ts_type, "timestamp": ts}
        obj["keySize"], obj["valueSize"] = sizes
        obj["sequence"] = seq
        obj["headerKeys"] = [string_decoder(hk) for hk, _ in hs]
        headers_decoder = None if self.structured else getattr(value_decoder, "header_decoder", value_decoder)
        obj["headers"] = header_objects(hs, headers_decoder) if hs else []
        return obj

    # -- indexes, snapshots -------------------------------------------------------
    def index_empty(self, path: str) -> None:
        self.emit({"type": "index_empty", "v": SCHEMA_VERSION, "file": path})

    def sanity_passed(self, path: str) -> None:
        self.emit({"type": "sanity_check", "v": SCHEMA_VERSION, "file": path, "passed": True})

    def offset_entry(self, offset: int, position: int) -> None:
        self.emit({"type": "index_entry", "v": SCHEMA_VERSION, "offset": offset, "position": position})

    def time_entry(self, timestamp: int, offset: int) -> None:
        self.emit({"type": "time_index_entry", "v": SCHEMA_VERSION, "timestamp": timestamp, "offset": offset})

    def txn_entry(self, e) -> None:
        self.emit(
            {
                "type": "aborted_txn",
                "v": SCHEMA_VERSION,
                "version": e[0],
                "producerId": e[1],
                "firstOffset": e[2],
                "lastOffset": e[3],
                "lastStableOffset": e[4],
            }
        )

    def producer_entry(self, e) -> None:
        obj = {
            "type": "producer_state",
            "v": SCHEMA_VERSION,
            "producerId": e.producer_id,
            "producerEpoch": e.epoch,
            "coordinatorEpoch": e.coordinator_epoch,
            "currentTxnFirstOffset": e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None,
            "lastTimestamp": e.timestamp,
        }
        if e.last_offset >= 0:
            obj.update(
                firstSequence=e.first_sequence,
                lastSequence=e.last_sequence,
                lastOffset=e.last_offset,
                offsetDelta=e.offset_delta,
                timestamp=e.timestamp,
            )
        self.emit(obj)

    def snapshot_error(self, exc) -> None:
        self.emit(
            {
                "type": "error",
                "v": SCHEMA_VERSION,
                "file": self._file,
                "position": None,
                "error": type(exc).__name__,
                "message": exc.message,
                "hint": None,
            }
        )
        self.err_line(exc.message)

    # -- the end-of-run reports -----------------------------------------------------
    def problems(self, p) -> None:
        """One ``problem`` row per pair of ``DumpLogSegments``' end-of-run lists (the text's order)."""
        given = self._given.get
        for attr, kind, first, second, prepended in _PROBLEM_LISTS:
            for path, pairs in getattr(p, attr).items():
                for a, b in reversed(pairs) if prepended else pairs:
                    self.emit(
                        {
                            "type": "problem",
                            "v": SCHEMA_VERSION,
                            "kind": kind,
                            "file": given(path, path),
                            first: a,
                            second: b,
                        }
                    )


#: ``DumpLogSegments``' end-of-run lists as problem rows: (the attribute of the problems, the row's kind,
#: the names of the pair's two numbers, whether Scala's tool built the list by prepending: then the
#: rows come in the text's reverse discovery order)
_PROBLEM_LISTS = (
    ("index_mismatches", "index_mismatch", "indexOffset", "logOffset", True),
    ("time_mismatches", "time_index_mismatch", "indexTimestamp", "logTimestamp", False),
    ("out_of_order", "out_of_order_timestamp", "indexTimestamp", "previousTimestamp", False),
    ("not_found", "offset_not_found", "indexOffset", "logOffset", False),
    ("non_consecutive", "non_consecutive_offsets", "offset", "nextOffset", True),
)
