"""Acceptance per run attempt: ID sets, format, the quality metric and rule, and the claimed cells."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pyarrow as pa

from generator.audit.load.campaign import prediction_path
from generator.audit.load.findings import Finding, Severity, cell_text, follows_from, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.readers import idsets
from generator.audit.load.readers.grid import row_outcome
from generator.audit.load.readers.predictions import LabelFile
from generator.audit.recompute.decision.runcells import RecomputedRun, SubgroupRun
from generator.audit.recompute.quality import subgroups
from generator.audit.recompute.quality.subgroups import GroupTruth
from generator.audit.recompute.quality.tolerances import quality_agrees
from generator.core.metrics import compute_metric, defined, metric_from_codes, quality_rule_holds, reader_name

FIRST_FEW = 5


@dataclass
class Acceptance:
    """What the evidence says about one run attempt."""

    expected_ids: int
    observed_ids: int
    rows: int
    duplicates: int = 0
    missing: int = 0
    extra: int = 0
    first_duplicates: list[str] = field(default_factory=list)
    first_missing: list[str] = field(default_factory=list)
    first_extra: list[str] = field(default_factory=list)
    ids_match: bool = False
    format_valid: bool = False
    quality_metric: str = "macro_f1"
    quality_value: float | None = None
    degradation: float | None = None
    quality_ok: bool = False
    corpus_accepted: bool = False
    prediction_file: str | None = None
    file_present: bool = False
    subgroups: list[SubgroupRun] = field(default_factory=list)  # one per planned subgroup, in protocol order
    # The content fingerprint of the registered corpus the run was judged against (check's judge sets it): two
    # revisions of the same content are one corpus when accepted corpora are counted. Not part of the record.
    corpus: str | None = None

    @property
    def subgroups_ok(self) -> bool:
        return all(g.accepted for g in self.subgroups)

    def record(self) -> RecomputedRun:
        """The acceptance as decision.json records it (a run's `recomputed`)."""
        return RecomputedRun(self.expected_ids, self.observed_ids, self.rows, self.duplicates, self.missing, self.extra,
                             list(self.first_duplicates), list(self.first_missing), list(self.first_extra),
                             self.ids_match, self.format_valid, self.quality_metric, self.quality_value,
                             self.degradation, self.quality_ok, self.corpus_accepted, self.prediction_file,
                             self.file_present, tuple(self.subgroups) if self.subgroups else None)


@dataclass(frozen=True)
class Truth:
    """The expected IDs and their reference labels as class codes, prepared once per campaign."""

    expected: pa.Array  # pyarrow string array, in the registered order
    codes: idsets.Codes  # numpy int array of reference class indices, aligned with `expected`
    classes: tuple[str, ...]
    distinct: bool  # the expected IDs hold no duplicate
    subgroups: tuple[GroupTruth, ...] = ()  # the planned subgroups, each judged on every run


def prepare_truth(expected_ids: pa.Array | Sequence[str], expected_distinct: bool, reference: LabelFile,
                  classes: Sequence[str], groups: tuple[GroupTruth, ...] = ()) -> Truth:
    """Align the reference to the expected order once (the reference is validated separately): its class codes,
    the reader's when it gave them for these classes, else looked up from its labels."""
    expected = idsets.as_array(expected_ids)
    comparison = idsets.compare(expected, idsets.as_array(reference.ids), expected_distinct)
    ref_codes = (reference.label_codes if reference.label_codes is not None
                 and reference.label_classes == tuple(classes) else idsets.codes(reference.labels, classes))
    aligned = idsets.in_expected_order(ref_codes, comparison)
    return Truth(expected=expected, codes=aligned, classes=tuple(classes), distinct=expected_distinct,
                 subgroups=groups)


def _rule(acc: Acceptance, protocol: Protocol) -> None:
    q = protocol.quality
    if acc.quality_value is not None:
        acc.quality_ok, acc.degradation = quality_rule_holds(acc.quality_value, q.threshold, q.tolerance,
                                                             q.direction, q.reference.value)
    acc.corpus_accepted = acc.ids_match and acc.format_valid and acc.quality_ok and acc.subgroups_ok


def assess_run(truth: Truth, labels: LabelFile | None, protocol: Protocol) -> Acceptance:
    """Recompute acceptance of one attempt from its prediction file (None when absent), column-wise."""
    metric = protocol.quality.metric
    n = len(truth.expected)
    if labels is None:
        return Acceptance(expected_ids=n, observed_ids=0, rows=0, missing=n,
                          first_missing=truth.expected.slice(0, FIRST_FEW).to_pylist(), quality_metric=metric,
                          subgroups=subgroups.judge_codes(truth.subgroups, protocol.quality, truth.codes, None,
                                                          len(truth.classes), None, n))
    observed = idsets.as_array(labels.ids)
    cmp = idsets.compare(truth.expected, observed, truth.distinct)
    acc = Acceptance(expected_ids=n, observed_ids=cmp.observed_distinct, rows=len(observed),
                     duplicates=cmp.duplicates, missing=cmp.missing, extra=cmp.extra,
                     first_duplicates=cmp.first_duplicates, first_missing=cmp.first_missing,
                     first_extra=cmp.first_extra, ids_match=cmp.match, format_valid=labels.format_valid,
                     quality_metric=metric, prediction_file=labels.file, file_present=True)
    pred: idsets.Codes | None = None
    if acc.ids_match and acc.format_valid and n:
        file_codes = (labels.label_codes if labels.label_codes is not None and labels.label_classes == truth.classes
                      else idsets.codes(labels.labels, truth.classes))
        pred = idsets.in_expected_order(file_codes, cmp)
        acc.quality_value = defined(metric_from_codes(metric, truth.codes, pred, len(truth.classes)))
    acc.subgroups = subgroups.judge_codes(truth.subgroups, protocol.quality, truth.codes, pred,
                                          len(truth.classes), observed, acc.missing)
    _rule(acc, protocol)
    return acc


def assess_run_reference(expected: list[str], reference: dict[str, str], labels: LabelFile | None,
                         protocol: Protocol, groups: Sequence[GroupTruth] = ()) -> Acceptance:
    """The straightforward recomputation (Python sets and strings), kept to check the column-wise one."""
    metric = protocol.quality.metric
    if labels is None:
        return Acceptance(expected_ids=len(expected), observed_ids=0, rows=0, missing=len(expected),
                          first_missing=expected[:FIRST_FEW], quality_metric=metric,
                          subgroups=subgroups.judge_labels(groups, protocol.quality, reference, None, False))
    ids = list(labels.ids.to_pylist() if hasattr(labels.ids, "to_pylist") else labels.ids)
    counts = Counter(ids)
    expected_set = set(expected)
    dups = [i for i, k in counts.items() if k > 1]
    missing = [i for i in expected if i not in counts]
    extra = [i for i in counts if i not in expected_set]
    acc = Acceptance(
        expected_ids=len(expected), observed_ids=len(counts), rows=len(ids),
        duplicates=sum(counts[i] - 1 for i in dups), missing=len(missing), extra=len(extra),
        first_duplicates=dups[:FIRST_FEW], first_missing=missing[:FIRST_FEW], first_extra=extra[:FIRST_FEW],
        format_valid=labels.format_valid, quality_metric=metric, prediction_file=labels.file, file_present=True,
    )
    acc.ids_match = not dups and not missing and not extra
    values = labels.labels.to_pylist() if hasattr(labels.labels, "to_pylist") else labels.labels
    by_id = dict(zip(ids, values or [], strict=False))
    if acc.ids_match and acc.format_valid and expected:
        acc.quality_value = defined(compute_metric(metric, [reference[i] for i in expected],
                                                   [by_id[i] for i in expected], protocol.classes))
    scored = acc.ids_match and acc.format_valid and bool(expected)
    acc.subgroups = subgroups.judge_labels(groups, protocol.quality, reference, by_id, scored, protocol.classes)
    _rule(acc, protocol)
    return acc


def _mismatch(grid_file: str, line: int, column: str, claimed: object, recomputed: object, message: str,
              fix: str, code: str | None = None) -> Finding:
    return make_finding(code or f"{column.replace('_', '-')}-mismatch", Severity.ERROR, grid_file, message, line=line,
                        field=column, claimed=claimed, recomputed=recomputed,
                        rule="claimed cells must agree with the recomputation from the evidence", fix=fix)


def claim_findings(row: GridRow, line: int, acc: Acceptance, protocol: Protocol,
                   grid_file: str) -> list[Finding]:
    """Compare the row's claimed acceptance cells with the recomputation."""
    out: list[Finding] = []
    q = protocol.quality
    registered = {"quality_metric": q.metric, "quality_threshold": q.threshold,
                  "quality_tolerance": q.tolerance}
    for column, value in registered.items():
        claimed = row.cell(column)
        if claimed is not None and claimed != value:
            out.append(_mismatch(grid_file, line, column, claimed, value,
                                 f"{column} {cell_text(claimed)} differs from the pre-registered "
                                 f"{cell_text(value)}",
                                 "report the registered rule; a rule changed after the fact needs a new protocol "
                                 "and a new independent evaluation", code="rule-not-registered"))
    recomputed = {
        "expected_ids": acc.expected_ids,
        "observed_ids": acc.observed_ids,
        "ids_match": acc.ids_match,
        "format_valid": acc.format_valid,
        "corpus_accepted": acc.corpus_accepted,
    }
    failed = row_outcome(row.notes).failed
    if not acc.file_present and not failed:
        # Without the prediction file nothing is recomputed: every claim resting on it follows from that one cause.
        return out + _without_evidence(row, line, acc, protocol, grid_file)
    for column, value in recomputed.items():
        claimed = row.cell(column)
        if claimed is None or (failed and column == "corpus_accepted" and claimed is True):
            continue  # a failed run claimed accepted is failed-run-accepted (failed_run_findings), said once
        if claimed != value:
            detail = ""
            if column == "ids_match" and value is False:
                detail = (f" ({acc.duplicates} duplicates, {acc.missing} missing, {acc.extra} extra IDs; "
                          "equal row counts prove nothing: the sets were compared)")
            elif column == "corpus_accepted" and acc.quality_ok and not acc.subgroups_ok:
                detail = " (" + "; ".join(_subgroup_failure(g, acc.quality_metric) for g in acc.subgroups
                                          if not g.accepted) + ")"
            out.append(_mismatch(grid_file, line, column, claimed, value,
                                 f"{column} claims {cell_text(claimed)}, the evidence gives {cell_text(value)}"
                                 f"{detail}", f"write {cell_text(value)}, as recomputed from the prediction file"))
    claimed_q = row.quality_value
    if claimed_q is not None and acc.quality_value is None:
        out.append(_mismatch(grid_file, line, "quality_value", claimed_q, None,
                             "quality_value is claimed but cannot be computed: the ID set or the format is not valid"
                             if not (acc.ids_match and acc.format_valid) else "quality_value is claimed, but "
                             f"{reader_name(acc.quality_metric)} is undefined on these labels (one class only in "
                             "the reference and the predictions, as scikit-learn leaves it)",
                             "leave quality_value empty for a run whose predictions are incomplete or invalid"))
    elif claimed_q is not None and acc.quality_value is not None \
            and not quality_agrees(claimed_q, acc.quality_value):
        out.append(_mismatch(grid_file, line, "quality_value", claimed_q, round(acc.quality_value, 6),
                             f"quality_value claims {claimed_q}, the predictions give {acc.quality_value:.6f}",
                             "recompute the metric from the prediction file against the reference"))
    return out


def _subgroup_failure(group: SubgroupRun, metric: str) -> str:
    """Why a subgroup fails a run whose whole corpus passes: its value, and how far below the reference."""
    if group.quality_value is None:
        return f"the {group.id} subgroup is not scored"
    return (f"the {group.id} subgroup fails its rule: {reader_name(metric)} {group.quality_value:.6f}, degradation "
            f"{group.degradation or 0.0:.6f} against its reference")


# The claimed cells that only the run's prediction file can support (expected_ids comes from the expected list).
_FROM_PREDICTIONS = ("observed_ids", "ids_match", "format_valid", "corpus_accepted", "quality_value")


def _without_evidence(row: GridRow, line: int, acc: Acceptance, protocol: Protocol,
                      grid_file: str) -> list[Finding]:
    """The claims of a completed run whose prediction file is missing: each is unsupported, and the fix is the
    cause's (restore the file, or record the run as failed), never to copy what an empty recomputation gives."""
    out = []
    if row.expected_ids is not None and row.expected_ids != acc.expected_ids:
        out.append(_mismatch(grid_file, line, "expected_ids", row.expected_ids, acc.expected_ids,
                             f"expected_ids claims {row.expected_ids}, the expected list holds {acc.expected_ids}",
                             f"write {acc.expected_ids}, the count of the expected list"))
    rel = prediction_path(protocol.files.predictions, *row.key())  # a row with a file has its whole key
    claimed_cells = [(c, row.cell(c)) for c in _FROM_PREDICTIONS if row.cell(c) not in (None, False, 0)]
    for column, claimed in claimed_cells:
        finding = _mismatch(grid_file, line, column, claimed, None,
                            f"{column} claims {cell_text(claimed)}, but the run's prediction file {rel} is missing: "
                            "nothing supports the claim",
                            f"restore the run's prediction file {rel}, or record the run as failed "
                            "(outcome=failed in its notes)")
        out.append(replace(finding, rule="a claimed cell rests on the run's own prediction file",
                           extra=follows_from("missing-prediction-file", rel)))
    return out


def failed_run_findings(row: GridRow, line: int, grid_file: str) -> list[Finding]:
    """A failed run is never an accepted corpus, whatever its file holds (a partial file, a copied one)."""
    outcome = row_outcome(row.notes)
    if not outcome.failed or row.corpus_accepted is not True:
        return []
    return [make_finding("failed-run-accepted", Severity.ERROR, grid_file,
                         f"a run declared outcome={outcome.status} claims corpus_accepted true: an interrupted "
                         "or failed run is never an accepted corpus", line=line, field="corpus_accepted",
                         claimed=True, recomputed=False,
                         rule="a failed run is kept as a failure observation, never an accepted result",
                         fix="write corpus_accepted false for a run whose notes say outcome=" + outcome.status)]


def completed_findings(row: GridRow, line: int, acc: Acceptance, grid_file: str) -> list[Finding]:
    """completed=N of a failed run against the distinct IDs of its partial file and the claimed observed_ids."""
    outcome = row_outcome(row.notes)
    if not outcome.failed or outcome.completed is None:
        return []
    out: list[Finding] = []
    n = outcome.completed

    def finding(recomputed: int, message: str, fix: str) -> Finding:
        return make_finding("completed-count-mismatch", Severity.ERROR, grid_file, message, line=line, field="notes",
                            claimed=n, recomputed=recomputed,
                            rule="completed=N counts the items a failed run processed, kept in its partial file",
                            fix=fix)

    # Without a file the count cannot be recomputed; a missing file with completed > 0 is its own finding.
    if acc.file_present and acc.observed_ids != n:
        out.append(finding(acc.observed_ids, f"notes say completed={n}, the partial prediction file "
                           f"{acc.prediction_file} holds {acc.observed_ids} distinct IDs",
                           f"write completed={acc.observed_ids}, or keep the items the run did process in its file"))
    claimed = row.observed_ids
    if isinstance(claimed, int) and claimed != n:
        out.append(finding(claimed, f"notes say completed={n}, observed_ids claims {claimed}",
                           "make completed=N and observed_ids both the distinct IDs of the partial file"))
    return out
