"""The layers of kseg, enforced: ``docs/architecture.md``.

    engine    kseg._engine, kseg._avro                          the optional C extensions (import nothing of kseg)
    limits    kseg.limits                                       each constant once; imports nothing
    base      kseg, kseg.errors, kseg.jsonlines, kseg.timestamps, kseg.engine, kseg.avro_engine, kseg.words,
              kseg.valueclass
    format    kseg.format                                       bytes -> values
    storage   kseg.storage  |  testing  kseg.testing            Kafka's on-disk nouns (files, records, partitions)
                                                                | the writer
    ops       kseg.ops                                          one package per command (kseg.ops.<command>)
    render    kseg.render   |  decoders kseg.decoders           text/JSON | payload decoders
    runtime   kseg.runtime                                      a command's run (here or on Spark): streams, errors,
                                                                verify-index's resume, report and exit code
    spark     kseg.spark                                        calls runtime, ops, storage and render, never cli
    cli       kseg.cli                                          the thin click layer (no command module imports another)
    main      kseg.__main__                                     python -m kseg

A module may import its own package and any package of a lower layer;
packages on one layer (``|``) are independent; nothing in kseg imports
``kseg.testing`` (a public API for tests, not used by the tool).  No command
package ``kseg.ops.<command>`` imports another, except those in ``COMMAND_EXCEPTIONS``.  Every
import counts: top-level, inside functions, under ``TYPE_CHECKING``.  There
is no import cycle between modules.  A pure-AST check (no import-linter
dependency): it parses the sources, so it fails on the line that adds an
upward import even if that line never runs.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KSEG = ROOT / "kseg"

LAYERS = [
    {"kseg._engine", "kseg._avro"},  # kseg/_engine.c and kseg/_avro.c, optional compiled C: import no kseg module
    {"kseg.limits"},  # exit codes, bounds and Java's ranges: imports nothing, every module may use it
    {
        "kseg",
        "kseg.errors",
        "kseg.jsonlines",
        "kseg.timestamps",
        "kseg.engine",
        "kseg.avro_engine",
        "kseg.words",
        "kseg.valueclass",
    },
    {"kseg.format"},
    {"kseg.storage", "kseg.testing"},
    {"kseg.ops"},
    {"kseg.render", "kseg.decoders"},
    {"kseg.runtime"},
    {"kseg.spark"},
    {"kseg.cli"},
    {"kseg.__main__"},
]

# The one command that uses another: rebuild-index asks verify-index's rules whether a differing
# index is one an older Kafka wrote (kseg.ops.rebuild.write -> kseg.ops.verify.verify.older_writer_rules).
COMMAND_EXCEPTIONS = {
    ("kseg.ops.rebuild", "kseg.ops.verify"),
    # a salvaged log's indexes are those Kafka's recovery writes: rebuild-index's recovery, written once
    ("kseg.ops.salvage", "kseg.ops.rebuild"),
    # the image against the disks: the log directories read as kseg logdir reads them, one reader
    ("kseg.ops.metadata", "kseg.ops.logdir"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(module: str) -> str:
    """The layer unit of a module: ``kseg.storage.records`` -> ``kseg.storage``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def layer_of(unit: str) -> int:
    for n, units in enumerate(LAYERS):
        if unit in units:
            return n
    raise AssertionError(f"{unit} is in no layer: add it to LAYERS and docs/architecture.md")


@functools.cache
def parsed(source: str) -> ast.Module:
    """``ast.parse(source)``, once a process for each text: the house's tests (here, tests/test_house.py,
    tests/test_rules_once.py) walk the same ~300 modules again and again; the trees are only read."""
    return ast.parse(source)


def imports_in(source: str, module: str, is_package: bool, modules: set[str]) -> list[tuple[str, int]]:
    """Every kseg module ``module`` (whose text is ``source``) imports, with the line;
    ``from X import name`` resolves to ``X.name`` when that is a module."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((full if full in modules else base, node.lineno))
    return [(name, line) for name, line in found if name == "kseg" or name.startswith("kseg.")]


def graph() -> dict[str, list[tuple[str, int]]]:
    """Each kseg module's imports (a copy: the checks' companion tests add edges to theirs)."""
    return {module: list(edges) for module, edges in _graph().items()}


@functools.cache
def _graph() -> dict[str, list[tuple[str, int]]]:
    paths = sorted(KSEG.rglob("*.py"))
    modules = {module_name(p) for p in paths} | {module_name(p) for p in KSEG.glob("*.c")}  # C extensions
    return {module_name(p): imports_in(p.read_text(), module_name(p), p.name == "__init__.py", modules) for p in paths}


def layer_violations(edges: dict[str, list[tuple[str, int]]]) -> list[str]:
    bad = []
    for module, imported in edges.items():
        mine = package_of(module)
        for target, line in imported:
            theirs = package_of(target)
            if theirs == mine:
                continue
            if theirs == "kseg.testing":
                bad.append(f"{module}:{line} imports {target}: the tool never imports its test writer")
            elif layer_of(theirs) >= layer_of(mine):
                bad.append(f"{module}:{line} imports {target} ({theirs} is not below {mine})")
    return bad


def command_of(module: str) -> str | None:
    """The command package of a module: ``kseg.ops.verify.index`` -> ``kseg.ops.verify``."""
    parts = module.split(".")
    return ".".join(parts[:3]) if len(parts) > 2 and parts[:2] == ["kseg", "ops"] else None


def command_violations(edges: dict[str, list[tuple[str, int]]]) -> list[str]:
    bad = []
    for module, imported in edges.items():
        mine = command_of(module)
        for target, line in imported:
            theirs = command_of(target)
            if mine and theirs and theirs != mine and (mine, theirs) not in COMMAND_EXCEPTIONS:
                bad.append(f"{module}:{line} imports {target} (command {theirs} from command {mine})")
    return bad


# The cli modules every command module may use; each other kseg.cli module is one command's (or two's:
# lookup-offset and lookup-time) and imports no other (docs/architecture.md, the cli row).
CLI_SHARED = {
    "kseg.cli",
    "kseg.cli.main",
    "kseg.cli.options",
    "kseg.cli.params",
    "kseg.cli.parts",
    "kseg.cli.start",
    "kseg.cli.help_text",
    "kseg.cli.ending",
    "kseg.cli.decoder_names",
    "kseg.cli.lookup_plain",  # (the lookups' run, shared by the console script's plain path and kseg.cli.lookup)
}


def cli_violations(edges: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Imports of one ``kseg.cli.<command>`` module from another (shared click types go in ``cli/params.py``,
    option bundles in ``cli/options.py``)."""
    bad = []
    for module, imported in edges.items():
        if not module.startswith("kseg.cli.") or module in CLI_SHARED:
            continue
        for target, line in imported:
            if target.startswith("kseg.cli.") and target not in CLI_SHARED and target != module:
                bad.append(f"{module}:{line} imports {target} (a cli command module from another)")
    return bad


def cycles(edges: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    succ = {m: sorted({t for t, _ in imported if t in edges}) for m, imported in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in succ:
        if v not in index:
            visit(v)
    return found


def test_no_upward_import():
    assert layer_violations(graph()) == []


def test_no_command_imports_another():
    assert command_violations(graph()) == []


def test_no_cli_command_module_imports_another():
    assert cli_violations(graph()) == []


@pytest.mark.parametrize(
    "module, source",
    [
        ("kseg.cli.export", "from kseg.cli.lookup import TimestampType\n"),
        ("kseg.cli.compaction", "def f():\n    from kseg.cli.txn import Duration\n"),
        ("kseg.cli.verify", "import kseg.cli.rebuild\n"),
    ],
)
def test_the_check_catches_a_cli_command_importing_another(module, source):
    edges = graph()
    edges[module] = edges[module] + imports_in(source, module, False, set(edges))
    assert any(line.startswith(module) for line in cli_violations(edges))


def test_shared_cli_modules_import_no_command_module():
    """main names the commands by string (imported when run); options, params, start and help_text import none."""
    edges = graph()
    for module in CLI_SHARED:
        assert [t for t, _ in edges.get(module, []) if t.startswith("kseg.cli.") and t not in CLI_SHARED] == []


def test_every_exception_is_used():
    """An exception no import needs any more goes from ``COMMAND_EXCEPTIONS``."""
    used = {(command_of(m), command_of(t)) for m, imported in graph().items() for t, _ in imported}
    assert COMMAND_EXCEPTIONS <= used


def test_no_package_holds_30_percent_of_the_code():
    lines: dict[str, int] = {}
    for path in KSEG.rglob("*.py"):
        unit = command_of(module_name(path)) or package_of(module_name(path))
        lines[unit] = lines.get(unit, 0) + len(path.read_text().splitlines())
    total = sum(lines.values())
    assert {unit: n for unit, n in lines.items() if n > 0.3 * total} == {}


def test_no_import_cycle():
    assert cycles(graph()) == []


@pytest.mark.parametrize(
    "module, source, expected",
    [
        ("kseg.storage.records", "from kseg.render.text import TextSink\n", "kseg.render.text"),
        ("kseg.format.v2", "def f():\n    from kseg.storage import files\n", "kseg.storage.files"),
        ("kseg.render.text", "from kseg.decoders.jvm import java_utf8\n", "kseg.decoders.jvm"),
        ("kseg.spark.job", "import kseg.cli.main\n", "kseg.cli.main"),
        ("kseg.ops.lookup.offset", "from kseg.testing import writer\n", "kseg.testing.writer"),
    ],
)
def test_the_check_catches_an_upward_import(module, source, expected):
    """The check itself: each of these imports, added to a real module, is reported."""
    edges = graph()
    edges[module] = edges[module] + imports_in(source, module, False, set(edges))
    bad = layer_violations(edges)
    assert any(line.startswith(module) and f"imports {expected}" in line for line in bad), bad


@pytest.mark.parametrize(
    "module, source",
    [
        ("kseg.ops.txn.txn", "from kseg.ops.lookup.offset import PartitionLog\n"),
        ("kseg.ops.verify.index", "def f():\n    from kseg.ops.rebuild import rebuild\n"),
    ],
)
def test_the_check_catches_a_command_importing_another(module, source):
    edges = graph()
    edges[module] = edges[module] + imports_in(source, module, False, set(edges))
    assert any(line.startswith(module) for line in command_violations(edges))


def test_the_check_catches_storage_importing_a_command():
    edges = graph()
    edges["kseg.storage.records"] = edges["kseg.storage.records"] + [("kseg.ops.dump.dump", 1)]
    assert any(line.startswith("kseg.storage.records") for line in layer_violations(edges))


def test_the_check_catches_a_cycle():
    edges = graph()
    edges["kseg.storage.batch"] = edges["kseg.storage.batch"] + [("kseg.storage.records", 1)]
    assert ["kseg.storage.batch", "kseg.storage.records"] in cycles(edges)
