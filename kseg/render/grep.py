"""``kseg grep``'s output: each match as Kafka's dump prints the record (text) or as dump's record row
(JSON Lines), counts per partition, what was not read, and the run's last word.

A text match is the segment's ``.log`` (as given), the position of the record's batch in it, and the
record's line as ``kafka-dump-log.sh --print-data-log`` prints it (:mod:`kseg.render.record_line`)::

    data/orders-3/00000000000000000000.log position: 4120 | offset: 7 CreateTime: ... key: k payload: v

A JSON match is dump's ``record`` row (docs/json-output.md) with its place added: ``topic``,
``partitionId``, ``logDir``, ``partition`` (the directory's name), ``path`` (as given), ``segment`` and
``position`` (its batch's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from kseg.format.releases import LATEST
from kseg.format.strings import decode_text
from kseg.format.v2_records import Record
from kseg.jsonlines import SCHEMA_VERSION, dumps
from kseg.render.jsonl import record_object
from kseg.render.record_line import json_fields, legacy_line, record_line
from kseg.render.sink import BufferedWriter
from kseg.render.values import control_text
from kseg.storage import files
from kseg.storage.checkpoints import topic_partition
from kseg.words import plural

if TYPE_CHECKING:
    from kseg.storage.context import Store


class GrepSink(BufferedWriter):
    """Writes matches (or, with ``count``, a count a partition) to ``out``; what was not read to ``err``
    (and, as JSON, to ``out`` too).  ``key_decoder``/``value_decoder`` print keys and values as dump's
    ``--key-decoder``/``--value-decoder`` do; ``kraft_text`` the KRaft control records' text."""

    def __init__(
        self,
        out: Any,
        err: Any,
        *,
        json: bool,
        count: bool,
        key_decoder: Callable[..., str],
        value_decoder: Callable[..., str],
        kraft_text: Any = None,
    ) -> None:
        super().__init__(out, err)
        self.json, self.count = json, count
        self.key_decoder, self.value_decoder = key_decoder, value_decoder
        self.header_decoder = getattr(value_decoder, "header_decoder", value_decoder)
        self.kraft_text = kraft_text

    # -- matches --------------------------------------------------------------------------------
    def match(self, where: Any, batch: Any, rec: Any) -> None:
        if self.count:
            return
        if self.json:
            self.write(dumps(self._row(where, batch, rec)) + "\n")
        else:
            shown = files.display(where.segment.log, store=where.segment.store)
            self.write(f"{shown} position: {where.position} {self._line(batch, rec)}")

    def _line(self, batch: Any, rec: Any) -> str:
        if batch.magic < 2:
            key_text, payload_text = self._texts(rec.key, rec.value, ())
            return legacy_line(rec, batch.timestamp_type, LATEST.java_tool, key_text, payload_text)
        o, ts, seq, k, v, hs = rec
        extra = key_text = payload_text = None
        if batch.is_control:
            extra = control_text(batch, k, v, self.kraft_text)
        else:
            key_text, payload_text = self._texts(k, v, hs)
        size_k, size_v = -1 if k is None else len(k), -1 if v is None else len(v)
        return record_line(batch.timestamp_type, o, ts, seq, size_k, size_v, hs, extra, key_text, payload_text)

    def _texts(self, key: Any, value: Any, headers: tuple) -> tuple[str | None, str | None]:
        return (
            None if key is None else decode_text(self.key_decoder, key, headers),
            None if value is None else decode_text(self.value_decoder, value, headers),
        )

    def _row(self, where: Any, batch: Any, rec: Any) -> dict:
        row = _place(where)
        row["segment"] = where.segment.name
        row["position"] = where.position
        if batch.magic < 2:
            key_text, payload_text = self._texts(rec.key, rec.value, ())
            obj = record_object(batch, rec, None, key_text, payload_text)
        else:
            record = Record._make(rec)
            extra = control_text(batch, record.key, record.value, self.kraft_text) if batch.is_control else None
            obj = record_object(batch, record, extra, None, None, self.header_decoder)
            if not batch.is_control:
                if record.key is not None:
                    obj.update(json_fields(self.key_decoder, "key", record.key, record.headers))
                if record.value is not None:
                    obj.update(json_fields(self.value_decoder, "payload", record.value, record.headers))
        del obj["type"], obj["v"]
        row.update(obj)
        return row

    # -- per partition, and what was not read ---------------------------------------------------------
    def searched(self, result: Any) -> None:
        """A partition searched: its count, with ``count``."""
        if not self.count:
            return
        part = result.partition
        if self.json:
            row = {"type": "count", "v": SCHEMA_VERSION, **_where_of(part)}
            row["matches"] = result.matches
            row["unread"] = sum(not u.read_past for u in result.unread)
            self.write(dumps(row) + "\n")
        else:
            self.write(f"{files.display(part.path, store=part.store)}: {plural(result.matches, 'match')}\n")

    def unread(self, where: Any, problem: Any) -> None:
        """Bytes not searched (or searched though damaged): one line on stderr, a row in JSON."""
        if self.json:
            row = {"type": "unread", "v": SCHEMA_VERSION, **_where_of(where.partition)}
            row.update(
                segment=where.segment.name,
                file=files.display(problem.log, store=where.segment.store),
                position=problem.position,
                kind=problem.kind,
                message=problem.message,
            )
            self.write(dumps(row) + "\n")
        self.err_line(unread_line(problem, where.segment.store))

    def summary(self, row: dict) -> None:
        """The run's ``summary`` row (JSON only)."""
        if self.json:
            self.write(dumps({"type": "summary", "v": SCHEMA_VERSION, **row}) + "\n")
        self.flush()


def unread_line(problem: Any, store: Store) -> str:
    """What was not read (or read though damaged) in a segment of ``store``, on stderr: ``kseg: corrupt:
    <file>: at byte N: ...``."""
    kind = problem.kind.replace("-", " ")
    shown = files.display(problem.log, store=store)
    return f"kseg: corrupt: {shown}: at byte {problem.position}: {kind}: {problem.message}"


def _where_of(part: Any) -> dict:
    """The fields naming a partition in every row, as the lookups and coordinator name it: its topic and
    number (``partitionId``; null when the directory's name is not ``<topic>-<n>``), its log directory
    (absolute), its directory's name and its path as given."""
    tp = topic_partition(part.name)
    return {
        "topic": None if tp is None else tp[0],
        "partitionId": None if tp is None else tp[1],
        "logDir": part.log_dir,
        "partition": part.name,
        "path": files.display(part.path, store=part.store),
    }


def _place(where: Any) -> dict:
    return {"type": "record", "v": SCHEMA_VERSION, **_where_of(where.partition)}
