"""WeasyPrint through generator.render.page.weasy: a plain import, its version, a clear error, and only public APIs."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator.core.errors import EnvironmentProblemError
from generator.render.page import weasy

REPO = Path(__file__).resolve().parents[1]
# What the note once borrowed from its dependencies' insides (issue 18): ctypes' library lookup replaced for
# the process, WeasyPrint's user-agent sheet method and raster image class, CPython's import lock.
PRIVATE = re.compile(r"_ua_stylesheets|find_library|_imp\b|RasterImage")  # the issue's own grep


def test_no_module_uses_the_private_apis_it_once_did() -> None:
    hits = [f"{path.relative_to(REPO)}:{number}: {line.strip()}"
            for path in sorted((REPO / "generator").rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if PRIVATE.search(line)]
    assert hits == []


def test_weasyprint_is_imported_plainly_and_only_when_asked() -> None:
    code = ("import ctypes.util, sys\n"
            "original = ctypes.util.find_library\n"
            "from generator.render.page import note, weasy\n"
            "assert 'weasyprint' not in sys.modules, 'imported before it was asked for'\n"
            "w = weasy.load_weasyprint()\n"
            "assert w is sys.modules['weasyprint'] and ctypes.util.find_library is original\n"
            "assert w.HTML(string='<p>ok</p>').write_pdf().startswith(b'%PDF')\n")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=120)


def test_the_version_is_the_installed_distributions() -> None:
    version = weasy.weasyprint_version()
    assert version == importlib.metadata.version("weasyprint") == weasy.load_weasyprint().__version__
    assert re.fullmatch(r"\d+(\.\d+)*\S*", version)


def test_a_missing_weasyprint_is_a_clear_error() -> None:
    code = ("import sys\n"
            "sys.modules['weasyprint'] = None  # what Python does for a module that cannot be imported\n"
            "from generator.core.errors import EnvironmentProblemError\n"
            "from generator.render.page.weasy import load_weasyprint\n"
            "try:\n"
            "    load_weasyprint()\n"
            "except EnvironmentProblemError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60, capture_output=True,
                         text=True).stdout
    assert out.startswith("WeasyPrint could not be imported") and "pip install" in out


def test_missing_system_libraries_are_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pango(name: str) -> None:
        raise OSError("cannot load library 'libpango-1.0-0': libpango-1.0-0: cannot open shared object file")

    monkeypatch.setattr(importlib, "import_module", no_pango)  # the OSError WeasyPrint's lookup raises
    with pytest.raises(EnvironmentProblemError, match=r"system libraries \(cannot load library 'libpango.*Pango"):
        weasy.load_weasyprint()
