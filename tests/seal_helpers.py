"""Test keys, a test RFC 3161 authority (pyHanko's DummyTimeStamper, its clock settable, in-process or behind a
loopback HTTP server) and a campaign sealed in place, for the seal's tests and seed rules."""

from __future__ import annotations

import datetime as dt
import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from asn1crypto import keys as asn1_keys
from asn1crypto import tsp
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pyhanko.sign.timestamps.dummy_client import DummyTimeStamper

from generator.audit.sealing.registration import register_campaign
from generator.bundle.sign import signing

UTC = dt.UTC
# The example's window starts 2026-10-05T09:00 Europe/Paris (07:00 UTC); its protocol says registered 2026-09-30.
BEFORE_WINDOW = dt.datetime(2026, 10, 1, tzinfo=UTC)
WINDOW_START = dt.datetime(2026, 10, 5, 7, 0, tzinfo=UTC)
VALID_FROM, VALID_TO = dt.datetime(2026, 1, 1, tzinfo=UTC), dt.datetime(2028, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class KeyPair:
    """A key and its self-signed certificate, in memory and as PEM files (the key's mode 0600)."""

    key: rsa.RSAPrivateKey
    cert: x509.Certificate

    @property
    def identity(self) -> signing.Identity:
        return signing.Identity(self.key, self.cert)

    def write(self, folder: Path) -> tuple[Path, Path]:
        folder.mkdir(parents=True, exist_ok=True)
        key_path, cert_path = folder / "key.pem", folder / "cert.pem"
        key_path.write_bytes(self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
        key_path.chmod(0o600)
        cert_path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        return key_path, cert_path


def make_test_identity(name: str, eku: x509.ObjectIdentifier | None = None) -> KeyPair:
    """An RSA 2048 key and a self-signed certificate valid through 2026 and 2027 (the example's dates)."""
    key = rsa.generate_private_key(65537, 2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, name)])
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(VALID_FROM).not_valid_after(VALID_TO)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True))
    if eku is not None:  # an authority's certificate: openssl ts -verify requires the EKU critical
        builder = builder.add_extension(x509.ExtendedKeyUsage([eku]), critical=True)
    return KeyPair(key, builder.sign(key, hashes.SHA256()))


@functools.cache
def team() -> KeyPair:
    """The team that seals (one key per test process)."""
    return make_test_identity("Seal Team")


@functools.cache
def authority() -> KeyPair:
    """The test time-stamping authority."""
    return make_test_identity("Test TSA", ExtendedKeyUsageOID.TIME_STAMPING)


def stamper(at: dt.datetime | None, tsa: KeyPair | None = None) -> DummyTimeStamper:
    """pyHanko's test time-stamper, stamping `at` (None: its own clock)."""
    tsa = tsa or authority()
    key = asn1_keys.PrivateKeyInfo.load(tsa.key.private_bytes(serialization.Encoding.DER,
                                                               serialization.PrivateFormat.PKCS8,
                                                               serialization.NoEncryption()))
    return DummyTimeStamper(tsa_cert=asn1_x509.Certificate.load(tsa.cert.public_bytes(serialization.Encoding.DER)),
                            tsa_key=key, fixed_dt=at)


def seal_in_place(folder: Path, at: dt.datetime | None = BEFORE_WINDOW, *, stamped: bool = True) -> None:
    """Seal `folder` as `gpu-audit register --tsa` would, the token dated `at` (an existing seal replaced)."""
    register_campaign(folder, signer=signing.cms_signer(team().identity), certificate=team().cert,
                      timestamper=stamper(at) if stamped else None, force=True)


def seal_example(folder: Path) -> None:
    """The seed rules' "sealed" setup: the example sealed and time-stamped before its window."""
    seal_in_place(folder)


class LocalTsa:
    """An RFC 3161 responder on 127.0.0.1 (pyHanko's DummyTimeStamper behind http.server); `at` sets its clock."""

    def __init__(self, tsa: KeyPair | None = None, at: dt.datetime | None = None):
        self.tsa, self.at = tsa or authority(), at
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                request = tsp.TimeStampReq.load(self.rfile.read(int(self.headers["Content-Length"])))
                body = stamper(owner.at, owner.tsa).request_tsa_response(request).dump()
                self.send_response(200)
                self.send_header("Content-Type", "application/timestamp-reply")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # http.server's names
                pass  # quiet test output

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"


@contextmanager
def local_tsa(tsa: KeyPair | None = None, at: dt.datetime | None = None) -> Iterator[LocalTsa]:
    """A LocalTsa serving while the block runs."""
    served = LocalTsa(tsa, at)
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()
