"""Reusable click option bundles (as sqlite-utils does) shared by kseg's commands."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from kseg.errors import KsegError, error_line
from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE, EXIT_ERROR

format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: human/Kafka-compatible lines; json: one JSON object per line (JSON Lines).",
)

quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress display on stderr.")

max_message_size_option = click.option(
    "--max-message-size",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_MESSAGE_SIZE,
    show_default=True,
    help="Size of the largest batch; also bounds decompression (8x this).",
)


def fail(err, problem: "KsegError | str", code: int = EXIT_ERROR) -> NoReturn:
    """Print the one error line every command prints (``kseg: error: ...``) and exit (2: never a verdict)."""
    err.write((error_line(problem) + "\n").encode("utf-8", "replace"))
    err.flush()
    sys.exit(code)


def say(err, text: str) -> None:
    """One line on stderr (a note, or an error the run goes on after)."""
    err.write((text + "\n").encode("utf-8", "replace"))
    err.flush()


def partitions_or_fail(err, paths) -> list:
    """The partitions under ``paths`` (:func:`kseg.storage.partition.discover`), its notes printed;
    nothing to read, or a path that cannot be read, is the one error line and exit 2."""
    from kseg.storage.partition import discover, nothing_found

    notes: list[str] = []
    try:
        partitions = discover(list(paths), notes)
        if not partitions:
            raise nothing_found(list(paths))
    except KsegError as exc:
        fail(err, exc)
    for note in notes:
        say(err, f"kseg: note: {note}")
    return partitions


def binary_streams():
    """stdout and stderr as binary streams (the click-testing runner's too)."""
    out = click.get_binary_stream("stdout")
    err = click.get_binary_stream("stderr")
    return out, err


def reference_time(text: str | None) -> int | None:
    """``--at``: None (the latest batch timestamp), ``now``, epoch ms or ISO-8601."""
    if text is None:
        return None
    if text.strip().lower() == "now":
        import time

        return int(time.time() * 1000)
    from kseg.timestamps import parse_timestamp

    try:
        value = parse_timestamp(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--at") from None
    if value < 0:
        raise click.BadParameter("give a time: epoch ms, ISO-8601 or now", param_hint="--at")
    return value
