"""JSON values as types: the scalars of a cell or an open map, and any JSON value (a recursive alias)."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["JsonDocument", "JsonObject", "JsonScalar", "JsonValue"]

# One cell of a CSV row, one setting of an open map (an experiment's `fixed`), one leaf of a JSON document.
JsonScalar: TypeAlias = str | int | float | bool | None
# Any JSON value: what a parser gives before a schema has said which (the schema check's edge).
JsonValue: TypeAlias = "JsonScalar | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"
# A JSON document made by gpu-audit itself (decision.json as a dict) that its readers walk by key without
# narrowing each level (render's view, the tests). Its typed form is the record it was made from.
JsonDocument: TypeAlias = "dict[str, Any]"
