"""One cluster's metadata log, written for the tests with :mod:`tests.ops.metadata.build`, and its image
at each point, worked out by hand from Kafka's ``*Delta`` classes (docs/metadata.md).

======  ==========================================================================================
offset  records (batch by batch; epoch 1, times T0, T0+100, ... one step a batch)
======  ==========================================================================================
0       control: KRaftVersion 1
1-3     FeatureLevel metadata.version 21, group.version 1, kraft.version 1 (not a feature)
4-6     RegisterBroker 1 (v3, two listeners, rack r1, a log dir), RegisterBroker 2 (v1), RegisterController 3000
7-8     UnfenceBroker 1, UnfenceBroker 2
9-13    Topic orders, its partitions 0 [1,2] and 1 [2,1], ConfigRecord orders retention.ms, broker default
14-15   PartitionChange orders-0 ISR [1]; PartitionChange v2 orders-1 leader 1, ISR [1], ELR [2]
16-20   ClientQuota user alice, ACL, SCRAM alice, delegation token tok1, ProducerIds 5000
21-23   BeginTransaction, Topic aborted, its partition 0
24      AbortTransaction
25-27   BeginTransaction, Topic committed, its partition 0
28      EndTransaction
29-32   Topic temp, ConfigRecord temp, RemoveTopic temp, RemoveTopic orders
33      control: LeaderChange
34-38   FenceBroker 2, BrokerRegistrationChange 1 (in controlled shutdown), group.version 0, RemoveAcl,
        RemoveUserScramCredential alice
39      FenceBroker 9 (never registered: Kafka's delta refuses it)
======  ==========================================================================================
"""

from __future__ import annotations

import base64
from pathlib import Path

from tests.ops.metadata.build import LEADER_CHANGE, T0, Log, kraft_version_value, record, uuid, write_snapshot

SALT, STORED, SERVER = b"SALT-not-shown", b"STORED-KEY-not-shown", b"SERVER-KEY-not-shown"
LEADER_CHANGE_VALUE = bytes.fromhex("00000000000102000000010002000000010000")
ORDERS, ABORTED, COMMITTED, TEMP = uuid(1), uuid(2), uuid(3), uuid(4)
ACL_ID = uuid(301)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _endpoint(name: str, host: str, port: int, protocol: int) -> dict:
    return {"name": name, "host": host, "port": port, "securityProtocol": protocol}


BROKER_1 = dict(
    brokerId=1,
    incarnationId=uuid(101),
    brokerEpoch=10,
    endPoints=[_endpoint("SSL", "b1", 9093, 1), _endpoint("PLAINTEXT", "b1", 9092, 0)],
    rack="r1",
    fenced=True,
    logDirs=[uuid(201)],
)
BROKER_2 = dict(brokerId=2, incarnationId=uuid(102), brokerEpoch=20, endPoints=[], rack=None, fenced=True)
CONTROLLER = dict(
    controllerId=3000,
    incarnationId=uuid(103),
    endPoints=[_endpoint("CONTROLLER", "c1", 9094, 0)],
    features=[{"name": "kraft.version", "minSupportedVersion": 0, "maxSupportedVersion": 1}],
)
PARTITION_0 = dict(
    partitionId=0, topicId=ORDERS, replicas=[1, 2], isr=[1, 2], leader=1, leaderEpoch=0, partitionEpoch=0
)
PARTITION_1 = dict(
    partitionId=1, topicId=ORDERS, replicas=[2, 1], isr=[2, 1], leader=2, leaderEpoch=0, partitionEpoch=0
)
SECURITY = [
    record(
        "ClientQuotaRecord",
        entity=[{"entityType": "user", "entityName": "alice"}],
        key="producer_byte_rate",
        value=1024.0,
    ),
    record(
        "AccessControlEntryRecord",
        id=ACL_ID,
        resourceType=2,
        resourceName="orders",
        patternType=3,
        principal="User:alice",
        host="*",
        operation=3,
        permissionType=3,
    ),
    record(
        "UserScramCredentialRecord",
        name="alice",
        mechanism=1,
        salt=SALT,
        storedKey=STORED,
        serverKey=SERVER,
        iterations=8192,
    ),
    record(
        "DelegationTokenRecord",
        owner="User:alice",
        requester="User:alice",
        renewers=["User:bob"],
        issueTimestamp=1,
        maxTimestamp=3,
        expirationTimestamp=2,
        tokenId="tok1",
    ),
    record("ProducerIdsRecord", brokerId=1, brokerEpoch=10, nextProducerId=5000),
]


def log() -> Log:
    lg = Log()
    lg.control(5, kraft_version_value(1))
    lg.batch(
        record("FeatureLevelRecord", name="metadata.version", featureLevel=21),
        record("FeatureLevelRecord", name="group.version", featureLevel=1),
        record("FeatureLevelRecord", name="kraft.version", featureLevel=1),
    )
    lg.batch(
        record("RegisterBrokerRecord", 3, **BROKER_1),
        record("RegisterBrokerRecord", 1, **BROKER_2),
        record("RegisterControllerRecord", **CONTROLLER),
    )
    lg.batch(record("UnfenceBrokerRecord", id=1, epoch=10), record("UnfenceBrokerRecord", id=2, epoch=20))
    lg.batch(
        record("TopicRecord", name="orders", topicId=ORDERS),
        record("PartitionRecord", **PARTITION_0),
        record("PartitionRecord", **PARTITION_1),
        record("ConfigRecord", resourceType=2, resourceName="orders", name="retention.ms", value="1000"),
        record("ConfigRecord", resourceType=4, resourceName="", name="log.retention.ms", value="5000"),
    )
    lg.batch(
        record("PartitionChangeRecord", partitionId=0, topicId=ORDERS, isr=[1]),
        record(
            "PartitionChangeRecord",
            2,
            partitionId=1,
            topicId=ORDERS,
            leader=1,
            isr=[1],
            eligibleLeaderReplicas=[2],
            lastKnownElr=[],
        ),
    )
    lg.batch(*SECURITY)
    lg.batch(
        record("BeginTransactionRecord", name="create aborted"),
        record("TopicRecord", name="aborted", topicId=ABORTED),
        record(
            "PartitionRecord",
            partitionId=0,
            topicId=ABORTED,
            replicas=[1],
            isr=[1],
            leader=1,
            leaderEpoch=0,
            partitionEpoch=0,
        ),
    )
    lg.batch(record("AbortTransactionRecord", reason="controller failover"))
    lg.batch(
        record("BeginTransactionRecord", name="create committed"),
        record("TopicRecord", name="committed", topicId=COMMITTED),
        record(
            "PartitionRecord",
            partitionId=0,
            topicId=COMMITTED,
            replicas=[2],
            isr=[2],
            leader=2,
            leaderEpoch=0,
            partitionEpoch=0,
        ),
    )
    lg.batch(record("EndTransactionRecord"))
    lg.batch(
        record("TopicRecord", name="temp", topicId=TEMP),
        record("ConfigRecord", resourceType=2, resourceName="temp", name="cleanup.policy", value="compact"),
        record("RemoveTopicRecord", topicId=TEMP),
        record("RemoveTopicRecord", topicId=ORDERS),
    )
    lg.control(LEADER_CHANGE, LEADER_CHANGE_VALUE)
    lg.batch(
        record("FenceBrokerRecord", id=2, epoch=20),
        record("BrokerRegistrationChangeRecord", 1, brokerId=1, brokerEpoch=10, fenced=0, inControlledShutdown=1),
        record("FeatureLevelRecord", name="group.version", featureLevel=0),
        record("RemoveAccessControlEntryRecord", id=ACL_ID),
        record("RemoveUserScramCredentialRecord", name="alice", mechanism=1),
    )
    lg.batch(record("FenceBrokerRecord", id=9, epoch=1))
    return lg


def time_of(offset: int) -> int:
    """The append time of the batch holding ``offset``."""
    lg = log()
    step = max(i for i, (base, _) in enumerate(lg.batches) if base <= offset)
    return T0 + 100 * step


#: the image as of offset 20 (before the transactions), in the records a snapshot of it holds -- but broker 2
#: with rack "from-snapshot", which the log never says: an image holding it started from the snapshot
SNAPSHOT_20 = [
    record("FeatureLevelRecord", name="metadata.version", featureLevel=21),
    record("FeatureLevelRecord", name="group.version", featureLevel=1),
    record("RegisterBrokerRecord", 3, **{**BROKER_1, "fenced": False}),
    record("RegisterBrokerRecord", 1, **{**BROKER_2, "fenced": False, "rack": "from-snapshot"}),
    record("RegisterControllerRecord", **CONTROLLER),
    record("TopicRecord", name="orders", topicId=ORDERS),
    record("PartitionRecord", **{**PARTITION_0, "isr": [1], "partitionEpoch": 1}),
    record(
        "PartitionRecord",
        2,
        **{
            **PARTITION_1,
            "leader": 1,
            "isr": [1],
            "leaderEpoch": 1,
            "partitionEpoch": 1,
            "eligibleLeaderReplicas": [2],
        },
    ),
    record("ConfigRecord", resourceType=2, resourceName="orders", name="retention.ms", value="1000"),
    record("ConfigRecord", resourceType=4, resourceName="", name="log.retention.ms", value="5000"),
    *SECURITY,
]


def write(directory: Path, snapshot: bool = False, log_from: int = 0, rolls: tuple[int, ...] = (21,)) -> Path:
    """``directory/__cluster_metadata-0``: the log (from ``log_from``), segments rolled at ``rolls``, and with
    ``snapshot`` the snapshot ``00000000000000000021-0000000001.checkpoint``."""
    part = directory / "__cluster_metadata-0"
    log().write(part, rolls=rolls, start=log_from)
    if snapshot:
        write_snapshot(part, 21, 1, SNAPSHOT_20, time_of(20))
    return part
