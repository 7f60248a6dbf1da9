"""The compiled engine's window loop (``dump_window``), shared by the dump's two sinks.

``kseg.render.text.TextSink`` writes Kafka's text through it and ``kseg.render.jsonl.JsonSink``
JSON Lines; both hand it the same window and get back where it stopped (``DumpSink.window_lines``).
"""

from __future__ import annotations

from typing import Callable

from kseg import engine
from kseg.format import timestamp_type
from kseg.format.v2_records import WINDOW_SHALLOW, WINDOW_SIZES, WINDOW_STRINGS
from kseg.render.sink import FLUSH_AT, BufferedWriter

# the values the engine's window loop shares with the dump (checked before its function is taken)
engine.check({"WINDOW_SHALLOW": WINDOW_SHALLOW, "WINDOW_SIZES": WINDOW_SIZES, "WINDOW_STRINGS": WINDOW_STRINGS})
#: the engine's ``dump_window``, None without the engine
C_WINDOW = None if engine.C is None else engine.C.dump_window
#: the most bytes of lines the window loop buffers before it returns (memory, and the progress bar's steps)
WINDOW_OUT = FLUSH_AT


def window_lines(
    sink: BufferedWriter,
    parts_fn: Callable | None,
    json: int,
    view,
    ws: int,
    wl: int,
    pos: int,
    end: int,
    mode: int,
    last_offset: int,
    gap: bool,
    limit: int,
    codecs: Callable,
) -> tuple[int, int, bool]:
    """``DumpSink.window_lines`` through the engine, written to ``sink``: Kafka's text (``json`` 0, the
    batch line's constant parts from ``parts_fn``) or JSON rows of schema version ``json``; lz4 and zstd
    batches decompressed to at most ``limit`` bytes (the dump's decompression bound) by the libraries
    ``codecs`` gives (:class:`kseg.format.compression.WindowCodecs`)."""
    assert C_WINDOW is not None
    data, pos, last_offset, full = C_WINDOW(
        view,
        ws,
        wl,
        pos,
        end,
        mode,
        last_offset,
        gap,
        parts_fn,
        timestamp_type.BY_FLAG,
        WINDOW_OUT,
        json,
        limit,
        codecs,
    )
    if data:
        sink.write_encoded([data])
    return pos, last_offset, full
