"""`verify NOTE.pdf`: a decision note on its own, one PDF and nothing else, read once and parsed from a private copy.

A PDF viewer reads a file from its end (the last `startxref`) and also accepts a header anywhere in the first
kilobyte; a zip tool reads it from its end record. So a file that is a note and, appended, a zip (with
`%%EOF` in the zip comment) shows one thing in a viewer and another to zipfile. A note passes only when it
starts with `%PDF-`, ends at its last `%%EOF` (an end-of-line at most after it), and no zip end record ends it.
The bytes are read once; the parser in its child process reads a private copy of those very bytes, so the
note cannot be swapped between its check and its use.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import zipfile
from pathlib import Path

from generator.bundle.pdf.noteparse import parse_note
from generator.bundle.pdf.notetrust import decision_id, trust_problem
from generator.bundle.sign.signing import cert_fingerprint
from generator.bundle.verdict import Problem, Report, Trust
from generator.core.limits import Limits, limit_message

_EOLS = (b"", b"\n", b"\r\n", b"\r")


class NoteFileError(Exception):
    """Why the given file cannot be the note: its size, its kind, or bytes around the PDF."""


def layout_problem(data: bytes) -> str | None:
    """Why `data` is not a plain PDF (bytes before `%PDF-` or after the last `%%EOF`, or a zip as well), else None."""
    if not data.startswith(b"%PDF-"):
        return "it does not start with %PDF- (bytes before the PDF)"
    end = data.rfind(b"%%EOF")
    if end < 0 or data[end + 5:] not in _EOLS:
        return "bytes follow its last %%EOF (data appended to the PDF)"
    if zipfile.is_zipfile(io.BytesIO(data)):
        return "it is a zip file as well (a zip's end record ends it): zip tools would read another content"
    return None


def read_note_file(path: Path, limits: Limits) -> bytes:
    """The bytes of `path`, a regular file within --max-pdf-bytes, read once (NoteFileError otherwise)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NoteFileError("not a regular file")
        if info.st_size > limits.max_pdf_bytes:
            raise NoteFileError(limit_message("max_pdf_bytes", limits, f"its size, {info.st_size} bytes,"))
        data = fh.read(limits.max_pdf_bytes + 1)
    if len(data) > limits.max_pdf_bytes:  # it grew while being read
        raise NoteFileError(limit_message("max_pdf_bytes", limits, "its size"))
    return data


def private_copy(data: bytes, folder: Path) -> Path:
    """`data` written to a new file in `folder` (a private temporary folder), for the parser's child process."""
    fd, name = tempfile.mkstemp(prefix="note-", suffix=".pdf", dir=folder)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return Path(name)


def verify_note(path: Path, trust: Trust, limits: Limits) -> Report:
    """A decision note on its own: certified, nothing added after, its embedded decision matching its title."""
    report = Report(bundle=str(path), trust=trust, kind="note", signed=True)
    name = path.name
    try:
        data = read_note_file(path, limits)
    except NoteFileError as exc:
        report.problems.append(Problem("too-large", name, str(exc)))
        report.complete = False
        return report
    layout = layout_problem(data)
    if layout is not None:
        report.problems.append(Problem("not-a-plain-pdf", name, f"not a plain decision note: {layout}"))
        report.complete = False
        return report
    # The signer is inside the note, so the note is parsed (in a bounded child process) before it is known.
    with tempfile.TemporaryDirectory(prefix="gpu-audit-note-") as tmp:
        note = parse_note(private_copy(data, Path(tmp)), name, trust.cert, True, limits)
    if note.signer is None:
        report.problems.extend(note.problems or [Problem("bad-pdf-signature", name, "the PDF carries no signature")])
        report.complete = False
        return report
    report.signer, report.signer_fingerprint = note.signer.subject.rfc4514_string(), cert_fingerprint(note.signer)
    report.intermediates = note.intermediates
    if trust.given:
        problem = trust_problem(note.signer, trust, name, note.signing_time, path, note.intermediates)
        if problem is not None:
            report.problems.append(problem)
            report.complete = False
            return report
        report.trusted = True
    report.problems.extend(note.problems)
    report.timestamp, report.timestamp_authority = note.timestamp, note.timestamp_authority
    report.bundle_id = note.title_id
    report.note, report.decision = data, note.decision
    if note.decision is None:
        report.problems.append(Problem("decision-mismatch", name, "the PDF embeds no decision.json"))
        return report
    _, recomputed, problem = decision_id(note.decision, f"{name} (embedded decision.json)", limits)
    if problem is not None:
        report.problems.append(problem)
    elif recomputed != note.title_id:
        report.problems.append(Problem("bundle-id-mismatch", name, "the bundle ID recomputed from the embedded "
                                       "decision.json differs from the one the note's title shows",
                                       note.title_id, recomputed))
    return report
