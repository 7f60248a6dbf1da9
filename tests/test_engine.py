"""``kseg.engine``: which engine runs, how to choose it, and how it says so (issue 12)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kseg import __version__, engine
from tests.conftest import CORPUS_DATA, TESTS

LOG = str(CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log")


def kseg(args: list[str], env: dict, block_engine: bool = False, fake_engine: str = "") -> subprocess.CompletedProcess:
    """``python -m kseg ARGS`` with ``env``; ``block_engine`` runs it as if the engine were not built;
    ``fake_engine`` is Python that puts a stand-in module ``m`` in place of ``kseg._engine``."""
    fake = (
        ("import types\nm = types.ModuleType('kseg._engine')\n" + fake_engine + "\nsys.modules['kseg._engine'] = m\n")
        if fake_engine
        else ""
    )
    code = (
        "import sys\n"
        + ("sys.modules['kseg._engine'] = None\n" if block_engine else "")
        + fake
        + "import runpy\nsys.argv = ['kseg'] + sys.argv[1:]\nrunpy.run_module('kseg', run_name='__main__')\n"
    )
    full = {k: v for k, v in os.environ.items() if k != "KSEG_ENGINE"}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=full, cwd=TESTS.parent, timeout=120
    )


def test_ci_built_the_engine() -> None:
    """``.ci/run`` sets KSEG_REQUIRE_ENGINE=1 for the run with the engine: it must really be built and chosen."""
    if os.environ.get("KSEG_REQUIRE_ENGINE") != "1":
        pytest.skip("KSEG_REQUIRE_ENGINE=1 is set by .ci/run only")
    assert engine.C is not None and engine.NAME == "c", engine.description()


def test_version_names_the_engine() -> None:
    r = kseg(["--version"], {})
    assert r.returncode == 0
    assert r.stdout.splitlines()[0] == f"kseg, version {__version__}"
    last = r.stdout.splitlines()[-1]
    assert last == "engine: c" or last.startswith("engine: python (kseg._engine is not built")
    if os.environ.get("KSEG_REQUIRE_ENGINE") == "1":
        assert last == "engine: c"


def test_forced_python_says_why() -> None:
    r = kseg(["--version"], {"KSEG_ENGINE": "python"})
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "engine: python (KSEG_ENGINE=python)"


def test_not_built_says_why_and_runs_python() -> None:
    r = kseg(["--version"], {}, block_engine=True)
    assert r.returncode == 0
    assert r.stdout.splitlines()[-1].startswith("engine: python (kseg._engine is not built")
    r = kseg(["dump", "--deep-iteration", LOG], {}, block_engine=True)
    assert r.returncode == 0 and "| offset: 0 " in r.stdout


def test_an_engine_from_another_install_is_not_used() -> None:
    """An editable install elsewhere on the machine must not lend its build to this copy (CI, stop 16)."""
    r = kseg(["--version"], {}, fake_engine="m.__file__ = '/elsewhere/kseg/_engine.so'; m.ABI = 1")
    assert r.returncode == 0
    assert r.stdout.splitlines()[-1].startswith("engine: python (kseg._engine is not built in ")
    assert "(the one at /elsewhere/kseg/_engine.so belongs to another install of kseg)" in r.stdout


def test_an_engine_of_another_abi_is_not_used() -> None:
    beside = str(TESTS.parent / "kseg" / "_engine.so")
    r = kseg(["--version"], {}, fake_engine=f"m.__file__ = {beside!r}; m.ABI = 0")
    assert r.returncode == 0
    assert r.stdout.splitlines()[-1] == (
        f"engine: python (kseg._engine at {beside} implements engine ABI 0, "
        f"this kseg needs {engine.ABI} (reinstall kseg to rebuild it))"
    )
    r = kseg(["dump", "--deep-iteration", LOG], {"KSEG_ENGINE": "c"}, fake_engine=f"m.__file__ = {beside!r}")
    assert r.returncode == 2 and r.stderr.splitlines() == [
        f"kseg: error: KSEG_ENGINE=c but kseg._engine at {beside} implements engine ABI None, "
        f"this kseg needs {engine.ABI} (reinstall kseg to rebuild it)"
    ]


def shared_constants() -> dict[str, object]:
    """What the engine must export, with Python's values (:func:`kseg.engine.check`'s table)."""
    from kseg.format import v2_records

    return dict(v2_records.ENGINE_SHARED)


def test_the_shared_table_holds_kafkas_layout() -> None:
    """The table the engine is checked against holds DefaultRecordBatch's layout as Kafka writes it:
    each field's offset, the header tuple's order, the flags and bounds the engine applies."""
    want = shared_constants()
    offsets = [
        want[name]
        for name in (
            "BASE_OFFSET_OFFSET",
            "LENGTH_OFFSET",
            "PARTITION_LEADER_EPOCH_OFFSET",
            "MAGIC_OFFSET",
            "CRC_OFFSET",
            "ATTRIBUTES_OFFSET",
            "LAST_OFFSET_DELTA_OFFSET",
            "BASE_TIMESTAMP_OFFSET",
            "MAX_TIMESTAMP_OFFSET",
            "PRODUCER_ID_OFFSET",
            "PRODUCER_EPOCH_OFFSET",
            "BASE_SEQUENCE_OFFSET",
            "RECORDS_COUNT_OFFSET",
            "RECORD_BATCH_OVERHEAD",
        )
    ]
    assert offsets == [0, 8, 12, 16, 17, 21, 23, 27, 35, 43, 51, 53, 57, 61]
    assert [want[name] for name in want if name.startswith("H_")] == list(range(13))
    assert (want["LOG_OVERHEAD"], want["HEADER_SIZE_UP_TO_MAGIC"], want["RECORD_OVERHEAD_V0"]) == (12, 17, 14)
    assert (want["DELETE_HORIZON_FLAG"], want["NO_SEQUENCE"], want["INT32_MAX"]) == (0x40, -1, 2**31 - 1)
    assert (want["VARINT_MAX_BYTES"], want["VARLONG_MAX_BYTES"]) == (5, 10)
    assert (want["FORM_SLICES"], want["FORM_SIZES"], want["FORM_SPANS"]) == (0, 1, 2)


def test_the_built_engine_shares_pythons_constants() -> None:
    """The values the C engine derives itself (``FORM_*``, the batch layout, the header tuple's format)
    are Python's: 61, 17, 21, 12, 14 and ``(LiibkhiLLLhii)``."""
    if engine.C is None:
        pytest.skip(f"the C engine is not in use: {engine.description()}")
    want = shared_constants()
    assert {name: getattr(engine.C, name, None) for name in want} == want
    assert want["RECORD_BATCH_OVERHEAD"] == 61 and want["HEADER_FORMAT"] == "(LiibkhiLLLhii)"


@pytest.mark.parametrize(
    "name, wrong",
    [
        ("RECORD_BATCH_OVERHEAD", 60),
        ("FORM_SPANS", 3),
        ("HEADER_FORMAT", "(LiibkhiLLLhi)"),
        ("CRC_OFFSET", None),
        ("H_COUNT", 11),
        ("RECORDS_COUNT_OFFSET", None),
        ("VARLONG_MAX_BYTES", 9),
    ],
)
def test_an_engine_whose_constants_differ_is_not_used(name: str, wrong: object) -> None:
    """A build whose constants differ from Python's (or lack one) is not used: Python runs and
    ``kseg --version`` says which value differs; ``KSEG_ENGINE=c`` is then an error."""
    beside = str(TESTS.parent / "kseg" / "_engine.so")
    values = dict(shared_constants())
    if wrong is None:
        del values[name]
    else:
        values[name] = wrong
    fake = f"m.__file__ = {beside!r}; m.ABI = {engine.ABI}\nfor k, v in {values!r}.items(): setattr(m, k, v)"
    r = kseg(["--version"], {}, fake_engine=fake)
    assert r.returncode == 0
    assert r.stdout.splitlines()[-1] == (
        f"engine: python (kseg._engine at {beside} has {name} = {wrong!r}, "
        f"Python's is {shared_constants()[name]!r} (reinstall kseg to rebuild it))"
    )
    r = kseg(["dump", "--deep-iteration", LOG], {"KSEG_ENGINE": "c"}, fake_engine=fake)
    assert r.returncode == 2 and r.stderr.startswith(
        f"kseg: error: KSEG_ENGINE=c but kseg._engine at {beside} has {name} = {wrong!r}"
    )
    r = kseg(["dump", "--deep-iteration", LOG], {}, fake_engine=fake)
    assert r.returncode == 0 and "| offset: 0 " in r.stdout  # the Python engine ran


def test_the_built_engine_has_this_abi() -> None:
    if engine.C is None:
        pytest.skip(f"the C engine is not in use: {engine.description()}")
    assert engine.C.ABI == engine.ABI


def test_required_engine_not_built_is_one_line_exit_2() -> None:
    r = kseg(["dump", LOG], {"KSEG_ENGINE": "c"}, block_engine=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "kseg: error: KSEG_ENGINE=c but kseg._engine is not built (installed without a C compiler or Python headers?)"
    ]


def test_unknown_engine_is_a_usage_error() -> None:
    r = kseg(["dump", LOG], {"KSEG_ENGINE": "rust"})
    assert r.returncode == 2 and r.stderr.splitlines() == ["kseg: error: KSEG_ENGINE='rust' is not one of c, python"]


@pytest.mark.skipif(engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)")
def test_required_engine_runs() -> None:
    r = kseg(["--version"], {"KSEG_ENGINE": "c"})
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "engine: c"


@pytest.mark.parametrize("args", [["--help"], ["dump", "--help"]])
def test_help_does_not_import_the_engine(args: list[str]) -> None:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['kseg'] + {args!r}\n"
        "try:\n    runpy.run_module('kseg', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m in ('kseg.engine', 'kseg._engine')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KSEG_ENGINE"}  # set, it is checked before any command
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=TESTS.parent, env=env
    )
    assert p.stdout.strip().splitlines()[-1] == "[]"
