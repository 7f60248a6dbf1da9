"""``RemoteLogMetadataTopicPartitioner``: Kafka's murmur2 against the values Kafka's own ``UtilsTest.testMurmur2``
pins, and the whole placement against Java itself (``java.util.UUID``, ``Objects.hash`` and a murmur2 run by
``java``, when installed)."""

from __future__ import annotations

import base64
import shutil
import subprocess

import pytest

from kseg.format.murmur2 import murmur2
from kseg.ops.tiered.partitioner import metadata_partition, topic_id_partition_hash

# UtilsTest.testMurmur2 (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java)
MURMUR2 = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]

TOPIC_IDS = ["AQIDBAUGBwgJCgsMDQ4PEA", "Wd7Ynb0xRJ2-8HlQ_3aZ1g", "_____________________w", "AAAAAAAAAAAAAAAAAAAAAQ"]


def _raw(uuid: str) -> bytes:
    return base64.urlsafe_b64decode(uuid + "==")


@pytest.mark.parametrize(("data", "expected"), MURMUR2)
def test_murmur2_as_kafka_pins_it(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


def test_hash_of_zero_id() -> None:
    # Arrays.hashCode([0L, 0L, 0]) = 31 * (31 * (31 + 0) + 0) + 0
    assert topic_id_partition_hash(bytes(16), 0) == 29791


def test_placement_is_within_the_partitions() -> None:
    for tid in TOPIC_IDS:
        for p in range(20):
            assert 0 <= metadata_partition(_raw(tid), p, 7) < 7


# The placement in Java: the topic id parsed by java.util.UUID (most significant bits first, as Kafka's Uuid),
# Objects.hash(least, most, partition), its big-endian bytes, MurmurHash2 (seed 0x9747b28c, m 0x5bd1e995,
# r 24), & 0x7fffffff, % n -- written here from the algorithm's definition.
JAVA_SOURCE = """
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Objects;

public class Place {
    static int murmur(byte[] d) {
        int m = 0x5bd1e995, h = 0x9747b28c ^ d.length, n = d.length / 4;
        for (int i = 0; i < n; i++) {
            int k = ByteBuffer.wrap(d, 4 * i, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
            k *= m; k ^= k >>> 24; k *= m; h *= m; h ^= k;
        }
        int t = n * 4;
        switch (d.length % 4) {
            case 3: h ^= (d[t + 2] & 0xff) << 16;
            case 2: h ^= (d[t + 1] & 0xff) << 8;
            case 1: h ^= d[t] & 0xff; h *= m;
        }
        h ^= h >>> 13; h *= m; h ^= h >>> 15;
        return h;
    }

    public static void main(String[] args) {
        for (String count : args[0].split(",")) {  // each partition count in turn: one JVM for all
            int n = Integer.parseInt(count);
            for (int i = 1; i < args.length; i += 2) {
                ByteBuffer id = ByteBuffer.wrap(Base64.getUrlDecoder().decode(args[i]));
                long most = id.getLong(), least = id.getLong();
                int hash = Objects.hash(least, most, Integer.parseInt(args[i + 1]));
                byte[] key = ByteBuffer.allocate(4).putInt(hash).array();
                System.out.println(hash + " " + ((murmur(key) & 0x7fffffff) % n));
            }
        }
    }
}
"""


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on PATH to compute Objects.hash and murmur2")
def test_against_java(tmp_path) -> None:
    source = tmp_path / "Place.java"
    source.write_text(JAVA_SOURCE)
    cases = [(tid, p) for tid in TOPIC_IDS for p in (0, 1, 7, 2147483647)]
    args = [a for tid, p in cases for a in (tid, str(p))]
    counts = (50, 7)
    lines = subprocess.run(
        ["java", str(source), ",".join(map(str, counts)), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    assert len(lines) == len(counts) * len(cases)
    for k, n in enumerate(counts):
        out = lines[k * len(cases) : (k + 1) * len(cases)]
        for line, (tid, p) in zip(out, cases, strict=True):
            hash_code, partition = map(int, line.split())
            assert topic_id_partition_hash(_raw(tid), p) == hash_code, (tid, p)
            assert metadata_partition(_raw(tid), p, n) == partition, (tid, p, n)
