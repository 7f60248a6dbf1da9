"""The conformance suite's rows for the files around the segments (``test_promises.py`` keeps the segments').

Every auxiliary file kind (:data:`KINDS`: the offset checkpoints, ``leader-epoch-checkpoint``,
``meta.properties``, ``partition.metadata``, ``.kafka_cleanshutdown``, producer snapshots) x every command
that reads it (the kind's ``readers``) x every way it can go wrong:

* ``fifo``: a FIFO in its place -- refused without opening it (an open would block until a writer came);
* ``unreadable``: mode 000 (a real process, root without the capabilities that let it read anything);
* ``huge``: a sparse file past the kind's bound (refused before a byte is read: the refusal names the bound);
* ``truncated``: the file cut short of what it declares (a checkpoint's entry count, a snapshot's CRC).

Each cell asserts the command's exit code (the kind says, per command: exit 2 where the file is the
command's input, a note and the verdict where it is an extra the command goes without), a line naming the
file and the cause, no traceback, and inputs unchanged.  A kind added to :data:`KINDS` gets the whole row;
a command added to a kind's readers gets every cell.  :func:`test_stray_names` puts names Kafka's number
rules refuse (``²``) beside the partition and in it, for every command.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from kseg.storage import checkpoints as cp
from kseg.storage import leader_epochs, snapshots
from kseg.storage.private_keys import KEY
from kseg.storage.tiered import MAX_MANIFEST
from tests.cli.test_promises import ARGS, READING, Tree, _clean_stderr, _kseg, _no_verdict
from tests.conftest import run_cli

Args = Callable[[Tree], list[str]]


@dataclass(frozen=True)
class Reader:
    """How one command answers a file of the kind it cannot use: ``refused`` is its exit code for a FIFO, an
    unreadable or a huge file, ``broken`` for a truncated one; ``args`` what it is run on (default: ``ARGS``),
    ``setup`` what else the tree needs for the command to read the file."""

    refused: int
    broken: int | None  # None: no truncated cell (the file is read only when it is needed, and it is not)
    args: Args | None = None
    setup: Callable[[Tree], object] | None = None  # what else the command needs to read the file at all
    options: Args | None = None  # options given before the command's own arguments (``ARGS``), as ``--rsm-key``


@dataclass(frozen=True)
class Kind:
    """A kind of auxiliary file: where it is in the tree, its valid text, a truncated one and what says so,
    its bound (bytes: a sparse file one past it is huge), and the commands that read it."""

    where: Callable[[Tree], Path]
    valid: bytes  # b"": the file the setup or the corpus put there
    truncated: bytes  # b"": the valid file cut in half
    broken_cause: str
    bound: int | None  # None: no bound of its own (an object read at the places its manifest names)
    readers: dict[str, Reader] = field(default_factory=dict)


def _in_log_dir(name: str) -> Callable[[Tree], Path]:
    return lambda t: t.bad.parent / name


def _in_partition(name: str) -> Callable[[Tree], Path]:
    return lambda t: t.bad / name


_OFFSETS_BROKEN = r"Expected \[2\] entries in checkpoint file"
_LOGDIR = Reader(refused=2, broken=1)  # its input: exit 2 when unreadable, a problem when malformed
_NOTED = Reader(refused=0, broken=0)  # an extra: a note says it was not used, the verdict stands


def _metadata_log(t: Tree) -> Path:
    """A ``__cluster_metadata-0`` beside the tree, and the tree's log directory a broker's (``--logdir``)."""
    from tests.ops.metadata.build import Log, record

    meta = t.base / "meta" / "__cluster_metadata-0"
    if not meta.exists():
        lg = Log()
        lg.batch(record("FeatureLevelRecord", name="metadata.version", featureLevel=21))
        lg.write(meta)
    properties = t.bad.parent / cp.META_PROPERTIES
    if not properties.exists():
        properties.write_bytes(b"version=1\nnode.id=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n")
    return meta


# metadata --logdir: the log directory's files are its input (exit 2 unreadable, a problem malformed)
_METADATA = Reader(
    refused=2,
    broken=1,
    args=lambda t: ["--format", "json", str(_metadata_log(t)), "--logdir", str(t.bad.parent)],
    setup=_metadata_log,
)

KINDS: dict[str, Kind] = {
    cp.RECOVERY_POINT: Kind(
        _in_log_dir(cp.RECOVERY_POINT),
        b"0\n1\np 0 420\n",
        b"0\n2\np 0 420\n",
        _OFFSETS_BROKEN,
        cp.OFFSETS.max_bytes,
        {"logdir": _LOGDIR},
    ),
    cp.HIGH_WATERMARK: Kind(
        _in_log_dir(cp.HIGH_WATERMARK),
        b"0\n1\np 0 420\n",
        b"0\n2\np 0 420\n",
        _OFFSETS_BROKEN,
        cp.OFFSETS.max_bytes,
        {"logdir": _LOGDIR, "txn": _NOTED},
    ),
    cp.LOG_START: Kind(
        _in_log_dir(cp.LOG_START),
        b"0\n1\np 0 0\n",
        b"0\n2\np 0 0\n",
        _OFFSETS_BROKEN,
        cp.OFFSETS.max_bytes,
        {
            "logdir": _LOGDIR,
            # compaction reads the log start only where the cleaner's checkpoint has no entry for the partition
            "compaction": Reader(0, 0, setup=lambda t: (t.bad.parent / cp.CLEANER).write_bytes(b"0\n0\n")),
            "lookup-offset": _NOTED,
            "lookup-time": _NOTED,
        },
    ),
    cp.CLEANER: Kind(
        _in_log_dir(cp.CLEANER),
        b"0\n1\np 0 0\n",
        b"0\n2\np 0 0\n",
        _OFFSETS_BROKEN,
        cp.OFFSETS.max_bytes,
        {"logdir": _LOGDIR, "compaction": _NOTED},
    ),
    leader_epochs.FILE_NAME: Kind(
        _in_partition(leader_epochs.FILE_NAME),
        b"0\n1\n0 0\n",
        b"0\n2\n0 0\n",
        r"expected 2 entries",
        cp.LEADER_EPOCHS.max_bytes,
        {"logdir": _LOGDIR, "verify-index": Reader(refused=0, broken=1), "diff": Reader(refused=2, broken=0)},
    ),
    cp.META_PROPERTIES: Kind(
        _in_log_dir(cp.META_PROPERTIES),
        b"version=0\nbroker.id=1\n",
        b"broker.id=1\n",
        r"Failed to find the 'version'",
        cp.META.max_bytes,
        {"logdir": _LOGDIR, "metadata": _METADATA},
    ),
    cp.PARTITION_METADATA: Kind(
        _in_partition(cp.PARTITION_METADATA),
        b"version: 0\ntopic_id: ZtkM3jXGTZeXkwZ3aAJvPA\n",
        b"version: 0\n",
        r"line 2: no line",
        cp.PARTITION_METADATA_KIND.max_line,
        {"logdir": _LOGDIR, "metadata": _METADATA},
    ),
    cp.CLEAN_SHUTDOWN: Kind(
        _in_log_dir(cp.CLEAN_SHUTDOWN),
        b'{"version":0,"brokerEpoch":5}',
        b'{"version":0,"brokerEp',
        r"expected \{",
        cp.CLEAN_SHUTDOWN_KIND.max_bytes,
        {"logdir": _LOGDIR},
    ),
    "producer snapshot": Kind(
        _in_partition("00000000000000000420.snapshot"),
        b"",
        b"",
        r"skipped",
        snapshots.KIND.max_bytes,
        {"txn": Reader(refused=2, broken=0, args=lambda t: [str(t.bad)])},
    ),
}


# -- Aiven's tiered layout: a segment's manifest and its .indexes object, and --rsm-key's key files ------------
def _aiven(t: Tree) -> Path:
    """``plain-v2-0`` in Aiven's layout (zstd, a variable chunk index, ``.indexes``) under the tree's base,
    and the first segment's key without suffix."""
    from tests.cli.test_tiered_aiven import copy_aiven, partition_dir, segment_id

    if not (t.base / "aiven").exists():
        copy_aiven(t.base / "aiven", "plain-v2-0", None, compression=True)
    return partition_dir(t.base / "aiven", "plain-v2-0") / f"00000000000000000000-{segment_id('plain-v2-0', 0)}"


def _aiven_reader(refused: int, broken: int | None, args: Callable[[Path], list[str]]) -> Reader:
    return Reader(refused, broken, args=lambda t: args(_aiven(t).parent), setup=_aiven)


def _key(t: Tree) -> list[str]:
    return ["--rsm-key", f"kp1={t.base / 'kp1.pem'}"]


def _takes_rsm_key(command: str) -> bool:
    import importlib

    from kseg.cli.main import COMMANDS

    module, attr, _ = COMMANDS[command]
    return any(p.name == "rsm_key" for p in getattr(importlib.import_module(module), attr).params)


KINDS.update(
    {
        ".rsm-manifest": Kind(
            lambda t: _aiven(t).with_suffix(".rsm-manifest"),
            b"",
            b"",
            r"not JSON",
            MAX_MANIFEST,
            {
                "verify-index": _aiven_reader(2, 1, lambda d: [str(d)]),
                "lookup-offset": _aiven_reader(2, 1, lambda d: ["5", str(d)]),
            },
        ),
        ".indexes": Kind(
            # cut to 8 bytes: the offset index (its first span) ends past the object
            lambda t: _aiven(t).with_suffix(".indexes"),
            b"",
            bytes(8),
            r"the object ends at byte 8",
            None,
            {  # verify-index: its index unread, the segment failed; the lookup reads the log from its start
                "verify-index": _aiven_reader(2, 2, lambda d: [str(d)]),
                "lookup-offset": _aiven_reader(0, 0, lambda d: ["5", str(d)]),
            },
        ),
        "--rsm-key": Kind(
            lambda t: t.base / "kp1.pem",
            b"-----BEGIN PRIVATE KEY-----\n",
            b"",
            "",
            KEY.max_bytes,
            {c: Reader(2, None, options=_key) for c in READING if _takes_rsm_key(c)},
        ),
    }
)
CELLS = [(kind, command) for kind, k in sorted(KINDS.items()) for command in sorted(k.readers)]
BOUNDED = [(kind, command) for kind, command in CELLS if KINDS[kind].bound is not None]
TRUNCATED = [(kind, command) for kind, command in CELLS if KINDS[kind].readers[command].broken is not None]


def _prepare(tmp_path: Path, kind: str, command: str) -> tuple[Tree, Path]:
    """The tree with the kind's valid file in place (and what else the command needs), and the file."""
    t = Tree(tmp_path)
    k = KINDS[kind]
    setup = k.readers[command].setup
    if setup is not None:
        setup(t)
    path = k.where(t)
    if k.valid:
        path.write_bytes(k.valid)
    return t, path


def _args(t: Tree, kind: str, command: str, spark: list[str] | None = None, own: dict[str, Args] = ARGS) -> list[str]:
    """The cell's command line: the command, ``spark`` (``--spark`` and its master, for a Spark row), the reader's
    options and its arguments (else the command's, from ``own``)."""
    reader = KINDS[kind].readers[command]
    options = reader.options(t) if reader.options else []
    return [command, *(spark or []), *options, *(reader.args or own[command])(t)]


def _names(out: str, err: str, path: Path, cause: str) -> None:
    hits = [line for line in (out + "\n" + err).splitlines() if path.name in line and re.search(cause, line, re.I)]
    assert hits, (str(path), cause, out[-3000:], err[-3000:])


def _hashes(t: Tree, skip: Path | None = None) -> dict[str, str]:
    """Every file of the tree but ``skip`` (a FIFO has no bytes to hash), by path."""
    import hashlib

    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(t.base.rglob("*"))
        if p.is_file() and not p.is_fifo() and p != skip
    }


def _check(command: str, expected: int, code: int, out: str, err: str, path: Path, cause: str) -> None:
    assert code == expected, (code, out[-3000:], err[-3000:])
    _clean_stderr(command, err)
    assert "internal error" not in err, err
    _names(out, err, path, cause)
    if code == 2:
        _no_verdict(out, 2)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("kind,command", CELLS)
def test_fifo(tmp_path: Path, kind: str, command: str) -> None:
    fifo_cell(tmp_path, kind, command, lambda t: run_cli(_args(t, kind, command)))


def fifo_cell(tmp_path: Path, kind: str, command: str, run: Callable[[Tree], Any]) -> None:
    """A FIFO in the file's place: refused as not a regular file, inputs unchanged (``run`` runs the command
    on the tree: here, or on Spark in tests/spark/test_promises_aux_spark.py)."""
    t, path = _prepare(tmp_path, kind, command)
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    before = _hashes(t)
    r = run(t)
    _check(command, KINDS[kind].readers[command].refused, r.exit_code, r.text, r.errtext, path, "not a regular file")
    assert _hashes(t) == before


@pytest.mark.parametrize("kind,command", CELLS)
def test_unreadable(tmp_path: Path, kind: str, command: str) -> None:
    t, path = _prepare(tmp_path, kind, command)
    before = _hashes(t)
    path.chmod(0)
    try:
        p = _kseg(_args(t, kind, command))
    finally:
        path.chmod(0o644)
    out, err = p.stdout.decode(), p.stderr.decode()
    _check(command, KINDS[kind].readers[command].refused, p.returncode, out, err, path, "permission denied")
    assert _hashes(t) == before


@pytest.mark.parametrize("kind,command", BOUNDED)
def test_huge(tmp_path: Path, kind: str, command: str) -> None:
    """One byte past the kind's bound, sparse (nothing is written, nothing should be read): refused, the
    refusal naming the bound."""
    huge_cell(tmp_path, kind, command, lambda t: run_cli(_args(t, kind, command)))


def huge_cell(tmp_path: Path, kind: str, command: str, run: Callable[[Tree], Any]) -> None:
    t, path = _prepare(tmp_path, kind, command)
    bound = KINDS[kind].bound
    assert bound is not None
    with open(path, "wb") as f:
        f.truncate(bound + 1)
    before = _hashes(t, skip=path)
    r = run(t)
    cause = rf"at most {bound}\b"
    _check(command, KINDS[kind].readers[command].refused, r.exit_code, r.text, r.errtext, path, cause)
    assert _hashes(t, skip=path) == before
    assert path.stat().st_size == bound + 1


@pytest.mark.parametrize("kind,command", TRUNCATED)
def test_truncated(tmp_path: Path, kind: str, command: str) -> None:
    truncated_cell(tmp_path, kind, command, lambda t: run_cli(_args(t, kind, command)))


def truncated_cell(tmp_path: Path, kind: str, command: str, run: Callable[[Tree], Any]) -> None:
    t, path = _prepare(tmp_path, kind, command)
    k = KINDS[kind]
    if k.truncated:
        path.write_bytes(k.truncated)
    else:  # a binary file: cut in the middle
        os.truncate(path, path.stat().st_size // 2)
    before = _hashes(t)
    r = run(t)
    broken = k.readers[command].broken
    assert broken is not None
    _check(command, broken, r.exit_code, r.text, r.errtext, path, k.broken_cause)
    assert _hashes(t) == before


# -- names Kafka's number rules refuse: a superscript two is no digit to Java (Character.isDigit) -------------
STRAY = "\u00b2"  # '²': str.isdigit() says yes, int() and Java say no
# logdir: an unknown file is a problem (Kafka never wrote it); tiered: a partition directory not of
# __remote_log_metadata, read as one as asked, holds no metadata records (problems, stray names or not);
# metadata: likewise, the tree's partition read as __cluster_metadata-0 holds no metadata records
STRAY_EXIT = {**dict.fromkeys(READING, 0), "logdir": 1, "tiered": 1, "metadata": 1}


@pytest.mark.parametrize("command", READING)
def test_stray_names(tmp_path: Path, command: str) -> None:
    """A file and a directory named ``²`` beside the partitions and in them: what Kafka would make of them,
    never an internal error."""
    t = Tree(tmp_path)
    for d in (t.bad, t.good):
        (d / STRAY).write_text("x")
        (d.parent / STRAY).mkdir()
    r = run_cli([command, *ARGS[command](t)])
    assert "internal error" not in r.errtext, r.errtext
    _clean_stderr(command, r.errtext)
    assert r.exit_code == STRAY_EXIT[command], (r.exit_code, r.text[-3000:], r.errtext)


ODD_PARTITION = {  # a partition directory whose number is no number to Java: read as a directory of segments
    "lookup-offset": lambda d: ["5", str(d)],
    "lookup-time": lambda d: ["1730000000005", str(d)],
    "export": lambda d: [str(d), "-o", str(d.parent / "x.parquet")],
    "verify-index": lambda d: [str(d)],
    "txn": lambda d: ["--from-start", str(d)],
    "compaction": lambda d: [str(d)],
    "rebuild-index": lambda d: ["--check", str(d)],
}


@pytest.mark.parametrize("command", sorted(ODD_PARTITION))
def test_partition_directory_named_with_a_superscript(tmp_path: Path, command: str) -> None:
    """``plain-²``: not ``<topic>-<partition>`` (``Integer.parseInt`` refuses ``²``), its segments still read."""
    from tests.conftest import CORPUS_DATA

    d = tmp_path / f"plain-{STRAY}"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", d)
    r = run_cli([command, *ODD_PARTITION[command](d)])
    assert "internal error" not in r.errtext, r.errtext
    _clean_stderr(command, r.errtext)
    assert r.exit_code == 0, (r.exit_code, r.text[-3000:], r.errtext)
