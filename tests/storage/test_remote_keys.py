"""Object keys of Aiven's tiered-storage plugin and Kafka's LocalTieredStorage (kseg.storage.remote_keys)."""

from __future__ import annotations

import pytest

from kseg.storage import remote_keys
from kseg.storage.remote_keys import RemoteObjectKey, object_key, parse_key

TOPIC_ID = "MWJ6FHTfRYy67jzwZdeqSQ"
SEGMENT_ID = "tqimKeZwStOEOwRzT3L5oQ"


def test_aiven_example_from_object_key_factory() -> None:
    # The example of ObjectKeyFactory.key's Javadoc, byte for byte.
    key = "someprefix/topic-MWJ6FHTfRYy67jzwZdeqSQ/7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log"
    parsed = parse_key(key)
    assert parsed == RemoteObjectKey("aiven", "someprefix/", "topic", TOPIC_ID, 7, 1234, SEGMENT_ID, "log")
    assert parsed.key == key
    assert object_key("aiven", "someprefix/", "topic", TOPIC_ID, 7, 1234, SEGMENT_ID, "log") == key
    assert parsed.partition_prefix == "someprefix/topic-MWJ6FHTfRYy67jzwZdeqSQ/7/"
    assert parsed.segment_stem == key[: -len(".log")]
    assert parsed.with_suffix("rsm-manifest").key.endswith("-tqimKeZwStOEOwRzT3L5oQ.rsm-manifest")


def test_local_tiered_storage_names() -> None:
    # RemoteTopicPartitionDirectory: <topic>-<partition>-<topicId>; RemoteLogSegmentFileset: <offset>-<id><suffix>.
    key = f"/var/ts/my-topic-3-{TOPIC_ID}/251-{SEGMENT_ID}.leader_epoch_checkpoint"
    parsed = parse_key(key)
    assert parsed == RemoteObjectKey(
        "local", "/var/ts/", "my-topic", TOPIC_ID, 3, 251, SEGMENT_ID, "leader_epoch_checkpoint"
    )
    assert parsed.key == key
    assert object_key("local", "", "t", TOPIC_ID, 0, 0, SEGMENT_ID, "log") == f"t-0-{TOPIC_ID}/0-{SEGMENT_ID}.log"


@pytest.mark.parametrize("suffix", sorted(remote_keys.SUFFIXES["aiven"]))
def test_every_aiven_suffix_round_trips(suffix: str) -> None:
    key = object_key("aiven", "s3://bucket/tiered/", "a.b-c_d", TOPIC_ID, 0, 0, SEGMENT_ID, suffix)
    assert parse_key(key) == RemoteObjectKey(
        "aiven", "s3://bucket/tiered/", "a.b-c_d", TOPIC_ID, 0, 0, SEGMENT_ID, suffix
    )


@pytest.mark.parametrize("suffix", remote_keys.LOCAL_SUFFIXES)
def test_every_local_suffix_round_trips(suffix: str) -> None:
    key = object_key("local", "", "t-1", TOPIC_ID, 12, 9, SEGMENT_ID, suffix)
    assert parse_key(key) == RemoteObjectKey("local", "", "t-1", TOPIC_ID, 12, 9, SEGMENT_ID, suffix)


def test_topic_with_dashes_and_ids_with_dashes() -> None:
    topic_id, segment_id = "a-b_cdefghijklmnopqrst", "-bcdefghijklmnopqrstu_"
    for layout in ("aiven", "local"):
        key = object_key(layout, "p/", "x-1-y", topic_id, 2, 5, segment_id, "log")
        assert parse_key(key) == RemoteObjectKey(layout, "p/", "x-1-y", topic_id, 2, 5, segment_id, "log")


def test_layout_sets() -> None:
    assert remote_keys.AIVEN_SUFFIXES == ("log", "indexes", "rsm-manifest")
    legacy = "log index timeindex snapshot txnindex leader-epoch-checkpoint rsm-manifest"  # before 107d165
    assert set(remote_keys.AIVEN_LEGACY_SUFFIXES) == set(legacy.split())
    assert "leader_epoch_checkpoint" in remote_keys.LOCAL_SUFFIXES
    assert "leader-epoch-checkpoint" not in remote_keys.SUFFIXES["local"]
    assert remote_keys.OPTIONAL_SUFFIXES["local"] == {"txnindex"}


@pytest.mark.parametrize(
    "key",
    [
        f"t-{TOPIC_ID}/0/1234-{SEGMENT_ID}.log",  # Aiven pads the offset to 20 digits
        f"t-{TOPIC_ID}/0/00000000000000001234-{SEGMENT_ID}.leader_epoch_checkpoint",  # Kafka's suffix
        f"t-0-{TOPIC_ID}/0-{SEGMENT_ID}.indexes",  # Aiven's suffix in Kafka's layout
        f"t-{TOPIC_ID}/0/00000000000000001234-{SEGMENT_ID}.log.tmp",
        f"t-{TOPIC_ID}/2147483648/00000000000000001234-{SEGMENT_ID}.log",  # partition past int
        f"t-{TOPIC_ID}/0/99999999999999999999-{SEGMENT_ID}.log",  # offset past long
        f"t-{TOPIC_ID}/0/00000000000000001234-{SEGMENT_ID[:-1]}.log",  # 21-character id
        "00000000000000000000.log",
        "",
    ],
)
def test_other_keys_are_none(key: str) -> None:
    assert parse_key(key) is None


def test_bad_suffix_or_layout_is_refused() -> None:
    with pytest.raises(ValueError):
        object_key("aiven", "", "t", TOPIC_ID, 0, 0, SEGMENT_ID, "leader_epoch_checkpoint")
    with pytest.raises(ValueError):
        object_key("other", "", "t", TOPIC_ID, 0, 0, SEGMENT_ID, "log")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        parse_key(f"t-{TOPIC_ID}/0/00000000000000000000-{SEGMENT_ID}.log").with_suffix("leader_epoch_checkpoint")  # type: ignore[union-attr]


def test_custom_metadata_fields_give_the_key_the_plugin_reads() -> None:
    """``SegmentCustomMetadataField``: the plugin reads from ``object_prefix + object_key + "." + suffix``
    (``ObjectKeyFactory.key(fields, ...)``), each falling back to the configured prefix and the main path."""
    from kseg.format.rsm_custom import parse_custom_metadata
    from kseg.storage.remote_keys import custom_key, main_path
    from kseg.testing.remote_metadata import aiven_custom_metadata

    main = main_path("topic", TOPIC_ID, 7, 1234, SEGMENT_ID)
    assert main == f"topic-{TOPIC_ID}/7/00000000000000001234-{SEGMENT_ID}"
    default = RemoteObjectKey("aiven", "now-another/", "topic", TOPIC_ID, 7, 1234, SEGMENT_ID, "indexes")
    fields = parse_custom_metadata(aiven_custom_metadata(4096, "tiered-", main))
    key = custom_key(fields, default)
    assert key == f"tiered-{main}.indexes"
    assert custom_key(parse_custom_metadata(aiven_custom_metadata(remote_size=1)), default) == default.key
    assert custom_key(None, default) == default.key
    moved = parse_custom_metadata(aiven_custom_metadata(object_key="old/main"))
    assert custom_key(moved, default) == "now-another/old/main.indexes"
    # a prefix without "/" cannot be told from the topic by the key alone; given, it is split off first
    assert parse_key(key).topic == "tiered-topic"
    parsed = parse_key(key, prefix="tiered-")
    assert parsed == RemoteObjectKey("aiven", "tiered-", "topic", TOPIC_ID, 7, 1234, SEGMENT_ID, "indexes")
    assert parsed.key == key
    assert parse_key(key, prefix="other-") is None and parse_key("x/" + key, prefix="tiered-") is None
    assert parse_key(f"s3://b/k/{main}.log", prefix="s3://b/k/").topic == "topic"
