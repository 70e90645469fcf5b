"""The signer's certificate judged at each edge: the period's instants, the key sizes, the chain's length and order."""

from __future__ import annotations

import datetime as dt
import functools

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import dsa, ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from test_cert_chains import _sha1

from generator.bundle.sign.certchain import (
    chain_problem,
    hash_weakness,
    in_order,
    issued_by,
    key_weakness,
    parse_time,
    usage_problem,
    validity_problem,
    weakness_problem,
)

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
END = dt.datetime(2034, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)
MAX_CHAIN = 10  # certificates from the signer's to the root, written out: a test must not move with the module
Key = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


@functools.cache
def _ec(label: str, curve: str = "secp256r1") -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP224R1() if curve == "secp224r1" else ec.SECP256R1())


@functools.cache
def _rsa(label: str, bits: int = 2048) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(65537, bits)


def _cert(common: str, key: Key, issuer: str, issuer_key: Key, *, ca: bool = False,
          usage: x509.KeyUsage | None | bool = True, eku: list[x509.ObjectIdentifier] | None = None,
          aki: bool = True, constraints: x509.NameConstraints | None = None,
          start: dt.datetime = START, end: dt.datetime = END) -> x509.Certificate:
    builder = (x509.CertificateBuilder().subject_name(_name(common)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if usage is True:
        usage = x509.KeyUsage(digital_signature=not ca, content_commitment=False, key_encipherment=False,
                              data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                              encipher_only=False, decipher_only=False)
    if usage:
        builder = builder.add_extension(usage, critical=True)
    if eku is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage(eku), critical=False)
    if aki:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            issuer_key.public_key()), critical=False)
    if constraints is not None:
        builder = builder.add_extension(constraints, critical=True)
    return builder.sign(issuer_key, hashes.SHA256())


@functools.cache
def _pki() -> dict[str, x509.Certificate]:
    """A root, an intermediate and a leaf under it (EC P-256), and a leaf issued directly by the root."""
    root = _cert("Root", _ec("root"), "Root", _ec("root"), ca=True)
    inter = _cert("Intermediate", _ec("inter"), "Root", _ec("root"), ca=True)
    leaf = _cert("Signer", _ec("leaf"), "Intermediate", _ec("inter"), eku=[ExtendedKeyUsageOID.EMAIL_PROTECTION])
    direct = _cert("Direct", _ec("direct"), "Root", _ec("root"))
    return {"root": root, "inter": inter, "leaf": leaf, "direct": direct}


def _ladder(n: int) -> list[x509.Certificate]:
    """A chain of `n` certificates, each issued by the next, the last self-signed."""
    keys = [_ec(f"rung{i}") for i in range(n)]
    return [_cert(f"Rung {i}", keys[i], f"Rung {min(i + 1, n - 1)}", keys[min(i + 1, n - 1)], ca=i > 0)
            for i in range(n)]


@pytest.mark.parametrize(("text", "want"), [
    ("", None), (None, None), ("yesterday", None),
    ("2024-01-01T00:00:00Z", START),
    ("2024-01-01T02:00:00+02:00", START),
    ("2024-01-01T00:00:00", START),
])
def test_parse_time_reads_every_offset_as_utc(text: str | None, want: dt.datetime | None) -> None:
    got = parse_time(text)
    assert got == want and (got is None or got.utcoffset() == dt.timedelta(0))


@pytest.mark.parametrize(("moment", "code"), [
    (START, None), (END, None), (START - SECOND, "certificate-not-yet-valid"), (END + SECOND, "certificate-expired"),
])
def test_a_certificate_is_valid_from_its_first_to_its_last_second(moment: dt.datetime, code: str | None) -> None:
    problem = validity_problem(_pki()["leaf"], [("the signing time", moment)], "signer.pem")
    assert (problem and problem.code) == code
    if problem is not None:
        assert problem.found == f"the signing time: {moment.isoformat(timespec='seconds')}"


def _usage(**bits: bool) -> x509.KeyUsage:
    names = ("digital_signature", "content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
             "key_cert_sign", "crl_sign", "encipher_only", "decipher_only")
    return x509.KeyUsage(**{n: bits.get(n, False) for n in names})


@pytest.mark.parametrize(("usage", "eku", "shown"), [
    (_usage(digital_signature=True), None, None),
    (_usage(content_commitment=True), None, None),
    (_usage(digital_signature=True), [ExtendedKeyUsageOID.EMAIL_PROTECTION], None),
    (_usage(digital_signature=True), [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CODE_SIGNING], None),
    (_usage(key_encipherment=True), None, "keyUsage key_encipherment"),
    (None, None, "no keyUsage extension"),
    (_usage(digital_signature=True), [ExtendedKeyUsageOID.SERVER_AUTH], "serverAuth"),
    (_usage(digital_signature=True), [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH],
     "clientAuth, serverAuth"),
])
def test_the_key_usage_must_allow_signing(usage: x509.KeyUsage | None, eku: list[x509.ObjectIdentifier] | None,
                                           shown: str | None) -> None:
    cert = _cert("Signer", _ec("leaf"), "Root", _ec("root"), usage=usage, eku=eku)
    problem = usage_problem(cert, "signer.pem")
    assert (problem and problem.found) == shown


@pytest.mark.parametrize(("key", "why"), [
    (lambda: _rsa("2048").public_key(), None),
    (lambda: _rsa("2047", 2047).public_key(), "RSA key of 2047 bits, below 2048"),
    (lambda: _ec("p256").public_key(), None),
    (lambda: _ec("p224", "secp224r1").public_key(), "EC key on secp224r1 of 224 bits, below 256"),
    (lambda: dsa.generate_private_key(2048).public_key(), "DSA key, which is refused"),
])
def test_key_sizes_at_the_minimum_pass_and_below_it_are_named(key: object, why: str | None) -> None:
    assert key_weakness(key()) == why  # type: ignore[operator]


@pytest.mark.parametrize(("n", "ordered"), [(1, True), (3, True), (MAX_CHAIN, True), (MAX_CHAIN + 1, False)])
def test_a_chain_holds_at_most_max_chain_certificates(n: int, ordered: bool) -> None:
    assert in_order(_ladder(n)) is ordered


def test_a_chain_out_of_order_repeated_or_broken_is_refused() -> None:
    pki = _pki()
    stranger = _cert("Stranger", _ec("stranger"), "Stranger", _ec("stranger"), ca=True)
    assert in_order([pki["leaf"], pki["inter"], pki["root"]])
    assert not in_order([pki["root"], pki["root"]])
    assert not in_order([pki["inter"], pki["leaf"]])
    assert not in_order([pki["leaf"], pki["inter"], stranger])
    assert not in_order([pki["leaf"], pki["root"], pki["inter"]])


def test_a_sha1_certificate_is_issued_by_the_rsa_key_and_name_that_signed_it() -> None:
    root = _cert("RSA Root", _rsa("root"), "RSA Root", _rsa("root"), ca=True)
    leaf = _sha1(_cert("Signer", _ec("leaf"), "RSA Root", _rsa("root")), _rsa("root"))
    other_key = _sha1(_cert("Signer", _ec("leaf"), "RSA Root", _rsa("other")), _rsa("other"))
    other_name = _sha1(_cert("Signer", _ec("leaf"), "Another Root", _rsa("root")), _rsa("root"))
    assert hash_weakness(leaf) == "signed with SHA-1, which is refused"
    assert hash_weakness(root) is None
    assert issued_by(leaf, root)
    assert not issued_by(other_key, root)
    assert not issued_by(other_name, root)
    assert not issued_by(_pki()["leaf"], root)


def test_weakness_names_the_certificate_and_judges_hashes_only_under_an_anchor() -> None:
    pki = _pki()
    weak_inter = _cert("Intermediate", _ec("p224", "secp224r1"), "Root", _ec("root"), ca=True)
    weak_root = _cert("Root", _ec("p224", "secp224r1"), "Root", _ec("p224", "secp224r1"), ca=True)
    rsa_root = _cert("RSA Root", _rsa("root"), "RSA Root", _rsa("root"), ca=True)
    sha1_leaf = _sha1(_cert("Signer", _ec("leaf"), "RSA Root", _rsa("root")), _rsa("root"))
    weak_sha1_leaf = _sha1(_cert("Signer", _ec("p224", "secp224r1"), "RSA Root", _rsa("root")), _rsa("root"))
    sha1_self = _sha1(_cert("RSA Root", _rsa("root"), "RSA Root", _rsa("root"), ca=True), _rsa("root"))

    def detail(signer: x509.Certificate, intermediates: list[x509.Certificate],
               anchor: x509.Certificate | None) -> str | None:
        problem = weakness_problem(signer, intermediates, anchor, "signer.pem")
        return None if problem is None else problem.message.split(" (")[0]

    assert detail(pki["leaf"], [pki["inter"]], pki["root"]) is None
    assert detail(pki["leaf"], [weak_inter], pki["root"]) == \
        "intermediate 1 of signer.pem's chain: EC key on secp224r1 of 224 bits, below 256"
    assert detail(pki["direct"], [], weak_root) == "the anchor: EC key on secp224r1 of 224 bits, below 256"
    assert detail(sha1_leaf, [], rsa_root) == "the signer's certificate: signed with SHA-1, which is refused"
    assert detail(weak_sha1_leaf, [], rsa_root) == \
        "the signer's certificate: EC key on secp224r1 of 224 bits, below 256"
    assert detail(sha1_self, [], None) is None  # the signer is the anchor: its self-signature vouches for nothing
    assert detail(sha1_leaf, [], sha1_self) == "the signer's certificate: signed with SHA-1, which is refused"
    assert detail(pki["direct"], [], sha1_self) is None  # the anchor's own SHA-1 self-signature is not judged


def _problem(signer: x509.Certificate, intermediates: list[x509.Certificate], anchor: x509.Certificate,
             file: str = "signer.pem", moment: dt.datetime = START + dt.timedelta(days=1)) -> tuple[str, str] | None:
    problem = chain_problem(signer, intermediates, anchor, [("the signing time", moment)], file)
    return None if problem is None else (problem.code, problem.message)


def test_a_chain_to_the_anchor_validates_and_each_break_is_named() -> None:
    pki = _pki()
    assert _problem(pki["leaf"], [pki["inter"]], pki["root"]) is None
    assert _problem(pki["direct"], [], pki["root"]) is None
    code, detail = _problem(pki["leaf"], [], pki["root"]) or ("", "")
    assert code == "untrusted-signer"
    assert '"CN=Intermediate", key identifier ' in detail and "neither the anchor nor in signer.pem" in detail
    no_aki = _cert("Signer", _ec("leaf"), "Intermediate", _ec("inter"), aki=False)
    assert '"CN=Intermediate", is neither' in (_problem(no_aki, [], pki["root"]) or ("", ""))[1]
    assert "the note's signature carries" in (_problem(pki["leaf"], [], pki["root"], "data/decision-note.pdf")
                                              or ("", ""))[1]
    self_signed = _cert("Signer", _ec("leaf"), "Signer", _ec("leaf"))
    assert "the signer's certificate is self-signed, and not the anchor" in (
        _problem(self_signed, [], pki["root"]) or ("", ""))[1]
    long_name = "Intermediate CA of a very long organisation name indeed"
    inter = _cert(long_name, _ec("inter"), "A Missing Root CA with a name longer than forty chars", _ec("root"),
                  ca=True)
    leaf = _cert("Signer", _ec("leaf"), long_name, _ec("inter"))
    detail = (_problem(leaf, [inter], pki["root"]) or ("", ""))[1]
    assert 'issued intermediate "CN=Intermediate CA of a very long organi…", ' \
           '"CN=A Missing Root CA with a name longer …", key' in detail  # 40 columns of each name


def test_the_period_then_the_path_then_the_usage_are_judged() -> None:
    pki = _pki()
    expired = _cert("Direct", _ec("direct"), "Root", _ec("root"), end=START + dt.timedelta(days=2))
    assert (_problem(expired, [], pki["root"], moment=START + dt.timedelta(days=3)) or ("",))[0] == \
        "certificate-expired"
    not_ca = _cert("Intermediate", _ec("inter"), "Root", _ec("root"), ca=False)
    assert (_problem(pki["leaf"], [not_ca], pki["root"]) or ("",))[0] == "certificate-chain"
    server = _cert("Direct", _ec("direct"), "Root", _ec("root"), eku=[ExtendedKeyUsageOID.SERVER_AUTH])
    assert (_problem(server, [], pki["root"]) or ("",))[0] == "certificate-usage"
    permitted = x509.NameConstraints(permitted_subtrees=[x509.DirectoryName(_name("Elsewhere"))],
                                     excluded_subtrees=None)
    constrained = _cert("Root", _ec("root"), "Root", _ec("root"), ca=True, constraints=permitted)
    assert (_problem(pki["direct"], [], constrained) or ("",))[0] == "certificate-names"



def test_the_chain_is_judged_without_reaching_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """A signer naming a CRL and an OCSP responder: verify runs offline, so pyHanko is never let fetch them."""
    import socket

    from cryptography.x509.oid import AuthorityInformationAccessOID

    attempts: list[object] = []
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: object) -> None:
        attempts.append(address)
        real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", connect)
    url = x509.UniformResourceIdentifier
    leaf = (x509.CertificateBuilder().subject_name(_name("Direct")).issuer_name(_name("Root"))
            .public_key(_ec("direct").public_key()).serial_number(7).not_valid_before(START).not_valid_after(END)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.CRLDistributionPoints([x509.DistributionPoint(
                [url("http://127.0.0.1:9/root.crl")], None, None, None)]), critical=False)
            .add_extension(x509.AuthorityInformationAccess([x509.AccessDescription(
                AuthorityInformationAccessOID.OCSP, url("http://127.0.0.1:9/ocsp"))]), critical=False)
            .sign(_ec("root"), hashes.SHA256()))
    _problem(leaf, [], _pki()["root"])
    assert attempts == []
