"""The raw-results grid's rows: one row per attempt, of a declared experiment and variant, its outcome registered
and explained, its duration recorded, and its prediction file inside the folder and present."""

from __future__ import annotations

import re

from generator.audit.load import load
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import ExperimentSpec
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.load import CampaignInputs, RunFile
from generator.audit.load.readers.csvtable import Table
from generator.audit.load.readers.grid import Outcome, row_outcome
from generator.audit.validate import protocol_rules, registered

E = Severity.ERROR


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
        out.extend(registered.row_outcome_findings(outcome, protocol, line, grid.file))
        out.extend(registered.incident_findings(outcome, row.notes, line, grid.file))
        _row_duration(outcome, row.elapsed_seconds, line, grid.file, out)
        _row_file(runs[index], row, line, grid.file, outcome, template_ok, out)


def grid_rows(inputs: CampaignInputs) -> list[Finding]:
    """Every row of the grid, when it was read (`_check_grid_rows`)."""
    out: list[Finding] = []
    if inputs.grid is not None:
        _check_grid_rows(inputs, inputs.grid, out)
    return out
