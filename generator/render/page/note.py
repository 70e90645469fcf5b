"""Render decision.json into the HTML note (Jinja2, in its language) and its PDF/A-3a twin (WeasyPrint)."""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import itertools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol, TypeGuard

import jinja2
from jinja2.bccache import Bucket

from generator.audit.recompute.decision.model import DecisionDocument
from generator.core.errors import OutputExistsError, UsageError
from generator.core.system.resources import templates_dir
from generator.core.system.safefiles import write_new_files
from generator.core.system.worker import JsonWorker
from generator.render.page.weasy import load_weasyprint
from generator.render.view.chartdata import ChartRequest
from generator.render.view.filters import FILTERS, degradation, finalize_in, worded
from generator.render.view.finance import RENDERED, Signature
from generator.render.view.i18n import (
    Formats,
    checked_language,
    metric_name_in,
    protocol_filters,
    require_fonts,
    translations,
)
from generator.render.view.view import NoteView, ReadDecision, build_view, chart_request

HTML_NAME = "decision-note.html"
PDF_NAME = "decision-note.pdf"
TEMPLATE = "note.html.j2"
TEMPLATES = (TEMPLATE, "note.css")  # the note and the style sheet it includes
CHARTS = {"durations", "memory"}
PDF_VARIANT = "pdf/a-3a"  # PDF/A-3 level A: tagged structure, so the note reads in order and aloud
Charts = dict[str, str | None]
# What callers hand the note: the decision as read, its typed document, or decision.json's JSON (what `check` gives
# in memory, what the note worker is sent), which the one loader reads (audit's decisionfile).
DecisionIn = ReadDecision | DecisionDocument | Mapping[str, object]
# the environment's options (this module) and Jinja's version the cached template code was compiled under
_COMPILED_UNDER = hashlib.sha256(Path(__file__).read_bytes() + jinja2.__version__.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Evidence:
    """A file embedded in the PDF: name, bytes, description and PDF/A-3 relationship (Data or Source)."""

    name: str
    data: bytes
    description: str
    relationship: str


EvidenceOf = Callable[[bytes], "list[Evidence]"]  # decision.json's bytes -> the files the note embeds


class CompiledTemplates(jinja2.BytecodeCache):
    """The note's templates compiled to Python code once (Jinja's bytecode cache): kept in memory, so that the
    environment of the note's language, known only with the decision, loads the code `build` compiled while the
    check ran, and on disk (Jinja's FileSystemBytecodeCache: a folder of the user's own in the temporary folder,
    which Jinja refuses when another user owns it or may write it), so that the next note starts from it.

    Jinja keys its cache by the template's name and checks the source's digest, but not the environment's
    options the code was compiled under: the file names carry the digest of this module, which sets them.
    """

    def __init__(self, disk: jinja2.BytecodeCache | None = None) -> None:
        self._code: dict[str, bytes] = {}
        self._disk = disk

    @classmethod
    def on_disk(cls) -> CompiledTemplates:
        """Kept in memory and in the user's cache folder; in memory alone where that folder cannot be used."""
        try:
            disk = jinja2.FileSystemBytecodeCache(pattern=f"__gpu_audit_{_COMPILED_UNDER}_%s.cache")
        except (OSError, RuntimeError):  # no usable temporary folder, or one another user controls
            disk = None
        return cls(disk)

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)
        elif self._disk is not None:
            self._disk.load_bytecode(bucket)  # a stale or foreign file leaves the bucket empty: compiled anew

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()
        if self._disk is not None:
            try:
                self._disk.dump_bytecode(bucket)
            except OSError:  # a full or read-only disk costs the next note a compilation, nothing more
                pass

    def compile_all(self) -> None:
        """Compile every template of the note (the code does not depend on the language: its words are looked
        up when it runs)."""
        env = environment("en", self)
        for name in TEMPLATES:
            env.get_template(name)


def environment(language: str = "en", compiled: CompiledTemplates | None = None) -> jinja2.Environment:
    """The Jinja2 environment of one language: package templates, autoescape on, undefined names are errors,
    every word from the language's gettext catalogue (newstyle: placeholders by name, values escaped).
    `compiled`: templates compiled ahead (else those of the cache on disk, or compiled on first use)."""
    def load(name: str) -> str | None:
        path = templates_dir() / name
        return path.read_text(encoding="utf-8") if path.is_file() else None

    catalogue, formats = translations(language), Formats(language)
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(load),  # resources.py is the one place that knows where templates are
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        # every printed value: invisible and bidirectional controls shown as <U+202E>, long texts cut
        finalize=finalize_in(catalogue.gettext, formats.count),
        extensions=["jinja2.ext.i18n"],
        bytecode_cache=compiled if compiled is not None else CompiledTemplates.on_disk(),
    )
    env.install_gettext_translations(catalogue, newstyle=True)  # type: ignore[attr-defined]
    env.filters.update(FILTERS)
    env.filters.update(formats.filters())
    env.filters.update(worded(catalogue.gettext, formats.count))
    env.filters["metric_name"] = metric_name_in(catalogue)
    env.filters.update(protocol_filters(catalogue))
    env.filters["degradation"] = functools.partial(degradation, gettext=catalogue.gettext, metric=formats.metric)
    env.globals["punct"] = formats.punctuation
    return env


def note_language(decision: DecisionDocument, language: str | None = None) -> str:
    """The language to render in: the one asked for (--lang), else the protocol's, else English."""
    campaign = decision.campaign
    return checked_language(language if language is not None else campaign.language if campaign else None)


def _page(template: jinja2.Template, view: NoteView, charts: Charts) -> str:
    return template.render(**view.context(), durations_chart=charts["durations"], memory_chart=charts["memory"])


def render_html(decision: DecisionIn, *, signature: Signature = RENDERED, language: str | None = None) -> str:
    """The self-contained HTML note: inline CSS, the charts as SVG data URLs (drawn in this process)."""
    read = read_decision_in(decision)
    lang = note_language(read.document, language)
    _png, svg = _drawn_charts(None, chart_request(read.document, lang))
    return _page(environment(lang).get_template(TEMPLATE), build_view(read, signature=signature, language=lang), svg)


CHART_FORMATS = (("png", "data:image/png;base64,"), ("svg", "data:image/svg+xml;base64,"))


def _well_formed(answer: object, prefix: str, request: ChartRequest) -> TypeGuard[Charts]:
    """A chart for each chart the request has data for (a data URL of the format), None for the others."""
    return isinstance(answer, dict) and set(answer) == CHARTS and all(
        (isinstance(url, str) and url.startswith(prefix) and _readable(url[len(prefix):], prefix))
        if request.shows(name) else url is None for name, url in answer.items())


def _readable(encoded: str, prefix: str) -> bool:
    """Whether a chart's base64 is a whole PNG (every chunk's checksum) or an SVG document.

    WeasyPrint leaves out an image it cannot read, with a warning in its log: a chart the worker garbled
    would be missing from the PDF, not drawn here.
    """
    try:
        data = base64.b64decode(encoded, validate=True)
        if prefix != CHART_FORMATS[0][1]:
            return data.lstrip().startswith(b"<?xml") and b"<svg" in data
        from PIL import Image  # WeasyPrint's own image reader: already loaded

        with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
            image.verify()
        return True
    except (ValueError, OSError, SyntaxError):  # Pillow's verify says "broken PNG file" with a SyntaxError
        return False


def _drawn_charts(worker: JsonWorker | None, request: ChartRequest) -> Iterator[Charts]:
    """The charts as PNG (for the PDF), then as SVG (for the HTML): the worker's answers, else drawn here."""
    given = 0
    while worker is not None and given < len(CHART_FORMATS):
        answer = worker.answer()
        if not _well_formed(answer, CHART_FORMATS[given][1], request):
            break  # a worker that failed or answered something else: what it has not given is drawn here
        given += 1
        yield answer
    if given < len(CHART_FORMATS):
        from generator.render.page import charts  # matplotlib is heavy: loaded only when the charts are drawn here

        yield from itertools.islice(charts.draw(request), given, None)


class _Fetched(Protocol):
    def read(self) -> bytes: ...


class UrlFetcher(Protocol):
    """WeasyPrint's URL fetcher as the note uses it (WeasyPrint ships without type information)."""

    def fetch(self, url: str) -> _Fetched: ...


def _fetcher() -> UrlFetcher:
    """A URL fetcher that allows only data: URLs and never follows redirects: inputs can make it fetch nothing."""
    return load_weasyprint().urls.URLFetcher(allowed_protocols={"data"}, allow_redirects=False, timeout=1)


def _moment(decision: DecisionDocument) -> datetime:
    return datetime.fromisoformat(decision.generated_at.replace("Z", "+00:00"))


def render_pdf(html: str, decision: DecisionDocument, evidence: list[Evidence]) -> bytes:
    """PDF/A-3a (tagged: headings, table headers, the language) from the HTML, with the evidence embedded as
    associated files; dates fixed by the decision.

    The charts are in the HTML as data: URLs, the one kind of URL the fetcher allows.
    """
    weasyprint = load_weasyprint()
    when = _moment(decision)
    fetcher = _fetcher()
    attachments = [weasyprint.Attachment(string=e.data, name=e.name, description=e.description,
                                         relationship=e.relationship, created=when, modified=when,
                                         url_fetcher=fetcher) for e in evidence]
    document = weasyprint.HTML(string=html, url_fetcher=fetcher, base_url=None)
    out = io.BytesIO()
    with _source_date_epoch(when):
        document.write_pdf(out, pdf_variant=PDF_VARIANT, attachments=attachments, finisher=_associate_once)
    return out.getvalue()


class _FinishedPdf(Protocol):
    """What _associate_once reads of WeasyPrint's PDF (a pydyf document): its catalog."""

    @property
    def catalog(self) -> dict[str, list[object]]: ...


def _associate_once(document: object, pdf: _FinishedPdf) -> None:
    """WeasyPrint's finisher: list each associated file once in the catalog's /AF.

    WeasyPrint 70's PDF/A-3 step adds every attachment twice, once from the EmbeddedFiles name tree and once
    from its Filespec object; PDF/A-3 validators and readers expect each file spec once.
    """
    associated = pdf.catalog.get("AF")
    if associated is not None:
        unique = list(dict.fromkeys(associated))  # the references, in their first order
        associated.clear()
        associated.extend(unique)


@contextmanager
def _source_date_epoch(when: datetime) -> Iterator[None]:
    """Pin SOURCE_DATE_EPOCH while writing: fontTools stamps subset fonts with it instead of the clock."""
    key = "SOURCE_DATE_EPOCH"
    previous = os.environ.get(key)
    if previous is None:
        os.environ[key] = str(int(when.timestamp()))
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(key, None)


def refuse_existing(outdir: Path, names: Iterable[str]) -> None:
    """Refuse to go on when any of the files is already in outdir (nothing is overwritten)."""
    for name in names:
        if (outdir / name).exists():
            raise OutputExistsError(f"{outdir / name} already exists; render into a new folder "
                                    "(nothing is overwritten)")


def read_decision_in(decision: DecisionIn) -> ReadDecision:
    """The decision read once, typed; JSON that is not a decision made by `check` is a usage error."""
    if isinstance(decision, Mapping) and (decision.get("schema_version") != "1" or "configurations" not in decision):
        raise UsageError("this is not a decision.json made by `gpu-audit check --out`")
    try:
        return ReadDecision.of(decision)
    except ValueError as exc:
        raise UsageError(f"this is not a decision.json made by `gpu-audit check --out` ({exc})") from None


def ask_for_charts(charts: JsonWorker, decision: DecisionIn, language: str | None = None) -> None:
    """Give the chart worker its request now, so that it draws while the caller does other work; then pass
    `asked=True` to render_note. The PDF's layout waits for the PNG: the sooner asked, the less it waits."""
    document = read_decision_in(decision).document
    charts.send(chart_request(document, note_language(document, language)).to_json_dict())


def render_note(decision: DecisionIn, evidence: list[Evidence], *, signature: Signature = RENDERED,
                language: str | None = None, charts: JsonWorker | None = None,
                asked: bool = False, compiled: CompiledTemplates | None = None) -> dict[str, bytes]:
    """Both renderings of the note, by file name.

    `charts` is a worker process started with `generator.render.page.charts` (`asked`: already given its request
    by ask_for_charts): it imports matplotlib and draws the charts while this process imports WeasyPrint
    and builds the view; without it (or when it fails) they are drawn here. The PDF shows them as PNG (its
    layout waits for them), the HTML as SVG, which the worker draws while the PDF is laid out. `compiled`:
    the templates compiled ahead (CompiledTemplates.compile_all).
    """
    read = read_decision_in(decision)
    lang = note_language(read.document, language)
    require_fonts(lang)  # a missing font would print empty boxes: refused before any work
    request = chart_request(read.document, lang)
    if charts is not None and not asked:
        charts.send(request.to_json_dict())
    load_weasyprint()  # the heavy import, while the worker draws
    template = environment(lang, compiled).get_template(TEMPLATE)
    view = build_view(read, signature=signature, language=lang)
    drawn = _drawn_charts(charts, request)
    pdf = render_pdf(_page(template, view, next(drawn)), read.document, evidence)
    return {HTML_NAME: _page(template, view, next(drawn)).encode("utf-8"), PDF_NAME: pdf}


def load_decision(path: Path) -> tuple[ReadDecision, bytes]:
    """Read and check a decision.json (strict JSON, its schema): the decision, typed, and the bytes it was read from.

    A bad file is a usage error naming the problem.
    """
    from generator.audit.load.readers.csvtable import decode_utf8, read_bytes
    from generator.audit.load.readers.jsondoc import parse_document
    from generator.audit.report import location

    if not path.exists():
        raise UsageError(f"{path} does not exist; make it with `gpu-audit check CAMPAIGN_DIR --out {path}`")
    data = read_bytes(path, str(path))
    text, bad = decode_utf8(data, str(path))
    problems = (parse_document(text, str(path), "decision").findings if text is not None
                else [bad] if bad is not None else [])
    if problems:
        first = problems[0]
        raise UsageError(f"{path} is not a valid decision.json ({len(problems)} problem(s); first at "
                         f"{location(first)}: {first.message})")
    assert text is not None  # decode_utf8 gives either the text or the finding that says why not
    try:
        return ReadDecision.of(json.loads(text)), data
    except ValueError as exc:
        raise UsageError(f"{path} is not a decision.json this version reads ({exc})") from None


def decision_evidence(decision_bytes: bytes) -> Evidence:
    """decision.json as the PDF embeds it: the very bytes that were checked."""
    return Evidence("decision.json", decision_bytes, "The recomputed decision this note renders", "Data")


def render_decision_file(decision_path: Path, outdir: Path, evidence_of: EvidenceOf | None = None,
                         language: str | None = None) -> list[Path]:
    """`gpu-audit render`: decision.json to decision-note.html and decision-note.pdf in outdir.

    `evidence_of` gives the files to embed from decision.json's bytes (the caller checks the campaign they come
    from, generator.cli.evidence); without it the note embeds decision.json alone.
    """
    refuse_existing(outdir, (HTML_NAME, PDF_NAME))  # at once, not after a second of rendering (checked again)
    with JsonWorker("generator.render.page.charts") as charts:  # it imports matplotlib meanwhile
        decision, data = load_decision(decision_path)  # the very bytes checked are the ones embedded
        ask_for_charts(charts, decision, language)  # it draws while the campaign is read and WeasyPrint is imported
        evidence = evidence_of(data) if evidence_of is not None else [decision_evidence(data)]
        files = render_note(decision, evidence, language=language, charts=charts, asked=True)
    refuse_existing(outdir, files)  # again: a file may have appeared while the note was rendered
    return write_new_files(outdir, {name: (content, 0o644) for name, content in files.items()}, what="note")
