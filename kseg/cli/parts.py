"""click's option, command and help option as every kseg command makes them: help texts kept as written.

click passes every help text through ``inspect.cleandoc`` when it makes the option, on every run: the one
use of ``inspect`` before a help page is shown, and ``inspect`` (with ``ast``, ``dis`` and ``tokenize``)
is about a tenth of a lookup's start-up.  kseg's help texts are one line with nothing to clean; an
:class:`Option` keeps its text as given, and cleans it as click would only when there is something to
clean.  The console script defers ``inspect`` until it is used (:func:`kseg.cli.start._defer`), so a
command that shows no help never runs it.  Help pages read the same (tests/cli/test_help.py).
"""

from __future__ import annotations

from typing import Any

import click

HELP_TEXT = "Show this message and exit."
#: The name click (8.5) stores its help option under, clear of a parameter named ``help``.
HELP_STORAGE_NAME = "_click_default_help"


def cleaned(text: str | None) -> str | None:
    """``text`` as click's ``inspect.cleandoc`` makes it: the same string when it is one line without
    surrounding blanks or tabs (kseg's), ``inspect.cleandoc`` otherwise."""
    if not text or (text == text.strip() and "\n" not in text and "\t" not in text):
        return text
    from inspect import cleandoc

    return cleandoc(text)


class Option(click.Option):
    """click's option, its help text :func:`cleaned` here rather than by click."""

    def __init__(self, *args: Any, help: str | None = None, **kwargs: Any) -> None:  # noqa: A002 - click's name
        super().__init__(*args, **kwargs)
        self.help = cleaned(help)


def option(*param_decls: str, **attrs: Any):
    """``click.option`` making an :class:`Option`."""
    return click.option(*param_decls, cls=Option, **attrs)


def _show_help(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(ctx.get_help(), color=ctx.color)
        ctx.exit()


class HelpOption:
    """A command's ``-h``/``--help`` made as an :class:`Option` (click's own rule otherwise: the names
    the context gives that no parameter took, made once per command, eager, printing the help)."""

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        names = self.get_help_option_names(ctx)  # type: ignore[attr-defined]
        if not names or not self.add_help_option:  # type: ignore[attr-defined]
            return None
        made = self.__dict__.get("_kseg_help_option")
        if made is None:
            made = Option(
                [*names, HELP_STORAGE_NAME],
                is_flag=True,
                expose_value=False,
                is_eager=True,
                help=HELP_TEXT,
                callback=_show_help,
            )
            self.__dict__["_kseg_help_option"] = made
        return made


class Command(HelpOption, click.Command):
    """Every kseg command: its help option an :class:`Option`."""


def command(*args: Any, **attrs: Any):
    """``click.command`` making a :class:`Command`."""
    return click.command(*args, cls=Command, **attrs)
