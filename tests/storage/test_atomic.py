"""``kseg.storage.atomic``: the target is the old file or the new one, never a mix, and no
temporary file outlives a failure -- including a process killed while writing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from kseg.errors import InputError
from kseg.storage import atomic
from kseg.storage.atomic import write_atomic

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def names(directory) -> list[str]:
    return sorted(os.listdir(directory))  # hidden names too


@pytest.fixture(params=["unnamed", "named"])
def mode(request, monkeypatch):
    """Both ways to write: O_TMPFILE (Linux) and the named temporary file fallback."""
    if request.param == "named":
        monkeypatch.setattr(atomic, "_open_unnamed", lambda directory, mode: None)
    return request.param


def test_create_replace_and_refuse(tmp_path, mode) -> None:
    target = tmp_path / "a.index"
    write_atomic(str(target), b"one", replace=False)
    assert target.read_bytes() == b"one"
    os.chmod(target, 0o600)
    write_atomic(str(target), b"two", replace=True)
    assert target.read_bytes() == b"two" and (target.stat().st_mode & 0o777) == 0o600
    with pytest.raises(InputError, match="exists; not replaced"):
        write_atomic(str(target), b"three", replace=False)
    assert target.read_bytes() == b"two" and names(tmp_path) == ["a.index"]


def test_a_failing_write_leaves_the_target_and_no_temporary_file(tmp_path, mode, monkeypatch) -> None:
    """ENOSPC after the first chunk: the old file stays, nothing else appears."""
    target = tmp_path / "a.index"
    target.write_bytes(b"old")
    calls = []
    real_write = os.write

    def write(fd, data):
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(atomic, "CHUNK", 4)
    monkeypatch.setattr(atomic.os, "write", write)
    for replace in (True, False):
        with pytest.raises(InputError, match="cannot write: No space left on device"):
            write_atomic(str(tmp_path / ("a.index" if replace else "b.index")), b"x" * 64, replace=replace)
        calls.clear()
    assert target.read_bytes() == b"old" and names(tmp_path) == ["a.index"]


def test_a_missing_directory_is_an_input_error(tmp_path) -> None:
    with pytest.raises(InputError, match="cannot write"):
        write_atomic(str(tmp_path / "no" / "a.index"), b"x", replace=False)


KILLED = textwrap.dedent("""
    import os, sys, time
    from kseg.storage import atomic
    real = atomic._write_all
    def slow(fd, data):
        os.write(fd, data[:10])          # half the new bytes are in the file ...
        print("writing", flush=True)      # ... when the parent kills us
        time.sleep(60)
        real(fd, data)
    atomic._write_all = slow
    atomic.write_atomic(sys.argv[1], b"N" * 100, replace=True)
""")


def test_a_killed_writer_leaves_the_old_file_and_nothing_else(tmp_path) -> None:
    target = tmp_path / "00000000000000000000.index"
    target.write_bytes(b"O" * 100)
    p = subprocess.Popen([sys.executable, "-c", KILLED, str(target)], stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert p.stdout.readline() == b"writing\n"
        os.kill(p.pid, signal.SIGKILL)
    finally:
        p.wait(30)
    assert p.returncode == -signal.SIGKILL
    assert target.read_bytes() == b"O" * 100
    assert names(tmp_path) == ["00000000000000000000.index"]  # the unnamed file died with the process


def test_clean_stale_removes_only_kseg_temp_files_of_wanted_targets(tmp_path) -> None:
    from kseg.storage.atomic import clean_stale, stale_temp_target

    names = [
        ".00000000000000000000.index.0123456789ab.kseg-tmp",  # ours, wanted
        ".00000000000000000000.log.0123456789ab.kseg-tmp",  # ours, not wanted
        ".x.index.0123.kseg-tmp",  # not 12 hex digits
        "00000000000000000000.index.0123456789ab.kseg-tmp",  # not hidden
        ".y.index.0123456789ab.kseg-tmpx",
    ]
    for name in names:
        (tmp_path / name).write_bytes(b"")
    (tmp_path / ".d.index.0123456789ab.kseg-tmp").mkdir()  # a directory of that name: left alone
    assert stale_temp_target(names[0]) == "00000000000000000000.index"
    removed = clean_stale(str(tmp_path), lambda target: target.endswith(".index"))
    assert removed == [str(tmp_path / names[0])]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*names[1:], ".d.index.0123456789ab.kseg-tmp"])
    assert clean_stale(str(tmp_path / "missing"), lambda target: True) == []
