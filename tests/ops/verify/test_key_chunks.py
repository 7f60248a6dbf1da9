"""The index keys read a window at a time (issue 34): a :class:`KeyStream` over :class:`KeyChunks` -- int64
arrays the engine's ``index_keys`` decodes from an index file's windows, or lists of ints where an offset
passes int64 -- reads what it reads over the same keys one by one: the same chunks of keys, the same cursor
and refills, a descent seen in the same chunk, keys past int64 ending the keys read the same way."""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import pytest

from kseg import engine
from kseg.format.indexes import OFFSET_ENTRY, TIME_ENTRY, OffsetIndexView, TimeIndexView
from kseg.limits import INT64_MAX
from kseg.ops.verify.keys import CHUNK, KeyChunks, KeyStream, index_keys
from kseg.ops.verify.result import IndexFiles


def _walk(stream: KeyStream, rnd: random.Random) -> list[tuple]:
    """Everything a pass observes of a stream: each skip's answer and head, each refill's keys."""
    seen = []
    limit = -10
    while True:
        limit += rnd.randint(0, 4000)
        seen.append((stream.skip(limit), stream.head(), stream.more, stream.ascending, len(stream.keys)))
        if stream.head() > (1 << 63) - 1:
            break
    seen.append(stream.ascends())
    return seen


def _windows(keys: list[int], rnd: random.Random) -> list:
    out, i = [], 0
    while i < len(keys):
        n = rnd.choice([1, 7, CHUNK - 1, CHUNK, CHUNK + 3, 3 * CHUNK])
        piece = keys[i : i + n]
        as_list = rnd.random() < 0.2 or any(k > INT64_MAX for k in piece)
        out.append(piece if as_list else array("q", piece))
        i += n
    return out


@pytest.mark.parametrize("seed", range(30))
def test_chunks_read_as_the_keys_one_by_one(seed: int) -> None:
    rnd = random.Random(seed)
    n = rnd.choice([0, 5, CHUNK, 3 * CHUNK + 11, 40_000])
    keys = sorted(rnd.randrange(0, 10 * n + 10) for _ in range(n))
    if n and rnd.random() < 0.5:  # a descent somewhere (a damaged index)
        i = rnd.randrange(n)
        keys[i] = max(0, keys[i] - rnd.randint(1, 1000))
    if n and rnd.random() < 0.3:  # keys past int64 at the end
        keys[-3:] = [INT64_MAX + 1 + k for k in range(len(keys[-3:]))]
    one_by_one = _walk(KeyStream(iter(keys)), random.Random(seed))
    chunked = _walk(KeyStream(KeyChunks(iter(_windows(keys, rnd)))), random.Random(seed))
    assert chunked == one_by_one
    assert list(KeyChunks(iter(_windows(keys, rnd)))) == keys


@pytest.mark.skipif(engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)")
@pytest.mark.parametrize("base", [0, 1 << 40, INT64_MAX - 50_000])
def test_index_keys_read_by_the_engine_as_in_python(monkeypatch, tmp_path: Path, base: int) -> None:
    """The keys of an .index and a .timeindex read with and without the engine; near 2^63 some windows' offsets
    pass int64 and come as Python ints."""
    n = 300_000  # past one 1 MiB window of each file
    rel = sorted(random.Random(1).sample(range(1 << 30), n))
    offsets = tmp_path / "index"
    offsets.write_bytes(b"".join(OFFSET_ENTRY.pack(r, 8 * i) for i, r in enumerate(rel)))
    times = tmp_path / "timeindex"
    times.write_bytes(b"".join(TIME_ENTRY.pack(1000 + i, r) for i, r in enumerate(rel)))

    def keys() -> tuple[list[int], ...]:
        files = IndexFiles(
            OffsetIndexView(offsets.read_bytes(), base, str(offsets)),
            TimeIndexView(times.read_bytes(), base, str(times)),
        )
        k = index_keys(files)
        return (list(k.positions), *[list(o) for o in k.offsets])

    fast = keys()
    with monkeypatch.context() as m:
        m.setattr(engine, "C", None)
        assert keys() == fast
    assert fast[0] == [8 * i for i in range(n)]
    assert fast[1] == fast[2] == [base + r for r in rel]
