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


def _import_rows(columns: int) -> list[list[str]]:
    """docs/imports.md's table rows of that many cells, each cell stripped."""
    rows = []
    for line in (REPO / "docs" / "imports.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == columns:
            rows.append(cells)
    return rows


def _allowed_imports() -> dict[str, tuple[set[str], set[str]]]:
    """docs/imports.md's table: per side, the sides it may import and the modules it never imports."""
    return {cells[0].strip("`"): (set(re.findall(r"`([a-z_.]+)`", cells[1])),
                                  set(re.findall(r"`([a-z_.]+)`", cells[2])))
            for cells in _import_rows(3) if re.fullmatch(r"`[a-z_]+`", cells[0])}


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


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Each module's imports of the given modules, at the top or inside a function, each resolved to the module
    or package it names (`from generator.x import y` is generator.x.y where that is a module, else generator.x)."""
    graph = {}
    for name, source in sources.items():
        targets = set()
        for imported in _imported(source):
            while imported and imported not in sources:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each strongly connected set of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members: list[str] = []
            while not members or members[-1] != node:
                members.append(stack.pop())
            if len(members) > 1:
                found.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_circle() -> None:
    graph = _import_graph({_module_name(m): m.read_text(encoding="utf-8") for m in MODULES})
    assert _cycles(graph) == [], "modules that import one another, directly or round a circle"


def test_the_circle_guard_finds_a_planted_circle() -> None:
    planted = {"generator.a": "from generator.b import x\n", "generator.b": "import generator.c\n",
               "generator.c": "def f():\n    from generator import a\n", "generator.d": "from generator.a import y\n"}
    assert _cycles(_import_graph(planted)) == [["generator.a", "generator.b", "generator.c"]]
    assert _cycles(_import_graph({**planted, "generator.c": "import os\n"})) == []


MOST_MODULES = 12  # in one folder of the package, its __init__ aside: more, and the folder wants sub-packages


def _crowded(modules: list[Path]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for module in modules:
        if module.name != "__init__.py":
            folder = module.parent.relative_to(REPO).as_posix()
            counts[folder] = counts.get(folder, 0) + 1
    return {folder: n for folder, n in sorted(counts.items()) if n > MOST_MODULES}


def test_no_folder_of_the_package_is_crowded() -> None:
    assert _crowded(MODULES) == {}


def test_the_crowding_guard_counts_modules_not_packages() -> None:
    thirteen = [PACKAGE / "x" / f"m{i}.py" for i in range(13)]
    assert _crowded([*thirteen, PACKAGE / "x" / "__init__.py"]) == {"generator/x": 13}
    assert _crowded([*thirteen[:12], PACKAGE / "x" / "__init__.py", PACKAGE / "x" / "y" / "m.py"]) == {}


def _stages() -> dict[str, set[str]]:
    """docs/imports.md's table of the audit's stages: per stage, the stages it may import besides itself."""
    return {cells[0].strip("`"): set(re.findall(r"`(audit\.[a-z_]+)`", cells[1]))
            for cells in _import_rows(2) if re.fullmatch(r"`audit\.[a-z_]+`", cells[0])}


def _arrows_back_up(module: str, source: str, stages: dict[str, set[str]]) -> list[str]:
    """The imports of an audit module that reach a stage its own stage may not import."""
    def stage(name: str) -> str | None:
        parts = name.split(".")
        return f"audit.{parts[2]}" if len(parts) > 2 and parts[1] == "audit" else None

    own = stage(module)
    if own is None:
        return []
    return [f"{own} -> {name}" for name in sorted(_imported(source))
            if stage(name) not in (None, own) and stage(name) not in stages[own]]


def test_the_audit_stages_flow_one_way() -> None:
    stages = _stages()
    audit = [m for m in MODULES if PACKAGE / "audit" in m.parents and m != PACKAGE / "audit" / "__init__.py"]
    named = {f"audit.{m.relative_to(PACKAGE / 'audit').parts[0].removesuffix('.py')}" for m in audit}
    assert named == set(stages), "docs/imports.md's stages are not the audit's folders and modules"
    bad = [f"{m.relative_to(REPO)}: {arrow}" for m in audit
           for arrow in _arrows_back_up(_module_name(m), m.read_text(encoding="utf-8"), stages)]
    assert bad == [], "arrows back up the audit's stages (docs/imports.md)"


def test_the_stage_guard_finds_an_arrow_back_up() -> None:
    stages = _stages()
    planted = "def f():\n    from generator.audit.recompute.decision import model\n"
    assert _arrows_back_up("generator.audit.validate.rules", planted, stages) == [
        "audit.validate -> generator.audit.recompute.decision",
        "audit.validate -> generator.audit.recompute.decision.model"]
    assert _arrows_back_up("generator.audit.report", planted, stages) == []


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
