"""``kseg.ops.coordinator``: Java's ``String.hashCode`` and Kafka's ``Utils.abs(hash) % partitions``,
against fixed values and against Java itself (a tiny program run by ``java``, when installed)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kseg.ops.coordinator.coordinator import (
    GROUP,
    TRANSACTIONAL_ID,
    java_string_hash,
    partition_for,
    utils_abs,
)

# (id, String.hashCode, partition of 50, partition of 7): printed by Java 17 running JAVA_SOURCE below
EXPECTED = [
    ("my-group", -1906497762, 12, 1),
    ("", 0, 0, 0),
    ("a", 97, 47, 6),
    ("polygenelubricants", -2147483648, 0, 0),  # hashCode Integer.MIN_VALUE: Utils.abs gives 0
    ("GydZG_", -2147483648, 0, 0),
    ("héllo wörld", 1628148953, 3, 4),  # non-ASCII in the BMP: one code unit a character
    ("日本語のグループ", -935085811, 11, 2),
    ("😀", 1772899, 49, 2),  # astral plane: the hash runs over the two surrogates
    ("🎉party🎉", 203565254, 4, 4),
    ("connect-cluster", 1440343063, 13, 5),
    ("tx-1", 3572520, 20, 0),
    ("Ω", 937, 37, 6),
]

JAVA_SOURCE = """
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

public class Place {
    public static void main(String[] args) {
        for (String count : args[0].split(",")) {  // each partition count in turn: one JVM for all
            int n = Integer.parseInt(count);
            for (int i = 1; i < args.length; i++) {
                String id = new String(HexFormat.of().parseHex(args[i]), StandardCharsets.UTF_8);
                int h = id.hashCode();
                int a = h == Integer.MIN_VALUE ? 0 : Math.abs(h);  // Kafka's Utils.abs
                System.out.println(h + " " + (a % n));
            }
        }
    }
}
"""


@pytest.mark.parametrize("ident,hash_code,p50,p7", EXPECTED, ids=[repr(e[0]) for e in EXPECTED])
def test_fixed_values(ident: str, hash_code: int, p50: int, p7: int) -> None:
    assert java_string_hash(ident) == hash_code
    for kind in (GROUP, TRANSACTIONAL_ID):
        assert partition_for(kind, ident).partition == p50  # the default: 50 partitions
        assert partition_for(kind, ident, 7).partition == p7


def test_topics_and_directories() -> None:
    g = partition_for(GROUP, "my-group")
    t = partition_for(TRANSACTIONAL_ID, "my-group")
    assert (g.topic, g.directory) == ("__consumer_offsets", "__consumer_offsets-12")
    assert (t.topic, t.directory) == ("__transaction_state", "__transaction_state-12")


def test_utils_abs() -> None:
    assert utils_abs(-(2**31)) == 0  # where Math.abs would stay negative
    assert utils_abs(-(2**31) + 1) == 2**31 - 1
    assert utils_abs(-5) == 5 and utils_abs(7) == 7


def test_hash_wraps_as_a_java_int() -> None:
    long_id = "x" * 10_000
    h = java_string_hash(long_id)
    assert -(2**31) <= h < 2**31
    assert 0 <= partition_for(GROUP, long_id, 2**31 - 1).partition < 2**31 - 1


def test_a_lone_surrogate_is_one_code_unit() -> None:
    assert java_string_hash("\udc80") == 0xDC80
    assert java_string_hash("a\ud83d") == 97 * 31 + 0xD83D


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        partition_for(GROUP, "g", 0)
    with pytest.raises(ValueError):
        partition_for("cluster", "g")


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on PATH to compute String.hashCode")
def test_against_java(tmp_path) -> None:
    """The same ids through Java 17: ``String.hashCode`` and ``Utils.abs``'s rule, for 50 and 7 partitions."""
    source = tmp_path / "Place.java"
    source.write_text(JAVA_SOURCE)
    hexes = [ident.encode("utf-8").hex() for ident, *_ in EXPECTED]
    counts = ((50, 2), (7, 3))
    lines = subprocess.run(
        ["java", str(source), ",".join(str(n) for n, _ in counts), *hexes],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    assert len(lines) == len(counts) * len(EXPECTED)
    for k, (n, column) in enumerate(counts):
        out = lines[k * len(EXPECTED) : (k + 1) * len(EXPECTED)]
        for line, expected in zip(out, EXPECTED, strict=True):
            hash_code, partition = map(int, line.split())
            assert (hash_code, partition) == (expected[1], expected[column]), expected[0]
            assert java_string_hash(expected[0]) == hash_code
            assert partition_for(GROUP, expected[0], n).partition == partition
