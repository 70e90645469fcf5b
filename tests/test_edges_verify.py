"""`verify`'s checks at their edges, each called on a small bag: a digest differing in its last hex digit, a
fingerprint in full, the Payload-Oxum's byte and file counts, a size exactly at its limit, five lines shown of six."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from generator.bundle.bundlelayout import BAG_INFO_FILE, BAG_INFO_LABELS, DECISION_PATH, PDF_PATH
from generator.bundle.pdf.notetrust import decision_id
from generator.bundle.sign.signing import cert_fingerprint
from generator.bundle.verdict import Problem, Report, Trust
from generator.bundle.verify import verify
from generator.bundle.verify.manifestdoc import ManifestDoc
from generator.core.errors import UsageError
from generator.core.limits import Limits

BUNDLE_ID = "GA-0123456789ABCDEF"
CREATED = "2024-05-01T10:00:00Z"
MiB = 1024 * 1024


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _last_digit_off(digest: str) -> str:
    return digest[:-1] + ("0" if digest[-1] != "0" else "1")


def _bag(root: Path, files: dict[str, bytes], limits: Limits | None = None) -> verify._Bag:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    folders = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir()}
    return verify._Bag(root, set(files), folders, limits or Limits(), Report(bundle=str(root)))


def _doc(payload: dict[str, bytes] | None = None, tags: dict[str, bytes] | None = None,
         **changes: object) -> ManifestDoc:
    fields: dict[str, object] = dict(
        raw=b"{}", version="3", bundle_id=BUNDLE_ID, created=CREATED, signed=False, signer_sha256=None,
        bag_info=_bag_info(payload or {}),
        payload={rel: (len(d), _sha(d)) for rel, d in (payload or {}).items()},
        tags={rel: (len(d), _sha(d)) for rel, d in (tags or {}).items()})
    return ManifestDoc(**(fields | changes))  # type: ignore[arg-type]


def _bag_info(payload: dict[str, bytes], oxum: str | None = None) -> list[tuple[str, str]]:
    values = {"Source-Organization": "Example", "Bagging-Date": CREATED[:10],
              "Payload-Oxum": oxum or f"{sum(len(d) for d in payload.values())}.{len(payload)}",
              "External-Identifier": BUNDLE_ID, "Bag-Software-Agent": "gpu-audit", "Note-Renderer": "WeasyPrint"}
    return [(label, values[label]) for label in BAG_INFO_LABELS]


def _problems(bag: verify._Bag) -> list[tuple[str, str, str]]:
    return [(p.code, p.file, p.message) for p in bag.report.problems]


PAYLOAD = {"data/a.csv": b"a,b\n1,2\n", "data/inputs/b.json": b"{}"}


@pytest.mark.parametrize(("oxum", "date", "ident", "wrong"), [
    (None, CREATED[:10], BUNDLE_ID, None),
    ("11.2", CREATED[:10], BUNDLE_ID, "Payload-Oxum"),  # one byte more
    ("10.1", CREATED[:10], BUNDLE_ID, "Payload-Oxum"),  # one file fewer
    (None, "2024-05-0", BUNDLE_ID, "Bagging-Date"),
    (None, CREATED[:10], BUNDLE_ID.lower(), "External-Identifier"),
])
def test_bag_info_agrees_with_the_bundle_to_the_byte_and_file(tmp_path: Path, oxum: str | None, date: str,
                                                              ident: str, wrong: str | None) -> None:
    fields = [(label, {"Bagging-Date": date, "External-Identifier": ident}.get(label, value))
              for label, value in _bag_info(PAYLOAD, oxum)]
    text = "".join(f"{label}: {value}\n" for label, value in fields).encode()
    bag = _bag(tmp_path, {BAG_INFO_FILE: text})
    bag.good.add(BAG_INFO_FILE)
    verify._check_bag_info(bag, _doc(PAYLOAD, bag_info=fields))
    found = [m for code, _, m in _problems(bag) if code == "bad-bag-info"]
    assert found == ([] if wrong is None else [f"{wrong} does not match the bundle"])


def test_bag_info_fields_must_be_those_gpu_audit_writes_in_order(tmp_path: Path) -> None:
    fields = _bag_info(PAYLOAD)
    text = "".join(f"{label}: {value}\n" for label, value in fields).encode()
    bag = _bag(tmp_path, {BAG_INFO_FILE: text})
    bag.good.add(BAG_INFO_FILE)
    verify._check_bag_info(bag, _doc(PAYLOAD, bag_info=[*fields[1:], ("Extra", "x")]))
    assert [(c, m.split(" (")[0][:22]) for c, _, m in _problems(bag)] == [
        ("unexpected-bag-info", "field 'Extra' is not o"), ("bad-bag-info", "fields missing, repeat"),
        ("bad-bag-info", "fields differ from tho")]


@pytest.mark.parametrize(("size", "compared"), [(64 * 1024, True), (64 * 1024 + 1, False)])
def test_a_bag_info_that_failed_its_checksum_is_compared_line_by_line_up_to_64_kib(
        tmp_path: Path, size: int, compared: bool) -> None:
    lines = b"".join(b"Unsigned-%d: " % i + b"x" * 100 + b"\n" for i in range(6))
    bag = _bag(tmp_path, {BAG_INFO_FILE: lines + b"#" * (size - len(lines))})
    verify._check_bag_info(bag, _doc(PAYLOAD))
    shown = [m for code, _, m in _problems(bag) if code == "unexpected-bag-info"]
    assert len(shown) == (5 if compared else 0)
    if compared:
        assert shown[0] == f"line {('Unsigned-0: ' + 'x' * 100)[:80]!r} is not in the signed MANIFEST.json"


def test_a_verified_bag_info_shows_five_bad_lines_of_80_characters(tmp_path: Path) -> None:
    fields = _bag_info(PAYLOAD)
    text = "".join(f"{label}: {value}\n" for label, value in fields) + "".join(
        f"no colon here {i} " + "y" * 100 + "\n" for i in range(6))
    bag = _bag(tmp_path, {BAG_INFO_FILE: text.encode()})
    bag.good.add(BAG_INFO_FILE)
    verify._check_bag_info(bag, _doc(PAYLOAD))
    bad = [m for code, _, m in _problems(bag) if m.startswith("line ")]
    assert bad == [f"line {(f'no colon here {i} ' + 'y' * 100)[:80]!r} is not a `Label: value` field"
                   for i in range(5)]


def test_a_bagit_manifest_is_compared_in_full_and_shows_five_of_each_fault(tmp_path: Path) -> None:
    data = {"data/a.csv": b"a", "data/b.csv": b"b", "data/c.csv": b"c"}
    lines = [f"{_sha(b'a')}  data/a.csv", f"{_last_digit_off(_sha(b'b'))}  data/b.csv", f"{_sha(b'x')}  data/z.csv",
             *(f"unreadable-{i}-" + "u" * 80 for i in range(6)),
             *(f"{_sha(b'r')}  data/{'r' * 90}{i}.csv" for i in range(6) for _ in range(2))]
    manifest = "manifest-sha256.txt"
    bag = _bag(tmp_path, {**data, manifest: "\n".join(lines).encode() + b"\n"})
    bag.good.add(manifest)
    bag.sums = {rel: {"sha256": _sha(d)} for rel, d in data.items()}
    verify._check_bagit_manifest(bag, manifest, "sha256", set(data))
    found = _problems(bag)
    assert found[:5] == [("bad-manifest-line", manifest,
                          f"unreadable line {('unreadable-' + str(i) + '-' + 'u' * 80)[:60]!r}") for i in range(5)]
    assert found[5:10] == [("bad-manifest-line", manifest, f"{('data/' + 'r' * 90 + str(i) + '.csv')[:80]!r} is "
                            "listed more than once (BagIt allows one line per file)") for i in range(5)]
    assert sum("listed more than once" in m for _, _, m in found) == 5  # six repeated, five shown
    assert ("unexpected-file", "data/c.csv", f"file is not listed in {manifest}") in found
    assert ("missing-file", "data/z.csv", f"listed in {manifest} but absent") in found
    assert ("checksum-mismatch", "data/b.csv", "sha256 checksum mismatch") in found
    assert not any(rel == "data/a.csv" for _, rel, _ in found)


def test_a_bagit_manifest_never_looks_up_a_listed_path_outside_the_wanted_files(tmp_path: Path) -> None:
    manifest = "manifest-sha256.txt"
    bag = _bag(tmp_path, {"data/a.csv": b"a", "bag-info.txt": b"x",
                          manifest: f"{_sha(b'x')}  bag-info.txt\n{_sha(b'a')}  data/a.csv\n".encode()})
    bag.good.add(manifest)
    verify._check_bagit_manifest(bag, manifest, "sha256", {"data/a.csv"})
    assert _problems(bag) == [("missing-file", "bag-info.txt", f"listed in {manifest} but absent")]
    skipped = _bag(tmp_path, {})
    verify._check_bagit_manifest(skipped, manifest, "sha256", {"data/a.csv"})  # its own checksum failed
    assert _problems(skipped) == []


def test_files_are_checked_by_size_then_by_their_full_sha256(tmp_path: Path) -> None:
    files = {"data/a.csv": b"a", "data/inputs/b.json": b"{}", "data/c.csv": b"c", "data/d.csv": b"dd",
             "stray.txt": b"s", "bag-info.txt": b"i", "data/notes.txt": b"n"}
    bag = _bag(tmp_path, files)
    (tmp_path / "data/empty").mkdir()
    bag.folders.add("data/empty")
    doc = _doc(tags={"bag-info.txt": b"i"}, payload={"data/a.csv": b"a", "data/inputs/b.json": b"{}",
                                                     "data/d.csv": b"d", "data/gone.csv": b"g", "data/notes.txt": b"n"})
    doc = replace(doc, version="2", payload={**doc.payload, "data/c.csv": (1, _last_digit_off(_sha(b"c")))})
    verify._check_files(bag, doc, hashing=True)
    assert sorted((c, f) for c, f, _ in _problems(bag)) == [
        ("checksum-mismatch", "data/c.csv"), ("missing-file", "data/gone.csv"), ("size-mismatch", "data/d.csv"),
        ("unexpected-file", "stray.txt"), ("unexpected-folder", "data/empty")]
    assert bag.good == {"data/a.csv", "data/inputs/b.json", "bag-info.txt", "data/notes.txt"}
    assert set(bag.contents) == {"bag-info.txt"}  # a tag file is kept as read; a payload file is not
    # format 2 lists the payload under SHA-512 as well; a tag file has its SHA-256 alone
    assert bag.sums["data/a.csv"] == {"sha256": _sha(b"a"), "sha512": hashlib.sha512(b"a").hexdigest()}
    assert bag.sums["bag-info.txt"] == {"sha256": _sha(b"i")}
    unhashed = _bag(tmp_path, files)
    verify._check_files(unhashed, doc, hashing=False)
    assert unhashed.good == set() and unhashed.sums == {}


@pytest.mark.parametrize(("size", "too_large"), [(100, False), (101, True)])
def test_the_note_is_hashed_up_to_its_own_limit(tmp_path: Path, size: int, too_large: bool) -> None:
    pdf = b"%" * size
    bag = _bag(tmp_path, {PDF_PATH: pdf}, Limits(max_pdf_bytes=100))
    verify._check_files(bag, _doc(payload={PDF_PATH: pdf}), hashing=True)
    assert [c for c, _, _ in _problems(bag)] == (["too-large"] if too_large else [])
    assert bag.contents.get(PDF_PATH) == (None if too_large else pdf)


@pytest.mark.parametrize(("size", "read"), [(10, True), (11, False)])
def test_a_file_is_read_whole_up_to_its_limit(tmp_path: Path, size: int, read: bool) -> None:
    bag = _bag(tmp_path, {"bagit.txt": b"b" * size}, Limits(max_file_bytes=10))
    assert verify._read(bag, "bagit.txt") == (b"b" * size if read else None)
    assert [c for c, _, _ in _problems(bag)] == ([] if read else ["too-large"])


def _decision(inputs: object) -> bytes:
    return json.dumps({"inputs": inputs}).encode()


def _with_decision(root: Path, raw: bytes, payload: dict[str, tuple[int, str]]) -> tuple[verify._Bag, ManifestDoc]:
    bag = _bag(root, {DECISION_PATH: raw})
    bag.good.add(DECISION_PATH)
    _, recomputed, _ = decision_id(raw, DECISION_PATH, Limits())
    return bag, replace(_doc(bundle_id=recomputed or BUNDLE_ID), payload=payload)


def test_decision_inputs_match_their_copies_in_full(tmp_path: Path) -> None:
    sha = _sha(b"{}")
    raw = _decision([{"path": "a.json", "bytes": 2, "sha256": sha}, {"path": "b.json", "bytes": 2,
                     "sha256": _last_digit_off(sha)}, {"path": "c.json", "bytes": 3, "sha256": sha},
                     {"path": "d.json", "bytes": 2, "sha256": sha}])
    copies = {f"data/inputs/{n}.json": (2, sha) for n in "abce"}
    bag, doc = _with_decision(tmp_path, raw, copies)
    assert verify._check_decision(bag, doc) == raw
    assert sorted((c, f, m[:20]) for c, f, m in _problems(bag)) == [
        ("input-mismatch", "data/inputs/b.json", "the copy differs fro"),
        ("input-mismatch", "data/inputs/c.json", "the copy differs fro"),
        ("input-mismatch", "data/inputs/d.json", "an input decision.js"),
        ("input-mismatch", "data/inputs/e.json", "an input copy decisi")]


@pytest.mark.parametrize("inputs", [None, {"path": "a"}, [{"bytes": 1}], ["a.json"], [{"path": 1}],
                                    [{"path": "a.json"}, {"bytes": 1}]])
def test_decision_inputs_must_be_a_list_of_paths(tmp_path: Path, inputs: object) -> None:
    bag, doc = _with_decision(tmp_path, _decision(inputs), {})
    verify._check_decision(bag, doc)
    assert [c for c, _, _ in _problems(bag)] == ["bad-decision"]


def test_the_bundle_id_recomputed_from_decision_json_must_be_the_signed_one(tmp_path: Path) -> None:
    bag, doc = _with_decision(tmp_path, _decision([]), {})
    verify._check_decision(bag, doc)
    assert _problems(bag) == []
    other = verify._Bag(bag.root, bag.files, bag.folders, bag.limits, Report(bundle="b"), good=bag.good)
    verify._check_decision(other, replace(doc, bundle_id=BUNDLE_ID))
    assert [c for c, _, _ in _problems(other)] == ["bundle-id-mismatch"]


@pytest.mark.parametrize(("size", "parsed"), [(16 * MiB, True), (16 * MiB + 1, False)])
def test_decision_json_is_parsed_up_to_16_mib(tmp_path: Path, size: int, parsed: bool) -> None:
    raw = _decision([]) + b" " * (size - len(_decision([])))
    bag, doc = _with_decision(tmp_path, raw, {})
    verify._check_decision(bag, doc)
    assert [c for c, _, _ in _problems(bag)] == ([] if parsed else ["too-large"])
    assert (bag.report.decision is not None) is parsed


@functools.cache
def _signer_key() -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
    key = rsa.generate_private_key(65537, 2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Signer")])
    now = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + dt.timedelta(days=3650))
            .sign(key, hashes.SHA256()))
    return key, cert


def _signed_bag(root: Path, *, signer_sha256: str | None = None, pem_suffix: bytes = b"",
                signature: bytes | None = None) -> tuple[verify._Bag, ManifestDoc]:
    key, cert = _signer_key()
    raw = b'{"signed": true}'
    sig = key.sign(raw, padding.PKCS1v15(), hashes.SHA256()) if signature is None else signature
    files = {"signer.pem": cert.public_bytes(serialization.Encoding.PEM) + pem_suffix, "MANIFEST.json.sig": sig}
    bag = _bag(root, files)
    return bag, _doc(raw=raw, signed=True, signer_sha256=signer_sha256 or cert_fingerprint(cert))


@pytest.mark.parametrize(("change", "codes"), [
    ({}, []),
    ({"signer_sha256": "last"}, ["signer-mismatch"]),
    ({"signer_sha256": "first"}, ["signer-mismatch"]),
    ({"pem_suffix": b"\n"}, ["bad-certificate"]),
    ({"signature": b"\0" * 256}, ["bad-signature"]),
])
def test_the_signer_is_the_certificate_manifest_json_names_in_full(tmp_path: Path, change: dict[str, object],
                                                                  codes: list[str]) -> None:
    fp = cert_fingerprint(_signer_key()[1])
    if change.get("signer_sha256") == "last":
        change = {"signer_sha256": _last_digit_off(fp)}
    elif change.get("signer_sha256") == "first":
        change = {"signer_sha256": ("0" if fp[0] != "0" else "1") + fp[1:]}
    bag, doc = _signed_bag(tmp_path, **change)  # type: ignore[arg-type]
    cert = verify._signer(bag, doc, Trust(), allow_unsigned=False)
    assert cert == _signer_key()[1] and bag.report.signed is True
    assert [c for c, _, _ in _problems(bag)] == codes
    assert bag.report.signer_fingerprint == fp and bag.report.intermediates == []


def test_signer_pem_carries_the_signer_then_its_intermediates(tmp_path: Path) -> None:
    key, _ = _signer_key()
    ca_key = rsa.generate_private_key(65537, 2048)
    now = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)

    def issue(subject: str, public: rsa.RSAPublicKey, issuer: str, signer: rsa.RSAPrivateKey) -> x509.Certificate:
        return (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)])).public_key(public)
                .serial_number(2).not_valid_before(now).not_valid_after(now + dt.timedelta(days=30))
                .sign(signer, hashes.SHA256()))

    leaf, inter = issue("Signer", key.public_key(), "CA", ca_key), issue("CA", ca_key.public_key(), "CA", ca_key)
    raw = b'{"signed": true}'
    pem = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (leaf, inter))
    bag = _bag(tmp_path, {"signer.pem": pem, "MANIFEST.json.sig": key.sign(raw, padding.PKCS1v15(), hashes.SHA256())})
    assert verify._signer(bag, _doc(raw=raw, signed=True, signer_sha256=cert_fingerprint(leaf)), Trust(), False) == leaf
    assert _problems(bag) == [] and bag.report.intermediates == [inter]


def test_an_unsigned_bundle_is_refused_unless_allowed_and_carries_no_signature_file(tmp_path: Path) -> None:
    bag = _bag(tmp_path, {"signer.pem": b"x"})
    assert verify._signer(bag, _doc(), Trust(), allow_unsigned=True) is None
    assert [(c, f) for c, f, _ in _problems(bag)] == [("unexpected-file", "signer.pem")]
    bag = _bag(tmp_path, {})
    verify._signer(bag, _doc(), Trust(), allow_unsigned=False)
    assert [c for c, _, _ in _problems(bag)] == ["unsigned"]


calls: list[tuple[object, ...]] = []


def _note_bag(root: Path, monkeypatch: pytest.MonkeyPatch, **note: object) -> verify._Bag:
    parsed = SimpleNamespace(**({"problems": [], "signature_fingerprint": cert_fingerprint(_signer_key()[1]),
                                 "timestamp": None, "timestamp_authority": None, "decision": b"{}",
                                 "title_id": BUNDLE_ID} | note))
    calls.clear()

    def parse_note(*args: object) -> SimpleNamespace:
        calls.append(args)
        return parsed

    monkeypatch.setattr(verify, "parse_note", parse_note)
    bag = _bag(root, {PDF_PATH: b"%PDF-1.7 stand-in"})
    bag.good.add(PDF_PATH)
    bag.contents[PDF_PATH] = b"%PDF-1.7 stand-in"
    bag.report.bundle_id = BUNDLE_ID
    return bag


@pytest.mark.parametrize(("note", "found"), [
    ({}, []),
    ({"signature_fingerprint": "last"}, [("signer-mismatch", "the PDF was signed by another certificate")]),
    ({"decision": None}, [("decision-mismatch", "the decision.json embedded in the PDF differs from "
                           "data/decision.json (none is embedded)")]),
    ({"decision": b"{ }"}, [("decision-mismatch", "the decision.json embedded in the PDF differs from "
                             "data/decision.json")]),
    ({"title_id": BUNDLE_ID.lower()}, [("bundle-id-mismatch", "the note's title names another bundle ID")]),
    ({"title_id": None}, [("bundle-id-mismatch", "the note's title names another bundle ID")]),
    ({"problems": [Problem("bad-signature", PDF_PATH, "no")]}, [("bad-signature", "no")]),  # parsed: goes on
])
def test_the_note_is_signed_by_signer_pem_and_embeds_the_decision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  note: dict[str, object],
                                                                  found: list[tuple[str, str]]) -> None:
    if note.get("signature_fingerprint") == "last":
        note = {"signature_fingerprint": _last_digit_off(cert_fingerprint(_signer_key()[1]))}
    bag = _note_bag(tmp_path, monkeypatch, **note)
    verify._check_note(bag, _signer_key()[1], b"{}")
    assert [(c, m) for c, _, m in _problems(bag)] == found
    assert calls[0][1:4] == (PDF_PATH, _signer_key()[1], True)  # its signature is checked with signer.pem
    assert bag.report.note == b"%PDF-1.7 stand-in"


def test_a_note_that_failed_its_checksum_or_parse_goes_no_further(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    broken = [Problem("bad-signature", PDF_PATH, "no"), Problem("bad-pdf", PDF_PATH, "broken")]
    bag = _note_bag(tmp_path, monkeypatch, problems=broken, title_id="x")
    verify._check_note(bag, _signer_key()[1], b"[]")
    assert [c for c, _, _ in _problems(bag)] == ["bad-signature", "bad-pdf"] and bag.report.note is None
    bag.good.discard(PDF_PATH)
    bag.report.problems.clear()
    verify._check_note(bag, _signer_key()[1], b"[]")
    assert [c for c, _, _ in _problems(bag)] == ["not-parsed"]
    unsigned = _note_bag(tmp_path, monkeypatch, signature_fingerprint=None, timestamp="2024-01-01T00:00:00Z")
    verify._check_note(unsigned, None, None)  # an unsigned bundle: no signer to compare, no decision to match
    assert _problems(unsigned) == [] and unsigned.report.timestamp is None and calls[0][2:4] == (None, False)


def test_verify_bundle_refuses_what_is_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not both"):
        verify.verify_bundle(tmp_path, trust=_signer_key()[1], allow_unsigned=True)
    with pytest.raises(UsageError, match="does not exist"):
        verify.verify_bundle(tmp_path / "nothing")
    junk = tmp_path / "bundle.zip"
    junk.write_bytes(b"PK\x03\x04" + b"\0" * 40)  # a regular file, but no plain zip: named, and incomplete
    report = verify.verify_bundle(junk)
    assert report.problems and report.complete is False
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="neither a folder nor a regular file"):
        verify.verify_bundle(fifo)


@pytest.mark.parametrize(("bagit", "manifest_size", "codes"), [
    (None, 16 * MiB, {"bad-manifest"}),
    ("lower", 16 * MiB, {"not-a-bag", "bad-manifest"}),
    (None, 16 * MiB + 1, {"too-large"}),
])
def test_a_folder_is_a_bag_as_gpu_audit_writes_it_with_a_manifest_of_at_most_16_mib(
        tmp_path: Path, bagit: str | None, manifest_size: int, codes: set[str]) -> None:
    from generator.bundle.bagit_format import BAGIT_TXT

    text = BAGIT_TXT.lower() if bagit == "lower" else BAGIT_TXT
    (tmp_path / "bagit.txt").write_text(text, encoding="utf-8")
    (tmp_path / "MANIFEST.json").write_bytes(b"[" + b" " * (manifest_size - 2) + b"]")
    report = verify._verify_folder(tmp_path, "bundle", Trust(), False, Limits())
    assert {p.code for p in report.problems} == codes and report.complete is False


def test_a_folder_without_manifest_json_says_so(tmp_path: Path) -> None:
    from generator.bundle.bagit_format import BAGIT_TXT

    (tmp_path / "bagit.txt").write_text(BAGIT_TXT, encoding="utf-8")
    report = verify._verify_folder(tmp_path, "bundle", Trust(), False, Limits())
    assert [(p.code, p.file) for p in report.problems] == [("missing-file", "MANIFEST.json")]


def test_a_manifest_whose_signature_fails_stops_verify_before_any_hash(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.bundle.bagit_format import BAGIT_TXT

    bag, doc = _signed_bag(tmp_path, signature=b"\0" * 256)
    (tmp_path / "bagit.txt").write_text(BAGIT_TXT, encoding="utf-8")
    (tmp_path / "MANIFEST.json").write_bytes(doc.raw)
    (tmp_path / "data").mkdir()
    (tmp_path / "data/a.csv").write_bytes(b"b")  # the size MANIFEST.json signs, other bytes
    bagit = BAGIT_TXT.encode("utf-8")
    doc = replace(doc, payload={"data/a.csv": (1, _sha(b"a")), "data/gone.csv": (1, _sha(b"g"))},
                  tags={"bagit.txt": (len(bagit), _sha(bagit))})
    monkeypatch.setattr(verify, "read_manifest", lambda *args: doc)
    report = verify._verify_folder(tmp_path, "bundle", Trust(), False, Limits())
    assert [(p.code, p.file) for p in report.problems] == [("bad-signature", "MANIFEST.json.sig"),
                                                           ("missing-file", "data/gone.csv")]
    assert report.complete is False


@pytest.mark.parametrize("anchor", ["none", "signer", "other"])
def test_the_signer_is_trusted_only_when_the_reader_gives_its_anchor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     anchor: str) -> None:
    from generator.bundle.bagit_format import BAGIT_TXT

    bag, doc = _signed_bag(tmp_path)
    bagit = BAGIT_TXT.encode("utf-8")
    (tmp_path / "bagit.txt").write_bytes(bagit)
    (tmp_path / "MANIFEST.json").write_bytes(doc.raw)
    doc = replace(doc, tags={"bagit.txt": (len(bagit), _sha(bagit))})
    monkeypatch.setattr(verify, "read_manifest", lambda *args: doc)
    other = _cert_of(rsa.generate_private_key(65537, 2048))
    trust = {"none": Trust(), "signer": Trust(cert=_signer_key()[1]), "other": Trust(cert=other)}[anchor]
    report = verify._verify_folder(tmp_path, "bundle", trust, False, Limits())
    codes = {p.code for p in report.problems}
    assert report.trusted is (anchor == "signer")
    assert ("untrusted-signer" in codes) is (anchor == "other") and report.complete is (anchor != "other")


def _cert_of(key: rsa.RSAPrivateKey) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Other")])
    now = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(3).not_valid_before(now).not_valid_after(now + dt.timedelta(days=30))
            .sign(key, hashes.SHA256()))


def test_verify_refuses_an_unsigned_bundle_unless_the_caller_allows_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.bundle.bagit_format import BAGIT_TXT

    bagit = BAGIT_TXT.encode("utf-8")
    (tmp_path / "bagit.txt").write_bytes(bagit)
    (tmp_path / "MANIFEST.json").write_bytes(b"{}")
    monkeypatch.setattr(verify, "read_manifest", lambda *args: _doc(tags={"bagit.txt": bagit}))
    assert "unsigned" in {p.code for p in verify.verify_bundle(tmp_path).problems}
    assert "unsigned" not in {p.code for p in verify.verify_bundle(tmp_path, allow_unsigned=True).problems}
