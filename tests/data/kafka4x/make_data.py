"""Write ``data/``: one small partition per internal topic, holding every record type and layout
Kafka 4.0-4.4 added (see MANIFEST.md).  Run from the repository root::

    python tests/data/kafka4x/make_data.py

The bytes come from kseg's own encoder (``kseg.decoders.encode``, the wire format of Kafka's
generated ``write``) and test writer (``kseg.testing``): deterministic, no clock, no randomness.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for kseg

from kseg.decoders import schema
from kseg.decoders.encode import write
from kseg.decoders.wire import Writer
from kseg.testing.control import build_control_record_batch
from kseg.testing.segment import write_segment
from kseg.testing.v2 import RecordSpec, build_v2_batch

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
TS = 1780000000000  # 2026-05-28T20:26:40Z
UUID_A = bytes(range(1, 17))
UUID_B = bytes(range(17, 33))


def msg(_name: str, _version: int, **fields) -> bytes:
    """``_name`` at ``_version``: every field at its default, then ``fields``."""
    struct = schema.message(_name).struct
    value = struct.default_value() | fields
    return write(struct, value, _version)


def prefixed(version: int, body: bytes) -> bytes:
    return version.to_bytes(2, "big", signed=True) + body


def coordinator(record_type: int, key_name: str, key: dict, value_name: str | None, value_version: int = 0,
                **value) -> tuple[bytes, bytes | None]:
    k = prefixed(record_type, msg(key_name, record_type, **key))
    v = None if value_name is None else prefixed(value_version, msg(value_name, value_version, **value))
    return k, v


def offsets_records() -> list[tuple[bytes, bytes | None]]:
    g = {"groupId": "g1"}
    tpi = [{"topicId": UUID_A, "topicName": "t", "partitions": [0, 1]}]
    return [
        coordinator(1, "OffsetCommitKey", {"group": "g1", "topic": "t", "partition": 0}, "OffsetCommitValue", 4,
                    offset=42, leaderEpoch=3, metadata="m", commitTimestamp=TS, topicId=UUID_A),
        coordinator(0, "LegacyOffsetCommitKey", {"group": "g0", "topic": "t", "partition": 1}, "OffsetCommitValue",
                    1, offset=7, metadata="", commitTimestamp=TS, expireTimestamp=TS + 1000),
        coordinator(3, "ConsumerGroupMetadataKey", g, "ConsumerGroupMetadataValue", 0, epoch=5, metadataHash=99),
        coordinator(8, "ConsumerGroupCurrentMemberAssignmentKey", g | {"memberId": "m1"},
                    "ConsumerGroupCurrentMemberAssignmentValue", 0, memberEpoch=5, previousMemberEpoch=4,
                    state=0, assignedPartitions=[{"topicId": UUID_A, "partitions": [0, 1],
                                                  "assignmentEpochs": [5, 5]}]),
        coordinator(9, "ShareGroupPartitionMetadataKey@4.0", {"groupId": "s1"},
                    "ShareGroupPartitionMetadataValue@4.0", 0,
                    topics=[{"topicId": UUID_A, "topicName": "t", "numPartitions": 2}]),
        coordinator(11, "ShareGroupMetadataKey", {"groupId": "s1"}, "ShareGroupMetadataValue@4.0", 0, epoch=2),
        coordinator(11, "ShareGroupMetadataKey", {"groupId": "s2"}, "ShareGroupMetadataValue", 0, epoch=3,
                    metadataHash=-5),
        coordinator(12, "ShareGroupTargetAssignmentMetadataKey", {"groupId": "s2"},
                    "ShareGroupTargetAssignmentMetadataValue", 0, assignmentEpoch=3, assignmentTimestamp=TS),
        coordinator(15, "ShareGroupStatePartitionMetadataKey", {"groupId": "s1"},
                    "ShareGroupStatePartitionMetadataValue@4.0", 0, initializedTopics=tpi,
                    deletingTopics=[{"topicId": UUID_B, "topicName": "gone"}]),
        coordinator(15, "ShareGroupStatePartitionMetadataKey", {"groupId": "s2"},
                    "ShareGroupStatePartitionMetadataValue", 0, initializingTopics=tpi, initializedTopics=[],
                    deletingTopics=[]),
        coordinator(16, "ConsumerGroupRegularExpressionKey", g | {"regularExpression": "t.*"},
                    "ConsumerGroupRegularExpressionValue", 0, topics=["t", "tt"], version=7, timestamp=TS),
        coordinator(17, "StreamsGroupMetadataKey", {"groupId": "app"}, "StreamsGroupMetadataValue", 0, epoch=1,
                    metadataHash=11, validatedTopologyEpoch=1,
                    lastAssignmentConfigs=[{"key": "num.standby.replicas", "value": "0"}]),
        coordinator(19, "StreamsGroupMemberMetadataKey", {"groupId": "app", "memberId": "m1"},
                    "StreamsGroupMemberMetadataValue", 0, clientId="c", clientHost="/10.0.0.1",
                    processId="p1", rebalanceTimeoutMs=30000, topologyEpoch=1,
                    clientTags=[{"key": "rack", "value": "a"}]),
        coordinator(20, "StreamsGroupTargetAssignmentMetadataKey", {"groupId": "app"},
                    "StreamsGroupTargetAssignmentMetadataValue", 0, assignmentEpoch=1),
        coordinator(21, "StreamsGroupTargetAssignmentMemberKey", {"groupId": "app", "memberId": "m1"},
                    "StreamsGroupTargetAssignmentMemberValue", 0,
                    activeTasks=[{"subtopologyId": "0", "partitions": [0]}]),
        coordinator(22, "StreamsGroupCurrentMemberAssignmentKey", {"groupId": "app", "memberId": "m1"},
                    "StreamsGroupCurrentMemberAssignmentValue", 0, memberEpoch=1, previousMemberEpoch=0,
                    state=0, activeTasks=[{"subtopologyId": "0", "partitions": [0]}]),
        coordinator(23, "StreamsGroupTopologyKey", {"groupId": "app"}, "StreamsGroupTopologyValue", 0, epoch=1,
                    subtopologies=[{"subtopologyId": "0", "sourceTopics": ["in"], "repartitionSinkTopics": [],
                                    "stateChangelogTopics": [], "repartitionSourceTopics": [],
                                    "copartitionGroups": []}]),
        coordinator(3, "ConsumerGroupMetadataKey", g, "ConsumerGroupMetadataValue", 5, epoch=6),  # no v5
        coordinator(3, "ConsumerGroupMetadataKey", g, None),  # a tombstone
    ]


def share_records() -> list[tuple[bytes, bytes | None]]:
    key = {"groupId": "s1", "topicId": UUID_A, "partition": 0}
    batches = [{"firstOffset": 0, "lastOffset": 9, "deliveryState": 2, "deliveryCount": 1}]
    return [
        coordinator(0, "ShareSnapshotKey", key, "ShareSnapshotValue@4.0", 0, snapshotEpoch=1, stateEpoch=1,
                    leaderEpoch=2, startOffset=0, stateBatches=batches),
        coordinator(1, "ShareUpdateKey", key, "ShareUpdateValue@4.0", 0, snapshotEpoch=1, leaderEpoch=2,
                    startOffset=5, stateBatches=[]),
        coordinator(0, "ShareSnapshotKey", key, "ShareSnapshotValue", 0, snapshotEpoch=70000, stateEpoch=1,
                    leaderEpoch=2, startOffset=10, deliveryCompleteCount=4, createTimestamp=TS,
                    writeTimestamp=TS + 1, stateBatches=batches),
        coordinator(1, "ShareUpdateKey", key, "ShareUpdateValue", 0, snapshotEpoch=70000, leaderEpoch=2,
                    startOffset=12, stateBatches=batches),
    ]


def txn_records() -> list[tuple[bytes, bytes | None]]:
    key = {"transactionalId": "tx-1"}
    parts = [{"topic": "t", "partitionIds": [0]}]
    return [
        coordinator(0, "TransactionLogKey", key, "TransactionLogValue", 1, producerId=1000, producerEpoch=3,
                    nextProducerEpoch=4, nextProducerId=1001, transactionTimeoutMs=60000, transactionStatus=1,
                    transactionPartitions=parts, transactionLastUpdateTimestampMs=TS,
                    transactionStartTimestampMs=TS - 5, clientTransactionVersion=2),
        coordinator(0, "TransactionLogKey", key, "TransactionLogValue", 0, producerId=1000, producerEpoch=3,
                    transactionTimeoutMs=60000, transactionStatus=4, transactionPartitions=parts,
                    transactionLastUpdateTimestampMs=TS + 9, transactionStartTimestampMs=TS - 5),
        coordinator(0, "TransactionLogKey", {"transactionalId": "tx-2"}, None),
    ]


def frame(name: str, api_key: int, version: int, **fields) -> bytes:
    w = Writer()
    w.uvarint(1)
    w.uvarint(api_key)
    w.uvarint(version)
    return w.getvalue() + msg(name, version, **fields)


def metadata_values() -> list[bytes]:
    return [
        frame("ClearElrRecord", 28, 0, topicName="t"),
        frame("UnregisterControllerRecord", 29, 0, controllerId=3000),
        frame("RegisterBrokerRecord", 0, 4, brokerId=1, incarnationId=UUID_A, brokerEpoch=7, rack=None,
              logDirs=[UUID_B], cordonedLogDirs=[UUID_B]),
        frame("BrokerRegistrationChangeRecord", 17, 3, brokerId=1, brokerEpoch=7, fenced=0, inControlledShutdown=0,
              logDirs=[UUID_B], cordonedLogDirs=[]),
    ]


def remote_values() -> list[bytes]:
    seg = {"remoteLogSegmentId": {"topicIdPartition": {"id": UUID_A, "name": "t", "partition": 0}, "id": UUID_B},
           "startOffset": 0, "endOffset": 99, "brokerId": 1, "maxTimestampMs": TS, "eventTimestampMs": TS + 1,
           "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": 0}], "segmentSizeInBytes": 1024,
           "customMetadata": None, "remoteLogSegmentState": 1}
    out = []  # RemoteLogMetadataSerde's frame: frame version 1, apiKey 0, version 0
    for txn_empty in (True, False):
        f = Writer()
        f.uvarint(1)
        f.uvarint(0)
        f.uvarint(0)
        out.append(f.getvalue() + msg("RemoteLogSegmentMetadataRecord", 0, **seg, txnIndexEmpty=txn_empty))
    return out


def data_batch(pairs, base_offset: int = 0) -> bytes:
    return build_v2_batch([RecordSpec(k, v, TS + i) for i, (k, v) in enumerate(pairs)], base_offset=base_offset)


def main() -> None:
    if DATA.exists():
        shutil.rmtree(DATA)
    parts = {
        "__consumer_offsets-0": ([data_batch(offsets_records())], 0),
        "__share_group_state-0": ([data_batch(share_records())], 0),
        # base offset 100: Kafka 4.3/4.4's "-1 is followed by 100"
        "__transaction_state-0": ([data_batch(txn_records(), 100)], 100),
        "__remote_log_metadata-0": ([data_batch([(None, v) for v in remote_values()])], 0),
    }
    for name, (batches, base) in parts.items():
        (DATA / name).mkdir(parents=True)
        write_segment(DATA / name, [batches], base_offset=base)
    meta = DATA / "__cluster_metadata-0"
    meta.mkdir(parents=True)
    lc = msg("LeaderChangeMessage", 0, version=0, leaderId=1, voters=[{"voterId": 1}], grantingVoters=[{"voterId": 1}])
    write_segment(meta, [[build_control_record_batch(2, lc, timestamp=TS)],
                         [data_batch([(None, v) for v in metadata_values()], 1)]])
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
