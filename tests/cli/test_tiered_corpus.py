"""Every corpus partition copied into every tiered layout -- Aiven's variants (``test_tiered_aiven.VARIANTS``:
plain, zstd, encrypted, zstd+encrypted, the older per-index objects) and Kafka's ``LocalTieredStorage``
naming -- answers ``dump``, ``verify-index``, the lookups, ``export``, ``rebuild-index --check`` and ``txn``
as the local partition does.

The trees are built once per module; each (layout, command) is one CLI call over all partitions where the
command takes many paths, and the local answers are computed once.  Names are normalised before comparing:
the layout's root becomes the local root, and each ``<start offset, 20 digits>-<segment id>`` stem becomes
``<start offset, 20 digits>``."""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path

import pytest

from kseg.storage import files
from tests.cli.test_tiered_aiven import LOCAL, VARIANTS, Trees, partition_dir, segment_id
from tests.conftest import CORPUS_DATA, Result, assert_no_traceback, run_cli, without_identity

pytest.importorskip("cryptography", reason="encrypted segments are read with cryptography (the test extra)")

PARTITIONS = tuple(sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir()))
LTS = "local-tiered-storage"  # Kafka's LocalTieredStorage: <start>-<uuid>.{log,index,timeindex,...}
LAYOUTS = (*VARIANTS, LTS)


def copy_local_tiered_storage(root: Path, partition: str) -> dict[str, str]:
    """Copy a corpus partition as ``LocalTieredStorage`` names a copied segment (``RemoteLogSegmentFileset``):
    each file ``<start>-<uuid>.<suffix>``, the producer snapshot the broker's at the next segment's base
    offset (the log end for the last), a leader-epoch checkpoint; tiered stem -> plain stem."""
    src, dst = CORPUS_DATA / partition, partition_dir(root, partition)
    dst.mkdir(parents=True)
    logs = sorted(src.glob("*.log"))
    snapshots = {int(p.stem): p for p in src.glob("*.snapshot")}
    renames = {}
    for i, log in enumerate(logs):
        base = int(log.stem)
        stem = f"{log.stem}-{segment_id(partition, base)}"
        renames[stem] = log.stem
        for suffix in (files.LOG, files.INDEX, files.TIME_INDEX, files.TXN_INDEX):
            if log.with_suffix(suffix).exists():
                shutil.copyfile(log.with_suffix(suffix), dst / (stem + suffix))
        end = int(logs[i + 1].stem) if i + 1 < len(logs) else max(snapshots, default=-1)
        if end in snapshots:
            shutil.copyfile(snapshots[end], dst / (stem + files.SNAPSHOT))
        (dst / (stem + files.LEADER_EPOCH_CHECKPOINT)).write_text("0\n1\n0 0\n")
    return renames


class CorpusTrees(Trees):
    """``Trees`` over every corpus partition, plus the ``LocalTieredStorage`` copy; the local answers cached."""

    def __init__(self, base: Path) -> None:
        # a 1296-bit key (test_tiered_aiven's trees keep the usual 2048): the ~1,500 data keys this file's runs
        # unwrap, RSA in Python, took a third of its time.  OAEP with SHA3-512 needs exactly that for an AES
        # key (a 162-byte block: 2 x 64 + 2 bytes and the 32-byte key), so every unwrap is at the bound too
        super().__init__(base, PARTITIONS, bits=1296)
        for partition in PARTITIONS:
            self.renames.update(copy_local_tiered_storage(base / LTS, partition))
        self.local = cache(self._local)
        self.table = cache(_table)

    def _local(self, args: tuple[str, ...]) -> Result:
        return run_cli([a.format(self.base / LOCAL) for a in args])

    def compare(self, layout: str, args: list[str]) -> Result:
        """``args`` ({} the tree's root) on the local tree and on ``layout``: the same exit code and stdout once
        names are normalised; the local run."""
        local = self.local(tuple(args))
        tiered = run_cli(
            [args[0], "--rsm-key", f"kp-2024={self.key_file}", *(a.format(self.base / layout) for a in args[1:])]
        )
        assert_no_traceback(tiered)
        assert tiered.exit_code == local.exit_code, (layout, args, tiered.text[-2000:], tiered.errtext)
        assert without_identity(self.plain_text(tiered.text, layout)) == without_identity(local.text), (layout, args)
        return local


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> CorpusTrees:
    return CorpusTrees(tmp_path_factory.mktemp("corpus-tiered"))


def where(partition: str) -> str:
    return "{}/" + str(partition_dir(Path(""), partition))


def segments(layout: str) -> list[str]:
    """Every segment of every partition, as the layout names its ``.log`` files/objects."""
    out = []
    for partition in PARTITIONS:
        for log in sorted((CORPUS_DATA / partition).glob("*.log")):
            name = log.name if layout == LOCAL else f"{log.stem}-{segment_id(partition, int(log.stem))}.log"
            out.append(f"{where(partition)}/{name}")
    return out


@pytest.mark.parametrize("layout", LAYOUTS)
def test_dump_of_every_segment_answers_as_on_the_local_copy(trees: CorpusTrees, layout: str) -> None:
    args = ["dump", "--deep-iteration", "--print-data-log"]
    local = trees.local(tuple(args + segments(LOCAL)))
    tiered = run_cli(
        [args[0], "--rsm-key", f"kp-2024={trees.key_file}", *args[1:]]
        + [s.format(trees.base / layout) for s in segments(layout)]
    )
    assert_no_traceback(tiered)
    assert tiered.exit_code == local.exit_code, (tiered.text[-2000:], tiered.errtext)
    assert trees.plain_text(tiered.text, layout) == local.text
    assert local.text.count("Dumping ") == len(segments(LOCAL))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_verify_index_of_every_partition_answers_as_on_the_local_copy(trees: CorpusTrees, layout: str) -> None:
    every = [where(p) for p in PARTITIONS]
    text = trees.compare(layout, ["verify-index", *every])
    json_ = trees.compare(layout, ["verify-index", "--format", "json", *every])
    assert text.exit_code == 1  # the corrupt-* partitions
    assert len(json_.text.splitlines()) > len(PARTITIONS)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_rebuild_index_check_and_txn_of_every_partition_answer_as_on_the_local_copy(
    trees: CorpusTrees, layout: str
) -> None:
    every = [where(p) for p in PARTITIONS]
    check = trees.compare(layout, ["rebuild-index", "--check", *every])
    assert f"{sum(len(list((CORPUS_DATA / p).glob('*.log'))) for p in PARTITIONS)} segments" in check.text
    txn = trees.compare(layout, ["txn", "--from-start", "--format", "json", *map(where, WITH_SNAPSHOTS)])
    assert txn.text.count('"type":"transaction"') >= 6 and txn.text.count('"type":"summary"') == len(WITH_SNAPSHOTS)


def _one_snapshot_per_segment(partition: str) -> bool:
    """Each segment has the broker's snapshot at its end (the next segment's base, the log end for the last),
    and none is empty: such a partition's copies carry the same snapshots as it.  Kafka copies no segment
    without one (``LogSegmentData``: ``producerSnapshotIndex can not be null``); the test writers give such a
    segment an empty one (Aiven) or none (LocalTieredStorage), and an empty segment at the log end (empty-log-0)
    the log end's snapshot again, so ``txn`` would rightly see other snapshots than in the local partition."""
    logs = sorted(int(p.stem) for p in (CORPUS_DATA / partition).glob("*.log"))
    snapshots = sorted(int(p.stem) for p in (CORPUS_DATA / partition).glob("*.snapshot"))
    return len(snapshots) == len(logs) and snapshots[:-1] == logs[1:] and snapshots[-1] > logs[-1]


WITH_SNAPSHOTS = tuple(p for p in PARTITIONS if _one_snapshot_per_segment(p))


def _targets(trees: CorpusTrees, partition: str) -> tuple[list[str], list[str]]:
    """From the local partition: its first, a middle, its last offset and the log end; earliest, latest,
    max-timestamp and the timestamp of the middle offset's record (when it has one)."""
    bounds = json.loads(trees.local(("lookup-time", "--format", "json", "earliest", where(partition))).text)
    start, end = bounds["logStartOffset"], bounds["logEndOffset"]
    offsets = sorted({start, (start + end) // 2, max(start, end - 1), end})
    times = ["earliest", "latest", "max-timestamp"]
    middle = trees.local(("lookup-offset", "--format", "json", str((start + end) // 2), where(partition)))
    record = json.loads(middle.text).get("record") if middle.text else None
    if record:
        times.append(str(record["timestamp"]))
    return [str(o) for o in offsets], times


@pytest.mark.parametrize("layout", LAYOUTS)
def test_lookups_in_every_partition_answer_as_on_the_local_copy(trees: CorpusTrees, layout: str) -> None:
    found = 0
    for partition in PARTITIONS:
        offsets, times = _targets(trees, partition)
        for offset in offsets:
            found += trees.compare(layout, ["lookup-offset", offset, where(partition)]).exit_code == 0
        for target in times:
            found += trees.compare(layout, ["lookup-time", "--format", "json", target, where(partition)]).exit_code == 0
    assert found > 5 * len(PARTITIONS)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_export_of_every_partition_gives_the_local_rows(trees: CorpusTrees, layout: str, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow.parquet", reason="export writes Parquet with pyarrow (the test extra)")
    local_out, tiered_out = trees.base / "local.parquet", tmp_path / "tiered.parquet"
    every = [where(p) for p in PARTITIONS]
    local = trees.local(("export", "-q", "-o", str(local_out), *every))  # written once, by the first layout
    key = ["--rsm-key", f"kp-2024={trees.key_file}"]
    tiered = run_cli(["export", "-q", *key, "-o", str(tiered_out), *(w.format(trees.base / layout) for w in every)])
    assert_no_traceback(tiered)
    assert tiered.exit_code == local.exit_code == 1, (tiered.errtext, local.errtext)  # the corrupt-* partitions
    assert trees.plain_text(tiered.errtext, layout) == local.errtext
    local_rows = trees.table(local_out)  # the same every layout: read once
    assert local_rows.num_rows > 10_000
    tiered_rows = _names_mapped(_table(tiered_out), lambda name: trees.plain_text(name, layout))
    assert tiered_rows.equals(local_rows), _first_difference(tiered_rows, local_rows)


def _table(parquet: Path):
    import pyarrow.parquet as pq

    return pq.read_table(parquet)


def _names_mapped(table, plain):
    """``table`` with each string column's values (log directories, segments, corruption lines) mapped by
    ``plain``: each distinct value once, not each row's."""
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type):
            codes = table.column(i).combine_chunks().dictionary_encode()
            names = pa.array([plain(v) for v in codes.dictionary.to_pylist()], pa.string())
            table = table.set_column(i, field, names.take(codes.indices))
    return table


def _first_difference(got, expected) -> str:
    """Where two tables differ: the schema, the row count, or the first row that is not the same."""
    if not got.schema.equals(expected.schema):
        return f"schema {got.schema} != {expected.schema}"
    if got.num_rows != expected.num_rows:
        return f"{got.num_rows} rows != {expected.num_rows}"
    for n, (a, b) in enumerate(zip(got.to_pylist(), expected.to_pylist(), strict=True)):
        if a != b:
            return f"row {n}: {a} != {b}"
    return "the same rows (in other chunks?)"
