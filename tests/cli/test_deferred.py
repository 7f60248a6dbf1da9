"""The console script's deferred module (``kseg.cli.start._defer``), in a fresh interpreter each: ``import``
binds it without running it, its first use runs it once (whichever thread asks first; the others wait), and
a module already imported, a package or a name no finder knows is left to the import system."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

THREADS = """
import sys, threading
from kseg.cli.start import _defer, _Deferred
_defer("colorsys")
import colorsys
assert type(colorsys) is _Deferred and "rgb_to_hsv" not in vars(colorsys)
results, start = [], threading.Barrier(8)
def use():
    start.wait()
    results.append(colorsys.rgb_to_hsv(1.0, 0.0, 0.0))
threads = [threading.Thread(target=use) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
assert results == [(0.0, 1.0, 1.0)] * 8, results
assert type(colorsys) is type(sys) and colorsys.__file__.endswith("colorsys.py")
try:
    colorsys.no_such_name
except AttributeError as e:
    assert "no_such_name" in str(e)
else:
    raise AssertionError("a missing attribute was found")
from colorsys import hsv_to_rgb
assert hsv_to_rgb(0.0, 0.0, 1.0) == (1.0, 1.0, 1.0)
print("ok")
"""

LEFT_ALONE = """
import sys
import json, colorsys
from kseg.cli.start import _defer, _Deferred
before = sys.modules["colorsys"]
_defer("colorsys")  # already imported
_defer("email")  # a package
_defer("kseg_no_such_module")
assert sys.modules["colorsys"] is before and "kseg_no_such_module" not in sys.modules
import email
assert type(email) is not _Deferred and type(json) is not _Deferred
print("ok")
"""


@pytest.mark.parametrize("program", [THREADS, LEFT_ALONE], ids=["deferred", "left-alone"])
def test_a_deferred_module(program: str) -> None:
    p = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert (p.returncode, p.stdout, p.stderr) == (0, "ok\n", "")
