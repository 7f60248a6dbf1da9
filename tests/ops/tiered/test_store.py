"""The store listed: a local directory and the same tree on moto's S3 server give the same objects, the same
top-level prefixes (``--spark`` hands those out), and segment objects grouped by segment id."""

from __future__ import annotations

from pathlib import Path

import pytest

from kseg.errors import InputError
from kseg.ops.tiered.store import StoreListing, list_store, top_level
from kseg.storage.location import Entry
from kseg.storage.stores.discover import store_of
from tests.ops.tiered import scenario as sc


def _list(root: str) -> StoreListing:
    return list_store(root, store_of(root))  # its store chosen once, as --remote's is


def _top(root: str) -> tuple[list[str], list[Entry]]:
    return top_level(root, store_of(root))


def _tree(tmp_path: Path) -> Path:
    _, store, _ = sc.healthy().write(tmp_path)
    (store / "notes.txt").write_text("not a segment's")
    (store / "other" / "deep").mkdir(parents=True)
    (store / "other" / "deep" / "x.log").write_text("neither")
    return store


def test_local_listing(tmp_path: Path) -> None:
    store = _tree(tmp_path)
    listing = _list(str(store))
    assert listing.objects == 11 and listing.other_objects == 2 and listing.other_bytes == 15 + 7
    assert sorted(listing.by_segment) == sorted(sc.IDS[n] for n in ("a", "b", "c"))
    assert {o.key.suffix for o in listing.by_segment[sc.IDS["a"]]} == {"log", "indexes", "rsm-manifest"}
    dirs, files = _top(str(store))
    assert [Path(d).name for d in dirs] == [f"{sc.TOPIC}-{sc.TOPIC_ID}", "other"]
    assert [Path(f.path).name for f in files] == ["notes.txt"]


def test_s3_listing_equals_local(s3, tmp_path: Path) -> None:
    store = _tree(tmp_path)
    s3.upload_tree(store, "tiered-store")
    root = s3.uri("tiered-store")
    local, remote = _list(str(store)), _list(root)
    assert (remote.objects, remote.other_objects, remote.other_bytes) == (
        local.objects,
        local.other_objects,
        local.other_bytes,
    )
    for seg_id, objects in local.by_segment.items():
        want = [(o.path.replace(str(store), root), o.size, o.key.suffix) for o in objects]
        assert [(o.path, o.size, o.key.suffix) for o in remote.by_segment[seg_id]] == want
    dirs, files = _top(root)
    assert dirs == [f"{root}/{sc.TOPIC}-{sc.TOPIC_ID}", f"{root}/other"]
    assert [(f.path, f.size) for f in files] == [(f"{root}/notes.txt", 15)]


def test_missing_root(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        _list(str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match="not a directory"):
        _top(str(tmp_path / "nowhere"))
