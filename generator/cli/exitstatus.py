"""Exit statuses: a command's failure becomes one line on stderr and 2 (130 for Ctrl-C), never a traceback."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

from generator import __version__
from generator.cli import closedstdout
from generator.core.errors import AuditError, EnvironmentFaultError

if TYPE_CHECKING:
    import argparse

INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C


RETRY_S = 0.005  # how soon an interrupt that could not be raised where it landed is taken again


def _retake_swallowed(previous: Callable[[sys.UnraisableHookArgs], object]
                      ) -> Callable[[sys.UnraisableHookArgs], object]:
    """An unraisable-exception hook: Python ignores an exception raised in a finaliser or a weak-reference
    callback, so a Ctrl-C that landed there is taken again a moment later, in whatever runs then. The timer
    is set inline: a helper's first instruction could take a second Ctrl-C here, where it would be lost."""
    def hook(unraisable: sys.UnraisableHookArgs) -> object:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            signal.signal(signal.SIGALRM, _on_sigint)
            signal.setitimer(signal.ITIMER_REAL, RETRY_S)
            return None
        return previous(unraisable)
    return hook


_HOOK_CODE = _retake_swallowed(sys.unraisablehook).__code__


def _held_back(frame: FrameType | None) -> bool:
    """Whether a KeyboardInterrupt raised in this frame would be lost: in the hook above, and in the import
    system's weak-reference callback (`cb` in importlib's frozen bootstrap, a few instructions that never wait
    long), where it would also keep the import lock. Raised anywhere else, it propagates."""
    if frame is None:
        return False
    code = frame.f_code
    return code is _HOOK_CODE or (code.co_name == "cb" and code.co_filename.startswith("<frozen importlib"))


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C (SIGINT, or the SIGALRM of a retry) as KeyboardInterrupt in the main thread, as Python's own
    handler does, except in a frame where it would be lost: there a timer takes it again RETRY_S later."""
    if _held_back(frame):
        signal.signal(signal.SIGALRM, _on_sigint)
        signal.setitimer(signal.ITIMER_REAL, RETRY_S)
        return
    raise KeyboardInterrupt


def _retry_pending() -> bool:
    """Whether an interrupt is still waiting for its retry; it is cancelled either way."""
    if signal.getsignal(signal.SIGALRM) is not _on_sigint:
        return False
    pending = signal.getitimer(signal.ITIMER_REAL)[0] > 0
    signal.setitimer(signal.ITIMER_REAL, 0)
    return pending


@contextmanager
def sigint_handled() -> Iterator[bool]:
    """`_on_sigint` for the command, where Python's default handler would run (never where SIGINT is ignored,
    as in a background job, nor outside the main thread); the previous handlers afterwards. Yields whether
    it took over."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield False
        return
    previous_hook, previous_alarm = sys.unraisablehook, signal.getsignal(signal.SIGALRM)
    sys.unraisablehook = _retake_swallowed(previous_hook)
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield True
    finally:
        if signal.getsignal(signal.SIGINT) is _on_sigint:  # not once `run_process` ignores SIGINT for the exit
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if signal.getsignal(signal.SIGALRM) is _on_sigint:  # a retry was armed: cancel it, give SIGALRM back
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous_alarm)
        sys.unraisablehook = previous_hook


def _forget_escaped_interrupt() -> None:
    """Let the exit status be the one `run_process` gives, also under `python -m generator`.

    CPython notes a KeyboardInterrupt that escapes code run by `exec` of a string (dataclasses and
    namedtuple create their methods that way, so a Ctrl-C often lands there) as "unhandled", even when an
    outer `except` handles it; a module run with `-m` then ends with SIGINT instead of its exit status
    (bpo-1054041's exit path). Each `exec` of a string starts with a clean note, so an empty one clears it.
    """
    exec("")  # noqa: S102 - a constant empty string; see the docstring


class _LastExit:
    """The process's last exit handler: registered as the command starts, it runs after every handler the
    command registers (atexit runs them last in, first out), flushes the standard streams and ends the
    process with the command's status, without the interpreter's teardown and the C++ static destructors
    that follow it.

    In that teardown pyarrow's thread pools are destroyed while their threads may still be running: now and
    then (1 check in 2,234 on two loaded cores) libstdc++ then aborts the process ("terminate called without
    an active exception", SIGABRT), after the command had finished and printed its answer. Python's own
    exit work (non-daemon threads joined, every other atexit handler) is done by then; the command's files
    were written, closed and renamed into place before it returned.
    """

    def __init__(self) -> None:
        self.status = 2  # a status is set before any normal exit; 2 if Python ends the process some other way

    def __call__(self) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed or broken stream: Python's own exit would say 120
                self.status = self.status or 120
        os._exit(self.status)


def _status_of(exc: SystemExit) -> int:
    """The status Python gives a SystemExit: 0 for none, its number, else 1 with its text on stderr."""
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


def run_process(body: Callable[[], int]) -> NoReturn:
    """The whole life of a `gpu-audit` process: the command's status, or 130 for a Ctrl-C at any point of it.

    Once the status is known, SIGINT is ignored: a late Ctrl-C changes nothing. Python gives SIGINT back its
    default action while the interpreter shuts down, and a signal then (taken by any thread, pyarrow's too)
    would kill the process without a word, as if the command had failed. `signal.signal` first runs the
    handler for a signal still pending, so the loop takes that one as the interrupt it is. The process ends
    in `_LastExit`.
    """
    last = _LastExit()
    atexit.register(last)
    code: int | None = None
    with sigint_handled() as taken:
        try:
            closedstdout.install()  # `gpu-audit ... | head`: a reader that leaves early ends nothing, says nothing
            code = body()
        except KeyboardInterrupt:
            pass
        except SystemExit as exc:  # argparse's --help and --version end the command this way
            code = _status_of(exc)
        while taken:
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                if _retry_pending():  # a Ctrl-C that landed where it could not be raised, not yet taken
                    code = None
                break
            except KeyboardInterrupt:
                code = None
    _forget_escaped_interrupt()
    last.status = interrupted() if code is None else code
    sys.exit(last.status)


_INTERRUPTED_LINE = "gpu-audit: interrupted"


def interrupted() -> int:
    """What Ctrl-C prints, and its exit status."""
    print(_INTERRUPTED_LINE, file=sys.stderr)
    return INTERRUPTED


def printable(text: str) -> str:
    """Text that any UTF-8 stream can print: a lone surrogate (an odd file name) is shown escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def one_line(text: str) -> str:
    """The text on one line: a message built from an exception may hold line breaks."""
    return printable(" ".join(text.split()))


def target_of(args: argparse.Namespace) -> str | None:
    """What the command writes (a bundle, a decision file, a note's folder, a key folder): a full disk names it."""
    for name in ("out", "outdir", "directory", "output", "out_dir"):
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def crash_report(exc: BaseException, argv: Sequence[str]) -> str:
    """Save the traceback of an unexpected exception to a new file in the temporary folder: where, or why not."""
    import platform
    import tempfile
    import traceback

    try:
        fd, path = tempfile.mkstemp(prefix="gpu-audit-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(f"gpu-audit {__version__}, Python {platform.python_version()} on {platform.platform()}\n")
            fh.write(f"arguments: {list(argv)!r}\n\n")
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=fh)
    except OSError as fault:  # a full disk, say: the one line still says what happened
        return f"its traceback could not be saved ({fault.strerror})"
    return f"its traceback is in {path}"


def _wrapped_interrupt(exc: BaseException) -> bool:
    """Whether a Ctrl-C lies behind this exception: Python and some libraries turn a KeyboardInterrupt raised
    inside them into another error (a `__set_name__` hook's becomes a RuntimeError), keeping it as the cause."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _stopped(exc: BaseException, line: str, status: int, as_json: bool) -> int:
    """A command that stopped: its one line on stderr and, under `--json`, the JSON error object on stdout."""
    from generator.cli import jsonerror

    if isinstance(exc, jsonerror.CommandLineError):
        sys.stderr.write(exc.as_argparse_prints_it())
        message = f"{exc.prog}: {exc}"
    else:
        print(line, file=sys.stderr)
        message = line.removeprefix("gpu-audit: ").removeprefix("error: ")
    if as_json:
        code, fix = jsonerror.code_and_fix(exc)
        if isinstance(exc, KeyboardInterrupt):
            code, fix = jsonerror.INTERRUPTED, "run the command again and let it finish"
        jsonerror.print_error(code, printable(message), printable(fix), status)
    return status


def run_command(argv: Sequence[str], command: Callable[[], int],
                parsed: Callable[[], argparse.Namespace | None]) -> int:
    """Run the command; its own status (0, or 1 for findings), else 2 with one line on stderr, or 130.

    2 is everything that stopped it: a usage error, an environment fault (disk full, permission denied, out
    of memory, an I/O error: the path and what to do) and a bug (its traceback saved to a file). Ctrl-C is a
    KeyboardInterrupt in the main thread (`sigint_handled`): every writer removes what it began (a temporary
    name, never the target) on the way out, and nothing waits for a thread that imports. `parsed` gives the
    command's arguments once they are parsed: a full disk names what the command was writing. Under `--json`
    a command that stops also prints its JSON error object on stdout (generator.cli.jsonerror).
    """
    from generator.cli.jsonerror import json_requested

    try:
        try:
            return command()
        except OSError as exc:
            if exc.errno is None:  # not the system's answer (io.UnsupportedOperation, a library's own): a bug
                raise
            args = parsed()
            raise EnvironmentFaultError.from_os_error(exc, None if args is None else target_of(args)) from None
        except MemoryError:
            name = " ".join(argv[:1])
            raise EnvironmentFaultError(f"out of memory while running `gpu-audit {name}`; free memory "
                                        "(close other programs) or use a machine with more, then run it again"
                                        ) from None
    except EnvironmentFaultError as exc:
        return _stopped(exc, one_line(f"gpu-audit: error: {exc}"), exc.exit_status, json_requested(argv, parsed()))
    except AuditError as exc:
        return _stopped(exc, printable(f"gpu-audit: error: {exc}"), exc.exit_status, json_requested(argv, parsed()))
    except KeyboardInterrupt as exc:
        return _stopped(exc, _INTERRUPTED_LINE, INTERRUPTED, json_requested(argv, parsed()))
    except Exception as exc:  # noqa: BLE001 - a bug: one line and a saved traceback, not exit 1 and a traceback
        if _wrapped_interrupt(exc):
            return _stopped(KeyboardInterrupt(), _INTERRUPTED_LINE, INTERRUPTED, json_requested(argv, parsed()))
        where = crash_report(exc, argv)
        return _stopped(exc, one_line(f"gpu-audit: internal error (a bug in gpu-audit, not a problem of the input): "
                                      f"{type(exc).__name__}: {str(exc)[:300]}; {where}; please report it"), 2,
                        json_requested(argv, parsed()))
