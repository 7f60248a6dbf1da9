"""``kseg grep --where`` through the real CLI: JSON values in batches of every codec over several segments,
each condition against the list of what was written (an independent answer: Python's json and the
condition spelled in Python), with the other filters, with ``--jobs``; a condition that does not parse is
one usage line (exit 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kseg.testing.writer import RecordSpec, build_v2_batch, write_partition
from tests.conftest import run_cli, run_subprocess

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
T0 = 1_750_000_000_000


def _value(i: int) -> bytes | None:
    if i % 17 == 16:
        return None  # a tombstone
    if i % 13 == 12:
        return b"not json: order %d" % i
    doc = {
        "order_id": 1000 + i,
        "customer": {"id": f"C-{i % 5}", "vip": i % 4 == 0},
        "items": [{"sku": f"S-{i % 7}", "qty": i % 3}] * (1 + i % 2),
        "total": round(i * 2.25, 2),
    }
    if i % 6 == 0:
        doc["coupon"] = None
    return json.dumps(doc).encode()


@pytest.fixture(scope="module")
def part(tmp_path_factory) -> tuple[Path, list[tuple[int, bytes, bytes | None, tuple]]]:
    root = tmp_path_factory.mktemp("grep-where") / "shop-0"
    written, appends = [], []
    for b in range(0, 200, 5):
        specs = []
        for i in range(b, b + 5):
            headers = (("trace", f"t-{i % 9}".encode()),)
            specs.append(RecordSpec(b"k-%d" % i, _value(i), T0 + i, headers))
            written.append((i, b"k-%d" % i, _value(i), headers))
        appends.append([build_v2_batch(specs, base_offset=b, codec=CODECS[(b // 5) % len(CODECS)])])
    write_partition(root, appends, segment_bytes=4096, index_interval_bytes=512)
    assert len(list(root.glob("*.log"))) > 2
    return root, written


def _doc(v: bytes | None):
    if v is None:
        return None
    try:
        return json.loads(v)
    except ValueError:
        return v.decode()


CASES = {
    "value.order_id == 1042": lambda i, k, d, h: isinstance(d, dict) and d["order_id"] == 1042,
    'value.customer.id == "C-3" and value.customer.vip': lambda i, k, d, h: (
        isinstance(d, dict) and d["customer"]["id"] == "C-3" and d["customer"]["vip"]
    ),
    "value.total > 300 or offset < 3": lambda i, k, d, h: (isinstance(d, dict) and d["total"] > 300) or i < 3,
    'value.items[1].sku =~ "^S-[12]$"': lambda i, k, d, h: (
        isinstance(d, dict) and len(d["items"]) > 1 and re.search("^S-[12]$", d["items"][1]["sku"])
    ),
    'not value.customer.vip and headers.trace == "t-4"': lambda i, k, d, h: (
        not (isinstance(d, dict) and d["customer"]["vip"]) and h[0][1] == b"t-4"
    ),
    "value.coupon == null": lambda i, k, d, h: isinstance(d, dict) and "coupon" in d,
    "value == null": lambda i, k, d, h: d is None,
    'value =~ "^not json"': lambda i, k, d, h: isinstance(d, str),
    'key == "k-77" or key == "k-78"': lambda i, k, d, h: k in (b"k-77", b"k-78"),
    'value.order_id == "1042"': lambda i, k, d, h: False,  # typed: the number is not the string
}


@pytest.mark.parametrize("where", sorted(CASES))
def test_where_finds_what_was_written(part, where: str) -> None:
    root, written = part
    expected = [i for i, k, v, h in written if CASES[where](i, k, _doc(v), h)]
    r = run_cli(["grep", "--format", "json", "--where", where, str(root)])
    assert "Traceback" not in r.errtext, r.errtext
    assert r.exit_code == (0 if expected else 1), r.errtext
    assert [row["offset"] for row in map(json.loads, r.text.splitlines()) if row["type"] == "record"] == expected


def test_where_with_other_filters_and_repeated(part) -> None:
    root, written = part
    expected = [
        i
        for i, k, v, h in written
        if isinstance(_doc(v), dict) and _doc(v)["customer"]["id"] == "C-1" and h[0][1] == b"t-1" and 50 <= i <= 150
    ]
    args = ["--where", 'value.customer.id == "C-1"', "--where", 'headers.trace == "t-1"']
    r = run_cli(["grep", "--count", "--from-offset", "50", "--to-offset", "150", *args, str(root)])
    assert (r.exit_code, r.text) == (0, f"{root}: {len(expected)} matches\n"), r.errtext


def test_where_in_worker_processes_prints_what_one_prints(part) -> None:
    root, _ = part
    args = ["grep", "--where", "value.total > 100 and not value.customer.vip", str(root)]
    one, two = run_subprocess([*args[:1], "-j", "1", *args[1:]]), run_subprocess([*args[:1], "-j", "2", *args[1:]])
    assert (two.exit_code, two.stdout, two.stderr) == (one.exit_code, one.stdout, one.stderr) and one.stdout


def test_where_on_the_string_decoders_text(tmp_path) -> None:
    """The default decoder's text read as JSON; ``--value-decoder json`` the same; hex is text."""
    root = tmp_path / "t-0"
    write_partition(root, [[build_v2_batch([RecordSpec(b"k", b'{"a": {"b": [1, 2]}}', T0)], base_offset=0)]])
    for decoder in ("string", "json"):
        r = run_cli(["grep", "--value-decoder", decoder, "--where", "value.a.b[1] == 2", str(root)])
        assert r.exit_code == 0 and r.text, r.errtext
    r = run_cli(["grep", "--value-decoder", "hex", "--where", 'value =~ "^7b22"', str(root)])
    assert r.exit_code == 0 and r.text, r.errtext


def test_a_condition_that_does_not_parse_is_one_usage_line(part) -> None:
    root, _ = part
    r = run_cli(["grep", "--where", "value.order_id = 3", str(root)])
    assert r.exit_code == 2, r.errtext
    assert r.errtext.count("\n") == 1 and "--where" in r.errtext and "at character 16: unexpected '='" in r.errtext
