"""What changed in a sealed file since its registration, in words: JSON pointers, IDs, labels, table rows."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from generator.core.jsonvalue import JsonValue
from generator.core.system.strictjson import JsonRefused, loads

SHOWN = 5  # IDs, labels or rows named in a message; the rest are counted
_ABSENT = object()
ABSENT = "(absent)"  # how a value the file does not write is shown


def _written(value: object) -> str:
    """A JSON value as the file writes it (null, true, "text"), or (absent)."""
    return ABSENT if value is _ABSENT else json.dumps(value, ensure_ascii=False)[:120]


def _walk(old: object, new: object, pointer: str) -> Iterator[tuple[str, str, str]]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            escaped = key.replace("~", "~0").replace("/", "~1")
            yield from _walk(old.get(key, _ABSENT), new.get(key, _ABSENT), f"{pointer}/{escaped}")
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            yield from _walk(old[i] if i < len(old) else _ABSENT, new[i] if i < len(new) else _ABSENT,
                             f"{pointer}/{i}")
    elif old is _ABSENT or new is _ABSENT or type(old) is not type(new) or old != new:
        yield pointer or "/", _written(old), _written(new)


def json_changes(old: bytes, new: bytes) -> list[tuple[str, str, str]] | None:
    """Each JSON pointer whose value differs (pointer, registered value, current value), in the registered
    document's order; None when either is no JSON (the bytes alone then say what changed)."""
    try:
        before: JsonValue = loads(old, 64)
        after: JsonValue = loads(new, 64)
    except JsonRefused:
        return None
    return list(_walk(before, after, ""))


def _rows(data: bytes) -> list[list[str]] | None:
    try:
        return list(csv.reader(io.StringIO(data.decode("utf_8_sig"), newline="")))
    except (UnicodeDecodeError, csv.Error):
        return None


def _named(items: list[str], what: str) -> str:
    shown = ", ".join(items[:SHOWN]) + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")
    return f"{len(items)} {what}{'' if len(items) == 1 else 's'}" + (f" ({shown})" if items else "")


def id_changes(old: bytes, new: bytes) -> str | None:
    """An ID file's or a label file's change in words: IDs removed and added, labels changed; None when either
    file is no CSV with an `id` column."""
    before, after = _rows(old), _rows(new)
    if not before or not after or "id" not in before[0] or "id" not in after[0]:
        return None
    column = {name: (before[0].index(name) if name in before[0] else None,
                     after[0].index(name) if name in after[0] else None) for name in ("id", "label")}

    def table(rows: list[list[str]], side: int) -> dict[str, str | None]:
        i, j = column["id"][side], column["label"][side]
        return {r[i]: (r[j] if j is not None and j < len(r) else None) for r in rows[1:]
                if i is not None and i < len(r)}

    was, now = table(before, 0), table(after, 1)
    removed = [i for i in was if i not in now]
    added = [i for i in now if i not in was]
    relabelled = [f"{i}: {was[i]} -> {now[i]}" for i in was if i in now and was[i] != now[i]]
    parts = [f"{_named(removed, 'ID')} removed" if removed else "",
             f"{_named(added, 'ID')} added" if added else "",
             f"{_named(relabelled, 'label')} changed" if relabelled else ""]
    said = "; ".join(p for p in parts if p)
    if not said:
        order = [r[column['id'][0] or 0] for r in before[1:] if r] != [r[column['id'][1] or 0] for r in after[1:] if r]
        said = "the same IDs in another order" if order else "the same IDs, written otherwise"
    return said + " after registration"


def row_changes(old: bytes, new: bytes) -> str | None:
    """A table's change in words, row by row (file lines): cells changed, rows added or removed; None when
    either is no CSV."""
    before, after = _rows(old), _rows(new)
    if not before or not after:
        return None
    header = before[0]
    said: list[str] = [] if header == after[0] else [f"header {','.join(header)} -> {','.join(after[0])}"]
    for line in range(2, max(len(before), len(after)) + 1):
        was = before[line - 1] if line <= len(before) else None
        now = after[line - 1] if line <= len(after) else None
        if was == now:
            continue
        if was is None or now is None:
            said.append(f"line {line} {'added' if was is None else 'removed'}: {','.join(now or was or [])}")
            continue
        cells = [f"{header[k] if k < len(header) else k} {was[k] if k < len(was) else '(absent)'} -> "
                 f"{now[k] if k < len(now) else '(absent)'}" for k in range(max(len(was), len(now)))
                 if (was[k] if k < len(was) else None) != (now[k] if k < len(now) else None)]
        said.append(f"line {line}: {', '.join(cells)}")
    shown = "; ".join(said[:SHOWN]) + (f"; and {len(said) - SHOWN} more rows" if len(said) > SHOWN else "")
    return (shown or "the same rows, written otherwise") + " after registration"


def byte_change(old_size: int, old_sha256: str, new_size: int, new_sha256: str) -> str:
    """What the bytes alone say: the size and digest registered and now."""
    return (f"its bytes changed after registration: {old_size} bytes, SHA-256 {old_sha256[:16]}... registered; "
            f"{new_size} bytes, SHA-256 {new_sha256[:16]}... now")
