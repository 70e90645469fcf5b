"""`check`: validate, then recompute acceptance, comparability, timings, memory and cost into decision.json."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from generator import __version__
from generator.findings import Finding, Severity, count_by_severity, sort_key
from generator.readers.predictions import read_labels
from generator.recompute.acceptance import Acceptance, assess_run
from generator.recompute.decision import recompute
from generator.validate import CampaignInputs, load_campaign

CHUNK = 1 << 20


@dataclass
class CheckResult:
    """The decision document, its findings (sorted) and the loaded inputs."""

    decision: dict[str, Any]
    findings: list[Finding]
    inputs: CampaignInputs

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]


def decision_time() -> str:
    """When the decision is made: SOURCE_DATE_EPOCH when set (reproducible builds), else now, UTC."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch and epoch.isdigit() else datetime.now(timezone.utc)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _fingerprints(inputs: CampaignInputs) -> list[dict[str, Any]]:
    out = []
    for rel in inputs.input_files:
        path = inputs.folder.resolve(rel)
        if path is not None and path.is_file():
            out.append({"path": rel, "bytes": path.stat().st_size, "sha256": sha256_file(path)})
    return out


def _campaign_summary(protocol: dict[str, Any]) -> dict[str, Any]:
    return {k: protocol[k] for k in ("title", "question", "scenario", "registered_at", "synthetic_data", "corpus",
                                     "classes", "timer")} | {"notes": protocol.get("notes", "")}


def check_campaign(path: Path) -> CheckResult:
    """Validate the campaign folder and recompute every claim from the evidence."""
    inputs = load_campaign(path)
    findings = list(inputs.findings)
    protocol = inputs.protocol
    acceptances: dict[int, Acceptance] = {}
    expected = [r["id"] for r in inputs.expected.rows if r.get("id")] if inputs.expected else []
    reference = dict(zip(inputs.reference.ids, inputs.reference.labels)) if inputs.reference else {}
    for run in inputs.run_files:
        labels = None
        if run.exists and run.path is not None:
            labels = read_labels(run.path, run.relpath, inputs.classes, Severity.WARNING)
            findings.extend(labels.problems)
        if protocol and expected and run.path is not None:
            acceptances[run.row_index] = assess_run(expected, reference, labels, protocol)
    decision: dict[str, Any] = {
        "schema_version": "1",
        "tool": {"name": "gpu-audit", "version": __version__},
        "generated_at": decision_time(),
        "campaign": _campaign_summary(protocol) if protocol else None,
        "rule": protocol["quality"] if protocol else None,
        "inputs": _fingerprints(inputs),
    }
    usable = protocol is not None and inputs.grid is not None and expected and reference
    if usable:
        measurements = {f: d.data for f, d in inputs.measurements.items() if d.ok}
        body, more = recompute(protocol, inputs.grid.file, inputs.grid.rows, inputs.grid.lines, acceptances,  # type: ignore[arg-type, union-attr]
                               measurements, inputs.tariffs.rows if inputs.tariffs else [],
                               inputs.tariffs.file if inputs.tariffs else inputs.files["tariffs"])
        findings.extend(more)
        decision.update(body)
    else:
        decision.update(window=None, experiments=[], configurations=[], decision={
            "answer": None, "series_decides": False, "ranking": [], "ties": [], "uncertainty": [],
            "reason": "no admissible configuration: the protocol, the expected IDs, the reference or the raw results "
                      "could not be read; see the findings"})
    findings.sort(key=sort_key)
    decision["finding_counts"] = count_by_severity(findings)
    decision["findings"] = [f.to_dict() for f in findings]
    return CheckResult(decision=decision, findings=findings, inputs=inputs)
