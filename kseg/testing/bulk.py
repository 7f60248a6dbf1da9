"""Fast writing of large v2 segments for benchmarks (same bytes as the slow path).

Schema: a ``.log`` of identical-shape magic-2 batches (see ``kseg.testing.v2``)
plus ``.index`` / ``.timeindex`` chosen per batch (see ``kseg.testing.segment``),
trimmed as after ``LogSegment.close``.

Speed comes from encoding one batch's records once.  Record contents are
relative to their batch (offsetDelta ``i``, timestampDelta ``i``), so batch
``b`` differs from the template only in header fields: baseOffset and
partitionLeaderEpoch (outside the CRC) and baseTimestamp/maxTimestamp
(inside it).  Each batch is patched in a preallocated chunk buffer with
precompiled structs and its CRC-32C recomputed (``crc32c`` is hardware
accelerated); the records payload (compressed once, for a codec) is shared.
Batch ``b`` holds offsets ``base + b*n .. base + b*n + n-1`` with timestamps
``start + b*n + i``: every batch raises the max timestamp, so the time
index gets an entry wherever the offset index does.
"""

from __future__ import annotations

import os
import random
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from crc32c import crc32c

from kseg.errors import KsegError
from kseg.testing.codecs import compress
from kseg.testing.segment import segment_file_name
from kseg.testing.v2 import CRC_START, MAGIC_V2, attributes_v2, encode_record, finish_batch

# q baseOffset at byte 0
_BASE_OFFSET = struct.Struct(">q")
# q baseTimestamp | q maxTimestamp at byte 27
_TIMESTAMPS = struct.Struct(">qq")
# I crc at byte 17
_CRC = struct.Struct(">I")
# i partitionLeaderEpoch at byte 12
_EPOCH = struct.Struct(">i")

_WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike "
    "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


@dataclass(frozen=True, slots=True)
class BulkResult:
    """What :func:`write_bulk_segment` wrote, and how fast."""

    log_path: Path
    log_bytes: int
    batches: int
    records: int
    index_entries: int
    time_index_entries: int
    seconds: float

    @property
    def mb_per_second(self) -> float:
        return self.log_bytes / 1e6 / self.seconds if self.seconds > 0 else float("inf")


def _value(rng: random.Random, size: int) -> bytes:
    text = " ".join(rng.choice(_WORDS) for _ in range(size // 4 + 2)).encode()
    return text[:size]


def bulk_template(
    records_per_batch: int,
    value_size: int,
    *,
    codec: str = "none",
    key_size: int | None = 8,
    seed: int = 0,
) -> tuple[bytes, int]:
    """One batch (base offset 0, timestamps 0..n-1) and its records count.

    Keys are ``key_size`` bytes (``None``: null keys), values ``value_size``
    bytes of word text, both from a seeded generator.
    """
    if records_per_batch < 1:
        raise KsegError("records_per_batch must be at least 1")
    rng = random.Random(seed)
    body = bytearray()
    for i in range(records_per_batch):
        key = None if key_size is None else f"k{i:0{max(key_size - 1, 1)}d}".encode()[:key_size]
        body += encode_record(i, i, key, _value(rng, value_size))
    payload = bytes(body) if codec == "none" else compress(codec, bytes(body), MAGIC_V2)
    batch = finish_batch(
        0,
        0,
        attributes_v2(codec, "CreateTime", False, False, False),
        records_per_batch - 1,
        0,
        records_per_batch - 1,
        -1,
        -1,
        -1,
        records_per_batch,
        payload,
    )
    return batch, records_per_batch


def write_bulk_segment(
    path: str | os.PathLike,
    total_bytes: int,
    *,
    records_per_batch: int,
    value_size: int,
    codec: str = "none",
    key_size: int | None = 8,
    base_offset: int = 0,
    start_timestamp: int = 1730000000000,
    partition_leader_epoch: int = 0,
    index_interval_bytes: int = 4096,
    seed: int = 0,
    chunk_bytes: int = 4 * 1024 * 1024,
) -> BulkResult:
    """Write ``<path>/<base>.log`` (+ ``.index``, ``.timeindex``) of at least ``total_bytes``.

    The smallest whole number of batches reaching ``total_bytes`` is written.
    Indexes follow ``LogSegment`` per batch (recovery / one batch per append),
    so the files equal what :class:`~kseg.testing.segment.SegmentWriter` writes
    for the same batches.
    """
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    template, n = bulk_template(records_per_batch, value_size, codec=codec, key_size=key_size, seed=seed)
    size = len(template)
    batches = max(1, -(-total_bytes // size))
    per_chunk = max(1, chunk_bytes // size)
    chunk = bytearray(template * per_chunk)
    view = memoryview(chunk)
    for j in range(per_chunk):  # partitionLeaderEpoch (outside the CRC) is the same in every batch
        _EPOCH.pack_into(chunk, j * size + 12, partition_leader_epoch)

    pack_offset = _BASE_OFFSET.pack_into
    pack_ts = _TIMESTAMPS.pack_into
    pack_crc = _CRC.pack_into
    offset_entries: list[int] = []  # flat: relative offset, position, ...
    time_entries: list[int] = []  # flat: timestamp, relative offset, ...
    since = 0
    last_time_ts = -1
    position = 0
    log_path = directory / segment_file_name(base_offset, ".log")
    with open(log_path, "wb", buffering=0) as log:
        b = 0
        while b < batches:
            count = min(per_chunk, batches - b)
            for j in range(count):
                at = j * size
                first = (b + j) * n
                ts = start_timestamp + first
                pack_offset(chunk, at, base_offset + first)
                pack_ts(chunk, at + 27, ts, ts + n - 1)
                pack_crc(chunk, at + 17, crc32c(view[at + CRC_START : at + size]))
                # LogSegment per-batch index rule; max timestamp rises every batch
                if since > index_interval_bytes:
                    offset_entries += (first + n - 1, position)
                    if ts + n - 1 > last_time_ts:
                        time_entries += (ts + n - 1, first + n - 1)
                        last_time_ts = ts + n - 1
                    since = 0
                since += size
                position += size
            log.write(view[: count * size])
            b += count
    # close(): the final time-index entry if the max grew, then trimmed files
    final_ts = start_timestamp + batches * n - 1
    if final_ts > last_time_ts:
        time_entries += (final_ts, batches * n - 1)
    k = len(offset_entries) // 2
    t = len(time_entries) // 2
    (directory / segment_file_name(base_offset, ".index")).write_bytes(
        struct.pack(f">{2 * k}i", *offset_entries)  # k entries: i relativeOffset | i position
    )
    (directory / segment_file_name(base_offset, ".timeindex")).write_bytes(
        struct.pack(">" + "qi" * t, *time_entries)  # t entries: q timestamp | i relativeOffset
    )
    del view
    return BulkResult(log_path, position, batches, batches * n, k, t, time.perf_counter() - started)


def main(argv: list[str] | None = None) -> None:
    """``python -m kseg.testing.bulk DIR [--mib N] ...``: write a bulk segment, print the rate."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m kseg.testing.bulk", description=main.__doc__)
    p.add_argument("directory")
    p.add_argument("--mib", type=int, default=1024, help="size of the .log in MiB (default 1024)")
    p.add_argument("--records-per-batch", type=int, default=137)
    p.add_argument("--value-size", type=int, default=100)
    p.add_argument("--codec", default="none", choices=["none", "gzip", "snappy", "lz4", "zstd"])
    args = p.parse_args(argv)
    r = write_bulk_segment(
        args.directory,
        args.mib * 1024 * 1024,
        records_per_batch=args.records_per_batch,
        value_size=args.value_size,
        codec=args.codec,
    )
    print(
        f"{r.log_path}: {r.log_bytes} B, {r.batches} batches, {r.records} records, "
        f"{r.index_entries} index / {r.time_index_entries} time-index entries in {r.seconds:.2f} s "
        f"({r.mb_per_second:.0f} MB/s)"
    )


if __name__ == "__main__":
    main()
