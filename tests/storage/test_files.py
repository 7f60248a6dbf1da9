"""``files.open_index``: small index files read whole, large ones read in windows (issue 19)."""

from __future__ import annotations

import os

import pytest

from kseg.errors import InputError
from kseg.format.indexes import OffsetIndexView
from kseg.storage import files
from kseg.storage.stores.discover import store_of


def test_large_index_is_read_in_windows_and_a_shrinking_file_is_an_input_error(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "WHOLE_INDEX", 1 << 12)
    small, large = tmp_path / "small.index", tmp_path / "large.index"
    small.write_bytes(bytes(range(8)) * 16)
    with open(large, "wb") as f:
        f.write((1).to_bytes(4, "big") + (0).to_bytes(4, "big"))
        f.truncate(1 << 30)  # sparse: 1 GiB of zeros after one entry
    assert isinstance(files.open_index(str(small), store=store_of(str(small))), bytes)
    source = files.open_index(str(large), store=store_of(str(large)))
    assert isinstance(source, files.IndexFile) and source.length == 1 << 30
    view = OffsetIndexView(source, 0, str(large))
    assert (view.entries, view.used_entries(), view.zero_tail()) == (1 << 27, 1, (1 << 27) - 1)
    os.truncate(large, 1 << 20)
    with pytest.raises(InputError) as info:
        view.entry((1 << 27) - 1)
    assert "shrank" in info.value.message
    source.close()


def test_index_over_the_limit_is_refused(tmp_path):
    path = tmp_path / "x.index"
    with open(path, "wb") as f:
        f.truncate(1 << 20)
    with pytest.raises(InputError, match="larger than any index"):
        files.open_index(str(path), limit=1 << 16, store=store_of(str(path)))


# LocalTieredStorage's names (RemoteLogSegmentFileset): <start offset, 20 digits>-<Uuid, 22 base64url chars>.<suffix>
TIERED_ID = "Wd7Ynb0xRJ2-8HlQ_3aZ1g"


@pytest.mark.parametrize(
    "suffix", [".log", ".index", ".timeindex", ".txnindex", ".snapshot", files.LEADER_EPOCH_CHECKPOINT]
)
def test_a_tiered_name_carries_its_base_offset(suffix: str) -> None:
    name = f"00000000000000000251-{TIERED_ID}{suffix}"
    assert files.base_offset_from_name(name) == 251
    assert files.tiered_segment_id(name) == TIERED_ID
    assert (
        files.sibling(f"/d/{name}", files.INDEX, store=store_of(f"/d/{name}"))
        == f"/d/00000000000000000251-{TIERED_ID}.index"
    )


def test_a_segment_id_may_start_with_a_dash() -> None:
    assert files.base_offset_from_name("00000000000000000007--A_bcdefghijklmnopqrst.log") == 7


@pytest.mark.parametrize(
    "name",
    [
        "00000000000000000251-short.log",  # not 22 characters
        f"00000000000000000251-{TIERED_ID}x.log",  # 23
        f"251x-{TIERED_ID}.log",
        f"-{TIERED_ID}.log",
        "00000000000000000251-Wd7Ynb0xRJ2+8HlQ/3aZ1g.log",  # standard base64, not Kafka's URL-safe form
    ],
)
def test_other_names_carry_none(name: str) -> None:
    assert files.base_offset_from_name(name) is None
    assert files.tiered_segment_id(name) is None


def test_plain_names_are_unchanged() -> None:
    assert files.base_offset_from_name("00000000000000000251.log") == 251
    assert files.base_offset_from_name("-5.log") == -5
    assert files.tiered_segment_id("00000000000000000251.log") is None
