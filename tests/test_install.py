"""``pip install`` without a C compiler still installs kseg, which runs the pure-Python engine (issue 12).

Simulated as the issue says: ``CC=false``.  The package is copied to a
temporary directory, installed (``--no-deps``) into a temporary virtual
environment, and the installed kseg must say ``engine: python (...)`` and pass
every golden of Kafka's tool.  ~10-20 s; marked ``install`` (``-m "not
install"`` leaves it out of a quick local run; CI runs it).

The temporary environment sees the packages of *the interpreter running the
tests* -- kseg's dependencies and pytest -- wherever they were installed: in
the system's site-packages, the user's, or a virtual environment's (issue 18:
``venv --system-site-packages`` would expose the *base* interpreter's
packages, which inside a user's venv lack crc32c, lz4, zstandard and snappy).
Those directories are appended to its ``sys.path`` by a ``.pth`` file of plain
paths, so their own ``.pth`` files are not run: an editable install of this
checkout in the outer environment cannot leak into the one under test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TESTS

ROOT = TESTS.parent

pytestmark = pytest.mark.install


def _outer_site_dirs() -> list[str]:
    """The site-packages directories of the running interpreter (venv, user and system ones alike),
    in its own order, without this checkout."""
    found = []
    for entry in sys.path:
        if entry and Path(entry).name in ("site-packages", "dist-packages") and Path(entry).is_dir():
            if Path(entry).resolve() != ROOT.resolve() and entry not in found:
                found.append(entry)
    return found


def test_install_without_a_compiler_runs_python_and_passes_the_goldens(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "kseg", src / "kseg", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    Path(site, "_kseg_test_outer.pth").write_text("".join(f"{d}\n" for d in _outer_site_dirs()))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KSEG_ENGINE", "KSEG_REQUIRE_ENGINE")}
    env["CC"] = "false"  # no working C compiler
    p = subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", str(src)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert not list(Path(site, "kseg").glob("_engine*.so")) + list(Path(site, "kseg").glob("_engine*.pyd")), (
        "the engine was built with CC=false"
    )

    r = subprocess.run(
        [str(venv / "bin" / "kseg"), "--version"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert r.returncode == 0
    assert r.stdout.splitlines()[-1].startswith("engine: python (kseg._engine is not built"), r.stdout

    # the goldens, on the installed package: this checkout's tests, imported after the venv's kseg, in this one
    # process (``-n 0``: the ``-n 2`` of pyproject.toml would start two more, collecting them again, one idle)
    code = (
        "import sys\n"
        f"sys.path[:] = [p for p in sys.path if p not in ('', {str(ROOT)!r})]\n"
        "import kseg, kseg.engine\n"
        "print('KSEG', kseg.__file__, kseg.engine.description(), flush=True)\n"
        "import pytest\n"
        "sys.exit(pytest.main(['-q', '-n', '0', '-p', 'no:cacheprovider', '--import-mode=append',"
        f" '--rootdir', {str(ROOT)!r}, {str(ROOT / 'tests' / 'cli' / 'test_dump_golden.py')!r}]))\n"
    )
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    first = r.stdout.splitlines()[0]
    assert first.startswith(f"KSEG {site}/kseg/__init__.py python (kseg._engine is not built"), first
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert " passed" in r.stdout.splitlines()[-1] and "failed" not in r.stdout.splitlines()[-1]
