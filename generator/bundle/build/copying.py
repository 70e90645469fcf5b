"""Byte-for-byte copies of a bundle's inputs, each hashed from the copy itself, in a worker process.

The copy runs beside the check and the rendering of the note. In a thread it would hand the GIL back
and forth with them at every block; a process of its own, at a lower priority, uses the processor time
they leave. This module imports only the standard library and small parts of gpu-audit, so the worker
starts fast.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
import threading
from pathlib import Path
from typing import Any

from generator.bundle.bagit_format import PAYLOAD_ALGORITHMS
from generator.core.errors import AuditError, SecretInInputError, UnreadableInputError
from generator.core.system.pemkeys import KEY_MARK, holds_private_key
from generator.core.system.worker import JsonWorker, serve

# Large blocks: few system calls, and one buffer reused (fresh large objects fault in page by page).
BLOCK = 32 << 20
KEY_WINDOW = 65536  # a PEM key split across two blocks is found when it is shorter than this
Job = tuple[str, str, str]  # source, copy, name


def copy_file(source: Path, target: Path, rel: str) -> None:
    """Copy a regular file's bytes into a new file, inside the kernel where it can (copy_file_range).

    The source is opened without blocking and must be a regular file: a pipe put in an input's place
    would otherwise hold the copy (and the build) forever.
    """
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UnreadableInputError(f"{rel}: cannot be read ({exc.strerror}); check its permissions") from None
    with os.fdopen(fd, "rb") as src:
        if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
            raise UnreadableInputError(f"{rel}: is not a regular file (a pipe, socket or device); inputs are plain "
                                       "files")
        with target.open("xb") as dst:
            try:
                while os.copy_file_range(src.fileno(), dst.fileno(), BLOCK):
                    pass
            except OSError:  # a file system or kernel without it: the same copy through user space
                shutil.copyfileobj(src, dst, BLOCK)


class InputCopies:
    """Copies of the prediction files made by the check's worker threads, which then read the copy: what the
    check hashes and parses is the copy itself, so it needs no second reading to be hashed (a file listed
    by several grid rows is copied once; the other readers wait for that copy)."""

    def __init__(self, inputs_dir: Path) -> None:
        self._dir = inputs_dir
        self._lock = threading.Lock()
        self._copies: dict[str, threading.Lock] = {}
        self._done: set[str] = set()

    def __call__(self, source: Path, rel: str) -> Path:
        """Copy `source` (the input named `rel`) into the bundle, once; the copy's path, to be read instead."""
        target = self._dir / rel
        with self._lock:
            one = self._copies.setdefault(rel, threading.Lock())
        with one:
            if rel not in self._done:
                target.parent.mkdir(parents=True, exist_ok=True)
                copy_file(source, target, rel)
                self._done.add(rel)
        return target

    @property
    def names(self) -> set[str]:
        """The inputs copied so far."""
        with self._lock:
            return set(self._done)


def copy_hashing(source: Path, target: Path, rel: str, buffer: bytearray | None = None) -> dict[str, str]:
    """Copy one input, then hash the copy itself with every manifest algorithm.

    Hashing the copy, not the source, is what proves that the bundle holds the bytes it names. A PEM
    private key anywhere in it stops the build (a key never enters a bundle). `buffer` is the block to
    read into, reused from file to file: a new one is zero-filled page by page, 32 MiB each time.
    """
    # On these machines a kernel copy costs a tenth of the system time of writing from Python memory.
    copy_file(source, target, rel)
    hashers = {alg: hashlib.new(alg) for alg in PAYLOAD_ALGORITHMS}
    tail = b""
    buffer = bytearray(BLOCK) if buffer is None else buffer
    view = memoryview(buffer)
    with target.open("rb") as fh:
        while n := fh.readinto(buffer):
            block = view[:n]
            for h in hashers.values():
                h.update(block)
            # A key whose END line is neither in this block nor across its start was seen with the last one.
            edge = tail[-len(KEY_MARK):] + bytes(block[:len(KEY_MARK)])
            if (buffer.find(KEY_MARK, 0, n) != -1 or KEY_MARK in edge) and holds_private_key(tail + bytes(block)):
                raise SecretInInputError(f"{rel}: holds a PEM private key; it is never copied into a bundle: move "
                                         "it out of the campaign folder")
            tail = bytes(block[-KEY_WINDOW:])
    return {alg: h.hexdigest() for alg, h in hashers.items()}


def copy_all(jobs: list[Job]) -> dict[str, dict[str, str]]:
    """Copy and hash each (source, copy, name); the digests by name."""
    sums: dict[str, dict[str, str]] = {}
    buffer = bytearray(BLOCK)
    for source, target, rel in jobs:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        sums[rel] = copy_hashing(Path(source), Path(target), rel, buffer)
    return sums


class Copier:
    """The copying worker: started early, given the inputs as soon as they are known."""

    def __init__(self) -> None:
        self._worker = JsonWorker("generator.bundle.build.copying")
        self._jobs: list[Job] = []

    def start(self, jobs: list[Job]) -> None:
        """Hand the jobs to the worker, which copies them while this process goes on."""
        self._jobs = jobs
        self._worker.send(jobs)

    def result(self) -> dict[str, dict[str, str]]:
        """The digests by name, once every copy is made; the worker's error raised here."""
        if not self._worker.running:  # no interpreter to start (embedded Python): copy here
            return copy_all(self._jobs)
        answer = self._worker.answer()
        if not isinstance(answer, dict) or not ("sums" in answer or "error" in answer):
            raise UnreadableInputError("copying the inputs into the bundle failed (the copying process ended "
                                       "without an answer); run the build again")
        if answer.get("error") == "os" and isinstance(answer.get("errno"), int):
            raise OSError(answer["errno"], answer.get("strerror") or answer.get("message"), answer.get("filename"))
        if "error" in answer:
            kind = SecretInInputError if answer["error"] == "secret" else UnreadableInputError
            raise kind(answer["message"])
        return answer["sums"]

    def close(self) -> None:
        """Stop the worker and wait for it, so that nothing writes into the bundle afterwards."""
        self._worker.close()

    def __enter__(self) -> Copier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _copy_request(request: Any) -> dict[str, Any]:
    jobs = [(str(a), str(b), str(c)) for a, b, c in request or []]
    try:
        return {"sums": copy_all(jobs)}
    except SecretInInputError as exc:
        return {"error": "secret", "message": str(exc)}
    except OSError as exc:  # the machine's fault (a full disk, a read error): the parent raises it again as such
        return {"error": "os", "errno": exc.errno, "strerror": exc.strerror,
                "filename": None if exc.filename is None else os.fsdecode(exc.filename), "message": str(exc)}
    except AuditError as exc:
        return {"error": "unreadable", "message": f"copying the inputs: {exc}"}


if __name__ == "__main__":
    # Low priority: the worker takes the processor time the check and the rendering leave.
    sys.exit(serve(_copy_request, nice=10))
