"""Typed reads from schema-valid JSON: each value checked against the type its field declares."""

from __future__ import annotations

from generator.core.jsonvalue import JsonObject, JsonScalar, JsonValue

__all__ = ["as_int", "as_number", "as_object", "as_objects", "as_scalar_map", "as_str", "as_strs", "opt_bool",
           "opt_int", "opt_number", "opt_str"]


def _wrong(value: JsonValue, kind: str) -> TypeError:
    return TypeError(f"expected {kind}, found {type(value).__name__}: the data was not schema-valid")


def as_object(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        raise _wrong(value, "an object")
    return value


def as_objects(value: JsonValue) -> list[JsonObject]:
    if not isinstance(value, list):
        raise _wrong(value, "an array")
    return [as_object(v) for v in value]


def as_str(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise _wrong(value, "a string")
    return value


def as_strs(value: JsonValue) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _wrong(value, "an array")
    return tuple(as_str(v) for v in value)


def as_int(value: JsonValue) -> int:
    """An integer; a float with no fraction is one too (JSON Schema's `integer` admits 5.0)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _wrong(value, "an integer")
    return value


def as_number(value: JsonValue) -> float:
    """A number as written: an int stays an int (so that it is written back as the file wrote it)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _wrong(value, "a number")
    return value


def opt_str(value: JsonValue) -> str | None:
    return None if value is None else as_str(value)


def opt_int(value: JsonValue) -> int | None:
    return None if value is None else as_int(value)


def opt_number(value: JsonValue) -> float | None:
    return None if value is None else as_number(value)


def opt_bool(value: JsonValue) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise _wrong(value, "a boolean")


def as_scalar_map(value: JsonValue) -> dict[str, JsonScalar]:
    """An object whose values are scalars, in the file's key order."""
    out: dict[str, JsonScalar] = {}
    for key, item in as_object(value).items():
        if isinstance(item, list | dict):
            raise _wrong(item, "a scalar")
        out[key] = item
    return out
