"""Standard output whose reader may leave early (`gpu-audit check DIR | head -1`): what is left to print is
discarded without a word, and the command ends with its own status.

Python ignores SIGPIPE, so a write to a pipe whose reader has gone raises BrokenPipeError wherever the command
happens to print; that would stop it half-way with a "Broken pipe" error and exit 2. Here the first such write
puts /dev/null in place of the pipe (as Python's documentation suggests in its "Note on SIGPIPE"), so the
command finishes what it was doing (a bundle it builds is still built, a decision file still written) and exits
0, 1 or 2 as it would have with a reader, and nothing reaches stderr. A tool killed by SIGPIPE exits 141 or with
its own status depending on whether its output still fitted in the pipe when the reader left; gpu-audit's status
is its answer, whoever reads its output.
"""

from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class _ToReaderOrNowhere(io.RawIOBase):
    """File descriptor 1, written in full; once its reader has gone (EPIPE), /dev/null takes its place."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: ReadableBuffer) -> int:
        view = memoryview(data).cast("B")
        done = 0
        try:
            while done < len(view):  # all of it: a text layer without a buffer would drop a short write's rest
                done += os.write(self._fd, view[done:])
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._fd)
            finally:
                os.close(devnull)
        return len(view)


def install() -> None:
    """Replace `sys.stdout` by the same text stream (encoding, error handler, buffering) over a file descriptor
    whose closed reader is discarded silently. Left as it is where stdout is not a file descriptor."""
    out = sys.stdout
    if not isinstance(out, io.TextIOWrapper):
        return
    try:
        fd = out.fileno()
        out.flush()
    except (OSError, ValueError):  # no descriptor, or already broken: Python's own handling stays
        return
    raw = _ToReaderOrNowhere(fd)
    unbuffered = not isinstance(out.buffer, io.BufferedWriter)  # python -u, PYTHONUNBUFFERED
    binary: io.RawIOBase | io.BufferedWriter = raw if unbuffered else io.BufferedWriter(raw)
    sys.stdout = io.TextIOWrapper(binary, encoding=out.encoding, errors=out.errors,
                                  line_buffering=out.line_buffering, write_through=out.write_through)
