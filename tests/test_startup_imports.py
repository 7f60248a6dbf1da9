"""A command imports only what its input needs: ``python -X importtime -m kseg ...`` run as a real process on
a local partition and ``kseg --help``, the names of the modules it imported read from stderr (names only,
never timings), and none of :data:`FORBIDDEN` among them.  The positive control runs the same check on
a local copy of Aiven's tiered layout, where the tiered modules are imported: the check sees them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kseg import engine
from kseg.storage.remote_keys import object_key
from kseg.testing.aiven import write_aiven_segment
from tests.conftest import CORPUS_DATA

ROOT = Path(__file__).resolve().parent.parent
ORDERS = ROOT / "examples" / "orders-0"
LOG = ORDERS / "00000000000000000000.log"

#: Module name prefixes a local, uncompressed partition (and ``--help``) never needs, with the reason.
FORBIDDEN: dict[str, str] = {
    "kseg.storage.tiered": "Aiven's tiered segments: manifests, chunks, decryption",
    "kseg.storage.remote_keys": "the object keys of remote segments (a local segment's name is no key)",
    "kseg.format.rsm_manifest": "Aiven's segment manifests",
    "kseg.format.rsm_custom": "the custom metadata of remote segments",
    "kseg.format.oaep": "the RSA-OAEP unwrapping of a tiered segment's data key",
    "cryptography": "decrypting tiered segments",
    "kseg.storage.stores.arrow": "object stores and remote file systems (s3://, gs://, hdfs://, abfs://)",
    "pyarrow": "object stores and Parquet",
    "fsspec": "object stores",
    "boto3": "S3",
    "botocore": "S3",
    "s3fs": "S3",
    "kseg.decoders": "payload decoders (none asked for)",
    "kseg.ops.export": "export to Parquet",
    "kseg.ops.tiered": "the tiered command",
    "kseg.render.tiered": "the tiered command",
    "kseg.spark": "--spark",
    "pyspark": "--spark",
    "py4j": "--spark",
    "zstandard": "a codec (the partition holds no compressed batch)",
    "lz4": "a codec (the partition holds no compressed batch)",
    "snappy": "a codec (the partition holds no compressed batch)",
    "rich": "no terminal library is needed to print lines",
    "multiprocessing": "--jobs worker processes (one job runs in the command's own process)",
    "concurrent.futures": "worker pools (--jobs; the threads listing an object store's prefixes)",
    "ast": "inspect's (click uses inspect only to show a help page; the console script defers it)",
    "dis": "inspect's (click uses inspect only to show a help page; the console script defers it)",
    "tokenize": "inspect's (click uses inspect only to show a help page; the console script defers it)",
}

#: What a lookup printing text on a local partition with intact indexes never needs (beyond :data:`FORBIDDEN`).
LOOKUP_FORBIDDEN: dict[str, str] = {
    "json": "the JSON sink (--format json only)",
    "kseg.jsonlines": "the JSON sink (--format json only)",
    "kseg.render.jsonl": "the JSON sink (--format json only)",
    "kseg.render.lookup_json": "the JSON rows (--format json only)",
    "kseg.ops.dump": "the dump (a lookup prints one batch and one record through the text sink)",
    "kseg.storage.snapshots": "producer snapshots (the dump's)",
    "kseg.format.snapshot": "producer snapshots (the dump's)",
    "kseg.storage.checkpoints": "a log directory's other files (a lookup reads one offset checkpoint)",
    "kseg.format.uuid": "topic IDs (partition.metadata, not read by a lookup)",
    "kseg.storage.private_keys": "the keys of --rsm-key (not given)",
    "kseg.storage.ranges": "the ranges' rule (asked only of a damaged index entry)",
    "signal": "its enums of every signal (the CLI's Ctrl-C and SIGPIPE handling uses the C module, _signal)",
    "kseg.storage.read_policy": "--max-rate and --drop-cache (not given)",
    "kseg.format.v2_stream": "the stream decoder of compressed batches (the partition holds none)",
    "dataclasses": "the nouns and a lookup's answers are kseg.valueclass values (a dataclass compiles its methods)",
}
#: The lookup-offset only: the time lookup is lookup-time's.
OFFSET_FORBIDDEN: dict[str, str] = {"kseg.ops.lookup.time": "the time lookup (lookup-time's)"}

#: With the compiled engine running: its CRC-32C checks the batch (no second extension module).
ENGINE_FORBIDDEN: dict[str, str] = {
    "crc32c": "the crc32c package (the engine's CRC-32C runs)",
}

#: What ``kseg --help`` alone no longer imports: it writes a kept copy of click's text.
HELP_FORBIDDEN = ("click", "kseg.cli.main", "kseg.cli.params", "inspect", "uuid")

#: What a plain lookup (``kseg lookup-offset OFFSET DIR``, ``--format`` and ``-q`` at most) does not import: its
#: command line is read without click (kseg.cli.lookup_plain).
PLAIN_FORBIDDEN = ("click", "kseg.cli.main", "kseg.cli.params", "kseg.cli.options", "kseg.cli.lookup", "uuid")

#: The local commands checked (``{log}`` and ``{partition}`` are examples/orders-0's).
LOCAL_COMMANDS: dict[str, list[str]] = {
    "dump": ["dump", "{log}"],
    "dump deep": ["dump", "--deep-iteration", "--print-data-log", "{log}"],
    "dump index": ["dump", "{partition}/00000000000000000000.index"],
    "lookup-offset": ["lookup-offset", "3", "{partition}"],
    "lookup-time": ["lookup-time", "1730000000003", "{partition}"],
    "verify-index": ["verify-index", "{partition}"],
    "--help": ["--help"],
}


def imported(args: list[str]) -> tuple[int, list[str]]:
    """Exit code and the modules ``python -X importtime -m kseg ARGS`` imported, in order (stderr's third column)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this tree's kseg, as the other subprocess tests run it
    p = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kseg", *args], capture_output=True, text=True, timeout=120, env=env
    )
    names = []
    for line in p.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":  # the header line
                names.append(name)
    return p.returncode, names


def forbidden_in(names: list[str], forbidden: dict[str, str] = FORBIDDEN) -> list[str]:
    """``module: reason`` for each imported module under a prefix of ``forbidden``."""
    found = []
    for name in names:
        for prefix, reason in forbidden.items():
            if name == prefix or name.startswith(prefix + "."):
                found.append(f"{name}: {reason}")
    return found


@pytest.mark.parametrize("command", LOCAL_COMMANDS)
def test_a_local_partition_imports_nothing_its_input_does_not_need(command: str) -> None:
    args = [a.format(log=LOG, partition=ORDERS) for a in LOCAL_COMMANDS[command]]
    code, names = imported(args)
    assert code == 0, (args, code)
    if command == "--help":  # the kept copy of click's text (tests/cli/test_help_cache.py)
        assert "kseg.cli.help_text" in names  # the modules were read
        assert [n for n in names if n in HELP_FORBIDDEN or n.startswith("click.")] == []
    elif command.startswith("lookup-"):  # a plain lookup: answered without click (tests/cli/test_lookup_plain.py)
        assert "kseg.cli.lookup_plain" in names  # the modules were read
        assert [n for n in names if n in PLAIN_FORBIDDEN or n.startswith("click.")] == []
    else:
        assert "click" in names  # the modules were read
    assert forbidden_in(names) == []


@pytest.mark.parametrize("command", ["lookup-offset", "lookup-time"])
def test_a_lookup_printing_text_imports_neither_json_nor_the_dump_nor_the_other_checkpoints(command: str) -> None:
    """What issue 34 took off a lookup's start-up stays off: the JSON sink and the dump (its text sink's
    window loop once imported the dump for three constants), the readers of a log directory's other files,
    the key reader without --rsm-key, the ranges' rule; the time lookup for lookup-offset."""
    args = [a.format(log=LOG, partition=ORDERS) for a in LOCAL_COMMANDS[command]]
    code, names = imported(args)
    assert code == 0, (args, code)
    assert "kseg.render.lookup" in names and "kseg.storage.offset_checkpoints" in names  # the modules were read
    table = {**LOOKUP_FORBIDDEN, **(OFFSET_FORBIDDEN if command == "lookup-offset" else {})}
    if engine.C is not None:  # (the subprocess runs the same engine: KSEG_ENGINE is inherited)
        table.update(ENGINE_FORBIDDEN)
    assert forbidden_in(names, table) == []


def test_a_json_lookup_imports_the_json_rows() -> None:
    """The control: ``--format json`` imports what the text lookup must not, and the check names it."""
    code, names = imported(["lookup-offset", "--format", "json", "3", str(ORDERS)])
    assert code == 0
    found = forbidden_in(names, LOOKUP_FORBIDDEN)
    for module in ("json", "kseg.render.jsonl", "kseg.render.lookup_json"):
        assert any(line.startswith(f"{module}: ") for line in found), found
    assert not [line for line in found if line.startswith(("kseg.ops.dump", "kseg.storage.checkpoints"))], found


def test_a_lookup_with_another_option_is_click_s() -> None:
    """The control of the plain lookups: an option beyond ``--format`` and ``-q`` is parsed by click, which
    the check sees."""
    code, names = imported(["lookup-offset", "--max-message-size", "2000000", "3", str(ORDERS)])
    assert code == 0
    assert "click" in names and "kseg.cli.options" in names  # (the command's module: importlib, not timed)


def test_a_command_s_help_page_runs_inspect() -> None:
    """The control of inspect's deferral: a help page cleans its texts with ``inspect`` (click's), which then
    runs with its imports, and the check names them."""
    code, names = imported(["lookup-offset", "--help"])
    assert code == 0
    found = forbidden_in(names)
    for module in ("ast", "dis", "tokenize"):
        assert any(line.startswith(f"{module}: ") for line in found), found


def test_the_check_sees_the_tiered_modules_on_aiven_s_layout(tmp_path: Path) -> None:
    """One corpus segment copied as Aiven's plugin copies it (plain, no encryption), in a local directory:
    a lookup on it imports the key parser, the manifests and the tiered reader, and the check names them."""
    topic, topic_id, segment_id = "plain-v2", "MWJ6FHTfRYy67jzwZdeqSQ", "AAAAAAAAAAAAAAAAAAAAAA"
    write_aiven_segment(
        tmp_path,
        CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log",
        lambda suffix: object_key("aiven", "", topic, topic_id, 0, 0, segment_id, suffix),
        topic=topic,
        topic_id=topic_id,
        partition=0,
        segment_id=segment_id,
        end_offset=250,
    )
    partition = tmp_path / f"{topic}-{topic_id}" / "0"
    code, names = imported(["lookup-offset", "3", str(partition)])
    assert code == 0
    found = forbidden_in(names)
    for module in ("kseg.storage.tiered", "kseg.storage.remote_keys", "kseg.format.rsm_manifest"):
        assert any(line.startswith(f"{module}: ") for line in found), found


def test_the_check_names_a_forbidden_module() -> None:
    assert forbidden_in(["click", "pyarrow.fs", "kseg.storage.tiered_names", "kseg.spark.session"]) == [
        "pyarrow.fs: object stores and Parquet",
        "kseg.spark.session: --spark",
    ]


#: The only kseg modules whose regular expressions a local lookup compiles: the URI test of every path and a
#: segment file's name (``<offset>-<segment id>``, a number); any other is compiled when first asked.
LOOKUP_PATTERNS = {"kseg.storage.location", "kseg.storage.names"}

_COMPILED_BY = """
import atexit, re, sys
made = set()
compile = re.compile
def counted(pattern, flags=0):
    caller = sys._getframe(1).f_globals.get("__name__", "")
    if caller.startswith("kseg"):
        made.add(caller)
    return compile(pattern, flags)
re.compile = counted
atexit.register(lambda: print("compiled by:", *sorted(made), file=sys.stderr))
sys.argv = ["kseg", *sys.argv[1:]]
from kseg.cli.start import main
main()
"""


@pytest.mark.parametrize("command", ["lookup-offset", "lookup-time"])
def test_a_lookup_compiles_only_the_patterns_it_uses(command: str) -> None:
    """Issue 34: help text, ISO-8601 times, durations, Kafka 2.8's text, checkpoint lines and object-store
    errors are not a local lookup's; their patterns stay uncompiled (each ~0.5 M instructions at start-up)."""
    args = [a.format(log=LOG, partition=ORDERS) for a in LOCAL_COMMANDS[command]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run(
        [sys.executable, "-c", _COMPILED_BY, *args], capture_output=True, text=True, timeout=120, env=env
    )
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stderr.splitlines() if x.startswith("compiled by:"))
    assert set(line.split()[2:]) <= LOOKUP_PATTERNS, line
