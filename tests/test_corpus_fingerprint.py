"""The corpus's content fingerprint (audit's corpusprint): its canonical form, what counts and what does not,
the revision forms that carry it, and two corpora of the same content counted as one (issue 47, item 3)."""

from __future__ import annotations

import csv
import hashlib
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from seed_rules import B4, PROTOCOL, edit_protocol
from seed_rules_corpora import AGAIN, CONTENT, _same_corpus_again, _second_corpus, set_corpus_revision

from generator.audit.check import CheckResult, check_campaign
from generator.audit.load.readers.labelfile import LabelFile
from generator.audit.validate.corpus.corpusprint import fingerprint, revision_check
from generator.render.page.note import render_html

EXAMPLE = Path(__file__).resolve().parent.parent / "inputs" / "example"
NAME = "debian-descriptions-eval@"


def _plain(pairs: list[tuple[str, str]]) -> str:
    """The canonical form, written out in plain Python: the pairs sorted by ID, each `<n>:<id>,<m>:<label>,`."""
    out = []
    for i, label in sorted(pairs, key=lambda p: p[0].encode("utf-8")):
        for value in (i.encode("utf-8"), label.encode("utf-8")):
            out.append(str(len(value)).encode() + b":" + value + b",")
    return "content-sha256:" + hashlib.sha256(b"".join(out)).hexdigest()


def _pairs(path: Path) -> list[tuple[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return [(r["id"], r["label"]) for r in csv.DictReader(fh)]


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    folder = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, folder)
    return folder


def _prints(result: CheckResult) -> list[dict[str, Any]]:
    return list(result.decision["campaign"]["fingerprints"])


def _codes(result: CheckResult) -> list[str]:
    return [f.code for f in result.errors]


def _rewrite(path: Path, *, reverse: bool = True, crlf: bool = True, bom: bool = True, quote: bool = True) -> None:
    """The same rows in another file form: reversed order, CRLF, a BOM, every cell quoted."""
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    body = rows[1:][::-1] if reverse else rows[1:]
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\r\n" if crlf else "\n",
                   quoting=csv.QUOTE_ALL if quote else csv.QUOTE_MINIMAL).writerows([rows[0], *body])


def test_the_form_is_written_out_in_plain_python(campaign: Path) -> None:
    # What check records is the documented form, reproducible without gpu-audit; both readers give it.
    assert _plain(_pairs(campaign / "reference.csv")) == CONTENT
    for fast in (True, False):
        assert _prints(check_campaign(campaign, fast=fast)) == [
            {"revision": NAME + "sha256:c800da8cf964244d", "fingerprint": CONTENT, "revision_check": "absent"}]


def test_the_registered_campaigns_have_the_example_corpus() -> None:
    # inputs/h200-campaign's files differ in bytes from the example's (CRLF expected IDs, another reference file)
    # but hold the same IDs and labels: one content, one fingerprint.
    root = EXAMPLE.parent / "h200-campaign"
    assert (root / "reference.csv").read_bytes() != (EXAMPLE / "reference.csv").read_bytes()
    assert _plain(_pairs(root / "reference.csv")) == CONTENT


def test_row_order_line_endings_bom_and_quoting_do_not_count(campaign: Path) -> None:
    _rewrite(campaign / "reference.csv")
    _rewrite(campaign / "expected-ids.csv", quote=False)
    set_corpus_revision(campaign, NAME + CONTENT)
    for fast in (True, False):
        result = check_campaign(campaign, fast=fast)
        assert _codes(result) == [] and result.decision["decision"]["answer"] == B4
        assert _prints(result)[0]["fingerprint"] == CONTENT and _prints(result)[0]["revision_check"] == "matches"


def test_one_changed_label_changes_it(campaign: Path) -> None:
    path = campaign / "reference.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    i, label = lines[500].rstrip("\n").split(",")
    lines[500] = f"{i},{'games' if label != 'games' else 'net'}\n"
    path.write_text("".join(lines), encoding="utf-8")
    changed = _plain(_pairs(path))
    assert changed != CONTENT
    set_corpus_revision(campaign, NAME + CONTENT[:31])  # the 16-digit form of the fingerprint registered
    result = check_campaign(campaign)
    found = [f for f in result.errors if f.code == "corpus-fingerprint-mismatch"]
    assert [(f.file, f.field, f.claimed, f.recomputed) for f in found] == [
        (PROTOCOL, "/corpus/revision", NAME + CONTENT[:31], changed)]
    assert result.decision["decision"]["answer"] is None
    assert _prints(result)[0] == {"revision": NAME + CONTENT[:31], "fingerprint": changed, "revision_check": "differs"}


@pytest.mark.parametrize(("revision", "check"), [
    (NAME + CONTENT, "matches"),                                   # all 64 hex digits
    (NAME + CONTENT[:31], "matches"),                              # the first 16
    (CONTENT, "matches"),                                          # without a name
    (NAME + "content-sha256:" + CONTENT[15:31].upper(), "matches"),  # hex digits in capitals
    (NAME + CONTENT[:30], "differs"),                              # 15 digits: no form
    (NAME + CONTENT[:32], "differs"),                              # 17 digits: no form
    (NAME + CONTENT[:30] + "0", "differs"),                        # the 16th digit off (it is 6)
    (NAME + CONTENT[:-1] + "0", "differs"),                        # the 64th digit off (it is 4)
    (NAME + "content-sha256:", "differs"),                         # the form, no digits
    (NAME + "content-sha256:" + CONTENT[15:31] + " ", "differs"),  # something after the digits
    (NAME + "sha256:c800da8cf964244d", "absent"),            # campaign run's: the texts file's SHA-256
    ("debian-descriptions eval r1", "absent"),               # a name
])
def test_revision_forms(revision: str, check: str) -> None:
    assert CONTENT[30] == "6" and CONTENT[-1] == "4"
    assert revision_check(revision, CONTENT) == check
    assert revision_check(revision, None) == ("absent" if check == "absent" else "unchecked")


def test_the_full_form_checks_with_no_error(campaign: Path) -> None:
    set_corpus_revision(campaign, NAME + CONTENT)
    result = check_campaign(campaign)
    assert _codes(result) == [] and result.decision["decision"]["answer"] == B4
    html = render_html(result.decision)
    assert CONTENT in html and "the revision carries it" in html


def test_the_note_says_a_revision_without_one_is_not_tied_to_the_files(campaign: Path) -> None:
    html = render_html(check_campaign(campaign).decision)
    assert CONTENT in html and "the revision carries none: it is recorded as written, not tied to these files" in html


def test_an_unsound_reference_is_not_fingerprinted(campaign: Path) -> None:
    # One expected text unlabelled: its own finding withholds the answer; the revision is not called wrong.
    path = campaign / "reference.csv"
    path.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    set_corpus_revision(campaign, NAME + CONTENT)
    result = check_campaign(campaign)
    assert "reference-missing-id" in _codes(result) and "corpus-fingerprint-mismatch" not in _codes(result)
    assert _prints(result) == [{"revision": NAME + CONTENT, "fingerprint": None, "revision_check": "unchecked"}]


def test_the_same_content_reordered_is_one_corpus(campaign: Path) -> None:
    # The second registration's files reversed, in CRLF with a BOM: the same content, whatever its form.
    _same_corpus_again(campaign)
    _rewrite(campaign / "again" / "reference.csv")
    _rewrite(campaign / "again" / "expected-ids.csv", quote=False)
    result = check_campaign(campaign)
    found = [f for f in result.errors if f.code == "corpus-repeated"]
    assert [(f.file, f.field, f.claimed, f.recomputed) for f in found] == [
        (PROTOCOL, "/corpora/0/revision", AGAIN, CONTENT)]
    assert result.decision["decision"]["answer"] is None
    b4 = next(c for c in result.decision["configurations"] if c["id"] == B4)
    assert b4["accepted_unique_corpora"] == 1 and b4["cost_per_accepted_result"]["usd_minor"] == "11000.00"
    mismatch = [f for f in result.errors if f.code == "accepted-corpora-mismatch"]
    assert mismatch and {(f.claimed, f.recomputed) for f in mismatch} == {(2, 1)}


def test_the_same_revision_and_content_twice_is_one_finding(campaign: Path) -> None:
    _same_corpus_again(campaign)
    edit_protocol(campaign, lambda p: p["corpora"][0].update(revision=p["corpus"]["revision"]))
    assert [f.field for f in check_campaign(campaign).errors if f.code == "corpus-repeated"] == ["/corpora/0/revision"]


def test_corpora_of_other_content_are_apart(campaign: Path) -> None:
    _second_corpus(campaign)
    prints = _prints(check_campaign(campaign))
    assert [k["revision_check"] for k in prints] == ["absent", "absent"]
    assert prints[0]["fingerprint"] == CONTENT
    assert prints[1]["fingerprint"] == _plain(_pairs(campaign / "corpus2" / "reference.csv")) != CONTENT


def test_many_rows_are_fingerprinted_in_slices_as_one() -> None:
    # More rows than one slice of the canonicalisation (65,536), labels as strings or as the fast reader's class
    # codes, IDs of several widths and non-ASCII ones (ordered by their UTF-8 bytes).
    classes = ("admin", "games", "net")
    ids = [f"doc-{n * 7919 % 200_003}" for n in range(70_000)] + ["é-1", "z-2", "Ω-3"]
    codes = np.array([n % 3 for n in range(len(ids))], dtype=np.uint8)
    labels = [classes[c] for c in codes]
    expected = _plain(list(zip(ids, labels, strict=True)))
    assert fingerprint(LabelFile("r.csv", ids=ids, labels=labels)) == expected
    assert fingerprint(LabelFile("r.csv", ids=ids, label_codes=codes, label_classes=classes)) == expected


@pytest.mark.parametrize("order", ["shuffled", "ascending", "descending"])
def test_ids_of_one_width_are_ordered_by_their_packed_keys_as_by_their_bytes(order: str) -> None:
    # IDs of one width are sorted by their packed keys (idkeys), or kept when already in order: the same form.
    numbers = {"shuffled": [n * 7919 % 100_003 for n in range(100_003)], "ascending": list(range(100_003)),
               "descending": list(range(100_003))[::-1]}[order]
    ids = [f"doc-{n:08d}" for n in numbers]
    labels = [("admin", "games", "net")[n % 3] for n in numbers]
    assert fingerprint(LabelFile("r.csv", ids=ids, labels=labels)) == _plain(list(zip(ids, labels, strict=True)))
