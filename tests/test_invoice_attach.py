"""`gpu-audit invoice attach`: the verified bundle and its note ride in a copy of the Factur-X invoice, whose XML,
XMP and relationships stay as they were; signed invoices, plain PDFs and bundles that do not verify are refused."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import facturx
import pikepdf
import pytest
from invoices import Invoice, example_lines, facturx_pdf, visible_pdf

from generator.bundle.sign import signing

# what is made of a verified bundle and an invoice read is what these tests are about, not the readers' limits
pytestmark = pytest.mark.usefixtures("note_parsed_here", "invoice_read_here")


@pytest.fixture(scope="module")
def keys(example_keys: tuple[Path, Path]) -> tuple[Path, Path]:
    return example_keys


@pytest.fixture(scope="module")
def built(example_bundle: Path) -> Path:
    return example_bundle


@pytest.fixture(scope="module")
def invoice_bytes() -> bytes:
    return facturx_pdf(Invoice(example_lines()))


@pytest.fixture
def invoice(invoice_bytes: bytes, tmp_path: Path) -> Path:
    path = tmp_path / "invoice.pdf"
    path.write_bytes(invoice_bytes)
    return path


@pytest.fixture(scope="module")
def attached(keys: tuple[Path, Path], built: Path, invoice_bytes: bytes,
             tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The invoice and the copy `invoice attach` wrote of it with the signed bundle."""
    from generator.cli.main import main

    folder = tmp_path_factory.mktemp("attached")
    invoice = folder / "invoice.pdf"
    invoice.write_bytes(invoice_bytes)
    out = folder / "out.pdf"
    assert main(["invoice", "attach", str(invoice), str(built), "-o", str(out), "--trust", str(keys[1])]) == 0
    return invoice, out


def _xmp_pdfaid(pdf: pikepdf.Pdf) -> tuple[str, str]:
    meta = pdf.open_metadata()
    return str(meta.get("pdfaid:part")), str(meta.get("pdfaid:conformance"))


def _relationships(pdf: pikepdf.Pdf) -> dict[str, str]:
    return {str(spec.get("/UF", spec.get("/F"))): str(spec.get("/AFRelationship")) for spec in pdf.Root.AF}


def test_attached_copy_keeps_the_invoice_and_carries_the_bundle(attached: tuple[Path, Path], built: Path,
                                                                 invoice_bytes: bytes) -> None:
    invoice, out = attached
    assert invoice.read_bytes() == invoice_bytes  # the input is never changed
    _, xml_in = facturx.get_xml_from_pdf(invoice_bytes, check_xsd=True)
    _, xml_out = facturx.get_xml_from_pdf(out.read_bytes(), check_xsd=True)
    assert xml_in and xml_out == xml_in
    with pikepdf.open(invoice) as before, pikepdf.open(out) as after:
        assert after.Root.Metadata.read_bytes() == before.Root.Metadata.read_bytes()
        assert _xmp_pdfaid(after) == _xmp_pdfaid(before) == ("3", "B")
        original = _relationships(before)
        relations = _relationships(after)
        bundle_id = next(n for n in relations if n.endswith(".zip"))[: -len(".zip")]
        assert bundle_id.startswith("GA-")
        assert relations == {**original, f"{bundle_id}.zip": "/Supplement", "decision-note.pdf": "/Supplement"}
        assert relations["factur-x.xml"] in ("/Data", "/Alternative")
        assert len(after.Root.AF) == len(before.Root.AF) + 2
        specs = {name: spec for name, spec in after.attachments.items()}
        assert str(specs[f"{bundle_id}.zip"].obj.EF.F.Subtype) == "/application/zip"
        assert str(specs["decision-note.pdf"].obj.EF.F.Subtype) == "/application/pdf"
        assert all(str(specs[n].obj.get("/Desc", "")) for n in (f"{bundle_id}.zip", "decision-note.pdf"))
        assert specs["decision-note.pdf"].get_file().read_bytes() == (built / "data/decision-note.pdf").read_bytes()


def test_extracted_bundle_and_note_verify(run_cli, attached: tuple[Path, Path], keys: tuple[Path, Path],
                                          tmp_path: Path) -> None:
    _, out = attached
    with pikepdf.open(out) as pdf:
        files = {name: spec.get_file().read_bytes() for name, spec in pdf.attachments.items()}
    (zip_name,) = [n for n in files if n.endswith(".zip")]
    (tmp_path / zip_name).write_bytes(files[zip_name])
    (tmp_path / "decision-note.pdf").write_bytes(files["decision-note.pdf"])
    r = run_cli("verify", str(tmp_path / zip_name), "--trust", str(keys[1]))
    assert r.code == 0, r.out
    assert zip_name[: -len(".zip")] in r.out
    r = run_cli("verify", str(tmp_path / "decision-note.pdf"), "--trust", str(keys[1]))
    assert r.code == 0, r.out


def test_existing_output_is_refused_and_untouched(run_cli, invoice: Path, built: Path, keys: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    out = tmp_path / "out.pdf"
    out.write_bytes(b"already here")
    r = run_cli("invoice", "attach", str(invoice), str(built), "-o", str(out), "--trust", str(keys[1]))
    assert r.code == 2
    assert "already exists" in r.err
    assert out.read_bytes() == b"already here"


def test_folder_zip_is_deterministic_and_a_zip_bundle_is_embedded_as_it_is(
        run_cli, invoice: Path, built: Path, keys: tuple[Path, Path], attached: tuple[Path, Path],
        tmp_path: Path) -> None:
    r = run_cli("invoice", "attach", str(invoice), str(built), "-o", str(tmp_path / "again.pdf"),
                "--trust", str(keys[1]))
    assert r.code == 0, r.err
    assert r.out.strip() == str(tmp_path / "again.pdf")

    def zipped(path: Path) -> bytes:
        with pikepdf.open(path) as pdf:
            (name,) = [n for n in pdf.attachments if n.endswith(".zip")]
            data: bytes = pdf.attachments[name].get_file().read_bytes()
            return data

    assert zipped(tmp_path / "again.pdf") == zipped(attached[1])
    z = tmp_path / "bundle.zip"
    subprocess.run([sys.executable, "-m", "zipfile", "-c", str(z), str(built)], check=True)
    r = run_cli("invoice", "attach", str(invoice), str(z), "-o", str(tmp_path / "z.pdf"), "--trust", str(keys[1]))
    assert r.code == 0, r.err
    assert zipped(tmp_path / "z.pdf") == z.read_bytes()


def test_signed_invoice_is_refused(run_cli, invoice_bytes: bytes, built: Path, keys: tuple[Path, Path],
                                   tmp_path: Path) -> None:
    identity = signing.load_pem_identity(keys[0], keys[1])
    signed = tmp_path / "signed.pdf"
    signed.write_bytes(signing.sign_pdf(identity, invoice_bytes))
    before = signed.read_bytes()
    out = tmp_path / "out.pdf"
    r = run_cli("invoice", "attach", str(signed), str(built), "-o", str(out), "--trust", str(keys[1]))
    assert r.code == 2
    assert "carries a signature" in r.err
    assert "a signed invoice is never modified" in r.err
    assert "send the bundle beside it" in r.err
    assert not out.exists()
    assert signed.read_bytes() == before


def test_pdf_without_facturx_xml_is_refused(run_cli, built: Path, keys: tuple[Path, Path], tmp_path: Path) -> None:
    plain = tmp_path / "plain.pdf"
    plain.write_bytes(visible_pdf(Invoice(example_lines())))
    out = tmp_path / "out.pdf"
    r = run_cli("invoice", "attach", str(plain), str(built), "-o", str(out), "--trust", str(keys[1]))
    assert r.code == 2
    assert "no Factur-X or ZUGFeRD XML attachment" in r.err and "ask the provider for the electronic invoice" in r.err
    assert not out.exists()


def test_non_pdf_and_standalone_note_are_refused(run_cli, invoice: Path, built: Path, keys: tuple[Path, Path],
                                                 tmp_path: Path) -> None:
    text = tmp_path / "invoice.txt"
    text.write_text("not a pdf\n")
    out = tmp_path / "out.pdf"
    r = run_cli("invoice", "attach", str(text), str(built), "-o", str(out), "--trust", str(keys[1]))
    assert r.code == 2
    assert "not a PDF file" in r.err
    r = run_cli("invoice", "attach", str(invoice), str(built / "data/decision-note.pdf"), "-o", str(out),
                "--trust", str(keys[1]))
    assert r.code == 2
    assert "attach needs the whole bundle" in r.err
    assert not out.exists()


def test_bundle_that_does_not_verify_writes_nothing(run_cli, invoice: Path, built: Path, keys: tuple[Path, Path],
                                                    tmp_path: Path) -> None:
    copy = tmp_path / "bundle"
    shutil.copytree(built, copy)
    decision = copy / "data/decision.json"
    data = bytearray(decision.read_bytes())
    data[len(data) // 2] ^= 0x01
    decision.write_bytes(bytes(data))
    out = tmp_path / "out.pdf"
    r = run_cli("invoice", "attach", str(invoice), str(copy), "-o", str(out), "--trust", str(keys[1]))
    assert r.code == 1
    assert "does not verify" in r.err
    assert "data/decision.json" in r.err
    assert not out.exists()
    assert list(tmp_path.glob("*.pdf")) == [invoice]
    r = run_cli("invoice", "attach", str(invoice), str(built), "-o", str(out))  # no trust anchor: not checked
    assert r.code == 1
    assert "--trust" in r.err
    assert not out.exists()


def _contradicting(tmp_path: Path) -> Path:
    """An invoice that bills an H200 package besides the two the bundle committed."""
    from decimal import Decimal

    from invoices import Line

    path = tmp_path / "contradicting.pdf"
    path.write_bytes(facturx_pdf(Invoice(example_lines() + [Line("h200", 7, Decimal("1"), Decimal("500.00"))])))
    return path


def test_an_invoice_that_contradicts_the_bundle_is_refused_with_its_findings(
        run_cli, built: Path, keys: tuple[Path, Path], tmp_path: Path) -> None:
    invoice = _contradicting(tmp_path)
    out = tmp_path / "out.pdf"
    r = run_cli("invoice", "attach", str(invoice), str(built), "-o", str(out), "--trust", str(keys[1]))
    assert r.code == 1, r.out + r.err
    assert not out.exists()
    rows = r.out.splitlines()
    assert rows[0].startswith("invoice line 3: billed-not-committed: ") and "h200" in rows[0], r.out
    assert rows[1].startswith("invoice: total-differs: ")
    assert rows[-1].startswith("FAILED: 2 findings: invoice ITG-2026-0042 contradicts the bundle"), r.out
    assert "--attach-anyway" in rows[-1]


def test_attach_anyway_writes_the_findings_into_the_attachments_description(
        run_cli, built: Path, keys: tuple[Path, Path], tmp_path: Path) -> None:
    invoice = _contradicting(tmp_path)
    out = tmp_path / "out.pdf"
    r = run_cli("invoice", "attach", str(invoice), str(built), "-o", str(out), "--trust", str(keys[1]),
                "--attach-anyway")
    assert r.code == 0, r.out + r.err
    assert r.out.splitlines()[-1] == str(out)
    assert "attached anyway (--attach-anyway): 2 findings" in r.out
    with pikepdf.open(out) as pdf:
        descriptions = {name: str(spec.description) for name, spec in pdf.attachments.items()}
    (zip_name,) = [n for n in descriptions if n.endswith(".zip")]
    assert descriptions[zip_name].startswith("ATTACHED ANYWAY (--attach-anyway): invoice ITG-2026-0042 contradicts "
                                             f"bundle {zip_name[:-4]}: 2 finding(s)"), descriptions
    assert "line 3: billed-not-committed: " in descriptions[zip_name] and "total-differs" in descriptions[zip_name]
    assert f"listed in {zip_name}'s description" in descriptions["decision-note.pdf"]


def test_a_reconciled_invoice_says_so_in_the_description(attached: tuple[Path, Path]) -> None:
    with pikepdf.open(attached[1]) as pdf:
        descriptions = [str(spec.description) for name, spec in pdf.attachments.items() if name.endswith(".zip")]
    assert descriptions[0].endswith("; invoice ITG-2026-0042 reconciled with it: no finding"), descriptions


def _with_attachment(invoice_bytes: bytes, name: str, where: str) -> bytes:
    """The invoice with a PDF of the provider's attached by pikepdf under `name`: in the name tree, in the
    catalog's /AF only, or as a file attachment annotation of page 1 (its /F and /UF)."""
    import io

    pdf = pikepdf.open(io.BytesIO(invoice_bytes))
    theirs = b"%PDF-1.7\n% the provider's own note\n"
    if where == "names":
        pdf.attachments[name] = pikepdf.AttachedFileSpec(pdf, theirs, mime_type="application/pdf")
    else:
        spec = pikepdf.AttachedFileSpec(pdf, theirs, filename=name, mime_type="application/pdf").obj
        if where == "af":
            pdf.Root.AF.append(spec)
        else:
            annot = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.FileAttachment,
                                                         Rect=[10, 10, 30, 30], FS=spec))
            pdf.pages[0].obj.Annots = pdf.make_indirect(pikepdf.Array([annot]))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


@pytest.mark.parametrize("name,where", [
    ("decision-note.pdf", "names"),  # the attack: pdfdetach -savefile decision-note.pdf extracts theirs
    ("Decision-Note.PDF", "af"),
    ("scans/decision-note (signed).pdf", "annot"),
    ("GA-0123456789ABCDEF.zip", "names"),  # a bundle, attached before or made to look like one
])
def test_an_invoice_already_carrying_an_attachment_named_like_ours_is_refused(
        run_cli, invoice_bytes: bytes, built: Path, keys: tuple[Path, Path], tmp_path: Path, name: str,
        where: str) -> None:
    invoice = tmp_path / "invoice.pdf"
    invoice.write_bytes(_with_attachment(invoice_bytes, name, where))
    out = tmp_path / "out.pdf"
    r = run_cli("invoice", "attach", str(invoice), str(built), "-o", str(out), "--trust", str(keys[1]))
    assert r.code == 2, r.out + r.err
    assert "attachment-name-taken" in r.err and f'an attachment named "{name}" (in' in r.err, r.err  # no Python quotes
    assert "ask the provider for the invoice without that attachment" in r.err and "Nothing was written" in r.err
    assert not out.exists()


def test_an_unrelated_attachment_of_the_provider_is_kept(run_cli, invoice_bytes: bytes, built: Path,
                                                         keys: tuple[Path, Path], tmp_path: Path) -> None:
    invoice = tmp_path / "invoice.pdf"
    invoice.write_bytes(_with_attachment(invoice_bytes, "timesheet-note.pdf", "names"))
    out = tmp_path / "out.pdf"
    r = run_cli("invoice", "attach", str(invoice), str(built), "-o", str(out), "--trust", str(keys[1]))
    assert r.code == 0, r.out + r.err
    with pikepdf.open(out) as pdf:
        assert {"timesheet-note.pdf", "decision-note.pdf"} <= set(pdf.attachments), list(pdf.attachments)
