"""KRaft snapshots (``<endOffset>-<epoch>.checkpoint``, ``bootstrap.checkpoint``): no golden exists,
so these files are built from Kafka's format facts (``Snapshots``, ``RecordsSnapshotWriter``):
a SnapshotHeader control batch, data batches, a SnapshotFooter control batch."""

from __future__ import annotations

import struct
from pathlib import Path

from kseg.testing.writer import build_control_record_batch, iter_batch_bytes, set_last_offset
from tests.conftest import CORPUS_DATA, run_cli

TS = 1_730_000_000_000


def _checkpoint(path: Path) -> Path:
    # SnapshotHeaderRecord v0 (flexible): int16 version, int64 lastContainedLogTimestamp, no tagged fields
    header = build_control_record_batch(
        3, struct.pack(">hq", 0, TS) + b"\x00", base_offset=0, timestamp=TS, partition_leader_epoch=1
    )
    # data: the cluster-metadata batches Kafka's raft code wrote, re-based after the header
    meta = list(iter_batch_bytes((CORPUS_DATA / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes()))
    data = [set_last_offset(b, 1) if i == 0 else b for i, b in enumerate(meta[3:4])]
    # SnapshotFooterRecord v0: int16 version, no tagged fields
    footer = build_control_record_batch(
        4, struct.pack(">h", 0) + b"\x00", base_offset=2, timestamp=TS, partition_leader_epoch=1
    )
    path.write_bytes(header + b"".join(data) + footer)
    return path


def test_checkpoint_dump(tmp_path: Path) -> None:
    cp = _checkpoint(tmp_path / "00000000000000000013-0000000001.checkpoint")
    r = run_cli(["dump", "--deep-iteration", "--files", str(cp)])
    assert r.exit_code == 0, r.errtext
    lines = r.text.splitlines()
    assert lines[:2] == [f"Dumping {cp}", "Snapshot end offset: 13, epoch: 1"]
    assert lines[3].endswith(f'SnapshotHeader {{"version":0,"lastContainedLogTimestamp":{TS}}}')
    assert lines[-1].endswith(' SnapshotFooter {"version":0}')
    assert sum(1 for line in lines if line.startswith("baseOffset:")) == 3
    assert "Found" not in r.text


def test_checkpoint_with_the_metadata_decoder(tmp_path: Path) -> None:
    cp = _checkpoint(tmp_path / "00000000000000000013-0000000001.checkpoint")
    r = run_cli(["dump", "--cluster-metadata-decoder", "--files", str(cp)])
    assert r.exit_code == 0, r.errtext
    decoded = [line for line in r.text.splitlines() if " payload: " in line]
    assert decoded and all('"type":"' in line and '"data":' in line for line in decoded)


def test_bootstrap_checkpoint(tmp_path: Path) -> None:
    cp = _checkpoint(tmp_path / "bootstrap.checkpoint")
    r = run_cli(["dump", "--files", str(cp)])
    assert r.text.splitlines()[1] == "KRaft bootstrap snapshot"


def test_checkpoint_with_an_odd_name_still_dumps(tmp_path: Path) -> None:
    cp = _checkpoint(tmp_path / "snapshot.checkpoint")
    r = run_cli(["dump", "--files", str(cp)])
    assert r.exit_code == 0
    assert "baseOffset: 0" in r.text and "no end offset shown" in r.errtext
