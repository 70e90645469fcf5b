"""Certificates as PKI means them, and output that cannot lie (issue 30, items 3 and 7): a CA anchor's chain,
key usage and validity; the bundle's own signer.pem as anchor; a certificate's words quoted and cut; invisible
characters escaped; no library warning after the verdict."""

from __future__ import annotations

import base64
import datetime as dt
import io
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from asn1crypto import x509 as asn1_x509
from bundle_forgery import reseal
from conftest import REPO, needs_tools
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from generator.bundle.sign import signing
from generator.bundle.verdict import Report, report_lines
from generator.core.termtext import escape_terminal

pytestmark = needs_tools("openssl")
WORDS_PREFIX = "  certificate's words: "  # the line that shows a certificate's own words, quoted

CA_CNF = """[ca]
default_ca = test
[test]
database = {d}/index.txt
new_certs_dir = {d}
serial = {d}/serial
default_md = sha256
default_days = 365
policy = anything
unique_subject = no
[anything]
commonName = supplied
"""
PAST = ["-startdate", "20200101000000Z", "-enddate", "20210101000000Z"]
FUTURE = ["-startdate", "20990101000000Z", "-enddate", "21000101000000Z"]
SIGNED_2020 = dt.datetime(2020, 6, 1, tzinfo=dt.UTC)
SIGNED_2099 = dt.datetime(2099, 6, 1, tzinfo=dt.UTC)
LEAF_EXT = {  # what the test CA issues (openssl x509v3_config), and for how long
    "good": ("keyUsage=critical,digitalSignature,nonRepudiation\nextendedKeyUsage=emailProtection\n", []),
    "tls": ("keyUsage=critical,keyEncipherment\nextendedKeyUsage=serverAuth\n", []),
    "expired": ("keyUsage=critical,digitalSignature\n", PAST),
    "future": ("keyUsage=critical,digitalSignature\n", FUTURE),
}
# The characters the attack pass printed raw, and others of their kinds
INVISIBLE = "\u00ad\u034f\u115f\u180e\u3164\U000e0001\ufff9\u1160\uffa0\u2800\ue000\u2028\u2029\x85\u200b\u202e\x1b\r"


def fingerprint(cert: Path) -> str:
    return signing.cert_fingerprint(x509.load_pem_x509_certificate(cert.read_bytes()))


def _openssl(d: Path, *argv: str) -> None:
    subprocess.run(["openssl", *argv], cwd=d, check=True, capture_output=True)


def _make_pki(d: Path) -> None:
    """A CA (openssl req -x509), the leaves it issues (openssl ca), and an expired self-signed certificate."""
    (d / "db").mkdir()
    (d / "db/index.txt").write_text("")
    (d / "db/serial").write_text("1000\n")
    (d / "ca.cnf").write_text(CA_CNF.format(d=d / "db"))
    _openssl(d, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj",
             "/CN=Test Signing CA", "-days", "3650", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, (ext, dates) in LEAF_EXT.items():
        (d / f"{name}.ext").write_text("basicConstraints=critical,CA:FALSE\n" + ext)
        _openssl(d, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN=Leaf {name}")
        _openssl(d, "ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca.key", "-in",
                 f"{name}.csr", "-out", f"{name}.pem", "-extfile", f"{name}.ext", "-notext", *dates)
    _openssl(d, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "oldself.key", "-out", "oldself.csr", "-subj",
             "/CN=Old Self")
    _openssl(d, "ca", "-batch", "-config", "ca.cnf", "-selfsign", "-keyfile", "oldself.key", "-in", "oldself.csr",
             "-out", "oldself.pem", "-notext", *PAST)
    for key in d.glob("*.key"):
        key.chmod(0o600)


def _named(d: Path, name: str, common_name: str) -> None:
    """A self-signed certificate whose CN is `common_name`, over the 64 characters of RFC 5280 if need be (openssl
    and cryptography refuse to write one: the attacker writes the DER with asn1crypto and signs it)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = dt.datetime.now(dt.UTC)
    placeholder = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "placeholder")])
    cert = (x509.CertificateBuilder().subject_name(placeholder).issuer_name(placeholder).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=30)).sign(key, hashes.SHA256()))
    der = asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))
    tbs = der["tbs_certificate"]
    tbs["subject"] = tbs["issuer"] = asn1_x509.Name.build({"common_name": common_name})
    der["signature_value"] = key.sign(tbs.dump(force=True), padding.PKCS1v15(), hashes.SHA256())
    body = base64.encodebytes(der.dump(force=True)).decode().replace("\n", "")
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    (d / f"{name}.pem").write_text(f"-----BEGIN CERTIFICATE-----\n{lines}\n-----END CERTIFICATE-----\n")
    (d / f"{name}.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
    (d / f"{name}.key").chmod(0o600)


def _resign(genuine: Path, target: Path, key: Path, cert: Path, when: dt.datetime | None = None) -> Path:
    """The genuine bundle with its note certified again and every manifest sealed again by key/cert, signed at
    `when` (now by default) as MANIFEST.json's `created` and the note's signing time say: what `build --key
    --cert` made of that signer then, without its seconds of rendering. (`build` refuses a certificate out of
    its period; whoever holds the key need not use gpu-audit to sign.)"""
    from pyhanko.sign.signers import pdf_signer

    moment = when or dt.datetime.now(dt.UTC)

    class Clock(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> Clock:
            return cls.fromtimestamp(moment.timestamp(), tz)

    shutil.copytree(genuine, target)
    note = target / "data/decision-note.pdf"
    pdf = note.read_bytes()
    plain = pdf[:pdf.index(b"%%EOF") + len(b"%%EOF")] + b"\n"  # the revision before the signature
    manifest, info = target / "MANIFEST.json", target / "bag-info.txt"
    created = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest.write_text(re.sub(r'"created": "[^"]*"', f'"created": "{created}"', manifest.read_text()))
    info.write_text(re.sub(r"Bagging-Date: .*", f"Bagging-Date: {created[:10]}", info.read_text()))
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # cryptography on the forger's long CN, in the forger's tool
        patch.setattr(signing, "check_signing_certificate", lambda *args, **kwargs: None)
        patch.setattr(pdf_signer, "datetime", Clock)  # the signing time the note's CMS claims
        note.write_bytes(signing.sign_pdf(signing.load_pem_identity(key, cert), plain))
        reseal(target, (key, cert))
    return target


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory, keys_fp: str) -> Path:
    d = tmp_path_factory.mktemp("pki")
    _make_pki(d)
    # The forgery's name: the genuine signer's fingerprint, then, past where a terminal wraps, a verdict.
    _named(d, "forger", (f"SHA256:{keys_fp} " + "x" * 50 + " OK: bundle verifies, trusted").ljust(171, "."))
    return d


@pytest.fixture(scope="module")
def keys_fp(example_keys: tuple[Path, Path]) -> str:
    return fingerprint(example_keys[1])


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory, example_bundle: Path, pki: Path) -> dict[str, Path]:
    """A genuine bundle signed by each certificate of `pki`."""
    root = tmp_path_factory.mktemp("signed")
    when = {"expired": SIGNED_2020, "oldself": SIGNED_2020, "future": SIGNED_2099}  # within the period
    return {name: _resign(example_bundle, root / name, pki / f"{name}.key", pki / f"{name}.pem", when.get(name))
            for name in (*LEAF_EXT, "oldself", "forger")}


def _verify(*argv: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "generator", "verify", *argv], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def _no_ok(out: str) -> bool:
    return not any(line.startswith("OK") for line in out.splitlines())


def _pyhanko_bottom_line(pdf: bytes, ca: Path) -> bool:
    """pyHanko's own validator on the note, with the CA as the only root and its default signer key usage."""
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko.sign.validation.settings import KeyUsageConstraints
    from pyhanko_certvalidator import ValidationContext

    root = asn1_x509.Certificate.load(x509.load_pem_x509_certificate(ca.read_bytes()).public_bytes(
        serialization.Encoding.DER))
    sig = PdfFileReader(io.BytesIO(pdf), strict=False).embedded_signatures[0]
    status = validate_pdf_signature(sig, ValidationContext(trust_roots=[root], allow_fetching=False),
                                    key_usage_settings=KeyUsageConstraints(
                                        key_usage={"digital_signature", "non_repudiation"}))
    return bool(status.bottom_line)


def test_a_tls_server_certificate_issued_by_the_ca_cannot_sign(bundles: dict[str, Path], pki: Path) -> None:
    code, out, _ = _verify(str(bundles["tls"]), "--trust", str(pki / "ca.pem"))
    assert code == 1 and _no_ok(out), out
    assert "signer.pem: the key usage of the signer's certificate does not allow signing" in out
    assert "found keyUsage key_encipherment) [certificate-usage]" in out
    assert "identity: FAILED: the anchor did not issue the signer's certificate for signing" in out
    assert not _pyhanko_bottom_line((bundles["tls"] / "data/decision-note.pdf").read_bytes(), pki / "ca.pem")


def test_a_signing_certificate_issued_by_the_ca_verifies_and_the_chain_is_shown(bundles: dict[str, Path],
                                                                                pki: Path) -> None:
    leaf, ca = fingerprint(pki / "good.pem"), fingerprint(pki / "ca.pem")
    note = bundles["good"] / "data/decision-note.pdf"
    for target in (bundles["good"], note):  # the bundle, and its note on its own
        code, out, err = _verify(str(target), "--trust", str(pki / "ca.pem"))
        assert code == 0, out + err
        assert f"identity: trusted: signer SHA256:{leaf} issued by anchor SHA256:{ca} (--trust {pki / 'ca.pem'})" \
            in out
        assert f'{WORDS_PREFIX}"CN=Test Signing CA" (the anchor\'s own)' in out
        assert out.splitlines()[-1].startswith(f"OK: {target} verifies")
    assert _pyhanko_bottom_line(note.read_bytes(), pki / "ca.pem")


@pytest.mark.parametrize(("name", "code_name", "words"), [
    ("expired", "certificate-expired", "the signer's certificate expired on 2021-01-01T00:00:00+00:00, before today"),
    ("future", "certificate-not-yet-valid",
     "the signer's certificate is valid only from 2099-01-01T00:00:00+00:00, after today"),
])
def test_a_leaf_out_of_its_period_fails_under_the_ca(bundles: dict[str, Path], pki: Path, name: str,
                                                     code_name: str, words: str) -> None:
    code, out, _ = _verify(str(bundles[name]), "--trust", str(pki / "ca.pem"))
    assert code == 1 and _no_ok(out), out
    assert [line for line in out.splitlines() if line.endswith(f"[{code_name}]")] == \
        [line for line in out.splitlines() if line.startswith(f"signer.pem: {words}")], out


def test_an_expired_self_signed_signer_fails_on_its_own_line(bundles: dict[str, Path], pki: Path) -> None:
    for how, anchor in (("--trust-fingerprint", f"SHA256:{fingerprint(pki / 'oldself.pem')}"),
                        ("--trust", str(pki / "oldself.pem"))):
        code, out, _ = _verify(str(bundles["oldself"]), how, anchor)
        assert code == 1 and _no_ok(out), out
        lines = [line for line in out.splitlines() if line.endswith("[certificate-expired]")]
        assert len(lines) == 1 and lines[0].startswith(
            "signer.pem: the signer's certificate expired on 2021-01-01T00:00:00+00:00, before today"), out
        assert "identity: FAILED: the signer's certificate had expired" in out


def test_the_bundles_own_signer_pem_proves_nothing(example_bundle: Path, tmp_path: Path) -> None:
    own = example_bundle / "signer.pem"
    for target in (example_bundle, example_bundle / "data/decision-note.pdf"):
        code, out, _ = _verify(str(target), "--trust", str(own))
        assert code == 1 and _no_ok(out), out
        assert "proves nothing" in out and "[trust-is-own-signer]" in out
        identity = [line for line in out.splitlines() if line.startswith("identity:")]
        assert identity == [f"identity: FAILED: the trust anchor is the bundle's own signer.pem, which proves nothing "
                            f"(--trust {own})"], out
    shutil.copyfile(own, tmp_path / "from-the-signer.pem")  # the same bytes, obtained from the signer: an anchor
    code, out, _ = _verify(str(example_bundle), "--trust", str(tmp_path / "from-the-signer.pem"))
    assert code == 0, out
    assert f"(--trust {tmp_path / 'from-the-signer.pem'}: SHA256:{fingerprint(own)})" in out


def test_a_certificate_naming_the_genuine_fingerprint_is_quoted_cut_and_never_a_verdict(
        bundles: dict[str, Path], keys_fp: str) -> None:
    code, out, err = _verify(str(bundles["forger"]))
    assert code == 1 and _no_ok(out), out
    for line in out.splitlines():
        if keys_fp[:12] in line:  # the genuine fingerprint appears only as the certificate's quoted words
            assert line.startswith(f'{WORDS_PREFIX}"CN=SHA256:{keys_fp[:12]}'), line
        assert len(line.split('" (', 1)[0]) <= 80 if line.startswith(WORDS_PREFIX) else True
        assert not any(line[i:i + 80].lstrip().startswith("OK") for i in range(0, len(line), 80)), line
    assert re.search(r"\(cut: 17[45] characters in all; the signer.s own, unchecked", out), out
    # cryptography warns of the CN over RFC 5280's 64 characters: a line before the verdict, never stderr after it
    assert "Warning" not in err and "Attribute's length" not in err, err
    warning = [i for i, line in enumerate(out.splitlines()) if line.startswith("warning: reading the certificates")]
    assert warning and warning[-1] < len(out.splitlines()) - 1 and "Attribute's length" in out


def test_every_invisible_or_control_character_is_escaped() -> None:
    for char in INVISIBLE:
        shown = escape_terminal(f"a{char}b")
        assert shown == f"a<U+{ord(char):04X}>b"
        assert escape_terminal(shown) == shown
    report = Report(bundle="b", signer=f"CN=Example{INVISIBLE}Org", signer_fingerprint="ab" * 32, signed=True,
                    timestamp="2026-01-01T00:00:00+00:00", timestamp_authority=f"CN=TSA\rOK: {INVISIBLE}")
    words = [line for line in report_lines(report) if line.startswith(WORDS_PREFIX)]
    assert len(words) == 2 and not any(ch in line for ch in INVISIBLE for line in report_lines(report))
    assert words[1].startswith(f'{WORDS_PREFIX}"CN=TSA<U+000D>OK: <U+00AD>')
    assert words[0].startswith(f'{WORDS_PREFIX}"CN=Example<U+00AD><U+034F><U+115F><U+180E><U+3164>')
    assert "<U+E0001><U+FFF9>" in words[0] or "(cut:" in words[0]


def test_a_certificate_cryptography_will_refuse_is_a_problem_not_a_warning_after_the_verdict(tmp_path: Path) -> None:
    """A serial number that is not positive (RFC 5280 4.1.2.2): cryptography loads it with a deprecation
    warning today; verify reports it as a problem of its own line."""
    import warnings

    from generator.bundle.verdict import add_library_warnings

    _named(tmp_path, "negative", "Example Org")
    der = asn1_x509.Certificate.load(x509.load_pem_x509_certificate((tmp_path / "negative.pem").read_bytes())
                                     .public_bytes(serialization.Encoding.DER))
    der["tbs_certificate"]["serial_number"] = -5
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x509.load_der_x509_certificate(der.dump(force=True))
    report = Report(bundle="b", signer="CN=Example Org", signer_fingerprint="ab" * 32, signed=True)
    add_library_warnings(report, caught)
    assert [p.code for p in report.problems] == ["malformed-certificate"]
    assert "serial number" in report.problems[0].message and report.state == "failed"
