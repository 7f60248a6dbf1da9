"""The ``kseg`` console script and ``python -m kseg``: Ctrl-C is answered from the first instruction.

Importing the command line (click and kseg's modules) takes tens of milliseconds; a Ctrl-C then would
end in a ``KeyboardInterrupt`` traceback, or in click's ``Aborted!`` and exit 1.  This module, tiny and
imported first, installs a handler that prints ``kseg: interrupted`` and exits 130 at once (nothing has
been read or written yet), then hands Ctrl-C back to Python's ``KeyboardInterrupt`` for the command,
which stops its workers and says the same line (:func:`kseg.cli.main.interrupted`).
"""

from __future__ import annotations

# the C module: ``signal`` first imports enum, itself a few milliseconds before site has loaded it
import _signal as signal  # type: ignore[import-not-found]
import gc
import os

_EXIT_INTERRUPTED = 130


def _interrupted_early(signum, frame) -> None:  # pragma: no cover - a child process (test_jobs_and_signals)
    try:
        os.write(2, b"kseg: interrupted\n")
    finally:
        os._exit(_EXIT_INTERRUPTED)


def main() -> None:
    """Console-script entry point."""
    previous = signal.signal(signal.SIGINT, _interrupted_early)
    if _cached_help():
        return
    # Importing click and the command makes tens of thousands of objects that live as long as the process:
    # no collection while they are made; when the command runs, they are frozen out of every later
    # collection and the collector starts (kseg.cli.main.LazyGroup.invoke).
    gc.disable()
    from kseg.cli.main import main as run

    if previous is signal.SIG_IGN:  # started in the background with Ctrl-C ignored: keep ignoring it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run()
    except Finished as finished:
        _end_now(finished.code)
        raise  # (something is left for the interpreter's shutdown: it runs)


class Finished(SystemExit):
    """The end of a command that wrote only to stdout and stderr and left nothing open: ``raise
    Finished(code)`` where it would ``sys.exit(code)`` (a ``SystemExit``: click's test runner and every
    caller see the same).  Run as the console script, the process then ends at once with ``code``
    (:func:`_end_now`): the interpreter's shutdown -- clearing every module, three collections of what
    start-up made -- is about a twentieth of a lookup's instructions, and has nothing to do here."""


def _end_now(code: object) -> None:
    """Flush stdout and stderr and end the process with ``code`` (``os._exit``); returns, leaving the
    shutdown to the interpreter, when it has work to do: an exit handler registered (``atexit``: coverage,
    logging, multiprocessing, ``weakref.finalize``; ``threading``'s own), a thread other than this one, a
    code that is not a number, or a stream that does not flush."""
    import atexit
    import sys

    if code is not None and not isinstance(code, int):
        return
    threading = sys.modules.get("threading")
    if threading is not None and (threading.active_count() > 1 or getattr(threading, "_threading_atexits", True)):
        return
    if getattr(atexit, "_ncallbacks", lambda: 1)():
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code or 0)


def _cached_help() -> bool:
    """``kseg --help`` (or ``-h``) alone, on a terminal at least :data:`kseg.cli.help_text.COLUMNS` wide (or
    none): click's text, kept in :mod:`kseg.cli.help_text`, written without importing click.  False for any
    other command line, which click answers."""
    import sys

    if sys.argv[1:] not in (["--help"], ["-h"]) or sys.stdout is None:  # no stdout: click's own rule
        return False
    from kseg.cli import help_text

    if _terminal_columns(sys.__stdout__) < help_text.COLUMNS:
        return False
    try:
        sys.stdout.write(help_text.TEXT)
        sys.stdout.flush()
    except BrokenPipeError:
        from kseg.cli.main import closed_stdout

        closed_stdout()
    return True


def _terminal_columns(stdout) -> int:
    """The width click wraps its help to, as click reads it (``shutil.get_terminal_size().columns``:
    ``COLUMNS`` when a positive number, else the terminal's on stdout, else 80), without importing
    shutil (a third of what ``--help`` would import)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(stdout.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80
