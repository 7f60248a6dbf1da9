"""``kseg export --one-replica``: one copy per topic-partition, chosen by ``kseg diff``'s reading of the
replicas (the most complete undamaged one; after an unclean election, the leader), and said."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.storage.forensics_data import EPOCHS_SHARED, replica_logs, write_replica

pq = pytest.importorskip("pyarrow.parquet", reason="export writes Parquet with pyarrow (the test extra)")

NEW_LEADER_EPOCHS = "0\n3\n0 0\n1 50\n2 100\n"


def damage_first_batch(partition: Path) -> None:
    """Flip the last byte of the first batch of the first segment: its CRC no longer holds."""
    log = sorted(partition.glob("*.log"))[0]
    data = bytearray(log.read_bytes())
    (length,) = struct.unpack(">i", data[8:12])
    data[12 + length - 1] ^= 0xFF
    log.write_bytes(bytes(data))


def make_fleet(root: Path) -> dict[str, Path]:
    """Three brokers; returns, for each partition name, the replica ``--one-replica`` must keep."""
    old, new = replica_logs()
    b = {n: root / f"b{n}" / "data" for n in (1, 2, 3)}
    # an unclean election: b2 leads from offset 100 at epoch 2; b1 (old leader, to 150) and b3 (to 120) diverge
    write_replica(b[1] / "events-0", old.appends, EPOCHS_SHARED, rolls=[6])
    write_replica(b[2] / "events-0", new.appends, NEW_LEADER_EPOCHS, rolls=[6])
    write_replica(b[3] / "events-0", old.appends[:12], EPOCHS_SHARED, rolls=[6])
    for n in (1, 2):  # identical: the first given
        write_replica(b[n] / "same-0", old.appends, EPOCHS_SHARED)
    write_replica(b[3] / "lag-0", old.appends, EPOCHS_SHARED)  # b3 complete, b1 behind
    write_replica(b[1] / "lag-0", old.appends[:12], EPOCHS_SHARED)
    write_replica(b[1] / "dmg-0", old.appends, EPOCHS_SHARED)  # complete but damaged: the lagging copy wins
    damage_first_batch(b[1] / "dmg-0")
    write_replica(b[2] / "dmg-0", old.appends[:12], EPOCHS_SHARED)
    write_replica(b[1] / "alone-0", old.appends[:2], None)
    return {
        "events-0": b[2] / "events-0",
        "same-0": b[1] / "same-0",
        "lag-0": b[3] / "lag-0",
        "dmg-0": b[2] / "dmg-0",
        "alone-0": b[1] / "alone-0",
    }


def key(r: dict) -> tuple:
    return (r["logDir"], r["topic"], r["segment"], r["batchPosition"], r["offset"] is None, r["offset"] or 0)


def test_one_replica_keeps_the_copy_diff_would_and_says_why(tmp_path: Path) -> None:
    kept = make_fleet(tmp_path / "fleet")
    roots = [str(tmp_path / "fleet" / f"b{n}" / "data") for n in (1, 2, 3)]
    out = tmp_path / "one.parquet"
    r = run_cli(["export", "--one-replica", *roots, "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    want = tmp_path / "want.parquet"
    assert run_cli(["export", *(str(p) for p in kept.values()), "-o", str(want)]).exit_code == 0
    assert sorted(pq.read_table(out).to_pylist(), key=key) == sorted(pq.read_table(want).to_pylist(), key=key)
    lines = {line.split(":")[1].strip(): line for line in r.text.splitlines() if line.startswith("replica: ")}
    assert sorted(lines) == ["dmg-0", "events-0", "lag-0", "same-0"]  # alone-0: one copy, nothing to choose
    for name, line in lines.items():
        assert f"kept {kept[name]} of " in line, line
    assert "diverged at offset 100: the leader by leader epoch (epoch 2)" in lines["events-0"]
    assert "3 replicas" in lines["events-0"] and "identical: the first" in lines["same-0"]
    assert "the most complete undamaged replica (log end 150;" in lines["lag-0"] and "behind by 30" in lines["lag-0"]
    assert f"{tmp_path / 'fleet' / 'b1' / 'data' / 'dmg-0'}: damaged (1 batch failing the CRC)" in lines["dmg-0"]
    assert r.text.splitlines()[-1].endswith(f"written to {out}.")


def test_without_the_flag_every_replica_is_exported(tmp_path: Path) -> None:
    make_fleet(tmp_path / "fleet")
    roots = [str(tmp_path / "fleet" / f"b{n}" / "data") for n in (1, 2, 3)]
    out = tmp_path / "all.parquet"
    r = run_cli(["export", *roots, "-o", str(out)])
    assert r.exit_code == 1  # b1's dmg-0 is damaged: a corruption row
    assert len({row["logDir"] for row in pq.read_table(out).to_pylist() if row["topic"] == "events"}) == 3
    assert "replica: " not in r.text


def test_a_replica_that_cannot_be_read_is_exit_2_nothing_written(tmp_path: Path) -> None:
    make_fleet(tmp_path / "fleet")
    roots = [str(tmp_path / "fleet" / f"b{n}" / "data") for n in (1, 2, 3)]
    log = tmp_path / "fleet" / "b3" / "data" / "lag-0" / "00000000000000000000.log"
    log.unlink()
    log.symlink_to(tmp_path / "gone.log")  # listed, not readable
    out = tmp_path / "x.parquet"
    r = run_cli(["export", "--one-replica", *roots, "-o", str(out)])
    assert r.exit_code == 2 and "00000000000000000000.log" in r.errtext and not out.exists()
