"""The two ``__remote_log_metadata`` records of a segment's life, read from their fixed layout for the fold.

``kseg tiered`` folds millions of ``RemoteLogSegmentMetadataRecord`` / ``RemoteLogSegmentMetadataUpdateRecord``
values (:mod:`kseg.ops.tiered.fast`).  Their version 0 (the only one; flexible, framed by
``AbstractApiMessageSerde``: frame version 1, the api key, the version) is a compact string, the topic name,
then fields of fixed width up to the custom metadata, the leader epochs' compact array aside.  :func:`view`
reads that road with one ``struct`` unpack per fixed part (the structs made once per name length and epoch
count) and hands the fold the values it uses (:data:`kseg.ops.tiered.state.View`).  Anything off the road --
another frame, api key or version, a multi-byte length, a tagged field other than ``txnIndexEmpty``, bytes
short or left over, a value ``RemoteLogSegmentMetadata``'s or ``RemoteLogSegmentMetadataUpdate``'s
constructor refuses -- is None, and the record is read by :func:`kseg.decoders.remote.read_record`, the
reference for values and Java's exceptions.  ``tests/decoders/test_remote_view.py`` compares the two on
every record kind, well-formed, cut short and mutated, and checks the layout against the storage module's
schemas.

The topic name is not decoded: the view hands out the ``TopicIdPartitionEntry``'s bytes as read (name's
length and bytes, id, partition), and the fold takes a view only for a topic-partition it met through
:func:`~kseg.decoders.remote.read_record` with those same bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from kseg.ops.tiered.state import ADD, UPDATE, View

FRAME = 1  # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION
#: The fixed parts: the frame (frame version, api key, version), the TopicIdPartitionEntry (the name's length,
#: its bytes, id, partition) as one run of bytes, its tagged section; RemoteLogSegmentIdEntry's id, its tagged
#: section; then
_UPDATE = ">BBB{}sB16sBiqB"  # brokerId, eventTimestampMs, customMetadata's length + 1
_ADD = ">BBB{}sB16sBqqiqqB"  # startOffset, endOffset, brokerId, maxTimestampMs, eventTimestampMs, epochs' count + 1
_EPOCH = "iqB"  # each SegmentLeaderEpochEntry (leaderEpoch, offset, tagged section), then
_AFTER_EPOCHS = "iB"  # segmentSizeInBytes, customMetadata's length + 1
_END = "BB"  # remoteLogSegmentState, and an empty tagged section: a record without custom metadata ends so
_TOPIC = 16 + 4  # the TopicIdPartitionEntry after its name
#: RemoteLogSegmentMetadataRecord's tagged section: empty, or txnIndexEmpty (tag 0, one byte) false / true
_TXN_TAGS = {b"\x00": False, b"\x01\x00\x01\x00": False, b"\x01\x00\x01\x01": True}
#: its end (remoteLogSegmentState, the tagged section) -> (state id, txnIndexEmpty)
_ENDS = {bytes([state]) + tags: (state, txn) for state in range(4) for tags, txn in _TXN_TAGS.items()}


class _Structs(dict):
    """The structs of one layout, made when a name's length (or an epoch count) is first met."""

    def __init__(self, make: Callable[[int], str]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, n: int) -> struct.Struct:
        made = self[n] = struct.Struct(self.make(n))
        return made


#: by the name's length + 1: an update up to its custom metadata; a whole one without custom metadata
_updates = _Structs(lambda n: _UPDATE.format(n + _TOPIC))
_whole_updates = _Structs(lambda n: _UPDATE.format(n + _TOPIC) + _END)
#: ... a segment's record up to its custom metadata, when it has one leader epoch
_adds = _Structs(lambda n: _ADD.format(n + _TOPIC) + _EPOCH + _AFTER_EPOCHS)
_epochs = _Structs(lambda k: ">" + _EPOCH * k + _AFTER_EPOCHS)  # by the epoch count


def view(data: bytes | memoryview, at: int, end: int) -> View | None:
    """The fold's values of the record value ``data[at:end]``, or None when it is off the fixed road."""
    try:
        kind, n = data[at + 1], data[at + 3]  # past end in a value shorter than the frame: refused below
        if not 0 < n < 0x80:
            return None
        if kind == UPDATE:
            read = _whole_updates[n]  # the most frequent record, read by one unpack from the batch's bytes
            if end - at != read.size:
                return _update(bytes(data[at:end]), _updates[n])
            frame, _, version, topic, tags, sid, sid_tags, broker, event_time, length, state, last = read.unpack_from(
                data, at
            )
            if frame != FRAME or version or tags or sid_tags or last or length > 1 or state > 3:
                return None
            return (UPDATE, topic, sid, state, broker, event_time, b"" if length else None)
        if kind == ADD:
            return _add(bytes(data[at:end]))
    except (struct.error, IndexError):  # bytes short: the reference reads the record and says so
        return None
    return None


def _custom(value: bytes, q: int, length: int) -> tuple[bytes | None, int]:
    """Compact nullable bytes whose length + 1 (a one-byte varint) is ``length``, at ``q``: the value and where
    it ends (IndexError for a longer varint)."""
    if length >= 0x80:
        raise IndexError
    if length == 0:
        return None, q
    return value[q : q + length - 1], q + length - 1


def _update(value: bytes, read: struct.Struct) -> View | None:
    frame, _, version, topic, tags, sid, sid_tags, broker, event_time, length = read.unpack_from(value)
    custom, q = _custom(value, read.size, length)
    state = value[q]
    if frame != FRAME or version or tags or sid_tags or q + 2 != len(value) or value[q + 1] or state > 3:
        return None
    return (UPDATE, topic, sid, state, broker, event_time, custom)


def _add(value: bytes) -> View | None:
    read = _adds[value[3]]
    (
        frame,
        _,
        version,
        topic,
        tags,
        sid,
        sid_tags,
        start,
        end,
        broker,
        max_time,
        event_time,
        n,
        epoch,
        offset,
        e_tags,
        size,
        length,
    ) = read.unpack_from(value)
    if frame != FRAME or version or tags or sid_tags or start < 0 or end < start:
        return None
    q = read.size
    if n == 2:  # one leader epoch, read with the fields around it
        if e_tags:
            return None
        epochs = {epoch: offset}
    elif 2 < n < 0x80:
        read = _epochs[n - 1]
        q -= _epochs[1].size
        *entries, size, length = read.unpack_from(value, q)
        q += read.size
        if any(entries[2::3]):
            return None
        epochs = dict(zip(entries[0::3], entries[1::3], strict=True))  # a repeated epoch: its last offset
        epochs = dict(sorted(epochs.items()))
    else:
        return None
    custom = None
    if length:
        custom, q = _custom(value, q, length)
    end_state = _ENDS.get(value[q:])
    if end_state is None:
        return None
    return (ADD, topic, sid, end_state[0], broker, event_time, custom, start, end, epochs, size, max_time, end_state[1])
