"""The ``kseg`` console script and ``python -m kseg``: Ctrl-C is answered from the first instruction.

Importing the command line (click and kseg's modules) takes tens of milliseconds; a Ctrl-C then would
end in a ``KeyboardInterrupt`` traceback, or in click's ``Aborted!`` and exit 1.  This module, tiny and
imported first, installs a handler that prints ``kseg: interrupted`` and exits 130 at once (nothing has
been read or written yet), then hands Ctrl-C back to Python's ``KeyboardInterrupt`` for the command,
which stops its workers and says the same line (:func:`kseg.cli.ending.interrupted`).
"""

# Until main() installs its handler, a Ctrl-C is Python's KeyboardInterrupt with a traceback: this module's
# body imports no file, only modules built into the interpreter (no ``from __future__``, and ``posix``, not
# ``os``: both are files found on the path when Python runs without ``site``), so that window is the few
# statements below.  The C module ``_signal``: ``signal`` first imports enum.
import _signal as signal  # type: ignore[import-not-found]
import _thread
import gc
import posix
import sys

_EXIT_INTERRUPTED = 130


def _interrupted_early(signum, frame) -> None:  # pragma: no cover - a child process (test_jobs_and_signals)
    try:
        posix.write(2, b"kseg: interrupted\n")
    finally:
        posix._exit(_EXIT_INTERRUPTED)


def main() -> None:
    """Console-script entry point."""
    previous = signal.signal(signal.SIGINT, _interrupted_early)
    if _cached_help():
        return
    # Importing the command line (click and the command; a plain lookup's without click) makes tens of
    # thousands of objects that live as long as the process: no collection while they are made; when the
    # command runs, they are frozen out of every later collection and the collector starts
    # (kseg.cli.ending.begin).
    gc.disable()
    run = _plain_lookup()
    if run is None:
        _defer("inspect")
        from kseg.cli.main import main as run

    from kseg.cli.ending import Finished

    if previous is signal.SIG_IGN:  # started in the background with Ctrl-C ignored: keep ignoring it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run()
    except Finished as finished:
        _end_now(finished.code)
        raise  # (something is left for the interpreter's shutdown: it runs)
    finally:
        if previous is not signal.SIG_IGN:
            # The command is over; what is left is the interpreter's shutdown (joining --jobs workers, exit
            # handlers): a Ctrl-C there ends the process as the signal does, never a KeyboardInterrupt
            # traceback out of an exit handler ("Exception ignored in: <module 'threading'>").
            signal.signal(signal.SIGINT, signal.SIG_DFL)


def _end_now(code: object) -> None:
    """Flush stdout and stderr and end the process with ``code`` (``os._exit``); returns, leaving the
    shutdown to the interpreter, when it has work to do: an exit handler registered (``atexit``: coverage,
    logging, multiprocessing, ``weakref.finalize``; ``threading``'s own), a thread other than this one, a
    code that is not a number, or a stream that does not flush."""
    import atexit

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
    posix._exit(code or 0)


_Module = type(sys)  # types.ModuleType, without importing types


class _Deferred(_Module):  # type: ignore[misc,valid-type]
    """A module in ``sys.modules`` whose code has not run yet (:func:`_defer`); it runs, once, when an
    attribute the module does not hold yet is first asked of it (any thread: the others wait for it)."""

    def __getattr__(self, attr: str) -> object:
        with _LOADING:
            if type(self) is _Deferred and not self.__dict__.get(_RUNNING):
                self.__dict__[_RUNNING] = True
                try:
                    self.__spec__.loader.exec_module(self)  # type: ignore[attr-defined]
                finally:
                    del self.__dict__[_RUNNING]
                self.__class__ = _Module  # type: ignore[assignment]
            elif type(self) is _Deferred:  # asked by its own code while it runs: not there yet
                raise AttributeError(attr)
        return getattr(self, attr)


_LOADING = _thread.RLock()
_RUNNING = "__kseg_running__"


def _defer(name: str) -> None:
    """Put module ``name`` in ``sys.modules`` as a :class:`_Deferred`: ``import name`` binds it at once,
    and its code runs when it is first used.  For ``inspect``, which click imports for ``cleandoc`` when
    a help text is shown -- a tenth of a lookup's start-up (``ast``, ``dis``, ``tokenize`` with it) -- and
    kseg's options leave unused otherwise (:class:`kseg.cli.parts.Option`).  The module is found as the
    import statement would find it (``sys.meta_path``); nothing happens when it is already imported, or
    is a package or a module no finder can defer (it is then imported as usual)."""
    if name in sys.modules:
        return
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec(name, None) if find_spec is not None else None
        if spec is not None:
            break
    else:
        return
    if spec.submodule_search_locations is not None or not hasattr(spec.loader, "exec_module"):
        return
    module = _Deferred(name)
    module.__spec__, module.__loader__, module.__package__ = spec, spec.loader, spec.parent
    if spec.has_location:
        module.__file__, module.__cached__ = spec.origin, spec.cached
    sys.modules[name] = module


def _plain_lookup():
    """``kseg lookup-offset OFFSET DIR`` or ``kseg lookup-time TIMESTAMP DIR`` with ``--format`` or ``-q`` at
    most: its run, without click (:mod:`kseg.cli.lookup_plain`); None for any other command line."""
    if sys.argv[1:2] not in (["lookup-offset"], ["lookup-time"]):
        return None
    from kseg.cli.lookup_plain import plain, run_plain

    line = plain(sys.argv[1:])
    return None if line is None else lambda: run_plain(line)


def _cached_help() -> bool:
    """``kseg --help`` (or ``-h``) alone, on a terminal at least :data:`kseg.cli.help_text.COLUMNS` wide (or
    none): click's text, kept in :mod:`kseg.cli.help_text`, written without importing click.  False for any
    other command line, which click answers."""

    if sys.argv[1:] not in (["--help"], ["-h"]) or sys.stdout is None:  # no stdout: click's own rule
        return False
    from kseg.cli import help_text

    if _terminal_columns(sys.__stdout__) < help_text.COLUMNS:
        return False
    try:
        sys.stdout.write(help_text.TEXT)
        sys.stdout.flush()
    except BrokenPipeError:
        from kseg.cli.ending import closed_stdout

        closed_stdout()
    return True


def _terminal_columns(stdout) -> int:
    """The width click wraps its help to, as click reads it (``shutil.get_terminal_size().columns``:
    ``COLUMNS`` when a positive number, else the terminal's on stdout, else 80), without importing
    shutil (a third of what ``--help`` would import)."""
    import os

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
