"""The run of one command: what every command is given (streams, ``--quiet``, the read policy's settings) and
the one writer of its error and note lines, the same whether the command runs here or on Spark.

A :class:`Run` is made once per command from its shared options (:func:`start`) and passed down:
to the command's ops and render calls, to its Spark driver (``kseg.spark``), to the run of ``verify-index``
(:mod:`kseg.runtime.verify`).  It is a frozen value: the settings of a command hang off it, never a module
global.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

from kseg.errors import KsegError, error_line
from kseg.limits import EXIT_ERROR
from kseg.valueclass import FrozenValue

if TYPE_CHECKING:
    from kseg.storage.context import ReadContext


class Run(FrozenValue):
    """What one command's run is given, made once from its shared options (``kseg.cli.options.run_options``)
    and passed down: stdout and stderr as binary streams, and the command's settings -- ``--quiet``, the read
    policy of ``--max-rate`` (MB/s) and ``--drop-cache`` (a read context made from them belongs here too).
    The one writer of ``kseg: error:`` and ``kseg: note:`` lines, locally and on Spark's driver."""

    _fields = ("out", "err", "quiet", "max_rate", "drop_cache", "context")
    out: BinaryIO
    err: BinaryIO
    quiet: bool
    max_rate: float | None
    drop_cache: bool
    #: the read context every read of this command is given (kseg.storage.context): made once, with the run
    context: ReadContext

    def __init__(
        self,
        out: BinaryIO,
        err: BinaryIO,
        quiet: bool = False,
        max_rate: float | None = None,
        drop_cache: bool = False,
        context: ReadContext | None = None,
    ) -> None:
        context = read_context() if context is None else context
        self._set(out=out, err=err, quiet=quiet, max_rate=max_rate, drop_cache=drop_cache, context=context)

    def say(self, text: str) -> None:
        """One line on stderr (a note, or an error the run goes on after)."""
        say(self.err, text)

    def note(self, text: str) -> None:
        """``kseg: note: TEXT`` on stderr, unless ``--quiet``."""
        if not self.quiet:
            say(self.err, f"kseg: note: {text}")

    def error(self, problem: KsegError | str) -> int:
        """Print the one error line (``kseg: error: <file>: at byte N: <what>``) and go on; returns 2 (I/O)
        for the caller that counts it.  Every command's error lines come from here or :meth:`fail`."""
        say(self.err, error_line(problem))
        return EXIT_ERROR

    def fail(self, problem: KsegError | str, code: int = EXIT_ERROR) -> NoReturn:
        """The one error line, and exit (2: never a verdict)."""
        fail(self.err, problem, code)

    def notes(self, texts: list[str]) -> None:
        """The notes on stderr, one line per kind (``kseg.render.notes``): forty ``*-delete`` directories
        skipped are one line with their count and the first few paths; nothing with ``--quiet``."""
        if self.quiet or not texts:
            return
        from kseg.render.notes import NoteGroups

        groups = NoteGroups("path")
        for text in texts:
            groups.add(text)
        for text in groups.texts():
            self.note(text)

    def removed(self, names: list[str]) -> None:
        """The note for the temporary files of an interrupted run this one removed (if any)."""
        if names:
            self.note(
                f"removed {len(names)} temporary file{'s' * (len(names) != 1)} an interrupted kseg run "
                f"left: {', '.join(names)}"
            )

    def shown_as(self, given: Sequence[str], absolute: Sequence[str]) -> Run:
        """This run, its output showing each of ``absolute`` (the paths ``given``, made absolute for Spark's
        executors: :mod:`kseg.spark.paths`) as given, as the local run shows them (:mod:`kseg.render.given`)."""
        from kseg.render.given import GivenPaths

        shown = GivenPaths(given, absolute)
        return self.replace(out=shown.stream(self.out), err=shown.stream(self.err)) if shown else self

    def read_in(self, processes: int) -> None:
        """``--jobs N``: each of the N reading processes gets 1/N of ``--max-rate``."""
        from kseg.storage import read_policy

        read_policy.split(self.context, processes)


def start(quiet: bool = False, max_rate: float | None = None, drop_cache: bool = False) -> Run:
    """The :class:`Run` of the command starting, with its read context (``--max-rate`` in bytes a second,
    ``--drop-cache``): a value handed down to every read, nothing installed in a module."""
    out, err = binary_streams()
    context = read_context(max_rate * 1e6 if max_rate else None, bool(drop_cache))
    return Run(out, err, bool(quiet), max_rate, bool(drop_cache), context)


def read_context(max_rate: float | None = None, drop_cache: bool = False) -> ReadContext:
    """A command's read context (imported when a command runs: ``--help`` reads nothing)."""
    from kseg.storage.context import ReadContext

    return ReadContext(max_rate, drop_cache)


def fail(err: BinaryIO, problem: KsegError | str, code: int = EXIT_ERROR) -> NoReturn:
    """Print the one error line every command prints (``kseg: error: ...``) and exit (2: never a verdict)."""
    say(err, error_line(problem))
    sys.exit(code)


def say(err: BinaryIO, text: str) -> None:
    """One line on stderr."""
    err.write((text + "\n").encode("utf-8", "replace"))
    err.flush()


def binary_streams() -> tuple[BinaryIO, BinaryIO]:
    """stdout and stderr as binary streams (the click-testing runner's too).

    ``sys.stdout.buffer`` rather than ``click.get_binary_stream`` (deprecated in click 8.5)."""
    return _binary(sys.stdout), _binary(sys.stderr)


def _binary(stream: Any) -> BinaryIO:
    return getattr(stream, "buffer", stream)
