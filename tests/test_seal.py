"""The registration's seal (issue 48): `register` writes it, `check` reads it offline and names what changed since.

The seed rules (tests/seed_rules_seal.py) plant each change in a sealed copy of the example; here are the statuses,
the boundaries of "before", the signature and the token, the command line and the tools a reader has (openssl).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
from conftest import EXAMPLE, needs_tools
from seal_helpers import (
    BEFORE_WINDOW,
    WINDOW_START,
    authority,
    local_tsa,
    make_test_identity,
    seal_in_place,
    team,
)

from generator.audit.check import check_campaign
from generator.audit.report import format_decision
from generator.audit.sealing import sealdiff
from generator.bundle.sign import signing
from generator.core.system.resources import load_schema
from generator.seal.record import REGISTRATION_FILE, SIGNATURE_FILE, TOKEN_FILE, Registration
from generator.seal.unseal import read_seal

SECOND = dt.timedelta(seconds=1)
FIRST_PHASE = ("measurements/rtx4090-batch-b1.json", 0)  # the example's first dated phase (model_load)


@pytest.fixture
def sealed(campaign: Path) -> Path:
    seal_in_place(campaign)
    return campaign


def _codes(folder: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in check_campaign(folder).findings:
        out.setdefault(f.code, []).append(f.message)
    return out


# --- the three statuses --------------------------------------------------------------------------------------


def test_a_sealed_copy_of_the_example_checks_clean_sealed_and_time_stamped(sealed: Path) -> None:
    result = check_campaign(sealed)
    assert result.errors == [] and [f.code for f in result.findings] == []  # not even the declared warning
    assert result.decision["decision"]["answer"] == "rtx4090-batch/b4"
    registration = result.decision["registration"]
    tsa_sha256 = signing.cert_fingerprint(authority().cert)
    assert registration["status"] == "sealed-time-stamped"
    assert registration["time"] == "2026-10-01T00:00:00Z"
    assert registration["authority"] == {"subject": "O=Test TSA,CN=Test TSA", "sha256": tsa_sha256,
                                         "trusted": False}
    assert registration["signer"] == {"subject": "O=Seal Team,CN=Seal Team",
                                      "sha256": signing.cert_fingerprint(team().cert)}
    assert registration["sealed_files"] == ["protocol.json", "expected-ids.csv", "reference.csv",
                                            "subgroups/short.csv", "subgroups/medium.csv", "subgroups/long.csv",
                                            "splits/tuning-ids.csv", "tarifs-forfaits.csv"]
    jsonschema.validate(result.decision, load_schema("decision"))
    assert (f"Registration: sealed and time-stamped by O=Test TSA,CN=Test TSA (SHA-256 {tsa_sha256}) at "
            "2026-10-01T00:00:00Z; time stated by an unchecked authority; signed by O=Seal Team,CN=Seal Team"
            in format_decision(result.document))


def test_an_unsealed_campaign_is_declared_with_a_warning_and_the_same_answer() -> None:
    result = check_campaign(EXAMPLE)
    assert result.errors == []
    assert result.decision["registration"]["status"] == "declared"
    [warning] = [f for f in result.findings if f.code == "registration-not-sealed"]
    assert (warning.file, warning.field, warning.claimed) == ("protocol.json", "/registered_at",
                                                              "2026-09-30T10:00:00+02:00")
    assert "tariffs after seeing the results" in warning.message
    assert "Registration: declared, not sealed" in format_decision(result.document)
    assert result.decision["decision"]["answer"] == "rtx4090-batch/b4"


def test_a_seal_without_a_token_proves_who_and_what_not_when(campaign: Path) -> None:
    seal_in_place(campaign, stamped=False)
    result = check_campaign(campaign)
    assert result.errors == [] and not (campaign / TOKEN_FILE).exists()
    assert result.decision["registration"]["status"] == "sealed-time-not-proven"
    assert result.decision["registration"]["time"] is None
    assert "sealed, time not proven" in format_decision(result.document)


# --- "before": the window's start and the first run, to the second --------------------------------------------


@pytest.mark.parametrize(("at", "late"), [(WINDOW_START - SECOND, False), (WINDOW_START, True)])
def test_the_token_must_be_before_the_window_start(campaign: Path, at: dt.datetime, late: bool) -> None:
    seal_in_place(campaign, at)
    codes = _codes(campaign)
    assert ("sealed-after-window-start" in codes) is late, codes
    assert "sealed-after-first-run" not in codes  # the first run starts half an hour after the window


@pytest.mark.parametrize(("offset", "late"), [(-SECOND, False), (dt.timedelta(0), True)])
def test_the_token_must_be_before_the_first_dated_run(campaign: Path, offset: dt.timedelta, late: bool) -> None:
    # The first phase moved a day before the window (an error of its own, run-outside-window): only the first
    # run then tells the token's time apart.
    first = dt.datetime(2026, 10, 4, tzinfo=dt.UTC)
    path = campaign / FIRST_PHASE[0]
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["phases"][FIRST_PHASE[1]]["started_at"] = first.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    seal_in_place(campaign, first + offset)
    codes = _codes(campaign)
    assert ("sealed-after-first-run" in codes) is late, codes
    assert "sealed-after-window-start" not in codes
    assert "run-outside-window" in codes


# --- the signature and the token -----------------------------------------------------------------------------


def test_registration_json_changed_after_signing_is_an_error_that_withholds_the_answer(sealed: Path) -> None:
    # The forgery a seal exists to show: IDs removed, and the record's digest of the file rewritten to match.
    long = sealed / "subgroups" / "long.csv"
    long.write_text("\n".join(long.read_text(encoding="utf-8").splitlines()[:-9]) + "\n", encoding="utf-8")
    registration = json.loads((sealed / REGISTRATION_FILE).read_text(encoding="utf-8"))
    entry = next(f for f in registration["files"] if f["path"] == "subgroups/long.csv")
    entry.update(bytes=long.stat().st_size, sha256=hashlib.sha256(long.read_bytes()).hexdigest(),
                 copy_gzip_base64=None)
    (sealed / REGISTRATION_FILE).write_text(json.dumps(registration, indent=2) + "\n", encoding="utf-8")
    result = check_campaign(sealed)
    [invalid] = [f for f in result.errors if f.code == "seal-invalid"]
    assert invalid.file == REGISTRATION_FILE and "changed after signing" in invalid.message
    assert result.decision["decision"]["answer"] is None and result.decision["decision"]["status"] == "withheld"
    assert result.decision["registration"]["status"] == "seal-broken"


def test_a_signature_by_another_certificate_than_the_one_named_is_an_error(sealed: Path) -> None:
    other = make_test_identity("Someone Else")
    data = (sealed / REGISTRATION_FILE).read_bytes()
    # Someone Else's signature over the genuine registration.json, which names the team's certificate
    content = asyncio.run(signing.cms_signer(other.identity).async_sign_general_data(data, "sha256", detached=True))
    (sealed / SIGNATURE_FILE).write_bytes(content.dump())
    codes = _codes(sealed)
    assert any("not the one registration.json names" in m for m in codes["seal-invalid"]), codes
    assert "seal-token-invalid" in codes  # the token stamped the team's signature, not this one


def test_a_damaged_token_is_an_error_and_never_a_proven_time(sealed: Path) -> None:
    token = bytearray((sealed / TOKEN_FILE).read_bytes())
    token[-20] ^= 0xFF  # inside the authority's signature
    (sealed / TOKEN_FILE).write_bytes(bytes(token))
    result = check_campaign(sealed)
    assert {f.code for f in result.errors} == {"seal-token-invalid"}
    assert result.decision["registration"]["status"] == "seal-broken"
    assert result.decision["registration"]["time"] is None
    assert result.decision["decision"]["answer"] is None


def test_the_authority_is_trusted_only_when_the_reader_gives_it(sealed: Path) -> None:
    assert read_seal(sealed).token.trusted is False  # type: ignore[union-attr]
    assert read_seal(sealed, [authority().cert]).token.trusted is True  # type: ignore[union-attr]
    assert read_seal(sealed, [make_test_identity("Other TSA").cert]).token.trusted is False  # type: ignore[union-attr]


def test_registration_json_follows_its_schema_and_keeps_what_it_seals(sealed: Path) -> None:
    raw = (sealed / REGISTRATION_FILE).read_bytes()
    jsonschema.validate(json.loads(raw), load_schema("registration"))
    registration = Registration.from_bytes(raw)
    assert registration.to_bytes() == raw
    protocol = registration.file("protocol.json")
    assert protocol is not None and protocol.registered_bytes() == (EXAMPLE / "protocol.json").read_bytes()


def test_a_sealed_file_removed_or_a_file_the_protocol_adds_is_an_error(sealed: Path) -> None:
    (sealed / "subgroups" / "short.csv").unlink()
    codes = _codes(sealed)
    assert codes["sealed-file-missing"] == ["subgroups/short.csv was sealed with the registration and is no longer "
                                            "in the campaign folder"]


# --- what changed, in words ----------------------------------------------------------------------------------


def test_the_changes_are_named() -> None:
    assert sealdiff.json_changes(b'{"a": {"b": [1, 2]}, "c": true}', b'{"a": {"b": [1]}, "c": null, "d": "x"}') == [
        ("/a/b/1", "2", "(absent)"), ("/c", "true", "null"), ("/d", "(absent)", '"x"')]
    assert sealdiff.id_changes(b"id\na\nb\nc\n", b"id\nc\nd\n") == \
        "2 IDs (a, b) removed; 1 ID (d) added after registration"
    assert sealdiff.id_changes(b"id\na\nb\n", b"id\nb\na\n") == "the same IDs in another order after registration"
    assert sealdiff.id_changes(b"id,label\na,x\nb,y\n", b"id,label\na,x\nb,z\n") == \
        "1 label (b: y -> z) changed after registration"
    assert sealdiff.row_changes(b"gpu,price\nh200,10\n", b"gpu,price\nh200,9\nb200,3\n") == \
        "line 2: price 10 -> 9; line 3 added: b200,3 after registration"


# --- the command line, and the tools a reader has -----------------------------------------------------------


def test_register_refuses_to_replace_a_seal_and_warns_without_a_token(run_cli, campaign: Path,
                                                                        tmp_path: Path) -> None:
    key, cert = team().write(tmp_path / "keys")
    r = run_cli("register", str(campaign), "--key", str(key), "--cert", str(cert))
    assert r.code == 0, r.err
    assert "proves who registered and what, not when" in r.err
    assert "results are already in the campaign folder" in r.err  # the example has its runs already
    assert (campaign / SIGNATURE_FILE).exists() and not (campaign / TOKEN_FILE).exists()
    before = (campaign / REGISTRATION_FILE).read_bytes()
    r = run_cli("register", str(campaign), "--key", str(key), "--cert", str(cert))
    assert r.code != 0 and "exactly what a seal exists to show" in r.err
    assert (campaign / REGISTRATION_FILE).read_bytes() == before
    r = run_cli("register", str(campaign), "--key", str(key), "--cert", str(cert), "--tsa", "file:///etc/passwd",
                "--force")
    assert r.code == 2 and "--tsa" in r.err


def test_register_refuses_a_protocol_whose_files_are_missing(run_cli, campaign: Path, tmp_path: Path) -> None:
    key, cert = team().write(tmp_path / "keys")
    (campaign / "subgroups" / "long.csv").unlink()
    r = run_cli("register", str(campaign), "--key", str(key), "--cert", str(cert))
    assert r.code == 2 and "subgroups/long.csv (subgroup ids, named by protocol.json) is not a file" in r.err
    assert not (campaign / REGISTRATION_FILE).exists()


@needs_tools("openssl")
@pytest.mark.allow_hosts(["127.0.0.1"])  # this test only, and only the local authority
def test_openssl_and_gpu_audit_agree_on_a_seal(run_cli, campaign: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for proxy in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    key, cert = team().write(tmp_path / "keys")
    _k, tsa_pem = authority().write(tmp_path / "tsa")
    with local_tsa(at=BEFORE_WINDOW) as tsa:
        r = run_cli("register", str(campaign), "--key", str(key), "--cert", str(cert), "--tsa", tsa.url)
    assert r.code == 0, r.err
    assert "time-stamped at 2026-10-01T00:00:00Z by O=Test TSA,CN=Test TSA" in r.out

    def openssl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["openssl", *args], capture_output=True, text=True, cwd=campaign, check=False)

    # the commands docs/security.md gives a reader
    cms = ("cms", "-verify", "-binary", "-inform", "DER", "-in", SIGNATURE_FILE, "-content", REGISTRATION_FILE,
           "-CAfile", str(cert), "-purpose", "any", "-out", "/dev/null")
    ts = ("ts", "-verify", "-in", TOKEN_FILE, "-data", SIGNATURE_FILE, "-CAfile", str(tsa_pem))
    assert openssl(*cms).returncode == 0 and openssl(*ts).returncode == 0
    assert check_campaign(campaign).errors == []
    path = campaign / REGISTRATION_FILE
    path.write_bytes(path.read_bytes().replace(b'"version": "', b'"version": "9'))
    assert openssl(*cms).returncode != 0
    assert openssl(*ts).returncode == 0  # the token stamps the signature, which did not change
    assert [f.code for f in check_campaign(campaign).errors] == ["seal-invalid"]


# --- page 1 -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "declared"), [
    ("en", "Registration: declared, not sealed."),
    ("de", "Registrierung: erklärt, nicht versiegelt."),
    ("fr", "déclaré, non scellé."),
    ("zh", "已声明，未封存。")])
def test_page_one_says_how_the_registration_is_proven(sealed: Path, lang: str, declared: str) -> None:
    from test_page_one import page_one

    from generator.render.page.note import render_html

    assert declared in page_one(render_html(check_campaign(EXAMPLE).decision, language=lang))
    body = render_html(check_campaign(sealed).decision, language=lang)
    assert declared not in page_one(body)
    assert signing.cert_fingerprint(authority().cert) in body  # beside the registered rule, with the signer's
    if lang == "en":
        text = page_one(body)
        assert "Registration: sealed and time-stamped by O=Test TSA,CN=Test TSA at Oct 1, 2026, 02:00" in text
        assert "(Europe/Paris) (a time stated by an unchecked authority)." in text
        assert "The time is stated by an authority this check did not verify" in body
