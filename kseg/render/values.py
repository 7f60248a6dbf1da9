"""Values as Kafka's tool prints them, shared by the text and JSON forms (a leaf of ``kseg.render``)."""

from __future__ import annotations

from typing import Callable

from kseg.errors import KsegError
from kseg.format import control
from kseg.format.strings import string_decoder  # noqa: F401 - Kafka's default decoder, re-exported

#: ``(type id, key, value) -> text or None``: the KRaft control records' text
#: (:func:`kseg.decoders.control.control_record_text`), handed in by the CLI:
#: render does not import the decoders, its sibling layer.
KRaftText = Callable[[int, bytes, "bytes | None"], "str | None"]

#: control types whose text ``kraft_text`` may give (LEADER_CHANGE: from Kafka 4.1, else None)
KRAFT_TYPES = (control.LEADER_CHANGE, control.SNAPSHOT_HEADER, control.SNAPSHOT_FOOTER, control.KRAFT_VERSION, control.KRAFT_VOTERS)


def bool_text(b) -> str:
    """Java's ``Boolean.toString``."""
    return "true" if b else "false"


def optional_long(value: int | None) -> str:
    """Java's ``OptionalLong.toString``."""
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def control_text(batch, key, value, kraft_text: KRaftText | None = None) -> str:
    """What Kafka's tool prints after a control record's metadata (``DumpLogSegments.dumpLog``).

    ``kraft_text`` prints the KRaft types (3-6); without it they print as
    any other type (`` controlType: NAME(id)``).
    """
    try:
        type_id = control.parse_type_id(key)
        if type_id in (control.ABORT, control.COMMIT):
            epoch = control.parse_end_txn_marker(value)
            return f" endTxnMarker: {control.type_name(type_id)} coordinatorEpoch: {epoch}"
        if kraft_text is not None and type_id in KRAFT_TYPES:
            text = kraft_text(type_id, bytes(key), None if value is None else bytes(value))
            if text is not None:
                return text
        return f" controlType: {control.type_name(type_id)}({type_id})"
    except KsegError as exc:
        raise exc.at(batch.file.path) from None  # the key/value are slices: no position in the file
