"""``kseg.format.releases``: the Kafka release lines ``dump --kafka-version`` names."""

from __future__ import annotations

import pytest

from kseg.format import releases


def test_lines_and_default() -> None:
    assert releases.LINES == ("3.9", "4.0", "4.1", "4.2", "4.3", "4.4")
    assert releases.LATEST is releases.K44 and releases.supported_range() == "3.9-4.4"
    assert releases.release(None) is releases.LATEST and releases.release("  ") is releases.LATEST


@pytest.mark.parametrize("text,name", [("3.9", "3.9"), ("4.0", "4.0"), ("4.1", "4.1"), ("4.2.1", "4.2"),
                                       ("04.3", "4.3"), ("4.4.0", "4.4")])
def test_release_of_a_version(text: str, name: str) -> None:
    assert releases.release(text).name == name


@pytest.mark.parametrize("text", ["2.8", "3.0", "3.8", "4.5", "5.0", "4", "4.x", "4.4.0.1", "v4.4"])
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
    k39, k40, k41, k42, k43, k44 = releases.RELEASES
    assert max(k39.group_types) == 8 and not k39.share_decoder and not k39.value_version_check
    assert max(k40.group_types) == 16 and 9 in k40.group_types and k40.value_version_check
    assert k40.share_value_label == "type" and k40.remote_txn_idx_empty and not k40.txn_log_json
    assert 9 not in k41.group_types and 18 not in k41.group_types and max(k41.group_types) == 23
    assert k41.txn_log_json and k41.leader_change_json and k41.generic_missing_key
    assert k41.share_value_label == k42.share_value_label == "version"
    assert not k42.java_tool and k43.java_tool and not k43.txn_status_name
    assert k44.txn_status_name and k44.txn_index_highest_version
    assert [r.metadata_max_api_key for r in releases.RELEASES] == [27, 28, 28, 28, 28, 29]
