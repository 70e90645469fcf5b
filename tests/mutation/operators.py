"""The mutation operators: one-line bugs a reviewer hunting for an edge would expect, found by walking the AST."""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

# A comparison's operator and the bug one keystroke away from it.
_SWAP = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
    ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is"),
}
_ARITH = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"),
          ast.FloorDiv: ("//", "/")}
_NAMES = {"ROUND_HALF_UP": "ROUND_HALF_EVEN", "ROUND_HALF_EVEN": "ROUND_HALF_UP", "min": "max", "max": "min",
          "all": "any", "any": "all"}
_CASE_METHODS = {"lower", "casefold", "upper", "strip"}
# An identity compared on a prefix, or a name compared in another case: the two survivors a reviewer fears most.
_DIGESTY = re.compile(r"sha|hash|digest|fingerprint|checksum|oxum", re.IGNORECASE)
_NAMEY = re.compile(r"name|model|revision|variant|gpu|id\b|ids\b|_id|file|code|lot|corpus|kind", re.IGNORECASE)
_TIMEY = re.compile(r"start|end|stamp|deadline|window|instant|begin|finish|_at\b|\bat\b|time|when|since|until",
                    re.IGNORECASE)


@dataclass(frozen=True)
class Mutant:
    """One edit of one module: replace source[start:end] (character offsets) by `new`."""

    module: str  # path relative to the repository, generator/...
    line: int
    operator: str
    old: str
    new: str
    start: int
    end: int
    function: str
    occurrence: int = 0  # the same edit in the same function: counted in source order

    @property
    def key(self) -> str:
        """A name that survives edits elsewhere in the module: function, operator, text, and a digest of the edit."""
        digest = hashlib.sha256(f"{self.function}\0{self.old}\0{self.new}\0{self.occurrence}".encode()).hexdigest()[:8]
        return f"{self.module}::{self.function}::{self.operator}::{digest}"

    def apply(self, source: str) -> str:
        return source[:self.start] + self.new + source[self.end:]


class _Offsets:
    def __init__(self, source: str) -> None:
        self.starts = [0]
        for line in source.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def at(self, line: int, col_bytes: int, source: str) -> int:
        # ast columns count UTF-8 bytes: convert within the line
        start = self.starts[line - 1]
        text = source[start:self.starts[line]]
        return start + len(text.encode()[:col_bytes].decode(errors="ignore"))


def _docstring_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
    return skip


def _functions(tree: ast.AST) -> dict[int, str]:
    """Each node's enclosing function or class, by node id."""
    owner: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            here = name
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                here = f"{name}.{child.name}" if name != "<module>" else child.name
            owner[id(child)] = here
            visit(child, here)

    visit(tree, "<module>")
    return owner


def _skipped(tree: ast.AST) -> set[int]:
    """Nodes not worth mutating: annotations, f-string pieces, logging of types, `__all__`, TYPE_CHECKING blocks."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, (ast.AnnAssign, ast.arg)) and node.annotation is not None:
            targets.append(node.annotation)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            targets.append(node.returns)
        if isinstance(node, ast.JoinedStr):
            targets.extend(v for v in node.values if isinstance(v, ast.FormattedValue) and v.format_spec)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            targets.append(node)
        if isinstance(node, ast.ClassDef):
            # a dataclass field's default is a shape, not a rule: the rules set every field they read
            targets.extend(s for s in node.body if isinstance(s, ast.AnnAssign))
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            # a decorator's arguments (`frozen=True`, a cache size) shape the record or the call, not a rule
            targets.extend(node.decorator_list)
        for target in targets:
            skip.update(id(n) for n in ast.walk(target))
    return skip


def mutants(module: str, source: str) -> Iterator[Mutant]:
    """Every mutant of one module, in source order, each with a key of its own."""
    seen: dict[tuple[str, str, str, str], int] = {}
    for mutant in sorted(_mutants(module, source), key=lambda m: (m.start, m.end, m.operator, m.new)):
        same = (mutant.function, mutant.operator, mutant.old, mutant.new)
        seen[same] = seen.get(same, -1) + 1
        yield replace(mutant, occurrence=seen[same])


def _mutants(module: str, source: str) -> Iterator[Mutant]:
    tree = ast.parse(source)
    offsets = _Offsets(source)
    owner = _functions(tree)
    skip = _skipped(tree) | _docstring_nodes(tree)

    def span(node: ast.AST) -> tuple[int, int]:
        return (offsets.at(node.lineno, node.col_offset, source),  # type: ignore[attr-defined]
                offsets.at(node.end_lineno, node.end_col_offset, source))  # type: ignore[attr-defined]

    def text(node: ast.AST) -> str:
        a, b = span(node)
        return source[a:b]

    def make(node: ast.AST, operator: str, a: int, b: int, new: str) -> Mutant:
        return Mutant(module, node.lineno, operator, source[a:b], new, a, b,  # type: ignore[attr-defined]
                      owner.get(id(node), "<module>"))

    def gap_token(left: ast.AST, right: ast.AST, token: str) -> tuple[int, int] | None:
        a, b = span(left)[1], span(right)[0]
        gap = source[a:b]
        # the operator in the gap between two operands, outside parentheses and comments
        pattern = r"\bnot\s+in\b|\bis\s+not\b" if " " in token else (
            r"\b" + token + r"\b" if token.isalpha() else re.escape(token) + r"(?![=<>])")
        for found in re.finditer(pattern, gap):
            if token in ("<", ">") and gap[found.start():found.start() + 2] in ("<=", ">="):
                continue
            if token == "in" and re.search(r"not\s+$", gap[:found.start()]):
                continue
            if token == "is" and re.match(r"is\s+not", gap[found.start():]):
                continue
            if token == "/" and gap[found.start():found.start() + 2] == "//":
                continue
            return a + found.start(), a + found.end()
        return None

    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                pair = _SWAP.get(type(op))
                where = gap_token(left, right, pair[0]) if pair else None
                if pair and where:
                    yield make(node, "compare", *where, pair[1])
                    both = text(left) + " " + text(right)
                    if isinstance(op, (ast.Eq, ast.NotEq)) and not isinstance(right, ast.Constant) \
                            and not isinstance(left, ast.Constant):
                        a, b = span(left)[0], span(right)[1]
                        gap = source[span(left)[1]:span(right)[0]]
                        if _DIGESTY.search(both):
                            yield make(node, "prefix", a, b,
                                       f"str({text(left)})[:8]{gap}str({text(right)})[:8]")
                        elif _NAMEY.search(both):
                            yield make(node, "case", a, b,
                                       f"str({text(left)}).casefold(){gap}str({text(right)}).casefold()")
                    if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) and _TIMEY.search(both) \
                            and len(node.ops) == 1:
                        # one second of slack on a time bracket
                        a, b = span(right)
                        slack = "+" if isinstance(op, (ast.Lt, ast.LtE)) else "-"
                        yield make(node, "slack", a, b, f"(({text(right)}) {slack} __import__('datetime')"
                                                         f".timedelta(seconds=1))")
                left = right
        elif isinstance(node, ast.BoolOp):
            token, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            for left, right in zip(node.values, node.values[1:], strict=False):
                where = gap_token(left, right, token)
                if where:
                    yield make(node, "boolean", *where, new)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            a, b = span(node)
            yield make(node, "not", a, b, f"({text(node.operand)})")
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            token, new = _ARITH[type(node.op)]
            where = gap_token(node.left, node.right, token)
            if where and not (isinstance(node.op, ast.Add) and _is_text(node)):
                yield make(node, "arithmetic", *where, new)
        elif isinstance(node, ast.AugAssign) and type(node.op) in (ast.Add, ast.Sub):
            a = span(node.target)[1]
            b = span(node.value)[0]
            gap = source[a:b]
            token = "+=" if isinstance(node.op, ast.Add) else "-="
            at = gap.find(token)
            if at >= 0:
                yield make(node, "arithmetic", a + at, a + at + 2, "-=" if token == "+=" else "+=")
        elif isinstance(node, ast.Constant) and type(node.value) is int and not isinstance(node.value, bool):
            a, b = span(node)
            yield make(node, "number", a, b, str(node.value + 1))
            if node.value > 1:
                yield make(node, "number", a, b, str(node.value - 1))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            a, b = span(node)
            yield make(node, "constant", a, b, str(not node.value))
        elif isinstance(node, ast.Name) and node.id in _NAMES and isinstance(node.ctx, ast.Load):
            a, b = span(node)
            yield make(node, "name", a, b, _NAMES[node.id])
        elif isinstance(node, ast.Attribute) and node.attr in _NAMES and node.attr.startswith("ROUND"):
            a, b = span(node)
            yield make(node, "name", b - len(node.attr), b, _NAMES[node.attr])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _CASE_METHODS and not node.args:
            a, b = span(node)
            yield make(node, "case", a, b, f"({text(node.func.value)})")


def _is_text(node: ast.BinOp) -> bool:
    return any(isinstance(side, (ast.JoinedStr,)) or (isinstance(side, ast.Constant) and isinstance(side.value, str))
               for side in (node.left, node.right))
