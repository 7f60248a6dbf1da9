"""Peak memory on the auxiliary files of issue 31, measured on the real CLI in a child process (``peak``).

Two kinds of case.  The issue's hostile files -- a ``leader-epoch-checkpoint`` of 8·10^6 lines (7.3 GiB in
``logdir`` before the bounded reader), a ``recovery-point-offset-checkpoint`` of 4·10^6 entries (5.0 GiB),
``meta.properties`` of 15 M lines (1.1 GiB), a 24 MB ``.rsm-manifest`` (~400 MiB in ``verify-index``) -- are
refused before they are read, so they are written sparse past their true head (the same size, the same
first lines: what a reader that reads them would see first).  The largest files the bounds accept -- every
offset checkpoint and the leader-epoch checkpoint at their entry bounds, with Kafka's longest lines -- are
written in full and read: memory stays within the target (``TARGET_MIB``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kseg.storage import checkpoints as cp
from tests.cli.test_memory_bounds import CAP_MIB, TARGET_MIB, peak
from tests.conftest import CORPUS_DATA, ENGINES


def _partition(base: Path) -> Path:
    p = base / "logs" / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", p)
    return p


def _sparse(path: Path, head: bytes, size: int) -> None:
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)


HOSTILE = {  # name -> (file relative to the partition, its head, its size, the command run on the partition)
    "leader-epoch-checkpoint of 8e6 lines": ("leader-epoch-checkpoint", b"0\n8000000\n0 0\n", 32_000_012, "logdir"),
    "recovery-point-offset-checkpoint of 4e6 entries": (
        f"../{cp.RECOVERY_POINT}",
        b"0\n4000000\nt 0 0\n",
        46_888_900,
        "logdir",
    ),
    "meta.properties of 15e6 lines": (f"../{cp.META_PROPERTIES}", b"a=b\n", 60_000_000, "logdir"),
}


@pytest.mark.parametrize("eng", ENGINES)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_auxiliary_file_is_refused_before_it_is_read(tmp_path: Path, name: str, eng: str) -> None:
    relative, head, size, command = HOSTILE[name]
    p = _partition(tmp_path)
    path = (p / relative).resolve()
    _sparse(path, head, size)
    mib, code, err = peak([command, str(p)], eng)
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert f"{path}: {size} bytes: kseg reads" in err, err
    assert mib < CAP_MIB, f"{name}: {mib:.1f} MiB"


@pytest.mark.parametrize("eng", ENGINES)
def test_a_24_mb_manifest_is_refused_before_it_is_read(tmp_path: Path, eng: str) -> None:
    from tests.cli.test_tiered_aiven import copy_aiven, partition_dir, segment_id

    copy_aiven(tmp_path, "plain-v2-0", None, compression=True)
    where = partition_dir(tmp_path, "plain-v2-0")
    manifest = (where / f"00000000000000000000-{segment_id('plain-v2-0', 0)}").with_suffix(".rsm-manifest")
    head = manifest.read_bytes()
    _sparse(manifest, head[:-1] + b',"junk":[', 24_000_000)
    mib, code, err = peak(["verify-index", str(where)], eng)
    assert code == 2, err  # the segment failed (its line, on stdout, names the bound: test_promises_aux)
    assert "Traceback" not in err
    assert mib < CAP_MIB, f"verify-index: {mib:.1f} MiB"


@pytest.mark.parametrize("eng", ENGINES)
def test_a_manifest_of_millions_of_json_values_is_refused(tmp_path: Path, eng: str) -> None:
    """Under the size bound but made of values (``[{},{},...]``): ``json`` would build an object for each."""
    from tests.cli.test_tiered_aiven import copy_aiven, partition_dir, segment_id

    copy_aiven(tmp_path, "plain-v2-0", None, compression=True)
    where = partition_dir(tmp_path, "plain-v2-0")
    manifest = (where / f"00000000000000000000-{segment_id('plain-v2-0', 0)}").with_suffix(".rsm-manifest")
    obj = json.loads(manifest.read_bytes())
    obj["remoteLogSegmentMetadata"] = {"junk": [{}] * 4_000_000}
    manifest.write_text(json.dumps(obj, separators=(",", ":")))
    mib, code, err = peak(["lookup-offset", "5", str(where)], eng)
    assert code == 2 and f"{manifest}: 4000015 JSON values or more: kseg reads" in err, err
    assert mib < CAP_MIB, f"lookup-offset: {mib:.1f} MiB"


@pytest.fixture(scope="module")
def at_the_bounds(tmp_path_factory) -> Path:
    """A log directory whose four offset checkpoints and leader-epoch checkpoint are as large as the bounds
    take: 65536 entries each, with Kafka's longest lines (a 249-character topic, the largest offsets)."""
    p = _partition(tmp_path_factory.mktemp("bounds"))
    topic = "t" * 248
    lines = "".join(f"{topic}{i % 7} {i} {9223372036854775807 - i}\n" for i in range(cp.MAX_OFFSET_ENTRIES))
    for name in cp.OFFSET_CHECKPOINTS:
        (p.parent / name).write_text(f"0\n{cp.MAX_OFFSET_ENTRIES}\n{lines}")
    n = cp.MAX_EPOCH_ENTRIES
    (p / "leader-epoch-checkpoint").write_text(f"0\n{n}\n" + "".join(f"{i} {i * 1000}\n" for i in range(n)))
    assert (p.parent / cp.RECOVERY_POINT).stat().st_size <= cp.OFFSETS.max_bytes
    assert (p / "leader-epoch-checkpoint").stat().st_size <= cp.LEADER_EPOCHS.max_bytes
    return p


@pytest.mark.parametrize("eng", ENGINES)
@pytest.mark.parametrize("command", ["logdir", "compaction", "verify-index"])
def test_auxiliary_files_at_their_bounds_are_read_within_the_target(
    at_the_bounds: Path, command: str, eng: str
) -> None:
    """Measured: logdir ~114 MiB (four tables of 65536 entries), compaction ~49, verify-index ~42."""
    mib, code, err = peak([command, str(at_the_bounds)], eng)
    assert code in (0, 1), err
    assert "Traceback" not in err and "kseg reads" not in err, err
    assert mib <= TARGET_MIB, f"{command}: {mib:.1f} MiB"


@pytest.mark.parametrize("eng", ENGINES)
def test_a_fifo_given_as_a_key_file_blocks_nothing(tmp_path: Path, eng: str) -> None:
    """``--rsm-key kp1=<FIFO>`` hung every command, even ``dump`` of a plain index: refused, exit 2."""
    fifo = tmp_path / "key.pem"
    os.mkfifo(fifo)
    index = CORPUS_DATA / "plain-v2-0" / "00000000000000000000.index"
    mib, code, err = peak(["dump", "--rsm-key", f"kp1={fifo}", str(index)], eng)
    assert code == 2 and "not a regular file" in err, err
    assert mib < CAP_MIB
