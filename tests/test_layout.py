"""The house rules the tree keeps: sides in folders the README names, small modules and functions, a docstring
per module, no private hooks into dependencies."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "generator"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
SIDES = ("core", "audit", "render", "bundle", "gpu", "cli")


def _architecture_rows() -> dict[str, str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Architecture\n"):readme.index("## Limits and hostile input")]
    rows = {}
    for line in section.splitlines():
        found = re.match(r"\| `generator/([a-z/]+)/` \|(.*)", line)
        if found:
            rows[found.group(1)] = found.group(2)
    return rows


def test_the_package_has_only_its_sides_at_the_top() -> None:
    top = {p.name for p in PACKAGE.iterdir() if p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists())}
    assert top == {"__init__.py", "__main__.py", *SIDES}


def test_the_readme_architecture_names_every_module_in_its_folder() -> None:
    rows = _architecture_rows()
    assert set(rows) >= set(SIDES)
    for module in MODULES:
        folder = module.parent.relative_to(PACKAGE).as_posix()
        if module.name in ("__init__.py", "__main__.py") or folder == ".":
            continue
        row = rows.get(folder)
        assert row is not None, f"README's architecture table has no row for generator/{folder}/"
        assert f"`{module.stem}`" in row, f"README's row for generator/{folder}/ does not name `{module.stem}`"


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_each_module_is_small_and_says_in_one_line_what_it_owns(module: Path) -> None:
    source = module.read_text(encoding="utf-8")
    tree = ast.parse(source)
    doc = ast.get_docstring(tree)
    assert doc, "no module docstring"
    assert len(source.splitlines()) <= 400
    long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)" for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > 60]
    assert long == []


def test_no_private_hook_into_a_dependency() -> None:
    private = re.compile(r"_ua_stylesheets|find_library|\b_imp\b|RasterImage")
    hits = [f"{m.relative_to(REPO)}:{n}" for m in MODULES
            for n, line in enumerate(m.read_text(encoding="utf-8").splitlines(), 1) if private.search(line)]
    assert hits == []
