"""CRC-32C (Castagnoli), the checksum of magic v2 batches (``Crc32C``, ``DefaultRecordBatch.isValid``).

The compiled engine's (:mod:`kseg.engine`: SSE4.2's ``crc32`` instruction where the CPU has it) when the
engine runs; else the ``crc32c`` package's C function (hardware CRC-32C where the CPU has it), loaded on first
use and without the package's ``__init__``.  The two are compared on random buffers and seeds
(``tests/storage/test_records_engine.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from kseg import engine
from kseg.valueclass import Protocol

if TYPE_CHECKING:
    from typing_extensions import Buffer

_CRC32C: Crc32cFunction | None = None


class Crc32cFunction(Protocol):
    """The type of ``crc32c.crc32c``: ``(data, value=0) -> int``, continuing a CRC from ``value``."""

    def __call__(self, data: Buffer, value: int = 0, /) -> int: ...  # pragma: no cover - protocol


def crc32c_function() -> Crc32cFunction:
    """The engine's ``crc32c`` when the engine runs (a lookup then loads no second extension module), else
    ``crc32c.crc32c`` (hardware CRC-32C), loaded on first use."""
    if engine.C is not None:
        return cast(Crc32cFunction, engine.C.crc32c)
    global _CRC32C
    if _CRC32C is None:
        _CRC32C = _load_crc32c()
    return _CRC32C


def _load_crc32c() -> Crc32cFunction:
    """The ``crc32c`` package's C function without running its ``__init__``.

    ``import crc32c`` also imports its command-line module and reads its own
    version through ``importlib.metadata``: 40-90 ms, more than a whole
    ``kseg lookup-offset`` should take.  The extension module alone loads in
    about a millisecond; anything unexpected falls back to the plain import.
    """
    import sys

    package = sys.modules.get("crc32c")
    if package is not None:
        return cast(Crc32cFunction, package.crc32c)
    try:
        import importlib.machinery
        import importlib.util
        import os

        spec = importlib.util.find_spec("crc32c")
        for directory in (spec and spec.submodule_search_locations) or ():
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(directory, "_crc32c" + suffix)
                if os.path.isfile(path):
                    name = "crc32c._crc32c"
                    module = sys.modules.get(name)
                    if module is None:
                        loader = importlib.machinery.ExtensionFileLoader(name, path)
                        module_spec = importlib.util.spec_from_loader(name, loader)
                        if module_spec is None:  # pragma: no cover - a loader always makes a spec
                            break
                        module = importlib.util.module_from_spec(module_spec)
                        loader.exec_module(module)
                        sys.modules[name] = module  # a later `import crc32c` reuses it
                    return cast(Crc32cFunction, module.crc32c)
    except Exception:  # pragma: no cover - an unusual install: use the package as it is
        pass
    from crc32c import crc32c

    return cast(Crc32cFunction, crc32c)
