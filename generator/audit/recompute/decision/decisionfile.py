"""decision.json read back as its typed DecisionDocument: the one loader every reader of the file goes through."""

from __future__ import annotations

import codecs
import json
from collections.abc import Mapping

from generator.audit.recompute.decision.model import DecisionDocument

__all__ = ["NOTE_LANGUAGE_DEFAULT", "read_decision"]

# A campaign without `language` is one decided before the key existed: the schema says it renders in English.
NOTE_LANGUAGE_DEFAULT = "en"


def read_decision(source: bytes | Mapping[str, object]) -> DecisionDocument:
    """The decision a decision.json holds: its bytes (UTF-8, a BOM tolerated, already checked against the schema
    by the strict reader), or the JSON they parse to (what `check` gives in memory, what a worker is sent).

    A part without its field, a field without its part, or a value of the wrong kind is a ValueError.
    """
    data = json.loads(source.removeprefix(codecs.BOM_UTF8)) if isinstance(source, bytes) else dict(source)
    if not isinstance(data, dict):
        raise ValueError(f"decision.json holds a JSON object, not {type(data).__name__}")
    campaign = data.get("campaign")
    if isinstance(campaign, dict) and "language" not in campaign:
        data = {**data, "campaign": {**campaign, "language": NOTE_LANGUAGE_DEFAULT}}
    try:
        return DecisionDocument.from_json_dict(data)
    except (TypeError, KeyError) as exc:  # a part of the wrong kind, where the schema has not already said so
        raise ValueError(f"decision.json does not read as a decision: {exc}") from None
