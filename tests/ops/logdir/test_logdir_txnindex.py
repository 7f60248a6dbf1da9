"""``kseg logdir`` reads each segment's ``.txnindex`` as a broker does on every start (``LogSegment.sanityCheck``,
``TransactionIndex.sanityCheck``): an entry of a version above 0 fails the partition's load and the broker does not
start; an entry whose ``lastOffset`` is below the segment's base offset makes the broker recover that segment on
load -- its indexes rebuilt when its batches are valid, the segment truncated at its first invalid one when not.
The first fault in file order decides; a segment without its ``.index`` never gets that far.

The partition is the corpus's ``txn-v2-0`` (Kafka's own bytes): segment 0 (offsets 0-35, one aborted
transaction in its ``.txnindex``) and segment 36 (offsets 36-51, two entries: producer 2002 from 29 to 42, and
2001 from 44 to 49).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import pytest

from kseg.format.indexes import TXN_ENTRY
from kseg.storage.records import FileRecords
from kseg.storage.stores.discover import store_of
from tests.conftest import CORPUS_DATA, run_cli, run_subprocess
from tests.ops.logdir.kafka_dir import CLUSTER_ID, checkpoint, directory_id, partition_metadata, properties

ROOT = Path(__file__).resolve().parents[3]
TXN_END = 52
SEG0, SEG36 = "00000000000000000000", "00000000000000000036"
LOADER_NOTE = "a broker finds the index corrupt on start and recovers the segment"
VERSION_CAUSE = "does not catch this KafkaException: the partition fails to load and the broker does not start"


def txn_dir(base: Path, clean: bool = True, recovery_point: int | None = TXN_END) -> Path:
    """A KRaft broker's log directory holding ``txn-0`` (txn-v2-0), after a clean shutdown or (``clean``
    False) a crash with ``recovery_point`` in its checkpoint (None: no entry)."""
    base.mkdir(parents=True)
    part = base / "txn-0"
    shutil.copytree(CORPUS_DATA / "txn-v2-0", part)
    (part / "partition.metadata").write_text(partition_metadata("4CFTXm-WQZa2bJ8EO6yJNQ"))
    (base / "replication-offset-checkpoint").write_text(checkpoint([("txn", 0, TXN_END)]))
    point = [] if recovery_point is None else [("txn", 0, recovery_point)]
    (base / "recovery-point-offset-checkpoint").write_text(checkpoint(point))
    (base / "meta.properties").write_text(
        properties({"cluster.id": CLUSTER_ID, "directory.id": directory_id(1), "node.id": 1, "version": 1})
    )
    if clean:
        (base / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":42}')
    return base


def _txnindex(d: Path, seg: str) -> Path:
    return d / "txn-0" / f"{seg}.txnindex"


def _entries(path: Path) -> list[tuple[int, ...]]:
    data = path.read_bytes()
    return [TXN_ENTRY.unpack_from(data, n) for n in range(0, len(data) - len(data) % TXN_ENTRY.size, TXN_ENTRY.size)]


def _rewrite(path: Path, n: int, *, version: int | None = None, last: int | None = None) -> None:
    """Entry ``n`` of a ``.txnindex`` with its version byte (the first, as Kafka reads it) or its
    ``lastOffset`` changed."""
    data = bytearray(path.read_bytes())
    at = n * TXN_ENTRY.size
    if version is not None:
        data[at] = version
    if last is not None:
        struct.pack_into(">q", data, at + 18, last)
    path.write_bytes(bytes(data))


def _corrupt_batch(d: Path, seg: str, k: int) -> tuple[int, int]:
    """A byte inside batch ``k`` of the segment flipped (its CRC no longer matches): (its position, base offset)."""
    log = d / "txn-0" / f"{seg}.log"
    with FileRecords(str(log), store=store_of(str(log))) as records:
        batches = [(b.position, b.base_offset) for b in records.batches()]
    pos, base = batches[k]
    data = bytearray(log.read_bytes())
    data[pos + 65] ^= 0xFF
    log.write_bytes(bytes(data))
    return pos, base


def _json(d: Path | str) -> tuple[int, dict, str]:
    r = run_cli(["logdir", "--format", "json", str(d)])
    assert "Traceback" not in r.errtext, r.errtext
    rows = [json.loads(line) for line in r.text.splitlines()]
    return r.exit_code, next(r for r in rows if r["type"] == "partition"), r.errtext


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if LOADER_NOTE in line]


def _message(path: Path, entry: tuple[int, ...], base: int) -> str:
    """``TransactionIndex.sanityCheck``'s ``CorruptIndexException`` message."""
    v, pid, first, last, lso = entry
    return (
        f"Last offset of aborted transaction AbortedTxn(version={v}, producerId={pid}, firstOffset={first}, "
        f"lastOffset={last}, lastStableOffset={lso}) in index {path} is less than start offset {base}"
    )


def test_the_healthy_partition_is_clean(tmp_path: Path) -> None:
    """The twin every case below damages: every entry is version 0 and at or past its segment's base offset."""
    code, part, err = _json(txn_dir(tmp_path / "d"))
    assert (code, part["status"], part["problems"], part["logEndOffset"]) == (0, "clean", [], TXN_END)
    assert not _notes(err)


@pytest.mark.parametrize("clean", [True, False], ids=["clean-shutdown", "crash"])
def test_a_last_offset_below_the_base_over_valid_batches_is_rebuilt(tmp_path: Path, clean: bool) -> None:
    """Entry 0 of segment 36's index ends at offset 30: ``CorruptIndexException``, the segment is recovered on
    load, its batches are valid -- the broker rebuilds the indexes and starts, nothing lost: clean, and a note
    in Kafka's words, whatever the shutdown."""
    d = txn_dir(tmp_path / "d", clean=clean)
    index = _txnindex(d, SEG36)
    _rewrite(index, 0, last=30)
    code, part, err = _json(d)
    assert (code, part["status"], part["problems"], part["logEndOffset"]) == (0, "clean", [], TXN_END)
    message = _message(index, _entries(index)[0], 36)
    assert _notes(err) == [
        f"kseg: note: {index}: entry 0 at byte 0: {message}: {LOADER_NOTE} (LogLoader.loadSegmentFiles: "
        '"Found a corrupted index file"): its batches are valid, so it rebuilds the segment\'s indexes and nothing '
        "is lost"
    ], err


def test_a_last_offset_below_the_base_over_an_invalid_batch_truncates_that_segment(tmp_path: Path) -> None:
    """After a clean shutdown no segment is recovered -- except one whose ``.txnindex`` is corrupt: recovery
    validates its batches and truncates it at the first invalid one (the later segments are kept), in the
    no-``.index`` case's words with Kafka's reason."""
    d = txn_dir(tmp_path / "d")
    index = _txnindex(d, SEG0)
    _rewrite(index, 0, last=-1)
    pos, base = _corrupt_batch(d, SEG0, 2)
    code, part, err = _json(d)
    assert (code, part["status"], part["logEndOffset"]) == (1, "problems", TXN_END)  # segment 36 is kept
    (problem,) = part["problems"]
    message = _message(index, _entries(index)[0], 0)
    assert problem.startswith(
        f"recovery truncates {SEG0}.log at offset {base} ({SEG0}.log, position {pos}: Record is corrupt (stored crc = "
    ), problem
    assert problem.endswith(
        f"are lost; its .txnindex is corrupt: entry 0 at byte 0: {message}, so a broker recovers the segment on load "
        'whatever the shutdown (LogLoader.loadSegmentFiles: "Found a corrupted index file", LogSegment.recover); '
        "later segments are kept"
    ), problem
    assert f"offsets {base}-35 (1 segment, " in problem
    assert not _notes(err)
    # (the same batch fault with a sound index: not recovered after a clean shutdown, its CRCs not read)
    shutil.copy(CORPUS_DATA / "txn-v2-0" / f"{SEG0}.txnindex", index)
    code, part, err = _json(d)
    assert (code, part["status"], part["problems"]) == (0, "clean", []), part


def test_after_a_crash_the_load_rule_keeps_later_segments(tmp_path: Path) -> None:
    """A crash with recovery point 40: ``recoverLog`` validates segment 36 only; segment 0, its index corrupt,
    is recovered on load before that -- truncated alone, segment 36 kept (never "every later segment deleted")."""
    d = txn_dir(tmp_path / "d", clean=False, recovery_point=40)
    _rewrite(_txnindex(d, SEG0), 0, last=-7)
    _, base = _corrupt_batch(d, SEG0, 0)
    code, part, _ = _json(d)
    assert (code, part["logEndOffset"], base) == (1, TXN_END, 0)
    assert [q.split(" (")[0] for q in part["problems"]] == [f"recovery truncates {SEG0}.log at offset 0"]
    assert part["problems"][0].endswith("later segments are kept")


@pytest.mark.parametrize("clean", [True, False], ids=["clean-shutdown", "crash"])
def test_a_version_above_0_stops_the_broker(tmp_path: Path, clean: bool) -> None:
    """Entry 1 of segment 36's index of version 1 (its first byte): the iterator's ``KafkaException``, which the
    loader does not catch -- a problem naming the file, the entry, its byte and Kafka's message, exit 1."""
    d = txn_dir(tmp_path / "d", clean=clean)
    index = _txnindex(d, SEG36)
    _rewrite(index, 1, version=1)
    code, part, err = _json(d)
    assert (code, part["status"], part["logEndOffset"]) == (1, "problems", TXN_END)
    assert part["problems"] == [
        f"load fails: entry 1 at byte 34: Unexpected aborted transaction version 1 in transaction index {index}, "
        "current version is 0: a broker reads every .txnindex entry on start (LogSegment.sanityCheck), and "
        f"LogLoader.loadSegmentFiles {VERSION_CAUSE} (LogManager.loadLogs rethrows it); `kseg rebuild-index` "
        "writes the right file"
    ]
    assert not _notes(err)


def test_a_version_byte_kafka_does_not_read_is_no_fault(tmp_path: Path) -> None:
    """Kafka reads the version as the entry's first byte (``AbortedTxn.version``: ``buffer.get(0)``): a second
    byte of 1 (the int16 1) and a first byte of 0xFF (-1, below the current version) load as version 0 does."""
    d = txn_dir(tmp_path / "d")
    index = _txnindex(d, SEG36)
    data = bytearray(index.read_bytes())
    data[1], data[34] = 1, 0xFF
    index.write_bytes(bytes(data))
    code, part, err = _json(d)
    assert (code, part["status"], part["problems"]) == (0, "clean", []), part
    assert not _notes(err)


def test_the_first_fault_in_file_order_decides(tmp_path: Path) -> None:
    """Entry 0 past its bound and entry 1 of version 2: the corrupt index is found first (recovered, a note);
    the other way round, the version fault ends the reading -- the load fails.  Within one entry the version is
    read first."""
    d = txn_dir(tmp_path / "d")
    index = _txnindex(d, SEG36)
    original = index.read_bytes()
    _rewrite(index, 0, last=30)
    _rewrite(index, 1, version=2)
    code, part, err = _json(d)
    assert (code, part["status"], part["problems"]) == (0, "clean", [])
    assert len(_notes(err)) == 1 and "entry 0 at byte 0: Last offset of aborted transaction" in err
    index.write_bytes(original)
    _rewrite(index, 0, version=2)
    _rewrite(index, 1, last=30)
    code, part, err = _json(d)
    assert code == 1 and not _notes(err)
    assert len(part["problems"]) == 1
    assert part["problems"][0].startswith("load fails: entry 0 at byte 0: Unexpected aborted transaction version 2")
    index.write_bytes(original)
    _rewrite(index, 1, version=3, last=30)  # one entry, both faults: its version is read first
    code, part, _ = _json(d)
    assert code == 1 and part["problems"][0].startswith("load fails: entry 1 at byte 34: Unexpected aborted ")


def test_a_partial_trailing_entry_is_not_read(tmp_path: Path) -> None:
    """Bytes after the last whole entry -- here the start of an entry of version 5 ending below the base offset
    -- are not an entry to Kafka's iterator (``hasNext``: 34 bytes left): clean."""
    d = txn_dir(tmp_path / "d")
    index = _txnindex(d, SEG36)
    partial = struct.pack(">bxqqqq", 5, 7, 1, 2, 1)[:30]
    index.write_bytes(index.read_bytes() + partial)
    code, part, err = _json(d)
    assert (code, part["status"], part["problems"]) == (0, "clean", []), part
    assert not _notes(err)


def test_an_empty_txnindex_is_clean(tmp_path: Path) -> None:
    d = txn_dir(tmp_path / "d")
    _txnindex(d, SEG36).write_bytes(b"")
    _txnindex(d, SEG0).unlink()  # (no file at all: no entry either)
    code, part, err = _json(d)
    assert (code, part["status"], part["problems"]) == (0, "clean", [])
    assert not _notes(err)


def test_without_its_index_the_txnindex_is_not_read(tmp_path: Path) -> None:
    """Segment 36 without its ``.index``: ``sanityCheck`` throws ``NoSuchFileException`` before it reads the
    ``.txnindex`` -- a version fault there is never met; the no-``.index`` rule recovers the segment (its batches
    valid: nothing lost), rebuilding the ``.txnindex`` with the rest."""
    d = txn_dir(tmp_path / "d")
    _rewrite(_txnindex(d, SEG36), 0, version=1, last=30)
    (d / "txn-0" / f"{SEG36}.index").unlink()
    code, part, err = _json(d)
    assert (code, part["status"], part["problems"]) == (0, "clean", []), part
    assert not _notes(err)
    pos, base = _corrupt_batch(d, SEG36, 1)
    code, part, _ = _json(d)
    assert code == 1 and part["problems"][0].startswith(f"recovery truncates {SEG36}.log at offset {base} ")
    assert "the segment has no .index" in part["problems"][0] and "load fails" not in json.dumps(part)


def test_an_unreadable_txnindex_fails_the_partition(tmp_path: Path) -> None:
    """A ``.txnindex`` that cannot be read (a dangling link, a FIFO): the partition is ``failed`` with the OS's
    reason on stderr, exit 2, as for any partition file logdir cannot read -- never clean."""
    d = txn_dir(tmp_path / "d")
    index = _txnindex(d, SEG36)
    index.unlink()
    index.symlink_to(tmp_path / "gone")
    code, part, err = _json(d)
    assert (code, part["status"]) == (2, "failed")
    assert f"kseg: error: {index}: No such file or directory" in err.splitlines(), err
    index.unlink()
    os.mkfifo(index)
    code, part, err = _json(d)
    assert (code, part["status"]) == (2, "failed")
    assert f"kseg: error: {index}: not a regular file (a FIFO, socket or device)" in err.splitlines(), err


def test_the_text_output_says_it(tmp_path: Path) -> None:
    """The text rows: the load failure under its partition, exit 1."""
    d = txn_dir(tmp_path / "d")
    _rewrite(_txnindex(d, SEG0), 0, version=1)
    r = run_cli(["logdir", str(d)])
    assert r.exit_code == 1, r.errtext
    lines = r.text.splitlines()
    assert lines[1].startswith("  txn-0: problems; ") and lines[2].startswith(
        f"    PROBLEM load fails: entry 0 at byte 0: Unexpected aborted transaction version 1 in transaction index "
        f"{_txnindex(d, SEG0)}, current version is 0: "
    ), lines


def test_both_engines_find_the_same(tmp_path: Path) -> None:
    """The recovery a corrupt index causes validates the batches through the compiled scan or the Python one:
    the same rows, notes and exit code (each a real process: the engine is chosen at start)."""
    d = txn_dir(tmp_path / "d")
    _rewrite(_txnindex(d, SEG0), 0, last=-1)
    _corrupt_batch(d, SEG0, 2)
    _rewrite(_txnindex(d, SEG36), 0, last=30)
    runs = [
        run_subprocess(["logdir", "--format", "json", str(d)], cwd=ROOT, env={"KSEG_ENGINE": engine})
        for engine in ("c", "python")
    ]
    assert runs[0].exit_code == runs[1].exit_code == 1, runs[0].errtext
    assert (runs[0].text, runs[0].errtext) == (runs[1].text, runs[1].errtext)
    part = next(row for row in map(json.loads, runs[0].text.splitlines()) if row["type"] == "partition")
    assert len(part["problems"]) == 1 and part["problems"][0].startswith(f"recovery truncates {SEG0}.log at offset ")
    assert len(_notes(runs[0].errtext)) == 1 and f"{SEG36}.txnindex: entry 0" in _notes(runs[0].errtext)[0]


def test_on_an_object_store_the_same(s3, tmp_path: Path) -> None:
    """A copy of the log directory on S3: its ``.txnindex`` files read through the store, as a stream with
    ranged reads -- the same rows and notes as the local run, the paths the URI's."""
    d = txn_dir(tmp_path / "d")
    _rewrite(_txnindex(d, SEG0), 0, version=1)
    _rewrite(_txnindex(d, SEG36), 0, last=30)
    s3.upload_tree(d, "txnload")
    uri = s3.uri("txnload")
    local, remote = _json(d), _json(uri)
    assert local[0] == remote[0] == 1
    assert json.dumps(remote[1]).replace(uri, str(d)) == json.dumps(local[1])
    assert [n.replace(uri, str(d)) for n in _notes(remote[2])] == _notes(local[2]) != []
