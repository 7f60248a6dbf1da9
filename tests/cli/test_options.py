"""One interface: every command's shared options have the same names, help and meaning (issue 13)."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from kseg.cli import options
from kseg.cli.main import COMMANDS
from tests.conftest import CORPUS_DATA, Result, run_cli, run_cli_many, run_subprocess

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "orders-0"
LOG = SAMPLE / "00000000000000000000.log"

# Commands that read no files (coordinator): no read pacing, no batch size, no notes about inputs.
NO_FILES = {"coordinator"}
READING = sorted(set(COMMANDS) - NO_FILES)

# Where each shared option applies (commands outside a set do not take it).
WHERE = {
    "quiet": set(COMMANDS),
    "jobs": {"verify-index", "rebuild-index", "grep"},
    "key_decoder": {"dump", "lookup-offset", "lookup-time", "export", "grep"},
    "value_decoder": {"dump", "lookup-offset", "lookup-time", "export", "grep"},
    "output_format": set(COMMANDS) - {"export"},
    "max_message_size": set(COMMANDS) - {"diff", "logdir"} - NO_FILES,  # diff and logdir read batch headers only
    "spark": {"verify-index", "export", "diff", "logdir", "tiered", "grep"},
    "master": {"verify-index", "export", "diff", "logdir", "tiered", "grep"},
    "spark_conf": {"verify-index", "export", "diff", "logdir", "tiered", "grep"},
    "verbose": {"verify-index", "export", "diff", "logdir", "tiered", "grep"},
    "max_rate": set(READING),
    "drop_cache": set(READING),
}


# The reference: the option as the shared module declares it.
@click.command()
@options.quiet_option
@options.jobs_option
@options.decoder_options
@options.format_option
@options.max_message_size_option
@options.spark_options
@options.io_options
def _reference(**_kw) -> None:
    pass


REFERENCE = {p.name: p for p in _reference.params}


def _command(name: str) -> click.Command:
    module, attr, _ = COMMANDS[name]
    return getattr(importlib.import_module(module), attr)


def _describe(p: click.Parameter) -> tuple:
    return (
        sorted(p.opts),
        sorted(p.secondary_opts),
        p.help,
        getattr(p, "is_flag", False),
        p.multiple,
        repr(p.type),
        p.default,
        p.show_default,
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_shared_options_have_one_name_help_and_meaning(name: str) -> None:
    params = {p.name: p for p in _command(name).params}
    for option, commands in WHERE.items():
        if name in commands:
            assert option in params, f"{name} lacks {REFERENCE[option].opts}"
            if option in getattr(_command(name), "reworded", ()):  # its help says what it does here (test_help.py)
                assert _describe(params[option])[3:] == _describe(REFERENCE[option])[3:], (name, option)
            else:
                assert _describe(params[option]) == _describe(REFERENCE[option]), (name, option)
        else:
            assert option not in params, f"{name} takes {option}: add it to WHERE with its meaning"
    assert params["quiet"].opts == ["--quiet", "-q"] or sorted(params["quiet"].opts) == ["--quiet", "-q"]


def test_every_command_walked() -> None:
    assert set(COMMANDS) == {
        "dump",
        "verify-index",
        "lookup-offset",
        "lookup-time",
        "rebuild-index",
        "txn",
        "diff",
        "compaction",
        "export",
        "coordinator",
        "logdir",
        "tiered",
        "grep",
        "salvage",
        "metadata",
    }


@pytest.mark.parametrize(
    "name,args",
    [
        ("verify-index", [str(SAMPLE)]),
        ("export", [str(SAMPLE), "-o", "/tmp/never.parquet"]),
        ("diff", [str(SAMPLE), str(SAMPLE)]),
    ],
)
@pytest.mark.parametrize("extra", [["--master", "local[1]"], ["--spark-conf", "a=b"], ["--verbose"]])
def test_spark_options_without_spark_are_usage_errors(name: str, args: list[str], extra: list[str]) -> None:
    if name == "verify-index" and extra == ["--verbose"]:
        r = run_cli([name, *extra, *args])  # verify-index's --verbose: every note under its segment
        assert r.exit_code == 0 and r.errtext == "", r.errtext
        return
    r = run_cli([name, *extra, *args])
    assert r.exit_code == 2
    assert r.errtext.splitlines() == [f"kseg: error: {extra[0]} takes effect only with --spark"], r.errtext
    assert r.stdout == b""


@pytest.mark.parametrize("extra", [["--max-rate", "10"], ["--drop-cache"]])
def test_read_pacing_with_spark_is_a_usage_error(extra: list[str]) -> None:
    r = run_cli(["verify-index", "--spark", *extra, str(SAMPLE)])
    assert r.exit_code == 2 and len(r.errtext.splitlines()) == 1 and "--max-rate and --drop-cache" in r.errtext


@pytest.mark.parametrize(
    "spelling", ["--key-decoder-class", "--key-decoder", "--value-decoder-class", "--value-decoder"]
)
@pytest.mark.parametrize("name", ["lookup-offset", "lookup-time"])
def test_kafka_decoder_spellings_on_the_lookups(name: str, spelling: str) -> None:
    where = "5" if name == "lookup-offset" else "1730000000005"
    r = run_cli([name, spelling, "hex", where, str(SAMPLE)])
    plain = run_cli([name, where, str(SAMPLE)])
    assert r.exit_code == 0 and r.text != plain.text  # the key printed in hex, not as a string


def test_quiet_silences_notes_on_the_lookups(tmp_path: Path) -> None:
    part = tmp_path / "orders-0"
    shutil.copytree(SAMPLE, part)
    (part / "00000000000000000000.index").unlink()  # the lookup notes a missing index
    loud = run_cli(["lookup-offset", "3", str(part)])
    assert "kseg: note:" in loud.errtext
    quiet = run_cli(["lookup-offset", "-q", "3", str(part)])
    assert quiet.exit_code == loud.exit_code == 0
    assert "kseg: note:" not in quiet.errtext and quiet.stdout == loud.stdout


def test_lookup_time_takes_negative_codes() -> None:
    """-1 is Kafka's "latest": an argument, not an unknown option; -h is still help."""
    r = run_cli(["lookup-time", "-1", str(SAMPLE)])
    assert r.exit_code == 0 and "latest" in r.text
    assert run_cli(["lookup-time", "-2", str(SAMPLE)]).exit_code == 0
    h = run_cli(["lookup-time", "-h"])
    assert h.exit_code == 0 and "Usage:" in h.text


@pytest.mark.parametrize("name", ["lookup-offset", "lookup-time"])
def test_a_misspelt_option_is_still_named(name: str) -> None:
    r = run_cli([name, "--formt", "json", "3", str(SAMPLE)])
    assert r.exit_code == 2 and "No such option '--formt'" in r.errtext


def test_rebuild_refusal_prints_the_error_line(tmp_path: Path) -> None:
    part = tmp_path / "orders-0"
    shutil.copytree(SAMPLE, part)
    index = part / "00000000000000000000.index"
    index.write_bytes(
        index.read_bytes() + bytes([0, 0, 0, 1, 0, 0, 0, 1])
    )  # an entry out of order (a zero tail is healthy)
    r = run_cli(["rebuild-index", str(part)])
    assert r.exit_code == 2
    errors = [line for line in r.errtext.splitlines() if line.startswith("kseg: error: ")]
    assert errors == [f"kseg: error: {index}: not written: the existing file differs; give --force to replace it"]


def test_rebuild_jobs_equals_one_process(tmp_path: Path) -> None:
    for name in ("orders-1", "orders-2", "orders-10"):
        shutil.copytree(SAMPLE, tmp_path / name)
    one = run_cli(["rebuild-index", "--check", "--format", "json", str(tmp_path)])
    many = run_subprocess(["rebuild-index", "--check", "-j", "2", "--format", "json", str(tmp_path)])
    assert one.exit_code == many.exit_code == 0
    assert one.stdout == many.stdout


def test_binary_streams_not_deprecated_click() -> None:
    for path in (ROOT / "kseg").rglob("*.py"):
        assert "get_binary_stream(" not in path.read_text(), path


COMMAND_RUNS = {
    "dump": ["dump", "--deep-iteration", str(LOG)],
    "verify-index": ["verify-index", str(SAMPLE)],
    "lookup-offset": ["lookup-offset", "3", str(SAMPLE)],
    "lookup-time": ["lookup-time", "earliest", str(SAMPLE)],
    "rebuild-index": ["rebuild-index", "--check", str(SAMPLE)],
    "txn": ["txn", str(SAMPLE)],
    "diff": ["diff", str(SAMPLE), str(SAMPLE)],
    "compaction": ["compaction", "--at", "0", str(SAMPLE)],
    "export": ["export", "--force", str(SAMPLE), "-o", "{tmp}/out.parquet"],
    "grep": ["grep", "--from-time", "0", str(SAMPLE)],
    "coordinator": ["coordinator", "--group", "g"],
    "logdir": ["logdir", str(SAMPLE)],
    "salvage": ["salvage", str(SAMPLE), "-o", "{tmp}/out/orders-0"],
    "metadata": ["metadata", str(CORPUS_DATA / "__cluster_metadata-0")],
    "tiered": ["tiered", str(ROOT / "tests" / "data" / "kafka4x" / "data" / "__remote_log_metadata-0")],
}
# Kafka's own __remote_log_metadata records add a segment as COPY_SEGMENT_FINISHED, which Kafka's
# RemoteLogMetadataCache.addCopyInProgressSegment refuses: problems (docs/tiered-metadata.md)
COMMAND_EXIT = {"tiered": 1}


@pytest.fixture(scope="module")
def warned_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Result, Result]]:
    """Each command's run of COMMAND_RUNS and its ``--help``, by name, all in one fresh process with every
    DeprecationWarning an error (``PYTHONWARNINGS``: ``python -W error::DeprecationWarning``): a warning at
    import (each command's modules are first imported there by its own run) or while it runs fails that run."""
    tmp = tmp_path_factory.mktemp("warnings")
    names = sorted(COMMANDS)
    runs = []
    for name in names:
        runs += [[a.replace("{tmp}", str(tmp)) for a in COMMAND_RUNS[name]], [name, "--help"]]
    done = run_cli_many(runs, env={"PYTHONWARNINGS": "error::DeprecationWarning"})
    return {name: (done[2 * i], done[2 * i + 1]) for i, name in enumerate(names)}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_deprecation_warning(name: str, warned_runs: dict[str, tuple[Result, Result]]) -> None:
    """Every command runs clean, and prints its help, with DeprecationWarning an error."""
    run, help_ = warned_runs[name]
    assert run.exit_code == COMMAND_EXIT.get(name, 0), run.errtext
    assert "Warning" not in run.errtext and "Traceback" not in run.errtext, run.errtext
    assert help_.exit_code == 0 and "Warning" not in help_.errtext, help_.errtext
    assert f" {name} [OPTIONS]" in help_.text.split("\n", 1)[0], help_.text[:200]  # its own help


def _complete(**env: str) -> subprocess.CompletedProcess:
    """click's completion entry point (``kseg.cli.main:main``) in a child, ``env`` added to the environment."""
    import os

    return subprocess.run(
        [sys.executable, "-c", "from kseg.cli.main import main; main()"],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_shell_completion_script(shell: str) -> None:
    """docs/options.md: ``_KSEG_COMPLETE=bash_source kseg`` prints a completion script."""
    p = _complete(_KSEG_COMPLETE=f"{shell}_source")
    assert p.returncode == 0, p.stderr
    assert "_KSEG_COMPLETE" in p.stdout and "complete" in p.stdout


def test_shell_completion_completes_commands() -> None:
    p = _complete(_KSEG_COMPLETE="bash_complete", COMP_WORDS="kseg verify-", COMP_CWORD="1")
    assert p.returncode == 0 and "verify-index" in p.stdout, p.stdout + p.stderr


def test_readme_tells_a_newcomer_what_next() -> None:
    readme = (ROOT / "README.md").read_text()
    first = readme.index("kseg dump --deep-iteration --files examples/orders-0")
    after = readme[first : first + 600]
    assert "Next, try `kseg verify-index examples/orders-0`" in after
    for command in ("verify-index examples/orders-0", "lookup-offset 268 examples/orders-0"):
        assert run_cli(command.split()).exit_code == 0


@pytest.mark.parametrize("command", [["verify-index"], ["rebuild-index", "--check"]])
def test_tables_on_a_terminal_plain_lines_when_piped(command: list[str], tmp_path: Path, monkeypatch) -> None:
    for name in ("orders-2", "orders-10"):
        shutil.copytree(SAMPLE, tmp_path / name)
    piped = run_cli([*command, str(tmp_path)])
    assert piped.exit_code == 0 and "┃" not in piped.text and "│" not in piped.text
    monkeypatch.setenv("KSEG_TABLES", "1")  # as a terminal gets it
    tty = run_cli([*command, str(tmp_path)])
    assert tty.exit_code == 0
    rows = [line for line in tty.text.splitlines() if line.startswith("│")]
    assert [row.split("│")[1].strip().rsplit("/", 1)[-1] for row in rows] == ["orders-2", "orders-10"]
    # the plain lines are all there, the table added before the summary line
    assert [line for line in tty.text.splitlines() if line in piped.text.splitlines()] == piped.text.splitlines()
    assert tty.text.splitlines()[-1] == piped.text.splitlines()[-1]
    monkeypatch.setenv("KSEG_TABLES", "1")
    assert "┃" not in run_cli([*command, "--format", "json", str(tmp_path)]).text


def test_progress_names_the_file_and_shows_eta() -> None:
    import io

    from rich.console import Console

    from kseg.render.progress import ByteProgress

    buf = io.StringIO()
    bar = ByteProgress(Console(file=buf, force_terminal=True, width=150))
    bar.describe("orders-0/00000000000000000251.log")
    bar.start("verify-index", 100 << 20)
    bar.advance_to(50 << 20)
    bar._progress.refresh()
    bar.close()
    text = buf.getvalue()
    assert "orders-0/00000000000000000251.log" in text and "ETA" in text


def test_progress_counts_items() -> None:
    import io

    from rich.console import Console

    from kseg.render.progress import ByteProgress

    buf = io.StringIO()
    bar = ByteProgress(Console(file=buf, force_terminal=True, width=150))
    bar.start("rebuild-index", 3, count=True)
    bar.advance_to(1)
    bar._progress.refresh()
    bar.close()
    assert "1/3" in buf.getvalue() and "bytes" not in buf.getvalue()


@pytest.mark.parametrize(
    "args",
    [
        ["verify-index", str(SAMPLE)],
        ["verify-index", "-j", "2", str(SAMPLE)],
        ["rebuild-index", "--check", str(SAMPLE)],
        ["rebuild-index", "--check", "-j", "2", "{tmp}/root"],
        ["dump", str(LOG)],
        ["export", "--force", str(SAMPLE), "-o", "{tmp}/o.parquet"],
        ["txn", str(SAMPLE)],
        ["compaction", str(SAMPLE)],
        ["diff", "--any-names", str(SAMPLE), "{tmp}/root/orders-1"],
        ["rebuild-index", "--output-dir", "{tmp}/out", str(SAMPLE)],
        ["salvage", "--force", str(SAMPLE), "-o", "{tmp}/salvaged/orders-0"],
    ],
)
def test_every_progress_bar_runs(args: list[str], tmp_path: Path) -> None:
    """KSEG_PROGRESS=1 draws the bar without a terminal: each command's progress path runs to the end."""
    for name in ("orders-1", "orders-2"):
        shutil.copytree(SAMPLE, tmp_path / "root" / name)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    run = run_subprocess if "-j" in argv else run_cli  # -j 2's worker processes: started from a child of its own
    p = run(argv, env={"KSEG_PROGRESS": "1"})
    assert p.exit_code == 0 and "Traceback" not in p.errtext and "Error" not in p.errtext, p.errtext
    quiet = run([argv[0], "-q", *argv[1:]], env={"KSEG_PROGRESS": "1"})
    assert quiet.exit_code == 0 and quiet.stderr == b"", quiet.errtext


# -- each documented shared option works on every command (docs/options.md), through the one Run ---------
def _noted_tree(tmp_path: Path) -> Path:
    """``root/orders-0`` without its first .index (the lookups note it; dump of its .timeindex too),
    ``root/orders-1.<hex>-delete`` (skipped with a note by every command that walks a root), ``root2``
    a replica root for ``diff --roots``, ``meta`` a metadata log dir with a ``-delete`` directory."""
    shutil.copytree(SAMPLE, tmp_path / "root" / "orders-0")
    shutil.copytree(SAMPLE, tmp_path / "root" / "orders-1.0123abcd-delete")
    shutil.copytree(SAMPLE, tmp_path / "root2" / "orders-0")
    (tmp_path / "root" / "orders-0" / "00000000000000000000.index").unlink()
    shutil.copytree(CORPUS_DATA / "__cluster_metadata-0", tmp_path / "meta" / "__cluster_metadata-0")
    shutil.copytree(SAMPLE, tmp_path / "meta" / "orders-1.0123abcd-delete")
    return tmp_path


NOTED_RUNS = {
    "dump": [
        "dump",
        "{tmp}/root/orders-0/00000000000000000000.log",
        "{tmp}/root/orders-0/00000000000000000000.timeindex",
    ],
    "verify-index": ["verify-index", "{tmp}/root"],
    "lookup-offset": ["lookup-offset", "3", "{tmp}/root/orders-0"],
    "lookup-time": ["lookup-time", "earliest", "{tmp}/root/orders-0"],
    "rebuild-index": ["rebuild-index", "--check", "{tmp}/root"],
    "txn": ["txn", "{tmp}/root"],
    "compaction": ["compaction", "--at", "0", "{tmp}/root"],
    "diff": ["diff", "--roots", "{tmp}/root", "{tmp}/root2"],
    "export": ["export", "--force", "{tmp}/root", "-o", "{tmp}/out.parquet"],
    "grep": ["grep", "--from-offset", "0", "{tmp}/root"],  # note: the -delete directory skipped
    "logdir": ["logdir", "{tmp}/root"],  # notes: no meta.properties, no leader-epoch-checkpoint
    "tiered": ["tiered", "{tmp}/root/orders-0"],  # note: not named __remote_log_metadata-<n>
    "salvage": ["salvage", "--force", "{tmp}/root", "-o", "{tmp}/out/orders-0"],  # note: the -delete directory
    "metadata": ["metadata", "{tmp}/meta"],  # note: the -delete directory skipped
}


# rebuild-index --check: the missing .index is a difference; logdir: the -delete directory is a leftover;
# tiered: orders-0's records are no remote log metadata
EXPECTED = {"rebuild-index": 1, "logdir": 1, "tiered": 1}


def _noted_run(name: str, tmp_path: Path, *extra: str) -> list[str]:
    args = [a.replace("{tmp}", str(tmp_path)) for a in NOTED_RUNS[name]]
    return [args[0], *extra, *args[1:]]


def test_every_command_has_a_noted_run() -> None:
    assert set(NOTED_RUNS) == set(READING)


@pytest.mark.parametrize("name", READING)
def test_quiet_silences_every_commands_notes(name: str, tmp_path: Path) -> None:
    """``-q``: the same exit code, and no ``kseg: note:`` line (each run here has one); the same output
    but for verify-index and rebuild-index, whose ``-q`` also leaves out clean segments
    (tests/cli/test_verify_grouping.py, tests/cli/test_rebuild.py)."""
    _noted_tree(tmp_path)
    loud = run_cli(_noted_run(name, tmp_path))
    quiet = run_cli(_noted_run(name, tmp_path, "-q"))
    expected = EXPECTED.get(name, 0)
    assert loud.exit_code == quiet.exit_code == expected, (loud.errtext, quiet.errtext)
    assert "kseg: note:" in loud.errtext
    assert quiet.errtext == ""
    if name in ("verify-index", "rebuild-index"):
        assert quiet.text.splitlines()[-1] == loud.text.splitlines()[-1]  # the summary line
    else:
        assert quiet.stdout == loud.stdout


@pytest.mark.parametrize("name", READING)
def test_max_rate_and_drop_cache_pace_every_commands_reads(name: str, tmp_path: Path, monkeypatch) -> None:
    """``--max-rate``/``--drop-cache``: the command's segment reads go through the read policy they make
    (``kseg.storage.read_policy``: the rate in bytes a second, the page-cache guard); without them none."""
    from kseg.storage import read_policy

    _noted_tree(tmp_path)
    made: list[read_policy.ReadPolicy] = []
    reads: list[int] = []

    class Counted(read_policy.ReadPolicy):
        def __init__(self, max_rate, drop_cache) -> None:
            super().__init__(max_rate, drop_cache)
            made.append(self)

        def after(self, token, n: int) -> None:
            reads.append(n)
            super().after(token, n)

    monkeypatch.setattr(read_policy, "ReadPolicy", Counted)
    expected = EXPECTED.get(name, 0)
    r = run_cli(_noted_run(name, tmp_path, "-q", "--max-rate", "1000", "--drop-cache"))
    assert r.exit_code == expected, r.errtext
    assert len(made) == 1 and made[0].throttle is not None and made[0].guard is not None
    assert made[0].throttle.rate == 1000e6
    assert sum(reads) > 0  # segment bytes read under the policy
    r = run_cli(_noted_run(name, tmp_path, "-q"))
    assert r.exit_code == expected and len(made) == 1


def test_run_is_made_once_and_frozen() -> None:
    """A command's Run carries its options; it cannot be changed under the command."""
    import dataclasses
    import io

    run = options.Run(io.BytesIO(), io.BytesIO(), quiet=True, max_rate=5.0, drop_cache=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.quiet = False  # type: ignore[misc]
    run.note("nothing")
    assert run.err.getvalue() == b""  # type: ignore[attr-defined]
    assert run.error("x: broken") == 2 and run.err.getvalue() == b"kseg: error: x: broken\n"  # type: ignore[attr-defined]
    loud = options.Run(io.BytesIO(), io.BytesIO())
    loud.removed(["a", "b"])
    loud.removed([])
    assert loud.err.getvalue() == b"kseg: note: removed 2 temporary files an interrupted kseg run left: a, b\n"  # type: ignore[attr-defined]


def test_spark_value_checks_options_that_would_do_nothing() -> None:
    import io

    run = options.Run(io.BytesIO(), io.BytesIO(), max_rate=1.0)
    with pytest.raises(SystemExit) as e:
        options.Spark(on=True).check(run)
    assert e.value.code == 2 and b"--max-rate and --drop-cache" in run.err.getvalue()  # type: ignore[attr-defined]
    quiet = options.Run(io.BytesIO(), io.BytesIO())
    options.Spark(verbose=True).check(quiet, local_verbose=True)  # verify-index's own --verbose
    with pytest.raises(SystemExit):
        options.Spark(master="yarn", conf=("a=b",)).check(quiet)
    assert quiet.err.getvalue() == b"kseg: error: --master and --spark-conf take effect only with --spark\n"  # type: ignore[attr-defined]


# -- the listing's progress on stderr (kseg.render.progress.ListingStatus): for humans only -----------------
@pytest.fixture(scope="module")
def small_fleet(s3, tmp_path_factory) -> tuple[Path, str]:
    """Two brokers' log directories of two partitions each: on local disk, and under an S3 prefix."""
    root = tmp_path_factory.mktemp("fleet")
    for broker in ("b1", "b2"):
        (root / broker / "data").mkdir(parents=True)
        (root / broker / "data" / "meta.properties").write_text("version=0\n")
        for name in ("orders-0", "orders-1"):
            shutil.copytree(SAMPLE, root / broker / "data" / name)
    s3.upload_tree(root, "listing-status")
    return root, s3.uri("listing-status")


@pytest.mark.parametrize(
    "args",
    [
        ["verify-index", "{s3}"],
        ["verify-index", "--format", "json", "{s3}"],
        ["verify-index", "{local}/b1/data", "{local}/b2/data"],
        ["txn", "--format", "json", "{s3}"],
        ["diff", "--roots", "{local}/b1/data", "{local}/b2/data"],
    ],
)
def test_the_listing_shows_on_stderr_only(small_fleet: tuple[Path, str], args: list[str]) -> None:
    """KSEG_PROGRESS=1 (a terminal kseg cannot see) draws the listing's line on stderr; stdout, text or JSON,
    is byte for byte what it is without it, and ``-q`` shows nothing."""
    local, uri = small_fleet
    argv = [a.replace("{s3}", uri).replace("{local}", str(local)) for a in args]
    shown = run_cli(argv, env={"KSEG_PROGRESS": "1", "COLUMNS": "300"})
    plain = run_cli(argv, env={"KSEG_NO_PROGRESS": "1"})
    assert shown.exit_code == plain.exit_code == 0 and shown.stdout == plain.stdout
    err = shown.stderr.decode()
    # every key listed once (2 meta.properties, 4 partitions of 8 files), every listing ended; files on disk
    counted = "keys" if "{s3}" in args else "files"
    assert re.search(
        rf"listing \S+(, \S+)?: \d+ directories listed \(0 in progress\), 34 {counted}, 4 partitions", err
    ), err
    assert plain.stdout and b"listing" not in plain.stderr
    quiet = run_cli([argv[0], "-q", *argv[1:]], env={"KSEG_PROGRESS": "1"})
    assert quiet.exit_code == 0 and quiet.stdout and quiet.stderr == b""
