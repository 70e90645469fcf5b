"""Importing WeasyPrint through generator.render.weasy: the same module, without ctypes spawning gcc and ld."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _import_with_recording_compilers(tmp_path: Path, code: str) -> list[str]:
    """Run `code` in a fresh interpreter whose gcc, cc and ld only record that they were called."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir(exist_ok=True)
    log.write_text("")
    for tool in ("gcc", "cc", "ld"):
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{log}"\nexit 1\n')
        script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    return log.read_text().splitlines()


@pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/sbin/ldconfig").exists(),
                    reason="the lookup it avoids is the Linux one")
def test_weasyprint_loads_without_spawning_compilers(tmp_path: Path) -> None:
    plain = _import_with_recording_compilers(tmp_path, "import weasyprint")
    assert any(call.startswith("gcc ") for call in plain)  # what the plain import costs: the test can fail
    fast = _import_with_recording_compilers(tmp_path, (
        "import ctypes.util\n"
        "original = ctypes.util.find_library\n"
        "from generator.render.weasy import load_weasyprint\n"
        "w = load_weasyprint()\n"
        "assert ctypes.util.find_library is original, 'find_library was not given back'\n"
        "assert w.HTML(string='<p>ok</p>').write_pdf().startswith(b'%PDF')\n"))
    assert fast == []


@pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/sbin/ldconfig").exists(),
                    reason="the lookup it avoids is the Linux one")
def test_the_cache_lookup_answers_as_ctypes_does_for_weasyprints_library_names() -> None:
    import ctypes.util

    from generator.render.weasy import _ldconfig_lookup

    names = ["libgobject-2.0-0", "gobject-2.0-0", "gobject-2.0", "libpango-1.0-0", "pango-1.0", "libharfbuzz-0",
             "harfbuzz", "harfbuzz-subset", "harfbuzz-vector", "libfontconfig-1", "fontconfig", "pangoft2-1.0",
             "c", "m"]
    lookup = _ldconfig_lookup()
    answers = {name: lookup(name) for name in names}
    assert answers == {name: ctypes.util.find_library(name) for name in names}
    assert answers["pango-1.0"] and answers["harfbuzz"] and answers["c"]  # found, not only missed alike
