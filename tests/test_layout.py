"""The house rules the tree keeps: sides in folders the architecture names, imports in the directions docs/imports.md
allows, small modules and functions, a docstring per module, no private hooks into dependencies."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "generator"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
SIDES = ("core", "audit", "seal", "render", "bundle", "invoice", "gpu", "cli")
ARCHITECTURE = REPO / "docs" / "architecture.md"


def _architecture_rows() -> dict[str, str]:
    """The architecture table's rows by folder: docs/architecture.md's, or (before it exists) the README's."""
    if ARCHITECTURE.exists():
        section = ARCHITECTURE.read_text(encoding="utf-8")
    else:
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
        assert row is not None, f"the architecture table has no row for generator/{folder}/"
        assert f"`{module.stem}`" in row, f"the architecture table's row for generator/{folder}/ does not name " \
                                          f"`{module.stem}`"


def _allowed_imports() -> dict[str, tuple[set[str], set[str]]]:
    """docs/imports.md's table: per side, the sides it may import and the modules it never imports."""
    table = {}
    for line in (REPO / "docs" / "imports.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`[a-z_]+`", cells[0]):
            table[cells[0].strip("`")] = (set(re.findall(r"`([a-z_.]+)`", cells[1])),
                                          set(re.findall(r"`([a-z_.]+)`", cells[2])))
    return table


def _imported(source: str) -> set[str]:
    """Every generator module a source imports, at the top or inside a function (`from generator.x import y`
    gives both generator.x and generator.x.y, since y may be a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return {n for n in names if n == "generator" or n.startswith("generator.")}


def _forbidden_arrows(side: str, source: str, table: dict[str, tuple[set[str], set[str]]]) -> list[str]:
    """The imports of a module of `side` that the table does not allow."""
    allowed, never = table[side]
    bad = []
    for name in sorted(_imported(source)):
        parts = name.split(".")
        target = parts[1] if len(parts) > 1 and parts[1] in (*SIDES, "__main__") else None  # else the root
        if target not in (None, side) and target not in allowed:
            bad.append(f"{side} -> {name}")
        elif any(name == f"generator.{n}" or name.startswith(f"generator.{n}.") for n in never):
            bad.append(f"{side} -> {name} (never)")
    return bad


def test_the_import_table_names_every_side() -> None:
    assert set(_allowed_imports()) == {*SIDES, "__main__"}


def test_every_import_follows_the_table_of_directions() -> None:
    table = _allowed_imports()
    bad = []
    for module in MODULES:
        folder = module.relative_to(PACKAGE).parts
        side = folder[0] if len(folder) > 1 else module.stem
        if side in table:  # generator/__init__.py imports nothing of the package
            bad += [f"{module.relative_to(REPO)}: {arrow}"
                    for arrow in _forbidden_arrows(side, module.read_text(encoding="utf-8"), table)]
    assert bad == [], "arrows docs/imports.md does not allow"


def test_the_import_guard_finds_planted_arrows() -> None:
    table = _allowed_imports()
    planted = ("from generator.bundle.verify.verify import verify_bundle\n"
               "def f():\n    from generator.audit.validate import validate\n")
    found = _forbidden_arrows("render", planted, table)
    assert "render -> generator.audit.validate.validate (never)" in found
    assert "render -> generator.bundle.verify.verify" in found
    assert _forbidden_arrows("core", "import generator.audit.load.findings\n", table) != []
    assert _forbidden_arrows("cli", planted, table) == []


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


WALL_CLOCKS = {"time", "monotonic", "perf_counter", "time_ns", "monotonic_ns", "perf_counter_ns"}
TESTS = REPO / "tests"


def _wall_clock_differences(source: str) -> list[int]:
    """Lines that subtract a wall-clock reading (`time.monotonic() - start`, `end - time.perf_counter()`, or a
    name bound to one): the start of a duration that a busy machine stretches. A deadline (`now + 60`) that
    only guards against a hang is no duration."""
    tree = ast.parse(source)

    def reads_clock(node: ast.AST) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
                and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) in WALL_CLOCKS
                and (not isinstance(node.func, ast.Attribute) or isinstance(node.func.value, ast.Name)
                     and node.func.value.id == "time"))

    readings = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and reads_clock(node.value)
                for target in node.targets if isinstance(target, ast.Name)}

    def is_reading(node: ast.AST) -> bool:
        return reads_clock(node) or isinstance(node, ast.Name) and node.id in readings

    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)
            and (is_reading(node.left) or is_reading(node.right))]


# Tests prove behaviour, not speed: a bound on time is a bound on work (processor time, a count), and speed is
# measured in tests/benchmarks/. fuzz_long.py is a command that runs for the minutes it is given, and
# tests/mutation/ the mutation command (it reports how long the mutants' tests took): neither is a test.
TEST_SOURCES = sorted(p for p in TESTS.rglob("*.py") if "benchmarks" not in p.parts and p.name != "fuzz_long.py"
                      and "mutation" not in p.parts and "__pycache__" not in p.parts)


@pytest.mark.parametrize("source", TEST_SOURCES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_test_measures_the_wall_clock(source: Path) -> None:
    assert _wall_clock_differences(source.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("planted", [
    "start = time.monotonic()\nrun()\nassert time.monotonic() - start < 2\n",
    "t0 = time.perf_counter()\nrun()\nelapsed = time.perf_counter() - t0\nassert elapsed < 30\n",
    "from time import perf_counter\nstart = perf_counter()\nrun()\nassert perf_counter() - start < 5\n",
])
def test_the_wall_clock_guard_finds_a_planted_duration(planted: str) -> None:
    assert _wall_clock_differences(planted) != []
    assert _wall_clock_differences("deadline = time.monotonic() + 60\nwhile time.monotonic() < deadline: pass\n"
                                   "start = time.process_time()\nassert time.process_time() - start < 15\n") == []
