"""``files.open_index``: small index files read whole, large ones read in windows (issue 19)."""

from __future__ import annotations

import os

import pytest

from kseg.errors import InputError
from kseg.format.indexes import OffsetIndexView
from kseg.storage import files


def test_large_index_is_read_in_windows_and_a_shrinking_file_is_an_input_error(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "WHOLE_INDEX", 1 << 12)
    small, large = tmp_path / "small.index", tmp_path / "large.index"
    small.write_bytes(bytes(range(8)) * 16)
    with open(large, "wb") as f:
        f.write((1).to_bytes(4, "big") + (0).to_bytes(4, "big"))
        f.truncate(1 << 30)  # sparse: 1 GiB of zeros after one entry
    assert isinstance(files.open_index(str(small)), bytes)
    source = files.open_index(str(large))
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
        files.open_index(str(path), limit=1 << 16)
