"""The campaign evidence `render --campaign` embeds in the note: the campaign checked first, as `build` checks it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from generator.audit.load.campaign import PROTOCOL_FILE
from generator.audit.load.readers.csvtable import read_bytes
from generator.audit.recompute.decision.decisionfile import read_decision
from generator.audit.report import location
from generator.audit.validate.validate import load_and_validate
from generator.core.errors import CampaignFindingsError
from generator.core.termtext import counted
from generator.render.page.note import Evidence, decision_evidence


def campaign_evidence(campaign_dir: Path | None, decision_bytes: bytes) -> list[Evidence]:
    """The evidence embedded in the PDF: decision.json, and the raw results and protocol when the campaign is given.

    The campaign is read by the campaign loader itself, so every rule of `build` applies (paths inside the
    folder, regular files only, the size limits, a PEM private key refused unread), and each file is
    embedded only if it is byte for byte the one the decision lists: the note never carries other evidence
    than the decision was computed from.
    """
    evidence = [decision_evidence(decision_bytes)]
    if campaign_dir is None:
        return evidence
    inputs = load_and_validate(campaign_dir)
    raw = inputs.files["raw_results"]
    blocking = [f for f in inputs.findings if f.is_error and (inputs.protocol is None or f.file == PROTOCOL_FILE
                                                               or f.value == raw and f.code in _UNLOCATED)]
    if inputs.protocol is None or raw not in inputs.input_files or blocking:
        first = blocking[0] if blocking else None
        detail = f"; first at {location(first)}: {first.message}" if first is not None else ""
        raise CampaignFindingsError(f"{campaign_dir}: its {PROTOCOL_FILE} or raw results cannot be embedded "
                                    f"({counted(len(blocking), 'error finding')}{detail}); nothing was rendered: see "
                                    f"`gpu-audit validate {campaign_dir}`, or render without the campaign")
    listed = {i.path: i.sha256 for i in read_decision(decision_bytes).inputs}
    for rel, description in ((raw, "The raw results grid as submitted"),
                             (PROTOCOL_FILE, "The pre-registered protocol")):
        path = inputs.folder.resolve(rel)
        data = read_bytes(path, rel) if path is not None else b""
        if listed.get(rel) != hashlib.sha256(data).hexdigest():
            raise CampaignFindingsError(f"{campaign_dir}: {rel} is not the file this decision.json was computed "
                                        "from (its SHA-256 differs from the one the decision lists); nothing was "
                                        "rendered: give the campaign the decision came from, or check it again")
        evidence.append(Evidence(Path(rel).name, data, description, "Source"))
    return evidence


_UNLOCATED = frozenset({"path-outside-campaign", "missing-file"})  # the file named cannot be read at all
