"""Where the packaged `schemas/`, `templates/` and catalogue folders are: the one place that knows."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

# In the source tree generator/schemas and generator/templates are symbolic links to the
# top-level folders; in a wheel they are real folders. Either way the package resource path works.
_PACKAGE = "generator"


def locale_dir() -> Traversable:
    """The folder holding the note's gettext catalogues, one folder per language (`de/LC_MESSAGES/...`)."""
    return resources.files(_PACKAGE) / "render" / "locale"


def schemas_dir() -> Traversable:
    """The folder holding the JSON Schemas."""
    return resources.files(_PACKAGE) / "schemas"


def templates_dir() -> Traversable:
    """The folder holding the Jinja2 templates and their assets."""
    return resources.files(_PACKAGE) / "templates"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Return the parsed schema `schemas/<name>.schema.json` (cached: schemas never change at run time)."""
    text = (schemas_dir() / f"{name}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_names() -> list[str]:
    """Names of every packaged schema, sorted."""
    suffix = ".schema.json"
    return sorted(p.name[: -len(suffix)] for p in schemas_dir().iterdir() if p.name.endswith(suffix))


def published_tariffs() -> Traversable:
    """The only two prices the IteraGPU seeds publish (snapshot 2026-09-24), the `cost` command's default."""
    return resources.files(_PACKAGE) / "data" / "published-tariffs.csv"
