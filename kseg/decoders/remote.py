"""``--remote-log-metadata-decoder``: ``__remote_log_metadata`` records.

The value is framed like a KRaft record (``AbstractApiMessageSerde``, see
:mod:`kseg.decoders.metadata`) with the storage module's own api keys:
0 ``RemoteLogSegmentMetadataRecord``, 1 ``RemoteLogSegmentMetadataUpdateRecord``,
2 ``RemotePartitionDeleteMetadataRecord``, 3 ``RemoteLogSegmentMetadataSnapshotRecord``.
``RemoteLogMetadataSerde`` turns each into a ``RemoteLogMetadata`` object and
the tool prints that object's ``toString()``, reproduced here:

* ``RemoteLogSegmentMetadata{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition=<topicId>:<topic>-<p>,
  id=<uuid>}, startOffset=.., endOffset=.., brokerId=.., maxTimestampMs=.., eventTimestampMs=..,
  segmentLeaderEpochs={epoch=offset, ...}, segmentSizeInBytes=..,
  customMetadata=Optional.empty|Optional[CustomMetadata{N bytes}], state=COPY_SEGMENT_FINISHED}``
* ``RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=.., customMetadata=.., state=.., eventTimestampMs=..,
  brokerId=..}``
* ``RemotePartitionDeleteMetadata{topicPartition=<topicId>:<topic>-<p>, state=DELETE_PARTITION_MARKED,
  eventTimestampMs=.., brokerId=..}``
* ``RemoteLogSegmentMetadataSnapshot{segmentId=<uuid>, startOffset=.., endOffset=.., maxTimestampMs=..,
  segmentLeaderEpochs={..}, segmentSizeInBytes=.., customMetadata=.., state=..}``

Uuids print as Kafka's ``Uuid.toString()``; the leader epochs are a
``TreeMap`` (sorted by epoch, a repeated epoch keeps its last offset).  The
objects' constructors validate (negative start offset, end before start, no
leader epochs, unknown state id) and those messages become the error text.

Output (``DumpLogSegments.RemoteMetadataLogMessageParser``): no key; the
payload is the text above or "Error at offset N, skipping. <message>".
"""

from __future__ import annotations

from kseg.decoders.jvm import IllegalArgumentException, JavaException, NullPointerException, uuid_to_string
from kseg.decoders.metadata import read_api_message
from kseg.errors import DecoderError
from kseg.format import releases
from kseg.format.releases import Release

#: ``RemoteLogSegmentState`` ids
SEGMENT_STATES = {
    0: "COPY_SEGMENT_STARTED",
    1: "COPY_SEGMENT_FINISHED",
    2: "DELETE_SEGMENT_STARTED",
    3: "DELETE_SEGMENT_FINISHED",
}
#: ``RemotePartitionDeleteState`` ids
PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED", 2: "DELETE_PARTITION_FINISHED"}


def _null_value(release: Release) -> NullPointerException:
    """The JVM's helpful message for ``record.value().remaining()`` on a null value (JDK 14+, JEP 358): the
    record interface is the release's own (:attr:`Release.record_class`)."""
    return NullPointerException(
        'Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
        f'"{release.record_class}.value()" is null'
    )


def _topic_id_partition(entry: dict) -> str:
    """``TopicIdPartition.toString()``: ``<topicId>:<topic>-<partition>``."""
    return f"{uuid_to_string(entry['id'])}:{entry['name']}-{entry['partition']}"


def _segment_id(entry: dict) -> str:
    return (
        f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(entry['topicIdPartition'])}, "
        f"id={uuid_to_string(entry['id'])}}}"
    )


def _custom(data: bytes | None) -> str:
    return "Optional.empty" if data is None else f"Optional[CustomMetadata{{{len(data)} bytes}}]"


def _require_epochs(entries: list[dict]) -> None:
    if not entries:
        raise IllegalArgumentException("segmentLeaderEpochs can not be null or empty")


def _epochs(entries: list[dict]) -> str:
    """``new TreeMap<>(hashMap)``'s ``toString()`` (of epochs :func:`_require_epochs` let through)."""
    epochs: dict[int, int] = {}
    for e in entries:
        epochs[e["leaderEpoch"]] = e["offset"]
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _segment_state(state_id: int) -> str:
    state = SEGMENT_STATES.get(state_id)
    if state is None:
        raise NullPointerException("state can not be null")
    return state


def _txn_idx_empty(m: dict, release: Release) -> str:
    """4.0+ (KIP-1058): ``, txnIdxEmpty=<bool>`` before the closing brace; the tag's default is false."""
    return f", txnIdxEmpty={'true' if m.get('txnIndexEmpty') else 'false'}" if release.remote_txn_idx_empty else ""


def _check_segment_metadata(m: dict) -> None:
    """``RemoteLogSegmentMetadata``'s constructor checks, in its order."""
    start, end = m["startOffset"], m["endOffset"]
    if start < 0:
        raise IllegalArgumentException(
            f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative"
        )
    if end < start:
        raise IllegalArgumentException(
            f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than startOffset = {start}"
        )
    _require_epochs(m["segmentLeaderEpochs"])
    _segment_state(m["remoteLogSegmentState"])


def _segment_metadata(m: dict, release: Release) -> str:
    """``RemoteLogSegmentMetadata.toString()`` (of a record :func:`_check_segment_metadata` let through).

    Alike :func:`_snapshot` by design: two Kafka classes, each printing its own fields in its own order."""
    start, end = m["startOffset"], m["endOffset"]
    epochs = _epochs(m["segmentLeaderEpochs"])
    state = SEGMENT_STATES[m["remoteLogSegmentState"]]
    return (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(m['remoteLogSegmentId'])}, "
        f"startOffset={start}, endOffset={end}, brokerId={m['brokerId']}, "
        f"maxTimestampMs={m['maxTimestampMs']}, eventTimestampMs={m['eventTimestampMs']}, "
        f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={m['segmentSizeInBytes']}, "
        f"customMetadata={_custom(m['customMetadata'])}, state={state}{_txn_idx_empty(m, release)}}}"
    )


def _check_state(m: dict) -> None:
    """``RemoteLogSegmentMetadataUpdate``'s constructor check."""
    _segment_state(m["remoteLogSegmentState"])


def _segment_update(m: dict, release: Release) -> str:
    state = SEGMENT_STATES[m["remoteLogSegmentState"]]
    return (
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(m['remoteLogSegmentId'])}, "
        f"customMetadata={_custom(m['customMetadata'])}, state={state}, "
        f"eventTimestampMs={m['eventTimestampMs']}, brokerId={m['brokerId']}}}"
    )


def _check_partition_delete(m: dict) -> None:
    if m["remotePartitionDeleteState"] not in PARTITION_DELETE_STATES:
        raise NullPointerException()  # Objects.requireNonNull(state): no message


def _partition_delete(m: dict, release: Release) -> str:
    state = PARTITION_DELETE_STATES[m["remotePartitionDeleteState"]]
    return (
        f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(m['topicIdPartition'])}, "
        f"state={state}, eventTimestampMs={m['eventTimestampMs']}, brokerId={m['brokerId']}}}"
    )


def _check_snapshot(m: dict) -> None:
    """``RemoteLogSegmentMetadataSnapshot``'s constructor checks, in its order."""
    _segment_state(m["remoteLogSegmentState"])
    _require_epochs(m["segmentLeaderEpochs"])


def _snapshot(m: dict, release: Release) -> str:
    """``RemoteLogSegmentMetadataSnapshot.toString()``; alike :func:`_segment_metadata` by design."""
    state = SEGMENT_STATES[m["remoteLogSegmentState"]]
    epochs = _epochs(m["segmentLeaderEpochs"])
    return (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={uuid_to_string(m['segmentId'])}, "
        f"startOffset={m['startOffset']}, endOffset={m['endOffset']}, maxTimestampMs={m['maxTimestampMs']}, "
        f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={m['segmentSizeInBytes']}, "
        f"customMetadata={_custom(m['customMetadata'])}, state={state}{_txn_idx_empty(m, release)}}}"
    )


#: each record's constructor checks (raising Java's exception), then its ``toString()``
_CHECKS = {
    "RemoteLogSegmentMetadataRecord": _check_segment_metadata,
    "RemoteLogSegmentMetadataUpdateRecord": _check_state,
    "RemotePartitionDeleteMetadataRecord": _check_partition_delete,
    "RemoteLogSegmentMetadataSnapshotRecord": _check_snapshot,
}
_FORMATTERS = {
    "RemoteLogSegmentMetadataRecord": _segment_metadata,
    "RemoteLogSegmentMetadataUpdateRecord": _segment_update,
    "RemotePartitionDeleteMetadataRecord": _partition_delete,
    "RemoteLogSegmentMetadataSnapshotRecord": _snapshot,
}


def remote_log_metadata_text(value: bytes, release: Release = releases.LATEST) -> str:
    """``new RemoteLogMetadataSerde().deserialize(value).toString()``; raises :class:`JavaException`."""
    name, _, _, message = read_api_message(value, "remoteLogMetadata")
    _CHECKS[name](message)
    return _FORMATTERS[name](message, release)


def read_record(value: bytes | None, release: Release = releases.LATEST) -> tuple[str, dict]:
    """``RemoteLogMetadataSerde.deserialize``: the record's name and values, after the checks of the object it
    becomes (those of :func:`remote_log_metadata_text`, without making its text); raises :class:`DecoderError`
    with Java's message, the record-reading rule that ``kseg tiered`` folds (``kseg.ops.tiered``, handed this
    function by the CLI)."""
    try:
        if value is None:
            raise _null_value(release)
        name, _, _, message = read_api_message(value, "remoteLogMetadata")
        _CHECKS[name](message)
    except JavaException as exc:
        raise DecoderError(exc.to_string()) from None
    return name, message


class RemoteMetadataLogMessageParser:
    """``--remote-log-metadata-decoder``, Kafka's ``RemoteMetadataLogMessageParser``."""

    def __init__(self, release: Release = releases.LATEST) -> None:
        self.release = release

    def parse(self, offset: int, key: bytes | None, value: bytes | None) -> tuple[None, str]:
        try:
            if value is None:
                raise _null_value(self.release)
            text = remote_log_metadata_text(value, self.release)
        except JavaException as exc:
            text = f"Error at offset {offset}, skipping. {exc.get_message()}"
        return None, text
