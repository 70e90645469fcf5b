"""What a registration seals: protocol.json and every file it names for before the runs, each present to seal."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator import __version__
from generator.audit.load.campaign import PROTOCOL_FILE, is_file, open_campaign
from generator.audit.load.inputs.access import as_object
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.readers.jsondoc import read_document
from generator.audit.report import location
from generator.core.errors import UsageError

if TYPE_CHECKING:
    from cryptography import x509

    from generator.seal.write import Sealed


def sealed_inputs(protocol: Protocol) -> list[tuple[str, str]]:
    """(role, path) of each file fixed before the runs: the protocol, the expected IDs and the reference of every
    corpus, the subgroups' and splits' ID files, the tariffs and the Lab manifest, each path once. The model's and
    tokenizer's revisions are the protocol's own fields: sealed with it."""
    files = [("protocol", PROTOCOL_FILE), ("expected_ids", protocol.files.expected_ids),
             ("reference", protocol.files.reference)]
    for corpus in protocol.corpora or ():
        files += [("expected_ids", corpus.expected_ids), ("reference", corpus.reference)]
    files += [("subgroup_ids", g.ids) for g in protocol.quality.subgroups]
    files += [("split_ids", s.ids) for s in protocol.splits or ()]
    files.append(("tariffs", protocol.files.tariffs))
    if protocol.files.lab_manifest is not None:
        files.append(("lab_manifest", protocol.files.lab_manifest))
    once: dict[str, str] = {}
    for role, path in files:
        once.setdefault(path, role)
    return [(role, path) for path, role in once.items()]


@dataclass(frozen=True)
class RegistrationPlan:
    """The campaign folder, its protocol, the files to seal, and the results already there (none, before the runs)."""

    root: Path
    protocol: Protocol
    files: list[tuple[str, str]]
    results_present: list[str]


def registration_plan(path: Path) -> RegistrationPlan:
    """What sealing `path` would seal: a schema-valid protocol.json and every file it names for before the runs,
    each a file inside the folder (UsageError saying which is missing or why the protocol is refused)."""
    folder = open_campaign(path)
    if not is_file(folder.root / PROTOCOL_FILE):
        raise UsageError(f"{folder.root / PROTOCOL_FILE} is missing: a registration seals the protocol; write it first")
    doc = read_document(folder.root / PROTOCOL_FILE, PROTOCOL_FILE, "protocol")
    errors = [f for f in doc.findings if f.is_error]
    if errors or not doc.ok:
        first = errors[0] if errors else doc.findings[0]
        raise UsageError(f"{location(first)}: {first.message}; a registration seals a valid protocol: correct it "
                         f"(`gpu-audit validate` lists every problem), then seal it")
    protocol = Protocol.of(as_object(doc.data))
    files = sealed_inputs(protocol)
    for role, rel in files:
        resolved = folder.resolve(rel)
        if resolved is None or not is_file(resolved):
            raise UsageError(f"{rel} ({role.replace('_', ' ')}, named by {PROTOCOL_FILE}) is not a file in the "
                             "campaign folder: a registration seals every file the protocol fixes before the runs, "
                             "so that none can be chosen after the results; add it, then seal")
    results = [protocol.files.raw_results] + sorted({v.measurement for e in protocol.experiments for v in e.variants
                                                     if v.measurement})
    present = [rel for rel in results if (p := folder.resolve(rel)) is not None and is_file(p)]
    return RegistrationPlan(folder.root, protocol, files, present)


def register_campaign(path: Path, *, signer: object, certificate: x509.Certificate, timestamper: object = None,
                      force: bool = False) -> tuple[RegistrationPlan, Sealed]:
    """Seal the registration of the campaign folder `path` (generator.seal.write): its plan, then the seal written.

    `signer` is pyHanko's signer of the team's key, `certificate` its cryptography certificate, `timestamper` a
    pyHanko time-stamper (None: no token, the seal then proves who and what, not when)."""
    from generator.seal.write import refuse_existing, seal_registration

    plan = registration_plan(path)
    refuse_existing(plan.root, force)  # before any network request
    sealed = seal_registration(plan.root, plan.files, plan.protocol.registered_at, __version__, signer=signer,
                               certificate=certificate, timestamper=timestamper, force=force)
    return plan, sealed
