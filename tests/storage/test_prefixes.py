"""A URI listed log directory by log directory (kseg/storage/prefixes.py) gives exactly what one recursive
listing of it gives -- partitions, natural order, notes, errors -- on moto's S3 server, for every layout;
and the listing is split where the log directories are, at most ``at_once`` listings at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from kseg.errors import InputError
from kseg.storage import location, prefixes
from kseg.storage.partition import LAYOUT_HINT, SEGMENT_SUFFIXES, Partition, natural_key, partition_from_listing
from kseg.storage.stores.discover import store_of
from kseg.storage.stores.find import _beyond, discover, discover_uri
from tests.s3server import BUCKET

ROOT = "prefixes"
LTS_DIR = "orders-0-AAAAAAAAAAAAAAAAAAAAAA"  # LocalTieredStorage: <topic>-<partition>-<topicId>
SEG_IDS = ("BBBBBBBBBBBBBBBBBBBBBB", "CCCCCCCCCCCCCCCCCCCCCC")


def one_listing(uri: str, notes: list[str]) -> list[Partition]:
    """What kseg did before: one recursive listing of the whole URI, grouped by directory in natural order."""
    location.check_uri(uri)
    uri = uri.rstrip("/")
    kind = location.kind(uri)
    if kind == "file":
        return discover_uri(uri, notes)  # a single segment file: never listed by prefixes
    entries = location.list_tree(uri)
    if kind == "missing" and not entries:
        raise location.not_found(uri)
    by_dir: dict[str, list[location.Entry]] = {}
    for entry in entries:
        by_dir.setdefault(location.dirname(entry.path), []).append(entry)
    partitions, skipped = [], set()
    for directory in sorted(by_dir, key=natural_key):
        group = by_dir[directory]
        if not any(e.path.endswith(SEGMENT_SUFFIXES) for e in group):
            continue
        said = _beyond(directory, uri)
        if said:
            if said not in skipped:
                skipped.add(said)
                notes.append(said)
            continue
        partitions.append(partition_from_listing(directory, group, notes, store=store_of(directory)))
    if not partitions:
        raise InputError("no partition directories or segment files found", path=uri, hint=LAYOUT_HINT)
    return partitions


def outcome(find, uri: str) -> tuple[object, list[str]]:
    """Every fact of what ``find`` gave for ``uri`` (or its error line), and its notes."""
    notes: list[str] = []
    try:
        parts = find(uri, notes)
    except InputError as exc:
        return exc.describe(), notes
    segs = [
        (
            p.path,
            p.error,
            p.snapshots,
            [(s.base_offset, s.log, s.index, s.timeindex, s.txnindex, s.log_bytes, s.copies) for s in p.segments],
        )
        for p in parts
    ]
    return segs, notes


def segment(directory: Path, base: int = 0, stem: str | None = None, suffixes=(".log", ".index", ".timeindex")):
    directory.mkdir(parents=True, exist_ok=True)
    for sfx in suffixes:
        (directory / f"{stem or f'{base:020d}'}{sfx}").write_bytes(b"x" * (base % 7 + 1))


def log_dir(directory: Path, *checkpoints: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in checkpoints:
        (directory / name).write_text("0\n0\n")


@pytest.fixture(scope="module")
def tree(s3, tmp_path_factory) -> str:
    """The layouts, uploaded under ``s3://kseg-test/prefixes/``."""
    from tests.cli.test_tiered_aiven import copy_aiven

    base = tmp_path_factory.mktemp("prefixes")
    fleet = base / "fleet"
    log_dir(fleet / "b1" / "data", "meta.properties", "recovery-point-offset-checkpoint")
    (fleet / "b1" / "README").write_text("a broker")
    segment(fleet / "b1" / "data" / "orders-0")
    (fleet / "b1" / "data" / "orders-0" / "00000000000000000000.snapshot").write_bytes(b"s")
    segment(fleet / "b1" / "data" / "orders-10")
    segment(fleet / "b1" / "data" / "orders-10", 100)
    segment(fleet / "b1" / "data" / "orders-2", suffixes=(".log", ".log.deleted"))
    segment(fleet / "b1" / "data" / "orders-2", stem="junk", suffixes=(".log",))
    segment(fleet / "b1" / "data" / "orders-3.0123abcd-delete")
    segment(fleet / "b1" / "data" / "orders-4.0123abcd-future" / "nested")
    log_dir(fleet / "b2" / "data", "meta.properties", "log-start-offset-checkpoint", ".kafka_cleanshutdown")
    segment(fleet / "b2" / "data" / "orders-1")
    segment(fleet / "b2" / "data" / "__consumer_offsets-7", 3)
    segment(fleet / "b2" / "old-stray" / "orders-9")
    segment(fleet / "b3" / "2024-05-01" / "data" / "orders-0")
    log_dir(fleet / "b10" / "data", "meta.properties")  # after b3 in natural order, before b2 in the string's
    segment(fleet / "b10" / "data" / "orders-0", 4)
    log_dir(fleet / "b2-old" / "data", "meta.properties")  # before b2/... in natural order ('-' < '/')
    segment(fleet / "b2-old" / "data" / "orders-0", 5)
    for broker in ("broker-1", "broker-2"):  # a fleet root whose brokers look like partition directories
        segment(base / "named" / broker / "data" / "orders-0")
    dated = base / "dated" / "2024"
    segment(dated / "01" / "02" / "03" / "04" / "05" / "orders-0")  # deeper than prefixes.DEPTH
    segment(dated / "01" / "02" / "03" / "04" / "05" / "orders-0.ab-stray")
    segment(dated / "01" / "02" / "x-1.ab-delete")
    segment(dated / "01" / "02-delete" / "y-0")
    segment(dated / "02" / "t-0", 9)
    segment(base / "loose" / "a" / "b", suffixes=(".log",))
    segment(base / "loose" / "a", 7, suffixes=(".log",))
    (base / "loose" / "c").mkdir(parents=True)
    (base / "loose" / "c" / "notes.txt").write_text("no segment")
    copy_aiven(base / "tiered" / "aiven", "txn-v2-0", None)
    for seg_id in SEG_IDS:  # two LocalTieredStorage copies of one segment, and one more segment
        segment(base / "tiered" / "lts" / LTS_DIR, stem=f"0-{seg_id}")
    segment(base / "tiered" / "lts" / LTS_DIR, stem=f"5-{SEG_IDS[0]}", suffixes=(".log", ".snapshot"))
    s3.upload_tree(base, ROOT)
    return s3.uri(ROOT)


CASES = [
    "",
    "/fleet",
    "/fleet/b1",
    "/fleet/b1/data",
    "/fleet/b1/data/orders-10",
    "/fleet/b1/data/orders-0/00000000000000000000.log",
    "/fleet/b2",
    "/fleet/b3",
    "/named",
    "/dated",
    "/dated/2024/01",
    "/dated/2024/01/02/x-1.ab-delete",
    "/loose",
    "/loose/c",
    "/tiered",
    "/tiered/aiven",
    "/tiered/aiven/txn-v2-MWJ6FHTfRYy67jzwZdeqSQ",
    "/tiered/aiven/txn-v2-MWJ6FHTfRYy67jzwZdeqSQ/0",
    "/tiered/lts",
    "/tiered/lts/" + LTS_DIR,
    "/missing",
    "/fleet/b1/data/orders-0/99999999999999999999.log",
]


@pytest.mark.parametrize("case", CASES)
def test_the_same_as_one_recursive_listing(tree: str, case: str) -> None:
    uri = tree + case
    before = outcome(one_listing, uri)
    assert outcome(discover_uri, uri) == before
    assert outcome(discover_uri, uri + "/") == outcome(one_listing, uri + "/")


def test_the_layouts_give_what_they_hold(tree: str) -> None:
    """The oracle is not vacuous: partitions, transition and tiered-copy notes, and errors are there."""
    parts, notes = outcome(discover_uri, tree)
    names = [path[len(tree) + 1 :] for path, *_ in parts]
    assert names[:3] == ["dated/2024/02/t-0", "fleet/b1/data/orders-0", "fleet/b1/data/orders-2"]
    # log directories are found at most 3 levels below the path given (kseg.storage.roots): deeper ones are named
    deep = f"{tree}/dated/2024/01/02: not read, more than 3 levels below {tree} (where log directories are found)"
    assert deep in notes
    assert any(n.startswith(f"{tree}/fleet/b3/2024-05-01/data: not read, more than 3 levels") for n in notes)
    under_fleet = [p[0][len(tree) + 1 :] for p in outcome(discover_uri, tree + "/fleet")[0]]
    assert "fleet/b3/2024-05-01/data/orders-0" in under_fleet
    assert "fleet/b1/data/orders-10" in names and "named/broker-2/data/orders-0" in names
    assert any(n.endswith("orders-3.0123abcd-delete: skipped, a partition directory in transition") for n in notes)
    assert any("dated/2024/01/02-delete: skipped" in n for n in notes)
    assert any("2 tiered copies of the segment at base offset 0" in n for n in notes)
    assert any("junk.log: skipped, the name carries no base offset" in n for n in notes)
    assert outcome(discover_uri, tree + "/missing")[0].endswith("/missing: no such file or directory")
    assert "no partition directories or segment files found" in outcome(discover_uri, tree + "/loose/c")[0]
    (aiven,) = outcome(discover_uri, tree + "/tiered/aiven/txn-v2-MWJ6FHTfRYy67jzwZdeqSQ")[0]
    assert aiven[0].endswith("/0") and aiven[3] and all(seg[2] and seg[2].endswith(".index") for seg in aiven[3])
    # a transition directory given as the root is read: only what is below the root counts
    assert outcome(discover_uri, tree + "/dated/2024/01/02/x-1.ab-delete")[0][0][0].endswith("x-1.ab-delete")


class Listings:
    """The listings made (level or recursive) and the most running at once, through ``location``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, delay: float = 0.0) -> None:
        self.calls: list[tuple[str, str]] = []
        self.running = self.most = 0
        self.lock = threading.Lock()
        for kind in ("list_level", "list_tree"):
            monkeypatch.setattr(location, kind, self.counted(kind, getattr(location, kind), delay))

    def counted(self, kind, real, delay):
        def listing(uri):
            with self.lock:
                self.calls.append((kind, uri))
                self.running += 1
                self.most = max(self.most, self.running)
            try:
                time.sleep(delay)
                return real(uri)
            finally:
                with self.lock:
                    self.running -= 1

        return listing

    def of(self, kind: str, root: str) -> list[str]:
        return sorted(uri[len(root) :] for k, uri in self.calls if k == kind)


def test_each_log_dir_is_listed_recursively_on_its_own(tree: str, monkeypatch) -> None:
    seen = Listings(monkeypatch)
    discover_uri(tree + "/fleet", [])
    assert seen.of("list_tree", tree + "/fleet") == [
        "/b1/data",
        "/b10/data",
        "/b2",
        "/b2-old/data",
        "/b3/2024-05-01/data",
    ]
    assert seen.of("list_level", tree + "/fleet") == [
        "",
        "/b1",
        "/b1/data",
        "/b10",
        "/b10/data",
        "/b2",
        "/b2-old",
        "/b2-old/data",
        "/b3",
        "/b3/2024-05-01",
        "/b3/2024-05-01/data",
    ]


@pytest.mark.parametrize(
    ("case", "levels"),
    [
        ("/fleet/b1/data", 1),
        ("/fleet/b1", 2),
        ("/named", 1),
        ("/fleet/b1/data/orders-10", 1),
        ("/tiered/aiven/txn-v2-MWJ6FHTfRYy67jzwZdeqSQ", 1),
        ("/tiered/aiven", 1),
    ],
)
def test_a_broker_prefix_costs_one_or_two_listings_more(tree: str, case: str, levels: int, monkeypatch) -> None:
    """A log directory, a broker's prefix, a fleet root named like partitions (listed whole, as before), an
    Aiven topic's or storage prefix; a partition directory is one level listing and nothing else (it has no
    subdirectory)."""
    seen = Listings(monkeypatch)
    discover_uri(tree + case, [])
    assert len(seen.of("list_level", tree)) == levels
    assert len(seen.of("list_tree", tree)) == (0 if case.endswith("orders-10") else 1)


def test_a_deep_tree_is_listed_recursively_below_the_depth(tree: str, monkeypatch) -> None:
    seen = Listings(monkeypatch)
    prefixes.each_listing(tree + "/dated", lambda p, groups: None, depth=2)
    assert seen.of("list_level", tree + "/dated") == ["", "/2024"]
    assert seen.of("list_tree", tree + "/dated") == ["/2024/01", "/2024/02"]


def test_names_like_partitions() -> None:
    assert all(map(prefixes.looks_like_partition, ["orders-0", "__consumer_offsets-49", "a.b_c-12", "x-1.ab-delete"]))
    assert not any(map(prefixes.looks_like_partition, ["2024-05-01", "b1", "data", "orders", "orders-x", "dt=a-1"]))


@pytest.mark.parametrize("at_once", [1, 2])
def test_at_most_at_once_listings_run_at_once(tree: str, at_once: int, monkeypatch) -> None:
    seen = Listings(monkeypatch, delay=0.02)
    groups: list[str] = []
    prefixes.each_listing(tree, lambda p, gs: groups.extend(d for d, _ in gs), at_once=at_once)
    assert seen.most == at_once
    assert len(groups) == len(set(groups))  # every directory folded once
    everything: list[str] = []
    prefixes.each_listing(tree, lambda p, gs: everything.extend(d for d, _ in gs), depth=0)
    assert sorted(groups) == sorted(everything)


def test_uris_listed_side_by_side_share_the_bound(tree: str, monkeypatch) -> None:
    """Several URIs on one command line (``discover``'s 16 side by side) still list at most
    ``prefixes.AT_ONCE`` prefixes at once in the process."""
    seen = Listings(monkeypatch, delay=0.02)
    uris = [tree + case for case in ("/fleet/b1", "/fleet/b2", "/fleet/b3", "/fleet/b10", "/named", "/dated")]
    parts = discover(uris, [])
    assert 1 < seen.most <= prefixes.AT_ONCE
    assert len(parts) == sum(len(discover([uri], [])) for uri in uris)


def test_a_prefix_that_cannot_be_listed_fails_naming_the_uri(tree: str, monkeypatch) -> None:
    """A listing below the URI that fails (here the store refusing one broker's prefix) is the URI's error,
    with the store's reason, as one listing of the URI would fail; the other listings stop."""
    real = location.list_tree

    def refused(uri: str) -> list[location.Entry]:
        if uri.endswith("/b2"):
            raise InputError("permission denied", path=uri)
        return real(uri)

    monkeypatch.setattr(location, "list_tree", refused)
    with pytest.raises(InputError) as info:
        discover_uri(tree + "/fleet", [])
    assert info.value.describe() == f"{tree}/fleet: permission denied"


def test_a_missing_bucket_is_the_same_error(s3) -> None:
    uri = f"s3://{BUCKET}-none/fleet"
    assert outcome(discover_uri, uri) == outcome(one_listing, uri)
