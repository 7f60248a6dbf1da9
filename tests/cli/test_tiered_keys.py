"""``--rsm-key`` on every reading command (diff, compaction, logdir beside the others), checked up front;
``txn`` starting from a tiered segment's producer snapshot as from the local copy's (``kseg.testing.aiven``
segments, encrypted and not, against the corpus partitions they were copied from)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_tiered_aiven import LOCAL, Trees, partition_dir
from tests.conftest import assert_no_traceback, run_cli

pytest.importorskip("cryptography", reason="encrypted segments are read with cryptography (the test extra)")

TXN = str(partition_dir(Path(""), "txn-v2-0"))


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Trees:
    return Trees(tmp_path_factory.mktemp("aiven-keys"))


def key(trees: Trees) -> list[str]:
    return ["--rsm-key", f"kp-2024={trees.key_file}"]


@pytest.mark.parametrize("variant", ["encrypted", "zstd+encrypted"])
def test_diff_of_a_local_and_an_encrypted_tiered_replica(trees: Trees, variant: str) -> None:
    local, tiered = str(trees.base / LOCAL / TXN), str(trees.base / variant / TXN)
    r = run_cli(["diff", *key(trees), local, tiered])
    assert_no_traceback(r)
    assert r.exit_code == 0 and "2 replicas, identical" in r.text, (r.text, r.errtext)
    without = run_cli(["diff", local, tiered])
    assert without.exit_code != 0 and "identical" not in without.text.split("\n")[0]
    assert "give its private key with --rsm-key kp-2024=FILE" in without.text + without.errtext


def test_compaction_of_an_encrypted_tiered_partition(trees: Trees) -> None:
    trees.same("encrypted", ["compaction", "--at", "1730000000000", "{}/" + TXN])
    r = run_cli(["compaction", "--at", "1730000000000", str(trees.base / "encrypted" / TXN)])
    assert r.exit_code != 0 and "--rsm-key kp-2024=FILE" in r.text + r.errtext


def test_logdir_takes_the_key(trees: Trees) -> None:
    """A tiered prefix is no log directory (logdir says so); the option is accepted and checked."""
    r = run_cli(["logdir", *key(trees), str(trees.base / "encrypted")])
    assert_no_traceback(r)
    assert r.exit_code == 1 and "not <topic>-<partition>, Kafka refuses to start" in r.text


@pytest.mark.parametrize("command", ["diff", "compaction", "logdir", "dump"])
def test_an_unreadable_key_file_is_exit_2_before_anything_is_read(trees: Trees, command: str) -> None:
    missing = trees.base / "no-such.pem"
    r = run_cli([command, "--rsm-key", f"kp-2024={missing}", str(trees.base / "encrypted" / TXN)])
    assert_no_traceback(r)
    assert r.exit_code == 2
    assert f"{missing}: cannot read the private key of --rsm-key kp-2024: No such file or directory" in r.errtext


def same_but_snapshot(trees: Trees, variant: str, args: list[str]) -> str:
    """:meth:`Trees.same`, with the local copy's ``<log end>.snapshot`` named as the tiered copy names the
    same state: by the last segment's start."""
    local = trees.base / LOCAL / TXN
    last_log = sorted(p.stem for p in local.glob("*.log"))[-1]
    last_snapshot = sorted(p.stem for p in local.glob("*.snapshot"))[-1]
    plain = run_cli([a.format(trees.base / LOCAL) for a in args])
    tiered = run_cli([args[0], *key(trees), *(a.format(trees.base / variant) for a in args[1:])])
    assert_no_traceback(tiered)
    assert plain.exit_code == tiered.exit_code == 0, tiered.errtext
    assert trees.plain_text(tiered.text, variant) == plain.text.replace(
        f"{last_snapshot}.snapshot", f"{last_log}.snapshot"
    )
    return tiered.text


@pytest.mark.parametrize("variant", ["plain", "zstd+encrypted", "per-index-objects"])
def test_txn_starts_from_the_tiered_segments_producer_snapshot(trees: Trees, variant: str) -> None:
    """The snapshot in the last segment's ``.indexes`` (or its own object) holds the state at the log end:
    the output is the local copy's, but the snapshot's name (Kafka's ``<log end>.snapshot``)."""
    tiered = same_but_snapshot(trees, variant, ["txn", "{}/" + TXN])
    assert "producer state from snapshot" in tiered and "(offset 52)" in tiered
    rows = same_but_snapshot(trees, variant, ["txn", "--format", "json", "{}/" + TXN]).splitlines()
    assert json.loads(rows[-1])["problems"] == 0


def test_objects_under_a_custom_metadata_prefix_read_as_the_local_copy(trees: Trees, tmp_path: Path) -> None:
    """A segment uploaded under ``object_prefix`` ``tiered-`` (no ``/``: Aiven prepends it as is) and
    ``object_key``, its keys built by :class:`~kseg.storage.remote_keys.CustomMetadata` as the plugin's fetch
    path builds them: every reading command reads it (the topic's directory is ``tiered-txn-v2-<id>``); ``diff``
    takes the tiered replica's leader epochs from its last segment's checkpoint (in ``.indexes``)."""
    from kseg.format.rsm_custom import parse_custom_metadata
    from kseg.storage.remote_keys import RemoteObjectKey, custom_key, main_path
    from kseg.testing.aiven import write_aiven_segment
    from kseg.testing.remote_metadata import aiven_custom_metadata
    from tests.cli.test_tiered_aiven import TOPIC_ID, segment_id

    local = trees.base / LOCAL / TXN
    logs = sorted(local.glob("*.log"))
    snapshots = sorted(local.glob("*.snapshot"))
    for i, log in enumerate(logs):
        base, seg = int(log.stem), segment_id("txn-v2-0", int(log.stem))
        fields = parse_custom_metadata(aiven_custom_metadata(1, "tiered-", main_path("txn-v2", TOPIC_ID, 0, base, seg)))
        end = int(logs[i + 1].stem) if i + 1 < len(logs) else int(snapshots[-1].stem)
        write_aiven_segment(
            tmp_path,
            log,
            lambda suffix, base=base, seg=seg, fields=fields: custom_key(
                fields, RemoteObjectKey("aiven", "", "txn-v2", TOPIC_ID, 0, base, seg, suffix)
            ),
            topic="txn-v2",
            topic_id=TOPIC_ID,
            partition=0,
            segment_id=seg,
            end_offset=end - 1,
            chunk_size=1024,
            compression=True,
            producer_snapshot=local / f"{end:020d}.snapshot" if (local / f"{end:020d}.snapshot").exists() else None,
            leader_epochs=b"0\n1\n0 0\n" if i == len(logs) - 1 else b"0\n0\n",  # the last segment's has the epochs
        )
    where = tmp_path / f"tiered-txn-v2-{TOPIC_ID}" / "0"
    assert sorted(p.name for p in where.iterdir())[0].startswith("00000000000000000000-")
    for args in (
        ["verify-index"],
        ["lookup-offset", "40"],
        ["txn", "--from-start"],
        ["compaction", "--at", "1730000000000"],
    ):
        plain, tiered = run_cli([*args, str(local)]), run_cli([*args, str(where)])
        assert_no_traceback(tiered)
        assert tiered.exit_code == plain.exit_code == 0, tiered.errtext
        text = trees.plain_text(tiered.text.replace(str(where), str(local)), "encrypted")
        assert text == plain.text

    # the prefix without a '/' makes the topic's directory tiered-txn-v2-<id>: another name, the same partition
    diff = run_cli(["diff", "--any-names", "--format", "json", str(local), str(where)])
    assert diff.exit_code == 0, diff.text
    replicas = [json.loads(line) for line in diff.text.splitlines() if '"type":"replica"' in line]
    assert [r["leaderEpochs"] for r in replicas] == [None, [{"epoch": 0, "startOffset": 0}]]
    assert json.loads(diff.text.splitlines()[-1])["status"] == "identical"


def test_a_bad_last_chunk_leaves_the_lookups_that_need_good_chunks_answering(trees: Trees, tmp_path: Path) -> None:
    """The log end comes from the last batch; with the chunk holding it unreadable, a lookup whose chunks are
    good still answers (the local copy's answer), the unreadable tail is named, and an offset past where
    reading stopped is not known -- never "past the log end"."""
    from kseg.format.rsm_manifest import parse_manifest
    from tests.cli.test_tiered_aiven import _one_segment

    where, _ = _one_segment(tmp_path, trees.key_pair)
    last = sorted(where.glob("*.log"))[-1]
    index = parse_manifest(last.with_suffix(".rsm-manifest").read_bytes()).chunk_index
    n = index.chunk_for(index.original_file_size - 1)
    data = bytearray(last.read_bytes())
    data[index.chunk(n).transformed_position + 20] ^= 0x01
    last.write_bytes(bytes(data))
    local = partition_dir(trees.base / LOCAL, "plain-v2-0")
    for target in ("100", "300"):
        plain = run_cli(["lookup-offset", target, str(local)])
        tiered = run_cli(["lookup-offset", *key(trees), target, str(where)])
        assert_no_traceback(tiered)
        assert plain.exit_code == tiered.exit_code == 0, tiered.errtext
        shown = ("Found:", "|", "baseOffset")
        found = [line for line in trees.plain_text(tiered.text, "plain").splitlines() if line.startswith(shown)]
        assert found and found == [line for line in plain.text.splitlines() if line.startswith(shown)]
        assert f"chunk {n}: GCM tag mismatch" in tiered.errtext and "the log end is taken before it" in tiered.errtext
        assert "the index is damaged" not in tiered.errtext
    past = run_cli(["lookup-offset", *key(trees), "415", str(where)])
    assert past.exit_code == 1
    assert f"offset 415 is not known: {last}: at byte {n * 1024}: chunk {n}: GCM tag mismatch" in past.errtext
    assert "offsets from 410 on were not read" in past.errtext and "past the log end" not in past.errtext
