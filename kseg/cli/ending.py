"""How every command begins and ends, without click: the engine asked for, the collector started, and the
three ways a run ends that are not its verdict -- Ctrl-C (exit 130), a closed stdout (SIGPIPE), and an
exception no command handled (its one error line, exit 2).

Click's group (:class:`kseg.cli.main.LazyGroup`) runs each command through these, and so do the lookups'
plain command lines, which are answered without click (:mod:`kseg.cli.lookup_plain`).
"""

from __future__ import annotations

# the C module (as kseg.cli.start): ``signal`` makes its enums of every signal, ~3 M instructions at start-up
import _signal as signal  # type: ignore[import-not-found]
import gc
import os
import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar

T = TypeVar("T")

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command ended by Ctrl-C


class Finished(SystemExit):
    """The end of a command that wrote only to stdout and stderr and left nothing open: ``raise
    Finished(code)`` where it would ``sys.exit(code)`` (a ``SystemExit``: click's test runner and every
    caller see the same).  Run as the console script, the process then ends at once with ``code``
    (:func:`kseg.cli.start._end_now`): the interpreter's shutdown -- clearing every module, three collections of what
    start-up made -- is about a twentieth of a lookup's instructions, and has nothing to do here."""


def begin() -> None:
    """Before a command runs: the engine ``KSEG_ENGINE`` asks for (exit 2 when it cannot run), and the
    collector started with what start-up made frozen out of it."""
    if os.environ.get("KSEG_ENGINE"):  # kseg.engine is imported only when asked for (fast start)
        from kseg import engine
        from kseg.format import v2_records  # noqa: F401 - compares the engine's constants (engine.check)

        problem = engine.require()
        if problem is not None:
            error_exit(problem)
    if not gc.isenabled():  # kseg.cli.start: off while the command line was imported and parsed
        gc.freeze()  # what start-up made lives as long as the process: no collection traverses it again
        gc.enable()


def run_command(command: Callable[[], T], passthrough: tuple[type[BaseException], ...] = ()) -> T:
    """Run ``command`` as every kseg command runs: :func:`begin` first; Ctrl-C and a closed stdout end the run
    here (:func:`interrupted`, :func:`closed_stdout`), before a caller could turn them into an exit code that
    would read as a verdict; a ``SystemExit`` (the command's exit code) and the exceptions of
    ``passthrough`` (click's own ends, for its group) go on; any other exception is its one line
    (:func:`fatal`)."""
    begin()
    going_on: tuple[type[BaseException], ...] = (SystemExit, *passthrough)
    try:
        return command()
    except KeyboardInterrupt:
        interrupted()
    except BrokenPipeError:
        closed_stdout()
    except going_on:
        raise
    except Exception as exc:  # noqa: BLE001 - the one place a command's fatal error becomes its line
        fatal(exc)


def fatal(exc: BaseException) -> NoReturn:
    """A command ended by an exception: one error line and exit 2 (usage or I/O: never a verdict).

    A :class:`~kseg.errors.KsegError` not handled by the command (an input it cannot read, nothing
    to read) is its line (``kseg: error: <file>: at byte N: <what>``); any other exception is a bug
    in kseg, shown as one line too (``KSEG_TRACEBACK=1`` re-raises it, with its traceback)."""
    from kseg.errors import KsegError

    if isinstance(exc, KsegError):
        error_exit(exc)
    cause = _chained(exc, (KeyboardInterrupt, BrokenPipeError))
    if isinstance(cause, KeyboardInterrupt):  # Ctrl-C wrapped by Python on its way out (3.11 turns one
        interrupted()  # during a class body into RuntimeError "Error calling __set_name__")
    if isinstance(cause, BrokenPipeError):
        closed_stdout()
    if isinstance(exc, MemoryError):
        error_exit("out of memory")
    if os.environ.get("KSEG_TRACEBACK"):
        raise exc
    error_exit(f"internal error: {type(exc).__name__}: {exc} (a bug in kseg; KSEG_TRACEBACK=1 shows where)")


def _chained(exc: BaseException, kinds: tuple) -> BaseException | None:
    """The first exception of ``kinds`` in ``exc``'s chain (``__cause__``, then ``__context__``), if any."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kinds):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return None


def error_exit(problem) -> NoReturn:
    """``problem``'s one ``kseg: error:`` line on stderr, exit 2."""
    from kseg.runtime.run import binary_streams, fail

    fail(binary_streams()[1], problem)


def interrupted() -> NoReturn:
    """Ctrl-C: one line on stderr, exit 130 -- never 1 ("problems found") or 0."""
    try:
        sys.stderr.write("kseg: interrupted\n")
        sys.stderr.flush()
    except OSError:
        pass
    _quiet_stdout()
    sys.exit(EXIT_INTERRUPTED)


def closed_stdout() -> NoReturn:
    """The reader of stdout went away (``kseg verify-index tree | head -1``): end quietly, killed by
    SIGPIPE as git and C tools are (the shell shows 141), so the exit status is never taken for a
    verdict.  Python ignores SIGPIPE (writes raise ``BrokenPipeError`` instead); restore the default
    and raise it (exit 141 should the signal not end the process)."""
    _quiet_stdout()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    sys.exit(128 + signal.SIGPIPE)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail with a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
