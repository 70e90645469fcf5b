"""The documented limits on input: what a hostile or broken file may cost, and the option that raises each.

One frozen `Limits` value holds them. The CLI builds it from its `--max-...` options and hands it to the
library: explicitly to the functions that take a `limits` argument (`verify_bundle`, `zipsafe.extract`, the
JSON and CSV readers), and for the duration of one command as the *active* limits (`applied`), which the
readers fall back to when their caller does not pass any (the campaign loaders reach them through several
layers). The active value lives in a `contextvars.ContextVar`, set and reset by a `with` block: nothing is
changed for the rest of the process, and a library caller who does nothing gets the defaults.

Past a limit the message names the limit and the option that raises it (`limit_message`).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields

KiB = 2**10
MiB = 2**20
GiB = 2**30


@dataclass(frozen=True)
class Limits:
    """Every documented limit, with its default (the table "Limits and hostile input" in docs/security.md)."""

    max_file_bytes: int = 2 * GiB
    """Size of one input file read whole (campaign CSV and JSON files, prediction files, the small files of a
    bundle: bagit.txt, manifests, MANIFEST.json, signature, certificate, decision.json; the PDF has its own,
    `max_pdf_bytes`); `--max-file-bytes`."""

    max_json_depth: int = 64
    """Nesting depth of a JSON document (protocol.json, measurements, MANIFEST.json); `--max-json-depth`."""

    max_findings: int = 200
    """Findings (or verify problems) listed; the rest are counted, never dropped silently; `--max-findings`."""

    max_bundle_bytes: int = 8 * GiB
    """Total uncompressed size of a bundle zip (and of any one entry); `--max-bundle-bytes`."""

    max_zip_entries: int = 10_000
    """Entries in a bundle zip, read from its end record before anything else (each entry costs a file written,
    so the count bounds the time extraction takes); `--max-zip-entries`."""

    max_zip_ratio: int = 200
    """Uncompressed / compressed size of one zip entry larger than 1 MiB, and of the whole zip beyond 64 MiB
    (zip bombs, of one entry or of many small ones); `--max-zip-ratio`."""

    max_pdf_bytes: int = 64 * MiB
    """Size of the decision note that `verify` parses, and of the invoice and the bundle `invoice attach` holds in
    memory to write the invoice copy (pyHanko's time and memory grow with the file, so a hostile PDF of a few
    gigabytes would cost more than any machine should give it); `--max-pdf-bytes`. A genuine note is far
    smaller."""

    max_pdf_seconds: int = 5
    """Processor seconds the decision note's parse may take (a child process; a hostile PDF well under
    --max-pdf-bytes can still cost pyHanko many times what a genuine note needs); `--max-pdf-seconds`. A genuine
    note takes well under one; a note within the bounds below, at most about two (docs/performance.md)."""

    max_pdf_objects: int = 100_000
    """Objects of the decision note, counted from its bytes before it is parsed (its cross-reference entries, or its
    object headers and the objects its object streams declare, whichever is more); `--max-pdf-objects`. A genuine
    note holds a few thousand (generator.bundle.pdf.notebounds)."""

    max_pdf_references: int = 100_000
    """Indirect references of the decision note (every `R` token, in the file and in its object streams
    inflated), counted before it is parsed: a form or a page listing one field a million times is a million of
    them; `--max-pdf-references`. A genuine note holds a few thousand."""

    max_pdf_fields: int = 1000
    """Form fields and annotations the decision note lists (its form's /Fields with their /Kids, each page's
    /Annots), counted by qpdf before pyHanko reads them (pyHanko spends a third of a millisecond of processor
    time on each); `--max-pdf-fields`. A genuine note lists its signature field, once in the form and once on its
    last page."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{option(f.name)} must be a whole number (got {value!r})")
            if value < 1:
                raise ValueError(f"{option(f.name)} must be at least 1")


DEFAULT = Limits()

OPTIONS = {f.name: "--" + f.name.replace("_", "-") for f in fields(Limits)}


def option(name: str) -> str:
    """The command-line option that sets the limit `name` (`max_file_bytes` -> `--max-file-bytes`)."""
    return OPTIONS[name]


def limit_message(name: str, limits: Limits, what: str) -> str:
    """`<what> exceeds the limit of N (--max-...); ...`: which limit was hit and how to raise it."""
    value = getattr(limits, name)
    return (f"{what} exceeds the limit of {value} ({option(name)}, default {getattr(DEFAULT, name)}); if the input "
            f"is genuine, raise it with {option(name)} N")


_ACTIVE: contextvars.ContextVar[Limits] = contextvars.ContextVar("gpu_audit_limits", default=DEFAULT)


def current() -> Limits:
    """The limits of the command being run (the defaults outside `applied`)."""
    return _ACTIVE.get()


def resolve(limits: Limits | None) -> Limits:
    """`limits` when given, else the active ones."""
    return limits if limits is not None else _ACTIVE.get()


@contextmanager
def applied(limits: Limits) -> Iterator[Limits]:
    """Make `limits` the active limits inside the block, and restore the previous ones after it."""
    token = _ACTIVE.set(limits)
    try:
        yield limits
    finally:
        _ACTIVE.reset(token)
