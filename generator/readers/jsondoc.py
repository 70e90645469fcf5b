"""JSON documents: strict parsing (duplicate keys, NaN, depth) and schema validation as findings."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.findings import Finding, Severity
from generator.readers.csvtable import decode_utf8, read_bytes
from generator.schemacheck import validate_document

MAX_DEPTH = 64


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _depth(value: Any, limit: int) -> int:
    """Nesting depth, iteratively (a hostile file must not exhaust the Python stack)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        if isinstance(node, dict):
            stack.extend((v, d + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, d + 1) for v in node)
    return deepest


@dataclass
class Document:
    """A parsed JSON file: the data (None when unparseable) and its findings."""

    file: str
    data: Any = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.data is not None and not any(f.is_error for f in self.findings)


def parse_document(text: str, display: str, schema_name: str) -> Document:
    """Parse JSON text strictly, then validate it against a packaged schema."""
    doc = Document(file=display)

    def bad(code: str, message: str, line: int | None, rule: str, fix: str) -> Document:
        doc.findings.append(Finding(code=code, severity=Severity.ERROR, file=display, line=line,
                                    rule=rule, fix=fix, message=message))
        return doc

    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except _DuplicateKey as exc:
        return bad("duplicate-key", f"key {exc.args[0]!r} appears twice in one object", None,
                   "JSON objects have unique keys", "keep one occurrence of the key")
    except json.JSONDecodeError as exc:
        return bad("malformed-json", f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", exc.lineno,
                   "JSON (RFC 8259)", "fix the syntax at that place, or regenerate the file")
    except RecursionError:
        return bad("too-deep", f"JSON nested deeper than {MAX_DEPTH} levels", None,
                   f"nesting depth <= {MAX_DEPTH}", "flatten the document")
    except ValueError as exc:
        return bad("malformed-json", f"malformed JSON: {exc}", None, "JSON (RFC 8259)",
                   "write numbers as finite decimals; NaN and Infinity are not JSON")
    if _depth(data, MAX_DEPTH) > MAX_DEPTH:
        return bad("too-deep", f"JSON nested deeper than {MAX_DEPTH} levels", None,
                   f"nesting depth <= {MAX_DEPTH}", "flatten the document")
    doc.data = data
    doc.findings.extend(validate_document(schema_name, data, file=display))
    return doc


def read_document(path: Path, display: str, schema_name: str) -> Document:
    """Read, parse and validate one JSON input file."""
    text, problem = decode_utf8(read_bytes(path, display), display)
    if text is None:
        return Document(file=display, findings=[problem])  # type: ignore[list-item]
    return parse_document(text, display, schema_name)
