"""Test trees built from corpus partitions: two brokers' log roots holding the same partitions."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import CORPUS_DATA

REPLICATED = ("plain-v2-0", "txn-v2-0", "v2-zstd-0")
DAMAGED = ("plain-v2-0", "00000000000000000251")  # the one problem: a CRC fault in broker 2's copy only


def two_brokers(base: Path) -> tuple[Path, Path]:
    """``base/b1/data`` and ``base/b2/data``, each a copy of the same partitions; in ``b2`` one byte of
    ``plain-v2-0/00000000000000000251.log`` is flipped inside the first batch (a ``crc`` problem)."""
    roots = []
    for broker in ("b1", "b2"):
        root = base / broker / "data"
        root.mkdir(parents=True)
        for name in REPLICATED:
            shutil.copytree(CORPUS_DATA / name, root / name)
        roots.append(root)
    log = roots[1] / DAMAGED[0] / f"{DAMAGED[1]}.log"
    data = bytearray(log.read_bytes())
    data[300] ^= 0x5A
    log.write_bytes(bytes(data))
    return roots[0], roots[1]


def many_partitions(root: Path, count: int) -> Path:
    """A log root of ``count`` copies of ``plain-v2-0`` (two segments each): output well past a pipe's buffer."""
    root.mkdir(parents=True)
    for i in range(count):
        shutil.copytree(CORPUS_DATA / "plain-v2-0", root / f"orders-{i}")
    return root
