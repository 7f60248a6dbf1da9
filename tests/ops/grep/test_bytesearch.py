"""``stream_holds``: the literals searched in a stream of decompressed pieces, one straddling two or more
pieces found too, every split point of the stream tried."""

from __future__ import annotations

from kseg.ops.grep.bytesearch import stream_holds


def _pieces(data: bytes, *cuts: int) -> list[bytes]:
    edges = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:], strict=False) if b > a]


def test_every_split_of_the_stream() -> None:
    data = b"....key-1234....trace....x"
    for cut in range(1, len(data)):
        for second in range(cut + 1, len(data)):
            pieces = _pieces(data, cut, second)
            assert stream_holds(iter(pieces), (b"key-1234", b"trace", b"x")), pieces
            assert not stream_holds(iter(pieces), (b"key-1234", b"key-1235")), pieces


def test_a_literal_over_three_short_pieces_and_an_empty_stream() -> None:
    assert stream_holds(iter([b"ab", b"c", b"de"]), (b"bcd",))
    assert not stream_holds(iter([]), (b"a",))


def test_it_stops_reading_once_all_are_found() -> None:
    read = []

    def pieces():
        for p in (b"xxkey", b"yy", b"zz"):
            read.append(p)
            yield p

    assert stream_holds(pieces(), (b"key",)) and read == [b"xxkey"]
