"""One source for the set-up: `.ci/run` runs the README's Debian line and test command word for word, and that
line names every Debian package the note and the tests need."""

from __future__ import annotations

import re
import subprocess

from conftest import REPO

from generator.render.view.i18n import FONT_PACKAGES

CI = REPO / ".ci" / "run"
# The Debian tools the tests run as a reader would, and the package that brings each.
TOOL_PACKAGES = {"pdfsig": "poppler-utils", "pdfdetach": "poppler-utils", "pdftotext": "poppler-utils",
                 "pdffonts": "poppler-utils", "pdfimages": "poppler-utils", "pdftoppm": "poppler-utils",
                 "openssl": "openssl", "jq": "jq", "unzip": "unzip", "bsdtar": "libarchive-tools",
                 "zip": "zip", "7zz": "7zip",
                 "fc-list": "fontconfig"}
# What the note needs beyond its fonts: HarfBuzz's subsetter (WeasyPrint's fast font subsetting).
NOTE_PACKAGES = {"fontconfig", "libharfbuzz-subset0", *FONT_PACKAGES.values()}


def _ci_block(name: str) -> str:
    """The block `.ci/run` extracts for NAME, by its own code."""
    script = CI.read_text(encoding="utf-8")
    function = script[script.index("readme_block() {"):]
    function = function[:function.index("\n}\n") + 3]
    return subprocess.run(["bash", "-c", f"{function}readme_block {name}"], cwd=REPO, capture_output=True,
                          text=True, check=True).stdout.strip()


def _debian_packages() -> set[str]:
    line = _ci_block("debian")
    install = line[line.index("apt-get install -y ") + len("apt-get install -y "):]
    return set(install.split())


def test_ci_runs_the_readme_lines_and_installs_nothing_of_its_own() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in ("debian", "tests"):
        block = _ci_block(name)
        assert block and f"<!-- ci: {name} -->\n```console\n{block}\n```" in readme
    commands = [line for line in CI.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in commands if re.search(r"\b(apt-get|apt|pip|pytest|ruff|mypy)\b", line)]
    assert "python -m pytest" in _ci_block("tests") and "pip install '.[test]'" in _ci_block("tests")


def test_the_readme_names_every_package_the_note_and_the_tests_need() -> None:
    used = set()
    for source in (REPO / "tests").rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        used |= {tool for tool in TOOL_PACKAGES if re.search(rf"[\"']{re.escape(tool)}[\"']", text)}
    assert {"pdfsig", "openssl", "jq"} <= used  # the scan finds what the tests run
    needed = NOTE_PACKAGES | {TOOL_PACKAGES[tool] for tool in used}
    assert needed - _debian_packages() == set()


def test_the_readme_names_only_packages_something_needs() -> None:
    # a package nobody needs would be an install step that no test keeps honest
    assert _debian_packages() - NOTE_PACKAGES - set(TOOL_PACKAGES.values()) == set()

