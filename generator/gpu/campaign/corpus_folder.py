"""A corpus folder as `campaign run` reads it: the texts (JSON lines or CSV), the reference beside them, the
optional expected IDs, and the corpus's content fingerprint (standard library only, the value `check` computes).

Layout (docs/gpu.md, "Your own corpus and model"): exactly one texts file, `eval.jsonl` (one JSON object per line
with `id` and `text`) or `eval.csv` (header `id,text`), in the registered input order; `eval-reference.csv` (header
`id,label`), one reference label per text; and optionally `expected-ids.csv` (header `id`), which must name the
texts' IDs, each once (without it the texts' IDs are the expected IDs).
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from generator.core.errors import UsageError

TEXT_FILES = ("eval.jsonl", "eval.csv")
REFERENCE_FILE = "eval-reference.csv"
EXPECTED_FILE = "expected-ids.csv"
FORM = "content-sha256:"  # audit's corpusprint.FORM: the form `check` ties to the corpus's bytes


@dataclass(frozen=True)
class CorpusFolder:
    """A corpus folder read and cross-checked: its texts file, IDs in input order and reference labels."""

    texts_file: Path
    ids: list[str]
    reference: dict[str, str]

    @property
    def fingerprint(self) -> str:
        """`content-sha256:<64 hex>` of the expected IDs and their reference labels."""
        return content_fingerprint((i, self.reference[i]) for i in self.ids)


def content_fingerprint(pairs: Iterable[tuple[str, str]]) -> str:
    """The SHA-256 of the (ID, label) pairs sorted by ID (UTF-8 byte order), each written `<n>:<id>,<m>:<label>,`
    (n and m the UTF-8 lengths in bytes): generator.audit.validate.corpus.corpusprint.fingerprint, without pyarrow."""
    digest = hashlib.sha256()
    for key, label in sorted(((i.encode("utf-8"), v.encode("utf-8")) for i, v in pairs), key=lambda p: p[0]):
        digest.update(b"%d:%s,%d:%s," % (len(key), key, len(label), label))
    return FORM + digest.hexdigest()


def texts_file(folder: Path) -> Path:
    """The folder's one texts file, eval.jsonl or eval.csv."""
    found = [folder / n for n in TEXT_FILES if (folder / n).is_file()]
    if len(found) != 1:
        what = "both" if found else "neither"
        raise UsageError(f"--corpus {folder} holds {what} of {' and '.join(TEXT_FILES)}: it must hold exactly one "
                         f"texts file (id and text), with {REFERENCE_FILE} (id,label) beside it (docs/gpu.md)")
    return found[0]


def read_texts(path: Path, limit: int | None = None) -> tuple[list[str], list[str]]:
    """IDs and texts in file order (the registered input order); the first `limit` only when given (the
    warm-up's). eval.jsonl: one object per line with id and text; eval.csv: the header id,text."""
    ids, texts = [], []
    with path.open(encoding="utf-8-sig", newline="" if path.suffix == ".csv" else None) as fh:
        if path.suffix == ".csv":
            for line, row in enumerate(_csv_rows(fh, path, ("id", "text")), start=2):
                ids.append(_field(row, "id", path, line))
                texts.append(_field(row, "text", path, line))
                if limit is not None and len(ids) >= limit:
                    break
            return ids, texts
        for line, raw in enumerate(fh, start=1):
            if raw.strip():
                try:
                    record = json.loads(raw)
                    ids.append(str(record["id"]))
                    texts.append(str(record["text"]))
                except (ValueError, KeyError, TypeError) as exc:
                    raise UsageError(f"{path}:{line}: not a JSON object with id and text ({type(exc).__name__}: "
                                     f"{exc})") from None
                if limit is not None and len(ids) >= limit:
                    break
    return ids, texts


def _csv_rows(fh: Iterable[str], path: Path, header: tuple[str, ...]) -> Iterable[dict[str, str | None]]:
    reader = csv.DictReader(fh)
    if not reader.fieldnames or not set(header) <= set(reader.fieldnames):
        raise UsageError(f"{path}: the header must name {','.join(header)}, it names "
                         f"{','.join(reader.fieldnames or []) or 'nothing'}")
    return reader


def _field(row: dict[str, str | None], name: str, path: Path, line: int) -> str:
    value = row.get(name)
    if value is None or (name == "id" and not value):
        raise UsageError(f"{path}:{line}: the row has no {name}")
    return value


def _labelled(path: Path) -> dict[str, str]:
    """The reference's ID -> label, each ID once."""
    out: dict[str, str] = {}
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for line, row in enumerate(_csv_rows(fh, path, ("id", "label")), start=2):
            key = _field(row, "id", path, line)
            if key in out:
                raise UsageError(f"{path}:{line}: the ID {key!r} is labelled twice")
            out[key] = _field(row, "label", path, line)
    return out


def read_folder(folder: Path) -> CorpusFolder:
    """The corpus folder read and cross-checked: unique IDs, one reference label each, the expected IDs the texts'."""
    path = texts_file(folder)
    ref_path = folder / REFERENCE_FILE
    if not ref_path.is_file():
        raise UsageError(f"{ref_path} is missing: --corpus must hold {REFERENCE_FILE} (id,label) beside {path.name}")
    try:
        ids, _ = read_texts(path)
        reference = _labelled(ref_path)
        expected = None
        if (folder / EXPECTED_FILE).is_file():
            with (folder / EXPECTED_FILE).open(encoding="utf-8-sig", newline="") as fh:
                expected = [_field(r, "id", folder / EXPECTED_FILE, n)
                            for n, r in enumerate(_csv_rows(fh, folder / EXPECTED_FILE, ("id",)), start=2)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"cannot read the corpus {folder}: {type(exc).__name__}: {exc}") from None
    twice = sorted(i for i, n in Counter(ids).items() if n > 1)
    if twice:
        raise UsageError(f"{path}: the IDs {', '.join(map(repr, twice[:5]))} occur more than once")
    _same_ids(ids, reference, f"{REFERENCE_FILE} labels", path)
    if expected is not None:
        if len(set(expected)) != len(expected):
            raise UsageError(f"{folder / EXPECTED_FILE}: an ID is listed more than once")
        _same_ids(ids, dict.fromkeys(expected, ""), f"{EXPECTED_FILE} lists", path)
    return CorpusFolder(texts_file=path, ids=ids, reference=reference)


def _same_ids(ids: list[str], other: dict[str, str], what: str, path: Path) -> None:
    missing, extra = [i for i in ids if i not in other], sorted(set(other) - set(ids))
    if missing or extra:
        raise UsageError(f"{what} other IDs than {path.name} holds: {len(missing)} of its IDs missing (first "
                         f"{', '.join(map(repr, missing[:3])) or 'none'}), {len(extra)} not in it (first "
                         f"{', '.join(map(repr, extra[:3])) or 'none'})")
