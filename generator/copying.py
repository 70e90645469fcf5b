"""Byte-for-byte copies of a bundle's inputs, each hashed from the copy itself, in a worker process.

The copy runs beside the check and the rendering of the note. In a thread it would hand the GIL back
and forth with them at every block; a process of its own, at a lower priority, uses the processor
time they leave. The
worker is `python -m generator.copying`: it reads its jobs as JSON on stdin and answers with JSON on
stdout. This module imports only the standard library and small parts of gpu-audit, so it starts fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from generator.bagit_format import PAYLOAD_ALGORITHMS
from generator.errors import AuditError, SecretInInputError, UnreadableInputError
from generator.pemkeys import KEY_MARK, holds_private_key

# Large blocks: few system calls, and one buffer reused (fresh large objects fault in page by page).
BLOCK = 32 << 20
KEY_WINDOW = 65536  # a PEM key split across two blocks is found when it is shorter than this
Job = tuple[str, str, str]  # source, copy, name


def copy_file(source: Path, target: Path) -> None:
    """Copy a file's bytes into a new file, inside the kernel where it can (copy_file_range)."""
    with source.open("rb") as src, target.open("xb") as dst:
        try:
            while os.copy_file_range(src.fileno(), dst.fileno(), BLOCK):
                pass
        except OSError:  # a file system or kernel without it: the same copy through user space
            shutil.copyfileobj(src, dst, BLOCK)


def copy_hashing(source: Path, target: Path, rel: str) -> dict[str, str]:
    """Copy one input, then hash the copy itself with every manifest algorithm.

    Hashing the copy, not the source, is what proves that the bundle holds the bytes it names. A PEM
    private key anywhere in it stops the build (a key never enters a bundle).
    """
    # On these machines a kernel copy costs a tenth of the system time of writing from Python memory.
    copy_file(source, target)
    hashers = {alg: hashlib.new(alg) for alg in PAYLOAD_ALGORITHMS}
    tail = b""
    buffer = bytearray(BLOCK)
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
    for source, target, rel in jobs:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        sums[rel] = copy_hashing(Path(source), Path(target), rel)
    return sums


class Copier:
    """The worker process, started early so that it is ready when the inputs are validated."""

    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        self._proc: subprocess.Popen[bytes] | None = None
        if sys.executable:
            self._proc = subprocess.Popen([sys.executable, "-m", "generator.copying"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, env=env)
        self._jobs: list[Job] | None = None

    def start(self, jobs: list[Job]) -> None:
        """Hand the jobs to the worker, which copies them while this process goes on."""
        self._jobs = jobs
        if self._proc is not None and self._proc.stdin is not None:
            self._proc.stdin.write(json.dumps(jobs).encode("utf-8"))
            self._proc.stdin.close()

    def result(self) -> dict[str, dict[str, str]]:
        """The digests by name, once every copy is made; the worker's error raised here."""
        if self._proc is None:  # no interpreter to start (embedded Python): copy here
            return copy_all(self._jobs or [])
        assert self._proc.stdout is not None
        out = self._proc.stdout.read()
        self._proc.wait()
        answer: dict[str, Any] = json.loads(out or b"{}")
        if "error" in answer:
            kind = SecretInInputError if answer["error"] == "secret" else UnreadableInputError
            raise kind(answer["message"])
        if self._proc.returncode or "sums" not in answer:
            raise UnreadableInputError(f"copying the inputs failed (worker exit status {self._proc.returncode})")
        return answer["sums"]

    def close(self) -> None:
        """Stop the worker and wait for it, so that nothing writes into the bundle afterwards."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def __enter__(self) -> Copier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the build
    try:
        os.nice(10)  # use the processor time the check and the rendering leave, never slow them down
    except OSError:
        pass
    jobs = [tuple(j) for j in json.loads(sys.stdin.buffer.read() or b"[]")]
    try:
        answer: dict[str, Any] = {"sums": copy_all(jobs)}  # type: ignore[arg-type]
    except SecretInInputError as exc:
        answer = {"error": "secret", "message": str(exc)}
    except (OSError, AuditError) as exc:
        answer = {"error": "unreadable", "message": f"copying the inputs: {exc}"}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
