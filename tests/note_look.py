"""What a reader sees on each page of a rendered note, and the detectors of what a reader should never see there:
Python reprs, None/True/False, slugs where a name exists, untranslated catalogue text, a header broken inside a
word, a label alone at a page's foot (issue 50, item 5). tests/test_note_look.py runs them."""

from __future__ import annotations

import csv
import html
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from babel.messages.pofile import read_po

from generator.core.metrics import METRICS

LOCALE = Path(__file__).resolve().parents[1] / "generator" / "render" / "locale"
FOOT = 16 / 25.4 * 72  # the page's bottom margin (templates/note.css): below it is the running footer
SIDE = 14 / 25.4 * 72  # its left and right margins
HYPHENS = "-\u2010"  # a hyphen as written, and the one WeasyPrint draws where it hyphenates a word
XHTML = "{http://www.w3.org/1999/xhtml}"


@dataclass(frozen=True)
class Word:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Page:
    """One page: its words in pdftotext's reading order, the footer's apart, and the number a reader sees."""
    number: int
    width: float
    height: float
    words: tuple[Word, ...]
    footer: tuple[Word, ...] = ()

    def text(self) -> str:
        return " ".join(self.tokens())

    def tokens(self) -> list[str]:
        return [w.text for w in (*self.words, *self.footer)]

    def lines(self) -> list[list[Word]]:
        """The body's words by visual line, top to bottom, left to right: a line across the page's columns."""
        lines: list[list[Word]] = []
        for word in sorted(self.words, key=lambda w: (w.y0, w.x0)):
            if lines and abs(lines[-1][0].y0 - word.y0) < 0.6:
                lines[-1].append(word)
            else:
                lines.append([word])
        return [sorted(line, key=lambda w: w.x0) for line in lines]


@dataclass(frozen=True)
class Problem:
    detector: str
    page: int
    what: str

    def __str__(self) -> str:
        return f"page {self.page}: {self.detector}: {self.what}"


def pdf_pages(pdf: Path) -> list[Page]:
    """Every page's words with their boxes (points from the top left), as `pdftotext -bbox-layout` finds them."""
    out = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True, check=True).stdout
    pages = []
    for number, page in enumerate(ET.fromstring(out).iter(XHTML + "page"), start=1):
        width, height = float(page.get("width", "0")), float(page.get("height", "0"))
        words = [Word(w.text or "", *(float(w.get(k, "0")) for k in ("xMin", "yMin", "xMax", "yMax")))
                 for w in page.iter(XHTML + "word")]
        pages.append(Page(number, width, height, tuple(w for w in words if w.y0 < height - FOOT),
                          tuple(w for w in words if w.y0 >= height - FOOT)))
    return pages


@dataclass(frozen=True)
class NoteText:
    """What a note's HTML says about its own words: its headers, its labels and headings, and the texts it quotes
    as written (registered by the campaign, written in the grid, or recorded by gpu-audit's report in English)."""
    headers: frozenset[str]
    labels: frozenset[str]
    quoted: frozenset[tuple[str, ...]]  # every run of SPAN words of the passages quoted as written
    technical: tuple[str, ...]  # the headings from which on the note is a record for whoever fixes the files


def _cells(source: str, tag: str) -> set[str]:
    found = re.findall(rf"<{tag}\b[^>]*>(.*?)</{tag}>", source, re.S)
    return {" ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split()) for cell in found} - {""}


def _quoted(decision: dict[str, object]) -> Iterator[str]:
    """The decision's texts that the note shows as written: the registered campaign, experiments and rule, the
    grid's notes and the findings (gpu-audit's report, in English)."""
    def strings(value: object) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
    experiments = decision.get("experiments") or []
    assert isinstance(experiments, list)
    configurations = decision.get("configurations") or []
    assert isinstance(configurations, list)
    yield from strings(decision.get("campaign"))
    yield from strings(decision.get("rule"))
    yield from strings(decision.get("findings"))
    yield from strings([{k: e.get(k) for k in ("description", "fixed", "warmup")} for e in experiments])
    yield from strings([[r.get("notes") for r in c.get("runs") or []] for c in configurations])


SPAN = 4


def note_text(note_html: Path, decision: dict[str, object], technical: Iterable[str]) -> NoteText:
    source = note_html.read_text(encoding="utf-8")
    quoted = {tuple(words[i:i + SPAN]) for words in ([_bare(w) for w in s.split()] for s in _quoted(decision))
              for i in range(len(words) - SPAN + 1)}
    return NoteText(frozenset(_cells(source, "th")), frozenset(_cells(source, "dt") | _cells(source, "h[2-4]")),
                    frozenset(quoted), tuple(technical))


def _bare(word: str) -> str:
    """A word without the separator the note puts after a quoted passage it lists ("truncation);" of "a; b")."""
    return word.rstrip(";；,，:：。.")


def _masked(words: list[str], quoted: frozenset[tuple[str, ...]]) -> str:
    """The words as one text, each run of SPAN words that a quoted passage holds blanked out (NUL characters,
    which no detector matches): a passage the note cuts, or that a page or a table's columns interleave, too."""
    hidden, bare = [False] * len(words), [_bare(w) for w in words]
    for i in range(len(words) - SPAN + 1):
        if tuple(bare[i:i + SPAN]) in quoted:
            hidden[i:i + SPAN] = [True] * SPAN
    return " ".join("\0" * len(w) if h else w for w, h in zip(words, hidden, strict=True))


def _reader_part(pages: list[Page], note: NoteText) -> list[tuple[int, str]]:
    """Each page's text up to the first technical heading (a line of its own), quoted passages blanked."""
    parts = []
    for page in pages:
        starts = [line[0] for line in page.lines() if " ".join(w.text for w in line) in note.technical]
        if starts:
            parts.append((page.number, _masked([w.text for w in page.words[:page.words.index(starts[0])]],
                                               note.quoted)))
            break
        parts.append((page.number, _masked(page.tokens(), note.quoted)))
    return parts


REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>|<class '|\{'|\['|'\]|'\}")


def find_reprs(pages: list[Page]) -> list[Problem]:
    """A Python repr anywhere: `<... object at 0x...>`, `{'`, `['`."""
    return [Problem("Python repr", p.number, _around(p.text(), m.start(), m.end()))
            for p in pages for m in REPR.finditer(p.text())]


def find_python_words(pages: list[Page], note: NoteText) -> list[Problem]:
    """None, True or False as Python prints them: anywhere but where a sentence of prose begins with the word
    ("None of the runs ..."): "Errors (0) None." or a cell that says "None" are Python's words, not the reader's."""
    found = []
    texts = [(p.number, _masked([w.text for w in part], note.quoted)) for p in pages for part in (p.words, p.footer)]
    for number, text in texts:
        for m in re.finditer(r"\b(None|True|False)\b", text):
            prose = re.search(r"(^|[.!?:]\s)$", text[:m.start()]) and re.match(r" [a-z]", text[m.end():])
            if not prose:
                found.append(Problem("Python's " + m.group(1), number, _around(text, m.start(), m.end())))
    return found


def gpu_slugs(campaign: Path, decision: dict[str, object]) -> dict[str, str]:
    """The campaign's GPU slugs that have a model name, slug -> name: its tariffs' model_name, else the GPU model
    its configurations measured."""
    configurations = decision.get("configurations") or []
    assert isinstance(configurations, list)
    names = {c["gpu"]: c["environment"]["gpu_model"] for c in configurations
             if c.get("gpu") and (c.get("environment") or {}).get("gpu_model")}
    with (campaign / "tarifs-forfaits.csv").open(encoding="utf-8", newline="") as fh:
        names.update({r["gpu"]: r["model_name"] for r in csv.DictReader(fh) if r.get("model_name")})
    return {slug: name for slug, name in names.items() if slug != name}


def find_slugs(pages: list[Page], note: NoteText, slugs: dict[str, str]) -> list[Problem]:
    """A GPU slug of the tariffs where its model name belongs, or a metric's slug (macro_f1) where its reader's
    name does (macro-F1), before the technical part; quoted passages are as they were written."""
    names = {**slugs, **{m.slug: m.name for m in METRICS.values() if m.slug != m.name}}
    found = []
    for number, text in _reader_part(pages, note):
        for slug, name in names.items():
            for m in re.finditer(rf"(?<![\w./-]){re.escape(slug)}(?![\w/-])", text):
                found.append(Problem(f"slug {slug} (say {name})", number, _around(text, m.start(), m.end())))
    return found


def catalogue_phrases(language: str) -> set[str]:
    """The English phrases of the note's catalogue that `language` translates: each msgid's literal runs between
    its placeholders that its translation does not keep as they are, of three words or more, or of one or two
    words and seven letters or more ("rotated"; "ok" or "batch" would be found in every identifier)."""
    with (LOCALE / language / "LC_MESSAGES" / "messages.po").open("rb") as fh:
        catalogue = read_po(fh)
    phrases = set()
    for message in catalogue:
        ids = [str(i) for i in (message.id if isinstance(message.id, (tuple, list)) else [message.id])]
        strings = [str(s) for s in (message.string if isinstance(message.string, (tuple, list)) else
                                    [message.string or ""])]
        if not message.id or not any(strings) or message.fuzzy:
            continue
        for msgid in ids:
            for run in re.split(r"%\(\w+\)[sd]|\{\w+\}|<[^>]*>|\"", msgid):
                run = " ".join(run.strip(" .,;:()").split())
                words = re.findall(r"[A-Za-z]+", run)
                long = len(words) >= 3 or (words and len(run) >= 7 and re.fullmatch(r"[A-Za-z ]+", run))
                if long and not any(run in s for s in strings):
                    phrases.add(run)
    return phrases


def find_untranslated(pages: list[Page], note: NoteText, phrases: set[str]) -> list[Problem]:
    """A catalogue's English phrase verbatim in a note of another language, outside the passages quoted as
    written (the registered title, question and notes, the grid's notes, the report's English findings). A
    phrase of one or two words is looked for before the technical part only, whose fields are as files write
    them ("precision = bfloat16")."""
    reader = dict(_reader_part(pages, note))
    found = []
    for page in pages:
        text = _masked(page.tokens(), note.quoted)
        for phrase in phrases:
            where = text if len(phrase.split()) >= 3 else reader.get(page.number, "")
            for m in re.finditer(rf"(?<![\w./-]){re.escape(phrase)}(?![\w/-])", where):
                found.append(Problem("untranslated", page.number, _around(where, m.start(), m.end())))
    return found


def find_broken_headers(pages: list[Page], note: NoteText) -> list[Problem]:
    """A table header cut inside a word: a line of a cell ending in part of a header's word, with or without a
    hyphen, the rest in lower case on the next line(s) of the same cell ("accept-" / "ed", "Fehl-" / "schlä" /
    "ge"). A word hyphenated as written and cut at its hyphen ("warm-" / "up") is whole."""
    words = {w.casefold() for h in note.headers for w in re.findall(r"[^\W\d_]+", h)}
    prefixes = {w[:i] for w in words for i in range(1, len(w))}
    found = []
    for page in pages:
        runs = _runs(page)
        ends = {id(run[-1]) for run in runs}
        for word in page.words:
            cut = re.fullmatch(rf"([^\W\d_]+)([{HYPHENS}]?)", word.text)
            if not cut or cut.group(1).casefold() not in prefixes or not (cut.group(2) or id(word) in ends):
                continue
            pieces, joined, current = [word.text], cut.group(1), word
            while joined.casefold() in prefixes and (below := _next_line(runs, current)):
                rest = re.fullmatch(rf"([^\W\d_]+)[{HYPHENS}]?", below.text) or re.match(r"[^\W\d_]+", below.text)
                if not rest or not rest.group()[0].islower():
                    break
                pieces.append(below.text)
                joined += rest.group(1) if rest.groups() else rest.group()
                current = below
            if len(pieces) > 1 and joined.casefold() in words:
                found.append(Problem("header broken inside a word", page.number, " / ".join(pieces)))
    return found


def _runs(page: Page) -> list[list[Word]]:
    """The body's lines cut into runs of words a space apart: a table row's line, one run per cell."""
    runs = []
    for line in page.lines():
        runs.append([line[0]])
        for word in line[1:]:
            if word.x0 - runs[-1][-1].x1 < 0.5 * (word.y1 - word.y0):
                runs[-1].append(word)
            else:
                runs.append([word])
    return runs


def _next_line(runs: list[list[Word]], word: Word) -> Word | None:
    """The word that begins the next line of `word`'s cell: the run just below it that starts where word's run
    starts (a header set left) or ends where it ends (set right)."""
    mine = next(run for run in runs if any(w is word for w in run))
    height = word.y1 - word.y0
    for run in runs:
        if word.y0 + 0.5 * height < run[0].y0 < word.y0 + 1.8 * height and (
                abs(run[0].x0 - mine[0].x0) < 1.5 or abs(run[-1].x1 - mine[-1].x1) < 1.5):
            return run[0]
    return None


def find_labels_alone(pages: list[Page], note: NoteText) -> list[Problem]:
    """A label or heading that is the last thing on a page, nothing beside it, while the note goes on: its value
    or its section begins on the next page. A label may wrap: its last one, two or three lines are tried."""
    found = []
    for page in pages[:-1]:
        lines = page.lines()
        for count in (1, 2, 3):
            text = " ".join(w.text for line in lines[-count:] for w in line)
            if text in note.labels:
                found.append(Problem("label alone at the page's foot", page.number, text))
                break
    return found


def find_overflows(pages: list[Page]) -> list[Problem]:
    """Text that runs out of the page's margins (a table wider than the page), or over its neighbour on the same
    line (a cell's word wider than its column)."""
    found = []
    for page in pages:
        for word in page.words:
            if word.x0 < SIDE - 1 or word.x1 > page.width - SIDE + 1:
                found.append(Problem("outside the margins", page.number, word.text))
        for line in page.lines():
            found += [Problem("over its neighbour", page.number, f"{a.text} / {b.text}")
                      for a, b in zip(line, line[1:], strict=False) if a.x1 > b.x0 + 0.5]
    return found


def _around(text: str, start: int, end: int) -> str:
    return " ".join(text[max(0, start - 40):end + 40].replace("\0", "").split())
