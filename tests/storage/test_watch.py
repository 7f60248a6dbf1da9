"""The watcher of a listing (kseg/storage/watch.py) is told of every listing, from the listing threads, and its
counts add up to what one recursive listing of the URI holds: on moto's S3 server (a small fleet) and on a
local log root."""

from __future__ import annotations

import shutil
import threading
from collections import Counter
from pathlib import Path

import pytest

from kseg.storage import location, prefixes
from kseg.storage.context import ReadContext
from kseg.storage.files import SEGMENT_SUFFIXES, suffix
from kseg.storage.listing import Listed
from kseg.storage.stores.find import discover, discover_as
from tests.storage.test_prefixes import tree  # noqa: F401 - the layouts on moto's S3 server, a fixture

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "orders-0"


class Recorder:
    """A watcher keeping every call, under a lock (the listing threads call it side by side)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.begun: list[str] = []
        self.ended: list[tuple[str, int, int]] = []
        self.threads: set[int] = set()

    def started(self, prefix: str) -> None:
        with self.lock:
            self.begun.append(prefix)
            self.threads.add(threading.get_ident())

    def finished(self, prefix: str, keys: int, partitions: int, noun: str = "key") -> None:
        with self.lock:
            self.ended.append((prefix, keys, partitions))

    def totals(self) -> tuple[int, int]:
        return sum(k for _, k, _ in self.ended), sum(p for _, _, p in self.ended)

    def each_started_once_ended(self) -> bool:
        return Counter(self.begun) == Counter(p for p, _, _ in self.ended)


def watched(watcher: Recorder) -> ReadContext:
    """A read context whose listings ``watcher`` is told of."""
    context = ReadContext()
    context.observers.watcher = watcher
    return context


def in_one_listing(uri: str) -> tuple[int, int]:
    """The keys under ``uri`` and the directories holding a segment file, by one recursive listing."""
    entries = location.list_tree(uri)
    return len(entries), len({location.dirname(e.path) for e in entries if suffix(e.path) in SEGMENT_SUFFIXES})


@pytest.mark.parametrize("case", ["", "/fleet", "/fleet/b1/data", "/dated"])
def test_a_prefix_listing_is_told_whole(tree: str, case: str) -> None:  # noqa: F811 - the fixture
    uri = tree + case
    seen = Recorder()
    parts = discover_as([uri], [], Listed, watched(seen))
    assert parts and seen.each_started_once_ended()
    assert seen.totals() == in_one_listing(uri)
    assert len(seen.ended) > 1 or case == "/fleet/b1/data"  # each listing told, not one at the end
    if case == "":
        assert len(seen.threads) > 1  # told from the listing threads


def test_a_listing_that_fails_is_told_ended(tree: str, monkeypatch) -> None:  # noqa: F811 - the fixture
    """A watcher counting listings in progress gets back to none when a listing raises."""
    real = location.list_tree

    def failing(prefix: str):
        if "/fleet/b2" in prefix:
            from kseg.errors import InputError

            raise InputError("access denied", path=prefix)
        return real(prefix)

    monkeypatch.setattr(location, "list_tree", failing)
    seen = Recorder()
    with pytest.raises(Exception, match="access denied"):
        prefixes.each_listing(tree + "/fleet", lambda prefix, groups: None, watcher=seen)
    assert seen.each_started_once_ended()


def test_a_local_log_root_is_told_directory_by_directory(tmp_path: Path) -> None:
    for name in ("orders-0", "orders-1", "orders-2"):
        shutil.copytree(EXAMPLE, tmp_path / "root" / name)
    (tmp_path / "root" / "meta.properties").write_text("version=0\n")
    seen = Recorder()
    parts = discover([str(tmp_path / "root")], [], watched(seen))
    files = sum(1 for p in (tmp_path / "root").rglob("*") if p.is_file())
    assert len(parts) == 3 and seen.each_started_once_ended()
    root = str(tmp_path / "root")
    assert [p for p, _, _ in seen.ended] == [root] + [f"{root}/orders-{n}" for n in range(3)]
    assert seen.totals() == (files, 3)


def test_a_partition_directory_given_is_counted_once(tmp_path: Path) -> None:
    """A partition directory given directly is listed twice (is it a partition? then its segments), and its
    files are counted once: by the listing of its segments."""
    shutil.copytree(EXAMPLE, tmp_path / "orders-0")
    seen = Recorder()
    parts = discover([str(tmp_path / "orders-0")], [], watched(seen))
    files = sum(1 for p in (tmp_path / "orders-0").iterdir() if p.is_file())
    assert len(parts) == 1 and seen.each_started_once_ended()
    assert seen.totals() == (files, 1)


def test_nobody_is_told_by_default(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "orders-0")
    assert ReadContext().watcher is None
    assert len(discover([str(tmp_path / "orders-0")], [])) == 1
