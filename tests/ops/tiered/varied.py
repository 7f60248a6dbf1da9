"""Varied ``__remote_log_metadata`` values for comparing the fold's fast road with the general one (test helper).

:func:`varied_values` makes a partition's worth of values: segments of several topic-partitions (names of
every length class, one topic id under two names) added, updated, deleted, by accepted and refused
transitions, with and without custom metadata (Aiven's, empty, not Aiven's), one or many leader epochs
(unsorted, repeated), ``txnIndexEmpty``; partition deletions and events after them; and damaged values --
null, cut short, bytes left over, another frame, api key or version, unknown tagged fields, random bytes
changed, every record kind (a snapshot's too) filled with random values by the schema.
"""

from __future__ import annotations

import base64
import random
import struct

from kseg.decoders import schema
from kseg.decoders.encode import write
from kseg.testing import remote_metadata as rm
from kseg.testing.v2 import uvarint
from tests.decoders.samples import sample

TOPIC_ID = "Wd7Ynb0xRJ2-8HlQ_3aZ1g"
OTHER_ID = "EBAQEBAQEBAQEBAQEBAQEA"
#: (topic id, name, partition): short, empty, non-ASCII, past 127 bytes (a two-byte length), one id twice
TOPICS = [
    (TOPIC_ID, "orders", 0),
    (TOPIC_ID, "orders", 1),
    (OTHER_ID, "", 2),
    (OTHER_ID, "zähler-\u4e2d", 3),
    (OTHER_ID, "t" * 130, 4),
    (TOPIC_ID, "renamed", 0),
]
_NAMES = [
    "RemoteLogSegmentMetadataRecord",
    "RemoteLogSegmentMetadataUpdateRecord",
    "RemotePartitionDeleteMetadataRecord",
    "RemoteLogSegmentMetadataSnapshotRecord",
]


def _uuid(rng: random.Random) -> str:
    return base64.urlsafe_b64encode(rng.randbytes(16)).rstrip(b"=").decode()


def _custom(rng: random.Random) -> bytes | None:
    return rng.choice(
        [
            None,
            None,
            None,
            b"",
            rm.aiven_custom_metadata(rng.randrange(1 << 40), "prefix/", "orders-x/0/00000000000000000000-y"),
            rm.aiven_custom_metadata(remote_size=rng.randrange(1000)),
            b"\xff\xff\xff",  # not Aiven's tagged fields: a problem
            bytes(200),  # a two-byte length
        ]
    )


def _epochs(rng: random.Random, start: int) -> dict[int, int]:
    return rng.choice([{0: start}, {0: start}, {3: start + 5, 1: start}, {n: start + n for n in range(9, 0, -1)}])


def _repeated_epoch(value: bytes, start: int) -> bytes:
    """A segment record whose leader epochs name epoch 1 twice (the later offset kept)."""
    return value.replace(struct.pack(">iq", 3, start + 5), struct.pack(">iq", 1, start + 5))


def _segment_events(rng: random.Random, seg: rm.SegmentId, start: int) -> list[bytes]:
    """A segment's life, now and then with an event Kafka refuses."""
    epochs = _epochs(rng, start)
    add = rm.segment_metadata(
        seg,
        start,
        start + rng.randrange(100),
        epochs=epochs,
        custom=_custom(rng),
        txn_index_empty=rng.random() < 0.3,
        state=rm.COPY_SEGMENT_STARTED if rng.random() < 0.9 else rng.randrange(4),
    )
    out = [_repeated_epoch(add, start) if 3 in epochs and rng.random() < 0.5 else add]
    if rng.random() < 0.1:
        out.append(add)  # added again while STARTED: replaced
    for state in (rm.COPY_SEGMENT_FINISHED, rm.DELETE_SEGMENT_STARTED, rm.DELETE_SEGMENT_FINISHED):
        if rng.random() < 0.15:
            break  # left in this state
        if rng.random() < 0.1:
            out.append(rm.segment_update(seg, rng.randrange(4)))  # any state: valid or refused
        out.append(rm.segment_update(seg, state, custom=_custom(rng), broker=rng.randrange(5)))
        if rng.random() < 0.1:
            out.append(rm.segment_update(seg, state))  # the same state again
    if rng.random() < 0.05:
        out.append(add)  # added again after it moved on: refused
    return out


def _damaged(rng: random.Random, value: bytes) -> bytes | None:
    how = rng.randrange(9)
    if how == 0:
        return None
    if how == 1:
        return value[: rng.randrange(len(value))]
    if how == 2:
        return value + b"\x00\x07"
    if how == 3:
        return bytes([0]) + value[1:]  # frame version 0
    if how == 4:
        return value[:2] + bytes([1]) + value[3:]  # version 1
    if how == 5:
        return value[:1] + bytes([rng.choice([4, 0x80])]) + value[2:]  # another api key, a two-byte one
    if how == 6:  # an unknown tag in the top-level tagged section (Kafka skips it)
        return value[:-1] + b"\x01\x05\x02ab" if value.endswith(b"\x00") else value
    b = bytearray(value)
    for _ in range(rng.randint(1, 3)):
        b[rng.randrange(len(b))] = rng.choice([0, 1, 2, 3, 4, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    return bytes(b)


def _sampled(rng: random.Random) -> bytes:
    """Any record kind, every field random by its schema (most refused or not decodable)."""
    api_key = rng.randrange(4)
    spec = schema.message(_NAMES[api_key]).struct
    return uvarint(rm.FRAME_VERSION) + uvarint(api_key) + uvarint(0) + write(spec, sample(spec, 0, rng), 0)


def varied_values(seed: int, segments: int = 120) -> list[bytes | None]:
    """A partition's values (None: a null value), in the order they are written."""
    rng = random.Random(seed)
    values: list[bytes | None] = []
    lives: list[list[bytes]] = []
    for i in range(segments):
        topic_id, name, partition = rng.choice(TOPICS)
        lives.append(_segment_events(rng, rm.SegmentId(topic_id, name, partition, _uuid(rng)), 100 * i))
    while any(lives):  # the segments' lives interleaved
        life = rng.choice([x for x in lives if x])
        values.append(life.pop(0))
        roll = rng.random()
        if roll < 0.01:
            topic_id, name, partition = rng.choice(TOPICS)
            values.append(rm.partition_delete(topic_id, name, partition, rng.randrange(3)))
        elif roll < 0.05:
            values.append(_damaged(rng, values[-1] or b"\x01"))
        elif roll < 0.07:
            values.append(_sampled(rng))
    # a partition deleted with live segments, then an event for it
    topic_id, name, partition = TOPICS[0]
    values += [rm.partition_delete(topic_id, name, partition, s) for s in range(3)]
    values.append(rm.segment_update(rm.SegmentId(topic_id, name, partition, _uuid(rng)), rm.COPY_SEGMENT_FINISHED))
    values.append(rm.segment_metadata(rm.SegmentId(topic_id, name, partition, _uuid(rng)), 0, 1))
    return values
