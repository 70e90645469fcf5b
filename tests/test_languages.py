"""The note in its readers' languages: words from the seeds, numbers and money in their conventions, fonts, PDF/A-3a."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pikepdf
import pytest
from conftest import EXAMPLE, NOTE_LANGUAGES
from note_look import pdf_pages
from pypdf import PdfReader

from generator.render.view import i18n
from generator.render.view.i18n import Formats

LANGS = NOTE_LANGUAGES
NOTE = Path("data") / "decision-note.pdf"
HTML = Path("data") / "decision-note.html"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300, check=False)


@pytest.fixture(scope="module")
def bundles(example_notes: dict[str, Path]) -> dict[str, Path]:
    """`gpu-audit build inputs/example --lang L` for each language, signed, as docs/languages.md shows it (built
    once for the run, tests/conftest.py: the look test reads them too)."""
    return example_notes


def _text(pdf: Path) -> str:
    """The note's text as pypdf extracts it (pdftotext turns a narrow no-break space into a space), with one
    space for each run of ASCII white space (a line break too; no-break spaces stay what they are)."""
    out = "\n".join(page.extract_text() for page in PdfReader(pdf).pages)
    return re.sub(r"[ \t\n\r\f\v]+", " ", out)


def _page(pdf: Path, number: int) -> str:
    """One page's text as pdftotext extracts it, white space collapsed."""
    out = subprocess.run(["pdftotext", "-f", str(number), "-l", str(number), str(pdf), "-"], capture_output=True,
                         text=True, check=True).stdout
    return " ".join(out.split())


def _first_page(pdf: Path) -> str:
    return _page(pdf, 1)


# Each language's words from the seeds (000_* German, 002_* French, 001_* Chinese) and its way of writing
# 2071.00 USD, the B200 lot's price; the campaign total is 110.00 + 2071.00.
EXPECTED = {
    "en": (["Committed budget", "package", "lot", "warm-up"], "2,071.00", "2,181.00"),
    "de": (["Gebundenes Budget", "Paket", "Los", "Aufwärmen", "Kampagnenfenster"], "2.071,00", "2.181,00"),
    "fr": (["Budget engagé", "forfait", "lot", "échauffement", "fenêtre de campagne"], "2\u202f071,00",
           "2\u202f181,00"),
    "zh": (["已承诺预算", "套餐", "批次", "预热"], "2,071.00", "2,181.00"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_the_note_speaks_its_language_and_writes_money_its_way(bundles: dict[str, Path], lang: str) -> None:
    words, price, total = EXPECTED[lang]
    text = _text(bundles[lang] / NOTE)
    for word in words:
        assert word in text, f"{lang}: {word!r} missing"
    assert price in text and total in text
    assert "USD" in text
    if lang != "en":
        assert "Committed budget" not in text and "Question as registered" not in text


@pytest.mark.parametrize("lang", LANGS)
def test_the_first_page_shows_finance_the_packages_the_total_and_the_idle_gpu(bundles: dict[str, Path],
                                                                            lang: str) -> None:
    first = _first_page(bundles[lang] / NOTE)
    _words, price, total = EXPECTED[lang]
    assert price.replace("\u202f", " ") in first.replace("\u202f", " ")
    assert total.replace("\u202f", " ") in first.replace("\u202f", " ")
    assert "rtx4090-batch" in first and "b200-batch" in first
    assert Formats(lang).day("2026-09-24") in first and "2026-09-24" not in first  # the catalogue's date, localised
    assert "gpu-audit verify BUNDLE --trust-fingerprint SHA256:" in first


def test_the_english_first_page_says_what_a_reader_who_pays_must_know(bundles: dict[str, Path]) -> None:
    first = _first_page(bundles["en"] / NOTE)
    assert "What to pay: the packages rented for the campaign" in first
    assert "Campaign total committed, what the invoice should show: USD 2,181.00, the sum of 2 packages" in first
    rows = [" ".join(w.text for w in line) for line in pdf_pages(bundles["en"] / NOTE)[0].lines()]  # as seen
    assert any(row.startswith("b200-batch B200 7 days 1 2 USD 2,071.00 USD 2,071.00") for row in rows), rows
    assert "B200 (b200-batch): 2 GPUs were paid for (1 x 2 GPUs per lot), but its runs used 1." in first
    assert "Signed by Example Org (PAdES certification" in first
    assert "Lot The unit the provider rents" in first  # the term defined where it first appears


def test_german_and_french_group_and_separate_as_babel_says() -> None:
    assert Formats("de").usd(207100) == "2.071,00\u00a0USD"
    assert Formats("fr").usd(207100) == "2\u202f071,00\u00a0USD"
    assert Formats("en").usd(207100) == "USD\u00a02,071.00"
    assert Formats("en").usd("6903.33") == "USD\u00a069.03"  # cents with decimals, exact
    assert Formats("de").usd(10**20 + 1) == "1.000.000.000.000.000.000,01\u00a0USD"  # no float on the way


@pytest.mark.parametrize("value,expected", [
    (38_200_000, "36.43\u00a0MiB"), (40_200_000, "38.34\u00a0MiB"), (2**30, "1.00\u00a0GiB"), (None, "\u2014"),
])
def test_memory_keeps_small_differences_visible(value: int | None, expected: str) -> None:
    assert Formats("en").memory(value) == expected


def test_dates_are_shown_in_the_window_time_zone() -> None:
    assert Formats("de").moment("2026-09-30T08:00:00Z", "Europe/Paris") == "30. Sept. 2026, 10:00 (Europe/Paris)"
    assert Formats("en").moment("2026-10-05T09:00", "Europe/Paris") == "Oct 5, 2026, 09:00 (Europe/Paris)"


def test_a_catalogue_date_is_written_the_readers_way_and_anything_else_as_written() -> None:
    assert [Formats(lang).day("2026-09-24") for lang in LANGS] == [
        "Sep 24, 2026", "24. Sept. 2026", "24 sept. 2026", "2026年9月24日"]
    assert Formats("de").day("Ende September") == "Ende September" and Formats("de").day(None) == "\u2014"


@pytest.mark.parametrize("lang", LANGS)
def test_every_font_is_embedded_as_a_subset(bundles: dict[str, Path], lang: str) -> None:
    listing = subprocess.run(["pdffonts", str(bundles[lang] / NOTE)], capture_output=True, text=True,
                             check=True).stdout.splitlines()[2:]
    assert listing
    for line in listing:
        emb, sub = line.split()[-5], line.split()[-4]
        assert (emb, sub) == ("yes", "yes"), line
        assert re.match(r"[A-Z]{6}\+", line), line  # a subset's tag
    names = " ".join(line.split()[0] for line in listing)
    assert ("Noto-Sans-CJK-SC" in names) == (lang == "zh")
    assert not re.search(r"CJK-(JP|KR|TC|HK)", names), names  # no fallback face: the placeholder in code too


def test_the_chinese_note_extracts_as_chinese(bundles: dict[str, Path]) -> None:
    text = _text(bundles["zh"] / NOTE)
    assert "预先登记的问题" in text and "已承诺预算" in text and "套餐" in text
    assert "\ufffd" not in text


@pytest.mark.parametrize("lang", LANGS)
def test_the_pdf_is_pdfa3a_tagged_with_its_language(bundles: dict[str, Path], lang: str) -> None:
    with pikepdf.open(bundles[lang] / NOTE) as pdf:
        meta = pdf.open_metadata()
        assert meta.get("pdfaid:part") == "3" and meta.get("pdfaid:conformance") == "A"
        assert pdf.Root.MarkInfo.Marked is True
        assert "/StructTreeRoot" in pdf.Root
        assert str(pdf.Root.Lang).startswith("zh" if lang == "zh" else lang)


def test_each_chart_has_a_text_alternative_that_states_its_data(bundles: dict[str, Path]) -> None:
    html = (bundles["en"] / HTML).read_text(encoding="utf-8")
    alts = re.findall(r'<img class="chart" src="data:[^"]*" alt="([^"]*)"', html)
    assert len(alts) == 2
    assert "rtx4090-batch/b4: median warm time 40.010\u00a0s, fastest 39.868\u00a0s, slowest 42.128\u00a0s" in alts[0]
    assert "rtx4090-batch/b8:" in alts[1] and "MiB" in alts[1] or "GiB" in alts[1]


def test_the_protocol_chooses_the_language(tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, campaign)
    protocol = json.loads((campaign / "protocol.json").read_text(encoding="utf-8"))
    (campaign / "protocol.json").write_text(json.dumps({**protocol, "language": "fr"}), encoding="utf-8")
    decision = tmp_path / "decision.json"
    assert _cli("check", str(campaign), "--out", str(decision)).returncode == 0
    assert json.loads(decision.read_text(encoding="utf-8"))["campaign"]["language"] == "fr"
    out = tmp_path / "note"
    out.mkdir()
    assert _cli("render", str(decision), "-o", str(out)).returncode == 0
    assert "Question telle qu'enregistrée" in _text(out / "decision-note.pdf")
    again = tmp_path / "note-en"
    again.mkdir()
    assert _cli("render", str(decision), "-o", str(again), "--lang", "en").returncode == 0  # --lang overrides
    assert "Question as registered" in _text(again / "decision-note.pdf")


def test_an_unknown_language_in_the_protocol_is_a_finding(campaign: Path, run_cli) -> None:
    protocol = json.loads((campaign / "protocol.json").read_text(encoding="utf-8"))
    (campaign / "protocol.json").write_text(json.dumps({**protocol, "language": "es"}), encoding="utf-8")
    r = run_cli("check", str(campaign))
    assert r.code == 1 and "language" in r.out + r.err


def test_an_unknown_language_option_is_a_usage_error(run_cli) -> None:
    r = run_cli("build", str(EXAMPLE), "-o", "/nonexistent/x", "--unsigned", "--lang", "es")
    assert r.code == 2 and "--lang" in r.err


def test_a_missing_font_is_exit_2_with_one_line_before_anything_is_written(tmp_path: Path) -> None:
    conf = tmp_path / "fonts.conf"  # a fontconfig that knows no font at all
    conf.write_text('<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
                    f"<cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>", encoding="utf-8")
    out = tmp_path / "bundle"
    r = _cli("build", str(EXAMPLE), "-o", str(out), "--unsigned", "--lang", "zh", "--quiet",
             env={"FONTCONFIG_FILE": str(conf)})
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Noto Sans CJK SC" in r.stderr and "fonts-noto-cjk" in r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


def test_a_missing_catalogue_is_an_environment_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.core.errors import EnvironmentProblemError

    monkeypatch.setattr(i18n, "locale_dir", lambda: tmp_path)
    with pytest.raises(EnvironmentProblemError, match="catalogue of the note is not compiled"):
        i18n.translations("de")
    assert i18n.translations("en").gettext("Committed budget") == "Committed budget"


def test_plurals_are_right_in_every_language() -> None:
    for lang in ("en", "de", "fr"):
        catalogue = i18n.translations(lang)
        one = catalogue.ngettext("%(num)s failed run", "%(num)s failed runs", 1) % {"num": 1}
        two = catalogue.ngettext("%(num)s failed run", "%(num)s failed runs", 2) % {"num": 2}
        assert one != two.replace("2", "1"), lang
    assert i18n.translations("fr").ngettext("%(num)s day", "%(num)s days", 1) % {"num": 1} == "1\u00a0jour"


def _structure(node: object, out: list[pikepdf.Dictionary]) -> list[pikepdf.Dictionary]:
    """The structure elements of a tagged PDF in document (reading) order."""
    if isinstance(node, pikepdf.Dictionary) and "/S" in node:
        out.append(node)
    kids = node.get("/K") if isinstance(node, pikepdf.Dictionary) else None
    for kid in kids if isinstance(kids, pikepdf.Array) else [kids] if isinstance(kids, pikepdf.Dictionary) else []:
        _structure(kid, out)
    return out


@pytest.mark.parametrize("lang", ("de", "zh"))
def test_the_reading_order_follows_the_note(bundles: dict[str, Path], lang: str) -> None:
    with pikepdf.open(bundles[lang] / NOTE) as pdf:
        elements = _structure(pdf.Root.StructTreeRoot, [])
        tags = [str(e.S) for e in elements]
        alts = [str(e.Alt) for e in elements if str(e.S) == "/Figure"]
    html = (bundles[lang] / HTML).read_text(encoding="utf-8")
    assert [t for t in tags if re.fullmatch(r"/H[1-3]", t)] == ["/" + h.upper() for h in re.findall(r"<(h[1-3])", html)]
    assert tags.count("/TH") >= 40 and tags.count("/Table") >= html.count("<table")  # a table split by a page: two
    assert len(alts) == 2 and all("rtx4090-batch/b4" in alt for alt in alts)  # the charts' data, in words


def test_a_cut_text_says_so_in_the_note_language() -> None:
    from generator.render.view.filters import finalize_in

    german = finalize_in(i18n.translations("de").gettext, Formats("de").count)
    assert str(german("y" * 5000)).endswith("[gekürzt: 5.000 Zeichen; der ganze Text steht in decision.json]")


@pytest.mark.parametrize("lang", LANGS)
def test_a_signed_note_never_hands_its_own_fingerprint_to_verify(lang: str, bundles: dict[str, Path]) -> None:
    """A forged note would hand over its forger's fingerprint: the command asks for the signer's own."""
    from generator.render.page.note import render_html
    from generator.render.view.finance import Signature

    decision = json.loads((bundles["en"] / "data" / "decision.json").read_text(encoding="utf-8"))
    fingerprint = "ab" * 32
    html = render_html(decision, signature=Signature("certified", "CN=Someone", fingerprint), language=lang)
    assert fingerprint in html  # shown, to compare with the one the signer sent
    assert f"--trust-fingerprint SHA256:{fingerprint}" not in html  # never as the command to copy
    assert "gpu-audit verify BUNDLE --trust-fingerprint SHA256:&lt;" in html


# The three limits the seeds put on the evidence (003 'Wiederholen und Fehlschläge beibehalten', 'Speicher als
# Machbarkeitskriterium nutzen'; 004 §3, §4), in the note's language.
LIMITS = {
    "en": ("they do not prove stability over a longer period", "not other processes, not memory outside that "
           "allocator, not any other GPU", "proves neither availability nor a reservation"),
    "de": ("sie beweisen nicht die Stabilität über einen längeren Zeitraum", "keine anderen Prozesse, keinen "
           "Speicher außerhalb dieses Allocators, keine andere GPU", "belegt weder Verfügbarkeit noch eine "
           "Reservierung"),
}


@pytest.mark.parametrize("lang", sorted(LIMITS))
def test_the_note_states_what_its_evidence_does_not_show(bundles: dict[str, Path], lang: str) -> None:
    text = _text(bundles[lang] / NOTE)
    for limit in LIMITS[lang]:
        assert limit in text, f"{lang}: {limit!r} missing"


# The last words of the glossary, the end of page 1's finance block, in each language.
GLOSSARY_END = {"en": "timed for the comparison.", "de": "für den Vergleich gemessenen Durchläufe.",
                "fr": "chronomètre pour la comparaison.", "zh": "用于比较的计时取自这些运行。"}


@pytest.mark.parametrize("lang", LANGS)
def test_page_one_holds_the_answer_the_finance_block_and_the_glossary_whole(bundles: dict[str, Path],
                                                                            lang: str) -> None:
    """Measured on the signed note, whose signature block is the longest page 1 has (issue 37, item 1)."""
    first, second = (_page(bundles[lang] / NOTE, n).replace(" ", "") for n in (1, 2))
    assert GLOSSARY_END[lang].replace(" ", "") in first
    assert EXPECTED[lang][2].replace("\u202f", "") in first.replace("\u202f", "")  # the campaign total
    assert GLOSSARY_END[lang].replace(" ", "") not in second


def _unhyphenated_breaks(pdf: Path) -> list[str]:
    """Words the PDF breaks across two lines without a hyphen: a line ending in letters and the next starting
    with lower-case letters whose join is a word of the note while one part never occurs but at such breaks.
    A word that occurs only where it is cut (a header of one narrow column) escapes it: look at the pages too.
    Identifiers and code break at their separators, which this does not count."""
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    lines = [line.strip() for line in text.splitlines()]
    pairs = []
    for above, below in zip(lines, lines[1:], strict=False):
        end, start = re.search(r"([^\W\d_]+)$", above), re.match(r"([^\W\d_]+)", below)
        if end and start and start.group(1)[0].islower():
            pairs.append((end.group(1), start.group(1)))
    words = Counter(re.findall(r"[^\W\d_]+", text))
    ends, starts = Counter(first for first, _ in pairs), Counter(second for _, second in pairs)
    alone = {b for b in starts if words[b] <= starts[b]}  # second parts never seen as words of their own
    return [f"{a}|{b}" for a, b in pairs if words[a + b] and (words[a] <= ends[a] or b in alone)]


@pytest.mark.parametrize("lang", LANGS)
def test_no_word_is_broken_without_a_hyphen(bundles: dict[str, Path], lang: str) -> None:
    assert _unhyphenated_breaks(bundles[lang] / NOTE) == []


def test_the_break_finder_finds_a_word_cut_without_a_hyphen(tmp_path: Path) -> None:
    """A header cut anywhere, as issue 37 showed in French ("avant l'échéa|nce"), is found; a whole one is not."""
    from weasyprint import HTML

    page = ('<html lang="fr"><body><p>avant l\'échéance</p><table style="width:14mm;table-layout:fixed"><tr>'
            '<th style="overflow-wrap:anywhere;font-size:12pt">avant l\'échéance</th></tr></table></body></html>')
    HTML(string=page).write_pdf(tmp_path / "cut.pdf")
    assert "avan|t" in _unhyphenated_breaks(tmp_path / "cut.pdf")
    page = page.replace("overflow-wrap:anywhere", "hyphens:auto").replace("14mm", "60mm")
    HTML(string=page).write_pdf(tmp_path / "whole.pdf")
    assert _unhyphenated_breaks(tmp_path / "whole.pdf") == []


def test_chinese_sentences_end_and_list_with_chinese_punctuation(example_decision: Path) -> None:
    """The marks the template puts between translated pieces are full-width in Chinese: no "（作为失败保留）." or
    "5 次计时运行成功, 0 次失败" (issue 37, item 2); the other languages keep theirs."""
    from generator.render.page.note import render_html

    decision = json.loads(example_decision.read_text(encoding="utf-8"))
    text = {lang: " ".join(html.unescape(re.sub(r"<[^>]+>", " ", render_html(decision, language=lang)
                                                   .split("<body>")[1])).split()) for lang in ("zh", "en")}
    assert re.findall(r"[\u3400-\u9fff\uff09\u3002][,;.](?= |$)", text["zh"]) == []
    assert "（作为失败保留）。" in text["zh"] and "5 次计时运行成功，0 次失败" in text["zh"]
    assert "(kept as a failure)." in text["en"] and "5 timed runs succeeded, 0 failed" in text["en"]


def test_english_is_tagged_us_and_hyphenates_no_header(bundles: dict[str, Path]) -> None:
    """pyphen's plain "en" is British and broke headers as "accep-ted" and "admiss-ible" (issue 37, item 2): the
    note is tagged en-US, whose patterns WeasyPrint would use. Headers are no longer hyphenated at all ("pack-/age",
    "accept-/ed", issue 50): no word of the note ends a line with the hyphen WeasyPrint draws."""
    text = subprocess.run(["pdftotext", str(bundles["en"] / NOTE), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert re.findall(r"([^\W\d_]+)\u2010\n([^\W\d_]+)", text) == []
    assert '<html lang="en-US">' in (bundles["en"] / HTML).read_text(encoding="utf-8")
