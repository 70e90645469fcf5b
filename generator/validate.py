"""`validate`: load every file of a campaign folder, check it against its schema and the row rules."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.campaign import DEFAULT_FILES, PROTOCOL_FILE, CampaignFolder, open_campaign, prediction_path
from generator.findings import Finding, Severity, sort_key
from generator.readers.csvtable import Table, read_table
from generator.readers.grid import row_key, row_outcome
from generator.readers.jsondoc import Document, read_document
from generator.readers.predictions import LabelFile, read_labels

E = Severity.ERROR


@dataclass
class RunFile:
    """The prediction file mapped to one grid row (path None when it would leave the folder)."""

    row_index: int
    relpath: str
    path: Path | None
    exists: bool


@dataclass
class CampaignInputs:
    """Everything loaded from a campaign folder, with the findings of loading and validation."""

    folder: CampaignFolder
    protocol: dict[str, Any] | None
    files: dict[str, str]
    expected: Table | None = None
    reference: LabelFile | None = None
    grid: Table | None = None
    tariffs: Table | None = None
    measurements: dict[str, Document] = field(default_factory=dict)
    run_files: list[RunFile] = field(default_factory=list)
    input_files: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def classes(self) -> set[str] | None:
        return set(self.protocol["classes"]) if self.protocol else None


@dataclass
class ValidationResult:
    """The loaded inputs and their findings, sorted."""

    inputs: CampaignInputs
    findings: list[Finding]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]


def _finding(code: str, file: str, message: str, *, line: int | None = None, field: str | None = None,
             value: Any = None, rule: str | None = None, fix: str | None = None,
             severity: Severity = E) -> Finding:
    return Finding(code=code, severity=severity, file=file, line=line, field=field, value=value, rule=rule,
                   fix=fix, message=message)


def _locate(folder: CampaignFolder, relpath: str, role: str, findings: list[Finding], owner: str) -> Path | None:
    """Resolve a path named by an input; a path leaving the folder or a missing file is a finding."""
    path = folder.resolve(relpath)
    if path is None:
        findings.append(_finding("path-outside-campaign", owner, f"{role} path {relpath!r} leaves the campaign folder",
                                 value=relpath, rule="paths stay inside the campaign folder",
                                 fix="use a relative path inside the campaign folder, without '..' or links out"))
        return None
    if not path.is_file():
        findings.append(_finding("missing-file", relpath, f"{role} file is missing", value=relpath,
                                 rule=f"{role} file named by {owner}", fix=f"add {relpath} or correct the path"))
        return None
    return path


def _check_protocol(protocol: dict[str, Any], file: str, out: list[Finding]) -> None:
    """Rules across protocol fields that a schema cannot express."""
    seen_experiments: set[str] = set()
    for i, exp in enumerate(protocol["experiments"]):
        where = f"/experiments/{i}"
        if exp["id"] in seen_experiments:
            out.append(_finding("duplicate-experiment", file, f"experiment id {exp['id']!r} is declared twice",
                                field=f"{where}/id", value=exp["id"], fix="give each experiment its own id"))
        seen_experiments.add(exp["id"])
        ids = [v["id"] for v in exp["variants"]]
        values = [v["value"] for v in exp["variants"]]
        for dup in sorted({v for v in ids if ids.count(v) > 1}):
            out.append(_finding("duplicate-variant", file, f"variant id {dup!r} is declared twice",
                                field=f"{where}/variants", value=dup, fix="give each variant its own id"))
        if len(set(map(str, values))) != len(values):
            out.append(_finding("duplicate-variant-value", file,
                                f"two variants share a value of the declared variable {exp['variable']!r}",
                                field=f"{where}/variants", value=values, fix="each variant changes the variable"))
        if exp["fixed"]["corpus_revision"] != protocol["corpus"]["revision"]:
            out.append(_finding("corpus-revision-mismatch", file,
                                "the experiment's fixed corpus_revision differs from corpus.revision",
                                field=f"{where}/fixed/corpus_revision", value=exp["fixed"]["corpus_revision"],
                                rule="one registered corpus", fix="use the corpus revision registered above"))
    window = protocol["window"]
    try:
        zoneinfo.ZoneInfo(window["timezone"])
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        out.append(_finding("unknown-timezone", file, f"{window['timezone']!r} is not an IANA time zone",
                            field="/window/timezone", value=window["timezone"], rule="IANA time zone database",
                            fix="use a name such as Europe/Paris or UTC"))
    if window["end"] <= window["start"]:
        out.append(_finding("empty-window", file, "the campaign window ends before it starts",
                            field="/window/end", value=window["end"], fix="correct the window's start and end"))


def _check_expected(table: Table, size: int | None, out: list[Finding]) -> None:
    seen: dict[str, int] = {}
    for row, line in zip(table.rows, table.lines):
        ident = row.get("id")
        if not isinstance(ident, str):
            continue
        if ident in seen:
            out.append(_finding("duplicate-expected-id", table.file, f"ID {ident!r} already listed on line {seen[ident]}",
                                line=line, field="id", value=ident, rule="each expected ID exactly once",
                                fix="remove the duplicate line"))
        else:
            seen[ident] = line
    if size is not None and len(seen) != size:
        out.append(_finding("corpus-size-mismatch", table.file,
                            f"{len(seen)} distinct expected IDs where the protocol registers {size}",
                            value=len(seen), rule=f"corpus.size = {size}", fix="list every expected ID once"))


def _check_reference(ref: LabelFile, expected_ids: list[str], out: list[Finding]) -> None:
    out.extend(ref.problems)
    expected = set(expected_ids)
    seen: set[str] = set()
    dups = [(ln, i) for i, ln in zip(ref.ids, ref.lines) if i in seen or seen.add(i)]  # type: ignore[func-returns-value]
    missing = [i for i in expected_ids if i not in seen]
    extra = [(ln, i) for i, ln in zip(ref.ids, ref.lines) if i not in expected]
    if dups:
        out.append(_finding("reference-duplicate-id", ref.file, f"{len(dups)} IDs labelled twice (first: {dups[0][1]!r})",
                            line=dups[0][0], value=len(dups), fix="keep one checked label per ID"))
    if missing:
        out.append(_finding("reference-missing-id", ref.file, f"{len(missing)} expected IDs have no reference label "
                            f"(first: {', '.join(map(repr, missing[:5]))})", value=len(missing),
                            fix="label every expected ID"))
    if extra:
        out.append(_finding("reference-extra-id", ref.file, f"{len(extra)} labelled IDs are not expected "
                            f"(first: {extra[0][1]!r})", line=extra[0][0], value=len(extra),
                            fix="remove IDs that are not in the expected IDs"))


def _check_grid_rows(inputs: CampaignInputs, out: list[Finding]) -> None:
    grid, protocol = inputs.grid, inputs.protocol
    assert grid is not None
    experiments = {e["id"]: e for e in protocol["experiments"]} if protocol else {}
    first_line: dict[tuple[str, str, str, int], int] = {}
    pattern = inputs.files["predictions"]
    for index, (row, line) in enumerate(zip(grid.rows, grid.lines)):
        if any(row.get(k) is None for k in ("experiment_id", "variant_id", "phase", "run_index")):
            continue
        key = row_key(row)
        if key in first_line:
            out.append(_finding("duplicate-row-key", grid.file,
                                f"attempt {key[0]}/{key[1]}/{key[2]}/{key[3]} already on line {first_line[key]}",
                                line=line, field="run_index", value=key[3],
                                rule="one row per attempt: experiment_id, variant_id, phase, run_index unique",
                                fix="give each attempt its own run_index; never replace a failed run"))
            continue
        first_line[key] = line
        exp = experiments.get(key[0])
        if protocol and exp is None:
            out.append(_finding("unknown-experiment", grid.file, f"experiment_id {key[0]!r} is not in the protocol",
                                line=line, field="experiment_id", value=key[0],
                                rule="experiments declared in protocol.json",
                                fix=f"use one of: {', '.join(sorted(experiments))}"))
        elif exp is not None and key[1] not in {v["id"] for v in exp["variants"]}:
            out.append(_finding("unknown-variant", grid.file,
                                f"variant_id {key[1]!r} is not declared for experiment {key[0]!r}",
                                line=line, field="variant_id", value=key[1],
                                rule="variants declared in protocol.json",
                                fix=f"use one of: {', '.join(v['id'] for v in exp['variants'])}"))
        outcome = row_outcome(row.get("notes"))
        elapsed = row.get("elapsed_seconds")
        if outcome.failed and elapsed == 0:
            out.append(_finding("failed-run-timed-zero", grid.file,
                                f"a run declared outcome={outcome.status} has elapsed_seconds 0",
                                line=line, field="elapsed_seconds", value="0",
                                rule="a failed run has no duration: empty means not recorded, 0 means a real zero",
                                fix="leave elapsed_seconds empty for a failed run"))
        if not outcome.failed and elapsed is None:
            out.append(_finding("missing-duration", grid.file, "a completed run has no elapsed_seconds",
                                line=line, field="elapsed_seconds", value="",
                                rule="every completed run keeps its raw duration",
                                fix="fill in the measured duration, or write outcome=failed in notes"))
        rel = prediction_path(pattern, *key)
        path = inputs.folder.resolve(rel)
        if path is None:
            out.append(_finding("path-outside-campaign", grid.file,
                                f"the prediction file of this row, {rel!r}, would leave the campaign folder",
                                line=line, field="variant_id", value=rel,
                                rule="paths stay inside the campaign folder",
                                fix="use identifiers of letters, digits, '.', '_' and '-'; no links out"))
            inputs.run_files.append(RunFile(index, rel, None, False))
            continue
        exists = path.is_file()
        inputs.run_files.append(RunFile(index, rel, path, exists))
        if exists:
            inputs.input_files.append(rel)
        elif not (outcome.failed and not outcome.completed):
            out.append(_finding("missing-prediction-file", rel, "the prediction file of this run attempt is missing",
                                value=rel, rule=f"grid line {line} maps to {rel}",
                                fix="add the run's id,label file; a failed run with completed=0 may have none"))


def _check_tariffs(table: Table, out: list[Finding]) -> None:
    seen: dict[tuple[str, int], int] = {}
    for row, line in zip(table.rows, table.lines):
        key = (row.get("gpu"), row.get("duration_days"))
        if None in key:
            continue
        if key in seen:  # type: ignore[comparison-overlap]
            out.append(_finding("duplicate-tariff", table.file, f"{key[0]} for {key[1]} days already priced on line "
                                f"{seen[key]}", line=line, field="gpu", value=key[0],  # type: ignore[index]
                                rule="one price per GPU and duration", fix="keep one row"))
        seen[key] = line  # type: ignore[index]


def load_campaign(path: Path) -> CampaignInputs:
    """Load and validate every input of a campaign folder; findings are collected, never raised."""
    folder = open_campaign(path)
    out: list[Finding] = []
    protocol: dict[str, Any] | None = None
    proto_path = folder.root / PROTOCOL_FILE
    if proto_path.is_file():
        doc = read_document(proto_path, PROTOCOL_FILE, "protocol")
        out.extend(doc.findings)
        if doc.ok:
            protocol = doc.data
            _check_protocol(protocol, PROTOCOL_FILE, out)
    else:
        out.append(_finding("missing-file", PROTOCOL_FILE, "the campaign has no protocol.json",
                            rule="every campaign registers its protocol", fix="write protocol.json (see README)"))
    files = dict(DEFAULT_FILES)
    if protocol:
        files.update(protocol["files"])
    inputs = CampaignInputs(folder=folder, protocol=protocol, files=files, findings=out)
    if proto_path.is_file():
        inputs.input_files.append(PROTOCOL_FILE)

    p = _locate(folder, files["expected_ids"], "expected IDs", out, PROTOCOL_FILE)
    if p:
        inputs.input_files.append(files["expected_ids"])
        inputs.expected = read_table(p, files["expected_ids"], "expected-ids-row")
        out.extend(inputs.expected.findings)
        _check_expected(inputs.expected, protocol["corpus"]["size"] if protocol else None, out)
    p = _locate(folder, files["reference"], "reference", out, PROTOCOL_FILE)
    if p:
        inputs.input_files.append(files["reference"])
        inputs.reference = read_labels(p, files["reference"], inputs.classes, E)
        if inputs.expected is not None:
            _check_reference(inputs.reference, [r["id"] for r in inputs.expected.rows if r.get("id")], out)
        else:
            out.extend(inputs.reference.problems)
    p = _locate(folder, files["tariffs"], "tariffs", out, PROTOCOL_FILE)
    if p:
        inputs.input_files.append(files["tariffs"])
        inputs.tariffs = read_table(p, files["tariffs"], "tariffs-row")
        out.extend(inputs.tariffs.findings)
        _check_tariffs(inputs.tariffs, out)
    p = _locate(folder, files["raw_results"], "raw results", out, PROTOCOL_FILE)
    if p:
        inputs.input_files.append(files["raw_results"])
        inputs.grid = read_table(p, files["raw_results"], "raw-results-row")
        out.extend(inputs.grid.findings)
        _check_grid_rows(inputs, out)
    for exp in protocol["experiments"] if protocol else []:
        for variant in exp["variants"]:
            rel = variant.get("measurement")
            if not rel or rel in inputs.measurements:
                continue
            p = _locate(folder, rel, "measurement", out, PROTOCOL_FILE)
            if p:
                inputs.input_files.append(rel)
                inputs.measurements[rel] = read_document(p, rel, "measurement")
                out.extend(inputs.measurements[rel].findings)
    inputs.input_files = sorted(set(inputs.input_files))
    return inputs


def validate_campaign(path: Path) -> ValidationResult:
    """`gpu-audit validate`: every file parsed and checked; prediction formats checked against the classes."""
    inputs = load_campaign(path)
    findings = list(inputs.findings)
    for run in inputs.run_files:
        if run.exists and run.path is not None:
            labels = read_labels(run.path, run.relpath, inputs.classes, Severity.WARNING)
            findings.extend(labels.problems)
    return ValidationResult(inputs=inputs, findings=sorted(findings, key=sort_key))
