"""A tiered segment's ``.log`` read through its manifest (kseg.storage.tiered): any range reads the original
bytes, fetching only the chunks it covers and holding one chunk at a time."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kseg.storage import files, tiered
from kseg.storage.remote_keys import object_key
from kseg.testing.aiven import write_aiven_segment
from tests.conftest import CORPUS_DATA

TOPIC_ID, SEGMENT_ID = "MWJ6FHTfRYy67jzwZdeqSQ", "tqimKeZwStOEOwRzT3L5oQ"
LOG = CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log"


def _write(root: Path, compression: bool) -> str:
    def key_of(suffix: str) -> str:
        return str(root / object_key("aiven", "", "t", TOPIC_ID, 0, 0, SEGMENT_ID, suffix))

    write_aiven_segment(
        Path("/"), LOG, key_of, topic="t", topic_id=TOPIC_ID, partition=0, segment_id=SEGMENT_ID,
        end_offset=250, chunk_size=1000, compression=compression,
    )  # fmt: skip
    return key_of("log")


@pytest.mark.parametrize("compression", [False, True])
def test_ranges_read_the_original_bytes_and_only_their_chunks(tmp_path: Path, compression: bool) -> None:
    tiered.configure({})
    path = _write(tmp_path, compression)
    original = LOG.read_bytes()
    f = files.open_readonly(path, buffering=0)
    assert isinstance(f, tiered.TieredLogFile) and files.size_of(f) == len(original) == f.size
    rng = random.Random(7)
    for _ in range(200):
        start = rng.randrange(len(original))
        n = rng.randrange(1, 5000)
        f.seek(start)
        assert f.read(n) == original[start : start + n]
    before = f.chunks_read
    f.seek(2500)
    assert f.read(100) == original[2500:2600]
    if compression:  # the plain object is read straight, no chunk decoded
        assert f.chunks_read - before <= 1
        assert f._chunk is not None and len(f._chunk[1]) == 1000  # one chunk held, never the segment
    f.seek(len(original))
    assert f.read(10) == b""
    f.close()


def test_indexes_are_cut_from_the_indexes_object(tmp_path: Path) -> None:
    tiered.configure({})
    path = _write(tmp_path, True)
    index = path[: -len(".log")] + ".index"
    assert files.exists(index) and files.isfile(index)
    assert not files.exists(path[: -len(".log")] + ".txnindex")  # the segment has none: the manifest says null
    assert files.read_small_file(index) == LOG.with_suffix(".index").read_bytes()
    assert files.read_small_file(path[: -len(".log")] + ".timeindex") == LOG.with_suffix(".timeindex").read_bytes()


def test_a_segment_without_a_manifest_is_a_plain_file(tmp_path: Path) -> None:
    tiered.configure({})
    path = tmp_path / object_key("aiven", "", "t", TOPIC_ID, 0, 0, SEGMENT_ID, "log")
    path.parent.mkdir(parents=True)
    path.write_bytes(LOG.read_bytes())
    with files.open_readonly(str(path)) as f:
        assert not isinstance(f, tiered.TieredLogFile)
