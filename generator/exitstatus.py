"""Exit statuses: a command's failure becomes one line on stderr and 2 (130 for Ctrl-C), never a traceback."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from generator import __version__
from generator.errors import AuditError, EnvironmentFaultError

INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C


def _held_back(frame: FrameType | None) -> bool:
    """Whether a KeyboardInterrupt raised in this frame would be lost: Python ignores an exception raised in a
    weak-reference callback, and the import system's (`cb` in importlib's frozen bootstrap, a few instructions
    that never wait long) would also keep the import lock. Raised anywhere else, it propagates."""
    return (frame is not None and frame.f_code.co_name == "cb"
            and frame.f_code.co_filename.startswith("<frozen importlib"))


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C as KeyboardInterrupt in the main thread, as Python's own handler does, except in a frame where it
    would be lost: there the signal is sent again, to be taken at the next instruction (no thread, no timer)."""
    if _held_back(frame):
        os.kill(os.getpid(), signum)
        return
    raise KeyboardInterrupt


@contextmanager
def sigint_handled() -> Iterator[None]:
    """`_on_sigint` for the command, where Python's default handler would run (never where SIGINT is ignored,
    as in a background job, nor outside the main thread); the previous handler afterwards."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def interrupted() -> int:
    """What Ctrl-C prints, and its exit status."""
    print("gpu-audit: interrupted", file=sys.stderr)
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
    import os
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


def run_command(args: argparse.Namespace, argv: Sequence[str], command: Callable[[], int]) -> int:
    """Run the command; its own status (0, or 1 for findings), else 2 with one line on stderr, or 130.

    2 is everything that stopped it: a usage error, an environment fault (disk full, permission denied, out
    of memory, an I/O error: the path and what to do) and a bug (its traceback saved to a file). Ctrl-C is a
    KeyboardInterrupt in the main thread (`sigint_handled`): every writer removes what it began (a temporary
    name, never the target) on the way out, and nothing waits for a thread that imports.
    """
    try:
        try:
            return command()
        except OSError as exc:
            if exc.errno is None:  # not the system's answer (io.UnsupportedOperation, a library's own): a bug
                raise
            raise EnvironmentFaultError.from_os_error(exc, target_of(args)) from None
        except MemoryError:
            raise EnvironmentFaultError(f"out of memory while running `gpu-audit {args.command}`; free memory "
                                        "(close other programs) or use a machine with more, then run it again"
                                        ) from None
    except EnvironmentFaultError as exc:
        print(one_line(f"gpu-audit: error: {exc}"), file=sys.stderr)
        return exc.exit_status
    except AuditError as exc:
        print(printable(f"gpu-audit: error: {exc}"), file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        return interrupted()
    except Exception as exc:  # noqa: BLE001 - a bug: one line and a saved traceback, not exit 1 and a traceback
        where = crash_report(exc, argv)
        print(one_line(f"gpu-audit: internal error (a bug in gpu-audit, not a problem of the input): "
                       f"{type(exc).__name__}: {str(exc)[:300]}; {where}; please report it"), file=sys.stderr)
        return 2
