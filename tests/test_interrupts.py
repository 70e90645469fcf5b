"""Ctrl-C where Python would lose it or misreport it: each case exits 130 with one line, or with the command's
own status once that is known (generator.cli.exitstatus.run_process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
INTERRUPTED = b"gpu-audit: interrupted\n"


def _run_module(tmp_path: Path, body: str) -> subprocess.CompletedProcess[bytes]:
    """`python -m probe` (the way `python -m generator` runs) whose command is `body`, under run_process."""
    (tmp_path / "probe.py").write_text(
        "import os, signal, sys\n"
        "from generator.cli.exitstatus import run_process\n\n"
        "def command():\n" + "".join(f"    {line}\n" for line in body.splitlines()) +
        "\nif __name__ == '__main__':\n    run_process(command)\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    return subprocess.run([sys.executable, "-m", "probe"], cwd=tmp_path, env=env, capture_output=True, timeout=60,
                          # a background shell (CI) starts children with SIGINT ignored; a user's terminal does not
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509


def test_an_interrupt_escaping_exec_still_exits_130(tmp_path: Path) -> None:
    # dataclasses build their methods with exec(); CPython then ended a `-m` run with SIGINT (-2), not 130
    r = _run_module(tmp_path, "exec('import os, signal\\nos.kill(os.getpid(), signal.SIGINT)\\n"
                              "for _ in range(9): pass')\n"
                              "return 0")
    assert (r.returncode, r.stderr) == (130, INTERRUPTED)


def test_an_interrupt_swallowed_by_a_finaliser_is_taken_after_it(tmp_path: Path) -> None:
    # Python ignores an exception raised in __del__ ("Exception ignored in ..."): the Ctrl-C would be lost
    r = _run_module(tmp_path, "class Held:\n"
                              "    def __del__(self):\n"
                              "        os.kill(os.getpid(), signal.SIGINT)\n"
                              "        for _ in range(9): pass\n"
                              "Held()\n"
                              "for _ in range(1000): pass\n"
                              "return 0")
    assert (r.returncode, r.stderr) == (130, INTERRUPTED)


@pytest.mark.parametrize("status", [0, 1])
def test_a_ctrl_c_during_the_shutdown_changes_nothing(status: int, tmp_path: Path) -> None:
    # after the command, Python gives SIGINT back its default action: a signal then killed the process silently
    r = _run_module(tmp_path, "import atexit\n"
                              "atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))\n"
                              f"return {status}")
    assert (r.returncode, r.stderr) == (status, b"")


def test_a_pending_ctrl_c_is_taken_before_the_status_is_final(tmp_path: Path) -> None:
    # the signal arrives as the command returns: it is the interrupt it was, not a status for work not done
    r = _run_module(tmp_path, "os.kill(os.getpid(), signal.SIGINT)\nreturn 0")
    assert (r.returncode, r.stderr) == (130, INTERRUPTED)


def test_in_process_main_gives_back_the_previous_handler(capsys: pytest.CaptureFixture[str]) -> None:
    from generator.cli.main import main

    before, hook = signal.getsignal(signal.SIGINT), sys.unraisablehook
    assert main(["cost", "--gpu", "rtx-4090", "--days", "7", "--lots", "1"]) == 0
    assert "110.00" in capsys.readouterr().out
    assert signal.getsignal(signal.SIGINT) is before and sys.unraisablehook is hook


@pytest.mark.parametrize("status", [0, 1])
def test_the_process_ends_with_its_status_before_the_native_teardown(status: int, tmp_path: Path) -> None:
    # pyarrow's thread pools, destroyed by C++ static destructors after Python's teardown, sometimes aborted a
    # finished `check` (SIGABRT, "terminate called without an active exception"). A native exit handler that
    # aborts, registered as those destructors are (__cxa_atexit), stands for them: the process must end with
    # its status before it runs, after every Python exit handler, with what it printed flushed.
    done = tmp_path / "python-exit-handler-ran"
    r = _run_module(tmp_path, "import atexit, ctypes\n"
                              "libc = ctypes.CDLL(None)\n"
                              "libc.__cxa_atexit(ctypes.cast(libc.abort, ctypes.c_void_p), None, None)\n"
                              f"atexit.register(lambda: open({str(done)!r}, 'w').close())\n"
                              "sys.stdout.write('the answer, unflushed')\n"
                              f"return {status}")
    assert (r.returncode, r.stdout, r.stderr) == (status, b"the answer, unflushed", b"")
    assert done.exists()


def test_an_interrupt_in_the_import_lock_callback_is_taken_after_it(tmp_path: Path) -> None:
    # importlib's `cb` (a weak-reference callback that holds the import lock) would swallow the
    # KeyboardInterrupt and could keep the lock: the interrupt waits until the callback has run to its end
    done = tmp_path / "callback-finished"
    r = _run_module(tmp_path, "namespace = {}\n"
                              "exec(compile('def cb(done):\\n    import os, signal\\n"
                              "    os.kill(os.getpid(), signal.SIGINT)\\n"
                              "    for _ in range(99): pass\\n    open(done, \"w\").close()\\n', "
                              "'<frozen importlib._bootstrap>', 'exec'), namespace)\n"
                              f"namespace['cb']({str(done)!r})\n"
                              # longer than _run_module's hang guard: only the retry can end this sleep
                              "import time\ntime.sleep(3600)\n"
                              "return 0")
    assert (r.returncode, r.stderr) == (130, INTERRUPTED)
    assert done.exists()


def test_an_interrupt_that_python_wraps_into_another_error_is_still_an_interrupt(tmp_path: Path) -> None:
    # Python 3.11 turns an exception raised in __set_name__ into a RuntimeError: that read as a bug (exit 2)
    r = _run_module(tmp_path, "from generator.cli.exitstatus import run_command\n"
                              "def inner():\n"
                              "    class Named:\n"
                              "        def __set_name__(self, owner, name):\n"
                              "            os.kill(os.getpid(), signal.SIGINT)\n"
                              "            for _ in range(99): pass\n"
                              "    class Owner:\n"
                              "        field = Named()\n"
                              "    return 0\n"
                              "return run_command(['probe'], inner, lambda: None)")
    assert (r.returncode, r.stderr) == (130, INTERRUPTED)


@pytest.mark.parametrize("module", ["generator.render.page.charts", "generator.bundle.build.copying",
                                    "generator.render.page.noteworker"])
def test_a_worker_whose_parent_stopped_before_asking_ends_without_a_word(module: str) -> None:
    # a Ctrl-C in the parent closes the worker's stdin unasked: it printed a TypeError traceback on the terminal
    r = subprocess.run([sys.executable, "-m", module], cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=60)
    assert (r.returncode, r.stderr) == (0, b"")


def test_a_worker_whose_parent_stopped_listening_ends_without_a_word(tmp_path: Path) -> None:
    import json

    decision = json.dumps({"durations": [], "memory": []})  # nothing to draw: the answers come at once
    proc = subprocess.Popen([sys.executable, "-m", "generator.render.page.charts"], cwd=REPO, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.close()  # the parent is gone before the first answer
    proc.stdin.write(decision.encode())
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stderr is not None and proc.stderr.read() == b""
