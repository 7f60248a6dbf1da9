"""Progress for long reads (rich), for humans only: the file being read, a bar, bytes, speed and the
time left (ETA).

Shown only when stderr is a terminal and ``--quiet`` was not given.  ``dump``
(whose output is the records themselves) shows it only when stdout is not a
terminal.  The commands that print results as they go (verify-index,
rebuild-index, txn, diff, compaction, export: ``screen=True``) show it on a
terminal whether stdout is redirected or not: when stdout is the terminal
too, the bar is drawn there and the results are printed through it
(:meth:`ByteProgress.writer`), above the bar, as rich's live console does --
they never fight.  :meth:`ByteProgress.reads` follows the bytes the segment
reader reads (the read context's meter, ``kseg.storage.context.Observers``), inside a segment, a window
(8 MiB; with ``--max-rate`` a MiB) at a time.  rich is imported only when a
bar is shown, and the bar is redrawn at most every 1 % of the bytes.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from kseg.words import noun

if TYPE_CHECKING:
    from rich.progress import TaskID


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def wanted(quiet: bool, screen: bool = False) -> bool:
    """Should a progress bar be drawn?  ``screen``: also when stdout is the terminal (results are then
    printed above the bar)."""
    if quiet or os.environ.get("KSEG_NO_PROGRESS"):
        return False
    if os.environ.get("KSEG_PROGRESS") == "1":  # forced (tests, or a terminal kseg cannot see)
        return True
    return _isatty(sys.stderr) and (screen or not _isatty(sys.stdout))


LABEL_WIDTH = 40  # columns at most for the file being read (its partition/segment name)


class ByteProgress:
    """One bar per file, advanced by byte position, on one line whatever the terminal's width."""

    _on_stdout = False  # drawn on stdout's terminal: results go through writer()

    def __init__(self, console=None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        from rich.table import Column
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

        self._observers: Any = None
        # One line at any width (issue 33): the label shortened with an ellipsis and the bar shrunk first;
        # the figures (bytes, rate, ETA: about 40 columns) keep their room.
        label = Column(no_wrap=True, overflow="ellipsis", ratio=1, min_width=8, max_width=LABEL_WIDTH)
        self._progress = Progress(
            TextColumn("{task.description}", table_column=label),
            BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=4)),
            Either(DownloadColumn(), lambda t: f"{int(t.completed)}/{int(t.total)}"),
            Either(TransferSpeedColumn(), lambda t: ""),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console or Console(file=sys.stderr),
            transient=True,
            expand=True,
        )
        self._progress.start()
        self._task: TaskID | None = None
        self._step = 1
        self._next = 0
        self._read = 0  # bytes reached (reads()): each file's furthest position read, added up
        self._path: str | None = None
        self._reached: dict[str, int] = {}  # the files read lately -> furthest position read

    def start(self, label: str, total: int, count: bool = False) -> None:
        """A bar of ``total`` bytes (``count``: of ``total`` items, redrawn at each)."""
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task = self._progress.add_task(getattr(self, "_label", None) or label, total=max(total, 1), count=count)
        self._step = 1 if count else max(total // 100, 1 << 20)
        self._next = self._step

    def describe(self, label: str) -> None:
        """Name the file being read now (the bar's label)."""
        if self._task is not None:
            self._progress.update(self._task, description=label)
        else:
            self._label = label

    def advance_to(self, done: int) -> None:
        if done >= self._next and self._task is not None:
            self._progress.update(self._task, completed=done)
            self._next = done + self._step

    def reads(self, label: str, total: int, observers: Any = None) -> None:
        """A bar of ``total`` bytes that follows every window the segment reader reads in this process
        under the read context whose ``observers`` are given (inside a segment, not once per segment),
        named after the file being read; None: told later (:meth:`follow`)."""
        self.start(label, total)
        self._step = self._next = 1  # a window (8 MiB, 1 MiB paced) at a time
        self._read, self._path, self._reached = 0, None, {}
        if observers is not None:
            self.follow(observers)

    def follow(self, observers: Any) -> None:
        """Count the window reads under the read context whose ``observers`` are given."""
        owner = os.getpid()  # a forked --jobs worker inherits the observers, not the bar

        def meter(path: str, position: int, n: int) -> None:
            if os.getpid() == owner:
                self._on_read(path, position, n)

        self._observers = observers
        observers.meter = meter

    def _on_read(self, path: str, position: int, n: int) -> None:
        """Forward progress: a file read twice (a second pass, replicas compared batch by batch) or
        from its middle counts its furthest position once."""
        if path != self._path:
            self._path = path
            self.describe("/".join(path.replace("\\", "/").rstrip("/").split("/")[-2:]))
        reached = self._reached.pop(path, 0)
        end = position + n
        if end > reached:
            self._read += end - reached
            reached = end
        self._reached[path] = reached  # the most recent last; a few kept (files are read one or two at a time)
        if len(self._reached) > 64:
            del self._reached[next(iter(self._reached))]
        self.advance_to(self._read)

    def writer(self, out):
        """``out`` (binary stdout) as a stream that prints above the bar when stdout is the bar's
        terminal; ``out`` itself otherwise."""
        if not self._on_stdout:
            return out
        return _AboveBar(self._progress.console, out)

    def close(self) -> None:
        if self._observers is not None:
            self._observers.meter = None
        self._progress.stop()


class _AboveBar:
    """A binary stream whose whole lines are printed by the bar's console, above the bar (rich's live
    display moves itself below); a partial line waits for its end."""

    def __init__(self, console, out) -> None:
        self.console, self.out, self.pending = console, out, b""

    def write(self, data: bytes) -> int:
        text = self.pending + bytes(data)
        cut = text.rfind(b"\n") + 1
        self.pending = text[cut:]
        if cut:
            self.console.out(text[:cut].decode("utf-8", "replace"), end="", highlight=False)
        return len(data)

    def flush(self) -> None:
        if self.pending:
            self.console.out(self.pending.decode("utf-8", "replace"), end="", highlight=False)
            self.pending = b""
        self.console.file.flush()

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.out.fileno()


class ListingStatus:
    """The listing before any work (:mod:`kseg.storage.watch`'s watcher), as one transient spinner line on
    stderr: ``listing s3://b/fleet: 37 directories listed (4 in progress), 1,234,567 keys, 12,345
    partitions``.  The listing threads only count, under a lock; rich's own refresh thread draws, 4 times
    a second, and the line is drawn a last time and removed when the listing ends (:meth:`close`), so
    the byte bar that follows is unchanged.  With ``KSEG_PROGRESS=1`` the line is drawn on a stderr that
    is no terminal too (tests, or a terminal kseg cannot see)."""

    def __init__(self, what: str, console=None) -> None:
        import threading

        from rich.console import Console
        from rich.live import Live
        from rich.spinner import Spinner

        self._what = what
        self._lock = threading.Lock()
        self._listed = self._busy = self._keys = self._partitions = 0
        self._nouns: set[str] = set()  # what the listings listed: files (a file system), keys (an object store)
        self._spinner = Spinner("dots", self.text())
        forced = os.environ.get("KSEG_PROGRESS") == "1" or None
        self._live = Live(
            console=console or Console(file=sys.stderr, force_terminal=forced),
            get_renderable=self._render,
            refresh_per_second=4,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def started(self, prefix: str) -> None:
        with self._lock:
            self._busy += 1

    def finished(self, prefix: str, keys: int, partitions: int, noun: str = "key") -> None:
        with self._lock:
            self._nouns.add(noun)
            self._busy -= 1
            self._listed += 1
            self._keys += keys
            self._partitions += partitions

    def text(self) -> str:
        """The line: what is listed, the listings done and under way, the keys and partition directories."""
        with self._lock:
            listed, busy, keys, partitions = self._listed, self._busy, self._keys, self._partitions
            nouns = sorted(self._nouns) or ["key"]
        counted = " and ".join(noun(2, n) for n in nouns) if len(nouns) > 1 else noun(keys, nouns[0])
        return (
            f"listing {self._what}: {listed:,} {noun(listed, 'directory')} listed "
            f"({busy:,} in progress), {keys:,} {counted}, {partitions:,} {noun(partitions, 'partition')}"
        )

    def _render(self):
        self._spinner.update(text=self.text())
        return self._spinner

    def close(self) -> None:
        self._live.stop()


def listing(quiet: bool, paths: list[str], screen: bool = False) -> ListingStatus | None:
    """The listing's status line for ``paths`` (:class:`ListingStatus`), or None (:func:`wanted`)."""
    if not wanted(quiet, screen):
        return None
    from kseg.storage import location

    shown = ", ".join(location.redact(p) for p in paths[:2]) + (
        f" and {len(paths) - 2:,} more" if len(paths) > 2 else ""
    )
    return ListingStatus(shown)


def make(quiet: bool, screen: bool = False) -> ByteProgress | None:
    """A bar, or None (:func:`wanted`).  ``screen``: the command prints results as it goes; the bar is
    drawn on stdout's terminal when stdout is one (results go through :meth:`ByteProgress.writer`)."""
    if not wanted(quiet, screen):
        return None
    if screen and _isatty(sys.stdout) and os.environ.get("KSEG_PROGRESS") != "1":
        from rich.console import Console

        bar = ByteProgress(Console(file=sys.stdout))
        bar._on_stdout = True
        return bar
    return ByteProgress()
