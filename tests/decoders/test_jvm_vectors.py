"""kseg's mirrors of JVM behaviours, checked against vectors the JVM produced.

The ``vectors/*.tsv`` files were written by OpenJDK 17, Jackson 2.17 and
Scala 2.13 (see ``vectors/make_vectors.py``); no JVM is needed here.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kseg.decoders.jsonconv import JavaDouble, dumps, java_double
from kseg.decoders.jvm import java_string_hash, java_utf8
from kseg.decoders.simple import string as string_decoder
from kseg.decoders.txnlog import format_partitions

VECTORS = Path(__file__).resolve().parent / "vectors"


def _rows(name: str) -> list[list[str]]:
    lines = (VECTORS / name).read_text(encoding="utf-8").split("\n")
    return [ln.split("\t") for ln in lines if ln and not ln.startswith("#")] + (
        [["", ""]] if name == "java_utf8.tsv" else []
    )


def test_java_utf8_matches_jdk17() -> None:
    rows = _rows("java_utf8.tsv")
    assert len(rows) > 600
    for hex_in, utf16 in rows:
        data = bytes.fromhex(hex_in)
        assert java_utf8(data).encode("utf-16-be", "surrogatepass").hex() == utf16, hex_in
        assert string_decoder(data) == java_utf8(data)


def test_python_replace_differs_only_on_encoded_surrogates() -> None:
    # The reason kseg does not use errors="replace" as is.
    assert b"\xed\xa0\x80".decode("utf-8", "replace") == "\ufffd" * 3
    assert java_utf8(b"\xed\xa0\x80") == "\ufffd"
    assert java_utf8(b"\xed\xa0A") == "\ufffdA"
    assert java_utf8(b"\xe2\x82") == "\ufffd"
    assert java_utf8(b"\xf0\x9f\x98\x80") == "\U0001f600"


def test_double_to_string_matches_jdk17() -> None:
    rows = _rows("java_double.tsv")
    assert len(rows) > 300
    for bits, expected in rows:
        d = struct.unpack(">d", struct.pack(">Q", int(bits, 16)))[0]
        if 0 < abs(d) < 1e-321:
            continue  # JDK 17 prints tiny subnormals off-shortest (4.9E-324); documented, not mirrored
        assert java_double(d) == expected, (bits, d)


def test_jackson_string_escaping_matches_jackson() -> None:
    rows = _rows("jackson_strings.tsv")
    assert len(rows) > 150
    for s_hex, out_hex in rows:
        s = java_utf8(bytes.fromhex(s_hex))  # what the Java side held
        tree = {s: s, "z": [-3, -(2**63), None, True]}
        assert dumps(tree).encode("utf-8", "surrogatepass").hex() == out_hex, repr(s)


@pytest.mark.parametrize(
    "s,expected",
    [
        ("\n\t\r\b\f", '"\\n\\t\\r\\b\\f"'),
        ("\x00\x1f", '"\\u0000\\u001F"'),
        ("a/b\x7f\u00e9\u2028", '"a/b\x7f\u00e9\u2028"'),
        ('"\\', '"\\"\\\\"'),
        ("\\u001f", '"\\\\u001f"'),  # a literal backslash-u sequence is not an escape to upper-case
        ("\\\x1f\\\\\x1a", '"\\\\\\u001F\\\\\\\\\\u001A"'),
    ],
)
def test_jackson_escapes(s: str, expected: str) -> None:
    assert dumps(s) == expected


def test_jackson_non_finite_doubles_are_quoted() -> None:
    values = [JavaDouble(x) for x in (float("nan"), float("inf"), float("-inf"), 1.0, 1e7, -0.0)]
    assert dumps({"d": values, "s": "\x1f"}) == '{"d":["NaN","Infinity","-Infinity",1.0,1.0E7,-0.0],"s":"\\u001F"}'


def test_scala_hashset_order_matches_scala_213() -> None:
    rows = _rows("scala_hashset.tsv")
    assert len(rows) == 300
    for spec, expected in rows:
        groups = []
        for g in spec.split(";"):
            topic, _, ids = g.rpartition(":")
            groups.append({"topic": topic, "partitionIds": [int(x) for x in ids.split(",")]})
        assert format_partitions(groups) == expected, spec


def test_java_string_hash() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("orders") == -1008770331
    assert java_string_hash("\U0001f600") == 1772899  # over the UTF-16 surrogate pair
