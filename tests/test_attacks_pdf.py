"""Attacks on the signed note itself (issue 16): the PDF travels alone with an invoice, so it must hold by itself.

Each attack is performed on a note built from inputs/example, and judged by gpu-audit's own check
(`signing.check_pdf_signature`), pyHanko's validator and poppler's `pdfsig` where they apply.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import re
import shutil
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from asn1crypto import keys as asn1_keys
from asn1crypto import x509 as asn1_x509
from conftest import EXAMPLE, needs_tools
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.generic import pdf_name
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign import fields, signers
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko_certvalidator import ValidationContext
from pyhanko_certvalidator.registry import SimpleCertificateStore
from seal_helpers import KeyPair, local_tsa

from generator.bundle.sign import signing
from generator.core.errors import UsageError
from generator.render.page.note import PDF_NAME

PDFSIG = shutil.which("pdfsig")
needs_pdfsig = needs_tools("pdfsig")
NOW = dt.datetime.now(dt.UTC)


# --- fixtures: one genuine signed note for the whole module -------------------------------------------------


@pytest.fixture(scope="module")
def keys(example_keys: tuple[Path, Path]) -> tuple[Path, Path]:
    return example_keys


@pytest.fixture(scope="module")
def cert(keys: tuple[Path, Path]) -> x509.Certificate:
    return x509.load_pem_x509_certificate(keys[1].read_bytes())


@pytest.fixture(scope="module")
def bundle(example_bundle: Path) -> Path:
    return example_bundle


@pytest.fixture(scope="module")
def signed_pdf(bundle: Path) -> bytes:
    return (bundle / "data" / PDF_NAME).read_bytes()


# --- helpers ------------------------------------------------------------------------------------------------


def _asn1(cert: x509.Certificate) -> asn1_x509.Certificate:
    return asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))


def pyhanko_verdict(pdf: bytes, cert: x509.Certificate) -> bool:
    """pyHanko's own bottom line for the PDF's signature, with the signer as the one trust root."""
    sig = PdfFileReader(io.BytesIO(pdf), strict=False).embedded_signatures[0]
    context = ValidationContext(trust_roots=[_asn1(cert)], allow_fetching=False)
    return bool(validate_pdf_signature(sig, context).bottom_line)


def pdfsig(pdf: bytes, tmp_path: Path) -> str:
    path = tmp_path / "note.pdf"
    path.write_bytes(pdf)
    assert PDFSIG is not None
    return subprocess.run([PDFSIG, str(path)], check=False, capture_output=True, text=True,
                          timeout=60).stdout


def word_box(pdf: bytes, tmp_path: Path, after: str) -> tuple[int, int, int, int]:
    """The PDF-space box (x1, y1, x2, y2) of the word that follows `after` on page 1 (poppler's word boxes)."""
    path = tmp_path / "words.pdf"
    path.write_bytes(pdf)
    xml = subprocess.run(["pdftotext", "-bbox", "-f", "1", "-l", "1", str(path), "-"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    page = re.search(r'<page width="[\d.]+" height="([\d.]+)"', xml)
    assert page is not None, xml[:500]
    page_height = float(page.group(1))
    words = re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', xml)
    i = next(i for i, w in enumerate(words) if w[4] == after)
    x1, y1, _x2, y2, _ = words[i + 1]
    return int(float(x1)) - 1, int(page_height - float(y2)) - 1, int(float(x1)) + 82, int(page_height - float(y1)) + 1


def forge_with_empty_field(pdf: bytes, box: tuple[int, int, int, int], text: str = "1,100.00 USD") -> bytes:
    """The attack of issue 16: an incremental update adds an empty signature field whose appearance paints
    `text` on a white box over the signed figure. No key is needed."""
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    fields.append_signature_field(writer, fields.SigFieldSpec("Approval", on_page=0, box=box,
                                                              empty_field_appearance=True))
    width, height = box[2] - box[0], box[3] - box[1]
    font = generic.DictionaryObject({pdf_name("/Type"): pdf_name("/Font"), pdf_name("/Subtype"): pdf_name("/Type1"),
                                     pdf_name("/BaseFont"): pdf_name("/Helvetica-Bold")})
    appearance = generic.StreamObject(
        {pdf_name("/Type"): pdf_name("/XObject"), pdf_name("/Subtype"): pdf_name("/Form"),
         pdf_name("/BBox"): generic.ArrayObject([generic.NumberObject(v) for v in (0, 0, width, height)]),
         pdf_name("/Resources"): generic.DictionaryObject(
             {pdf_name("/Font"): generic.DictionaryObject({pdf_name("/F1"): font})})},
        stream_data=f"1 1 1 rg 0 0 {width} {height} re f BT /F1 10 Tf 0 0 0 rg 1 3 Td ({text}) Tj ET".encode())
    for ref in writer.root["/AcroForm"]["/Fields"]:
        field = ref.get_object()
        if field.get("/T") == "Approval":
            field[pdf_name("/AP")] = generic.DictionaryObject({pdf_name("/N"): writer.add_object(appearance)})
            writer.update_container(field)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def flip_signature_value(pdf: bytes) -> bytes:
    """One byte of the CMS signature value changed (in /Contents, which the byte ranges leave out)."""
    sig = PdfFileReader(io.BytesIO(pdf), strict=False).embedded_signatures[0]
    hex_value = sig.signer_info["signature"].native.hex().encode()
    start = pdf.lower().find(hex_value)
    assert start > 0
    data = bytearray(pdf)
    middle = start + len(hex_value) // 2
    data[middle] = ord("0") if data[middle] != ord("0") else ord("1")
    return bytes(data)


@functools.cache
def _rsa_key() -> rsa.RSAPrivateKey:
    """One RSA key for every test identity of this module: 2048 bits (the least signing accepts) keeps it fast."""
    return rsa.generate_private_key(65537, 2048)


def make_identity(directory: Path, name: str, not_before: dt.datetime, not_after: dt.datetime,
                  eku: x509.ObjectIdentifier | None = None) -> tuple[Path, Path, Any, x509.Certificate]:
    """An RSA key and a self-signed certificate with the given validity period (keygen makes no other period),
    for a signer or (with the time-stamping EKU) an RFC 3161 authority."""
    key = _rsa_key()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, name)])
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True))
    if eku is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([eku]), critical=True)
    cert = builder.sign(key, hashes.SHA256())
    directory.mkdir(parents=True, exist_ok=True)
    key_path, cert_path = directory / "key.pem", directory / "cert.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)  # a private key readable by others is refused before its certificate is looked at
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path, key, cert


def codes(check: signing.PdfSignatureCheck) -> list[str]:
    return [code for code, _message in check.problems()]


# --- the genuine note ---------------------------------------------------------------------------------------


def test_genuine_note_is_certified_and_checks_fully(signed_pdf: bytes, cert: x509.Certificate) -> None:
    check = signing.check_pdf_signature(signed_pdf, cert)
    assert check.problems() == [], check
    assert check.present and check.intact and check.valid and check.entire_file and check.unmodified
    assert check.certified and check.docmdp == "NO_CHANGES"
    assert check.certificate_valid_at_signing
    assert check.signer_fingerprint == signing.cert_fingerprint(cert)
    assert check.signer_subject == "O=Example Org,CN=Example Org"
    assert check.timestamp is None and check.timestamp_authority is None  # built without --tsa
    assert pyhanko_verdict(signed_pdf, cert)


def test_signed_note_stays_pdfa3_on_pdf_17(signed_pdf: bytes) -> None:
    """PDF/A-3 is defined on PDF 1.7: no PDF 2.0 claim, each associated file listed once, XMP = info."""
    with pikepdf.open(io.BytesIO(signed_pdf)) as pdf:
        assert pdf.pdf_version == "1.7"
        assert pdf.Root.get("/Version") in (None, pikepdf.Name("/1.7"))
        extensions = pdf.Root.get("/Extensions", pikepdf.Dictionary())
        assert "/ISO_" not in extensions  # ISO/TS 32002 is an extension of PDF 2.0
        assert set(extensions.keys()) <= {"/ESIC"}, extensions  # PAdES on PDF 1.7, what pyHanko declares
        assert all(str(ext.get("/BaseVersion")) != "/2.0" for ext in extensions.values()
                   if isinstance(ext, pikepdf.Dictionary))
        af = [ref.objgen for ref in pdf.Root.AF]
        assert len(af) == len(set(af)) == 3, af
        names = pdf.Root.Names.EmbeddedFiles.Names
        assert sorted(af) == sorted(names[i].objgen for i in range(1, len(names), 2))
        meta = pdf.open_metadata()
        assert meta["pdfaid:part"] == "3" and meta["pdfaid:conformance"] == "A"
        assert str(meta["pdf:Producer"]) == str(pdf.docinfo["/Producer"])
        assert str(meta["xmp:CreatorTool"]) == str(pdf.docinfo["/Creator"])
        assert str(meta["dc:title"]) == str(pdf.docinfo["/Title"])


def test_embedded_decision_is_the_bundles(bundle: Path, signed_pdf: bytes) -> None:
    assert signing.embedded_decision(signed_pdf) == (bundle / "data" / "decision.json").read_bytes()
    assert signing.embedded_decision(b"%PDF-1.7\nnot a pdf") is None
    assert signing.embedded_decision(signed_pdf, max_bytes=1000) is None  # inflated only up to the bound


# --- (a) an incremental update painting another budget over the signed one ----------------------------------


@needs_pdfsig
def test_incremental_update_with_a_painted_field_is_caught(signed_pdf: bytes, cert: x509.Certificate,
                                                           tmp_path: Path) -> None:
    box = word_box(signed_pdf, tmp_path, "budget")  # "Committed budget 110.00 USD" on the first page
    forged = forge_with_empty_field(signed_pdf, box)
    assert b"(1,100.00 USD) Tj" in forged and forged.startswith(signed_pdf)

    check = signing.check_pdf_signature(forged, cert)
    assert check.intact and check.valid  # the signed revision itself is untouched ...
    assert not check.unmodified and not check.entire_file  # ... but something was added after it
    assert "pdf-modified-after-signing" in codes(check)

    # pyHanko's own validator: the certified original is VALID, the forgery is not.
    assert pyhanko_verdict(signed_pdf, cert)
    assert not pyhanko_verdict(forged, cert)

    # pdfsig still says "Signature is Valid" for the old revision, but not that the whole document is signed.
    original, report = pdfsig(signed_pdf, tmp_path), pdfsig(forged, tmp_path)
    assert "  - Total document signed" in original
    assert "Total document signed" not in report.replace("Not total document signed", "")
    assert "Not total document signed" in report
    assert "The signature form field is not signed." in report  # the added field


# --- (b) one byte of the CMS signature value flipped --------------------------------------------------------


@needs_pdfsig
def test_flipped_signature_value_is_invalid(signed_pdf: bytes, cert: x509.Certificate, tmp_path: Path) -> None:
    broken = flip_signature_value(signed_pdf)
    check = signing.check_pdf_signature(broken, cert)
    assert check.intact and not check.valid  # the digest still matches, the signature over it does not
    assert "bad-pdf-signature" in codes(check)
    assert not pyhanko_verdict(broken, cert)
    assert "Signature is Invalid" in pdfsig(broken, tmp_path)


# --- (c), (d) certificates outside their validity period ----------------------------------------------------


@pytest.mark.parametrize(("not_before", "not_after", "words"), [
    (NOW - dt.timedelta(days=400), NOW - dt.timedelta(days=30), "expired"),
    (NOW + dt.timedelta(days=30), NOW + dt.timedelta(days=400), "not valid before"),
])
def test_build_refuses_a_certificate_outside_its_validity_period(run_cli, tmp_path: Path, not_before: dt.datetime,
                                                                 not_after: dt.datetime, words: str) -> None:
    key_path, cert_path, _key, _cert = make_identity(tmp_path / "id", "Example Org", not_before, not_after)
    out = tmp_path / "bundle"
    r = run_cli("build", str(EXAMPLE), "-o", str(out), "--key", str(key_path), "--cert", str(cert_path), "--quiet")
    assert r.code == 2, r.out + r.err
    assert words in r.err and "certificate" in r.err
    assert not out.exists()


@pytest.mark.parametrize(("not_before", "not_after", "code"), [
    (NOW - dt.timedelta(days=400), NOW - dt.timedelta(days=30), "certificate-expired"),
    (NOW + dt.timedelta(days=30), NOW + dt.timedelta(days=400), "certificate-not-yet-valid"),
])
def test_a_note_signed_outside_the_certificates_period_is_reported(signed_pdf: bytes, tmp_path: Path,
                                                                  not_before: dt.datetime, not_after: dt.datetime,
                                                                  code: str) -> None:
    """Signed behind gpu-audit's back (pyHanko directly): the check still names the certificate's period."""
    unsigned = signers.sign_pdf  # the attacker's own signing step, not gpu-audit's
    _k, _c, key, cert = make_identity(tmp_path / "old", "Example Org", not_before, not_after)
    signer = signers.SimpleSigner(
        signing_cert=_asn1(cert), signing_key=asn1_keys.PrivateKeyInfo.load(key.private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())),
        cert_registry=SimpleCertificateStore.from_certs([_asn1(cert)]))
    plain = _strip_to_unsigned(signed_pdf)
    out = unsigned(IncrementalPdfFileWriter(io.BytesIO(plain)),
                   signers.PdfSignatureMetadata(field_name="Other", md_algorithm="sha256"), signer=signer)
    check = signing.check_pdf_signature(out.getvalue(), cert)
    assert code in codes(check) and not check.certificate_valid_at_signing
    assert "pdf-not-certified" in codes(check)  # an approval signature locks nothing


def _strip_to_unsigned(pdf: bytes) -> bytes:
    """The revision before the signature (the note as rendered): the bytes up to the first %%EOF + EOL."""
    end = pdf.index(b"%%EOF") + len(b"%%EOF")
    return pdf[:end] + b"\n"


def test_subject_with_control_characters_is_refused(run_cli, tmp_path: Path) -> None:
    for name in ("Example Org\nPayload-Oxum: 1.1", "Example\x1b[2KOrg", "Example\rOrg"):
        with pytest.raises(UsageError, match="control character"):
            signing.keygen(tmp_path / "k", name)
    r = run_cli("keygen", str(tmp_path / "k2"), "--name", "X\nPayload-Oxum: 1.1")
    assert r.code == 2 and "control character" in r.err
    assert not (tmp_path / "k2" / signing.KEY_NAME).exists()
    key_path, cert_path, _key, _cert = make_identity(tmp_path / "id", "Example Org\nApproved-By: CFO",
                                                     NOW - dt.timedelta(days=1), NOW + dt.timedelta(days=30))
    out = tmp_path / "bundle"
    r = run_cli("build", str(EXAMPLE), "-o", str(out), "--key", str(key_path), "--cert", str(cert_path), "--quiet")
    assert r.code == 2 and "control character" in r.err, r.err
    assert not out.exists()


# --- (e) an RFC 3161 signature timestamp from a local authority ---------------------------------------------


@pytest.fixture
def tsa(tmp_path: Path) -> Iterator[tuple[str, x509.Certificate]]:
    """A local RFC 3161 responder on 127.0.0.1: pyHanko's DummyTimeStamper behind http.server (seal_helpers)."""
    _k, _c, key, cert = make_identity(tmp_path / "tsa", "Test TSA", NOW - dt.timedelta(days=1),
                                      NOW + dt.timedelta(days=30), eku=ExtendedKeyUsageOID.TIME_STAMPING)
    with local_tsa(KeyPair(key, cert)) as served:
        yield served.url, cert


@pytest.mark.allow_hosts(["127.0.0.1"])  # this test only, and only the local responder
def test_build_with_tsa_adds_a_signature_timestamp(run_cli, keys: tuple[Path, Path], cert: x509.Certificate,
                                                   tsa: tuple[str, x509.Certificate], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for proxy in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    url, tsa_cert = tsa
    out = tmp_path / "bundle"
    r = run_cli("build", str(EXAMPLE), "-o", str(out), "--key", str(keys[0]), "--cert", str(keys[1]), "--quiet",
                "--tsa", url)
    assert r.code == 0, r.out + r.err
    pdf = (out / "data" / PDF_NAME).read_bytes()
    check = signing.check_pdf_signature(pdf, cert)
    assert check.problems() == [], check
    assert check.timestamp_authority == tsa_cert.subject.rfc4514_string() == "O=Test TSA,CN=Test TSA"
    assert check.timestamp is not None
    stamped = dt.datetime.fromisoformat(check.timestamp)
    assert abs((stamped - dt.datetime.now(dt.UTC)).total_seconds()) < 600
    assert check.certified and check.unmodified


def test_tsa_url_must_be_http(run_cli, keys: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    r = run_cli("build", str(EXAMPLE), "-o", str(out), "--key", str(keys[0]), "--cert", str(keys[1]), "--quiet",
                "--tsa", "file:///etc/passwd")
    assert r.code == 2 and "--tsa" in r.err
    assert not out.exists()


@pytest.mark.allow_hosts(["127.0.0.1"])
def test_an_authority_that_does_not_answer_stops_the_build(run_cli, keys: tuple[Path, Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for proxy in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as closed:
        port = closed.server_address[1]  # bound, then closed: nothing listens there any more
    out = tmp_path / "bundle"
    r = run_cli("build", str(EXAMPLE), "-o", str(out), "--key", str(keys[0]), "--cert", str(keys[1]), "--quiet",
                "--tsa", f"http://127.0.0.1:{port}/")
    assert r.code == 2 and "no timestamp from the authority" in r.err, r.err
    assert not out.exists()
