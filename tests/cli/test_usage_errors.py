"""Click's own usage errors -- an unknown option, a missing argument, a bad value -- are, in every
command, one ``kseg: error:`` line on stderr naming the command and its help, nothing on stdout, exit 2
(:func:`kseg.cli.main.usage_error`), never click's ``Usage: ... Try ... Error: ...`` block."""

from __future__ import annotations

import re
import subprocess

import click
import pytest

from kseg.cli.main import COMMANDS, LazyGroup, cli
from tests.conftest import kseg_argv


def _command(name: str) -> click.Command:
    command = LazyGroup.get_command(cli, click.Context(cli), name)  # type: ignore[arg-type]
    assert command is not None
    return command


def _required_argument(name: str) -> str | None:
    """The metavar click names when the command's first required argument is missing, or None."""
    for param in _command(name).params:
        if isinstance(param, click.Argument) and param.required:
            return param.make_metavar(click.Context(_command(name)))
    return None


def _typed_option(name: str) -> str:
    """An option of the command whose type refuses ``xml`` (a choice, preferably --format, or a number)."""
    options = [p for p in _command(name).params if isinstance(p, click.Option) and not p.is_flag]
    typed = [p for p in options if isinstance(p.type, (click.Choice, click.types._NumberParamTypeBase))]
    typed.sort(key=lambda p: p.opts[0] != "--format")
    assert typed, f"{name} has no option with a checked type"
    return typed[0].opts[0]


def _cases() -> list[tuple[str, list[str], str]]:
    cases = [
        ("kseg", ["--no-such-option"], r"^No such option '--no-such-option'"),
        ("kseg", ["no-such-command"], r"^No such command 'no-such-command'"),
    ]
    for name in sorted(COMMANDS):
        cases.append((name, [name, "--no-such-option"], rf"^kseg {name}: No such option '--no-such-option'"))
        option = _typed_option(name)
        cases.append((name, [name, option, "xml"], rf"^kseg {name}: Invalid value for '{option}': 'xml'"))
        if _required_argument(name):
            cases.append((name, [name], rf"^kseg {name}: Missing argument"))
    return cases


def _usage_line(argv: list[str]) -> str:
    p = subprocess.run(kseg_argv(*argv), capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, (argv, p.returncode, p.stdout, p.stderr)
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kseg: error: "), (argv, p.stderr)
    assert "Usage:" not in p.stderr and "Traceback" not in p.stderr
    return lines[0].removeprefix("kseg: error: ")


@pytest.mark.parametrize("command,argv,said", _cases(), ids=lambda v: v if isinstance(v, str) else None)
def test_click_usage_error_is_one_line(command: str, argv: list[str], said: str) -> None:
    line = _usage_line(argv)
    assert re.search(said, line), line
    where = "kseg" if command == "kseg" else f"kseg {command}"
    assert line.endswith(f"(see '{where} --help')"), line


def test_every_command_has_a_missing_argument_case_or_needs_none() -> None:
    """The commands whose arguments are required are named in the cases (a new one joins by itself)."""
    required = {name for name in COMMANDS if _required_argument(name)}
    assert {"lookup-offset", "lookup-time", "logdir", "verify-index"} <= required


def test_suggestion_kept_on_the_one_line() -> None:
    """Click's "Did you mean" stays, folded into the line."""
    line = _usage_line(["verify-index", "--formt", "json", "x"])
    assert "Did you mean" in line and "'--format'" in line


def test_kseg_alone_still_shows_the_help() -> None:
    """``kseg`` with no command is click's help (its ``NoArgsIsHelpError``), not an error line."""
    p = subprocess.run(kseg_argv(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "kseg: error" not in p.stdout + p.stderr
    assert "Usage: kseg [OPTIONS] COMMAND [ARGS]..." in p.stdout + p.stderr and "verify-index" in p.stdout + p.stderr


def test_an_option_before_its_command_says_where_it_goes() -> None:
    """``kseg -q tiered``: "kseg" once, and the hint that the option belongs after the command."""
    line = _usage_line(["-q", "tiered", "x"])
    assert line == "No such option '-q': options go after the command, 'kseg tiered -q ...' (see 'kseg tiered --help')"


def test_a_missing_option_value_names_the_command() -> None:
    assert _usage_line(["dump", "--files"]) == (
        "kseg dump: Option '--files' requires an argument (see 'kseg dump --help')"
    )


def test_a_bad_number_is_not_an_integer_range() -> None:
    line = _usage_line(["lookup-offset", "abc", "dir"])
    assert "'abc' is not a valid offset" in line and "range" not in line
