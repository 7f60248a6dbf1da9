"""Mutations of real segments and index files, for the fuzz suite.

Each mutator takes the file's bytes, the batch boundaries found in it and a
``random.Random``, and returns new bytes.  They aim at what breaks readers:
lengths that lie, truncation at and inside batch boundaries, varints that
never end, record counts that lie, nested legacy compression and payloads
that expand far beyond any bound.
"""

from __future__ import annotations

import functools
import gzip
import random
import struct
from collections.abc import Callable

from kseg.testing.framing import iter_batch_infos

LENGTHS = [0, 1, 13, 14, 48, 60, -1, -(2**31), 2**31 - 1, 2**30]


def boundaries(data: bytes) -> list[tuple[int, int]]:
    """``(position, size)`` of every whole batch, walking the length fields."""
    try:
        return [(b.position, b.size) for b in iter_batch_infos(data)]
    except Exception:  # the walker refuses what kseg must survive; fuzz the bytes anyway
        return []


def bit_flips(data: bytes, batches, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if out:
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def byte_run(data: bytes, batches, rng: random.Random) -> bytes:
    out = bytearray(data)
    if out:
        i = rng.randrange(len(out))
        n = rng.randint(1, 64)
        out[i : i + n] = bytes([rng.choice([0, 0xFF, 0x80, rng.randrange(256)])]) * n
    return bytes(out)


def truncate_at_boundary(data: bytes, batches, rng: random.Random) -> bytes:
    if not batches:
        return data[: rng.randrange(len(data) + 1)]
    pos, size = rng.choice(batches)
    cut = rng.choice(
        [pos, pos + 1, pos + 11, pos + 12, pos + 17, pos + 30, pos + 60, pos + 61, pos + size // 2, pos + size - 1]
    )
    return data[: min(cut, len(data))]


Mutator = Callable[[bytes, list[tuple[int, int]], random.Random], bytes]


def _in_a_batch(edit: Callable[[bytearray, int, int, random.Random], None]) -> Mutator:
    """A mutator that lets ``edit(out, position, size, rng)`` change a copy of the bytes at one batch
    picked at random; the bytes unchanged where no batch was found."""

    @functools.wraps(edit)
    def mutator(data: bytes, batches: list[tuple[int, int]], rng: random.Random) -> bytes:
        if not batches:
            return data
        pos, size = rng.choice(batches)
        out = bytearray(data)
        edit(out, pos, size, rng)
        return bytes(out)

    return mutator


@_in_a_batch
def lying_length(out: bytearray, pos: int, size: int, rng: random.Random) -> None:
    if pos + 12 <= len(out):
        out[pos + 8 : pos + 12] = struct.pack(">i", rng.choice(LENGTHS))


@_in_a_batch
def lying_count(out: bytearray, pos: int, size: int, rng: random.Random) -> None:
    """v2 recordsCount (offset 57) set to a lie; also the magic byte, sometimes."""
    if pos + 61 <= len(out) and out[pos + 16] == 2:
        out[pos + 57 : pos + 61] = struct.pack(">i", rng.choice([0, -1, 1, 2**31 - 1, 10**6, 3]))
    elif pos + 17 <= len(out):
        out[pos + 16] = rng.choice([0, 1, 2, 3, 0x7F, 0xFF])


@_in_a_batch
def endless_varint(out: bytearray, pos: int, size: int, rng: random.Random) -> None:
    """Overwrite the first record's length (after a v2 header) with 10+ continuation bytes."""
    start = pos + 61
    if start + 12 <= pos + size and out[pos + 16] == 2:
        out[start : start + 12] = b"\xff" * rng.randint(10, 12)


@_in_a_batch
def attributes(out: bytearray, pos: int, size: int, rng: random.Random) -> None:
    """Random codec / control / timestamp-type bits in a batch's attributes."""
    at = pos + 22 if out[pos + 16] == 2 else pos + 17
    if at < len(out):
        out[at] = rng.randrange(256)


def _v2(payload: bytes, codec: int, count: int, base: int = 0) -> bytes:
    import crc32c

    body = struct.pack(">hiqqqhii", codec, count - 1, 1, 1, -1, -1, -1, count) + payload
    return struct.pack(">qiibI", base, len(body) + 9, 0, 2, crc32c.crc32c(body)) + body


@functools.lru_cache(maxsize=None)
def _bomb_payload(codec: str) -> bytes:
    from kseg.testing import codecs

    return codecs.compress(codec, b"\0" * (64 << 20), 2)


def bomb(data: bytes, batches, rng: random.Random) -> bytes:
    """Append a batch whose payload decompresses to 64 MiB."""
    from kseg.testing import codecs

    codec = rng.choice(["gzip", "snappy", "lz4", "zstd"])
    return data + _v2(_bomb_payload(codec), codecs.codec_id(codec), rng.choice([1, 1000, 2**31 - 1]))


def nested_legacy(data: bytes, batches, rng: random.Random) -> bytes:
    """A v1 gzip wrapper whose inner message is itself a gzip wrapper."""
    import zlib

    def message(attrs: int, value: bytes) -> bytes:
        body = struct.pack(">bbq", 1, attrs, 1) + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
        return struct.pack(">I", zlib.crc32(body)) + body

    inner = message(0, b"x" * 10)
    entry = struct.pack(">qi", 0, len(inner)) + inner
    for _ in range(rng.randint(1, 3)):
        wrapped = message(1, gzip.compress(entry))
        entry = struct.pack(">qi", 0, len(wrapped)) + wrapped
    return data + entry


LOG_MUTATORS = [
    bit_flips,
    byte_run,
    truncate_at_boundary,
    lying_length,
    lying_count,
    endless_varint,
    attributes,
    bomb,
    nested_legacy,
]
INDEX_MUTATORS = [bit_flips, byte_run]


def mutate_index(data: bytes, rng: random.Random) -> bytes:
    choice = rng.randrange(4)
    if choice == 0:
        return bit_flips(data, [], rng)
    if choice == 1:
        return data[: rng.randrange(len(data) + 1)]
    if choice == 2:
        return data + b"\0" * rng.choice([1, 7, 8, 12, 4096])
    return byte_run(data, [], rng)


# numbers that break a checkpoint's parse: past int and long, signs, not numbers at all
TEXT_NUMBERS = [
    b"-1",
    b"-0",
    b"+5",
    b"2147483648",
    b"-2147483649",
    b"9223372036854775808",
    b"1" * 40,
    b"x",
    b"",
    b"\xd9\xa3",
]


def mutate_text(data: bytes, rng: random.Random) -> bytes:
    """A broker's text file (a checkpoint, ``meta.properties``, ``partition.metadata``, the clean-shutdown
    JSON) damaged the ways a crash, a disk or a hand edit damages it: a number replaced, a line dropped or
    repeated, a count that lies, bytes that are not UTF-8, a cut, CR line ends, a flood of lines."""
    lines = data.split(b"\n")
    choice = rng.randrange(8)
    if choice == 0:  # a number (the version, the count, an offset, an epoch, a node id) replaced
        spots = [i for i, line in enumerate(lines) if any(c in b"0123456789" for c in line)]
        if spots:
            i = rng.choice(spots)
            words = lines[i].split(b" ")
            j = rng.randrange(len(words))
            words[j] = rng.choice(TEXT_NUMBERS) if rng.random() < 0.8 else words[j] + b"=" + words[j]
            lines[i] = b" ".join(words)
        return b"\n".join(lines)
    if choice == 1 and lines:
        del lines[rng.randrange(len(lines))]
        return b"\n".join(lines)
    if choice == 2 and lines:
        i = rng.randrange(len(lines))
        lines[i:i] = [lines[i]] * rng.choice([1, 2, 1000])
        return b"\n".join(lines)
    if choice == 3:
        return b"\n".join(lines[:1] + [rng.choice([b"2147483647", b"1000000000", b"-5"])] + lines[2:])
    if choice == 4:
        i = rng.randrange(len(data) + 1)
        return data[:i] + rng.choice([b"\xff\xfe", b"\x00", b"\xc3", b"\r"]) + data[i:]
    if choice == 5:
        return data.replace(b"\n", b"\r\n")
    if choice == 6:
        return data[: rng.randrange(len(data) + 1)]
    return bit_flips(data, [], rng)


# What a partition directory's name can become by hand or by a copy: the same partition under another
# spelling (Integer.parseInt reads them all as the number), another partition, or no partition name at all.
NAME_EDITS: tuple[Callable[[str, str], str], ...] = (
    lambda topic, n: f"{topic}-0{n}",
    lambda topic, n: f"{topic}-+{n}",
    lambda topic, n: f"{topic}-" + "".join(chr(0x0660 + int(c)) for c in n),  # Arabic-Indic digits
    lambda topic, n: f"{topic}-" + "".join(chr(0xFF10 + int(c)) for c in n),  # fullwidth digits
    lambda topic, n: f"{topic}-\u00b2",  # a superscript: no decimal digit to Java
    lambda topic, n: f"{topic}-2147483648",  # past an int
    lambda topic, n: f"{topic}-{n} ",
    lambda topic, n: f"{topic}{n}",
    lambda topic, n: f"-{n}",
    lambda topic, n: f"{topic}-{n}.0123456789abcdef0123456789abcdef-delete",
    lambda topic, n: f"{topic}-{n}-future",
)


def mutate_dir_name(name: str, rng: random.Random) -> str:
    """Another name for the partition directory ``name`` (``<topic>-<n>``), from :data:`NAME_EDITS`."""
    topic, _, number = name.rpartition("-")
    return rng.choice(NAME_EDITS)(topic or name, number if number.isdecimal() and number.isascii() else "0")
