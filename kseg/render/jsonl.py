"""``--format json``: the dump as JSON Lines, one object per line, for jq.

Every object has a ``"type"``; the schema is documented (and kept stable) in
``docs/json-output.md``.  The facts are the text output's facts; errors and
problems are objects on stdout too, and errors are also written to stderr
as the one-line text diagnostic.
"""

from __future__ import annotations

from kseg.errors import error_line
from kseg.format import v2
from kseg.format.compression import codec_name
from kseg.jsonlines import dumps  # noqa: F401 - the form of every kseg JSON line; re-exported
from kseg.render.dump import string_decoder

_FLUSH_AT = 1 << 16


class JsonSink:
    """Writes JSON Lines to binary ``out``; diagnostics to binary ``err``."""

    def __init__(self, out, err) -> None:
        self.out = out
        self.err = err
        self._parts: list[str] = []
        self._size = 0
        self._file = None

    def emit(self, obj: dict) -> None:
        line = dumps(obj)
        self._parts.append(line)
        self._size += len(line)
        if self._size > _FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        if self._parts:
            self.out.write(("\n".join(self._parts) + "\n").encode("utf-8", "replace"))
            self._parts.clear()
            self._size = 0
        self.out.flush()

    def close(self) -> None:
        self.flush()

    def _err(self, line: str) -> None:
        self.flush()
        self.err.write((line + "\n").encode("utf-8", "replace"))
        self.err.flush()

    # -- file level ---------------------------------------------------------------
    def dumping(self, path: str) -> None:
        self._file = path
        self.emit({"type": "file", "path": path})

    def unknown_file(self, path: str) -> None:
        self.emit({"type": "ignored", "file": path, "reason": "unknown file suffix"})
        self._err(f"Ignoring unknown file {path}")

    def log_start(self, base_offset: int) -> None:
        self.emit({"type": "log", "file": self._file, "baseOffset": base_offset})

    def bootstrap_snapshot(self) -> None:
        self.emit({"type": "kraft_snapshot", "file": self._file, "bootstrap": True})

    def snapshot_start(self, end_offset: int, epoch: int) -> None:
        self.emit({"type": "kraft_snapshot", "file": self._file, "bootstrap": False,
                   "endOffset": end_offset, "epoch": epoch})

    def trailing_bytes(self, n: int, name: str) -> None:
        self.emit({"type": "trailing_bytes", "file": self._file, "bytes": n})

    def note(self, message: str) -> None:
        self._err(f"kseg: note: {message}")

    def error(self, exc) -> None:
        self.emit({"type": "error", "file": exc.path, "position": exc.position,
                   "error": type(exc).__name__, "message": exc.message, "hint": exc.hint})
        self._err(error_line(exc))

    # -- batches and records ----------------------------------------------------------
    def batch(self, b, position: int) -> None:
        obj = {"type": "batch", "position": position, "baseOffset": b.base_offset, "lastOffset": b.last_offset}
        if b.magic >= 2:
            h = b.h
            obj.update(
                count=h[v2.COUNT],
                baseSequence=h[v2.BASE_SEQUENCE],
                lastSequence=v2.last_sequence(h[v2.BASE_SEQUENCE], h[v2.LAST_OFFSET_DELTA]),
                producerId=h[v2.PRODUCER_ID],
                producerEpoch=h[v2.PRODUCER_EPOCH],
                partitionLeaderEpoch=h[v2.LEADER_EPOCH],
                isTransactional=b.is_transactional,
                isControl=b.is_control,
                deleteHorizonMs=b.delete_horizon_ms,
            )
        else:
            obj.update(count=None, baseSequence=-1, lastSequence=-1, producerId=-1, producerEpoch=-1,
                       partitionLeaderEpoch=-1, isTransactional=False, isControl=False, deleteHorizonMs=None)
        obj.update(
            timestampType=b.timestamp_type,
            maxTimestamp=b.max_timestamp,
            size=b.size,
            magic=b.magic,
            compression=codec_name(b.codec),
            crc=b.checksum,
            isValid=b.is_valid(),
        )
        self.emit(obj)

    def record(self, b, rec, extra, key_text, payload_text) -> None:
        key, value = rec[3], rec[4]
        obj = {
            "type": "record",
            "offset": rec[0],
            "timestampType": b.timestamp_type,
            "timestamp": rec[1],
            "keySize": -1 if key is None else len(key),
            "valueSize": -1 if value is None else len(value),
            "sequence": rec[2],
            "headerKeys": [string_decoder(k) for k, _ in rec[5]],
        }
        if extra is not None:
            obj["control"] = extra.strip()
        self._data(obj, key_text, payload_text)

    def legacy_record(self, b, rec, key_text, payload_text) -> None:
        key, value = rec[2], rec[3]
        obj = {
            "type": "record",
            "offset": rec[0],
            "timestampType": b.timestamp_type,
            "timestamp": rec[1],
            "keySize": -1 if key is None else len(key),
            "valueSize": -1 if value is None else len(value),
            "isValid": rec[5],
            "crc": rec[4],
        }
        self._data(obj, key_text, payload_text)

    def _data(self, obj: dict, key_text, payload_text) -> None:
        if key_text is not None:
            obj["key"] = key_text
        if payload_text is not None:
            obj["payload"] = payload_text
        self.emit(obj)

    # -- indexes, snapshots -------------------------------------------------------
    def index_empty(self, path: str) -> None:
        self.emit({"type": "index_empty", "file": path})

    def sanity_passed(self, path: str) -> None:
        self.emit({"type": "sanity_check", "file": path, "passed": True})

    def offset_entry(self, offset: int, position: int) -> None:
        self.emit({"type": "index_entry", "offset": offset, "position": position})

    def time_entry(self, timestamp: int, offset: int) -> None:
        self.emit({"type": "time_index_entry", "timestamp": timestamp, "offset": offset})

    def txn_entry(self, e) -> None:
        self.emit({"type": "aborted_txn", "version": e[0], "producerId": e[1], "firstOffset": e[2],
                   "lastOffset": e[3], "lastStableOffset": e[4]})

    def producer_entry(self, e) -> None:
        obj = {"type": "producer_state", "producerId": e.producer_id, "producerEpoch": e.epoch,
               "coordinatorEpoch": e.coordinator_epoch,
               "currentTxnFirstOffset": e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None,
               "lastTimestamp": e.timestamp}
        if e.last_offset >= 0:
            obj.update(firstSequence=e.first_sequence, lastSequence=e.last_sequence, lastOffset=e.last_offset,
                       offsetDelta=e.offset_delta, timestamp=e.timestamp)
        self.emit(obj)

    def snapshot_error(self, exc) -> None:
        self.emit({"type": "error", "file": self._file, "position": None, "error": type(exc).__name__,
                   "message": exc.message, "hint": None})
        self._err(exc.message)

    # -- the end-of-run reports -----------------------------------------------------
    def problems(self, p) -> None:
        for path, pairs in p.index_mismatches.items():
            for a, b in reversed(pairs):
                self.emit({"type": "problem", "kind": "index_mismatch", "file": path, "indexOffset": a,
                           "logOffset": b})
        for path, pairs in p.time_mismatches.items():
            for a, b in pairs:
                self.emit({"type": "problem", "kind": "time_index_mismatch", "file": path,
                           "indexTimestamp": a, "logTimestamp": b})
        for path, pairs in p.out_of_order.items():
            for a, b in pairs:
                self.emit({"type": "problem", "kind": "out_of_order_timestamp", "file": path,
                           "indexTimestamp": a, "previousTimestamp": b})
        for path, pairs in p.not_found.items():
            for a, b in pairs:
                self.emit({"type": "problem", "kind": "offset_not_found", "file": path, "indexOffset": a,
                           "logOffset": b})
        for path, pairs in p.non_consecutive.items():
            for a, b in reversed(pairs):
                self.emit({"type": "problem", "kind": "non_consecutive_offsets", "file": path, "offset": a,
                           "nextOffset": b})
