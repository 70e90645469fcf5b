"""Whether a decision note is trusted: its signer, its title and decision.json, checked for a bundle and a note alone.

The signature itself is judged by bundle.sign.signing (pyHanko's full verdict). Here: what the note is read for
once that verdict is clean (its signer certificate, its title, its embedded decision.json), the trust anchor,
and the bundle ID cross-check. pyHanko is imported only when a note is actually parsed, after its size (and in
a bundle its checksum) has been checked.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509

from generator.bundle.sign.certchain import chain_problem, parse_time, validity_problem, weakness_problem
from generator.bundle.sign.signing import PdfSignatureCheck, cert_fingerprint, check_pdf_signature, embedded_decision
from generator.bundle.verdict import Problem, Trust
from generator.core.bundleid import bundle_id
from generator.core.limits import Limits
from generator.core.system.strictjson import JsonRefused, loads

# The note's title starts with its bundle ID in every language ("GA-…: Entscheidungsnotiz"), so that verify
# reads it without knowing the language.
TITLE_ID = re.compile(r"(GA-[0-9A-F]{16})(?::|$)")


@dataclass
class NoteFacts:
    """What a parsed note holds: its signer's certificate, the bundle ID of its title, its embedded decision."""

    signer_cert: x509.Certificate | None = None
    title_id: str | None = None
    decision: bytes | None = None
    problems: list[Problem] = field(default_factory=list)
    others: list[x509.Certificate] = field(default_factory=list)  # the signature's other certificates: its chain


def read_note(pdf: bytes, file: str) -> NoteFacts:
    """The note's signer certificate (and the signature's other ones, its chain), title bundle ID and embedded
    decision.json; a damaged file is a problem."""
    import io

    from pyhanko.pdf_utils.reader import PdfFileReader

    facts = NoteFacts()
    try:
        reader = PdfFileReader(io.BytesIO(pdf), strict=False)
        sigs = reader.embedded_signatures
        if len(sigs) == 1 and sigs[0].signer_cert is not None:
            facts.signer_cert = x509.load_der_x509_certificate(sigs[0].signer_cert.dump())
            facts.others = [x509.load_der_x509_certificate(c.chosen.dump()) for c in
                            sigs[0].signed_data["certificates"] or [] if c.chosen.dump() != sigs[0].signer_cert.dump()]
        try:
            title = str(reader.trailer["/Info"].get_object().get("/Title", ""))
        except KeyError:  # no document information dictionary
            title = ""
        match = TITLE_ID.match(title)
        facts.title_id = match.group(1) if match else None
        facts.decision = embedded_decision(pdf)
    except Exception as exc:  # noqa: BLE001 - pyHanko and asn1crypto raise many types on a damaged file
        facts.problems.append(Problem("bad-pdf", file, f"the PDF cannot be read: {type(exc).__name__}: {exc}"))
    return facts


def signature_problems(pdf: bytes, cert: x509.Certificate, file: str) -> tuple[list[Problem], PdfSignatureCheck]:
    """pyHanko's full verdict on the note's signature with `cert` as the only root (bundle.sign.signing),
    as problems."""
    check = check_pdf_signature(pdf, cert)
    return [Problem(code, file, message) for code, message in check.problems()], check


def own_signer_problem(trust: Trust, where: Path | None, file: str) -> Problem | None:
    """--trust given a file of the very bundle being verified (its signer.pem): the anchor came with what it is
    to vouch for, so it proves nothing. Paths are compared once resolved; for a note, the bundle is the folder
    holding MANIFEST.json one or two levels up (BUNDLE/data/decision-note.pdf). The same *bytes* as signer.pem
    prove nothing either way: a genuine anchor, obtained from the signer, has them too."""
    if trust.path is None or where is None:
        return None
    where = where.resolve()
    roots = [where] if where.is_dir() else [p for p in where.parents[:2] if (p / "MANIFEST.json").is_file()]
    if not any(trust.path.is_relative_to(root) for root in roots):
        return None
    return Problem("trust-is-own-signer", file, f"{trust.source} names a file inside the bundle being verified: a "
                   "certificate taken from the bundle proves nothing about who signed it (whoever made a forgery "
                   "puts their own there); get the signer's certificate, or its fingerprint, from them by another "
                   "channel")


def trust_problem(signer: x509.Certificate, trust: Trust, file: str, signed_at: str | None = None,
                  where: Path | None = None, intermediates: list[x509.Certificate] | None = None) -> Problem | None:
    """Whether the signer is the trust anchor, or a certificate the anchor (a CA) issued for signing, directly or
    through `intermediates` (signer.pem's chain after the signer, or the note signature's other certificates);
    whether it was valid at the signing time (`signed_at`, ISO 8601) and is today; and whether its key (and
    every key of the path) is strong enough, as `build` requires of its own (certchain.key_weakness).

    Today counts too, as the issue that asked for it says: a certificate that expired since is reported even
    when the note carries a timestamp of a time it was valid (PAdES would need revocation data of that time
    as well, which a bundle does not carry). `where`: the bundle folder or note being verified, to refuse
    its own signer.pem as the anchor (own_signer_problem). A fingerprint anchor is checked as before: the
    certificate it names and its period.
    """
    own = own_signer_problem(trust, where, file)
    if own is not None:
        return own
    found = cert_fingerprint(signer)
    if trust.fingerprint is not None and found != trust.fingerprint:
        return Problem("untrusted-signer", file, "the signer is not the certificate of the trusted fingerprint "
                       f"({trust.source})", f"SHA256:{trust.fingerprint}", f"SHA256:{found}")
    when = parse_time(signed_at)
    moments = ([] if when is None else [("the signing time", when)]) + [("today", dt.datetime.now(dt.UTC))]
    if trust.cert is None:
        return validity_problem(signer, moments, file)
    if cert_fingerprint(trust.cert) == found:  # the anchor is the signer: no chain
        return weakness_problem(signer, [], None, file) or validity_problem(signer, moments, file)
    return chain_problem(signer, list(intermediates or []), trust.cert, moments, file)


def decision_id(raw: bytes, file: str, limits: Limits) -> tuple[Any, str | None, Problem | None]:
    """decision.json parsed strictly and its bundle ID recomputed (generator.core.bundleid), or the problem."""
    try:
        decision = loads(raw, limits.max_json_depth)
        if not isinstance(decision, dict):
            raise JsonRefused("not a JSON object")
        return decision, bundle_id(decision), None
    except JsonRefused as exc:
        return None, None, Problem("bad-decision", file, f"decision.json cannot be read: {exc}")
    except UnicodeEncodeError:
        return None, None, Problem("bad-decision", file, "decision.json holds a lone surrogate escape: not Unicode")
