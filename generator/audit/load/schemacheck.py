"""JSON Schema validation turned into findings: the schema stays the single source of the rules."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import jsonschema
from jsonschema import Draft202012Validator

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.metricrules import unknown_metric
from generator.core.system.resources import load_schema

_FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER


@cache
def validator(name: str) -> Draft202012Validator:
    """A compiled validator for `schemas/<name>.schema.json`."""
    return Draft202012Validator(load_schema(name), format_checker=_FORMAT_CHECKER)


def _path(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    return "/" + "/".join(parts) if parts else "/"


def _short(value: object, limit: int = 80) -> object:
    if isinstance(value, (dict, list)):
        text = repr(value)
        return text if len(text) <= limit else text[: limit - 3] + "..."
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 3] + "..."
    return value


def _rule(error: jsonschema.ValidationError) -> str:
    keyword = str(error.validator)
    if keyword in {"required", "additionalProperties", "if", "then", "else", "anyOf", "oneOf"}:
        return keyword
    return f"{keyword}: {_short(error.validator_value)}"


def _fix(error: jsonschema.ValidationError) -> str | None:
    """What to do: the description of the schema node that failed, or of its parent."""
    keyword = str(error.validator)
    if keyword == "required":
        return "add the missing field"
    if keyword == "additionalProperties":
        return "remove or rename the unknown field"
    schema = error.schema if isinstance(error.schema, dict) else {}
    desc = schema.get("description")
    if desc is None and error.parent is not None and isinstance(error.parent.schema, dict):
        desc = error.parent.schema.get("description")
    return str(desc) if desc else None


def _best_errors(errors: Iterable[jsonschema.ValidationError]) -> list[jsonschema.ValidationError]:
    """Replace composite errors (anyOf, $ref branches) by their most relevant leaf."""
    out = []
    for err in errors:
        if err.context:
            out.append(jsonschema.exceptions.best_match([err]))
        else:
            out.append(err)
    return out


def validate_document(
    name: str, instance: object, *, file: str, line: int | None = None, csv_row: bool = False
) -> list[Finding]:
    """Validate a JSON document, or one CSV row turned into an object, against a packaged schema.

    For a CSV row the finding's field is the column name; for a document it is the JSON path.
    """
    errors = sorted(validator(name).iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
    findings = []
    for err in _best_errors(errors):
        if csv_row:
            field: str | None = str(err.absolute_path[0]) if err.absolute_path else None
        else:
            field = _path(err)
        if name == "protocol" and field == "/quality/metric" and err.validator == "enum":
            findings.append(unknown_metric(err.instance, file))  # the registry's metrics, by name
            continue
        findings.append(
            make_finding("schema-violation", Severity.ERROR, file,
                         err.message if len(err.message) <= 300 else err.message[:297] + "...", line=line, field=field,
                         value=_short(err.instance), rule=_rule(err), fix=_fix(err))
        )
    return findings


def check_schema(name: str) -> None:
    """Raise if the packaged schema is not valid against its metaschema (used by the tests)."""
    Draft202012Validator.check_schema(load_schema(name))
