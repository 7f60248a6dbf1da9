"""Kafka's default partitioner for keyed records (``kseg.ops.grep.partitioner``) against Kafka's own numbers:
the vectors of Kafka's ``UtilsTest.testMurmur2`` and values Kafka's ``Utils.murmur2`` computed on Java 17
(``murmur2_vectors.tsv``, which says where they came from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kseg.format.murmur2 import murmur2, to_positive
from kseg.ops.grep.partitioner import counts_seen, partition_for_key, prune
from kseg.storage.partition import Partition
from tests.stores import local

# apache/kafka clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java, testMurmur2
KAFKA_UTILS_TEST = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]


def _java_vectors() -> list[tuple[bytes, int, int, int, int]]:
    rows = []
    for line in (Path(__file__).parent / "murmur2_vectors.tsv").read_text().splitlines():
        if line.startswith("#"):
            continue
        key, h, p3, p12, p100 = line.split("\t")
        rows.append((b"" if key == "-" else bytes.fromhex(key), int(h), int(p3), int(p12), int(p100)))
    return rows


@pytest.mark.parametrize("key,expected", KAFKA_UTILS_TEST)
def test_murmur2_equals_kafkas_utils_test(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected


def test_murmur2_and_the_partition_equal_kafkas_java() -> None:
    vectors = _java_vectors()
    assert len(vectors) == 18  # every length 0..6 and its tails, non-ASCII and invalid UTF-8 bytes
    for key, h, p3, p12, p100 in vectors:
        assert murmur2(key) == h, key
        assert [partition_for_key(key, n) for n in (3, 12, 100)] == [p3, p12, p100], key


def test_to_positive_clears_the_sign_bit_only() -> None:
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-(1 << 31)) == 0
    assert to_positive(5) == 5


def _parts(*names: str) -> list[Partition]:
    return [Partition(f"/data/{name}", store=local()) for name in names]


def test_the_count_is_known_only_from_partitions_0_to_n_minus_1() -> None:
    assert counts_seen(_parts("a-0", "a-1", "a-2", "b-1", "b-2", "odd")) == {"a": 3, "b": None}


def test_prune_keeps_the_keys_partition_of_each_topic_and_says_so() -> None:
    key = b"order-1234"  # murmur2 202518744: partition 0 of 3, 0 of 12 (murmur2_vectors.tsv)
    parts = _parts("a-0", "a-1", "a-2", "b-1", "b-2", "c-5", "odd")
    kept, notes = prune(parts, key, None)
    assert [p.name for p in kept] == ["a-0", "b-1", "b-2", "c-5", "odd"]  # b and c: count unknown
    assert any("a: only partition 0 of the topic read" in n and "3 partitions" in n for n in notes), notes
    kept, notes = prune(parts, key, 12)
    assert [p.name for p in kept] == ["a-0", "odd"]
    assert any("b: partition 0 of the topic, the key's, is not in the inputs" in n for n in notes), notes
