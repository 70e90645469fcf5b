"""`check`: validate, then recompute acceptance, comparability, timings, memory and cost into decision.json."""

from __future__ import annotations

import contextvars
import hashlib
import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from generator import __version__
from generator.audit import idsets
from generator.audit.attribution import attribute, owners_of
from generator.audit.campaign import is_file
from generator.audit.findings import Finding, Severity, count_by_severity, sort_key
from generator.audit.readers.boundedread import read_bounded
from generator.audit.readers.predictions import (
    ColumnRules,
    LabelFile,
    known_ids,
    parse_label_bytes,
    refused,
    size_limit,
)
from generator.audit.recompute.acceptance import Acceptance, assess_run, assess_run_reference, prepare_truth
from generator.audit.recompute.decision import recompute
from generator.audit.recompute.gate import gate, withheld
from generator.audit.validate import CampaignInputs, RunFile, load_campaign

CHUNK = 1 << 20
READ_AHEAD = 2


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
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch and epoch.isdigit() else datetime.now(UTC)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _fingerprints(inputs: CampaignInputs, known: dict[str, tuple[int, str]]) -> list[dict[str, Any]]:
    """Size and SHA-256 of every input; files already hashed while they were read are not read again."""
    out = []
    for rel in inputs.input_files:
        if rel in known:
            size, digest = known[rel]
            out.append({"path": rel, "bytes": size, "sha256": digest})
            continue
        path = inputs.folder.resolve(rel)
        if path is not None and is_file(path):
            out.append({"path": rel, "bytes": path.stat().st_size, "sha256": sha256_file(path)})
    return out


def _campaign_summary(protocol: dict[str, Any]) -> dict[str, Any]:
    return {k: protocol[k] for k in ("title", "question", "scenario", "registered_at", "synthetic_data", "corpus",
                                     "classes", "timer")} | {"notes": protocol.get("notes", "")}


def check_campaign(path: Path, *, fast: bool = True,
                   progress: Callable[[str, int, int], None] | None = None,
                   on_loaded: Callable[[CampaignInputs], None] | None = None) -> CheckResult:
    """Validate the campaign folder and recompute every claim from the evidence.

    Prediction files are read a few at a time (never all in memory); `fast=False` uses the straightforward
    row-by-row readers and set arithmetic instead, which must give the same findings. `on_loaded` learns
    the inputs (their files included) before the prediction files are read.
    """
    inputs = load_campaign(path, fast=fast)
    if on_loaded is not None:
        on_loaded(inputs)
    findings = list(inputs.findings)
    protocol = inputs.protocol
    acceptances: dict[int, Acceptance] = {}
    hashed: dict[str, tuple[int, str]] = {}
    for lf, rel in ((inputs.expected, inputs.files["expected_ids"]), (inputs.reference, inputs.files["reference"])):
        if lf is not None and lf.sha256 is not None and lf.size is not None:
            hashed[rel] = (lf.size, lf.sha256)
    truth = None
    # Acceptance is recomputed only against a sound truth: distinct expected IDs, each labelled exactly once.
    # A window that cannot be placed on a timeline leaves nothing to decide either.
    timeline = not any(f.code in {"unknown-timezone", "window-out-of-range"} for f in inputs.findings)
    ready = bool(protocol and inputs.expected is not None and inputs.reference is not None and timeline
                 and inputs.expected.readable and inputs.expected_distinct and inputs.reference_matches)
    if ready and fast:
        truth = prepare_truth(inputs.expected.ids, inputs.expected_distinct, inputs.reference.ids,  # type: ignore[union-attr]
                              inputs.reference.labels, sorted(protocol["classes"]))  # type: ignore[union-attr, index]
    elif ready:
        expected_list = list(idsets.as_array(inputs.expected.ids).to_pylist())  # type: ignore[union-attr]
        reference_map = dict(zip(idsets.as_array(inputs.reference.ids).to_pylist(),  # type: ignore[union-attr]
                                 idsets.as_array(inputs.reference.labels).to_pylist()))  # type: ignore[union-attr]
    rules = ColumnRules.from_schema("labels-row", inputs.classes)
    known = known_ids(inputs.expected, rules) if fast and inputs.expected is not None else None
    max_bytes = size_limit(inputs.expected, inputs.classes)

    def parse(data: bytes, run: RunFile) -> LabelFile:
        return parse_label_bytes(data, run.relpath, rules, Severity.WARNING, fast=fast, known=known)

    def assess(labels: LabelFile | None) -> Acceptance:
        if fast:
            return assess_run(truth, labels, protocol)  # type: ignore[arg-type]
        return assess_run_reference(expected_list, reference_map, labels, protocol)  # type: ignore[arg-type]

    # Repeated runs of a deterministic model write byte-identical prediction files: the column-wise path
    # parses and assesses each distinct content once, and gives its copies the same findings and
    # acceptance under their own names (same bytes, same truth, same rule: the same answer).
    claimed: set[str] = set()  # contents sent to be parsed; their outcome is known once finished, in order
    first_outcome: dict[str, tuple[list[Finding], Acceptance | None]] = {}

    def finish(i: int, run: RunFile, digest: str | None, parsing: Future[LabelFile] | None) -> None:
        if progress is not None:
            progress("recomputing prediction files", i, len(inputs.run_files))
        problems: list[Finding] = []
        acceptance: Acceptance | None = None
        if parsing is not None:
            labels = parsing.result()
            problems = labels.problems
            acceptance = assess(labels) if ready else None
            del labels
            if fast:
                first_outcome[digest] = (problems, acceptance)  # type: ignore[index]
        elif digest is not None:
            problems, acceptance = first_outcome[digest]
            problems = [replace(f, file=run.relpath) for f in problems]
            acceptance = replace(acceptance, prediction_file=run.relpath) if acceptance is not None else None
        elif ready:
            acceptance = assess(None)  # the file is missing
        findings.extend(problems)
        if ready and run.path is not None:
            acceptances[run.row_index] = acceptance  # type: ignore[assignment]

    # This thread reads and hashes each file in turn; its parsing goes to worker threads (reading, hashing
    # and parsing release the GIL). At most READ_AHEAD + 1 files are in memory at once.
    with ThreadPoolExecutor(max_workers=READ_AHEAD) as pool:
        pending: deque[tuple[int, RunFile, str | None, Future[LabelFile] | None]] = deque()
        for i, run in enumerate(inputs.run_files):
            digest, parsing = None, None
            if run.exists and run.path is not None:
                # Read in blocks and hashed on the way; a file too large for the corpus, or with a line too
                # long for any row, is refused unparsed (memory: one block) and its SHA-256 still computed.
                raw = read_bounded(run.path, run.relpath, max_bytes=max_bytes, severity=Severity.WARNING)
                digest = raw.sha256
                hashed[run.relpath] = (raw.size, digest)
                if not (fast and digest in claimed):
                    claimed.add(digest)
                    if raw.data is None:
                        parsing = pool.submit(refused, raw, run.relpath)
                    else:
                        # Each parse runs in a copy of this context, so the command's limits apply there too.
                        parsing = pool.submit(contextvars.copy_context().run, parse, raw.data, run)
                del raw
            pending.append((i, run, digest, parsing))
            while len(pending) > READ_AHEAD:
                finish(*pending.popleft())
        while pending:
            finish(*pending.popleft())
    decision: dict[str, Any] = {
        "schema_version": "1",
        "tool": {"name": "gpu-audit", "version": __version__},
        "generated_at": decision_time(),
        "campaign": _campaign_summary(protocol) if protocol else None,
        "rule": protocol["quality"] if protocol else None,
        "inputs": _fingerprints(inputs, hashed),
    }
    if ready and inputs.grid is not None:
        measurements = {f: d.data for f, d in inputs.measurements.items() if d.ok}
        body, more = recompute(protocol, inputs.grid.file, inputs.grid.rows, inputs.grid.lines, acceptances,  # type: ignore[arg-type]
                               measurements, inputs.tariffs.rows if inputs.tariffs else [],
                               inputs.tariffs.file if inputs.tariffs else inputs.files["tariffs"])
        findings.extend(more)
        findings = attribute(findings, owners_of(inputs))
        decision.update(body)
        decision["decision"] = gate(decision["configurations"], findings)
    else:
        findings = attribute(findings, owners_of(inputs))
        decision.update(window=None, experiments=[], configurations=[],
                        decision=withheld([], [f for f in findings if f.is_error and f.shared_input], unreadable=True))
    findings.sort(key=sort_key)
    decision["finding_counts"] = count_by_severity(findings)
    decision["findings"] = [f.to_dict() for f in findings]
    return CheckResult(decision=decision, findings=findings, inputs=inputs)
