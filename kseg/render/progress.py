"""Progress on stderr for long reads (rich), for humans only: the file being read, a bar, bytes,
speed and the time left (ETA).

Shown only when stderr is a terminal, stdout is not (output to a pipe or a
file: the bar would otherwise tear the text it shares a screen with), and
``--quiet`` was not given.  rich is imported only when a bar is shown, and
the bar is redrawn at most every 1 % of the bytes.
"""

from __future__ import annotations

import os
import sys


def wanted(quiet: bool) -> bool:
    """Should a progress bar be drawn?"""
    if quiet or os.environ.get("KSEG_NO_PROGRESS"):
        return False
    if os.environ.get("KSEG_PROGRESS") == "1":  # forced (tests, or a terminal kseg cannot see)
        return True
    try:
        return sys.stderr.isatty() and not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


class ByteProgress:
    """One bar per file, advanced by byte position."""

    def __init__(self, console=None) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, DownloadColumn, Progress, ProgressColumn, TextColumn,
                                   TimeRemainingColumn, TransferSpeedColumn)
        from rich.text import Text

        class Either(ProgressColumn):
            """Bytes and speed for a bar of bytes; "done/total" for a bar of items."""

            def __init__(self, for_bytes, for_count) -> None:
                super().__init__()
                self.for_bytes, self.for_count = for_bytes, for_count

            def render(self, task):
                if task.fields.get("count"):
                    return Text(self.for_count(task))
                return self.for_bytes.render(task)

        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(),
            Either(DownloadColumn(), lambda t: f"{int(t.completed)}/{int(t.total)}"),
            Either(TransferSpeedColumn(), lambda t: ""),
            TextColumn("ETA"), TimeRemainingColumn(),
            console=console or Console(file=sys.stderr), transient=True,
        )
        self._progress.start()
        self._task = None
        self._step = 1
        self._next = 0

    def start(self, label: str, total: int, count: bool = False) -> None:
        """A bar of ``total`` bytes (``count``: of ``total`` items, redrawn at each)."""
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task = self._progress.add_task(getattr(self, "_label", None) or label, total=max(total, 1),
                                             count=count)
        self._step = 1 if count else max(total // 100, 1 << 20)
        self._next = self._step

    def describe(self, label: str) -> None:
        """Name the file being read now (the bar's label)."""
        if self._task is not None:
            self._progress.update(self._task, description=label)
        else:
            self._label = label

    def advance_to(self, done: int) -> None:
        if done >= self._next:
            self._progress.update(self._task, completed=done)
            self._next = done + self._step

    def close(self) -> None:
        self._progress.stop()


def make(quiet: bool) -> ByteProgress | None:
    return ByteProgress() if wanted(quiet) else None
