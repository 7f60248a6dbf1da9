"""The compiled engine's columns for export and the data source (issue 34): the same rows as the per-batch
rules, on every kind of batch the engine takes or hands back, with ranges, corruption and transactions.

Each case reads the same splits twice in one process -- the engine's window loop (``columns=True``) and the
per-batch rules alone (``columns=False``, what the Python engine runs) -- and compares the Arrow tables;
the CLI runs both engines to Parquet files and compares their rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kseg.limits import INT64_MAX, INT64_MIN, TIMESTAMP_RANGE
from kseg.ops.export import columns as cols
from kseg.ops.export.export import Ranges, plan
from kseg.render.export import ExportSummary, RowBuilder, arrow_schema, split_facts
from kseg.storage.partition import scan_partition
from kseg.storage.ranges import EVERYTHING
from kseg.testing.control import build_control_batch
from kseg.testing.segment import SegmentWriter
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import run_subprocess
from tests.stores import local

pytestmark = pytest.mark.skipif(not cols.available(), reason="the compiled engine is not running")

T = 1_700_000_000_000
CORPUS = Path(__file__).resolve().parents[2] / "data" / "corpus" / "data"


def _records(base: int, n: int, **kw) -> list[RecordSpec]:
    out = []
    for k in range(n):
        o = base + k
        headers: tuple = ()
        if o % 3 == 0:
            headers = (("h", b"x"), ("é", None), ("", b""))
        out.append(
            RecordSpec(
                None if o % 5 == 0 else b"k%d" % o,
                None if o % 7 == 0 else (b"" if o % 11 == 0 else b"value-%d" % o),
                kw.get("ts", T + o),
                headers,
            )
        )
    return out


def _marker(kind: str, offset: int, pid: int) -> bytes:
    return build_control_batch(
        kind, base_offset=offset, producer_id=pid, producer_epoch=0, coordinator_epoch=1, timestamp=T
    )


def _batches() -> list[bytes]:
    """Every kind of batch, in offset order: plain ones the engine takes, and those it hands back."""
    out: list[bytes] = []
    o = 0

    def add(n: int, records=None, **kw) -> None:
        nonlocal o
        out.append(build_v2_batch(records or _records(o, n), base_offset=o, **kw))
        o += n

    for _ in range(40):
        add(1)
    add(30, producer_id=5, producer_epoch=2, base_sequence=2147483640, partition_leader_epoch=7)  # wraps
    add(10, timestamp_type="LogAppendTime", log_append_time=T + 999)
    add(5, codec="lz4")
    add(4, codec="zstd")
    add(3, records=[RecordSpec(b"k", b"v", T, ((b"\xff\xfe", b"bad key"),))] * 3)  # not UTF-8: the rule
    add(2, records=[RecordSpec(b"k", b"v", -1), RecordSpec(b"k", b"v", TIMESTAMP_RANGE[1] + 1)])  # null timestamps
    add(3, producer_id=9, producer_epoch=0, base_sequence=0, transactional=True)
    out.append(_marker("COMMIT", o, 9))
    o += 1
    bad = bytearray(build_v2_batch(_records(o, 6), base_offset=o))
    bad[45] ^= 0x01  # a CRC mismatch (in the producer id: its records still decode)
    out.append(bytes(bad))
    o += 6
    for _ in range(200):
        add(1)
    add(150)
    return out


def _partition(root: Path, batches: list[bytes], segments: int = 2) -> Path:
    d = root / "orders-3"
    d.mkdir(parents=True)
    cut = len(batches) // segments
    base = 0
    for s in range(segments):
        part = batches[s * cut : None if s == segments - 1 else (s + 1) * cut]
        w = SegmentWriter(d, base, index_interval_bytes=1)
        for b in part:
            w.append([b])
        w.close()
        base = _next(part)
    return d


def _next(batches: list[bytes]) -> int:
    last = batches[-1]
    return int.from_bytes(last[0:8], "big", signed=True) + int.from_bytes(last[23:27], "big", signed=True) + 1


def _table(
    d: Path,
    columns: bool,
    ranges: Ranges = EVERYTHING,
    on_corruption: str = "keep",
    committed: bool = False,
    spark: bool = False,
    split_bytes: int = 1 << 27,
) -> tuple[pa.Table, tuple]:
    summary = ExportSummary()
    batches = []
    for split in plan([scan_partition(str(d), store=local())], ranges, split_bytes=split_bytes):
        facts = split_facts(split, ranges, 1 << 26, on_corruption, summary, committed=committed, columns=columns)
        batches.extend(RowBuilder(split, spark=spark).batches(facts))
    summary_fields = (summary.records, len(summary.corrupt), summary.next_offsets)
    return pa.Table.from_batches(batches, schema=arrow_schema(spark=spark)), summary_fields


def _same(d: Path, **kw) -> pa.Table:
    fast, fast_summary = _table(d, True, **kw)
    rule, rule_summary = _table(d, False, **kw)
    assert fast.num_rows == rule.num_rows
    assert fast.to_pylist() == rule.to_pylist()
    assert fast.equals(rule)
    assert fast_summary == rule_summary
    return fast


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _partition(tmp_path_factory.mktemp("cols"), _batches())


def test_every_kind_of_batch(mixed: Path) -> None:
    table = _same(mixed)
    assert table.num_rows > 400
    splits = plan([scan_partition(str(mixed), store=local())])
    items = [item for split in splits for item in split_facts(split, Ranges(), 1 << 26, "keep", columns=True)]
    engine_rows = sum(item.rows for item in items if isinstance(item, cols.Columns))
    assert 200 < engine_rows < len(items) + engine_rows  # the engine read most rows, the rules the others
    corruption = [c for c in table.column("corruption").to_pylist() if c]
    assert len(corruption) == 1 and corruption[0].startswith("crc:")


@pytest.mark.parametrize(
    "ranges",
    [
        Ranges(from_offset=17, to_offset=60),
        Ranges(from_offset=100),
        Ranges(to_offset=39),
        Ranges(from_time=T + 50, to_time=T + 260),
        Ranges(from_offset=45, from_time=T + 44),
        Ranges(from_offset=INT64_MAX),
        Ranges(to_offset=INT64_MIN),
    ],
)
def test_ranges(mixed: Path, ranges: Ranges) -> None:
    _same(mixed, ranges=ranges)


@pytest.mark.parametrize("on_corruption", ["skip", "keep"])
def test_corruption_and_committed(mixed: Path, on_corruption: str) -> None:
    _same(mixed, on_corruption=on_corruption)
    _same(mixed, on_corruption=on_corruption, committed=True)


@pytest.mark.parametrize(("rows", "nbytes"), [(7, cols.MAX_BYTES), (cols.MAX_ROWS, 100)])
def test_full_calls(mixed: Path, monkeypatch: pytest.MonkeyPatch, rows: int, nbytes: int) -> None:
    """An engine call that returns because its rows are many enough goes on where it stopped."""
    monkeypatch.setattr(cols, "MAX_ROWS", rows)
    monkeypatch.setattr(cols, "MAX_BYTES", nbytes)
    _same(mixed)
    _same(mixed, ranges=Ranges(from_offset=45, to_offset=300))


def test_small_splits(mixed: Path) -> None:
    """Splits cut at index entries: the engine stops at each split's end as the rules do."""
    _same(mixed, split_bytes=2048)


def test_spark_rows(mixed: Path) -> None:
    """The data source's timestamps in microseconds."""
    table = _same(mixed, spark=True)
    assert table.schema.field("timestamp").type == pa.timestamp("us", tz="UTC")


def test_unreadable_column(mixed: Path) -> None:
    split = plan([scan_partition(str(mixed), store=local())])[0]
    builder = RowBuilder(split, unreadable=True, spark=True)
    fast = pa.Table.from_batches(list(builder.batches(split_facts(split, Ranges(), 1 << 26, "keep", columns=True))))
    rule = pa.Table.from_batches(list(builder.batches(split_facts(split, Ranges(), 1 << 26, "keep"))))
    assert fast.equals(rule) and fast.column("unreadable").null_count == fast.num_rows


def test_aborted_transactions(tmp_path: Path) -> None:
    """A .txnindex with an aborted transaction: the engine waits for the walk to settle, and the rows are
    the rules' (aborted marked, or left out when committed)."""
    d = tmp_path / "orders-0"
    d.mkdir()
    w = SegmentWriter(d, 0, index_interval_bytes=1)
    o = 0
    for k in range(30):
        txn = 5 <= k < 10
        w.append([build_v2_batch(_records(o, 2), base_offset=o, producer_id=7 if txn else -1, transactional=txn)])
        o += 2
    w.append([_marker("ABORT", o, 7)])
    w.add_aborted_txn(7, 10, o, o)
    o += 1
    for _ in range(30):
        w.append([build_v2_batch(_records(o, 2), base_offset=o)])
        o += 2
    w.close()
    table = _same(d)
    assert sum(table.column("aborted").to_pylist()) == 10
    assert _same(d, committed=True).num_rows == table.num_rows - 10 - 1


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else [])
def test_corpus(name: str) -> None:
    """Every partition of the corpus Kafka wrote, corrupt ones included."""
    _same(CORPUS / name)


def test_cli_parquet_rows_of_both_engines(mixed: Path, tmp_path: Path) -> None:
    """The real command on each engine: the same rows in the Parquet files (a corrupt batch: exit 1)."""
    tables = []
    for engine in ("c", "python"):
        out = tmp_path / f"{engine}.parquet"
        args = ["export", "-q", "--on-corruption", "keep", str(mixed), "-o", str(out)]
        r = run_subprocess(args, env={"KSEG_ENGINE": engine})
        assert r.exit_code == 1 and "CRC mismatch" in r.errtext, r.errtext
        tables.append(pq.read_table(out))
    assert tables[0].num_rows == _table(mixed, False)[0].num_rows
    assert tables[0].equals(tables[1])
