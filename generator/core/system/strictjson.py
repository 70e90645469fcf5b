"""Strict JSON for `verify`: duplicate keys, NaN, numbers beyond a float and deep nesting are refused.

The campaign readers (generator.audit.load.readers.jsondoc) apply the same rules and then a JSON Schema; `verify` needs
only the rules, and must not import jsonschema or pyarrow (it runs on a finance reader's machine, quickly).
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_INT_DIGITS = 300


class JsonRefused(ValueError):
    """Why a JSON text was refused, in words."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonRefused(f"key {key[:80]!r} appears twice in one object")
        out[key] = value
    return out


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonRefused(f"the number {text[:20]} is beyond the range of a 64-bit float")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise JsonRefused(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _constant(name: str) -> Any:
    raise JsonRefused(f"{name} is not valid JSON")


def _depth_over(value: Any, limit: int) -> bool:
    """Whether the nesting is deeper than `limit`, iteratively (a hostile file must not exhaust the stack)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return False


def loads(raw: bytes, max_depth: int) -> Any:
    """Parse UTF-8 JSON strictly; raises JsonRefused with the reason (never another exception)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonRefused(f"not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float,
                          parse_int=_int)
    except json.JSONDecodeError as exc:
        raise JsonRefused(f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise JsonRefused(f"nested deeper than {max_depth} levels (--max-json-depth)") from None
    except JsonRefused:
        raise
    except ValueError as exc:  # e.g. an integer too long for int() under the interpreter's digit limit
        raise JsonRefused(f"malformed JSON: {exc}") from None
    if _depth_over(data, max_depth):
        raise JsonRefused(f"nested deeper than {max_depth} levels (--max-json-depth)")
    return data
