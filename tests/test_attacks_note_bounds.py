"""Bounds for the note (issue 46, item 6): its objects, references, form fields and annotations are counted before
pyHanko reads it, and a note past a bound is refused with the limit's name, its value and the value found.

The forgeries start from the genuine signed note (the session's example bundle) and add an incremental update,
as anyone can without a key. Before these bounds, the note listing its field a million times cost `verify` 20 s
of processor time and 1.5 GiB before --max-pdf-seconds refused it (docs/performance.md).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from bundle_forgery import many_fields, many_objects, object_stream
from conftest import REPO

from generator.bundle.pdf.notebounds import bounds_problem, count_note, form_problem
from generator.core.limits import DEFAULT, Limits, MiB
from generator.render.page.note import PDF_NAME

# `gpu-audit verify ARGS` in a fresh process, which then reports its exit status, its output, the processor
# seconds it and its children (the parser's) spent, whether it imported pyHanko, and its peak memory in KiB.
_PROBE = """
import contextlib, io, json, re, resource, sys
from pathlib import Path
from generator.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
    code = main(['verify', *sys.argv[1:]])
own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
peak = re.search(r'VmHWM:\\s+(\\d+)', Path('/proc/self/status').read_text()).group(1)
print(json.dumps({'code': code, 'out': out.getvalue(), 'own': own.ru_utime + own.ru_stime,
                  'children': children.ru_utime + children.ru_stime, 'pyhanko': 'pyhanko' in sys.modules,
                  'peak_kib': int(peak)}))
"""


@dataclass(frozen=True)
class Probe:
    code: int
    out: str
    own: float  # processor seconds of `verify`'s process
    children: float  # and of the parser's child process (0 when none ran)
    pyhanko: bool
    peak_kib: int


def probe(*argv: str) -> Probe:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, cwd=REPO,
                          timeout=300, check=True)
    return Probe(**json.loads(proc.stdout.splitlines()[-1]))


@pytest.fixture(scope="module")
def signed_pdf(example_bundle: Path) -> bytes:
    return (example_bundle / "data" / PDF_NAME).read_bytes()


@pytest.fixture(scope="module")
def cert(example_keys: tuple[Path, Path]) -> str:
    return str(example_keys[1])


def _found(out: str, limit: str) -> int:
    """The value the refusal names for `limit` (--max-pdf-...), with its default written out."""
    default = getattr(DEFAULT, limit[2:].replace("-", "_"))
    match = re.search(rf", (\d+)(?: or more)?, exceeds the limit of \d+ \({limit}, default {default}\); if the "
                      rf"input is genuine, raise it with {limit} N", out)
    assert match is not None, out
    return int(match.group(1))


def test_a_genuine_note_is_far_inside_every_bound(signed_pdf: bytes) -> None:
    counts = count_note(signed_pdf, DEFAULT.max_pdf_bytes)
    assert 1000 < counts.objects and 20 * counts.objects < DEFAULT.max_pdf_objects, counts
    assert 1000 < counts.references and 10 * counts.references < DEFAULT.max_pdf_references, counts
    assert 0 < counts.inflated and 100 * counts.inflated < DEFAULT.max_pdf_bytes, counts
    assert bounds_problem(signed_pdf, DEFAULT) is None
    # its signature field, listed by the form and by its last page
    assert form_problem(signed_pdf, Limits(max_pdf_fields=2)) is None
    refused = form_problem(signed_pdf, Limits(max_pdf_fields=1))
    assert refused is not None and refused[0] == "pdf-too-complex"
    assert "its form fields and annotations, 2, exceeds the limit of 1 (--max-pdf-fields" in refused[1]


def test_a_note_listing_its_field_a_million_times_is_refused_before_any_parser(signed_pdf: bytes, cert: str,
                                                                                tmp_path: Path) -> None:
    note = tmp_path / PDF_NAME
    note.write_bytes(many_fields(signed_pdf, 1_000_000))
    result = probe(str(note), "--trust", cert)
    out = result.out
    assert result.code == 1, out
    assert f"{PDF_NAME}: not parsed: its indirect references, " in out and "[pdf-too-complex]" in out
    assert _found(out, "--max-pdf-references") >= 1_000_000
    assert "[pdf-too-costly]" not in out and "signatures found" not in out
    # refused from its bytes: no parser process ran, pyHanko was never imported
    assert result.children == 0 and result.pyhanko is False, result
    assert result.own < 5 and result.peak_kib < 300_000, result  # processor s, KiB


def test_a_form_of_a_few_thousand_fields_is_refused_before_pyhanko_reads_it(signed_pdf: bytes, cert: str,
                                                                            tmp_path: Path) -> None:
    note = tmp_path / PDF_NAME
    note.write_bytes(many_fields(signed_pdf, 5000))  # within --max-pdf-references: qpdf counts them in the child
    result = probe(str(note), "--trust", cert)
    out = result.out
    assert result.code == 1, out
    assert f"{PDF_NAME}: not parsed: its form fields and annotations, " in out and "[pdf-too-complex]" in out
    assert _found(out, "--max-pdf-fields") == 5001  # the form's 5000 and the last page's one
    assert "signatures found" not in out, out  # pyHanko's verdict never came
    # With the bound lifted, the note reaches pyHanko, which walks every field before it refuses the note.
    lifted = probe(str(note), "--trust", cert, "--max-pdf-fields", "10000")
    assert lifted.code == 1 and "5000 signatures found, expected 1 [bad-pdf-signature]" in lifted.out
    assert result.children < lifted.children, (result, lifted)


def test_an_object_count_bomb_is_refused_before_any_parser(signed_pdf: bytes, cert: str, tmp_path: Path) -> None:
    note = tmp_path / PDF_NAME
    note.write_bytes(many_objects(signed_pdf, 150_000))
    result = probe(str(note), "--trust", cert)
    out = result.out
    assert result.code == 1, out
    assert f"{PDF_NAME}: not parsed: its object count, " in out and "[pdf-too-complex]" in out
    assert _found(out, "--max-pdf-objects") >= 150_000
    assert result.children == 0 and result.pyhanko is False, result


@pytest.mark.parametrize("dictionary, first", [(b"/Type /ObjStm", b"/First"), (b"/Type /Obj#53tm", b"/F#69rst")])
def test_objects_hidden_in_an_object_stream_are_counted(signed_pdf: bytes, dictionary: bytes, first: bytes) -> None:
    forged = object_stream(signed_pdf, [b"null"] * 150_000, dictionary, first)
    headers = forged.count(b" obj") + forged.count(b"\nobj")
    assert headers == signed_pdf.count(b" obj") + signed_pdf.count(b"\nobj") + 1  # the bytes show one object more
    problem = bounds_problem(forged, DEFAULT)
    assert problem is not None and _found(problem, "--max-pdf-objects") >= 150_000


def test_references_hidden_in_an_object_stream_are_counted(signed_pdf: bytes) -> None:
    forged = object_stream(signed_pdf, [b"[" + b" ".join([b"5 0 R"] * 200_000) + b"]"])
    assert len(forged) - len(signed_pdf) < 10_000  # deflated: the bytes show none of them
    problem = bounds_problem(forged, DEFAULT)
    assert problem is not None and _found(problem, "--max-pdf-references") >= 200_000


def test_an_object_stream_inflating_past_the_pdf_size_limit_is_refused(signed_pdf: bytes) -> None:
    forged = object_stream(signed_pdf, [b"null " * 1_000_000])
    problem = bounds_problem(forged, Limits(max_pdf_bytes=MiB))
    assert problem is not None
    assert ("not parsed: its object streams inflated, over 1048576 bytes, exceeds the limit of 1048576 "
            "(--max-pdf-bytes, default 67108864)") in problem


def test_an_object_stream_the_count_cannot_read_is_refused(signed_pdf: bytes) -> None:
    forged = object_stream(signed_pdf, [b"null"], b"/Type /ObjStm /DecodeP#61rms << /Predictor 12 /Columns 4 >>")
    problem = bounds_problem(forged, DEFAULT)
    assert problem is not None and "cannot be counted" in problem and "filter parameters" in problem
