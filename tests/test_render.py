"""`gpu-audit render`: the note's content, its reproducibility, PDF/A-3 evidence and safety against injected input."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from urllib import request

import jinja2
import pytest
from conftest import EXAMPLE, read_grid, real_workers, set_cell, write_grid
from PIL import Image
from pypdf import PdfReader

from generator.audit.recompute.decision.decisionfile import read_decision
from generator.audit.recompute.decision.model import FindingRef
from generator.render.page import charts, note
from generator.render.page.note import (
    HTML_NAME,
    PDF_NAME,
    _fetcher,
    environment,
    render_html,
    render_note,
    render_pdf,
)
from generator.render.view.view import chart_request


@pytest.fixture(scope="module")
def rendered(example_decision: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from generator.cli.main import main

    outdir = tmp_path_factory.mktemp("note")
    with pytest.MonkeyPatch.context() as patch:
        real_workers(patch)  # drawn by the chart worker: test_charts_drawn_by_the_worker_process_equal_those_drawn_here
        assert main(["render", str(example_decision), "-o", str(outdir), "--campaign", str(EXAMPLE)]) == 0
    return outdir


@pytest.fixture(scope="module")
def plain_note(example_decision: Path) -> dict[str, bytes]:
    """The example's note rendered here with no evidence and no chart worker: what a rendering whose worker
    failed must equal."""
    return render_note(json.loads(example_decision.read_text()), [])


def pdf_text(path: Path) -> list[str]:
    return [page.extract_text() for page in PdfReader(str(path)).pages]


def test_first_page_answers_the_question(rendered: Path, example_decision: Path) -> None:
    pages = pdf_text(rendered / PDF_NAME)
    first = " ".join(pages[0].split())
    assert "Answer: GeForce RTX 4090, batch 4 configuration rtx4090-batch/b4" in first
    assert ("Committed budget USD 110.00 (part of the campaign total below, not a second amount) the whole 7-day "
            "package of GeForce RTX 4090: 1 x USD 110.00 per lot") in first
    assert "Cost per accepted result USD 110.00" in first
    assert "the timing runs separate the two clearly" in first
    # the one warning: the example's registration is declared, not sealed (issue 48)
    assert "No error finding (1 warning): every claim checked agrees with the evidence." in first
    assert "Registration: declared, not sealed." in first
    assert "SYNTHETIC DATA" in first
    assert f"page 1 of {len(pages)}" in first
    decision = json.loads(example_decision.read_text())
    from generator.render.view.view import bundle_id

    assert bundle_id(decision) in first


def test_figures_and_sections_are_in_the_pdf(rendered: Path) -> None:
    text = " ".join(" ".join(pdf_text(rendered / PDF_NAME)).split())
    for expected in ("The pre-registered rule", "96 h on the real timeline",
                     "Smallest package that covers the window: 7 days", "USD 2,071.00",
                     "No p95 or other tail percentile for rtx4090-batch/b8: 4 warm runs are too few",
                     "No error finding.", "Warnings (1)", "Input files (SHA-256)", "NVIDIA GeForce RTX 4090",
                     "GeForce RTX 4090, batch 8 (rtx4090-batch/b8): ran out of GPU memory in 1 run "
                     "(kept as a failure)."):
        assert expected in text, expected


def pdf_images(pdf: Path) -> list[list[str]]:
    """`pdfimages -list`'s rows: page, number, type, width, height, colour, ..., x-ppi (12), y-ppi, ..."""
    listing = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True).stdout
    return [line.split() for line in listing.splitlines()[2:]]


def test_charts_are_svg_in_the_html_and_greyscale_images_in_the_pdf(rendered: Path) -> None:
    import re

    html = (rendered / HTML_NAME).read_text()
    svgs = [base64.b64decode(u).decode() for u in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)]
    assert len(svgs) == 2
    assert "failed runs: 1" in svgs[0] and "(no duration)" in svgs[0]  # the failed b8 run, named, not at 0
    assert "peak allocated (part of reserved)" in svgs[1] and "failed" in svgs[1]
    images = pdf_images(rendered / PDF_NAME)
    assert [(cols[0], cols[5]) for cols in images] == [("4", "gray"), ("6", "gray")]  # page, colour space
    assert all(int(cols[12]) >= 150 for cols in images)  # x-ppi as placed on the page: sharp when printed


def test_renders_are_byte_identical(example_decision: Path, tmp_path: Path, rendered: Path) -> None:
    from generator.cli.main import main

    assert main(["render", str(example_decision), "-o", str(tmp_path), "--campaign", str(EXAMPLE)]) == 0
    assert (tmp_path / HTML_NAME).read_bytes() == (rendered / HTML_NAME).read_bytes()
    assert (tmp_path / PDF_NAME).read_bytes() == (rendered / PDF_NAME).read_bytes()


def test_pdf_is_pdfa3a_with_evidence_attached(rendered: Path, example_decision: Path) -> None:
    reader = PdfReader(str(rendered / PDF_NAME))
    root: Any = reader.trailer["/Root"]
    xmp = root["/Metadata"].get_object().get_data().decode()
    assert 'pdfaid:part="3"' in xmp or "<pdfaid:part>3</pdfaid:part>" in xmp
    assert 'pdfaid:conformance="A"' in xmp or "<pdfaid:conformance>A</pdfaid:conformance>" in xmp
    relationships = {}
    for spec in root["/AF"]:
        spec = spec.get_object()
        relationships[spec["/F"]] = spec["/AFRelationship"]
    assert relationships == {"decision.json": "/Data", "resultats-bruts.csv": "/Source", "protocol.json": "/Source"}
    assert reader.attachments["decision.json"][0] == example_decision.read_bytes()
    assert reader.attachments["resultats-bruts.csv"][0] == (EXAMPLE / "resultats-bruts.csv").read_bytes()


def test_html_is_self_contained(rendered: Path) -> None:
    html = (rendered / HTML_NAME).read_text()
    assert "<style>" in html and 'src="data:image/svg+xml;base64,' in html
    assert "http://" not in html and "https://" not in html and 'src="file:' not in html


def test_error_findings_show_in_the_title_block(campaign: Path, tmp_path: Path, run_cli) -> None:
    rows = read_grid(campaign)
    set_cell(campaign, 1, "quality_threshold", "0.5")
    out = tmp_path / "d.json"
    assert run_cli("check", str(campaign), "--out", str(out)).code == 1
    html = render_html(json.loads(out.read_text()))
    assert "1 ERROR FINDING: the inputs contradict" in html
    assert "(with 1 error finding)</title>" in html
    assert rows  # the grid was read before mutation


def test_identical_attempts_share_a_row_but_a_failure_never_does(example_decision: Path) -> None:
    from generator.render.view.view import ReadDecision, build_view

    decision = ReadDecision.of(json.loads(example_decision.read_text()))
    rows = [r for r in build_view(decision).acceptance_rows if r.configuration == "rtx4090-batch/b8"]
    assert [(r.attempts, r.outcome, r.count) for r in rows] == [
        ("cold 1, warm 1, 2, 4, 5", "ok", 5), ("warm 3", "oom", 1)]
    b8 = next(c for c in decision.document.configurations if c.id == "rtx4090-batch/b8")
    assert sum(r.count for r in rows) == len(b8.runs) == 6


def test_a_mismatched_claim_gets_its_own_highlighted_row(campaign: Path, tmp_path: Path, run_cli) -> None:
    rows = read_grid(campaign)
    col = rows[0].index
    line = next(i for i, r in enumerate(rows) if i and r[col("experiment_id")] == "rtx4090-batch"
                and r[col("variant_id")] == "b4" and r[col("phase")] == "warm" and r[col("run_index")] == "2")
    set_cell(campaign, line, "quality_value", "0.9990")
    out = tmp_path / "d.json"
    assert run_cli("check", str(campaign), "--out", str(out)).code == 1
    html = render_html(json.loads(out.read_text()))
    assert '<td>rtx4090-batch/b4</td><td>warm 2</td>' in html
    assert '<td class="mismatch">0.9990 / 0.8754</td>' in html
    assert '<td>rtx4090-batch/b4</td><td>cold 1, warm 1, 3\u20135</td>' in html


INJECTED = ('<img src="file:///etc/passwd"> <a href="http://169.254.169.254/latest/meta-data/">x</a> '
            '<script>alert(1)</script> <link rel="stylesheet" href="http://169.254.169.254/s.css">')


def test_injected_html_in_notes_is_text_and_fetches_nothing(campaign: Path, tmp_path: Path, run_cli,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    rows = read_grid(campaign)
    rows[1][-1] = INJECTED
    write_grid(campaign, rows)
    out = tmp_path / "d.json"
    assert run_cli("check", str(campaign), "--out", str(out)).code == 0
    opened: list[str] = []
    original = request.OpenerDirector.open

    def spy(self: request.OpenerDirector, url: Any, *args: Any, **kwargs: Any) -> object:
        full = url if isinstance(url, str) else url.full_url
        opened.append(full)
        return original(self, url, *args, **kwargs)

    monkeypatch.setattr(request.OpenerDirector, "open", spy)
    assert run_cli("render", str(out), "-o", str(tmp_path / "note")).code == 0
    html = (tmp_path / "note" / HTML_NAME).read_text()
    assert "&lt;img src=&#34;file:///etc/passwd&#34;&gt;" in html
    assert "<script>" not in html and '<img src="file:' not in html and "<link" not in html
    assert [u for u in opened if not u.startswith("data:")] == []
    text = " ".join(" ".join(pdf_text(tmp_path / "note" / PDF_NAME)).split())
    assert '<img src="file:///etc/passwd">' in text  # shown as text


def test_fetcher_refuses_everything_but_data_urls() -> None:
    fetcher = _fetcher()
    for url in ("file:///etc/passwd", "http://169.254.169.254/", "https://example.org/x.css", "ftp://h/x"):
        with pytest.raises(ValueError, match="disallowed protocol"):
            fetcher.fetch(url)
    assert fetcher.fetch("data:text/plain,hello").read() == b"hello"


def test_raw_html_reaching_the_pdf_stage_fetches_nothing(example_decision: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []

    def recorded(self: request.OpenerDirector, url: object, *args: object, **kwargs: object) -> io.BytesIO:
        opened.append(str(url))
        return io.BytesIO(b"")

    monkeypatch.setattr(request.OpenerDirector, "open", recorded)
    html = '<html><body><img src="file:///etc/passwd"><img src="http://169.254.169.254/x.png">hi</body></html>'
    pdf = render_pdf(html, read_decision(example_decision.read_bytes()), [])
    assert pdf.startswith(b"%PDF") and opened == []


def test_templates_are_strict_and_escaped() -> None:
    env = environment()
    assert env.autoescape is True or env.autoescape(None) is True  # type: ignore[operator]
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()
    assert env.from_string("{{ x | plain }}").render(x="<b>&") == "&lt;b&gt;&amp;"


@pytest.mark.parametrize("name,value,expected", [
    ("usd", 11000, "USD\u00a0110.00"), ("usd", 207100, "USD\u00a02,071.00"), ("usd", None, "\u2014"),
    ("usd", "69033.33", "USD\u00a0690.33"), ("seconds", 1.5, "1.500\u00a0s"), ("seconds", None, "\u2014"),
    ("memory", 2**30, "1.00\u00a0GiB"), ("memory", 3 * 2**20, "3.00\u00a0MiB"), ("nbytes", 1234567, "1,234,567\u00a0B"),
    ("metric", 0.87667, "0.8767"), ("yesno", True, "yes"), ("yesno", None, "\u2014"), ("plain", False, "false"),
    ("count", 1000, "1,000"), ("finding_where", FindingRef("c", "error", "f.csv", 3, None), "c (f.csv:3)"),
])
def test_filters(name: str, value: object, expected: str) -> None:
    result = environment("en").filters[name](value)
    assert result == expected and type(result) is str


def test_existing_output_is_refused_before_rendering(rendered: Path, example_decision: Path, run_cli,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    before = (rendered / PDF_NAME).read_bytes()
    monkeypatch.setattr(note, "render_note", lambda *a, **k: pytest.fail("rendered into a folder it then refused"))
    r = run_cli("render", str(example_decision), "-o", str(rendered))
    assert r.code == 2 and "already exists" in r.err
    assert (rendered / PDF_NAME).read_bytes() == before


def test_invalid_decision_is_a_usage_error(tmp_path: Path, run_cli) -> None:
    bad = tmp_path / "d.json"
    bad.write_text('{"schema_version": "1"}')
    r = run_cli("render", str(bad), "-o", str(tmp_path / "o"))
    assert r.code == 2 and "is not a valid decision.json" in r.err


def test_charts_drawn_by_the_worker_process_equal_those_drawn_here(rendered: Path, example_decision: Path) -> None:
    from generator.cli.evidence import campaign_evidence
    from generator.render.page.note import render_note

    here = render_note(json.loads(example_decision.read_text()),
                       campaign_evidence(EXAMPLE, example_decision.read_bytes()))
    assert here[HTML_NAME] == (rendered / HTML_NAME).read_bytes()  # `render` used the worker
    assert here[PDF_NAME] == (rendered / PDF_NAME).read_bytes()


WORKERS = {
    # gives the PNG answer, then dies before the SVG one
    "half_charts": "from generator.render.page.charts import draw_json\n"
                   "sys.stdout.write(json.dumps(next(draw_json(json.load(sys.stdin)))) + '\\n')\n"
                   "sys.stdout.flush()\n"
                   "sys.exit(3)\n",
    # well-formed JSON, but no chart where the decision has data
    "empty_charts": "sys.stdin.read()\n"
                    "for _ in range(2):\n"
                    "    sys.stdout.write(json.dumps({'durations': None, 'memory': None}) + '\\n')\n",
}


@pytest.mark.parametrize("module", sorted(WORKERS))
def test_what_a_chart_worker_does_not_give_is_drawn_here(module: str, example_decision: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         plain_note: dict[str, bytes]) -> None:
    from generator.core.system.worker import JsonWorker

    (tmp_path / f"{module}.py").write_text("import json, sys\n" + WORKERS[module])
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    decision = json.loads(example_decision.read_text())
    with JsonWorker(module) as worker:
        files = render_note(decision, [], charts=worker)
    assert files == plain_note
    assert files[HTML_NAME].decode().count('src="data:image/svg+xml;base64,') == 2


def _png_of(url: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def test_the_pdf_shows_the_charts_the_worker_drew_as_data_urls(example_decision: Path, tmp_path: Path) -> None:
    decision = read_decision(example_decision.read_bytes())
    png = [str(url) for url in next(charts.draw(chart_request(decision))).values()]  # durations, memory
    html = f'<p>x</p><img src="{png[0]}"><p>y</p><img src="{png[1]}">'
    pdf = tmp_path / "charts.pdf"
    pdf.write_bytes(render_pdf(html, decision, []))
    shown = [(int(cols[3]), int(cols[4]), cols[5]) for cols in pdf_images(pdf)]
    assert shown == [(*_png_of(url).size, "gray") for url in png]


def _garble(url: str) -> str:
    """The data URL with its PNG cut in half, as a worker killed while writing would leave it."""
    prefix, encoded = url.split(",", 1)
    data = base64.b64decode(encoded)
    return f"{prefix},{base64.b64encode(data[: len(data) // 2]).decode('ascii')}"


def test_a_chart_the_worker_garbled_is_drawn_here(example_decision: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  plain_note: dict[str, bytes]) -> None:
    from generator.core.system.worker import JsonWorker

    decision = json.loads(example_decision.read_text())
    answers = list(charts.draw(chart_request(read_decision(decision))))
    answers[0] = {**answers[0], "memory": _garble(str(answers[0]["memory"]))}
    (tmp_path / "garbled_charts.py").write_text(
        "import sys\nsys.stdin.read()\n" + "".join(f"print({json.dumps(json.dumps(a))})\n" for a in answers))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with JsonWorker("garbled_charts") as worker:
        files = render_note(decision, [], charts=worker)
    assert files == plain_note
    assert files[PDF_NAME].count(b"/Subtype /Image") == 2


def test_a_chart_that_cannot_be_drawn_stops_the_note(example_decision: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.core.system.worker import JsonWorker

    def broken(request: object) -> None:
        raise RuntimeError("no matplotlib")

    monkeypatch.setattr(charts, "draw", broken)
    decision = json.loads(example_decision.read_text())
    with JsonWorker("generator.no_such_module") as worker, pytest.raises(RuntimeError, match="no matplotlib"):
        render_note(decision, [], charts=worker)


def test_a_worker_that_fails_leaves_the_drawing_to_this_process(example_decision: Path) -> None:
    from generator.core.system.worker import JsonWorker

    decision = json.loads(example_decision.read_text())
    with JsonWorker("generator.no_such_module") as broken:
        html = render_note(decision, [], charts=broken)[HTML_NAME].decode()
    assert html == render_html(decision)
    assert html.count('src="data:image/svg+xml;base64,') == 2


def _load_all(env: jinja2.Environment) -> None:
    for name in note.TEMPLATES:
        env.get_template(name)


def test_templates_compiled_ahead_render_the_same_note_in_another_language_without_compiling(
        example_decision: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`build` compiles the templates while the check runs (in English); the note, rendered later in the
    language of the decision, loads that code and compiles nothing, and its bytes are those of a plain rendering."""
    decision = json.loads(example_decision.read_text())
    compiled = note.CompiledTemplates()
    compiled.compile_all()
    plain = render_note(decision, [], language="de")
    compiles: list[str | None] = []
    original = jinja2.Environment.compile

    def counting(self: jinja2.Environment, source: Any, name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        compiles.append(name)
        return original(self, source, name, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    ahead = render_note(decision, [], language="de", compiled=compiled)
    assert compiles == []
    assert ahead == plain and "Entscheidung" in ahead[HTML_NAME].decode()

    # the cache on disk: the first environment compiles and keeps the code there, the next process's loads it
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    _load_all(note.environment("de"))
    assert set(compiles) == set(note.TEMPLATES)  # the counter does see compiling when nothing was compiled before
    cached = sorted((tmp_path / f"_jinja2-cache-{os.getuid()}").iterdir())
    assert len(cached) == 2 and all(p.name.startswith("__gpu_audit_") for p in cached)
    compiles.clear()
    _load_all(note.environment("fr"))
    assert compiles == []
    for path in cached:  # a damaged or foreign file is not code to run: the template is compiled again
        path.write_bytes(b"not Jinja's code")
    _load_all(note.environment("fr"))
    assert set(compiles) == set(note.TEMPLATES)
