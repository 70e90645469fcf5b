"""Shared fixtures: a private copy of the synthetic example campaign, the example's keys, signed bundle and
decision made once for the whole run, and CLI helpers."""

from __future__ import annotations

import compileall
import csv
import fcntl
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.cli.main import main

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "inputs" / "example"
GRID = "resultats-bruts.csv"
# `python -m bagit`: the bagit.py that the test extra installs, whether or not the venv is activated (PATH)
BAGIT = [sys.executable, "-m", "bagit"]


def needs_tools(*names: str) -> pytest.MarkDecorator:
    """Skip a test whose Debian tools are not installed, except in CI (CI=true), which installs every one the
    README's set-up names: there a missing tool fails the test instead of hiding it."""
    missing = [name for name in names if shutil.which(name) is None]
    skip = bool(missing) and os.environ.get("CI") != "true"
    return pytest.mark.skipif(skip, reason=f"{', '.join(missing)} not installed")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Byte-compile the package once, as `pip install` does for an installed one: where PYTHONDONTWRITEBYTECODE
    is set (as on CI's machines) every `python -m generator` the tests start, and every worker a build starts,
    would otherwise compile each module it imports from source again. The controller does it before any test
    process starts."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        compileall.compile_dir(REPO / "generator", quiet=1)


class NotesHere:
    """The note's worker, standing in for the real one: it never answers, so the build renders the note itself,
    in this test process, which imports WeasyPrint and matplotlib once instead of a worker doing so at every
    build. The real worker is tested where it is what a test is about (`@pytest.mark.note_worker`, and every
    build started as a process of its own); test_noteworker checks that both render the same bytes."""

    def ask(self, *request: object) -> None:
        pass

    def files(self) -> None:
        return None

    def close(self) -> None:
        pass


class ChartsHere(NotesHere):
    """`render`'s chart worker, standing in for the real one as NotesHere does for the note's: it never answers,
    so the charts are drawn in this process (test_render checks that both draw the same bytes)."""

    running = False

    def __init__(self, module: str) -> None:
        pass

    def send(self, request: object) -> None:
        pass

    def answer(self) -> None:
        return None

    def __enter__(self) -> ChartsHere:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture(scope="session", autouse=True)
def _workers_here() -> Iterator[None]:
    """In-process builds and renderings, the bundles built once for the run included, render the note and draw its
    charts here (NotesHere, ChartsHere)."""
    from generator.bundle.build import build
    from generator.render.page import note

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build, "NoteWorker", NotesHere)
        patch.setattr(note, "JsonWorker", ChartsHere)
        yield


@pytest.fixture(autouse=True)
def _real_workers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("note_worker") is not None:
        real_workers(monkeypatch)


def real_workers(patch: pytest.MonkeyPatch) -> None:
    """The real note and chart workers for what `patch` covers: where they are what a test is about."""
    from generator.bundle.build import build
    from generator.core.system.worker import JsonWorker
    from generator.render.page import note
    from generator.render.page.noteworker import NoteWorker

    patch.setattr(build, "NoteWorker", NoteWorker)
    patch.setattr(note, "JsonWorker", JsonWorker)


@pytest.fixture
def note_parsed_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """`verify` parses the note in this process instead of its bounded child (`noteparse.ask_parser`): for tests of
    what is made of a verified bundle (an invoice's check), not of the parser's limits, which the attack, hostile
    and memory tests check through the real child."""
    from generator.bundle.pdf import noteparse

    monkeypatch.setattr(noteparse, "ask_parser", lambda request, limits: noteparse._answer(request))


@pytest.fixture
def invoice_read_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The invoice is read in this process instead of its bounded child (`read.ask_reader`): for tests of what is
    made of an invoice read, not of the reader's limits, which tests/test_attacks_invoice.py checks."""
    from generator.invoice import read

    monkeypatch.setattr(read, "ask_reader", lambda path: read.reply(lambda: {"path": str(path.resolve())}))


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run the CLI in-process and capture its exit status and output."""

    def _run(*argv: str) -> CliResult:
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return _run


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    """A writable copy of inputs/example."""
    target = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, target)
    return target


def read_grid(folder: Path) -> list[list[str]]:
    with (folder / GRID).open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def write_grid(folder: Path, rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    (folder / GRID).write_text(buf.getvalue(), encoding="utf-8")


def set_cell(folder: Path, data_row: int, column: str, value: str) -> None:
    """Set one cell of the grid; data_row 1 is the first row after the header (file line 2)."""
    rows = read_grid(folder)
    rows[data_row][rows[0].index(column)] = value
    write_grid(folder, rows)


def _made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], object]) -> Path:
    """A folder that `make` fills once for the whole run, whichever test process asks first (pytest-xdist's
    workers share the parent of their temporary folders): one build of the example serves every test file.
    Tests read it; a test that changes a bundle changes its own copy."""
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    target = root / f"once-{name}"
    with (root / f"once-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not target.exists():
            work = root / f"once-{name}.tmp"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            make(work)
            work.rename(target)
    return target


@pytest.fixture(scope="session")
def example_keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """`gpu-audit keygen DIR --name "Example Org"`: the signer's key and certificate."""
    from generator.bundle.sign import signing

    folder = _made_once(tmp_path_factory, "example-keys", lambda work: signing.keygen(work, "Example Org"))
    return folder / signing.KEY_NAME, folder / signing.CERT_NAME


@pytest.fixture(scope="session")
def example_bundle(tmp_path_factory: pytest.TempPathFactory, example_keys: tuple[Path, Path]) -> Path:
    """`gpu-audit build inputs/example -o BUNDLE --key ... --cert ...`: the genuine signed bundle (read only)."""
    key, cert = example_keys

    def build(work: Path) -> None:
        code = main(["build", str(EXAMPLE), "-o", str(work / "bundle"), "--key", str(key), "--cert", str(cert),
                     "--quiet"])
        assert code == 0

    return _made_once(tmp_path_factory, "example-bundle", build) / "bundle"


# The languages the note is written in; the example's protocol names none, so its note is in English
NOTE_LANGUAGES = ("en", "de", "fr", "zh")


@pytest.fixture(scope="session")
def example_notes(tmp_path_factory: pytest.TempPathFactory, example_keys: tuple[Path, Path],
                  example_bundle: Path) -> dict[str, Path]:
    """`gpu-audit build inputs/example --lang L`, signed, for each language of the note, built once for the whole
    run (read only): the bundle folder by language, the English one example_bundle."""
    key, cert = example_keys

    def build(work: Path) -> None:
        for lang in NOTE_LANGUAGES[1:]:
            code = main(["build", str(EXAMPLE), "-o", str(work / lang), "--key", str(key), "--cert", str(cert),
                         "--lang", lang, "--quiet"])
            assert code == 0, lang

    folder = _made_once(tmp_path_factory, "example-notes", build)
    return {"en": example_bundle, **{lang: folder / lang for lang in NOTE_LANGUAGES[1:]}}


@pytest.fixture(scope="session")
def example_decision(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`gpu-audit check inputs/example --out decision.json` (read only)."""
    def check(work: Path) -> None:
        assert main(["check", str(EXAMPLE), "--out", str(work / "decision.json")]) == 0

    return _made_once(tmp_path_factory, "example-decision", check) / "decision.json"


def gpu_audit(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m generator ARGS` in a process of its own, as a user runs it (its output as text)."""
    return subprocess.run([sys.executable, "-m", "generator", *args], capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.fixture(scope="session")
def signed(example_bundle: Path, example_keys: tuple[Path, Path]) -> tuple[Path, Path]:
    """A signed bundle of inputs/example (no article IDs registered) and its signer's certificate."""
    return example_bundle, example_keys[1]
