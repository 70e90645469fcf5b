"""`validate`: load every file of a campaign folder, check it against its schema and the row rules."""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from generator.audit import idsets, names, protocol_rules
from generator.audit.attribution import attribute, owners_of
from generator.audit.campaign import (
    DEFAULT_FILES,
    PROTOCOL_FILE,
    CampaignFolder,
    is_file,
    open_campaign,
    prediction_path,
    template_example,
)
from generator.audit.findings import Finding, Severity, sort_key
from generator.audit.readers.csvtable import Table, read_table
from generator.audit.readers.grid import row_key, row_outcome
from generator.audit.readers.jsondoc import Document, read_document
from generator.audit.readers.predictions import (
    FIRST_FEW,
    ColumnRules,
    LabelFile,
    known_ids,
    read_ids,
    read_labels,
    size_limit,
)
from generator.audit.recompute import cost
from generator.core.errors import UsageError

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
    expected: LabelFile | None = None
    expected_distinct: bool = False
    reference: LabelFile | None = None
    reference_matches: bool = False  # the reference labels exactly the expected IDs, in a valid format
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
    path = None if names.refused(relpath) else folder.resolve(relpath)  # a name the bag cannot carry: never read
    if path is None:
        if any(f.code in ("path-outside-campaign", names.CODE) and f.file == owner and f.value == relpath for f in findings):
            return None  # _check_protocol reported it already, at the protocol field that names it
        findings.append(_finding("path-outside-campaign", owner, f"{role} path {relpath!r} leaves the campaign folder",
                                 value=relpath, rule="paths stay inside the campaign folder",
                                 fix="use a relative path inside the campaign folder, without '..' or links out"))
        return None
    if not is_file(path):
        findings.append(_finding("missing-file", relpath, f"{role} file is missing", value=relpath,
                                 rule=f"{role} file named by {owner}", fix=f"add {relpath} or correct the path"))
        return None
    return path


def _check_protocol(protocol: dict[str, Any], file: str, out: list[Finding],
                    folder: CampaignFolder | None = None) -> None:
    """Rules across protocol fields that a schema cannot express (`folder`: the paths it names, too)."""
    if folder is not None:
        protocol_rules.check_paths(protocol, file, folder, out)
        names.check_names(protocol, file, out)  # names the bundle's manifests could not carry back
    protocol_rules.check_classes(protocol, file, out)
    protocol_rules.check_measurement_links(protocol, file, out)
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
    try:
        datetime.fromisoformat(protocol["registered_at"].replace("Z", "+00:00"))
    except ValueError:
        out.append(_finding("window-out-of-range", file, f"registered_at {protocol['registered_at']!r} is not a real "
                            "date and time", field="/registered_at", value=protocol["registered_at"],
                            rule="ISO 8601 with offset", fix="write it as YYYY-MM-DDTHH:MM:SS+HH:MM"))
    window = protocol["window"]
    try:
        zoneinfo.ZoneInfo(window["timezone"])
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        out.append(_finding("unknown-timezone", file, f"{window['timezone']!r} is not an IANA time zone",
                            field="/window/timezone", value=window["timezone"], rule="IANA time zone database",
                            fix="use a name such as Europe/Paris or UTC"))
    else:
        for where, value in (("/window/start", window["start"]), ("/window/end", window["end"]),
                             ("/deadline", protocol["deadline"])):
            try:
                cost.window_hours(value, value, window["timezone"])
            except UsageError:
                out.append(_finding("window-out-of-range", file, f"{value!r} cannot be placed on the timeline of "
                                    f"{window['timezone']}", field=where, value=value,
                                    rule="a real local date-time", fix="write a real date as YYYY-MM-DDTHH:MM"))
            else:
                protocol_rules.check_local_time(where, value, window["timezone"], file, out)
    if window["end"] <= window["start"]:
        out.append(_finding("empty-window", file, "the campaign window ends before it starts",
                            field="/window/end", value=window["end"], fix="correct the window's start and end"))


def _check_expected(ids: LabelFile, size: int | None, out: list[Finding]) -> bool:
    """Every expected ID exactly once, as many as registered; returns whether they are all distinct."""
    out.extend(ids.problems)
    arr = idsets.as_array(ids.ids)
    repeated = idsets.repeated_rows(arr)
    if repeated:
        first = ", ".join(f"line {ids.line_of(i)}: {arr[i].as_py()[:40]!r}" for i in repeated[:FIRST_FEW])
        out.append(_finding("duplicate-expected-id", ids.file, f"{len(repeated)} repeated IDs (first: {first})",
                            line=ids.line_of(repeated[0]), value=len(repeated), rule="each expected ID exactly once",
                            fix="remove the repeated lines"))
    distinct = len(arr) - len(repeated)
    if size is not None and distinct != size:
        out.append(_finding("corpus-size-mismatch", ids.file,
                            f"{distinct} distinct expected IDs where the protocol registers {size}",
                            value=distinct, rule=f"corpus.size = {size}", fix="list every expected ID once"))
    return not repeated


def _check_reference(ref: LabelFile, expected: LabelFile, expected_distinct: bool, out: list[Finding]) -> bool:
    """The reference labels every expected ID exactly once, and nothing else; returns whether it does."""
    out.extend(ref.problems)
    cmp = idsets.compare(idsets.as_array(expected.ids), idsets.as_array(ref.ids), expected_distinct)
    if cmp.duplicates:
        out.append(_finding("reference-duplicate-id", ref.file, f"{cmp.duplicates} IDs labelled more than once "
                            f"(first: {', '.join(map(repr, cmp.first_duplicates))})", value=cmp.duplicates,
                            fix="keep one checked label per ID"))
    if cmp.missing:
        out.append(_finding("reference-missing-id", ref.file, f"{cmp.missing} expected IDs have no reference label "
                            f"(first: {', '.join(map(repr, cmp.first_missing))})", value=cmp.missing,
                            fix="label every expected ID"))
    if cmp.extra:
        out.append(_finding("reference-extra-id", ref.file, f"{cmp.extra} labelled IDs are not expected "
                            f"(first: {', '.join(map(repr, cmp.first_extra))})", value=cmp.extra,
                            fix="remove IDs that are not in the expected IDs"))
    return cmp.match and ref.format_valid


_IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # the schemas' identifier pattern


def _check_grid_rows(inputs: CampaignInputs, out: list[Finding]) -> None:
    grid, protocol = inputs.grid, inputs.protocol
    assert grid is not None
    experiments = {e["id"]: e for e in protocol["experiments"]} if protocol else {}
    first_line: dict[tuple[str, str, str, int], int] = {}
    pattern = inputs.files["predictions"]
    # A template that leaves the folder whatever the row is reported once, on protocol.json (protocol_rules.check_paths);
    # a row gets its own finding only when its own identifiers (or a link) take a safe template out.
    template_ok = inputs.folder.resolve(template_example(pattern)) is not None and not names.refused(pattern)
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
        if not outcome.failed and elapsed == 0:
            out.append(Finding(code="completed-run-timed-zero", severity=E, file=grid.file, line=line,
                               field="elapsed_seconds", value=0, claimed=0, recomputed=None,
                               message="a completed run (no outcome= in notes) has elapsed_seconds 0: no run over "
                                       "the whole corpus takes zero seconds",
                               rule="elapsed_seconds is the raw measured duration; empty means not recorded, 0 a "
                                    "real zero",
                               fix="write the measured duration; if it was not recorded, leave it empty and say why "
                                   "in notes, or write outcome=failed if the run did not complete"))
        if not outcome.failed and elapsed is None:
            out.append(_finding("missing-duration", grid.file, "a completed run has no elapsed_seconds",
                                line=line, field="elapsed_seconds", value="",
                                rule="every completed run keeps its raw duration",
                                fix="fill in the measured duration, or write outcome=failed in notes"))
        rel = prediction_path(pattern, *key)
        path = inputs.folder.resolve(rel) if template_ok else None
        if path is None:
            if template_ok:
                odd = [k for k in ("experiment_id", "variant_id") if not _IDENTIFIER.fullmatch(str(row[k]))]
                out.append(_finding("path-outside-campaign", grid.file,
                                    f"the prediction file of this row, {rel!r}, would leave the campaign folder",
                                    line=line, field=odd[0] if odd else "variant_id", value=rel,
                                    rule=protocol_rules.PATH_RULE,
                                    fix="use identifiers of letters, digits, '.', '_' and '-'" if odd else
                                    f"replace the link on the way to {rel} by a real folder or file inside the "
                                    "campaign folder"))
            inputs.run_files.append(RunFile(index, rel, None, False))
            continue
        exists = is_file(path)
        inputs.run_files.append(RunFile(index, rel, path, exists))
        if exists:
            inputs.input_files.append(rel)
        elif not (outcome.failed and not outcome.completed):
            out.append(_finding("missing-prediction-file", rel, "the prediction file of this run attempt is missing",
                                value=rel, rule=f"grid line {line} maps to {rel}",
                                fix="add the run's id,label file; a failed run with completed=0 may have none"))


# The columns of a published price that the catalogue snapshot fixes (what the budget is computed from).
_CATALOGUE_COLUMNS = ("price_per_lot_usd_minor", "gpus_per_lot", "snapshot_date")


def _catalogue() -> dict[tuple[str, int], dict[str, Any]]:
    """The prices the seeds publish (`generator/data/published-tariffs.csv`), by GPU and duration."""
    from generator.audit.readers.csvtable import parse_table
    from generator.core.resources import published_tariffs

    table = parse_table(published_tariffs().read_text(encoding="utf-8"), "published tariffs", "tariffs-row")
    return {(r["gpu"], r["duration_days"]): r for r in table.rows}


def _not_catalogue(file: str, line: int, column: str, message: str, fix: str, claimed: Any, recomputed: Any) -> Finding:
    return Finding(code="tariff-not-catalogue", severity=E, file=file, line=line, field=column, value=claimed,
                   claimed=claimed, recomputed=recomputed, message=message, fix=fix,
                   rule="a price marked published is the catalogue snapshot's, unchanged; gpu-audit never invents one")


def _check_catalogue(row: dict[str, Any], line: int, file: str, catalogue: dict[tuple[str, int], dict[str, Any]],
                     out: list[Finding]) -> None:
    """A row marked published must be the catalogue snapshot: a price is not published by writing the word."""
    gpu, days = row.get("gpu"), row.get("duration_days")
    published = catalogue.get((gpu, days))  # type: ignore[arg-type]
    if published is None:
        known = ", ".join(f"{g} {d} days" for g, d in sorted(catalogue))
        out.append(_not_catalogue(file, line, "price_status", f"{gpu} for {days} days is marked published, but the "
                                  f"catalogue snapshot publishes no such price (it publishes {known})",
                                  "mark the row illustrative, or remove it", "published", "illustrative"))
        return
    for column in _CATALOGUE_COLUMNS:
        if row.get(column) is not None and row[column] != published[column]:
            out.append(_not_catalogue(file, line, column, f"{column} {row[column]!r} of {gpu} for {days} days is "
                                      f"marked published, but the catalogue snapshot of "
                                      f"{published['snapshot_date']} says {published[column]!r}",
                                      f"write {published[column]}, or mark the row illustrative",
                                      row[column], published[column]))


def _check_tariffs(table: Table, out: list[Finding]) -> None:
    seen: dict[tuple[str, int], int] = {}
    catalogue = _catalogue()
    for row, line in zip(table.rows, table.lines):
        key = (row.get("gpu"), row.get("duration_days"))
        if None in key:
            continue
        if row.get("price_status") == "published":
            _check_catalogue(row, line, table.file, catalogue, out)
        if key in seen:  # type: ignore[comparison-overlap]
            out.append(_finding("duplicate-tariff", table.file, f"{key[0]} for {key[1]} days already priced on line "
                                f"{seen[key]}", line=line, field="gpu", value=key[0],  # type: ignore[index]
                                rule="one price per GPU and duration", fix="keep one row"))
        seen[key] = line  # type: ignore[index]


def load_campaign(path: Path, *, fast: bool = True) -> CampaignInputs:
    """Load and validate every input of a campaign folder; findings are collected, never raised."""
    folder = open_campaign(path)
    out: list[Finding] = []
    protocol: dict[str, Any] | None = None
    proto_path = _locate(folder, PROTOCOL_FILE, "protocol", out, "the campaign folder")
    if proto_path is not None:
        doc = read_document(proto_path, PROTOCOL_FILE, "protocol")
        out.extend(doc.findings)
        if doc.ok:
            protocol = doc.data
            _check_protocol(protocol, PROTOCOL_FILE, out, folder)
    files = dict(DEFAULT_FILES)
    if protocol:
        files.update(protocol["files"])
    inputs = CampaignInputs(folder=folder, protocol=protocol, files=files, findings=out)
    if proto_path is not None:
        inputs.input_files.append(PROTOCOL_FILE)

    p = _locate(folder, files["expected_ids"], "expected IDs", out, PROTOCOL_FILE)
    if p:
        inputs.input_files.append(files["expected_ids"])
        inputs.expected = read_ids(p, files["expected_ids"], fast=fast, threads=True)  # read alone: all cores
        inputs.expected_distinct = _check_expected(inputs.expected, protocol["corpus"]["size"] if protocol else None,
                                                   out)
    p = _locate(folder, files["reference"], "reference", out, PROTOCOL_FILE)
    if p:
        inputs.input_files.append(files["reference"])
        # The reference usually lists the expected IDs in their order: their ID checks are then done already.
        known = (known_ids(inputs.expected, ColumnRules.from_schema("labels-row", inputs.classes))
                 if fast and inputs.expected is not None else None)
        inputs.reference = read_labels(p, files["reference"], inputs.classes, E, fast=fast, known=known, threads=True,
                                       max_bytes=size_limit(inputs.expected, inputs.classes))
        if inputs.expected is not None:
            inputs.reference_matches = _check_reference(inputs.reference, inputs.expected, inputs.expected_distinct,
                                                        out)
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


def validate_campaign(path: Path, *, fast: bool = True) -> ValidationResult:
    """`gpu-audit validate`: every file parsed and checked; prediction formats checked against the classes."""
    inputs = load_campaign(path, fast=fast)
    findings = list(inputs.findings)
    max_bytes = size_limit(inputs.expected, inputs.classes)  # the bound `check` reads prediction files with
    for run in inputs.run_files:
        if run.exists and run.path is not None:
            labels = read_labels(run.path, run.relpath, inputs.classes, Severity.WARNING, fast=fast,
                                 max_bytes=max_bytes)
            findings.extend(labels.problems)
    findings = attribute(findings, owners_of(inputs))
    return ValidationResult(inputs=inputs, findings=sorted(findings, key=sort_key))
