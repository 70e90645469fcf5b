"""build's note worker: it renders what the build would render itself, below the build's priority, and nothing
it starts outlives it; whatever it fails at, the build renders the note itself."""

from __future__ import annotations

import base64
import functools
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, set_cell

from generator.cli.evidence import campaign_evidence
from generator.render.page import noteworker
from generator.render.page.note import HTML_NAME, PDF_NAME, render_note
from generator.render.page.noteworker import NoteWorker, rendered_files
from generator.render.view.finance import Signature

pytestmark = pytest.mark.note_worker  # the worker itself is what these tests are about

UNSIGNED = Signature("unsigned")
# Stand-ins for `python -m generator.render.page.noteworker`, put on PYTHONPATH by the tests.
WORKERS = {
    "note_dies": "sys.stdin.read()\nsys.exit(3)\n",
    "note_error": "sys.stdin.read()\nprint(json.dumps({'error': 'planted'}))\n",
    "note_not_a_pdf": "sys.stdin.read()\nprint(json.dumps({'html': base64.b64encode(b'<p>x</p>').decode(),\n"
                      "                  'pdf': base64.b64encode(b'not a PDF').decode()}))\n",
}
# A WeasyPrint the worker cannot import (the package beside this test's own, already imported, is not touched).
BROKEN_WEASYPRINT = "raise ImportError('planted: no WeasyPrint here')\n"


@functools.cache
def _rendered_here(decision_bytes: bytes) -> dict[str, bytes]:
    return render_note(json.loads(decision_bytes), campaign_evidence(EXAMPLE, decision_bytes), signature=UNSIGNED)


def _here(bundle: Path) -> dict[str, bytes]:
    """The note of the bundle's decision rendered in this process, as an unsigned build renders it (once for the
    builds made at one SOURCE_DATE_EPOCH, whose decisions are byte-identical)."""
    return _rendered_here((bundle / "data" / "decision.json").read_bytes())


def _on_path(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])))


def test_the_worker_renders_what_this_process_renders(tmp_path: Path) -> None:
    from generator.cli.main import main

    assert main(["check", str(EXAMPLE), "--out", str(tmp_path / "decision.json")]) == 0
    decision_bytes = (tmp_path / "decision.json").read_bytes()
    decision, evidence = json.loads(decision_bytes), campaign_evidence(EXAMPLE, decision_bytes)
    with NoteWorker() as worker:
        worker.ask(decision, evidence, UNSIGNED, "de")
        files = worker.files()
    assert files == render_note(decision, evidence, signature=UNSIGNED, language="de")


@pytest.mark.parametrize("module", [None, *sorted(WORKERS), "weasyprint"])
def test_the_bundle_holds_the_note_the_build_renders_itself_whatever_the_worker_does(
        module: str | None, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764806400")  # one decision for every case: rendered here once
    if module == "weasyprint":
        (tmp_path / "weasyprint").mkdir()
        (tmp_path / "weasyprint" / "__init__.py").write_text(BROKEN_WEASYPRINT)
        _on_path(monkeypatch, tmp_path)
    elif module is not None:
        (tmp_path / f"{module}.py").write_text("import base64, json, sys\n" + WORKERS[module])
        _on_path(monkeypatch, tmp_path)
        monkeypatch.setattr(noteworker, "MODULE", module)
    out = tmp_path / "bundle"
    r = run_cli("build", str(EXAMPLE), "-o", str(out), "--unsigned", "--quiet")
    assert r.code == 0, r.err
    here = _here(out)
    assert (out / "data" / HTML_NAME).read_bytes() == here[HTML_NAME]
    assert (out / "data" / PDF_NAME).read_bytes() == here[PDF_NAME]
    assert run_cli("verify", str(out), "--allow-unsigned").code == 0


def test_strict_reports_its_findings_even_when_the_worker_cannot_import_weasyprint(
        run_cli, campaign: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker imports WeasyPrint while the check runs; its failure is left to the rendering, which a
    --strict build with findings never reaches."""
    (tmp_path / "weasyprint").mkdir()
    (tmp_path / "weasyprint" / "__init__.py").write_text(BROKEN_WEASYPRINT)
    _on_path(monkeypatch, tmp_path)
    set_cell(campaign, 1, "quality_threshold", "0.5")
    r = run_cli("build", str(campaign), "-o", str(tmp_path / "b"), "--unsigned", "--strict")
    assert r.code == 1 and "not built: 1 error finding and --strict was given" in r.out, r.err


PDF = base64.b64encode(b"%PDF-1.7 body").decode()
HTML = base64.b64encode(b"<p>note</p>").decode()


@pytest.mark.parametrize("answer", [
    None, [], "x", {"html": HTML}, {"pdf": PDF}, {"html": HTML, "pdf": PDF, "error": "x"},
    {"html": HTML, "pdf": base64.b64encode(b"not a PDF").decode()}, {"html": "", "pdf": PDF},
    {"html": HTML, "pdf": PDF + "!"}, {"html": 1, "pdf": PDF}, {"html": HTML, "pdf": None},
])
def test_anything_but_an_html_and_a_pdf_is_no_answer(answer: object) -> None:
    assert rendered_files(answer) is None


def test_an_html_and_a_pdf_are_the_answer() -> None:
    assert rendered_files({"html": HTML, "pdf": PDF}) == {HTML_NAME: b"<p>note</p>", PDF_NAME: b"%PDF-1.7 body"}


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, parent, group, ...); None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def _gone(pid: int) -> bool:
    stat = _stat(pid)
    return stat is None or stat[0] == "Z"  # a zombie that its new parent has not reaped yet


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_the_worker_and_its_chart_worker_run_below_this_process_and_stop_with_it() -> None:
    before = set(_children(os.getpid()))
    worker = NoteWorker()
    try:
        deadline = time.monotonic() + 60
        while True:  # the chart worker is started once the note worker runs
            new = set(_children(os.getpid())) - before
            grandchildren = [g for child in new for g in _children(child)]
            if len(new) == 1 and grandchildren or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert len(new) == 1 and len(grandchildren) == 1
        (child,), (grandchild,) = new, grandchildren
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        deadline = time.monotonic() + 10
        while os.getpriority(os.PRIO_PROCESS, child) == mine and time.monotonic() < deadline:
            time.sleep(0.02)  # the worker lowers its priority first thing
        expected = min(mine + noteworker.NICE, 19)
        assert os.getpriority(os.PRIO_PROCESS, child) == expected
        assert os.getpriority(os.PRIO_PROCESS, grandchild) == expected
        assert os.getpgid(grandchild) == child  # the worker's group, which close() stops whole
        # frozen, the chart worker cannot finish its imports and end by itself: only a kill of the group ends it
        os.kill(grandchild, signal.SIGSTOP)
    finally:
        worker.close()
    deadline = time.monotonic() + 60  # a hang guard: a kill is taken at once, whatever the load
    while not (_gone(child) and _gone(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(child) and _gone(grandchild)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_a_build_refused_for_its_key_stops_the_workers_it_started_first(tmp_path: Path, run_cli: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`gpu-audit build` starts the note worker and the copier before it loads the key (their imports overlap
    that set-up): a key that cannot be read is exit 2 with one line, and neither worker, nor the chart worker
    the note worker started, outlives the command."""
    from generator.core.system import worker

    started: list[int] = []
    popen = worker.subprocess.Popen

    def recording(*args: Any, **kwargs: Any) -> Any:
        proc = popen(*args, **kwargs)
        started.append(proc.pid)
        os.kill(proc.pid, signal.SIGSTOP)  # frozen, a worker cannot end by itself: only a kill of its group ends it
        return proc

    monkeypatch.setattr(worker.subprocess, "Popen", recording)
    result = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "bundle"), "--key", str(tmp_path / "none.pem"),
                     "--cert", str(tmp_path / "none-cert.pem"))
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1 and "none.pem" in result.err
    assert len(started) == 2 and not (tmp_path / "bundle").exists()
    deadline = time.monotonic() + 60  # a hang guard: a kill is taken at once, whatever the load
    while not all(_gone(pid) and _group_gone(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert all(_gone(pid) and _group_gone(pid) for pid in started)


def _group_gone(pgid: int) -> bool:
    """Whether no process is left in the group (the note worker's holds its chart worker)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    in_group = [pid for pid in (int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit())
                if (stat := _stat(pid)) is not None and stat[2] == str(pgid)]
    return all(_gone(pid) for pid in in_group)


def test_the_note_and_chart_workers_leave_the_audits_readers_unimported() -> None:
    """Each worker is a fresh process, so what its modules import it pays at every build: the note's records are
    read from decision.json, so neither worker loads the audit's readers (pyarrow, jsonschema), and the note's
    worker not numpy either (the chart worker's matplotlib needs it)."""
    import subprocess
    import sys

    def imported(modules: str) -> set[str]:
        code = f"import sys, {modules}; print(' '.join(sorted(sys.modules)))"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parents[1])
        return {name.split(".")[0] for name in proc.stdout.split()}

    note = imported("generator.render.page.noteworker, generator.render.page.note")
    assert note & {"numpy", "pyarrow", "jsonschema"} == set()
    assert imported("generator.render.page.charts") & {"pyarrow", "jsonschema"} == set()
