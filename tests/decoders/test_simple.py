"""--key-decoder / --value-decoder decoders and the module:function plugin form."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kseg.decoders.simple import PluginDecoderError, resolve
from kseg.errors import UsageError
from tests.decoders.conftest import CORPUS, corpus_records


def test_string_decoder_matches_kafkas_string_decoder_on_the_corpus() -> None:
    # plain-v2-0 holds binary non-UTF-8 keys/values, NUL bytes, \r\n, an astral emoji; the golden was
    # printed by Kafka's StringDecoder (new String(b, UTF_8)).
    golden = (CORPUS / "golden/plain-v2-0/00000000000000000000.log.data.stdout").read_bytes().decode("utf-8")
    decode = resolve("string")
    for rec in corpus_records("plain-v2-0"):
        text = ""
        if rec.key is not None:
            text += f" key: {decode(rec.key)}"
        if rec.value is not None:
            text += f" payload: {decode(rec.value)}"
        assert "headerKeys: [" in golden
        assert text in golden, rec.offset
    assert "\ufffd" in decode(bytes.fromhex("00efbfbdfe41"))


def test_hex_base64_json() -> None:
    assert resolve("hex")(b"\x00\xffA") == "00ff41"
    assert resolve("base64")(b"\x00\xffA") == "AP9B"
    j = resolve("json")
    assert j(b'{ "b": [1, 2.50, -3e2, true, null],\n "a": "x\\u0001\xc3\xa9/", "b": {} }') == (
        '{"b":[1,2.50,-3e2,true,null],"a":"x\\u0001\u00e9/","b":{}}'
    )
    assert j(b"not json\n") == "not json\n"
    assert j(b"\xff") == "\ufffd"


def test_plugin_decoder(tmp_path, monkeypatch) -> None:
    (tmp_path / "mydec.py").write_text(
        "def upper(b):\n    return b.decode().upper()\n"
        "class K:\n    @staticmethod\n    def length(b):\n        return len(b)\n"
        "def nothing(b):\n    return None\n"
        "def boom(b):\n    raise ValueError('bad')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert resolve("mydec:upper")(b"abc") == "ABC"
    assert resolve("mydec:K.length")(b"abc") == "3"
    assert resolve("mydec:nothing")(b"abc") == "null"
    with pytest.raises(PluginDecoderError, match="ValueError: bad"):
        resolve("mydec:boom")(b"x")


@pytest.mark.parametrize(
    "name,message",
    [
        ("no_such_module_xyz:f", "cannot import decoder module 'no_such_module_xyz'"),
        ("os:no_such_function", "has no attribute 'no_such_function'"),
        ("os:sep", "is not callable"),
        ("bogus", "unknown decoder 'bogus'"),
        ("mod:", "unknown decoder 'mod:'"),
    ],
)
def test_plugin_errors_are_usage_errors(name: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve(name)


def test_importing_decoders_loads_no_schema() -> None:
    code = (
        "import sys, kseg.decoders, kseg.decoders.control, kseg.decoders.simple;"
        "bad = [m for m in sys.modules if m in ('kseg.decoders.schema', 'kseg.decoders.decode', "
        "'kseg.decoders.jsonconv', 'json')];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


EXAMPLES = CORPUS.parents[2] / "examples" / "decoders"


def test_the_safe_decoder_of_the_docs_runs_through_the_cli() -> None:
    """docs/decoders.md warns that module:function decoders run code and shows a safe one: it works as shown,
    and the docs carry the warning with the example verbatim."""
    import os

    docs = (CORPUS.parents[2] / "docs" / "decoders.md").read_text()
    assert "**Warning: a `module:function` decoder runs code.**" in docs and "`os:system`" in docs
    source = (EXAMPLES / "safe_decoder.py").read_text()
    example = source[source.index("def int64_or_text") :]
    assert example.strip() in docs
    log = CORPUS / "data" / "plain-v2-0" / "00000000000000000000.log"
    p = subprocess.run(
        [sys.executable, "-m", "kseg", "dump", "--value-decoder", "safe_decoder:int64_or_text", str(log)],
        capture_output=True,
        env=dict(os.environ, PYTHONPATH=str(EXAMPLES)),
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert b" payload: value-with-null-key\n" in p.stdout
    sys.path.insert(0, str(EXAMPLES))
    try:
        decode = resolve("safe_decoder:int64_or_text")
    finally:
        sys.path.remove(str(EXAMPLES))
    assert decode((-2).to_bytes(8, "big", signed=True)) == "-2"
    assert decode(b"\xff" + b"a" * 2000) == "\\xff" + "a" * 996 + "..."
