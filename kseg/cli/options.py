"""Reusable click option bundles (as sqlite-utils does) shared by kseg's commands."""

from __future__ import annotations

import click

from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE

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


def binary_streams():
    """stdout and stderr as binary streams (the click-testing runner's too)."""
    out = click.get_binary_stream("stdout")
    err = click.get_binary_stream("stderr")
    return out, err
