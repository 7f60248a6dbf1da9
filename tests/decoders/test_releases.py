"""What the topic decoders print per Kafka release (``kseg.format.releases``), one fact a test."""

from __future__ import annotations

import pytest

from kseg.decoders import parser_for, schema
from kseg.decoders.base import UncaughtJavaException
from kseg.decoders.control import control_record_text
from kseg.decoders.coordinator import choose_layout
from kseg.decoders.encode import version_prefixed, write
from kseg.format import releases
from kseg.format.releases import K39, K40, K41, K42, K43, K44

TPI = [{"topicId": bytes(range(16)), "topicName": "t", "partitions": [0, 1]}]
LAYOUTS = {  # message -> (4.0 layout value, 4.1+ layout value)
    "ShareGroupMetadataValue": ({"epoch": 2}, {"epoch": 3, "metadataHash": 7}),
    "ShareGroupStatePartitionMetadataValue": (
        {"initializedTopics": TPI, "deletingTopics": [{"topicId": bytes(16), "topicName": "x"}]},
        {"initializingTopics": TPI, "initializedTopics": [], "deletingTopics": []},
    ),
    "ShareSnapshotValue": (
        {"snapshotEpoch": 1, "stateEpoch": 1, "leaderEpoch": 2, "startOffset": 0, "stateBatches": []},
        {
            "snapshotEpoch": 70000,
            "stateEpoch": 1,
            "leaderEpoch": 2,
            "startOffset": 0,
            "createTimestamp": 5,
            "writeTimestamp": 6,
            "stateBatches": [],
        },
    ),
    "ShareUpdateValue": (
        {"snapshotEpoch": 1, "leaderEpoch": 2, "startOffset": 0, "stateBatches": []},
        {"snapshotEpoch": 70000, "leaderEpoch": 2, "startOffset": 0, "stateBatches": []},
    ),
}


def _bytes(name: str, value: dict) -> bytes:
    struct = schema.message(name).struct
    return write(struct, struct.default_value() | value, 0)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_a_layout_changed_without_a_version_bump_is_chosen_by_the_bytes(name: str) -> None:
    old, new = LAYOUTS[name]
    assert choose_layout(name, _bytes(name + "@4.0", old), 0, 0) == name + "@4.0"
    assert choose_layout(name, _bytes(name, new), 0, 0) == name
    assert choose_layout(name, b"\x00", 0, 0) == name  # neither reads it: the current layout's error
    assert choose_layout("ConsumerGroupMetadataValue", b"", 0, 0) == "ConsumerGroupMetadataValue"


def _offsets(
    release, record_type: int, key_name: str, key: dict, value_name: str, value: dict, version: int = 0
) -> tuple:
    k = version_prefixed(schema.message(key_name).struct, key, record_type)
    v = version_prefixed(
        schema.message(value_name).struct, schema.message(value_name).struct.default_value() | value, version
    )
    return parser_for("offsets", release).parse(3, k, v)


def test_type_9_only_in_40() -> None:
    args = (9, "ShareGroupPartitionMetadataKey@4.0", {"groupId": "s"}, "ShareGroupPartitionMetadataValue@4.0", {})
    assert _offsets(K40, *args) == ('{"type":"9","data":{"groupId":"s"}}', '{"version":"0","data":{"topics":[]}}')
    for release in (K39, K41, K44):
        assert _offsets(release, *args) == ("Unknown record type 9 at offset 3, skipping.", None)


def test_streams_groups_from_41() -> None:
    args = (
        20,
        "StreamsGroupTargetAssignmentMetadataKey",
        {"groupId": "a"},
        "StreamsGroupTargetAssignmentMetadataValue",
        {"assignmentEpoch": 4, "assignmentTimestamp": 9},
    )
    assert _offsets(K40, *args)[0] == "Unknown record type 20 at offset 3, skipping."
    assert _offsets(K42, *args)[1] == '{"version":"0","data":{"assignmentEpoch":4}}'  # tag of 4.3
    assert _offsets(K43, *args)[1] == '{"version":"0","data":{"assignmentEpoch":4,"assignmentTimestamp":9}}'


def test_value_version_check_from_40() -> None:
    args = (3, "ConsumerGroupMetadataKey", {"groupId": "g"}, "ConsumerGroupMetadataValue", {"epoch": 1}, 2)
    assert _offsets(K39, *args)[1] == '{"version":"2","data":{"epoch":1}}'
    assert _offsets(K40, *args) == ("Error at offset 3, skipping. Found an unknown record version 2 for 3 type", None)


def test_type_0_is_legacy_offset_commit_from_41() -> None:
    args = (
        0,
        "OffsetCommitKey",
        {"group": "g", "topic": "t", "partition": 0},
        "OffsetCommitValue",
        {"offset": 1, "commitTimestamp": 2, "expireTimestamp": 3},
        1,
    )
    assert _offsets(K40, *args)[1] == (
        '{"version":"1","data":{"offset":1,"metadata":"","commitTimestamp":2,"expireTimestamp":3}}'
    )
    assert _offsets(K41, *args) == ("Error at offset 3, skipping. Found an unknown record version 1 for 0 type", None)


@pytest.mark.parametrize("release,topic", [(K39, "offset topic"), (K40, "offset topic"), (K41, "the specified")])
def test_a_record_without_a_key(release, topic: str) -> None:
    with pytest.raises(UncaughtJavaException) as info:
        parser_for("offsets", release).parse(0, None, None)
    assert f"using {topic} decoder" in info.value.java_message


def _txn(release, status: int) -> str | None:
    key = version_prefixed(schema.message("TransactionLogKey").struct, {"transactionalId": "x"}, 0)
    vs = schema.message("TransactionLogValue").struct
    value = vs.default_value() | {
        "producerId": 5,
        "producerEpoch": 1,
        "transactionTimeoutMs": 9,
        "transactionStatus": status,
        "transactionPartitions": [],
        "nextProducerEpoch": 2,
    }
    return parser_for("transaction-log", release).parse(0, key, version_prefixed(vs, value, 1))[1]


def test_transaction_log_text_json_and_state_names() -> None:
    assert _txn(K40, 0).startswith("producerId:5,producerEpoch:1,state=Empty,partitions=[]")
    assert '"transactionStatus":0,' in _txn(K41, 0) and '"nextProducerEpoch":2' in _txn(K41, 0)
    assert '"transactionStatus":"Empty",' in _txn(K44, 0)
    assert '"transactionStatus":"PrepareEpochFence",' in _txn(K44, 7)
    assert '"transactionStatus":"9",' in _txn(K44, 9)  # an unknown id: its number, as a string


def test_leader_change_json_from_41() -> None:
    lc = write(
        schema.message("LeaderChangeMessage").struct,
        {"version": 0, "leaderId": 1, "voters": [], "grantingVoters": []},
        0,
    )
    assert control_record_text(2, b"\x00\x00\x00\x02", lc) is None
    assert control_record_text(2, b"\x00\x00\x00\x02", lc, leader_change=True) == (
        ' LeaderChange: {"version":0,"leaderId":1,"voters":[],"grantingVoters":[]}'
    )


def test_metadata_types_per_release() -> None:
    value = b"\x01\x1d\x00" + write(schema.message("UnregisterControllerRecord").struct, {"controllerId": 3}, 0)
    assert parser_for("cluster-metadata", K44).parse(0, None, value)[1] == (
        '{"type":"UNREGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3}}'
    )
    assert parser_for("cluster-metadata", K43).parse(0, None, value)[1] == (
        "Error at 0, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 29"
    )


def test_every_release_has_a_parser_for_every_decoder() -> None:
    from kseg.decoders import PARSERS

    for release in releases.RELEASES:
        for name in PARSERS:
            assert parser_for(name, release).release is release
