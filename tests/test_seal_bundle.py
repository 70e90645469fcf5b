"""The bundle carries the registration's seal and `verify` reports it (issue 48 items 4 and 5): who sealed, when, by
which authority (trusted only with --trust-tsa), and that the bundle's inputs are the sealed ones.

One sealed bundle is built per test run (`sealed_bundle`); the tests read it, and an attack changes a copy.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from bundle_forgery import reseal
from conftest import EXAMPLE, _made_once, needs_tools
from seal_helpers import authority, make_test_identity, seal_in_place, team

from generator.audit.check import check_campaign
from generator.bundle.sign import signing
from generator.bundle.verify import sealverify
from generator.bundle.verify.verify import load_trust, verify_bundle
from generator.cli.main import main
from generator.seal.record import REGISTRATION_FILE, SEAL_FILES, SIGNATURE_FILE, TOKEN_FILE
from generator.seal.unseal import SealReading

# what a bundle holds is what these tests are about, not the note parser's limits (tests/test_attacks_*.py)
pytestmark = pytest.mark.usefixtures("note_parsed_here")

INPUTS = "data/inputs"
TIME = "2026-10-01T00:00:00Z"


@pytest.fixture(scope="session")
def sealed_bundle(tmp_path_factory: pytest.TempPathFactory, example_keys: tuple[Path, Path]) -> Path:
    """A copy of inputs/example sealed and time-stamped before its window, then built and signed (read only);
    beside the bundle, the certificates of its sealing team and time-stamping authority (tsa.pem, team.pem)."""
    key, cert = example_keys

    def make(work: Path) -> None:
        campaign = work / "campaign"
        shutil.copytree(EXAMPLE, campaign)
        seal_in_place(campaign)  # authority() and team() are this process's: their certificates are kept
        _k, tsa = authority().write(work / "tsa")
        _k, own = team().write(work / "team")
        shutil.copyfile(tsa, work / "tsa.pem")
        shutil.copyfile(own, work / "team.pem")
        shutil.rmtree(work / "tsa")
        shutil.rmtree(work / "team")
        assert main(["build", str(campaign), "-o", str(work / "bundle"), "--key", str(key), "--cert", str(cert),
                     "--quiet"]) == 0

    return _made_once(tmp_path_factory, "sealed-bundle", make)


def _fingerprint(pem: Path) -> str:
    from cryptography import x509

    return signing.cert_fingerprint(x509.load_pem_x509_certificate(pem.read_bytes()))


def _attacked(sealed_bundle: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "bundle"
    shutil.copytree(sealed_bundle / "bundle", copy)
    return copy


def test_the_seal_travels_as_inputs_listed_and_hashed_in_decision_json(sealed_bundle: Path) -> None:
    bundle = sealed_bundle / "bundle"
    inputs = {i["path"]: i for i in json.loads((bundle / "data" / "decision.json").read_bytes())["inputs"]}
    for name in SEAL_FILES:
        copy = bundle / INPUTS / name
        assert copy.read_bytes() == (sealed_bundle / "campaign" / name).read_bytes()
        assert inputs[name]["bytes"] == copy.stat().st_size
        assert inputs[name]["sha256"] == hashlib.sha256(copy.read_bytes()).hexdigest()


def test_verify_reports_who_sealed_when_and_that_the_inputs_are_the_sealed_ones(
        sealed_bundle: Path, example_keys: tuple[Path, Path], run_cli) -> None:
    bundle = sealed_bundle / "bundle"
    r = run_cli("verify", str(bundle), "--trust", str(example_keys[1]))
    assert r.code == 0, r.out
    tsa, own = _fingerprint(sealed_bundle / "tsa.pem"), _fingerprint(sealed_bundle / "team.pem")
    assert ("registration: sealed: the bundle's inputs are the 8 files registration.json seals, byte for byte "
            "(data/inputs/registration.json, .p7s, .tsr)" in r.out)
    assert f"sealed by O=Seal Team,CN=Seal Team (SHA-256 {own})" in r.out
    assert (f"time: {TIME}, stated by an unchecked authority: O=Test TSA,CN=Test TSA (SHA-256 {tsa}); not proven "
            "unless you trust it" in r.out)
    assert "an authority you trust" not in r.out


def test_trust_in_the_authority_is_the_readers(sealed_bundle: Path, example_keys: tuple[Path, Path], run_cli,
                                                tmp_path: Path) -> None:
    bundle, tsa = sealed_bundle / "bundle", sealed_bundle / "tsa.pem"
    trusted = run_cli("verify", str(bundle), "--trust", str(example_keys[1]), "--trust-tsa", str(tsa))
    assert trusted.code == 0, trusted.out
    assert (f"time-stamped by O=Test TSA,CN=Test TSA (SHA-256 {_fingerprint(tsa)}) at {TIME}, an authority you "
            "trust" in trusted.out)
    assert "unchecked authority" not in trusted.out
    _k, other = make_test_identity("Other TSA").write(tmp_path / "other")
    untrusted = run_cli("verify", str(bundle), "--trust", str(example_keys[1]), "--trust-tsa", str(other),
                        "--trust-tsa", str(example_keys[1]))  # repeatable; neither is the token's authority
    assert untrusted.code == 0 and f"{TIME}, stated by an unchecked authority" in untrusted.out
    assert "an authority you trust" not in untrusted.out
    (tmp_path / "notes.txt").write_text("not a certificate", encoding="utf-8")
    bad = run_cli("verify", str(bundle), "--trust-tsa", str(tmp_path / "notes.txt"))
    assert bad.code == 2 and "notes.txt is not a PEM certificate" in bad.err


def test_a_bundle_without_a_seal_is_declared_not_a_failure(example_bundle: Path,
                                                           example_keys: tuple[Path, Path]) -> None:
    report = verify_bundle(example_bundle, trust=load_trust(example_keys[1]))
    assert report.ok, report.problems
    assert report.registration[0].startswith("registration: declared, not sealed")


def test_a_sealed_input_changed_and_the_bag_rebuilt_fails_naming_the_file(
        sealed_bundle: Path, example_keys: tuple[Path, Path], tmp_path: Path) -> None:
    bundle = _attacked(sealed_bundle, tmp_path)
    long_ids = bundle / INPUTS / "subgroups" / "long.csv"
    lines = long_ids.read_text(encoding="utf-8").splitlines(keepends=True)
    long_ids.write_text("".join(lines[:-2]), encoding="utf-8")  # two hard examples removed
    reseal(bundle, (example_keys[0], example_keys[1]))
    report = verify_bundle(bundle, trust=load_trust(example_keys[1]))
    assert not report.ok
    changed = [p for p in report.problems if p.code == "sealed-input-changed"]
    assert [p.file for p in changed] == [f"{INPUTS}/subgroups/long.csv"]
    assert "2 IDs (ylva, ziproxy) removed after registration" in changed[0].message
    assert report.registration[0].startswith("registration: FAILED")


def test_a_damaged_signature_or_token_fails(sealed_bundle: Path, example_keys: tuple[Path, Path],
                                            tmp_path: Path) -> None:
    for name, code in ((SIGNATURE_FILE, "seal-invalid"), (TOKEN_FILE, "seal-token-invalid")):
        bundle = _attacked(sealed_bundle, tmp_path / name)
        part = bundle / INPUTS / name
        data = bytearray(part.read_bytes())
        data[-40] ^= 0xFF  # inside the signature value at the end of the SignedData
        part.write_bytes(bytes(data))
        reseal(bundle, (example_keys[0], example_keys[1]))
        report = verify_bundle(bundle, trust=load_trust(example_keys[1]))
        assert not report.ok
        assert code in {p.code for p in report.problems}, report.problems
        assert "an authority you trust" not in "\n".join(report.registration)


def test_decision_json_saying_sealed_needs_the_seal_in_the_bundle(sealed_bundle: Path,
                                                                  example_keys: tuple[Path, Path],
                                                                  tmp_path: Path) -> None:
    bundle = _attacked(sealed_bundle, tmp_path)
    for name in SEAL_FILES:
        (bundle / INPUTS / name).unlink()
    reseal(bundle, (example_keys[0], example_keys[1]))
    report = verify_bundle(bundle, trust=load_trust(example_keys[1]))
    assert ("registration-mismatch", "data/decision.json") in {(p.code, p.file) for p in report.problems}
    assert not report.ok


def test_check_takes_the_readers_authorities_too(campaign: Path, tmp_path: Path, run_cli) -> None:
    seal_in_place(campaign)
    assert check_campaign(campaign, trust_tsa=[authority().cert]).decision["registration"]["authority"]["trusted"]
    _k, tsa = authority().write(tmp_path / "tsa")
    r = run_cli("check", str(campaign), "--trust-tsa", str(tsa))
    assert r.code == 0 and "Registration: sealed and time-stamped by O=Test TSA" in r.out
    assert "unchecked authority" not in r.out
    assert "unchecked authority" in run_cli("check", str(campaign)).out


@needs_tools("openssl")
def test_openssl_checks_the_bundles_copies_of_the_seal(sealed_bundle: Path) -> None:
    """The commands docs/security.md gives a reader, run in the bundle's data/inputs/."""
    where = sealed_bundle / "bundle" / INPUTS

    def openssl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["openssl", *args], capture_output=True, text=True, cwd=where, check=False)

    cms = openssl("cms", "-verify", "-binary", "-inform", "DER", "-in", SIGNATURE_FILE, "-content", REGISTRATION_FILE,
                  "-CAfile", str(sealed_bundle / "team.pem"), "-purpose", "any", "-out", "/dev/null")
    ts = openssl("ts", "-verify", "-in", TOKEN_FILE, "-data", SIGNATURE_FILE, "-CAfile", str(sealed_bundle / "tsa.pem"))
    assert cms.returncode == 0, cms.stderr
    assert ts.returncode == 0 and "Verification: OK" in ts.stdout, ts.stdout + ts.stderr
    reply = openssl("ts", "-reply", "-in", TOKEN_FILE, "-text")
    assert "Time stamp: Oct  1 00:00:00 2026 GMT" in reply.stdout


def test_a_seal_without_a_token_names_no_token_file() -> None:
    # a seal made without --tsa has no registration.json.tsr: verify names only the files the bundle carries
    lines = sealverify._lines(SealReading(present=True), 4, True)
    assert lines[0].endswith("(data/inputs/registration.json, .p7s)")
    assert "time: NOT PROVEN" in lines[1]
