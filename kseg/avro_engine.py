"""Whether the registry decoder's compiled Avro reader (``kseg._avro``, issue 35) runs, and why not.

Asked when a codec is made and by ``kseg --version`` (``avro reader: c`` or ``avro reader: python
(<why>)``).  ``KSEG_ENGINE=python`` runs the Python reader here too.  Like :mod:`kseg.engine`'s check,
the module must lie in this package's directory and implement this kseg's program layout (``ABI``).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

ABI = 3  # kseg/_avro.c's KSEG_AVRO_ABI: the program layout of kseg/decoders/registry/avro_program.py


def compiled_module() -> tuple[ModuleType | None, str]:
    """(``kseg._avro``, "") when it runs, else (None, why the Python reader runs)."""
    if os.environ.get("KSEG_ENGINE", "").strip().lower() == "python":
        return None, "KSEG_ENGINE=python"
    try:
        module = importlib.import_module("kseg._avro")
    except ImportError:
        return None, "kseg._avro is not built (installed without a C compiler or Python headers?)"
    here = os.path.dirname(os.path.abspath(__file__))
    where = os.path.abspath(getattr(module, "__file__", "") or "")
    if os.path.dirname(where) != here:
        return None, f"kseg._avro is not built in {here} (the one at {where} belongs to another install of kseg)"
    if getattr(module, "ABI", None) != ABI:
        return None, f"kseg._avro at {where} implements ABI {getattr(module, 'ABI', None)}, this kseg needs {ABI}"
    return module, ""


def description() -> str:
    """``c``, or ``python (<why>)``: what ``kseg --version`` prints after ``avro reader: ``."""
    module, why = compiled_module()
    return "c" if module is not None else f"python ({why})"
