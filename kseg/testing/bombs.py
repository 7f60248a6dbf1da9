"""Hostile but valid inputs that cost memory when read naively (issue 19): the memory benchmarks' and tests' inputs.

Each writer takes a size, so tests build small versions at test time and
``benchmarks/memory.py`` the full-size ones the issue measured:

* :func:`write_null_bomb` -- one zstd batch of ``count`` records with null key
  and value (4 M records: 3.2 MB on disk, 39 MB decompressed, inside the
  default 40 MiB decompression bound); ``codec="none"`` writes the same
  records uncompressed, the baseline that streams;
* :func:`write_random_indexes` -- a segment whose ``.index`` / ``.timeindex``
  are random bytes of a given size (Kafka preallocates 10 MiB indexes);
* :func:`write_snapshot_bomb` -- a valid producer snapshot with ``count``
  producers (2 M: 92 MB);
* :func:`write_many_partitions` -- ``count`` partition directories of one
  record each (what ``export`` splits into);
* :func:`write_metadata_churn` -- a ``__remote_log_metadata`` partition of
  ``count`` remote segments each copied and deleted (four records each), so
  that none is live at the end (issue 31: 10^6 records).

Bytes are those of :mod:`kseg.testing.writer` (``MemoryRecordsBuilder``,
``ProducerStateManager.writeSnapshot``); the record bodies are laid out
directly because millions of :class:`~kseg.testing.v2.RecordSpec` objects
would cost what the inputs are meant to test.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from crc32c import crc32c

from kseg.testing.codecs import compress
from kseg.testing.partition import SNAPSHOT_ENTRY, SNAPSHOT_HEADER, UINT32
from kseg.testing.segment import segment_file_name, write_segment
from kseg.testing.v2 import MAGIC_V2, RecordSpec, attributes_v2, build_v2_batch, finish_batch, varint

TIMESTAMP = 1730000000000


def null_records(count: int) -> bytes:
    """``count`` ``DefaultRecord`` s with null key and value, no headers, timestamp delta 0,
    offset deltas 0..count-1."""
    out = bytearray()
    for delta in range(count):
        od = varint(delta)
        out += varint(5 + len(od))  # length: attributes, tsDelta, offsetDelta, key -1, value -1, headers 0
        out += b"\x00\x00"
        out += od
        out += b"\x01\x01\x00"
    return bytes(out)


def null_bomb_batch(count: int, codec: str = "zstd", base_offset: int = 0) -> bytes:
    """One v2 batch of ``count`` null records, compressed with ``codec`` (as ``build_v2_batch`` would write it)."""
    body = null_records(count)
    payload = body if codec == "none" else compress(codec, body, MAGIC_V2)
    attrs = attributes_v2(codec, "CreateTime", False, False, False)
    return finish_batch(base_offset, 0, attrs, count - 1, TIMESTAMP, TIMESTAMP, -1, -1, -1, count, payload)


def write_null_bomb(directory: str | os.PathLike, count: int, codec: str = "zstd") -> Path:
    """A partition directory holding one segment of one :func:`null_bomb_batch` and a small batch after it
    (so lookups have an offset past the bomb); returns the ``.log`` path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tail = build_v2_batch([RecordSpec(b"k", b"v", TIMESTAMP + 1)], base_offset=count)
    write_segment(directory, [[null_bomb_batch(count, codec)], [tail]])
    return directory / segment_file_name(0, ".log")


def write_random_indexes(
    directory: str | os.PathLike, size: int, seed: int = 19, sparse: bool = False, head: int = 1 << 20
) -> Path:
    """A one-batch segment whose ``.index`` and ``.timeindex`` are ``size`` random bytes (a sparse file of
    zeros past the first ``head`` bytes with ``sparse``); returns the ``.log`` path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_segment(directory, [[build_v2_batch([RecordSpec(b"k", b"v", TIMESTAMP)])]])
    rng = random.Random(seed)
    for suffix in (".index", ".timeindex"):
        path = directory / segment_file_name(0, suffix)
        with open(path, "wb") as f:
            head = size if not sparse else min(size, head)
            step = 1 << 20
            for at in range(0, head, step):
                f.write(rng.randbytes(min(step, head - at)))
            f.truncate(size)
    return directory / segment_file_name(0, ".log")


def write_snapshot_bomb(directory: str | os.PathLike, count: int, offset: int = 1) -> Path:
    """A one-segment partition and a valid ``<offset>.snapshot`` of ``count`` idempotent producers (46 bytes
    each, no open transaction); returns the snapshot's path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_segment(directory, [[build_v2_batch([RecordSpec(b"k", b"v", TIMESTAMP)])]])
    path = directory / segment_file_name(offset, ".snapshot")
    entry = SNAPSHOT_ENTRY
    body = bytearray(SNAPSHOT_HEADER.pack(1, 0, count))
    body += b"".join(entry.pack(pid, 0, 0, 0, 0, TIMESTAMP, -1, -1) for pid in range(1000, 1000 + count))
    UINT32.pack_into(body, 2, crc32c(memoryview(body)[6:]))
    path.write_bytes(body)
    return path


def write_many_partitions(root: str | os.PathLike, count: int, topic: str = "t") -> Path:
    """``count`` partition directories ``<topic>-<n>`` under ``root``, each one segment of one record."""
    root = Path(root)
    batch = build_v2_batch([RecordSpec(b"k", b"v", TIMESTAMP)])
    for n in range(count):
        write_segment(root / f"{topic}-{n}", [[batch]])
    return root


def write_metadata_churn(directory: str | os.PathLike, count: int, records_per_batch: int = 1000) -> Path:
    """A ``__remote_log_metadata-<n>`` directory of ``count`` segments of one topic-partition, each added,
    finished, deletion started and finished (``4 * count`` records, ``records_per_batch`` a batch): the
    four values are built once and each segment's id laid into them."""
    from kseg.testing import remote_metadata as rm

    template = rm.SegmentId("Wd7Ynb0xRJ2-8HlQ_3aZ1g", "orders", 0, "AAAAAAAAAAAAAAAAAAAAAQ")
    raw = rm.uuid_bytes(template.id)
    states = (rm.COPY_SEGMENT_FINISHED, rm.DELETE_SEGMENT_STARTED, rm.DELETE_SEGMENT_FINISHED)
    values = [rm.segment_metadata(template, 0, 99)] + [rm.segment_update(template, s) for s in states]
    assert all(v.count(raw) == 1 for v in values)
    batches, pending, offset = [], [], 0
    for i in range(count):
        seg = (i + 1).to_bytes(16, "big")
        pending += [RecordSpec(None, v.replace(raw, seg), TIMESTAMP) for v in values]
        if len(pending) >= records_per_batch or i == count - 1:
            batches.append(build_v2_batch(pending, base_offset=offset))
            offset, pending = offset + len(pending), []
    path = Path(directory)
    write_segment(path, [batches])
    return path
