"""One versioned JSON schema for every command (issue 13): real rows validated against
docs/kseg.schema.json, and every example of docs/json-output.md run and compared."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from kseg.cli.main import COMMANDS
from kseg.jsonlines import SCHEMA_VERSION
from tests.json_rows import every_command_rows

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "kseg.schema.json").read_text())


@pytest.fixture(scope="module")
def rows() -> list[tuple[str, dict]]:
    return list(every_command_rows())


def test_the_schema_is_shipped_with_the_package() -> None:
    shipped = resources.files("kseg").joinpath("kseg.schema.json").read_text()
    assert json.loads(shipped) == SCHEMA
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["properties"]["v"] == {"const": SCHEMA_VERSION}


def test_every_row_of_every_command_follows_the_schema(rows) -> None:
    seen = {command for command, _ in rows}
    assert seen == set(COMMANDS)  # export: its --report (the records are Parquet: docs/export.md)
    defs = SCHEMA["$defs"]
    validators: dict[str, jsonschema.Draft202012Validator] = {}
    for command, row in rows:
        assert list(row)[:2] == ["type", "v"] and row["v"] == SCHEMA_VERSION, row
        name = f"{command}.{row['type']}"
        assert name in defs, f"{name}: a row kind the schema does not describe"
        if name not in validators:
            validators[name] = jsonschema.Draft202012Validator({**SCHEMA, "anyOf": [{"$ref": f"#/$defs/{name}"}]})
        errors = list(validators[name].iter_errors(row))
        assert not errors, (name, row, [e.message for e in errors])


def test_one_name_for_one_thing(rows) -> None:
    """partition is a directory name, never a path; logDir is absolute (null: none, as for a replica no log
    directory holds); no row names its log "log"."""
    for command, row in rows:
        assert "log" not in row, (command, row)
        if "partition" in row:
            assert "/" not in row["partition"], (command, row)
        if row.get("logDir") is not None:
            assert os.path.isabs(row["logDir"]), (command, row)


def test_topic_decoders_write_json_values(rows) -> None:
    decoded = [row for command, row in rows if command == "dump" and isinstance(row.get("key"), dict)]
    assert decoded and all(isinstance(row["key"].get("data"), dict) for row in decoded)


def _examples() -> list[tuple[str, str]]:
    """``$ kseg ...`` lines of docs/json-output.md's indented blocks, each with the lines after it."""
    text = (ROOT / "docs" / "json-output.md").read_text()
    out = []
    for block in re.findall(r"(?:^    .*\n?)+", text, re.M):
        lines = [line[4:] for line in block.splitlines()]
        for i, line in enumerate(lines):
            if line.startswith("$ kseg "):
                expected = []
                for nxt in lines[i + 1 :]:
                    if nxt.startswith("$ "):
                        break
                    expected.append(nxt)
                out.append((line[2:], "\n".join(expected).strip()))
    return out


EXAMPLES = _examples()


def test_the_docs_have_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_docs_example(command: str, expected: str) -> None:
    shell = f'kseg() {{ "{sys.executable}" -m kseg "$@"; }}\n{command}'
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run(["bash", "-c", shell], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert p.stdout.strip() == expected, p.stderr


def test_the_schema_describes_every_field_seen() -> None:
    """A field added to a row is added to the published schema too (``python -m tests.json_rows``
    rewrites docs/kseg.schema.json and kseg/kseg.schema.json)."""
    from tests.json_rows import generate

    assert generate() == SCHEMA
