"""Records as JSON: the one mapping of frozen dataclasses to JSON-ready values and back (decision.json's parts)."""

from __future__ import annotations

import types
import typing
from dataclasses import MISSING, fields, is_dataclass
from enum import Enum
from functools import cache
from typing import Any, TypeVar, Union

__all__ = ["OMIT_IF_NONE", "JsonRecord", "from_json_value", "to_json_value"]

# The one module of the audit where dict[str, Any] stays (7 annotations, and the override in pyproject.toml): it
# maps any record to JSON and back by the record's own type hints, so a value's type is the hint it is read
# under, checked here at run time (from_json_value), not a type this module could name.

# A field with this metadata is left out of the JSON when it is None: the format has always omitted those keys
# (a package without a tariff has no `gpus`; a comparison without a successful run has no `gap` or `spread`).
OMIT_IF_NONE = {"omit_if_none": True}

R = TypeVar("R", bound="JsonRecord")


def to_json_value(value: Any) -> Any:
    """The JSON-ready form of a record, a collection or a leaf: dataclasses become dicts in field order,
    tuples become lists, enums their value. The one serialisation of decision.json's parts."""
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in fields(value):
            item = getattr(value, f.name)
            if item is None and f.metadata.get("omit_if_none"):
                continue
            out[f.name] = to_json_value(item)
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [to_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json_value(v) for k, v in value.items()}
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_json_value(hint: Any, value: Any) -> Any:
    """The value a JSON part stands for under a type hint: the inverse of to_json_value for these records.

    Reads records (dataclasses), enums, tuples (`tuple[X, ...]` and fixed `tuple[A, B]`), lists, `dict[str, X]`,
    Optional and other unions (a union of scalars keeps the JSON value as it is; a union with a record or a
    collection takes the member the JSON value's kind fits), scalars and Any as they are. Strict on records: an
    unknown key or a missing required one is a ValueError, so that a key of the format that has no field cannot
    pass unnoticed.
    """
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return None if value is None else from_json_value(_member(typing.get_args(hint), value), value)
    if isinstance(hint, type) and is_dataclass(hint):
        return _record_from_json(hint, value)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    args = typing.get_args(hint)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json_value(args[0], v) for v in _array(hint, value))
        items = _array(hint, value)
        if len(items) != len(args):
            raise ValueError(f"{hint} holds {len(args)} values, not {len(items)}")
        return tuple(from_json_value(a, v) for a, v in zip(args, items, strict=True))
    if origin is list:
        return [from_json_value(args[0], v) for v in _array(hint, value)]
    if origin is dict:
        return {k: from_json_value(args[1], v) for k, v in _object(hint, value).items()}
    return value


def _member(members: tuple[Any, ...], value: Any) -> Any:
    """The member of a union a JSON value (not null) is read as: the only one, else the record or collection that
    fits its kind, else Any (a scalar stays as the JSON has it)."""
    candidates = [m for m in members if m is not type(None)]
    if len(candidates) == 1:
        return candidates[0]
    for m in candidates:
        origin = typing.get_origin(m) or m
        if isinstance(value, dict) and (origin is dict or (isinstance(m, type) and is_dataclass(m))):
            return m
        if isinstance(value, list) and origin in (list, tuple):
            return m
    return Any


def _array(hint: Any, value: Any) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"{hint} is read from a JSON array, not {type(value).__name__}")
    return list(value)


def _object(hint: Any, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{hint} is read from a JSON object, not {type(value).__name__}")
    return value


def _record_from_json(cls: type, data: Any) -> Any:
    data = _object(cls.__name__, data)
    known = {f.name: f for f in fields(cls)}
    unknown = set(data) - set(known)
    if unknown:
        raise ValueError(f"{cls.__name__} has no field for {', '.join(sorted(unknown))}")
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for name, f in known.items():
        if name in data:
            kwargs[name] = from_json_value(hints[name], data[name])
        elif f.metadata.get("omit_if_none"):
            kwargs[name] = None
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ValueError(f"{cls.__name__}: {name} is missing")
    return cls(**kwargs)


class JsonRecord:
    """A record of decision.json: to_json_dict() gives its JSON form, from_json_dict() reads it back."""

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON-ready dictionary, keys in field order."""
        out: dict[str, Any] = to_json_value(self)
        return out

    @classmethod
    def from_json_dict(cls: type[R], data: dict[str, Any]) -> R:
        """The record a JSON dictionary describes (ValueError on a key without a field)."""
        record: R = _record_from_json(cls, data)
        return record
