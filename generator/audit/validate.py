"""`validate`: the rules across the fields, rows and files of a loaded campaign that no schema can express."""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from generator.audit import corpusprint, followons, idsets, load, metricrules, names, protocol_rules
from generator.audit.attribution import attribute, owners_of
from generator.audit.campaign import PROTOCOL_FILE, CampaignFolder
from generator.audit.findings import Finding, Severity, make_finding, sort_key
from generator.audit.inputs.protocol import ExperimentSpec, Protocol
from generator.audit.inputs.rows import GridRow, TariffRow
from generator.audit.labarchive import manifest_structure_findings, tariffs_structure_findings
from generator.audit.load import CampaignInputs, RunFile
from generator.audit.readers.csvtable import Table
from generator.audit.readers.grid import Outcome, row_outcome
from generator.audit.readers.predictions import FIRST_FEW, LabelFile, read_labels, size_limit
from generator.audit.recompute import attempts, instants, reproduction
from generator.audit.reforigin import origin_findings
from generator.audit.splits import split_findings
from generator.audit.subgrouprules import looser_findings
from generator.audit.subgroupsets import subgroup_findings
from generator.audit.tariffrules import ManifestProof, manifest_findings, table_findings
from generator.core.errors import UsageError

__all__ = ["CampaignInputs", "RunFile", "ValidationResult", "load_and_validate", "validate_campaign",
           "validate_inputs"]

E = Severity.ERROR


@dataclass
class ValidationResult:
    """The loaded inputs and their findings, sorted."""

    inputs: CampaignInputs
    findings: list[Finding]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]


def _check_protocol(protocol: Protocol, file: str, out: list[Finding],
                    folder: CampaignFolder | None = None) -> None:
    """Rules across protocol fields that a schema cannot express (`folder`: the paths it names, too)."""
    if folder is not None:
        protocol_rules.check_paths(protocol, file, folder, out)
        names.check_names(protocol, file, out)  # names the bundle's manifests could not carry back
    protocol_rules.check_classes(protocol, file, out)
    protocol_rules.check_measurement_links(protocol, file, out)
    protocol_rules.check_rentals(protocol, file, out)
    protocol_rules.check_resumes(protocol, file, out)
    protocol_rules.check_direction(protocol, file, out)
    out.extend(metricrules.range_findings(protocol, file))
    protocol_rules.check_run_order(protocol, file, out)
    protocol_rules.check_revisions(protocol, file, out)
    out.extend(reproduction.registration_findings(protocol.quality, file))
    _check_experiments(protocol, file, out)
    _check_times(protocol, file, out)


def _check_experiments(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """Experiment and variant ids unique, variants that differ, one registered corpus."""
    seen_experiments: set[str] = set()
    for i, exp in enumerate(protocol.experiments):
        where = f"/experiments/{i}"
        if exp.id in seen_experiments:
            out.append(make_finding("duplicate-experiment", E, file, f"experiment id {exp.id!r} is declared twice",
                                    field=f"{where}/id", value=exp.id, fix="give each experiment its own id"))
        seen_experiments.add(exp.id)
        ids = [v.id for v in exp.variants]
        values = [v.value for v in exp.variants if v.resume is None]  # a resume variant repeats its variant's
        for dup in sorted({v for v in ids if ids.count(v) > 1}):
            out.append(make_finding("duplicate-variant", E, file, f"variant id {dup!r} is declared twice",
                                    field=f"{where}/variants", value=dup, fix="give each variant its own id"))
        if len({_variant_key(exp.variable, v) for v in values}) != len(values):
            out.append(make_finding("duplicate-variant-value", E, file,
                                    f"two variants share a value of the declared variable {exp.variable!r}",
                                    field=f"{where}/variants", value=values, fix="each variant changes the variable"))
        if exp.fixed.corpus_revision != protocol.corpus.revision:
            out.append(make_finding("corpus-revision-mismatch", E, file,
                                    "the experiment's fixed corpus_revision differs from corpus.revision",
                                    field=f"{where}/fixed/corpus_revision", value=exp.fixed.corpus_revision,
                                    rule="one registered corpus", fix="use the corpus revision registered above"))


def _variant_key(variable: str, value: object) -> str:
    """A variant's value as its runs are told apart: an input order as its measurement is compared (case and
    spacing aside), any other value as written."""
    return " ".join(str(value).split()).casefold() if variable == "input_order" else str(value)


def _check_times(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """Registration, window and deadline are real moments of a real zone, the window's end after its start."""
    if instants.parse_utc(protocol.registered_at) is None:
        out.append(make_finding("window-out-of-range", E, file,
                                f"registered_at {protocol.registered_at!r} is not a real date and time",
                                field="/registered_at", value=protocol.registered_at,
                                rule="ISO 8601 with offset", fix="write it as YYYY-MM-DDTHH:MM:SS+HH:MM"))
    window = protocol.window
    try:
        zoneinfo.ZoneInfo(window.timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        out.append(make_finding("unknown-timezone", E, file, f"{window.timezone!r} is not an IANA time zone",
                                field="/window/timezone", value=window.timezone, rule="IANA time zone database",
                                fix="use a name such as Europe/Paris or UTC"))
        return
    placed: dict[str, datetime] = {}
    for where, value in (("/window/start", window.start), ("/window/end", window.end),
                         ("/deadline", protocol.deadline)):
        try:
            moment = (instants.deadline_instant if where == "/deadline" else instants.parse_local)(value,
                                                                                                 window.timezone)
            placed[where] = moment.astimezone(UTC)
        except (UsageError, OverflowError):
            out.append(make_finding("window-out-of-range", E, file,
                                    f"{value!r} cannot be placed on the timeline of {window.timezone}",
                                    field=where, value=value,
                                    rule="a real local date-time", fix="write a real date as YYYY-MM-DDTHH:MM"))
        else:
            protocol_rules.check_local_time(where, value, window.timezone, file, out)
    start, end = placed.get("/window/start"), placed.get("/window/end")
    if start is not None and end is not None and end <= start:  # instants: text would misorder offsets
        out.append(make_finding("empty-window", E, file, "the campaign window ends before it starts",
                                field="/window/end", value=window.end, fix="correct the window's start and end"))


def _check_expected(ids: LabelFile, size: int | None, out: list[Finding]) -> bool:
    """Every expected ID exactly once, as many as registered; returns whether they are all distinct."""
    if not ids.readable:  # its own finding says why (encoding, delimiter): its IDs were not read
        return False
    arr = idsets.as_array(ids.ids)
    repeated = idsets.repeated_rows(arr)
    if repeated:
        first = ", ".join(f"line {ids.line_of(i)}: {arr[i].as_py()[:40]!r}" for i in repeated[:FIRST_FEW])
        out.append(make_finding("duplicate-expected-id", E, ids.file, f"{len(repeated)} repeated IDs (first: {first})",
                                line=ids.line_of(repeated[0]), value=len(repeated),
                                rule="each expected ID exactly once", fix="remove the repeated lines"))
    distinct = len(arr) - len(repeated)
    if size is not None and distinct != size:
        out.append(make_finding("corpus-size-mismatch", E, ids.file,
                                f"{distinct} distinct expected IDs where the protocol registers {size}",
                                value=distinct, rule=f"corpus.size = {size}", fix="list every expected ID once"))
    return not repeated


def _check_reference(ref: LabelFile, expected: LabelFile, expected_distinct: bool, out: list[Finding]) -> bool:
    """The reference labels every expected ID exactly once, and nothing else; returns whether it does."""
    if not (ref.readable and expected.readable):  # unread IDs are not missing ones
        return False
    cmp = idsets.compare(idsets.as_array(expected.ids), idsets.as_array(ref.ids), expected_distinct)
    for code, count, first, what, fix in (
        ("reference-duplicate-id", cmp.duplicates, cmp.first_duplicates, "IDs labelled more than once",
         "keep one checked label per ID"),
        ("reference-missing-id", cmp.missing, cmp.first_missing, "expected IDs have no reference label",
         "label every expected ID"),
        ("reference-extra-id", cmp.extra, cmp.first_extra, "labelled IDs are not expected",
         "remove IDs that are not in the expected IDs"),
    ):
        if count:
            out.append(make_finding(code, E, ref.file, f"{count} {what} (first: {', '.join(map(repr, first))})",
                                    value=count, fix=fix))
    return cmp.match and ref.format_valid


def _corpora_findings(protocol: Protocol) -> list[Finding]:
    """Each corpus of the useful work has a revision of its own: the grid's corpus_revision tells them apart."""
    out, seen = [], {protocol.corpus.revision}
    for i, corpus in enumerate(protocol.corpora or ()):
        if corpus.revision in seen:
            out.append(make_finding(
                "corpus-repeated", E, PROTOCOL_FILE, f"the corpus {corpus.name!r} has the revision "
                f"{corpus.revision!r} of another corpus of the protocol", field=f"/corpora/{i}/revision",
                value=corpus.revision, rule="each corpus of the useful work once, with its own revision",
                fix="give each corpus its own immutable revision, or list it once"))
        seen.add(corpus.revision)
    return out


_IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # the schemas' identifier pattern


def _row_identity(row_id: tuple[str, str, str, int], line: int, file: str, experiments: dict[str, ExperimentSpec],
                  registered: bool, out: list[Finding]) -> None:
    """The row's experiment and variant are declared in the protocol."""
    exp = experiments.get(row_id[0])
    if registered and exp is None:
        out.append(make_finding("unknown-experiment", E, file, f"experiment_id {row_id[0]!r} is not in the protocol",
                                line=line, field="experiment_id", value=row_id[0],
                                rule="experiments declared in protocol.json",
                                fix=f"use one of: {', '.join(sorted(experiments))}"))
    elif exp is not None and row_id[1] not in {v.id for v in exp.variants}:
        out.append(make_finding("unknown-variant", E, file,
                                f"variant_id {row_id[1]!r} is not declared for experiment {row_id[0]!r}",
                                line=line, field="variant_id", value=row_id[1],
                                rule="variants declared in protocol.json",
                                fix=f"use one of: {', '.join(v.id for v in exp.variants)}"))


def _row_duration(outcome: Outcome, elapsed: float | None, line: int, file: str, out: list[Finding]) -> None:
    """A failed run has no duration; a completed one has a real, non-zero one."""
    if outcome.failed and elapsed == 0:
        out.append(make_finding("failed-run-timed-zero", E, file,
                                f"a run declared outcome={outcome.status} has elapsed_seconds 0",
                                line=line, field="elapsed_seconds", value="0",
                                rule="a failed run has no duration: empty means not recorded, 0 means a real zero",
                                fix="leave elapsed_seconds empty for a failed run"))
    if outcome.through and elapsed == 0:
        out.append(make_finding("completed-run-timed-zero", E, file,
                                "a completed run (no outcome= in notes) has elapsed_seconds 0: no run over the whole "
                                "corpus takes zero seconds", line=line, field="elapsed_seconds", claimed=0,
                                rule="elapsed_seconds is the raw measured duration; empty means not recorded, 0 a "
                                     "real zero",
                                fix="write the measured duration; if it was not recorded, leave it empty and say why "
                                    "in notes, or write outcome=failed if the run did not complete"))
    if outcome.through and elapsed is None:
        out.append(make_finding("missing-duration", E, file, "a completed run has no elapsed_seconds",
                                line=line, field="elapsed_seconds", value="",
                                rule="every completed run keeps its raw duration",
                                fix="fill in the measured duration, or write outcome=failed in notes"))


def _row_file(run: RunFile, row: GridRow, line: int, file: str, outcome: Outcome, template_ok: bool,
              out: list[Finding]) -> None:
    """The row's prediction file stays in the folder and exists (a failed run with completed=0 may have none)."""
    rel = run.relpath
    if run.path is None:
        if template_ok:  # else the template is at fault, reported once on protocol.json
            odd = [k for k in ("experiment_id", "variant_id") if not _IDENTIFIER.fullmatch(str(row.cell(k)))]
            out.append(make_finding("path-outside-campaign", E, file,
                                    f"the prediction file of this row, {rel!r}, would leave the campaign folder",
                                    line=line, field=odd[0] if odd else "variant_id", value=rel,
                                    rule=protocol_rules.PATH_RULE,
                                    fix="use identifiers of letters, digits, '.', '_' and '-'" if odd else
                                    f"replace the link on the way to {rel} by a real folder or file inside the "
                                    "campaign folder"))
    elif not run.exists and (outcome.through or outcome.completed):
        out.append(make_finding("missing-prediction-file", E, rel, "the prediction file of this run attempt is missing",
                                value=rel, rule=f"grid line {line} maps to {rel}",
                                fix="add the run's id,label file; a failed run with completed=0 may have none"))


def _check_grid_rows(inputs: CampaignInputs, grid: Table, out: list[Finding]) -> None:
    """One row per attempt, of a declared variant, with its duration and its prediction file."""
    protocol = inputs.protocol
    experiments = {e.id: e for e in protocol.experiments} if protocol else {}
    runs = {run.row_index: run for run in inputs.run_files}  # the first row of each complete key
    template_ok = load.template_stays_inside(inputs)
    first_line: dict[tuple[str, str, str, int], int] = {}
    for index, (row, line) in enumerate(zip(inputs.grid_rows, grid.lines, strict=False)):
        if any(row.cell(k) is None for k in ("experiment_id", "variant_id", "phase", "run_index")):
            continue
        key = row.key()
        if key in first_line:
            out.append(make_finding("duplicate-row-key", E, grid.file,
                                    f"attempt {key[0]}/{key[1]}/{key[2]}/{key[3]} already on line {first_line[key]}",
                                    line=line, field="run_index", value=key[3],
                                    rule="one row per attempt: experiment_id, variant_id, phase, run_index unique",
                                    fix="give each attempt its own run_index; never replace a failed run"))
            continue
        first_line[key] = line
        _row_identity(key, line, grid.file, experiments, bool(protocol), out)
        outcome = row_outcome(row.notes)
        out.extend(attempts.row_outcome_findings(outcome, protocol, line, grid.file))
        out.extend(attempts.incident_findings(outcome, row.notes, line, grid.file))
        _row_duration(outcome, row.elapsed_seconds, line, grid.file, out)
        _row_file(runs[index], row, line, grid.file, outcome, template_ok, out)


def tariffs_proof(inputs: CampaignInputs) -> tuple[ManifestProof | None, list[Finding]]:
    """Whether the Lab manifest the protocol names stands: the archive's structure, listing the tariffs file, itself
    of the Lab's 15 models x 3 durations (labarchive). None: no manifest named or read. Even when it stands, a
    price it supports is the provider's as stated in the campaign, not authenticated."""
    table, reading, named = inputs.tariffs, inputs.lab_manifest, inputs.files.get("lab_manifest")
    if reading is None or named is None or table is None or table.size is None or table.sha256 is None:
        return None, []
    entry = reading.entry
    proof, found = manifest_findings(table.file, table.size, table.sha256, named,
                                     (entry.size, entry.sha256) if entry else None, reading.refused)
    keys = [(r.gpu, r.duration_days, line) for r, line in zip(inputs.tariff_rows, table.lines, strict=False)
            if r.gpu is not None and r.duration_days is not None]
    found += manifest_structure_findings(reading.items, named) if reading.parsed else []
    found += tariffs_structure_findings(keys, table.file)
    cause = (found[0].code, found[0].file) if found else None
    return ManifestProof(proof.stands and not found, cause), found


def _check_tariffs(inputs: CampaignInputs, table: Table, rows: list[TariffRow], out: list[Finding]) -> None:
    """One price per GPU and duration; each price from the catalogue, the provider with its source, or
    illustrative (tariffrules); a file presented as the Lab's, as its manifest lists it and of its structure."""
    seen: dict[tuple[str | None, int | None], int] = {}
    proof, found = tariffs_proof(inputs)
    out.extend(found)
    out.extend(table_findings(rows, table.lines[:len(rows)], table.file, proof))
    for row, line in zip(rows, table.lines, strict=False):
        key = (row.gpu, row.duration_days)
        if None in key:
            continue
        if key in seen:
            out.append(make_finding("duplicate-tariff", E, table.file,
                                    f"{key[0]} for {key[1]} days already priced on line {seen[key]}", line=line,
                                    field="gpu", value=key[0], rule="one price per GPU and duration",
                                    fix="keep one row"))
        seen[key] = line


def validate_inputs(inputs: CampaignInputs) -> CampaignInputs:
    """The rules across fields, rows and files; the inputs again, with every finding of loading and validation.

    Each input's load findings come first, then its rules, input by input in the order they were loaded.
    """
    loaded, out = inputs.load_findings, list[Finding]()
    protocol = inputs.protocol
    out.extend(loaded["protocol"])
    if protocol is not None:
        _check_protocol(protocol, PROTOCOL_FILE, out, inputs.folder)
    out.extend(loaded["expected_ids"])
    distinct = matches = False
    if inputs.expected is not None:
        distinct = _check_expected(inputs.expected, protocol.corpus.size if protocol else None, out)
    for truth in inputs.further:
        if truth.expected is not None:
            truth.distinct = _check_expected(truth.expected, truth.corpus.size, out)
    if protocol is not None:
        out.extend(_corpora_findings(protocol))
        out.extend(split_findings(protocol, [inputs.expected, *(t.expected for t in inputs.further)],
                                  inputs.split_ids))
        out.extend(origin_findings(protocol))
        out.extend(subgroup_findings(protocol, inputs.expected, inputs.subgroup_ids))
        out.extend(looser_findings(protocol))
    out.extend(loaded["reference"])
    if inputs.reference is not None and inputs.expected is not None:
        matches = _check_reference(inputs.reference, inputs.expected, distinct, out)
    for truth in inputs.further:
        if truth.reference is not None and truth.expected is not None:
            truth.matches = _check_reference(truth.reference, truth.expected, truth.distinct, out)
            truth.fingerprint = corpusprint.fingerprint(truth.reference) if truth.matches else None
    printed = corpusprint.fingerprint(inputs.reference) if matches and inputs.reference is not None else None
    if protocol is not None:
        out.extend(corpusprint.fingerprint_findings(protocol, [printed, *(t.fingerprint for t in inputs.further)]))
    out.extend(loaded["tariffs"])
    if inputs.tariffs is not None:
        _check_tariffs(inputs, inputs.tariffs, inputs.tariff_rows, out)
    out.extend(loaded["raw_results"])
    if inputs.grid is not None:
        _check_grid_rows(inputs, inputs.grid, out)
    out.extend(loaded["measurements"])
    return replace(inputs, findings=out, expected_distinct=distinct, reference_matches=matches, fingerprint=printed)


def load_and_validate(path: Path, *, fast: bool = True) -> CampaignInputs:
    """`load.load_campaign`, then `validate_inputs`: the inputs `check` recomputes from."""
    return validate_inputs(load.load_campaign(path, fast=fast))



def validate_campaign(path: Path, *, fast: bool = True) -> ValidationResult:
    """`gpu-audit validate`: every file parsed and checked; prediction formats checked against the classes."""
    inputs = load_and_validate(path, fast=fast)
    findings = list(inputs.findings)
    max_bytes = size_limit(inputs.expected, inputs.classes)  # the bound `check` reads prediction files with
    for run in inputs.run_files:
        if run.readable is not None:
            labels = read_labels(run.readable, run.relpath, inputs.classes, Severity.WARNING, fast=fast,
                                 max_bytes=max_bytes)
            findings.extend(labels.problems)
    findings = followons.link(attribute(findings, owners_of(inputs)), inputs.grid)
    return ValidationResult(inputs=inputs, findings=sorted(findings, key=sort_key))
