"""The note rendered in a worker process of low priority, which loads WeasyPrint while the parent still checks.

`build` starts the worker first thing. At a lower priority than the check, it imports WeasyPrint, starts
its own chart worker (which imports matplotlib) and compiles the note's templates in the processor time
the check leaves; in a thread of the checking process those imports would hold the GIL the check's
workers need. Once the decision is known, the parent sends it with the evidence, and the worker answers
both renderings. The parent renders the note itself whenever the worker gives no well-formed answer:
what the worker failed at is then reported by the rendering that fails in the parent, with its own error.
The child is `python -m generator.render.page.noteworker`; only the standard library (and generator's jsonrecord,
which uses nothing else) is imported up front.
"""

from __future__ import annotations

import base64
import binascii
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.core.jsonrecord import JsonRecord
from generator.core.system.worker import JsonWorker, serve

if TYPE_CHECKING:
    from generator.render.page.note import CompiledTemplates, DecisionIn, Evidence
    from generator.render.view.finance import Signature

MODULE = "generator.render.page.noteworker"
NICE = 10  # below the check's priority: the worker takes the processor time the check leaves
PDF_MAGIC = b"%PDF-"


class NoteWorker:
    """The parent's side: the worker started at once, asked once (`ask`), answered once (`files`)."""

    def __init__(self) -> None:
        self._worker = JsonWorker(MODULE)
        self._sending: threading.Thread | None = None

    def ask(self, decision: DecisionIn, evidence: list[Evidence], signature: Signature,
            language: str | None) -> None:
        """Send what render_note needs: the worker renders while this process goes on.

        The request is written by a thread: the worker reads it only once its imports are done, and the
        evidence is larger than a pipe holds. The decision travels as decision.json's JSON, which the worker
        reads back through the one loader.
        """
        from generator.render.page.note import read_decision_in

        request = {
            "decision": read_decision_in(decision).source, "language": language,
            "signature": [signature.kind, signature.subject, signature.fingerprint, signature.organisation],
            "evidence": [[e.name, base64.b64encode(e.data).decode("ascii"), e.description, e.relationship]
                         for e in evidence]}
        self._sending = threading.Thread(target=self._worker.send, args=(request,), daemon=True)
        self._sending.start()

    def files(self) -> dict[str, bytes] | None:
        """Both renderings by file name, once the worker has answered; None when it gave no well-formed answer."""
        if self._sending is not None:
            self._sending.join()
        return rendered_files(self._worker.answer())

    def close(self) -> None:
        """Stop the worker (and so its chart worker) if it still runs."""
        self._worker.close()
        if self._sending is not None:
            self._sending.join()  # the worker is gone: the write ends with a broken pipe

    def __enter__(self) -> NoteWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rendered_files(answer: object) -> dict[str, bytes] | None:
    """The worker's answer as file names and bytes: an HTML and a PDF, or None for anything else."""
    from generator.render.page.note import HTML_NAME, PDF_NAME

    if not isinstance(answer, dict) or set(answer) != {"html", "pdf"}:
        return None
    try:
        files = {HTML_NAME: base64.b64decode(answer["html"], validate=True),
                 PDF_NAME: base64.b64decode(answer["pdf"], validate=True)}
    except (TypeError, binascii.Error):
        return None
    return files if files[PDF_NAME].startswith(PDF_MAGIC) and files[HTML_NAME] else None


@dataclass(frozen=True)
class NoteRequest(JsonRecord):
    """What the worker is sent: decision.json's JSON, the language asked for, the signature's words (kind, subject,
    fingerprint, organisation) and the evidence (name, base64 bytes, description, relationship)."""

    decision: dict[str, object]
    language: str | None
    signature: tuple[str, str, str, str]
    evidence: tuple[tuple[str, str, str, str], ...]


@dataclass
class _Renderer:
    """The worker's side: what it loads before the request, then the one rendering it is asked for."""

    charts: JsonWorker | None = None
    compiled: CompiledTemplates | None = None

    def prepare(self) -> None:
        # The chart worker first, so that matplotlib loads beside WeasyPrint; what fails to load here is left
        # for the rendering to fail at (and the parent then renders and reports it itself).
        self.charts = JsonWorker("generator.render.page.charts", in_group=True)  # stopped with this worker
        try:
            from generator.render.page.note import CompiledTemplates
            from generator.render.page.weasy import load_weasyprint

            load_weasyprint()
            self.compiled = CompiledTemplates.on_disk()
            self.compiled.compile_all()
        except Exception:  # noqa: BLE001 - the rendering raises it again, and the parent renders itself
            self.compiled = None

    def __call__(self, request: object) -> dict[str, str]:
        from generator.render.page.note import HTML_NAME, PDF_NAME, Evidence, render_note
        from generator.render.view.finance import Signature

        try:
            asked = NoteRequest.from_json_dict(request if isinstance(request, dict) else {})
            kind, subject, fingerprint, organisation = asked.signature
            evidence = [Evidence(name, base64.b64decode(data), description, relationship)
                        for name, data, description, relationship in asked.evidence]
            files = render_note(asked.decision, evidence, signature=Signature(kind, subject, fingerprint, organisation),
                                language=asked.language, charts=self.charts, compiled=self.compiled)
        except Exception as exc:  # noqa: BLE001 - the parent renders itself and reports what fails there
            return {"error": f"{type(exc).__name__}: {exc}"}
        return {"html": base64.b64encode(files[HTML_NAME]).decode("ascii"),
                "pdf": base64.b64encode(files[PDF_NAME]).decode("ascii")}


if __name__ == "__main__":
    renderer = _Renderer()
    try:
        sys.exit(serve(renderer, nice=NICE, prepare=renderer.prepare))
    finally:
        if renderer.charts is not None:  # answered or asked nothing: the chart worker ends with this one
            renderer.charts.close()
