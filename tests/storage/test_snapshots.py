"""``iter_snapshot``: a producer snapshot read in windows, with ``parse_snapshot``'s checks (issue 19)."""

from __future__ import annotations

import pytest

from kseg.errors import CorruptSnapshotError
from kseg.format.snapshot import parse_snapshot
from kseg.storage.snapshots import WINDOW_ENTRIES, iter_snapshot, read_snapshot
from kseg.storage.stores.discover import store_of
from kseg.testing.partition import ProducerEntry, snapshot_bytes


def entries(n: int) -> list[ProducerEntry]:
    return [
        ProducerEntry(1000 + i, i % 7, i, 10 * i, i % 3, 1730000000000 + i, 2, 50 if i % 1000 == 0 else -1)
        for i in range(n)
    ]


@pytest.mark.parametrize("n", [0, 1, WINDOW_ENTRIES, 2 * WINDOW_ENTRIES + 3])
def test_windows_give_what_the_whole_file_gives(tmp_path, n):
    data = snapshot_bytes(entries(n))
    path = tmp_path / "00000000000000000005.snapshot"
    path.write_bytes(data)
    assert list(iter_snapshot(str(path), store=store_of(str(path)))) == parse_snapshot(data)
    snap = read_snapshot(str(path), 5, store=store_of(str(path)))
    assert snap.producers == n
    assert snap.open_txns() == {1000 + i: 50 for i in range(0, n, 1000)}


@pytest.mark.parametrize("damage", ["crc-last-entry", "count", "version", "short"])
def test_damage_raises_before_any_entry_with_the_whole_file_message(tmp_path, damage):
    data = bytearray(snapshot_bytes(entries(2 * WINDOW_ENTRIES + 3)))
    if damage == "crc-last-entry":
        data[-1] ^= 1
    elif damage == "count":
        data[6:10] = (10**8).to_bytes(4, "big")
    elif damage == "version":
        data[0:2] = (2).to_bytes(2, "big")
    else:
        del data[len(data) - 20 :]
    path = tmp_path / "00000000000000000005.snapshot"
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptSnapshotError) as whole:
        parse_snapshot(bytes(data))
    seen = []
    with pytest.raises(CorruptSnapshotError) as streamed:
        seen.extend(iter_snapshot(str(path), store=store_of(str(path))))
    assert seen == []
    assert streamed.value.message == whole.value.message
    assert streamed.value.path == str(path)
