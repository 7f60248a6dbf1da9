"""Segments copied the way Aiven's tiered-storage plugin copies them (``kseg.testing.aiven``: plain, zstd,
encrypted, zstd+encrypted, fixed and variable chunk indexes, the older per-index objects) give every
reading command the answers it gives on the local partition: a few corpus partitions copied into each
variant, each command run on both, the outputs compared once the names are mapped back; each fault of a
manifest or a chunk is a problem naming the object and the chunk."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
import shutil
from pathlib import Path

import pytest

from kseg.format.rsm_manifest import parse_manifest
from kseg.storage.remote_keys import AIVEN_LEGACY_SUFFIXES, object_key
from kseg.testing.aiven import KeyPair, new_key_pair, write_aiven_segment
from tests.conftest import CORPUS_DATA, SUMMARY, assert_no_traceback, run_cli, without_identity

pytest.importorskip("cryptography", reason="encrypted segments are read with cryptography (the test extra)")

TOPIC_ID = "MWJ6FHTfRYy67jzwZdeqSQ"
PARTITIONS = ("plain-v2-0", "txn-v2-0", "v1-gzip-0")
LOCAL = "local"  # the corpus partitions as a broker keeps them
CHUNK = 1024  # small chunks: a segment of the corpus is tens of them, and batches straddle them
VARIANTS: dict[str, dict[str, bool]] = {
    "plain": {},  # fixed chunk index, the segment byte for byte
    "zstd": {"compression": True},  # variable chunk index
    "encrypted": {"encrypted": True},  # fixed chunk index, each chunk IV || ciphertext || tag
    "zstd+encrypted": {"compression": True, "encrypted": True},
    "per-index-objects": {"compression": True, "encrypted": True, "per_index_objects": True},
}


def segment_id(partition: str, base: int) -> str:
    """A stable Uuid text per segment (22 URL-safe base64 characters)."""
    digest = hashlib.sha256(f"{partition}/{base}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


#: a tiered segment's stem, ``<start offset, 20 digits>-<segment id>`` (:func:`segment_id`), in an output
TIERED_STEM = re.compile(r"[0-9]{20}-[A-Za-z0-9_-]{22}")


def partition_dir(root: Path, partition: str) -> Path:
    """``<root>/<topic>-<topicId>/<partition>``: Aiven's partition prefix, and the plain tree's directory."""
    topic, number = partition.rsplit("-", 1)
    return root / f"{topic}-{TOPIC_ID}" / number


def copy_aiven(root: Path, partition: str, key_pair: KeyPair | None, **kwargs: bool) -> dict[str, str]:
    """Copy a corpus partition's segments under ``root`` in Aiven's layout; tiered stem -> plain stem."""
    src = CORPUS_DATA / partition
    topic, number = partition.rsplit("-", 1)
    logs = sorted(src.glob("*.log"))
    snapshots = {int(p.stem): p for p in src.glob("*.snapshot")}
    renames = {}
    for i, log in enumerate(logs):
        base = int(log.stem)
        end = int(logs[i + 1].stem) if i + 1 < len(logs) else max(snapshots, default=base)
        seg = segment_id(partition, base)

        def key_of(suffix: str, base: int = base, seg: str = seg) -> str:
            return object_key("aiven", "", topic, TOPIC_ID, int(number), base, seg, suffix)

        write_aiven_segment(
            root,
            log,
            key_of,
            topic=topic,
            topic_id=TOPIC_ID,
            partition=int(number),
            segment_id=seg,
            end_offset=end - 1,
            chunk_size=CHUNK,
            compression=kwargs.get("compression", False),
            key_pair=key_pair if kwargs.get("encrypted") else None,
            per_index_objects=kwargs.get("per_index_objects", False),
            producer_snapshot=snapshots.get(end),
        )
        renames[f"{base:020d}-{seg}"] = f"{base:020d}"
    return renames


class Trees:
    """``local/<topic>-<id>/<n>`` (the corpus partition) and ``<variant>/<topic>-<id>/<n>`` (Aiven's objects)."""

    def __init__(self, base: Path, partitions: tuple[str, ...] = PARTITIONS, bits: int = 2048) -> None:
        self.base = base
        self.key_pair = new_key_pair("kp-2024", bits)  # an RSA key of ``bits``: each run unwraps its segments' keys
        self.key_file = base / "kp-2024.pem"
        self.key_file.write_bytes(self.key_pair.private_pem)
        self.renames: dict[str, str] = {}
        for partition in partitions:
            shutil.copytree(CORPUS_DATA / partition, partition_dir(base / LOCAL, partition))
        for variant, kwargs in VARIANTS.items():
            for partition in partitions:
                self.renames.update(copy_aiven(base / variant, partition, self.key_pair, **kwargs))

    def plain_text(self, text: str, variant: str) -> str:
        """``text`` with ``variant``'s root and each tiered stem (:attr:`renames`) as on the local tree: one pass
        over the text (a ``str.replace`` per stem went over a dump of every segment hundreds of times)."""
        text = text.replace(str(self.base / variant), str(self.base / LOCAL))
        renames = self.renames
        return TIERED_STEM.sub(lambda m: renames.get(m[0], m[0]), text)

    def same(self, variant: str, args: list[str], expected_code: int | None = 0) -> str:
        """Run ``args`` ({} the tree) on the plain tree and on ``variant`` (with ``--rsm-key``): the same exit
        code and stdout once names are mapped; returns the tiered run's stdout."""
        plain = run_cli([a.format(self.base / LOCAL) for a in args])
        tiered = run_cli(
            [args[0], "--rsm-key", f"kp-2024={self.key_file}", *(a.format(self.base / variant) for a in args[1:])]
        )
        assert_no_traceback(tiered)
        if expected_code is not None:
            assert plain.exit_code == expected_code, (plain.text[-2000:], plain.errtext)
        assert tiered.exit_code == plain.exit_code, (tiered.text[-2000:], tiered.errtext)
        assert without_identity(self.plain_text(tiered.text, variant)) == without_identity(plain.text)
        return tiered.text


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Trees:
    return Trees(tmp_path_factory.mktemp("aiven"))


def test_the_objects_are_named_and_indexed_as_aiven_writes_them(trees: Trees) -> None:
    names = sorted(p.name for p in partition_dir(trees.base / "zstd+encrypted", "plain-v2-0").iterdir())
    seg = segment_id("plain-v2-0", 251)
    assert names == sorted(
        f"{b}-{s}.{x}"
        for b, s in (("00000000000000000000", segment_id("plain-v2-0", 0)), ("00000000000000000251", seg))
        for x in ("indexes", "log", "rsm-manifest")
    )
    old = sorted(p.name for p in partition_dir(trees.base / "per-index-objects", "txn-v2-0").iterdir())
    assert {n.split(".", 1)[1] for n in old} == set(AIVEN_LEGACY_SUFFIXES)  # txn-v2-0 has a .txnindex
    for variant, kind in (("plain", "fixed"), ("encrypted", "fixed"), ("zstd", "variable")):
        path = partition_dir(trees.base / variant, "plain-v2-0") / f"00000000000000000251-{seg}.rsm-manifest"
        manifest = parse_manifest(path.read_bytes())
        assert manifest.chunk_index.kind == kind
        assert manifest.chunk_index.count == -(-22265 // CHUNK)
        raw = json.loads(path.read_bytes())
        assert list(raw) == [
            "version",
            "chunkIndex",
            "segmentIndexes",
            "compression",
            *(["encryption"] if variant == "encrypted" else []),
            "remoteLogSegmentMetadata",
        ]
    # without compression or encryption the .log object is the segment byte for byte
    log = partition_dir(trees.base / "plain", "plain-v2-0") / f"00000000000000000251-{seg}.log"
    assert log.read_bytes() == (CORPUS_DATA / "plain-v2-0" / "00000000000000000251.log").read_bytes()
    assert partition_dir(trees.base / "zstd", "plain-v2-0").joinpath(log.name).stat().st_size < 22265


@pytest.mark.parametrize("variant", VARIANTS)
def test_dump_verify_and_lookups_answer_as_on_the_local_copy(trees: Trees, variant: str) -> None:
    for partition in PARTITIONS:
        where = "{}/" + str(partition_dir(Path(""), partition))
        for log in sorted((CORPUS_DATA / partition).glob("*.log")):
            seg = f"{log.stem}-{segment_id(partition, int(log.stem))}"
            plain_args = ["dump", "--deep-iteration", "--print-data-log", f"{where}/{log.name}"]
            plain = run_cli([a.format(trees.base / LOCAL) for a in plain_args])
            tiered = run_cli(
                [
                    "dump",
                    "--rsm-key",
                    f"kp-2024={trees.key_file}",
                    "--deep-iteration",
                    "--print-data-log",
                    str(partition_dir(trees.base / variant, partition) / f"{seg}.log"),
                ]
            )
            assert plain.exit_code == tiered.exit_code == 0, tiered.errtext
            assert trees.plain_text(tiered.text, variant) == plain.text
        trees.same(variant, ["verify-index", "--format", "json", where])
        trees.same(variant, ["rebuild-index", "--check", where])
    trees.same(variant, ["verify-index", *("{}/" + str(partition_dir(Path(""), p)) for p in PARTITIONS)])
    for target in ("0", "250", "300", "419", "420"):
        trees.same(variant, ["lookup-offset", target, "{}/" + str(partition_dir(Path(""), "plain-v2-0"))], None)
    for target in ("earliest", "latest", "max-timestamp", "1730000000050"):
        trees.same(
            variant,
            ["lookup-time", "--format", "json", target, "{}/" + str(partition_dir(Path(""), "plain-v2-0"))],
            None,
        )
    trees.same(variant, ["lookup-offset", "40", "{}/" + str(partition_dir(Path(""), "txn-v2-0"))], None)


@pytest.mark.parametrize("variant", ["zstd", "zstd+encrypted", "per-index-objects"])
def test_export_and_txn_answer_as_on_the_local_copy(trees: Trees, variant: str, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="export writes Parquet with pyarrow (the test extra)")
    for partition in PARTITIONS:
        where = str(partition_dir(Path(""), partition))
        plain_out, tiered_out = tmp_path / f"{partition}-plain.parquet", tmp_path / f"{partition}-tiered.parquet"
        p = run_cli(["export", "-q", "-o", str(plain_out), str(trees.base / LOCAL / where)])
        t = run_cli(
            [
                "export",
                "-q",
                "--rsm-key",
                f"kp-2024={trees.key_file}",
                "-o",
                str(tiered_out),
                str(trees.base / variant / where),
            ]
        )
        assert p.exit_code == t.exit_code == 0, t.errtext
        plain_rows, tiered_rows = pq.read_table(plain_out).to_pylist(), pq.read_table(tiered_out).to_pylist()
        assert len(plain_rows) > 0
        assert [json.loads(trees.plain_text(json.dumps(r, default=str), variant)) for r in tiered_rows] == [
            json.loads(json.dumps(r, default=str)) for r in plain_rows
        ]
    args = ["txn", "--from-start", "--format", "json", "{}/" + str(partition_dir(Path(""), "txn-v2-0"))]
    plain = run_cli([a.format(trees.base / LOCAL) for a in args])
    tiered = run_cli(
        ["txn", "--rsm-key", f"kp-2024={trees.key_file}", *(a.format(trees.base / variant) for a in args[1:])]
    )
    assert plain.exit_code == tiered.exit_code == 0, tiered.errtext
    p_rows, t_rows = plain.text.splitlines(), trees.plain_text(tiered.text, variant).splitlines()
    assert t_rows[:-1] == p_rows[:-1] and len(p_rows) > 1
    assert json.loads(t_rows[-1])["problems"] == 0


def test_rebuild_index_writes_a_tiered_segments_indexes_only_elsewhere(trees: Trees, tmp_path: Path) -> None:
    where = partition_dir(trees.base / "zstd+encrypted", "plain-v2-0")
    before = sorted(p.name for p in where.iterdir())
    key = ["--rsm-key", f"kp-2024={trees.key_file}"]
    r = run_cli(["rebuild-index", *key, "--force", str(where)])
    assert r.exit_code == 2 and "kseg writes nothing beside a tiered segment's objects; give --output-dir" in r.errtext
    assert sorted(p.name for p in where.iterdir()) == before
    out = tmp_path / "out"
    r = run_cli(["rebuild-index", "-q", *key, "--output-dir", str(out), str(where)])
    assert r.exit_code == 0, (r.text, r.errtext)
    for base in (0, 251):  # the indexes a recovery writes are the broker's, under the segment's names
        for suffix in (".index", ".timeindex"):
            written = out / f"{base:020d}-{segment_id('plain-v2-0', base)}{suffix}"
            assert written.read_bytes() == (CORPUS_DATA / "plain-v2-0" / f"{base:020d}{suffix}").read_bytes()
    assert len(list(out.iterdir())) == 4


# -- faults ---------------------------------------------------------------------------------------------------


def _one_segment(tmp_path: Path, key_pair: KeyPair) -> tuple[Path, Path]:
    """plain-v2-0 as zstd+encrypted objects; (the partition prefix, its first segment's key without suffix)."""
    copy_aiven(tmp_path, "plain-v2-0", key_pair, compression=True, encrypted=True)
    where = partition_dir(tmp_path, "plain-v2-0")
    return where, where / f"00000000000000000000-{segment_id('plain-v2-0', 0)}"


def _bad_json(stem: Path) -> tuple[str, str]:
    manifest = stem.with_suffix(".rsm-manifest")
    manifest.write_bytes(manifest.read_bytes()[:40])
    return str(manifest), "not JSON"


def _sizes_do_not_add_up(stem: Path) -> tuple[str, str]:
    manifest = stem.with_suffix(".rsm-manifest")
    obj = json.loads(manifest.read_bytes())
    obj["chunkIndex"]["originalFileSize"] += 5 * CHUNK
    manifest.write_text(json.dumps(obj))
    return str(manifest), "28 chunk sizes, but originalFileSize 33757 in chunks of 1024 is 33 chunks"


def _short_object(stem: Path) -> tuple[str, str]:
    log = stem.with_suffix(".log")
    log.write_bytes(log.read_bytes()[:-10])
    return str(log), "chunk 27: the object is 13235 bytes, the manifest says 13245"


def _nested_json(stem: Path) -> tuple[str, str]:
    manifest = stem.with_suffix(".rsm-manifest")  # was an internal error: json's decoder recursed too deep
    manifest.write_bytes(b"[" * 100_000)
    return str(manifest), "not JSON: nested too deep"


def _longer_object(stem: Path) -> tuple[str, str]:
    log = stem.with_suffix(".log")  # was clean: the bytes after the last chunk were never read
    log.write_bytes(log.read_bytes() + b"\0" * 10)
    return str(log), "chunk 27: the object is 13255 bytes, the manifest's 28 chunks end at byte 13245"


def _gcm_tag(stem: Path) -> tuple[str, str]:
    log = stem.with_suffix(".log")
    chunk = parse_manifest(stem.with_suffix(".rsm-manifest").read_bytes()).chunk_index.chunk(3)
    data = bytearray(log.read_bytes())
    data[chunk.transformed_position + 20] ^= 0x01
    log.write_bytes(bytes(data))
    return str(log), "chunk 3: GCM tag mismatch"


@pytest.mark.parametrize(
    "fault",
    [_bad_json, _nested_json, _sizes_do_not_add_up, _short_object, _longer_object, _gcm_tag],
    ids=lambda f: f.__name__,
)
def test_each_fault_is_a_problem_naming_the_object_and_chunk(trees: Trees, tmp_path: Path, fault) -> None:
    where, stem = _one_segment(tmp_path, trees.key_pair)
    key_name, expected = fault(stem)
    key = ["--rsm-key", f"kp-2024={trees.key_file}"]
    verify = run_cli(["verify-index", *key, str(where)])
    assert_no_traceback(verify)
    assert verify.exit_code == 1, (verify.text, verify.errtext)
    problems = [line for line in verify.text.splitlines() if line.startswith("  problem:")]
    assert key_name in problems[0] and expected in problems[0], verify.text
    assert "1 clean, 1 with problems" in verify.text.splitlines()[-1]
    assert "clean" not in verify.text.splitlines()[0]
    if fault is _gcm_tag:  # the batches before chunk 3 (bytes 0 to 3071) are read, and counted
        first = verify.text.splitlines()[0]  # the segment named by the path given (issue 33)
        assert first.startswith(f"{where}/00000000000000000000: 3 problems (4 batches,"), verify.text
        assert "byte 3072: corrupt-batch: chunk 3" in problems[0]
    dump = run_cli(["dump", *key, str(stem.with_suffix(".log"))])
    assert_no_traceback(dump)
    assert dump.exit_code == 1
    errors = [line for line in dump.errtext.splitlines() if line.startswith("kseg: error:")]
    assert len(errors) == 1 and key_name in errors[0] and expected in errors[0], dump.errtext


def test_a_missing_key_is_one_line_naming_the_key_pair(trees: Trees) -> None:
    where = partition_dir(trees.base / "zstd+encrypted", "plain-v2-0")
    for args in (["dump", str(next(where.glob("*.log")))], ["lookup-offset", "300", str(where)]):
        r = run_cli(args)
        assert r.exit_code == 2, (r.text, r.errtext)
        assert_no_traceback(r)
        errors = [line for line in r.errtext.splitlines() if line.startswith("kseg: error:")]
        assert len(errors) == 1 and "key pair 'kp-2024'" in errors[0] and "--rsm-key kp-2024=FILE" in errors[0]
    r = run_cli(["verify-index", "--rsm-key", "kp-2024", str(where)])
    assert r.exit_code == 2 and "expected KEYPAIRID=FILE" in r.errtext


def test_a_wrong_key_is_refused(trees: Trees, tmp_path: Path) -> None:
    other = tmp_path / "other.pem"
    other.write_bytes(new_key_pair("kp-2024").private_pem)
    where = partition_dir(trees.base / "encrypted", "plain-v2-0")
    r = run_cli(["verify-index", "--rsm-key", f"kp-2024={other}", str(where)])
    assert r.exit_code == 2 and "does not unwrap the data key" in r.text + r.errtext, (r.text, r.errtext)
    assert_no_traceback(r)


# -- on an object store ---------------------------------------------------------------------------------------


class Requests(logging.Handler):
    """The GETs moto's server answers, by key (werkzeug's access lines, as benchmarks/s3_requests.py counts)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage()))  # werkzeug colours its lines

    def gets(self, suffix: str) -> int:
        return sum(1 for line in self.lines if '"GET ' in line and "list-type" not in line and f"{suffix} HTTP" in line)


@pytest.fixture
def requests_counted():
    counter = Requests()
    log = logging.getLogger("werkzeug")
    level = log.level
    log.addHandler(counter)
    log.setLevel(logging.INFO)
    try:
        yield counter
    finally:
        log.removeHandler(counter)
        log.setLevel(level)


def test_on_s3_the_answers_are_the_local_ones_and_a_lookup_reads_only_its_chunks(
    trees: Trees, s3, tmp_path: Path, requests_counted: Requests
) -> None:
    local = partition_dir(trees.base / LOCAL, "plain-v2-0")
    s3.upload_tree(trees.base / "zstd+encrypted", "tiered/zenc")
    uri = s3.uri("tiered/zenc/" + str(partition_dir(Path(""), "plain-v2-0")))
    key = ["--rsm-key", f"kp-2024={trees.key_file}"]

    def local_text(text: str) -> str:
        text = text.replace(uri, str(local))
        for stem, plain in trees.renames.items():
            text = text.replace(stem, plain)
        return text

    for args in (
        ["verify-index"],
        ["lookup-offset", "300"],
        ["lookup-time", "1730000000050"],
        ["rebuild-index", "--check"],
    ):
        plain, tiered = run_cli([*args, str(local)]), run_cli([args[0], *key, *args[1:], uri])
        assert plain.exit_code == tiered.exit_code == 0, tiered.errtext
        assert local_text(tiered.text) == plain.text

    # a 3 MB segment in 64 KiB chunks: a lookup fetches the chunks under its index entry, not the segment
    big = tmp_path / "big"
    copy_aiven_chunks(big, "large-v2-0", trees.key_pair, 64 << 10)
    s3.upload_tree(big, "tiered/big")
    big_uri = s3.uri("tiered/big/" + str(partition_dir(Path(""), "large-v2-0")))
    manifest = parse_manifest(next(partition_dir(big, "large-v2-0").glob("*.rsm-manifest")).read_bytes())
    assert manifest.chunk_index.count == 49
    requests_counted.lines.clear()
    r = run_cli(["lookup-offset", *key, "5000", big_uri])
    assert r.exit_code == 0 and "Found: offset 5000" in r.text, r.errtext
    assert r.text == run_cli(["lookup-offset", "5000", str(CORPUS_DATA / "large-v2-0")]).text.replace(
        str(CORPUS_DATA / "large-v2-0"), big_uri
    ).replace("00000000000000000000.", f"00000000000000000000-{segment_id('large-v2-0', 0)}.")
    lookup_gets = requests_counted.gets(".log")
    # of 49 chunks: the two under the index entry's window, the one or two of the last batch (the log end offset)
    assert 2 <= lookup_gets <= 4, requests_counted.lines
    assert requests_counted.gets(".rsm-manifest") == 1 and requests_counted.gets(".indexes") >= 1
    requests_counted.lines.clear()
    r = run_cli(["verify-index", *key, big_uri])
    assert r.exit_code == 0, (r.text, r.errtext)
    verify_gets = requests_counted.gets(".log")
    assert 49 <= verify_gets <= 49 + 8  # every chunk, one ranged GET each (a few again: one chunk is kept)
    SUMMARY.append(f"tiered on S3: lookup {lookup_gets} ranged GETs of a 49-chunk .log, verify-index {verify_gets}")


def copy_aiven_chunks(root: Path, partition: str, key_pair: KeyPair, chunk: int) -> None:
    """``copy_aiven`` with zstd, encryption and chunks of ``chunk`` bytes."""
    global CHUNK
    saved, CHUNK = CHUNK, chunk
    try:
        copy_aiven(root, partition, key_pair, compression=True, encrypted=True)
    finally:
        CHUNK = saved


def _index_past_object(stem: Path) -> tuple[str, str]:
    manifest = stem.with_suffix(".rsm-manifest")  # a lying size after every other index: checked before the GET
    obj = json.loads(manifest.read_bytes())
    end = stem.with_suffix(".indexes").stat().st_size
    obj["segmentIndexes"]["offset"] = {"position": end, "size": (1 << 31) - 1 - end}
    manifest.write_text(json.dumps(obj))
    return str(stem.with_suffix(".indexes")), f"offset index: the object ends at byte {end}, the manifest says"


@pytest.mark.parametrize("fault", [_longer_object, _short_object, _index_past_object], ids=lambda f: f.__name__)
def test_faults_on_s3_are_found_as_on_disk(trees: Trees, s3, tmp_path: Path, fault) -> None:
    """The object sizes come from the store (its listing or HEAD), not from a local stat."""
    where, stem = _one_segment(tmp_path / "tree", trees.key_pair)
    key_name, expected = fault(stem)
    prefix = f"faults/{fault.__name__}"
    s3.upload_tree(tmp_path / "tree", prefix)
    uri = s3.uri(f"{prefix}/{where.relative_to(tmp_path / 'tree')}")
    key = ["--rsm-key", f"kp-2024={trees.key_file}"]
    if fault is _index_past_object:  # an index its object cannot give: unreadable, as a local index that fails
        index = f"{uri}/{Path(key_name).name}"
        r = run_cli(["lookup-offset", *key, "100", uri])  # the lookup reads the log from position 0, with a note
        assert_no_traceback(r)
        assert r.exit_code == 0 and "Found: offset 100" in r.text, (r.text, r.errtext)
        assert f"kseg: note: {index}: at byte " in r.errtext and expected in r.errtext, r.errtext
        r = run_cli(["verify-index", *key, uri])  # was "FAILED: ChunkError: ...": the class name, exit 2
        assert_no_traceback(r)
        assert r.exit_code == 2, (r.text, r.errtext)
        assert f"{uri}/00000000000000000000: FAILED: {index}: at byte " in r.text and "ChunkError" not in r.text, r.text
        return
    r = run_cli(["verify-index", *key, uri])
    assert_no_traceback(r)
    assert r.exit_code == 1, (r.text, r.errtext)
    problems = [line for line in r.text.splitlines() if line.startswith("  problem:")]
    assert expected in problems[0] and problems[0].split("problem: ")[1].startswith("s3://"), r.text
