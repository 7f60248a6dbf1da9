"""``kseg.format.releases``: the Kafka release lines ``dump --kafka-version`` names."""

from __future__ import annotations

import pytest

from kseg.format import releases


def test_lines_and_default() -> None:
    assert releases.LINES == (
        "2.8",
        "3.0",
        "3.1",
        "3.2",
        "3.3",
        "3.4",
        "3.5",
        "3.6",
        "3.7",
        "3.8",
        "3.9",
        "4.0",
        "4.1",
        "4.2",
        "4.3",
        "4.4",
    )
    assert releases.LATEST is releases.K44 and releases.supported_range() == "2.8-4.4"
    assert releases.release(None) is releases.LATEST and releases.release("  ") is releases.LATEST


@pytest.mark.parametrize(
    "text,name",
    [
        ("2.8", "2.8"),
        ("2.8.2", "2.8"),
        ("3.0", "3.0"),
        ("3.1.2", "3.1"),
        ("3.2", "3.2"),
        ("3.3", "3.3"),
        ("3.4.1", "3.4"),
        ("3.5", "3.5"),
        ("3.6.2", "3.6"),
        ("3.7", "3.7"),
        ("3.7.2", "3.7"),
        ("3.8", "3.8"),
        ("3.8.1", "3.8"),
        ("3.9", "3.9"),
        ("4.0", "4.0"),
        ("4.1", "4.1"),
        ("4.2.1", "4.2"),
        ("04.3", "4.3"),
        ("4.4.0", "4.4"),
    ],
)
def test_release_of_a_version(text: str, name: str) -> None:
    assert releases.release(text).name == name


@pytest.mark.parametrize("text", ["2.7", "2.9", "4.5", "5.0", "4", "4.x", "4.4.0.1", "v4.4"])
def test_what_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        releases.release(text)


def test_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(releases.ENV, "4.1")
    assert releases.from_env() is releases.K41
    assert releases.from_env("4.3") is releases.K43  # the flag wins
    monkeypatch.delenv(releases.ENV)
    assert releases.from_env() is releases.LATEST


def test_knows_orders_release_lines() -> None:
    assert releases.K42.knows("4.2") and releases.K42.knows("4.1") and not releases.K42.knows("4.3")
    assert releases.K39.knows("3.9") and not releases.K39.knows("4.0")
    assert releases.K44.knows("current") and not releases.K43.knows("current")


def test_what_each_release_changed() -> None:
    """The facts of the module docstring, one release at a time (docs/dump.md's table)."""
    k28, k30, k31, k32, k33, k34, k35, k36, k37, k38, k39, k40, k41, k42, k43, k44 = releases.RELEASES
    newer = releases.RELEASES[8:]  # 3.7 on
    # 3.3-3.6: 3.7's but Scala's Option in 3.3/3.4 and each release's own KRaft table
    assert k33.lines == ("3.3",) and k34.lines == ("3.4",) and k35.lines == ("3.5",) and k36.lines == ("3.6",)
    assert k33.scala_txn_first_offset and k34.scala_txn_first_offset and not k35.scala_txn_first_offset
    assert k33.cluster_metadata_decoder and k33.kraft_table == "3.3"
    assert k34.cluster_metadata_decoder and k34.kraft_table == "3.4"
    assert k35.cluster_metadata_decoder and k35.kraft_table == "3.5"
    assert k36.cluster_metadata_decoder and k36.kraft_table == "3.6"
    assert all(r.cluster_metadata_decoder and r.kraft_table == r.name for r in (k30, k31, k32))
    assert not any(r.kraft_table for r in releases.RELEASES if r not in (k30, k31, k32, k33, k34, k35, k36))
    assert not k28.cluster_metadata_decoder
    for r in (k33, k34, k35, k36):
        assert [
            s
            for s in r.__slots__
            if s
            not in (
                "name",
                "lines",
                "metadata_max_api_key",
                "cluster_metadata_decoder",
                "scala_txn_first_offset",
                "kraft_table",
            )
            and getattr(r, s) != getattr(k37, s)
        ] == []
    # 2.8: 3.0's tool but for its record line, codec names, control types and coordinator classes
    assert k28.record_line_28 and k28.coordinator_28
    assert not any(r.record_line_28 or r.coordinator_28 for r in releases.RELEASES[1:])
    assert [
        s
        for s in k28.__slots__
        if s
        not in (
            "name",
            "lines",
            "metadata_max_api_key",
            "record_line_28",
            "coordinator_28",
            "cluster_metadata_decoder",
            "kraft_table",
        )
        and getattr(k28, s) != getattr(k30, s)
    ] == []
    # 3.0-3.2: 3.7's decoders and record lines; the tool lines 3.3 changed, and two older ones
    tool_33 = ("log_start_label", "snapshot_files", "max_bytes_option", "cluster_metadata_decoder", "kraft_table")
    assert all(r.legacy_offsets_text and not r.tools_api_decoders for r in (k28, k30, k31, k32))
    assert all(
        r.log_start_label == "Starting offset: "
        and not r.snapshot_files
        and not r.max_bytes_option
        and r.scala_txn_first_offset
        for r in (k28, k30, k31, k32)
    )
    assert all(
        r.log_start_label == "Log starting offset: "
        and r.snapshot_files
        and r.max_bytes_option
        and r.cluster_metadata_decoder
        and not r.scala_txn_first_offset
        for r in newer
    )
    assert (k30.delete_horizon, k31.delete_horizon, k32.delete_horizon) == (False, False, True)
    assert (k30.producer_last_timestamp, k31.producer_last_timestamp) == (False, True)
    assert [
        s
        for s in k32.__slots__
        if s not in ("name", "lines", "metadata_max_api_key", "scala_txn_first_offset", *tool_33)
        and getattr(k32, s) != getattr(k37, s)
    ] == []
    # 3.7: 3.8's tool but for the offsets decoder, control types 5/6, decoder classes, lastKnownELR
    assert k37.legacy_offsets_text and not k37.kraft_control_records and not k37.tools_api_decoders
    assert k37.metadata_renames["PartitionRecord"] == {"lastKnownElr": "lastKnownELR"}
    assert not any(r.legacy_offsets_text or r.metadata_renames for r in newer[1:])
    assert all(r.kraft_control_records and r.tools_api_decoders for r in newer[1:])
    assert not k37.deprecated_serializer_notice and not k37.remote_decoder
    before_38 = ("legacy_offsets_text", "kraft_control_records", "tools_api_decoders", "metadata_renames")
    assert [
        s
        for s in k37.__slots__
        if s not in ("name", "lines", "deprecated_serializer_notice", *before_38) and getattr(k37, s) != getattr(k38, s)
    ] == []
    # 3.8: 3.9's tool without --remote-log-metadata-decoder (KAFKA-16228), the same decoders
    assert not k38.remote_decoder and all(r.remote_decoder for r in newer[2:])
    assert k38.group_types == k39.group_types and k38.metadata_max_api_key == k39.metadata_max_api_key
    assert k38.deprecated_serializer_notice and k39.deprecated_serializer_notice
    assert not any(r.deprecated_serializer_notice for r in newer[3:])
    assert [
        s for s in k38.__slots__ if s not in ("name", "lines", "remote_decoder") and getattr(k38, s) != getattr(k39, s)
    ] == []
    assert max(k39.group_types) == 8 and not k39.share_decoder and not k39.value_version_check
    assert max(k40.group_types) == 16 and 9 in k40.group_types and k40.value_version_check
    assert k40.share_value_label == "type" and k40.remote_txn_idx_empty and not k40.txn_log_json
    assert 9 not in k41.group_types and 18 not in k41.group_types and max(k41.group_types) == 23
    assert k41.txn_log_json and k41.leader_change_json and k41.generic_missing_key
    assert k41.share_value_label == k42.share_value_label == "version"
    assert not k42.java_tool and k43.java_tool and not k43.txn_status_name
    assert k44.txn_status_name and k44.txn_index_highest_version
    assert [r.metadata_max_api_key for r in releases.RELEASES] == [
        14,
        17,
        17,
        19,
        20,
        21,
        22,
        26,
        27,
        27,
        27,
        28,
        28,
        28,
        28,
        29,
    ]
