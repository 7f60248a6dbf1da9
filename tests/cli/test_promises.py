"""Every command keeps every promise (docs/robustness.md, "Outcomes"): the conformance suite.

Every command of ``kseg.cli.main.COMMANDS`` x every way its input or its run can go wrong:

* ``unlistable``: the partition directory cannot be listed (mode 000);
* ``unreadable``: its first segment's ``.log`` cannot be read (mode 000);
* ``first_corrupt``: the first batch's length field is 5 (below Kafka's minimum of 14);
* ``text_log``: the first segment's ``.log`` is a text file;
* ``truncated``: the first of the two segments ends in the middle of a batch (a middle segment: one
  follows it);
* ``vanished``: the first segment's ``.log`` is deleted after the directory was listed, just before
  it is opened -- a test hook wraps the one function every segment reader opens a ``.log`` with
  (``kseg.storage.records.open_for_read``) and unlinks the file first: the OS then answers ENOENT to
  the real open, as it does when a broker's retention deletes a segment under kseg;
* ``closed_stdout``: the reader of stdout has gone before the command writes;
* ``sigint``: Ctrl-C while the command reads (``--max-rate`` keeps it reading; the signal is sent once
  the process holds the segment open, seen in ``/proc/<pid>/fd``);
* ``shrinks``: the first segment is cut to half after it was opened (a hook before the first window read);
* ``fifo``: a FIFO named like the first segment;
* ``eio``: the kernel answers EIO to reads of the first segment (strace's fault injection), from the
  first read or in the middle of a 12 MiB segment;
* ``crc``: a byte of the first batch's records flipped: its framing holds, its CRC does not;
* ``missing_dependency``: pyarrow cannot be imported (a ``sitecustomize`` on ``PYTHONPATH`` blocks it):
  ``export`` needs it for Parquet, every other command for an ``s3://`` path.

Each cell asserts the exit code, a line naming the file and the cause, no traceback, no verdict word
for data that was not read, and inputs unchanged (hashes before and after).  The permission cells run
as a real process (as root, capabilities dropped with ``setpriv``: root reads any file); the signal,
pipe and dependency cells are real processes by nature; the rest run in-process through click.

A command added to ``COMMANDS`` fails :func:`test_every_command_has_a_row` until it has an argument
builder in ``ARGS``, and then gets the whole row.  A command that reads no files (``coordinator``: it
computes a partition from an id) has its builder in ``NO_FILES`` instead: no cell that damages, removes
or blocks an input can reach it, so it gets the cells that can -- a closed stdout -- and its usage errors
(exit 2, one line, no traceback) in :func:`test_no_files_usage_errors`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kseg.cli.main import COMMANDS
from tests.conftest import CORPUS_DATA, as_unprivileged_root, kseg_argv, run_cli

ROOT = Path(__file__).resolve().parents[2]
SOURCE = CORPUS_DATA / "plain-v2-0"  # two segments: 0 (offsets 0..250, 28637 bytes) and 251
SEG0, SEG1 = "00000000000000000000", "00000000000000000251"


class Tree:
    """``bad/p-0`` (the damaged partition), ``good/p-0`` (an intact replica), ``out/`` (outputs)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.bad = base / "bad" / "p-0"
        self.good = base / "good" / "p-0"
        self.out = base / "out"
        for d in (self.bad, self.good):
            shutil.copytree(SOURCE, d)
        self.out.mkdir()

    @property
    def log0(self) -> Path:
        return self.bad / f"{SEG0}.log"

    @property
    def log1(self) -> Path:
        return self.bad / f"{SEG1}.log"

    def hashes(self) -> dict[str, str]:
        return {
            str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for d in (self.bad, self.good)
            for p in sorted(d.iterdir())
        }


# -- one argument builder per command: what it is run on (the damaged partition, read whole) ------------
ARGS = {
    "dump": lambda t: [str(t.log0), str(t.log1)],  # positional files: dump goes on after a failed one
    "verify-index": lambda t: [str(t.bad)],
    "lookup-offset": lambda t: ["5", str(t.bad)],  # in the first segment
    "lookup-time": lambda t: ["1730000000005", str(t.bad)],  # before the first batch's timestamp
    "export": lambda t: [str(t.bad), "-o", str(t.out / "x.parquet")],
    "grep": lambda t: ["--key", "key-204-0", str(t.bad)],  # a record at byte 21385 of the first segment
    "rebuild-index": lambda t: ["--check", str(t.bad)],
    "salvage": lambda t: [str(t.bad), "-o", str(t.out / "p-0")],
    "txn": lambda t: ["--from-start", str(t.bad)],  # every segment read (not only those after the snapshot)
    "compaction": lambda t: [str(t.bad)],
    "diff": lambda t: [str(t.good), str(t.bad)],
    "logdir": lambda t: [str(t.bad)],  # a partition directory: its log directory, for that partition
    "tiered": lambda t: [str(t.bad)],  # a partition directory given by name is read as __remote_log_metadata
    "metadata": lambda t: ["--from-start", str(t.bad)],  # the one partition found is read as __cluster_metadata-0
}


# -- the commands that read no files: exempt from the input cells (nothing to damage), not from the rest ----
NO_FILES = {"coordinator": lambda t: ["--group", "my-group", "--transactional-id", "tx-1"]}
READING = sorted(set(COMMANDS) - set(NO_FILES))
# each one's usage errors: (arguments, what its one line says)
NO_FILES_USAGE = {
    "coordinator": [
        ([], r"--group ID or --transactional-id"),
        (["--group", "g", "--partitions", "0"], r"--partitions: '0' is not a partition count"),
        (["--group", "g", "--partitions", "fifty"], r"--partitions: 'fifty' is not a partition count"),
        (["--group", "g", "--partitions", "2147483648"], r"--partitions: '2147483648'"),
    ],
}


def test_every_command_has_a_row() -> None:
    """A command without an argument builder would escape the suite: it fails here instead."""
    assert not set(ARGS) & set(NO_FILES)
    missing = sorted(set(COMMANDS) - set(ARGS) - set(NO_FILES))
    assert not missing, f"give {missing} an argument builder in ARGS (or NO_FILES, if it reads no files)"
    assert set(NO_FILES_USAGE) == set(NO_FILES)


@pytest.mark.parametrize(
    "command,args,said", [(c, a, s) for c, cases in sorted(NO_FILES_USAGE.items()) for a, s in cases]
)
def test_no_files_usage_errors(command: str, args: list[str], said: str) -> None:
    """A command that reads no files still answers a usage error the project's way, as a real process:
    exit 2, one ``kseg: error:`` line on stderr, nothing on stdout."""
    p = subprocess.run(kseg_argv(command, *args), capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kseg: error: "), p.stderr
    assert re.search(said, lines[0]), lines[0]


# -- the damage -------------------------------------------------------------------------------------------
def _first_corrupt(t: Tree) -> None:
    with open(t.log0, "r+b") as f:
        f.seek(8)
        f.write(struct.pack(">i", 5))


def _text_log(t: Tree) -> None:
    t.log0.write_text("this is a text file someone named like a segment, not a Kafka log\n")


def _truncated(t: Tree) -> None:
    os.truncate(t.log0, 20000)  # the batch at byte 15967 runs past the new end


DAMAGE = {"first_corrupt": _first_corrupt, "text_log": _text_log, "truncated": _truncated}

# what each command answers (dump keeps Kafka's meaning: a partial batch at the end is reported, exit 0)
EXIT = {
    "first_corrupt": dict.fromkeys(READING, 1),
    "text_log": {**dict.fromkeys(READING, 1), "dump": 0},
    "truncated": {**dict.fromkeys(READING, 1), "dump": 0, "lookup-offset": 0, "lookup-time": 0},
}
# the cause each names, beside the damaged file's path
CAUSE = {
    "first_corrupt": r"byte 0\b.*(record size 5|smaller than minimum)",
    "text_log": r"(byte 0\b|invalid bytes|partial batch|no whole batch)",
    "truncated": r"(invalid bytes|partial batch)",
}

# a verdict on the damaged segment or the whole partition: never printed for data not read to its end
VERDICTS = [
    r"\bno problems\b",
    r"\bidentical\b",
    r"\blagging\b",
    rf"{SEG0}\S*: clean\b",
    rf"{SEG0}\S*: no tombstones",
    rf"{SEG0}\.log: \d+ batch(es)?, \d+ bytes, all valid",
    r"\b0 clean\b.*\bexit",
]
NOTHING_WRITTEN = r"\bwritten\b"


def _no_verdict(text: str, code: int) -> None:
    for pattern in VERDICTS + ([NOTHING_WRITTEN] if code == 2 else []):
        assert not re.search(pattern, text), (pattern, text)


def _names_cause(r_out: str, r_err: str, path: Path, cause: str) -> None:
    lines = (r_out + "\n" + r_err).splitlines()
    hits = [line for line in lines if str(path) in line and re.search(cause, line, re.I)]
    assert hits, (str(path), cause, r_out[-2000:], r_err[-2000:])


def _nothing_written(t: Tree) -> None:
    """An export that met an I/O error wrote nothing: no output, no temporary file left beside it."""
    assert list(t.out.iterdir()) == [], list(t.out.iterdir())


def _clean_stderr(command: str, err: str) -> None:
    assert "Traceback" not in err and "Usage:" not in err, err
    if command != "dump":  # dump's stderr is Kafka's tool's (its error lines are kseg's)
        for line in err.splitlines():
            assert line.startswith("kseg: "), (line, err)


def _failed_for_io(
    command: str, t: Tree, code: int, out: str, err: str, named: Path, cause: str, never: str | None = None
) -> None:
    """What every I/O failure promises: exit 2, a clean stderr, ``named`` and its ``cause`` said, no verdict,
    nothing written (and, if given, nothing matching ``never`` in the output)."""
    assert code == 2, (code, out[-3000:], err)
    _clean_stderr(command, err)
    _names_cause(out, err, named, cause)
    if never is not None:
        assert not re.search(never, out + err, re.I), (out, err)
    _no_verdict(out, 2)
    _nothing_written(t)


@pytest.mark.parametrize("command", READING)
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_input(tmp_path: Path, command: str, damage: str) -> None:
    t = Tree(tmp_path)
    DAMAGE[damage](t)
    before = t.hashes()
    r = run_cli([command, *ARGS[command](t)])
    out, err = r.text, r.errtext
    assert r.exit_code == EXIT[damage][command], (r.exit_code, out[-3000:], err)
    _clean_stderr(command, err)
    if r.exit_code:
        _names_cause(out, err, t.log0, CAUSE[damage])
        _no_verdict(out, r.exit_code)
    assert t.hashes() == before


def _crc(t: Tree) -> None:
    """A byte of the first batch's first record flipped: the framing holds, the CRC no longer matches."""
    data = bytearray(t.log0.read_bytes())
    data[70] ^= 0xFF
    t.log0.write_bytes(bytes(data))


# a CRC fault: what each command answers (dump and the lookups show ``isvalid: false`` as Kafka's tool and a
# broker's fetch do; grep searches the batch as read, saying so, and answers by what it found), and where the
# cause is named -- the damaged file, or (diff) its segment in the damaged replica's lines
CRC_EXIT = {**dict.fromkeys(READING, 1), "dump": 0, "lookup-offset": 0, "lookup-time": 0, "grep": 0}
CRC_SHOWN = {"dump", "lookup-offset", "lookup-time"}  # answered with the batch line's ``isvalid: false``


@pytest.mark.parametrize("command", READING)
def test_crc_fault(tmp_path: Path, command: str) -> None:
    """The first batch's CRC no longer holds (its framing does): every command reads the segment, names the
    fault where it reports, gives no verdict for what it did not take, and changes no input."""
    t = Tree(tmp_path)
    _crc(t)
    before = t.hashes()
    r = run_cli([command, *ARGS[command](t)])
    out, err = r.text, r.errtext
    assert r.exit_code == CRC_EXIT[command], (r.exit_code, out[-3000:], err)
    _clean_stderr(command, err)
    if command in CRC_SHOWN:
        assert "position: 0 " in out and "crc: 1709751215 isvalid: false" in out, out[-3000:]
    else:
        named = Path(SEG0) if command == "diff" else t.log0
        _names_cause(out, err, named, r"\bcrc\b")
    if command == "diff":  # the whole replica stays "identical" where it agrees (docs/diff.md); the set is damaged
        assert out.startswith("p-0: 2 replicas, DAMAGED in a copy"), out
        out = "\n".join(line for line in out.splitlines() if str(t.bad) in line)
    if r.exit_code:
        _no_verdict(out, r.exit_code)
    assert t.hashes() == before


def test_logdir_crc_fault_a_broker_would_truncate(tmp_path: Path) -> None:
    """logdir's row for a CRC fault: the tree's log directory has no ``.kafka_cleanshutdown`` and no recovery
    point, so a broker starting on it recovers the whole log and truncates at the first batch (docs/logdir.md,
    "Recovery").  The suite's promises: exit 1, the file and the cause named, no verdict, inputs unchanged.
    (The other commands meet a CRC fault in their own ways, on their own pages.)"""
    t = Tree(tmp_path)
    _crc(t)
    before = t.hashes()
    r = run_cli(["logdir", *ARGS["logdir"](t)])
    assert r.exit_code == 1, (r.exit_code, r.text, r.errtext)
    _clean_stderr("logdir", r.errtext)
    _names_cause(r.text, r.errtext, t.log0, r"byte 0\b.*Record is corrupt \(stored crc = ")
    _no_verdict(r.text, 1)
    assert "p-0: problems; " in r.text and "recovery truncates at offset 0" in r.text, r.text
    assert t.hashes() == before


def test_logdir_txnindex_version_a_broker_would_not_start_on(tmp_path: Path) -> None:
    """logdir's row for a ``.txnindex`` entry of version 1 (its first byte, as Kafka reads it): a broker's load
    of the partition fails on it, on every start (docs/logdir.md, "Recovery").  The suite's promises: exit 1,
    the file, the entry's byte and Kafka's message named, no verdict, inputs unchanged."""
    t = Tree(tmp_path)
    index = t.bad / f"{SEG1}.txnindex"
    index.write_bytes(struct.pack(">hqqqq", 0, 7, 251, 260, 251) + struct.pack(">hqqqq", 1 << 8, 7, 270, 280, 270))
    before = t.hashes()
    r = run_cli(["logdir", *ARGS["logdir"](t)])
    assert r.exit_code == 1, (r.exit_code, r.text, r.errtext)
    _clean_stderr("logdir", r.errtext)
    _names_cause(r.text, r.errtext, index, r"byte 34: Unexpected aborted transaction version 1 in transaction index ")
    _no_verdict(r.text, 1)
    assert "p-0: problems; " in r.text and "PROBLEM load fails: " in r.text, r.text
    assert t.hashes() == before


@pytest.mark.parametrize("command", READING)
def test_vanished_between_listing_and_reading(tmp_path: Path, monkeypatch, command: str) -> None:
    from kseg.storage import records

    t = Tree(tmp_path)
    real = records.open_for_read
    gone = str(t.log0)

    def open_after_retention(path: str, *store):
        if os.path.abspath(str(path)) == gone and os.path.exists(gone):
            os.unlink(gone)  # deleted after the listing, before the read: the real open answers ENOENT
        return real(path, *store)

    monkeypatch.setattr(records, "open_for_read", open_after_retention)
    r = run_cli([command, *ARGS[command](t)])
    out, err = r.text, r.errtext
    assert not t.log0.exists(), "the hook never ran: this command does not open its .log through FileRecords"
    _failed_for_io(command, t, r.exit_code, out, err, t.log0, r"no such file")


@pytest.mark.parametrize("command", READING)
def test_shrinks_while_read(tmp_path: Path, monkeypatch, command: str) -> None:
    """The first segment is cut to half its size after it was opened, just before its first window is
    read (a broker truncating it under kseg): the reader, whose size was fixed at open, meets the end
    early -- an I/O failure (exit 2), never a corrupt batch.  The test hook is the reader's read policy
    (``records.read_policy_of(context)``, consulted before every window read, and ``read_policy.policy_of``,
    the copy's; ``--max-rate`` uses them)."""
    from kseg.storage import read_policy, records

    t = Tree(tmp_path)
    target, half = str(t.log0), t.log0.stat().st_size // 2

    class ShrinkBeforeRead:
        throttle = guard = None

        def before(self, f, position: int, length: int):
            if getattr(f, "name", None) == target and os.path.getsize(target) > half:
                os.truncate(target, half)
            return None

        def after(self, token, n: int) -> None:
            pass

    # every read context of the run reads through the hook (restored at teardown)
    monkeypatch.setattr(read_policy, "policy_of", lambda context: ShrinkBeforeRead())
    monkeypatch.setattr(records, "read_policy_of", lambda context: ShrinkBeforeRead())
    r = run_cli([command, *ARGS[command](t)])
    out, err = r.text, r.errtext
    assert t.log0.stat().st_size == half, "the hook never ran"
    _failed_for_io(command, t, r.exit_code, out, err, t.log0, r"shrank", never=r"corrupt|index-(position|offset)")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("command", READING)
def test_fifo_named_like_a_segment(tmp_path: Path, command: str) -> None:
    """A FIFO where the first segment should be: refused without opening it (an open would block until
    a writer came), exit 2 -- never a corruption row or a hang."""
    t = Tree(tmp_path)
    t.log0.unlink()
    os.mkfifo(t.log0)
    r = run_cli([command, *ARGS[command](t)])
    out, err = r.text, r.errtext
    _failed_for_io(command, t, r.exit_code, out, err, t.log0, r"not a regular file")


# -- permissions: real processes (root drops the capabilities that let it read anything) --------------------
def _kseg(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(as_unprivileged_root(kseg_argv(*args)), capture_output=True, cwd=ROOT, timeout=120, **kw)


@pytest.mark.parametrize("command", READING)
@pytest.mark.parametrize("what", ["unlistable", "unreadable"])
def test_permission_denied(tmp_path: Path, command: str, what: str) -> None:
    t = Tree(tmp_path)
    before = t.hashes()
    target = t.bad if what == "unlistable" else t.log0
    mode = target.stat().st_mode
    target.chmod(0)
    try:
        p = _kseg([command, *ARGS[command](t)])
    finally:
        target.chmod(mode)
    out, err = p.stdout.decode(), p.stderr.decode()
    named = t.log0 if (what == "unreadable" or command == "dump") else t.bad
    _failed_for_io(command, t, p.returncode, out, err, named, r"permission denied")
    if command == "dump" and what == "unreadable":  # positional files too: dump goes on to the next one
        assert f"Dumping {t.log1}\nLog starting offset: 251\nbaseOffset: 251 " in out, out
    assert t.hashes() == before


# -- a closed stdout, Ctrl-C, a missing optional dependency ---------------------------------------------------
def _formats(command: str) -> list[str]:
    """The ``--format`` values a command takes (none: its one output)."""
    import importlib

    module, attr, _ = COMMANDS[command]
    cmd = getattr(importlib.import_module(module), attr)
    choice = next((p.type for p in cmd.params if p.name == "output_format"), None)
    return list(choice.choices) if choice is not None else []


@pytest.mark.parametrize(
    "command,fmt", [(c, f) for c in sorted(COMMANDS) for f in (_formats(c) or [None])]
)  # NO_FILES too
def test_closed_stdout_is_death_by_sigpipe(tmp_path: Path, command: str, fmt: str | None) -> None:
    """The reader went away before the command wrote (``| head -0``): killed by SIGPIPE (141 in the
    shell), nothing on stderr, text and JSON -- never an exit status that reads as a verdict."""
    t = Tree(tmp_path)
    before = t.hashes()
    read_end, write_end = os.pipe()
    os.close(read_end)
    fmt_args = [] if fmt is None else ["--format", fmt]
    try:
        p = subprocess.run(
            [sys.executable, "-m", "kseg", command, *fmt_args, *{**ARGS, **NO_FILES}[command](t)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert p.returncode == -signal.SIGPIPE, (p.returncode, p.stderr.decode())
    assert p.stderr == b""
    assert t.hashes() == before


def _holds_open(pid: int, tree: Path) -> bool:
    """Whether process ``pid`` has a file of ``tree`` open (it is reading its input)."""
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith(f"{tree}/") for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to see when the command reads")
@pytest.mark.parametrize("command", READING)
def test_ctrl_c_while_reading_is_130(tmp_path: Path, command: str) -> None:
    t = Tree(tmp_path)
    before = t.hashes()
    # 0.01 MB/s (the least --max-rate takes): the first window read of a 28 KB segment is followed by a
    # ~3 s pause, the file open
    p = subprocess.Popen(
        [sys.executable, "-m", "kseg", command, *ARGS[command](t), "--max-rate", "0.01"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 60
        while not _holds_open(p.pid, t.base):
            assert p.poll() is None, (p.returncode, p.stderr.read().decode())
            assert time.monotonic() < deadline, "the command never opened its input"
            time.sleep(0.02)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, (p.returncode, err.decode())
    assert err == b"kseg: interrupted\n"
    _no_verdict(out.decode(), 2)
    assert t.hashes() == before


@pytest.fixture(scope="module")
def no_pyarrow(tmp_path_factory) -> dict:
    """An environment whose Python cannot import pyarrow (a plain ``pip install kseg``)."""
    site = tmp_path_factory.mktemp("nopyarrow")
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pyarrow' or name.startswith('pyarrow.'):\n"
        "            raise ImportError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, _Hide())\n"
    )
    return {**os.environ, "PYTHONPATH": str(site)}


@pytest.mark.parametrize("command", READING)
def test_missing_optional_dependency(tmp_path: Path, no_pyarrow: dict, command: str) -> None:
    """Without pyarrow: ``export`` (Parquet) and every command given an ``s3://`` path say how to get it
    in one line, exit 2."""
    t = Tree(tmp_path)
    args = ARGS[command](t)
    if command != "export":
        args = [
            a.replace(str(t.bad), "s3://bucket/data/p-0").replace(str(t.good), "s3://bucket/data/p-0") for a in args
        ]
    p = subprocess.run(
        [sys.executable, "-m", "kseg", command, *args], capture_output=True, cwd=ROOT, timeout=120, env=no_pyarrow
    )
    err = p.stderr.decode()
    assert p.returncode == 2, (p.returncode, err)
    _clean_stderr(command, err)
    assert [line for line in err.splitlines() if "pip install 'kseg[remote]'" in line], err
    assert not (t.out / "x.parquet").exists()


# -- EIO: a disk that fails a read (fault injection: strace makes the kernel's answer to read(2) EIO) ----------
def _with_eio(log: Path, args: list[str], when: str) -> subprocess.CompletedProcess:
    """Run ``kseg ARGS`` with every read(2)/pread64(2) of ``log`` from the ``when``-th on failing EIO."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed: no way to inject EIO (apt-get install strace)")
    cmd = [
        "strace",
        "-f",
        "-qq",
        "-o",
        os.devnull,
        "-P",
        str(log),
        "-e",
        "trace=read,pread64",
        "-e",
        f"inject=read,pread64:error=EIO:when={when}",
        sys.executable,
        "-m",
        "kseg",
        *args,
    ]
    p = subprocess.run(cmd, capture_output=True, cwd=ROOT, timeout=120)
    if b"ptrace" in p.stderr.lower() and p.returncode != 0 and b"kseg: " not in p.stderr:
        pytest.skip(f"strace cannot trace here: {p.stderr.decode().strip()}")
    return p


def _strace_lines(err: str) -> str:
    return "\n".join(line for line in err.splitlines() if not line.startswith("strace: "))


@pytest.mark.parametrize("command", READING)
def test_eio_is_an_io_error_never_corruption(tmp_path: Path, command: str) -> None:
    """EIO reading a segment: a failed segment, exit 2 with the OS's reason -- never "corrupt", never
    followed by index problems derived from the unread bytes."""
    t = Tree(tmp_path)
    before = t.hashes()
    p = _with_eio(t.log0, [command, *ARGS[command](t)], "1+")
    out, err = p.stdout.decode(), _strace_lines(p.stderr.decode())
    never = r"corrupt|index-(position|offset)|isvalid: false|crc does not"
    _failed_for_io(command, t, p.returncode, out, err, t.log0, r"Input/output error", never=never)
    assert t.hashes() == before


def test_eio_in_the_middle_of_a_segment(tmp_path: Path) -> None:
    """The first 8 MiB window of a 12 MiB segment reads, the next fails: verify-index reports the segment
    failed (exit 2) -- not ``corrupt-batch`` followed by every index entry past the failure."""
    from kseg.testing.bulk import write_bulk_segment

    part = tmp_path / "big-0"
    write_bulk_segment(part, 12 << 20, records_per_batch=10, value_size=100, index_interval_bytes=4096)
    log = part / f"{SEG0}.log"
    p = _with_eio(log, ["verify-index", str(part)], "2+")
    out, err = p.stdout.decode(), _strace_lines(p.stderr.decode())
    assert p.returncode == 2, (p.returncode, out[-3000:], err)
    assert re.search(rf"{re.escape(str(log))}: at byte [1-9]\d*: read failed: Input/output error", out), out
    assert "problem" not in out and "corrupt" not in out, out
    assert "1 failed" in out.splitlines()[-1], out
