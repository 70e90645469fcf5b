"""The decision note parsed in a child process, under a processor-time and a memory ceiling.

pyHanko's cost grows with what a PDF holds, not only with its size: a small note whose form lists one field
a million times takes it long and hundreds of megabytes (docs/performance.md). A bundle signed by someone's
own key passes every checksum, so its note is parsed (without a trust anchor, to show who signed it). Its objects
and references are counted from its bytes first (generator.bundle.pdf.notebounds: --max-pdf-objects and
--max-pdf-references), and a note past them is refused without a child; the child process bounds what the parse
can still cost (--max-pdf-seconds of processor time, MEMORY_CEILING of address space) and `verify`
itself never imports pyHanko. The child is `python -m generator.bundle.pdf.noteparse`: one JSON request on stdin,
one JSON answer on stdout.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from generator.bundle.pdf.notebounds import bounds_problem
from generator.bundle.verdict import Problem
from generator.core.limits import GiB, Limits, limit_message
from generator.core.system.worker import child_env

MEMORY_CEILING = 4 * GiB  # address space of the child; a genuine note needs a few hundred megabytes


@dataclass
class NoteParse:
    """What the note holds and what pyHanko's verdict says of its signature."""

    problems: list[Problem] = field(default_factory=list)
    signer: x509.Certificate | None = None  # the certificate the CMS signature names
    intermediates: list[x509.Certificate] = field(default_factory=list)  # the CMS's other certificates
    signature_fingerprint: str | None = None  # the certificate pyHanko validated the signature with
    title_id: str | None = None
    decision: bytes | None = None
    timestamp: str | None = None
    timestamp_authority: str | None = None
    signing_time: str | None = None  # ISO 8601, UTC: the timestamp's, else the signer's own claim (pdfverdict)


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    """In the child: read the note, and judge its signature with the given certificate (or its own signer's)."""
    from generator.bundle.pdf.notebounds import form_problem
    from generator.bundle.pdf.notetrust import read_note, signature_problems

    pdf, file = Path(request["pdf"]).read_bytes(), request["file"]
    refused = form_problem(pdf, Limits(max_pdf_fields=request["max_fields"]))
    if refused is not None:
        return {"error": "refused", "code": refused[0], "message": refused[1]}
    facts = read_note(pdf, file)
    out: dict[str, Any] = {"problems": [[p.code, p.message] for p in facts.problems], "title_id": facts.title_id,
                           "decision": None if facts.decision is None else base64.b64encode(facts.decision).decode(),
                           "signer": None if facts.signer_cert is None else
                           facts.signer_cert.public_bytes(serialization.Encoding.PEM).decode(),
                           "others": [c.public_bytes(serialization.Encoding.PEM).decode() for c in facts.others]}
    cert = x509.load_pem_x509_certificate(request["cert"].encode()) if request["cert"] else facts.signer_cert
    if request["check_signature"] and cert is not None and not facts.problems:
        problems, check = signature_problems(pdf, cert, file)
        out["problems"] += [[p.code, p.message] for p in problems]
        out.update(signature_fingerprint=check.signer_fingerprint, timestamp=check.timestamp,
                   timestamp_authority=check.timestamp_authority, signing_time=check.signing_time)
    return out


def main() -> None:
    try:
        import resource

        request = json.loads(sys.stdin.read())
        resource.setrlimit(resource.RLIMIT_CPU, (request["seconds"], request["seconds"] + 1))
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))
        answer = _answer(request)
    except MemoryError:
        answer = {"error": "memory"}
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a problem, never a traceback
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(answer))


def _costly(file: str, limits: Limits, what: str) -> NoteParse:
    return NoteParse(problems=[Problem("pdf-too-costly", file, f"not checked: {what}")])


def ask_parser(request: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """The bounded child's answer to one request (`python -m generator.bundle.pdf.noteparse`, under the limits'
    processor time and MEMORY_CEILING); its own errors as {"error": ...}."""
    env = child_env()  # the child imports this very package
    try:
        proc = subprocess.run([sys.executable, "-m", "generator.bundle.pdf.noteparse"], input=json.dumps(request),
                              env=env, capture_output=True, text=True, timeout=2 * limits.max_pdf_seconds + 30)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    except OSError as exc:
        return {"error": "cannot-start", "why": str(exc)}
    try:
        answer: dict[str, Any] = json.loads(proc.stdout)
    except ValueError:
        answer = {"error": "cpu" if proc.returncode < 0 else f"the parser exited {proc.returncode}"}
    return answer


def parse_note(path: Path, file: str, cert: x509.Certificate | None, check_signature: bool,
               limits: Limits) -> NoteParse:
    """The note at `path` (a private copy) counted, then parsed in a bounded child process; what failed, holds
    too much or cost too much is a problem."""
    too_complex = bounds_problem(path.read_bytes(), limits)
    if too_complex is not None:
        return NoteParse(problems=[Problem("pdf-too-complex", file, too_complex)])
    request = {"pdf": str(path.resolve()), "file": file, "seconds": limits.max_pdf_seconds,
               "max_fields": limits.max_pdf_fields,
               "check_signature": check_signature,
               "cert": None if cert is None else cert.public_bytes(serialization.Encoding.PEM).decode()}
    answer = ask_parser(request, limits)
    if answer.get("error") == "timeout":
        return _costly(file, limits, limit_message("max_pdf_seconds", limits, "the time parsing the PDF took"))
    if answer.get("error") == "cannot-start":
        return NoteParse(problems=[Problem("bad-pdf", file, f"not checked: the parser cannot start ({answer['why']})")])
    if answer.get("error") == "cpu":
        return _costly(file, limits,
                       limit_message("max_pdf_seconds", limits, "the processor time parsing the PDF took"))
    if answer.get("error") == "refused":  # by qpdf's count, before pyHanko read the note
        return NoteParse(problems=[Problem(answer["code"], file, answer["message"])])
    if answer.get("error") == "memory":
        return _costly(file, limits, f"parsing the PDF needs more than {MEMORY_CEILING} bytes of memory")
    if "error" in answer:
        return NoteParse(problems=[Problem("bad-pdf", file, f"the PDF cannot be read: {answer['error']}")])
    return NoteParse(
        problems=[Problem(code, file, message) for code, message in answer["problems"]],
        signer=None if answer["signer"] is None else x509.load_pem_x509_certificate(answer["signer"].encode()),
        intermediates=[x509.load_pem_x509_certificate(c.encode()) for c in answer.get("others", [])],
        signature_fingerprint=answer.get("signature_fingerprint"), title_id=answer["title_id"],
        decision=None if answer["decision"] is None else base64.b64decode(answer["decision"]),
        timestamp=answer.get("timestamp"), timestamp_authority=answer.get("timestamp_authority"),
        signing_time=answer.get("signing_time"))


if __name__ == "__main__":
    main()
