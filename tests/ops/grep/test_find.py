"""The compiled engine's ``find`` (grep's search of the reader's window for a query's literal bytes) answers
what ``bytes.find`` answers, on every kind of buffer the window is."""

from __future__ import annotations

import mmap
import random

import pytest

from kseg import engine


@pytest.mark.skipif(engine.C is None, reason="the compiled engine is not built")
def test_find_is_bytes_find() -> None:
    assert engine.C is not None
    rng = random.Random(36)
    data = bytes(rng.choice(b"ab\x00\xff") for _ in range(4096))
    window = mmap.mmap(-1, len(data))
    window.write(data)
    view = memoryview(window)
    try:
        for buffer in (data, bytearray(data), window, view):
            for _ in range(500):
                needle = bytes(rng.choice(b"ab\x00\xff") for _ in range(rng.randrange(0, 9)))
                start, end = rng.randrange(0, 4200), rng.randrange(0, 4200)
                assert engine.C.find(buffer, needle, start, end) == data.find(needle, start, end)
            assert engine.C.find(buffer, data[-7:], 0, len(data)) == data.find(data[-7:])
            assert engine.C.find(buffer, b"abc" * 2000, 0, len(data)) == -1
        with pytest.raises(ValueError):
            engine.C.find(data, b"a", -1, 10)
    finally:
        view.release()
        window.close()
