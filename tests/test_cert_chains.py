"""Certificates as organisations have them (issue 46, item 4): a signer issued by an intermediate CA, trusted
through the root; the anchor's name constraints; weak keys and SHA-1 refused by `verify` for their own reason;
and OpenSSL's verdict on the same chains."""

from __future__ import annotations

import datetime as dt
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from asn1crypto import x509 as asn1_x509
from bundle_forgery import reseal
from conftest import EXAMPLE, REPO, needs_tools
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from generator.bundle.sign import signing
from generator.cli.main import main

NOW = dt.datetime.now(dt.UTC)
PEM = serialization.Encoding.PEM
ORG = "Example Org"


def _name(common: str, org: str | None = ORG) -> x509.Name:
    return x509.Name([*([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org)] if org else []),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _usage(ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=not ca, content_commitment=not ca, key_encipherment=False,
                         data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                         encipher_only=False, decipher_only=False)


def _cert(subject: x509.Name, key: rsa.RSAPrivateKey, issuer: x509.Name, issuer_key: rsa.RSAPrivateKey, *,
          ca: bool, constraints: x509.NameConstraints | None = None) -> x509.Certificate:
    """A certificate as a CA issues it: basic constraints, key usage, key identifiers; a leaf for e-mail
    protection (S/MIME, what most signing certificates are)."""
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(NOW - dt.timedelta(days=1))
               .not_valid_after(NOW + dt.timedelta(days=365))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(_usage(ca), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
                              critical=False))
    if not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]), critical=False)
    if constraints is not None:
        builder = builder.add_extension(constraints, critical=True)
    return builder.sign(issuer_key, hashes.SHA256())


def _sha1(cert: x509.Certificate, issuer_key: rsa.RSAPrivateKey) -> x509.Certificate:
    """The same certificate signed again with SHA-1 (cryptography no longer writes one: asn1crypto does)."""
    der = asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))
    algorithm = asn1_x509.SignedDigestAlgorithm({"algorithm": "sha1_rsa"})
    der["tbs_certificate"]["signature"] = algorithm
    der["signature_algorithm"] = algorithm
    der["signature_value"] = issuer_key.sign(der["tbs_certificate"].dump(force=True), padding.PKCS1v15(),
                                             hashes.SHA1())
    return x509.load_der_x509_certificate(der.dump(force=True))


def _write(path: Path, *certs: x509.Certificate) -> Path:
    path.write_bytes(b"".join(c.public_bytes(PEM) for c in certs))
    return path


def _key(path: Path, key: rsa.RSAPrivateKey) -> Path:
    path.write_bytes(key.private_bytes(PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """root.pem -> inter.pem -> leaf.pem (chain.pem: leaf, then intermediate); nc-root.pem, the same root with
    name constraints permitting O=Other Org only; weak.pem (RSA 1024) and sha1.pem under the intermediate."""
    d = tmp_path_factory.mktemp("chain-pki")
    root_key, inter_key, leaf_key = (rsa.generate_private_key(65537, 2048) for _ in range(3))
    weak_key = rsa.generate_private_key(65537, 1024)
    root_name, inter_name = _name("Test Root CA", None), _name("Test Intermediate CA")
    root = _cert(root_name, root_key, root_name, root_key, ca=True)
    other = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Other Org")])
    nc_root = _cert(root_name, root_key, root_name, root_key, ca=True,
                    constraints=x509.NameConstraints(permitted_subtrees=[x509.DirectoryName(other)],
                                                     excluded_subtrees=None))
    inter = _cert(inter_name, inter_key, root_name, root_key, ca=True)
    leaf = _cert(_name("Example Signer"), leaf_key, inter_name, inter_key, ca=False)
    _write(d / "root.pem", root), _write(d / "nc-root.pem", nc_root), _write(d / "inter.pem", inter)
    _write(d / "leaf.pem", leaf), _write(d / "chain.pem", leaf, inter)
    _write(d / "weak.pem", _cert(_name("Weak Signer"), weak_key, inter_name, inter_key, ca=False), inter)
    _write(d / "sha1.pem", _sha1(leaf, inter_key), inter)
    _key(d / "leaf.key", leaf_key), _key(d / "weak.key", weak_key)
    return d


def _resign(genuine: Path, target: Path, key: Path, chain: Path) -> Path:
    """The genuine bundle certified again and sealed by `key` and the chain file (signer.pem holds it as given),
    bypassing the checks of `build`, as whoever holds a key may."""
    certs = x509.load_pem_x509_certificates(chain.read_bytes())
    private = serialization.load_pem_private_key(key.read_bytes(), None)
    assert isinstance(private, rsa.RSAPrivateKey)
    identity = signing.Identity(key=private, cert=certs[0], chain=tuple(certs[1:]))
    shutil.copytree(genuine, target)
    note = target / "data/decision-note.pdf"
    pdf = note.read_bytes()
    note.write_bytes(signing.sign_pdf(identity, pdf[:pdf.index(b"%%EOF") + len(b"%%EOF")] + b"\n"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(signing, "load_pem_identity", lambda *args, **kwargs: identity)
        reseal(target, (key, chain))
    return target


@pytest.fixture(scope="module")
def chained(tmp_path_factory: pytest.TempPathFactory, pki: Path) -> Path:
    """`gpu-audit build --cert chain.pem`: the one build of this module."""
    out = tmp_path_factory.mktemp("chained") / "bundle"
    assert main(["build", str(EXAMPLE), "-o", str(out), "--key", str(pki / "leaf.key"), "--cert",
                 str(pki / "chain.pem"), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def resigned(tmp_path_factory: pytest.TempPathFactory, chained: Path, pki: Path) -> dict[str, Path]:
    """The chained bundle signed again: without the intermediate, by an RSA-1024 leaf, by a SHA-1-signed leaf."""
    root = tmp_path_factory.mktemp("resigned")
    return {"no-inter": _resign(chained, root / "no-inter", pki / "leaf.key", pki / "leaf.pem"),
            "weak": _resign(chained, root / "weak", pki / "weak.key", pki / "weak.pem"),
            "sha1": _resign(chained, root / "sha1", pki / "leaf.key", pki / "sha1.pem")}


def _verify(*argv: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "generator", "verify", *argv], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def _fp(path: Path) -> str:
    return signing.cert_fingerprint(x509.load_pem_x509_certificates(path.read_bytes())[0])


def _openssl(pki: Path, root: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["openssl", "verify", "-CAfile", root, "-untrusted", "inter.pem", "leaf.pem"], cwd=pki,
                          capture_output=True, text=True, check=False)


def test_a_signer_under_an_intermediate_verifies_with_the_root(chained: Path, pki: Path) -> None:
    from pyhanko.pdf_utils.reader import PdfFileReader

    assert (chained / "signer.pem").read_bytes() == (pki / "chain.pem").read_bytes()
    note = chained / "data/decision-note.pdf"
    sig = PdfFileReader(io.BytesIO(note.read_bytes()), strict=False).embedded_signatures[0]
    carried = {signing.cert_fingerprint(x509.load_der_x509_certificate(c.chosen.dump()))
               for c in sig.signed_data["certificates"]}
    assert carried == {_fp(pki / "leaf.pem"), _fp(pki / "inter.pem")}
    for target in (chained, note):  # the bundle, and its note on its own
        code, out = _verify(str(target), "--trust", str(pki / "root.pem"))
        assert code == 0, out
        assert (f"identity: trusted: signer SHA256:{_fp(pki / 'leaf.pem')} issued by anchor "
                f"SHA256:{_fp(pki / 'root.pem')} (--trust {pki / 'root.pem'}), through intermediate "
                f"SHA256:{_fp(pki / 'inter.pem')}, for signing") in out, out
        assert "revocation NOT checked (verify uses no network" in out
        assert out.splitlines()[-1].startswith(f"OK: {target} verifies")
    code, out = _verify(str(chained), "--trust-fingerprint", f"SHA256:{_fp(pki / 'leaf.pem')}")
    assert code == 0 and "identity: trusted: the signer is the trust anchor (--trust-fingerprint" in out, out


@needs_tools("openssl")
def test_openssl_agrees_on_the_good_chain_and_on_the_name_constraints(chained: Path, pki: Path) -> None:
    good = _openssl(pki, "root.pem")
    assert good.returncode == 0 and good.stdout.strip() == "leaf.pem: OK", good.stdout + good.stderr
    assert _verify(str(chained), "--trust", str(pki / "root.pem"))[0] == 0
    constrained = _openssl(pki, "nc-root.pem")
    assert constrained.returncode != 0 and "permitted subtree violation" in constrained.stdout + constrained.stderr
    for target in (chained, chained / "data/decision-note.pdf"):
        code, out = _verify(str(target), "--trust", str(pki / "nc-root.pem"))
        assert code == 1 and not any(line.startswith("OK") for line in out.splitlines()), out
        problem = [line for line in out.splitlines() if line.endswith("[certificate-names]")]
        assert len(problem) == 1 and "the name constraints of the anchor" in problem[0], out
        assert "identity: FAILED: the name constraints on the chain to the anchor exclude a name on it" in out


def test_a_signer_whose_intermediate_the_bundle_lacks_is_refused_naming_it(resigned: dict[str, Path],
                                                                          pki: Path) -> None:
    inter = x509.load_pem_x509_certificate((pki / "inter.pem").read_bytes())
    key_id = inter.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest.hex(":")
    for target, carrier in ((resigned["no-inter"], "signer.pem"),
                            (resigned["no-inter"] / "data/decision-note.pdf", "the note's signature")):
        code, out = _verify(str(target), "--trust", str(pki / "root.pem"))
        assert code == 1, out
        problem = [line for line in out.splitlines() if line.endswith("[untrusted-signer]")]
        assert len(problem) == 1, out
        assert f"through the intermediates {carrier} carries: the intermediate that issued the signer's " \
               f'certificate, "CN=Test Intermediate CA,O=Example Org", key identifier {key_id}, is neither the ' \
               f"anchor nor in {carrier}" in problem[0], out
        assert "identity: FAILED: the signer is not the trust anchor, nor does a chain it carries lead to it" in out


@pytest.mark.parametrize(("name", "reason"), [
    ("weak", "the signer's certificate: RSA key of 1024 bits, below 2048"),
    ("sha1", "the signer's certificate: signed with SHA-1, which is refused"),
])
def test_a_weak_signer_is_refused_for_its_own_reason(resigned: dict[str, Path], pki: Path, name: str,
                                                     reason: str) -> None:
    code, out = _verify(str(resigned[name]), "--trust", str(pki / "root.pem"))
    assert code == 1, out
    problem = [line for line in out.splitlines() if line.endswith("[certificate-weak]")]
    assert len(problem) == 1 and problem[0].startswith(f"signer.pem: {reason}"), out
    assert "identity: FAILED: a key on the signer's chain is too weak" in out


def test_build_refuses_a_chain_file_out_of_order(run_cli, pki: Path, tmp_path: Path) -> None:
    backwards = _write(tmp_path / "backwards.pem", *reversed(x509.load_pem_x509_certificates(
        (pki / "chain.pem").read_bytes())))
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--key", str(pki / "leaf.key"), "--cert",
                str(backwards))
    assert r.code == 2 and "the certificate does not belong to the key" in r.err, r.err
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--key", str(pki / "leaf.key"), "--cert",
                str(_write(tmp_path / "gap.pem", *x509.load_pem_x509_certificates((pki / "chain.pem").read_bytes())[:1],
                           x509.load_pem_x509_certificate((pki / "root.pem").read_bytes()))))
    assert r.code == 2 and "certificate 2 did not issue certificate 1: give the chain leaf first" in r.err, r.err
    assert not (tmp_path / "b").exists()


def test_build_refuses_a_chain_that_verify_would_refuse(run_cli, pki: Path, tmp_path: Path) -> None:
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--key", str(pki / "leaf.key"), "--cert",
                str(pki / "sha1.pem"))
    assert r.code == 2 and "certificate 1 of the chain: signed with SHA-1, which is refused" in r.err, r.err
    assert not (tmp_path / "b").exists()


def test_a_pkcs12_file_gives_its_ca_certificates_as_the_chain(pki: Path, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.serialization import pkcs12

    key = serialization.load_pem_private_key((pki / "leaf.key").read_bytes(), None)
    assert isinstance(key, rsa.RSAPrivateKey)
    leaf, inter = x509.load_pem_x509_certificates((pki / "chain.pem").read_bytes())
    root = x509.load_pem_x509_certificate((pki / "root.pem").read_bytes())
    path = tmp_path / "id.p12"
    path.write_bytes(pkcs12.serialize_key_and_certificates(b"id", key, leaf, [root, inter],  # in no chain order
                                                           serialization.NoEncryption()))
    path.chmod(0o600)
    identity = signing.load_pkcs12_identity(path, None)
    assert identity.cert == leaf and identity.chain == (inter, root)
    assert identity.pem == (pki / "chain.pem").read_bytes() + (pki / "root.pem").read_bytes()
