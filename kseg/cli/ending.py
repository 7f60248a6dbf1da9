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


def fatal(exc: BaseException) -> None:
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


def error_exit(problem) -> None:
    """``problem``'s one ``kseg: error:`` line on stderr, exit 2."""
    from kseg.runtime.run import binary_streams, fail

    fail(binary_streams()[1], problem)


def interrupted() -> None:
    """Ctrl-C: one line on stderr, exit 130 -- never 1 ("problems found") or 0."""
    try:
        sys.stderr.write("kseg: interrupted\n")
        sys.stderr.flush()
    except OSError:
        pass
    _quiet_stdout()
    sys.exit(EXIT_INTERRUPTED)


def closed_stdout() -> None:
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
