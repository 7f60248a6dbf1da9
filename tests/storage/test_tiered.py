"""A tiered segment's ``.log`` read through its manifest (kseg.storage.tiered): any range reads the original
bytes, fetching only the chunks it covers and holding one chunk at a time."""

from __future__ import annotations

import base64
import json
import os
import random
import tracemalloc
from pathlib import Path

import pytest
import zstandard

from kseg.errors import InputError
from kseg.format import rsm_manifest as tiered_manifest
from kseg.format.rsm_manifest import encode_sizes
from kseg.storage import files, tiered
from kseg.storage.context import ReadContext
from kseg.storage.private_keys import read_keys
from kseg.storage.remote_keys import object_key
from kseg.storage.stores.discover import store_for, store_of
from kseg.testing.aiven import KeyPair, new_key_pair, write_aiven_segment
from tests.conftest import CORPUS_DATA

TOPIC_ID, SEGMENT_ID = "MWJ6FHTfRYy67jzwZdeqSQ", "tqimKeZwStOEOwRzT3L5oQ"
LOG = CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log"


def _write(root: Path, compression: bool, key_pair: KeyPair | None = None) -> str:
    def key_of(suffix: str) -> str:
        return str(root / object_key("aiven", "", "t", TOPIC_ID, 0, 0, SEGMENT_ID, suffix))

    write_aiven_segment(
        Path("/"), LOG, key_of, topic="t", topic_id=TOPIC_ID, partition=0, segment_id=SEGMENT_ID,
        end_offset=250, chunk_size=1000, compression=compression, key_pair=key_pair,
    )  # fmt: skip
    return key_of("log")


@pytest.mark.parametrize("compression", [False, True])
def test_ranges_read_the_original_bytes_and_only_their_chunks(tmp_path: Path, compression: bool) -> None:
    path = _write(tmp_path, compression)
    original = LOG.read_bytes()
    f = files.open_readonly(path, buffering=0, store=store_of(path))
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
    path = _write(tmp_path, True)
    index = path[: -len(".log")] + ".index"
    assert files.exists(index, store=store_of(index)) and files.isfile(index, store=store_of(index))
    assert not files.exists(
        path[: -len(".log")] + ".txnindex", store=store_of(path[: -len(".log")] + ".txnindex")
    )  # the segment has none: the manifest says null
    assert files.read_small_file(index, store=store_of(index)) == LOG.with_suffix(".index").read_bytes()
    assert (
        files.read_small_file(path[: -len(".log")] + ".timeindex", store=store_of(path[: -len(".log")] + ".timeindex"))
        == LOG.with_suffix(".timeindex").read_bytes()
    )


def test_a_segment_without_a_manifest_is_a_plain_file(tmp_path: Path) -> None:
    path = tmp_path / object_key("aiven", "", "t", TOPIC_ID, 0, 0, SEGMENT_ID, "log")
    path.parent.mkdir(parents=True)
    path.write_bytes(LOG.read_bytes())
    with files.open_readonly(str(path), store=store_of(str(path))) as f:
        assert not isinstance(f, tiered.TieredLogFile)


def _edit_manifest(path: str, change) -> None:
    manifest = Path(path[: -len(".log")] + ".rsm-manifest")
    obj = json.loads(manifest.read_bytes())
    change(obj)
    manifest.write_text(json.dumps(obj))


def _read_to_end(f) -> bytes:
    out = bytearray()
    while chunk := f.read(700):
        out += chunk
    return bytes(out)


@pytest.mark.parametrize("compression", [False, True])
def test_an_object_longer_than_its_chunks_fails_at_the_last_chunk(tmp_path: Path, compression: bool) -> None:
    # the bytes after the manifest's last chunk were never read, and the segment was called clean
    path = _write(tmp_path, compression)
    Path(path).write_bytes(Path(path).read_bytes() + b"x" * 100)
    original = LOG.read_bytes()
    last = (len(original) - 1) // 1000 * 1000
    with files.open_readonly(path, buffering=0, store=store_of(path)) as f:
        assert f.read(last) == original[:last]  # every chunk before the last reads as ever
        with pytest.raises(tiered.ChunkError, match=r"chunk 28: the object is \d+ bytes, the manifest's 29 chunks end"):
            _read_to_end(f)


def test_an_index_past_the_indexes_object_is_refused_before_it_is_read(tmp_path: Path) -> None:
    # a span of 2 GiB was read with read(2^31-1): the allocation came before the object's size was known
    path = _write(tmp_path, True)
    end = Path(path[: -len(".log")] + ".indexes").stat().st_size  # after every other index: no overlap
    _edit_manifest(path, lambda o: o["segmentIndexes"]["offset"].update(position=end, size=(1 << 31) - 1 - end))
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"offset index: the object ends at byte \d+, the manifest says"):
            files.read_small_file(
                path[: -len(".log")] + ".index", limit=1 << 31, store=store_of(path[: -len(".log")] + ".index")
            )
        assert tracemalloc.get_traced_memory()[1] < 16 << 20
    finally:
        tracemalloc.stop()


def test_an_index_past_its_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """An index in ``.indexes`` is read whole and decrypted: a span past 32 MiB (in a sparse object that
    holds it) is refused naming the bound, not allocated."""
    path = _write(tmp_path, True)
    indexes = Path(path[: -len(".log")] + ".indexes")
    end = indexes.stat().st_size
    size = tiered.INDEX.max_bytes + 1
    _edit_manifest(path, lambda o: o["segmentIndexes"]["offset"].update(position=end, size=size))
    os.truncate(indexes, end + size)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=rf"offset index of {size} bytes: kseg reads tiered segment index files"):
            files.read_small_file(
                path[: -len(".log")] + ".index", limit=1 << 31, store=store_of(path[: -len(".log")] + ".index")
            )
        assert tracemalloc.get_traced_memory()[1] < 16 << 20
    finally:
        tracemalloc.stop()


def test_a_manifest_that_is_a_directory_is_an_error_not_no_manifest(tmp_path: Path) -> None:
    # a directory named .rsm-manifest made the .log read as a plain segment (its zstd frames as batches)
    path = _write(tmp_path, True)
    manifest = Path(path[: -len(".log")] + ".rsm-manifest")
    manifest.unlink()
    manifest.mkdir()
    with pytest.raises(InputError, match="(?i)is a directory"):
        files.open_readonly(path, buffering=0, store=store_of(path))


def _one_chunk_segment(tmp_path: Path, frame: bytes, chunk_size: int) -> str:
    """A compressed segment of one chunk of ``chunk_size`` original bytes, stored as ``frame``."""
    path = _write(tmp_path, True)
    Path(path).write_bytes(frame)
    packed = zstandard.ZstdCompressor(write_content_size=True).compress(encode_sizes([len(frame)]))
    _edit_manifest(
        path,
        lambda o: o["chunkIndex"].update(
            originalChunkSize=chunk_size,
            originalFileSize=chunk_size,
            transformedChunks=base64.b64encode(packed).decode(),
        ),
    )
    return path


def test_a_chunk_is_decompressed_to_what_its_frame_gives_never_its_declared_size(tmp_path: Path) -> None:
    # a frame without a content size was decompressed with max_output_size=<chunk size>: 1 GiB allocated
    # for a manifest declaring chunks of 2^30-1 bytes, whatever the frame held
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(b"a" * 1000)
    path = _one_chunk_segment(tmp_path, frame, tiered_manifest.MAX_CHUNK_SIZE)
    tracemalloc.start()
    try:
        with files.open_readonly(path, buffering=0, store=store_of(path)) as f:
            with pytest.raises(tiered.ChunkError, match="chunk 0: 1000 bytes decoded, the manifest says 1073741823"):
                f.read(100)
        assert tracemalloc.get_traced_memory()[1] < 16 << 20
    finally:
        tracemalloc.stop()


def test_a_frame_larger_than_its_chunk_is_refused_when_it_passes_the_size(tmp_path: Path) -> None:
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(bytes(50 << 20))  # 50 MiB of zeros
    path = _one_chunk_segment(tmp_path, frame, 4096)
    with files.open_readonly(path, buffering=0, store=store_of(path)) as f:
        with pytest.raises(tiered.ChunkError, match="chunk 0: the zstd frame decompresses past the manifest's 4096"):
            f.read(100)


def test_a_data_key_that_is_no_aes_256_key_is_refused_as_a_wrong_key_is(tmp_path: Path) -> None:
    # OAEP unwrapped 5 bytes with the right key pair: AESGCM refused them with a ValueError (internal error)
    from cryptography.hazmat.primitives import serialization

    from kseg.format import oaep

    pair = new_key_pair("kp", bits=1024 + 512)
    key_file = tmp_path / "kp.pem"
    key_file.write_bytes(pair.private_pem)
    log = _write(tmp_path / "tree", False, pair)

    def key_of(suffix: str) -> str:
        return log[: -len("log")] + suffix

    public = serialization.load_pem_public_key(pair.public_pem).public_numbers()  # type: ignore[union-attr]
    wrapped = base64.b64encode(oaep.encrypt(b"12345", public.n, public.e)).decode()
    _edit_manifest(key_of("log"), lambda o: o["encryption"].update(dataKey=f"kp:{wrapped}"))
    keyed = store_for(log, ReadContext(keys=read_keys({"kp": str(key_file)})))
    for suffix in ("log", "index"):  # one line naming the object, exit 2, as a key that does not unwrap
        with pytest.raises(InputError, match="kp unwraps a data key of 5 bytes, expected 32") as caught:
            files.open_readonly(key_of(suffix), buffering=0, store=keyed)
        assert caught.value.path == key_of("log" if suffix == "log" else "indexes")
