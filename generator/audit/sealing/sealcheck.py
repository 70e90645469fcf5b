"""The seal read by `check`: each sealed file as registered, signature and token verified, the token before the window
and the first run, and the registration's status (sealed and time-stamped, sealed, declared, or invalid)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from cryptography import x509

from generator.audit.load.campaign import PROTOCOL_FILE, is_file
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.load import CampaignInputs
from generator.audit.load.readers.jsondoc import read_document
from generator.audit.recompute.decision.model import RegistrationStatus, SealParty
from generator.audit.recompute.money import cost
from generator.audit.recompute.times.runphases import parse_utc
from generator.audit.sealing import sealdiff
from generator.audit.sealing.registration import sealed_inputs
from generator.core.errors import UsageError
from generator.core.system.safefiles import sha256_file
from generator.seal.record import REGISTRATION_FILE, TOKEN_FILE, SealedFile
from generator.seal.unseal import SealReading, read_seal

MAX_POINTERS = 10  # changed protocol fields reported one by one; the rest in one finding
E = Severity.ERROR
_RESTORE = ("restore the file as registered; a registration changed after the runs needs a new registration and "
            "new runs, since a rule chosen after the results is no rule")
_UNSEALED = ("anyone could have changed the protocol's rule, thresholds, subgroups, reference, splits and tariffs "
             "after seeing the results, and registered_at is the campaign's own word")


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _shared(f: Finding) -> Finding:
    """A seal's finding concerns the registration every configuration rests on: an error withholds the answer."""
    return replace(f, shared_input="protocol")


def _verb(was: str, now: str) -> str:
    return "added" if was == sealdiff.ABSENT else "removed" if now == sealdiff.ABSENT else "changed"


def _protocol_changes(old: bytes, new: bytes) -> list[Finding]:
    changes = sealdiff.json_changes(old, new)
    if not changes:
        return []
    out = [make_finding("sealed-file-changed", E, PROTOCOL_FILE, f"{was} -> {now}: {_verb(was, now)} after "
                        "registration", field=pointer, claimed=now, recomputed=was,
                        rule="the protocol is fixed before the runs: its sealed copy and protocol.json agree",
                        fix=_RESTORE) for pointer, was, now in changes[:MAX_POINTERS]]
    if len(changes) > MAX_POINTERS:
        rest = [p for p, _, _ in changes[MAX_POINTERS:]]
        out.append(make_finding("sealed-file-changed", E, PROTOCOL_FILE, f"{len(rest)} more fields changed after "
                                f"registration: {', '.join(rest[:20])}", field=rest[0],
                                rule="the protocol is fixed before the runs", fix=_RESTORE))
    return out


def _said(sealed: SealedFile, old: bytes, current: bytes) -> str | None:
    """What changed in a sealed file other than the protocol, in words (None: the bytes alone say it)."""
    if sealed.role == "lab_manifest":
        changes = sealdiff.json_changes(old, current)
        if not changes:
            return None
        return "; ".join(f"{p} {w} -> {n}" for p, w, n in changes[:MAX_POINTERS]) + " after registration"
    return sealdiff.row_changes(old, current) if sealed.role == "tariffs" else sealdiff.id_changes(old, current)


def _changed(sealed: SealedFile, current: bytes | None, size: int, digest: str) -> list[Finding]:
    """The findings on one sealed file whose bytes differ from the registered ones, naming what changed."""
    old = sealed.registered_bytes()
    said = None
    if old is not None and current is not None:
        if sealed.role == "protocol":
            found = _protocol_changes(old, current)
            if found:
                return found
        else:
            said = _said(sealed, old, current)
    said = said or sealdiff.byte_change(sealed.size, sealed.sha256, size, digest)
    what = sealed.role.replace("_", " ")
    return [make_finding("sealed-file-changed", E, sealed.path, said, claimed=digest,
                         recomputed=sealed.sha256, rule=f"a file sealed with the registration ({what}) stays byte "
                         "for byte as registered", fix=_RESTORE)]


def _file_findings(inputs: CampaignInputs, reading: SealReading) -> list[Finding]:
    """Each sealed file against the folder, and each file the protocol now fixes that the seal does not hold."""
    registration = reading.registration
    if registration is None:
        return []
    out: list[Finding] = []
    for sealed in registration.files:
        path = inputs.folder.resolve(sealed.path)
        if path is None or not is_file(path):
            out.append(make_finding("sealed-file-missing", E, sealed.path, f"{sealed.path} was sealed with the "
                                    "registration and is no longer in the campaign folder", value=sealed.path,
                                    rule="each sealed file stays in the campaign folder", fix=_RESTORE))
            continue
        size, digest = path.stat().st_size, sha256_file(path)
        if (size, digest) != (sealed.size, sealed.sha256):
            current = path.read_bytes() if size <= 4 * sealed.size + (1 << 20) else None
            out.extend(_changed(sealed, current, size, digest))
    if inputs.protocol is not None:
        for role, rel in sealed_inputs(inputs.protocol):
            if registration.file(rel) is None:
                out.append(make_finding("file-not-sealed", E, rel, f"{rel} ({role.replace('_', ' ')}) is named by "
                                        "protocol.json but was not sealed with the registration", value=rel,
                                        rule="every file the protocol fixes before the runs is sealed with it",
                                        fix=_RESTORE))
    return out


def _time_findings(inputs: CampaignInputs, reading: SealReading) -> list[Finding]:
    """The token's time strictly before the window's start and the first dated run phase ("before", the seeds say)."""
    protocol, token = inputs.protocol, reading.token
    if protocol is None or token is None:
        return []
    out = []
    try:
        start = cost.parse_local(protocol.window.start, protocol.window.timezone)
    except (UsageError, ValueError, KeyError, OverflowError):
        start = None  # an unplaceable window is a finding of its own
    when = _stamp(token.time)
    if start is not None and token.time >= start:
        out.append(make_finding(
            "sealed-after-window-start", E, TOKEN_FILE, f"the registration was sealed at {when} (the token's time), "
            f"not before the window's start {protocol.window.start} {protocol.window.timezone} ({_stamp(start)})",
            claimed=when, recomputed=_stamp(start), rule="the protocol is fixed before the window starts",
            fix="a seal made once the window has started proves nothing about before: register a new protocol, "
                "seal it before a new window, and run again"))
    dated = [(moment, file, i) for file, doc in sorted(inputs.measured.items()) for i, p in enumerate(doc.phases)
             if (moment := parse_utc(p.started_at)) is not None]
    if dated:
        first, file, index = min(dated)
        if token.time >= first:
            out.append(make_finding(
                "sealed-after-first-run", E, TOKEN_FILE, f"the registration was sealed at {when} (the token's "
                f"time), not before the first dated run phase ({file} /phases/{index}/started_at {_stamp(first)})",
                claimed=when, recomputed=_stamp(first), rule="the protocol is fixed before the first run",
                fix="a seal made after a run proves nothing about before it: register a new protocol, seal it, "
                    "and run again"))
    return out


def _status(reading: SealReading) -> RegistrationStatus:
    registration, token = reading.registration, reading.token
    if not reading.present:
        return RegistrationStatus("declared")
    files = tuple(f.path for f in registration.files) if registration is not None else ()
    signer = SealParty(reading.signer.subject, reading.signer.sha256) if reading.signer is not None else None
    authority = None if token is None else SealParty(token.tsa_subject, token.tsa_sha256, token.trusted)
    status = ("seal-broken" if reading.problems else "sealed-time-stamped" if token is not None
              else "sealed-time-not-proven")
    return RegistrationStatus(status, signer, None if token is None else _stamp(token.time), authority,
                              reading.registration_sha256, files)


def check_seal(inputs: CampaignInputs, trust_tsa: Sequence[x509.Certificate] = ()
               ) -> tuple[list[Finding], RegistrationStatus]:
    """The seal's findings and the registration's status; no seal at all is one warning on registered_at.
    `trust_tsa`: the authorities the reader trusts (--trust-tsa); another's token time is stated, unchecked."""
    root = inputs.folder.root
    reading = read_seal(root, trust_tsa)
    if not reading.present:
        return [_shared(make_finding(
            "registration-not-sealed", Severity.WARNING, PROTOCOL_FILE, "the registration is declared, not sealed: "
            f"no {REGISTRATION_FILE} seals the protocol and the files it fixes, so {_UNSEALED}",
            field="/registered_at", claimed=inputs.protocol.registered_at if inputs.protocol else None,
            rule="a registration is proven by a signed, time-stamped seal made before the runs",
            fix="seal the protocol before the runs (`gpu-audit register CAMPAIGN_DIR --key KEY --cert CERT --tsa "
                "URL`); a campaign already run cannot be sealed after the fact: its next registration can"))], \
            _status(reading)
    out: list[Finding] = []
    if is_file(root / REGISTRATION_FILE):  # the schema's findings name the field; the reading's say the rest
        out += [f for f in read_document(root / REGISTRATION_FILE, REGISTRATION_FILE, "registration").findings
                if f.is_error]
    invalid = bool(out or reading.problems)
    for problem in reading.problems:
        code = "seal-token-invalid" if problem.file == TOKEN_FILE else "seal-invalid"
        out.append(make_finding(code, E, problem.file, problem.message, rule="a seal verifies as it was made",
                                fix="keep the seal as `gpu-audit register` wrote it; a seal that does not verify "
                                    "proves nothing, and a campaign already run cannot be sealed again"))
    changed = _file_findings(inputs, reading)
    out += changed + _time_findings(inputs, reading)
    status = _status(reading)
    if invalid or changed:  # a seal that does not verify, or files that no longer match it, prove nothing
        status = replace(status, status="seal-broken")
    return [_shared(f) for f in out], status
