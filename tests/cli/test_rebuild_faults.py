"""rebuild-index under faults (issue 19): a run killed between the temporary file's link and its rename
leaves ``.<name>.<hex>.kseg-tmp`` behind, and the next writing run removes it with a note; a partition
directory renamed during the run (a broker deleting it: ``*-delete``) is never recreated."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import CORPUS_DATA, assert_no_traceback, run_subprocess


def _partition(tmp_path: Path) -> Path:
    part = tmp_path / "orders-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    (part / "00000000000000000000.index").write_bytes(b"\0" * 8)  # one file to replace
    return part


KILL_BEFORE_RENAME = textwrap.dedent("""
    import os, signal, sys
    from kseg.storage import atomic
    def replace(*args, **kwargs):  # the temporary file is linked: die before it is renamed
        os.kill(os.getpid(), signal.SIGKILL)
    atomic.os.replace = replace
    from kseg.cli.main import main
    sys.argv = ["kseg", "rebuild-index", "--force", sys.argv[1]]
    main()
""")


def test_a_kill_between_link_and_rename_is_cleaned_by_the_next_run(tmp_path: Path) -> None:
    part = _partition(tmp_path)
    p = subprocess.run([sys.executable, "-c", KILL_BEFORE_RENAME, str(part)], capture_output=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr
    left = sorted(x.name for x in part.iterdir() if x.name.endswith(".kseg-tmp"))
    assert len(left) == 1 and left[0].startswith(".00000000000000000000.index."), left
    (part / ".notes.txt.kseg-tmp").write_text("not kseg's naming: kept")
    (part / ".00000000000000000000.log.0123456789ab.kseg-tmp").write_text("not an index: kept")
    r = run_subprocess(["rebuild-index", "--check", str(part)])  # --check writes nothing, removes nothing
    assert (part / left[0]).exists() and "temporary" not in r.errtext
    r = run_subprocess(["rebuild-index", "--force", str(part)])
    assert r.exit_code == 0, r.errtext
    assert r.errtext == (f"kseg: note: removed 1 temporary file an interrupted kseg run left: {part / left[0]}\n")
    assert sorted(x.name for x in part.iterdir() if x.name.endswith(".kseg-tmp")) == [
        ".00000000000000000000.log.0123456789ab.kseg-tmp",
        ".notes.txt.kseg-tmp",
    ]
    assert (part / "00000000000000000000.index").read_bytes() == (
        CORPUS_DATA / "plain-v2-0" / "00000000000000000000.index"
    ).read_bytes()


RENAME_DURING_RUN = textwrap.dedent("""
    import os, sys
    from kseg.ops.rebuild import write as rebuild_write
    real = rebuild_write._read
    part = sys.argv[1]
    def read(path, store):  # the broker deletes the partition while kseg rebuilds it
        if os.path.isdir(part):
            os.rename(part, part + ".0123456789abcdef0123456789abcdef-delete")
        return real(path, store)
    rebuild_write._read = read
    from kseg.cli.main import main
    sys.argv = ["kseg", "rebuild-index", sys.argv[1]]
    main()
""")


def test_a_partition_renamed_during_the_run_is_not_recreated(tmp_path: Path) -> None:
    part = _partition(tmp_path)
    p = subprocess.run([sys.executable, "-c", RENAME_DURING_RUN, str(part)], capture_output=True, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert not part.exists()  # not recreated with orphan index files
    assert f"{part}/00000000000000000000.index: not written: {part}: the directory vanished during the run" in err
    assert_no_traceback(type("R", (), {"stderr": p.stderr, "errtext": err})())
    moved = tmp_path / (part.name + ".0123456789abcdef0123456789abcdef-delete")
    assert (moved / "00000000000000000000.index").read_bytes() == b"\0" * 8  # nothing written there either


def test_a_report_or_export_left_half_renamed_is_cleaned_by_the_next_run(tmp_path: Path) -> None:
    part = _partition(tmp_path)
    for args, name in (
        (["verify-index", "--force", "--report"], "r.jsonl"),
        (["export", "--force", "-o"], "x.parquet"),
    ):
        stale = tmp_path / f".{name}.0123456789ab.kseg-tmp"
        stale.write_bytes(b"half")
        other = tmp_path / f".other-{name}.0123456789ab.kseg-tmp"
        other.write_bytes(b"not this output's")
        r = run_subprocess([*args, str(tmp_path / name), str(part)])
        assert r.exit_code in (0, 1), r.errtext
        assert f"kseg: note: removed 1 temporary file an interrupted kseg run left: {stale}\n" in r.errtext
        assert not stale.exists() and other.exists() and (tmp_path / name).stat().st_size > 0
