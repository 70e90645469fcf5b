"""JSON documents: strict parsing (duplicate keys, NaN, depth) and schema validation as findings."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.readers.csvtable import decode_utf8, read_bytes
from generator.audit.load.schemacheck import validate_document
from generator.audit.load.textsafety import TEXT_CODES, json_findings
from generator.core.jsonvalue import JsonObject, JsonValue
from generator.core.limits import Limits, option, resolve

MAX_INT_DIGITS = 300  # a float holds about 1.8e308: a longer integer cannot be computed with
# The keys whose strings are free text, read only by people, per input schema: an invisible character there is
# a warning (the note shows it); elsewhere (IDs, names, revisions, classes, paths) an error. Other documents
# (manifests, decisions) are gpu-audit's own output and are not scanned.
FREE_TEXT_KEYS = {
    "protocol": frozenset({"title", "question", "notes", "description", "source", "padding", "truncation", "inputs",
                           "recompilation", "input_order", "setting"}),
    "measurement": frozenset({"unavailable_reason", "error", "notes", "description", "input_order"}),
}


class _BadNumber(ValueError):
    pass


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadNumber(f"{text[:20]} is beyond the range of a number (about 1.8e308)")
    return value


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _BadNumber(f"{text[:20]}... has {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, JsonValue]]) -> JsonObject:
    out: JsonObject = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _depth(value: JsonValue, limit: int) -> int:
    """Nesting depth, iteratively (a hostile file must not exhaust the Python stack)."""
    deepest = 0
    stack: list[tuple[JsonValue, int]] = [(value, 1)]
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


def _not_text(s: str) -> bool:
    if s.isascii():
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _lone_surrogate(value: JsonValue) -> str | None:
    """The JSON path of the first string (or key) holding a lone surrogate escape such as \\ud800, else None.

    json accepts the escape, but the result is not Unicode text: it could not be printed nor written out.
    """
    stack: list[tuple[JsonValue, str]] = [(value, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if _not_text(node):
                return path or "/"
        elif isinstance(node, dict):
            for k, v in node.items():
                if _not_text(k):
                    return path + "/" + k.encode("utf-8", "backslashreplace").decode("ascii", "replace")
                stack.append((v, f"{path}/{k}"))
        elif isinstance(node, list):
            stack.extend((v, f"{path}/{i}") for i, v in enumerate(node))
    return None


@dataclass
class Document:
    """A parsed JSON file: the data (None when unparseable) and its findings."""

    file: str
    data: JsonValue = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        # A hidden character in a string is an error of the input, but the document can still be read.
        return self.data is not None and not any(f.is_error and f.code not in TEXT_CODES for f in self.findings)


def loads_strict(text: str | bytes) -> JsonValue:
    """json.loads refusing duplicate keys, NaN, Infinity and numbers beyond a float's range.

    Raises _DuplicateKey, _BadNumber, json.JSONDecodeError, RecursionError or ValueError.
    """
    data: JsonValue = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant,
                                 parse_float=_parse_float, parse_int=_parse_int)
    return data


def parse_document(text: str, display: str, schema_name: str, limits: Limits | None = None) -> Document:
    """Parse JSON text strictly, then validate it against a packaged schema (depth: `limits.max_json_depth`)."""
    doc = Document(file=display)
    max_depth = resolve(limits).max_json_depth
    depth_rule = f"nesting depth <= {max_depth} ({option('max_json_depth')})"
    depth_fix = f"flatten the document; if it is genuine, raise the limit with {option('max_json_depth')} N"

    def bad(code: str, message: str, line: int | None, rule: str, fix: str) -> Document:
        doc.findings.append(make_finding(code, Severity.ERROR, display, message, line=line, rule=rule, fix=fix))
        return doc

    try:
        data = loads_strict(text)
    except _DuplicateKey as exc:
        return bad("duplicate-key", f"key {str(exc.args[0])[:80]!r} appears twice in one object", None,
                   "JSON objects have unique keys", "keep one occurrence of the key")
    except _BadNumber as exc:
        return bad("number-too-large", f"JSON number {exc}", None, "numbers within the range of a 64-bit float",
                   "check the value")
    except json.JSONDecodeError as exc:
        return bad("malformed-json", f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", exc.lineno,
                   "JSON (RFC 8259)", "fix the syntax at that place, or regenerate the file")
    except RecursionError:
        return bad("too-deep", f"JSON nested deeper than {max_depth} levels (or than the parser can follow)", None,
                   depth_rule, depth_fix)
    except ValueError as exc:
        return bad("malformed-json", f"malformed JSON: {exc}", None, "JSON (RFC 8259)",
                   "write numbers as finite decimals; NaN and Infinity are not JSON")
    if _depth(data, max_depth) > max_depth:
        return bad("too-deep", f"JSON nested deeper than {max_depth} levels", None, depth_rule, depth_fix)
    where = _lone_surrogate(data)
    if where is not None:
        return bad("invalid-unicode", f"the string at {where[:120]} holds a lone surrogate escape (\\ud800-\\udfff "
                   "without its pair): not Unicode text", None, "JSON text is Unicode (RFC 8259 section 8.2)",
                   "write the character itself, or a valid surrogate pair")
    doc.data = data
    doc.findings.extend(validate_document(schema_name, data, file=display))
    if schema_name in FREE_TEXT_KEYS:
        doc.findings.extend(json_findings(data, display, FREE_TEXT_KEYS[schema_name]))
    return doc


def read_document(path: Path, display: str, schema_name: str, limits: Limits | None = None) -> Document:
    """Read, parse and validate one JSON input file (the active limits unless `limits` is given)."""
    text, problem = decode_utf8(read_bytes(path, display, limits), display)
    if text is None:
        return Document(file=display, findings=[problem])  # type: ignore[list-item]
    return parse_document(text, display, schema_name, limits)
