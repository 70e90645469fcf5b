"""Keys: private keys are written 0600 (whatever the umask), never overwritten, never printed; a wrong, missing or
superfluous passphrase is a clear usage error that names where the passphrase comes from and never echoes it.
(That a signed build neither prints nor copies a key, its own or one lying in the campaign: test_hostile_safety.)"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXAMPLE
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

from generator.bundle.sign import signing

PASSPHRASE = "correct horse battery staple 7f3a"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return signing.keygen(tmp_path_factory.mktemp("keys"), "Key Org")


@pytest.fixture
def encrypted_key(keys: tuple[Path, Path], tmp_path: Path) -> Path:
    ident = signing.load_pem_identity(*keys)
    path = tmp_path / "encrypted-key.pem"
    path.write_bytes(ident.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.BestAvailableEncryption(PASSPHRASE.encode())))
    path.chmod(0o600)  # a private key others can read is refused (test_faults)
    return path


@pytest.fixture
def p12(keys: tuple[Path, Path], tmp_path: Path) -> Path:
    ident = signing.load_pem_identity(*keys)
    path = tmp_path / "id.p12"
    path.write_bytes(pkcs12.serialize_key_and_certificates(
        b"id", ident.key, ident.cert, None, serialization.BestAvailableEncryption(PASSPHRASE.encode())))
    path.chmod(0o600)
    return path


def _no_secret(text: str, key: Path | None = None) -> None:
    assert PASSPHRASE not in text
    assert "PRIVATE KEY" not in text
    if key is not None:
        body = [ln for ln in key.read_text().splitlines() if "-----" not in ln]
        assert not any(ln in text for ln in body)


def test_keygen_writes_the_key_0600_whatever_the_umask(run_cli, tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        r = run_cli("keygen", str(tmp_path / "k"), "--name", "Org")
    finally:
        os.umask(previous)
    assert r.code == 0
    key = tmp_path / "k" / signing.KEY_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    _no_secret(r.out + r.err, key)


def test_keygen_refuses_a_dangling_link_where_the_key_goes(run_cli, tmp_path: Path) -> None:
    (tmp_path / "k").mkdir()
    victim = tmp_path / "elsewhere.pem"
    (tmp_path / "k" / signing.KEY_NAME).symlink_to(victim)
    r = run_cli("keygen", str(tmp_path / "k"))
    assert r.code == 2
    assert r.err == (f"gpu-audit: error: {tmp_path / 'k' / signing.KEY_NAME} already exists; keys are never "
                     "overwritten (choose another folder)\n")
    assert not victim.exists()


def test_keygen_into_a_file_is_a_usage_error(run_cli, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    r = run_cli("keygen", str(tmp_path / "file"))
    assert r.code == 2 and "Traceback" not in r.err and r.err.startswith("gpu-audit: error: ")


def test_pem_key_wrong_passphrase(run_cli, keys: tuple[Path, Path], encrypted_key: Path, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_AUDIT_KEY_PASSPHRASE", "wrong " + PASSPHRASE[::-1])
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--key", str(encrypted_key), "--cert", str(keys[1]))
    assert r.code == 2
    assert r.err == (f"gpu-audit: error: {encrypted_key}: wrong passphrase (from $GPU_AUDIT_KEY_PASSPHRASE) for this "
                     "encrypted key\n")
    assert PASSPHRASE[::-1] not in r.err
    assert not (tmp_path / "b").exists()


def test_pem_key_missing_passphrase(run_cli, keys: tuple[Path, Path], encrypted_key: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPU_AUDIT_KEY_PASSPHRASE", raising=False)
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--key", str(encrypted_key), "--cert", str(keys[1]))
    assert r.code == 2
    assert r.err == (f"gpu-audit: error: {encrypted_key} is encrypted: give its passphrase in "
                     "$GPU_AUDIT_KEY_PASSPHRASE\n")


def test_pem_key_passphrase_for_a_plain_key(run_cli, keys: tuple[Path, Path], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_AUDIT_KEY_PASSPHRASE", PASSPHRASE)
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--key", str(keys[0]), "--cert", str(keys[1]))
    assert r.code == 2
    assert r.err == (f"gpu-audit: error: {keys[0]} is not encrypted, but a passphrase was given: unset "
                     "$GPU_AUDIT_KEY_PASSPHRASE\n")
    _no_secret(r.err, keys[0])


def test_pem_key_right_passphrase_loads(encrypted_key: Path, keys: tuple[Path, Path]) -> None:
    ident = signing.load_pem_identity(encrypted_key, keys[1], PASSPHRASE.encode())
    assert ident.fingerprint == signing.load_pem_identity(*keys).fingerprint


@pytest.mark.parametrize("content", [b"", b"not a key",
                                     b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                                     b"\x00" * 100])
def test_damaged_pem_key_is_a_usage_error(run_cli, keys: tuple[Path, Path], tmp_path: Path, content: bytes,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPU_AUDIT_KEY_PASSPHRASE", raising=False)
    bad = tmp_path / "bad.pem"
    bad.write_bytes(content)
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--key", str(bad), "--cert", str(keys[1]))
    assert r.code == 2
    assert r.err.startswith(f"gpu-audit: error: {bad}: not a PEM private key")
    _no_secret(r.err)


def test_keygen_makes_rsa_3072(keys: tuple[Path, Path]) -> None:
    ident = signing.load_pem_identity(*keys)
    assert isinstance(ident.key, rsa.RSAPrivateKey) and ident.key.key_size == 3072
    assert keys[0].read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----\n")  # PKCS#8, unencrypted


@pytest.mark.parametrize(("kind", "make"), [
    ("ECDSA on secp256r1", lambda: ec.generate_private_key(ec.SECP256R1())),
    ("ECDSA on secp384r1", lambda: ec.generate_private_key(ec.SECP384R1())),
    ("Ed25519", ed25519.Ed25519PrivateKey.generate),
    ("DSA", lambda: dsa.generate_private_key(2048)),
    ("RSA of 1024 bits", lambda: rsa.generate_private_key(65537, 1024)),
])
def test_a_key_of_another_kind_is_refused_with_the_reason(run_cli, keys: tuple[Path, Path], tmp_path: Path,
                                                          kind: str, make: Callable[[], PrivateKeyTypes]) -> None:
    """ECDSA and EdDSA would lift the note to PDF 2.0 (ISO/TS 32002), no longer PDF/A-3; small RSA is weak."""
    other = tmp_path / "other.pem"
    other.write_bytes(make().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    os.chmod(other, 0o600)
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--key", str(other), "--cert", str(keys[1]))
    assert r.code == 2 and f"the key must be RSA of at least 2048 bits, not {kind}" in r.err, r.err
    assert "PDF 1.7 (PDF/A-3)" in r.err and "ISO/TS 32002" in r.err and "PDF 2.0" in r.err
    assert "`gpu-audit keygen DIR`" in r.err and "PKCS#12" in r.err
    assert not (tmp_path / "b").exists()
    _no_secret(r.err, other)


def test_pkcs12_wrong_passphrase(run_cli, p12: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_AUDIT_PKCS12_PASSPHRASE", "wrong " + PASSPHRASE[::-1])
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--pkcs12", str(p12))
    assert r.code == 2
    assert r.err == (f"gpu-audit: error: {p12}: wrong passphrase (from $GPU_AUDIT_PKCS12_PASSPHRASE or the prompt), "
                     "or not a PKCS#12 file\n")
    assert PASSPHRASE[::-1] not in r.err
    assert not (tmp_path / "b").exists()


def test_pkcs12_without_passphrase(run_cli, p12: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPU_AUDIT_PKCS12_PASSPHRASE", raising=False)
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--pkcs12", str(p12))  # stdin is no terminal
    assert r.code == 2
    assert r.err == (f"gpu-audit: error: {p12}: wrong passphrase (none given: set $GPU_AUDIT_PKCS12_PASSPHRASE), or "
                     "not a PKCS#12 file\n")


def test_pkcs12_garbage_is_a_usage_error(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_AUDIT_PKCS12_PASSPHRASE", PASSPHRASE)
    bad = tmp_path / "bad.p12"
    bad.write_bytes(b"\x30\x82\xff\xff" + b"\x00" * 64)
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "b"), "--pkcs12", str(bad))
    assert r.code == 2 and r.err.startswith(f"gpu-audit: error: {bad}: ")
    _no_secret(r.err)
