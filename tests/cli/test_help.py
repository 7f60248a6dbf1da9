"""Every command's ``--help`` as a user sees it at 80 columns (issue 33): no line past the width, no number
or option name broken across lines, and no mention of an option the command does not have (a shared option's
help says what it does in the command that shows it)."""

from __future__ import annotations

import os
import re
import subprocess

import click
import pytest

from kseg.cli.main import COMMANDS, LazyGroup, cli
from tests.conftest import kseg_argv

WIDTH = 80
_MENTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9])")
#: Options of Kafka's own tool named as Kafka's (``Kafka's --verify-index-only``, ``kafka-dump-log.sh --files``).
_KAFKAS = re.compile(r"(?:Kafka's|kafka-dump-log\.sh)\s+(--[a-z][a-z0-9-]*)(?:\s+and\s+(--[a-z][a-z0-9-]*))?")


def _help(*words: str) -> str:
    env = {**os.environ, "COLUMNS": str(WIDTH)}
    p = subprocess.run(kseg_argv(*words, "--help"), capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0 and p.stderr == "", (words, p.returncode, p.stderr)
    return p.stdout


def _options(name: str) -> set[str]:
    command = LazyGroup.get_command(cli, click.Context(cli), name)  # type: ignore[arg-type]
    assert command is not None
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)}


def _breaks(text: str) -> list[str]:
    """Places where a number or an option name runs on from one line to the next."""
    lines = text.splitlines()
    found = []
    for line, following in zip(lines, lines[1:], strict=False):
        head = following.lstrip()
        if re.search(r"\d$", line) and re.match(r"\d", head):
            found.append(f"{line.strip()} / {head}")
        if re.search(r"(?<![\w-])--?[a-z][a-z0-9-]*-$", line):
            found.append(f"{line.strip()} / {head}")
        if line.rstrip().endswith("[-"):
            found.append(f"{line.strip()} / {head}")
    return found


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_fits_80_columns_and_names_only_its_own_options(name: str) -> None:
    text = _help(name)
    assert [line for line in text.splitlines() if len(line) > WIDTH] == []
    assert _breaks(text) == []
    kafkas = {option for pair in _KAFKAS.findall(" ".join(text.split())) for option in pair}
    mentioned = set(_MENTION.findall(" ".join(text.split()))) - kafkas - {"--help"}
    assert mentioned - _options(name) == set(), f"kseg {name} --help mentions options it does not have"


def test_the_group_help_fits_80_columns() -> None:
    text = _help()
    assert [line for line in text.splitlines() if len(line) > WIDTH] == []
    assert _breaks(text) == []


def test_the_checks_catch_what_they_look_for() -> None:
    """The break detector is not vacuous: the wrapped range and option of issue 33 are caught."""
    assert _breaks("  --to-offset  Last offset.  [-922337\n     2036854775808<=x]\n")
    assert _breaks("  Kafka's --value-decoder-\n     class spelling\n")
    assert not _breaks("  in MB/s (10^6\n     bytes)\n")


def test_a_whole_64_bit_range_is_not_printed_and_others_are_by_name() -> None:
    text = _help("export")
    assert "9223372036854775807" not in text and "INTEGER RANGE" not in text
    assert "1<=x<=2^31-1" in " ".join(_help("dump").split())
