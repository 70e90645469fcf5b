"""Helper processes that answer one JSON request each: work beside this process, with a GIL of their own.

A worker is `python -m MODULE`; it starts at once (so that its imports overlap this process's work), reads
one JSON request on stdin and writes its answers on stdout, one JSON line each, as soon as each is ready.
Only the standard library is imported here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def child_env() -> dict[str, str]:
    """The environment of a child `python -m generator...`: this one, with this very package first on its path."""
    package_root = str(Path(__file__).resolve().parents[3])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}


class JsonWorker:
    """One helper process, its single request and its answers; None as an answer the process could not give.

    The process leads a process group of its own, which `close` stops whole: the helpers a worker starts
    with `in_group=True` (the note's worker starts a chart worker) stay in that group, so they never
    outlive it nor keep the command's output pipes open.
    """

    def __init__(self, module: str, *, in_group: bool = False) -> None:
        env = child_env()
        self._leads_group = not in_group
        self._proc: subprocess.Popen[bytes] | None = None
        if sys.executable:  # an embedded interpreter has none to start
            try:
                self._proc = subprocess.Popen([sys.executable, "-m", module], stdin=subprocess.PIPE,
                                              stdout=subprocess.PIPE, env=env,
                                              process_group=0 if self._leads_group else None)
            except OSError:
                self._proc = None

    @property
    def running(self) -> bool:
        return self._proc is not None

    def send(self, request: Any) -> None:
        """Hand the request to the worker, which works on it while this process goes on."""
        if self._proc is None or self._proc.stdin is None:
            return
        try:
            self._proc.stdin.write(json.dumps(request).encode("utf-8"))
            self._proc.stdin.close()
        except OSError:  # the worker is gone: answer() says so
            pass

    def answer(self) -> Any | None:
        """The worker's next answer, waiting for it; None if it failed before giving it, or never ran."""
        if self._proc is None or self._proc.stdout is None:
            return None
        line = self._proc.stdout.readline()
        if not line.endswith(b"\n"):  # the worker ended without a complete answer
            self._proc.wait()
            return None
        try:
            return json.loads(line)
        except ValueError:
            return None

    def close(self) -> None:
        """Stop the worker and its process group if it still runs, and wait for it: nothing it does outlives
        this call."""
        if self._proc is not None and self._proc.poll() is None:  # not yet waited for: its group is still its own
            try:
                if self._leads_group:
                    os.killpg(self._proc.pid, signal.SIGKILL)
                else:
                    self._proc.kill()
            except ProcessLookupError:
                pass
            self._proc.wait()

    def __enter__(self) -> JsonWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve(handler: Callable[[Any], Any], *, nice: int = 0, prepare: Callable[[], None] | None = None) -> int:
    """The worker's side: one request from stdin; its answer, or each answer a generator yields, to stdout.

    `prepare` runs first, at the worker's priority, before the request is read: what the worker can do
    before it knows the request (its heavy imports) overlaps the parent's work.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the command
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
    if prepare is not None:
        prepare()
    data = sys.stdin.buffer.read()
    if not data:  # the parent stopped (a Ctrl-C, say) before it asked anything: nothing to do, nothing to say
        return 0
    answers = handler(json.loads(data))
    try:
        for answer in answers if isinstance(answers, Iterator) else [answers]:
            sys.stdout.write(json.dumps(answer) + "\n")  # JSON escapes every newline inside: one line per answer
            sys.stdout.flush()
    except BrokenPipeError:  # the parent stopped listening; the recipe of Python's `signal` documentation
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that the exit's flush is silent
    return 0
