"""Which engine runs the hot paths: the compiled ``kseg._engine`` or pure Python (issue 12).

Chosen once, here, at first import.  ``KSEG_ENGINE=python`` forces the
pure-Python path; ``KSEG_ENGINE=c`` requires the compiled engine (the CLI
exits 2 with one line when it is not built, :func:`require`); unset, the
engine runs when it imports.  The engine implements exactly the seams of
:mod:`kseg.format.v2_records` (``decode_records``), :mod:`kseg.storage.records`
(``FileRecords.scan``), :mod:`kseg.render.text` (the batch and record lines) and the dump's
window loop (``Dumper._dump_windows`` through ``TextSink.window_lines``; its lz4 and zstd batches
decompressed by the libraries :func:`kseg.format.compression.window_codec` hands it), verify-index's log
pass over a window (``kseg.ops.verify.log._LogPass._windows``) and its bulk checks of index
entries and its index keys (``entries_match``, ``index_keys``), Kafka's recovery
rule over a list of batches (``kseg.ops.rebuild.recovery.Recovery.feed``: ``recover_items``), salvage's
``Found`` of each valid batch (``kseg.ops.salvage.found.read_segment``: ``found_items``) and
grep's search of a window for literal bytes (``find``, ``bytes.find`` by memmem), and
hands every record or batch it does not accept back to the Python rule, so
output and errors are the same with either engine.

Importing this module does not import the engine's users; ``kseg --help``
imports neither.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

ENV = "KSEG_ENGINE"

ABI = 9  # the seams' version; the compiled module's ``ABI`` must be equal (KSEG_ENGINE_ABI in _engine.c)

C: ModuleType | None = None  # the kseg._engine module, or None
NAME = "python"
REASON = ""  # why Python runs, when it does


def _foreign(module: object) -> str:
    """Why an imported ``kseg._engine`` must not run, or ``""`` when it belongs to this kseg.

    It must lie in this package's own directory (an editable install elsewhere
    on the machine can otherwise lend its build to another copy of kseg, whose
    Python rules may differ) and implement this kseg's seams (``ABI``).
    """
    where = os.path.abspath(getattr(module, "__file__", "") or "")
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.dirname(where) != here:
        return f"kseg._engine is not built in {here} (the one at {where} belongs to another install of kseg)"
    if getattr(module, "ABI", None) != ABI:
        return (
            f"kseg._engine at {where} implements engine ABI {getattr(module, 'ABI', None)}, "
            f"this kseg needs {ABI} (reinstall kseg to rebuild it)"
        )
    return ""


_choice = os.environ.get(ENV, "").strip().lower()
if _choice == "python":
    REASON = f"{ENV}=python"
elif _choice not in ("", "c", "auto"):
    REASON = f"{ENV}={_choice!r} is not one of c, python"
else:
    try:
        C = importlib.import_module("kseg._engine")
    except ImportError:  # not built: no compiler or headers at install time
        C = None
        REASON = "kseg._engine is not built (installed without a C compiler or Python headers?)"
    else:
        REASON = _foreign(C)
        if REASON:
            C = None
        else:
            NAME = "c"


#: ``struct`` codes of a batch header's fields -> the ``Py_BuildValue`` codes the engine builds them with.
_BUILD_CODES = {"q": "L", "i": "i", "b": "b", "I": "k", "h": "h"}


def build_format(struct_format: str) -> str:
    """The ``Py_BuildValue`` format of a tuple of the fields ``struct_format`` (big-endian) unpacks:
    what the engine's ``HEADER_FORMAT`` must be for ``kseg.format.v2.HEADER``."""
    return "(" + "".join(_BUILD_CODES.get(code, "?") for code in struct_format.lstrip(">")) + ")"


def check(python: dict[str, object]) -> None:
    """Compare the values the engine shares with Python (its ``FORM_*`` values and batch layout) with
    Python's, ``python`` by name; on the first that differs, or that the engine does not export, the
    Python engine runs and :func:`description` says why.  Called once, by :mod:`kseg.format.v2_records`
    at import, before any module takes the engine's functions."""
    global C, NAME, REASON
    if C is None:
        return
    for name, value in python.items():
        theirs = getattr(C, name, None)
        if theirs != value:
            where = os.path.abspath(getattr(C, "__file__", "") or "")
            C, NAME = None, "python"
            REASON = (
                f"kseg._engine at {where} has {name} = {theirs!r}, Python's is {value!r} (reinstall kseg to rebuild it)"
            )
            return


def description() -> str:
    """``c``, or ``python (<why>)``: what ``kseg --version`` prints after ``engine: ``."""
    return "c" if C is not None else f"python ({REASON})"


def require() -> str | None:
    """The one-line error when ``KSEG_ENGINE`` asks for what cannot run, else None."""
    if _choice == "c" and C is None:
        return f"{ENV}=c but {REASON}"
    if _choice not in ("", "c", "python", "auto"):
        return REASON
    return None
