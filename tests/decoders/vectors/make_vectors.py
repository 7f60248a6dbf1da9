"""Regenerate the JVM-produced test vectors in this directory (maintainer tool).

Needs a JDK 17 (``javac``/``java``), Jackson 2.16/2.17 jars and a Scala 2.13
library jar; pass their class path in ``KSEG_JACKSON_CP`` / ``KSEG_SCALA_JAR``.
The Java programs in ``java/`` are kseg's own scratch code: each reads cases
on stdin and prints what the JVM computes.  The vectors then pin kseg's
Python mirrors of those JVM behaviours without needing a JVM at test time.

    python tests/decoders/vectors/make_vectors.py
"""

from __future__ import annotations

import math
import os
import random
import struct
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
JAVA = HERE / "java"


def _run(classpath: str, main: str, lines: list[str]) -> list[str]:
    out = subprocess.run(
        ["java", "-cp", classpath, main], input=("\n".join(lines) + "\n").encode(), capture_output=True, check=True
    ).stdout.decode("utf-8")
    return out.split("\n")[: len(lines)]


def _compile(build: str, classpath: str, *sources: str) -> None:
    subprocess.run(
        ["javac", "-nowarn", "-d", build, "-cp", classpath, *[str(JAVA / s) for s in sources]],
        check=True,
        capture_output=True,
    )


def utf8_cases(rng: random.Random) -> list[bytes]:
    pieces = [
        b"\xed\xa0\x80",
        b"\xed\xa0",
        b"\xed",
        b"\xed\x9f\xbf",
        b"\xe0\x80\x80",
        b"\xe0\xa0",
        b"\xf4\x90\x80\x80",
        b"\xe2\x82",
        b"\xf0\x9f\x98",
        b"\xf0\x80",
        b"\xc0\xaf",
        b"\xc2",
        b"\x80",
        b"\xf8\x88\x80\x80\x80",
        b"\xf0\x9f\x98\x80",
        b"A",
        b"\xe2\x82\xac",
        b"\xed\xbf\xbf",
        b"\xf5\x80",
        b"\xff",
        b"\xc3\xa9",
        b"\x00",
        b"\xf4\x8f\xbf\xbf",
        b"\n",
    ]
    cases = [b""] + pieces
    for _ in range(600):
        n = rng.randint(1, 8)
        if rng.random() < 0.6:
            cases.append(b"".join(rng.choice(pieces) for _ in range(n)))
        else:
            cases.append(bytes(rng.randrange(256) for _ in range(n)))
    return cases


def double_cases(rng: random.Random) -> list[int]:
    def bits(x: float) -> int:
        return struct.unpack(">Q", struct.pack(">d", x))[0]

    fixed = [
        0.0,
        -0.0,
        math.nan,
        math.inf,
        -math.inf,
        1.0,
        0.1,
        100.0,
        1e7,
        9999999.0,
        1e-3,
        9.99e-4,
        1e21,
        1e-300,
        5e-324,
        1.7976931348623157e308,
        2.0**53,
        2.0**54 + 2,
        2.0**62 + 2**10,
        2.0**63,
        123456789.125,
        1048576.0,
        52428800.0,
        0.5,
        33.333333333333336,
    ]
    cases = [bits(x) for x in fixed]
    for _ in range(400):
        r = rng.random()
        if r < 0.3:
            x = struct.unpack(">d", struct.pack(">Q", rng.getrandbits(64)))[0]
        elif r < 0.6:
            x = float(rng.randint(0, 2 ** rng.randint(1, 64)))
        else:
            x = rng.randint(-(10**9), 10**9) / 10 ** rng.randint(0, 12)
        if 1e21 <= abs(x) < 1e27 and x != int(x):
            continue  # JDK 17's non-shortest range, not mirrored (see jsonconv.java_double)
        cases.append(bits(x))
    return cases


def string_cases(rng: random.Random) -> list[str]:
    cases = ["", "a/b", '"', "\\", "\x7f", "\u2028", "\ud83d\ude00"] + [chr(i) for i in range(0x20)]
    for _ in range(150):
        cases.append(
            "".join(
                chr(
                    rng.choice(
                        [
                            rng.randint(0, 0x7F),
                            rng.randint(0x80, 0x7FF),
                            rng.randint(0x800, 0xD7FF),
                            rng.randint(0x10000, 0x10FFFF),
                            0x22,
                            0x5C,
                            0x2F,
                        ]
                    )
                )
                for _ in range(rng.randint(1, 10))
            )
        )
    return cases


def hashset_cases(rng: random.Random) -> list[str]:
    topics = [
        "orders",
        "payments",
        "a",
        "b",
        "topic",
        "__consumer_offsets",
        "t-1",
        "\u00fcnicode",
        "x" * 40,
        "Aa",
        "BB",
    ]
    cases = []
    for _ in range(300):
        groups = []
        for _ in range(rng.randint(1, 6)):
            t = rng.choice(topics) if rng.random() < 0.8 else "t%d" % rng.randint(0, 10**6)
            k = rng.choice([1, 2, 3, 4, 5, 6, 8, 12, 20, 40, 100])
            ids = [rng.randint(-5, 200) if rng.random() < 0.3 else rng.randint(0, k + 3) for _ in range(k)]
            groups.append(f"{t}:{','.join(map(str, ids))}")
        cases.append(";".join(groups))
    return cases


def main() -> None:
    rng = random.Random(20241025)
    jackson = os.environ["KSEG_JACKSON_CP"]
    scala = os.environ["KSEG_SCALA_JAR"]
    with tempfile.TemporaryDirectory() as build:
        _compile(build, "", "Utf8Check.java", "DblCheck.java")
        _compile(build, jackson, "JsonCheck.java")
        _compile(build, scala, "TP.java", "SetOrder.java")
        cases = utf8_cases(rng)
        outs = _run(build, "Utf8Check", [c.hex() for c in cases])
        (HERE / "java_utf8.tsv").write_text(
            "# input bytes (hex) -> new String(b, UTF_8) as UTF-16BE (hex); OpenJDK 17\n"
            + "".join(f"{c.hex()}\t{o}\n" for c, o in zip(cases, outs, strict=True))
        )
        cases = double_cases(rng)
        outs = _run(build, "DblCheck", ["%016x" % c for c in cases])
        (HERE / "java_double.tsv").write_text(
            "# IEEE-754 bits (hex) -> Double.toString; OpenJDK 17\n"
            + "".join(f"{c:016x}\t{o}\n" for c, o in zip(cases, outs, strict=True))
        )
        cases = string_cases(rng)
        lines = ["s\t" + c.encode("utf-8", "surrogatepass").hex() for c in cases]
        outs = _run(f"{build}:{jackson}", "JsonCheck", lines)
        (HERE / "jackson_strings.tsv").write_text(
            "# string (UTF-8 hex) -> ObjectNode{s: TextNode(s), z: [-3, Long.MIN_VALUE, null, true]}.toString()"
            " (UTF-8 hex); Jackson 2.17\n" + "".join(f"{ln[2:]}\t{o}\n" for ln, o in zip(lines, outs, strict=True))
        )
        cases = hashset_cases(rng)
        outs = _run(f"{build}:{scala}", "SetOrder", cases)
        (HERE / "scala_hashset.tsv").write_text(
            "# topic:p,p;topic:p,... (one ++= per group) -> mutable.HashSet[TopicPartition].mkString; Scala 2.13\n"
            + "".join(f"{c}\t{o}\n" for c, o in zip(cases, outs, strict=True))
        )


if __name__ == "__main__":
    main()
