"""The note's view model: decision.json arranged for the templates, which then only format."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

from generator.audit.load.inputs.work import ReferenceSource
from generator.audit.recompute.decision.decisionfile import read_decision
from generator.audit.recompute.decision.model import (
    CampaignSummary,
    Configuration,
    Decision,
    DecisionDocument,
    Experiment,
    FindingRef,
    InputFingerprint,
    QualityRule,
    Run,
    Window,
)

# One tolerance for a claimed quality value, the one the recomputation applies.
from generator.audit.recompute.quality.tolerances import quality_agrees
from generator.audit.validate.corpus.subgrouprules import LooserRule, looser_rules

# bundle_id: one definition, shared with `verify` (which must not import this module)
from generator.core.bundleid import bundle_id
from generator.core.jsonrecord import to_json_value
from generator.render.view import fields as parts
from generator.render.view import finance, i18n
from generator.render.view.chartdata import ChartRequest, DurationSeries, MemoryPanel
from generator.render.view.finance import CampaignTotal, Exclusion, RentedPackage, Signature, TailGroup
from generator.render.view.findinglist import FINDINGS_PER_SEVERITY, finding_groups
from generator.render.view.gridnotes import GridNotes, attempt_parts, grid_notes
from generator.render.view.rows import (
    AttemptRow,
    Cell,
    EnvironmentRow,
    FindingGroup,
    LeftOut,
    MemoryPeak,
    RunView,
    ScheduleRow,
    Sets,
)

# The note's `lang` (BCP 47), which also picks WeasyPrint's hyphenation dictionary: pyphen's plain "en" is British
# ("accep-ted", "admiss-ible"); the US patterns break where readers expect ("ac-cept-ed", "ad-mis-si-ble"), and
# the note's English is spelt the US way (--organization). Simplified Chinese says its script.
HTML_LANGUAGE = {"en": "en-US", "zh": "zh-Hans"}
# What the note lists at most (docs/note.md): past these it says how many it left out and where they are
# (decision.json, findings.json, the grid), so that the time to lay the note out stays bounded by these caps
# and not by the size of the inputs. Every text is also cut at filters.TEXT_CHARS.
WARNINGS_ON_PAGE_ONE = 5  # listed under page 1's banner (the rest in "Findings"), so that page 1 stays one page
ROWS_LISTED = 200  # rows of the acceptance table, and of the memory table
DURATIONS_LISTED = 100  # raw durations in one cell of the timing table (the chart draws them all)
CLAIM_COLUMNS = (
    ("expected_ids", "expected_ids"), ("observed_ids", "observed_ids"), ("ids_match", "ids_match"),
    ("format_valid", "format_valid"), ("quality_value", "quality_value"), ("corpus_accepted", "corpus_accepted"),
)
ENVIRONMENT_COLUMNS = ("gpu_model", "gpu_count", "driver_version", "python_version", "torch_version",
                       "runtime_version", "precision")


@dataclass(frozen=True)
class ReadDecision:
    """A decision as the note renders it: the JSON it was read from (what its bundle ID hashes, what a worker is
    sent) and the typed document the one loader reads from it."""

    source: Mapping[str, object]
    document: DecisionDocument

    @classmethod
    def of(cls, decision: ReadDecision | DecisionDocument | Mapping[str, object]) -> ReadDecision:
        """The decision read once: a DecisionDocument as it is, decision.json's JSON through read_decision
        (ValueError when it does not read as a decision)."""
        if isinstance(decision, ReadDecision):
            return decision
        if isinstance(decision, DecisionDocument):
            return cls(decision.to_json_dict(), decision)
        return cls(decision, read_decision(decision))

    @property
    def bundle_id(self) -> str:
        return bundle_id(dict(self.source))


@dataclass(frozen=True)
class NoteView:
    """Everything the template shows, by the names it uses."""

    bundle_id: str
    language: str
    signature: Signature
    packages: list[RentedPackage]
    chosen_package: RentedPackage | None
    gpu_of: dict[str, str]  # each configuration's GPU model name (finance.gpu_name), by configuration id
    total: CampaignTotal
    unpriced_gpus: list[str]
    exclusions: list[Exclusion]
    tail_groups: list[TailGroup]
    memory_peaks: list[MemoryPeak]
    timezone: str | None
    decision: DecisionDocument
    campaign: CampaignSummary | None
    rule: QualityRule | None
    window: Window | None
    answer: str | None
    chosen: Configuration | None
    verdict: Decision
    errors: int
    warnings: int
    synthetic: bool
    test_run: bool  # every configuration rests on a test run: page 1 says "Test run: no decision"
    reference_origin: ReferenceSource | None  # where the reference value comes from; None: unregistered (page 1)
    looser: tuple[LooserRule, ...]  # subgroup rules looser than the corpus rule: page 1 shows each, with its reason
    configurations: tuple[Configuration, ...]
    unpriced: list[Configuration]  # admissible but without a price: one sentence and one table
    warned: list[tuple[tuple[str, ...], tuple[FindingRef, ...]]]  # the others' warnings, configurations alike as one
    undefined_cost: list[tuple[bool, tuple[str, ...]]]  # the others' undefined costs: no price?, the configurations
    acceptance_rows: list[AttemptRow]
    acceptance_left_out: LeftOut | None
    memory_rows: list[AttemptRow]
    memory_left_out: LeftOut | None
    notes: GridNotes
    findings_per_severity: int
    warnings_on_page_one: int
    durations_listed: int
    environments: list[EnvironmentRow]
    schedule: list[ScheduleRow]
    measurement_files: list[tuple[str, str]]
    experiments: tuple[Experiment, ...]
    findings: list[FindingGroup]
    inputs: tuple[InputFingerprint, ...]

    def context(self) -> dict[str, object]:
        """The template's variables."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _agrees(column: str, claimed: object, recomputed: object) -> bool:
    if claimed is None:
        return True  # not recorded: nothing claimed, nothing contradicted
    if column == "quality_value":
        return recomputed is not None and quality_agrees(_float(claimed), _float(recomputed))
    return bool(claimed == recomputed)


def _float(value: object) -> float:
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"a quality value is a number, not {value!r}")


def _run_view(run: Run) -> RunView:
    recomputed = parts.is_recomputed(run)
    cells = []
    for column, key in CLAIM_COLUMNS:
        claimed, again = parts.claimed_cell(run, column), parts.recomputed_cell(run, key)
        cells.append(Cell(column, claimed, again, recomputed and not _agrees(column, claimed, again)))
    sets = Sets(*(parts.recomputed_cell(run, k) for k in ("duplicates", "missing", "extra")))
    return RunView(run, tuple(cells), sets, parts.run_memory(run), run.outcome not in ("ok", "resumed"))


def attempt_list(runs: Sequence[Run]) -> str:
    """The attempts named by phase and number, e.g. 'cold 1, warm 1–5'."""
    return ", ".join(f"{phase} {numbers}" for phase, numbers in attempt_parts(runs))


def group_attempts(config_id: str, runs: list[RunView], key: Callable[[RunView], object]) -> list[AttemptRow]:
    """The attempts of one configuration whose shown values (key) are identical, as one row naming each of them.

    Only identical rows are folded, and every attempt keeps its name and number, so a failure is never merged
    with a success and five identical repeats still read as five attempts.
    """
    groups: dict[object, list[RunView]] = {}
    for run in runs:
        groups.setdefault(key(run), []).append(run)
    rows = []
    for members in groups.values():
        first, named = members[0], [m.run for m in members]
        rows.append(AttemptRow(config_id, attempt_list(named), attempt_parts(named), len(members), first.run.outcome,
                               first.run.completed_items, first.cells, first.sets, first.memory, first.failed))
    return rows


def _acceptance_key(run: RunView) -> object:
    return (run.run.outcome, run.run.completed_items, json.dumps(to_json_value([run.cells, run.sets]), sort_keys=True))


def _memory_key(run: RunView) -> object:
    return (run.run.outcome, parts.memory_key(run.run))


def _left_out(rows: list[AttemptRow]) -> LeftOut | None:
    """What the note says of the rows past ROWS_LISTED: how many, the attempts they hold, the failed ones."""
    rest = rows[ROWS_LISTED:]
    if not rest:
        return None
    return LeftOut(len(rest), sum(r.count for r in rest), sum(r.failed for r in rest))


def _environments(configs: Sequence[Configuration]) -> list[EnvironmentRow]:
    """Configurations that ran in the same environment share a row (the batch size is a variable, not shown)."""
    rows: dict[str, EnvironmentRow] = {}
    for c in configs:
        shown = {k: parts.environment_value(c, k) for k in ENVIRONMENT_COLUMNS}
        measured = parts.measured_gpu(c.measurement) if c.measurement else None
        row = rows.setdefault(json.dumps({**shown, "measured": measured}, sort_keys=True), EnvironmentRow(
            [], shown["gpu_model"], shown["gpu_count"], shown["driver_version"], shown["python_version"],
            shown["torch_version"], shown["runtime_version"], shown["precision"], measured))
        row.configurations.append(c.id)
    return list(rows.values())


def chart_request(decision: DecisionDocument, language: str = "en") -> ChartRequest:
    """What the charts need from decision.json, and nothing else (it travels to a worker as JSON), with their
    words and fonts in the note's language."""
    configs = decision.configurations
    return ChartRequest(durations=tuple(DurationSeries(c.id, c.timing) for c in configs),
                        memory=tuple(MemoryPanel(c.experiment_id, c.id, parts.measured_phases(c.measurement))
                                     for c in configs if c.measurement),
                        words=i18n.chart_words(i18n.translations(language)), fonts=tuple(i18n.chart_fonts(language)))


def _memory_peaks(configs: Sequence[Configuration]) -> list[MemoryPeak]:
    """Each measured configuration's highest peaks over its phases: what the memory chart's text alternative says."""
    peaks = []
    for c in configs:
        phases = parts.measured_phases(c.measurement) if c.measurement else ()
        allocated = [p.peak_allocated_bytes for p in phases if p.peak_allocated_bytes is not None]
        reserved = [p.peak_reserved_bytes for p in phases if p.peak_reserved_bytes is not None]
        if phases:
            peaks.append(MemoryPeak(c.id, max(allocated, default=None), max(reserved, default=None)))
    return peaks


def _schedule(configs: Sequence[Configuration]) -> list[ScheduleRow]:
    """Each measured configuration's time on the rental, once a measurement records a set-up step besides the
    model load (download, install, compile); a campaign that records only the Lab's phases shows none."""
    rows = [parts.measured_schedule(c.id, c.measurement) for c in configs if c.measurement]
    return rows if any(name != "model_load" for r in rows for name, _ in r.setup) else []


def _alike_lines(configs: Sequence[Configuration], unpriced: Sequence[Configuration]
                 ) -> tuple[list[tuple[tuple[str, ...], tuple[FindingRef, ...]]], list[tuple[bool, tuple[str, ...]]]]:
    """What the list of all configurations says under it of those that are not in the unpriced table: their
    warnings, and why their cost per accepted result is undefined, configurations alike in one line."""
    warned: dict[tuple[FindingRef, ...], list[str]] = {}
    undefined: dict[bool, list[str]] = {}
    for c in configs:
        if c in unpriced:
            continue
        if c.evidence and c.evidence.warnings:
            warned.setdefault(tuple(c.evidence.warnings), []).append(c.id)
        if c.cost_per_accepted_result.usd_minor is None:
            undefined.setdefault(c.committed_budget_usd_minor is None, []).append(c.id)
    return ([(tuple(ids), refs) for refs, ids in warned.items()],
            [(no_price, tuple(ids)) for no_price, ids in undefined.items()])


def _rows(configs: Sequence[Configuration]) -> tuple[list[AttemptRow], list[AttemptRow]]:
    """The acceptance table's rows and the memory table's rows, all of them."""
    acceptance_rows, memory_rows = [], []
    for c in configs:
        runs = [_run_view(r) for r in c.runs]
        acceptance_rows += group_attempts(c.id, runs, _acceptance_key)
        memory_rows += group_attempts(c.id, runs, _memory_key)
    return acceptance_rows, memory_rows


def build_view(decision: ReadDecision, *, signature: Signature = finance.RENDERED, language: str = "en") -> NoteView:
    """Everything the template shows, from decision.json alone; the charts are drawn apart (render.page.charts)."""
    d = decision.document
    configs = d.configurations
    rented = finance.packages(d)
    by_id = {c.id: c for c in configs}
    answer = d.decision.answer
    acceptance_rows, memory_rows = _rows(configs)
    unpriced = [by_id[u.configuration] for u in d.decision.unpriced if u.configuration in by_id]
    warned, undefined_cost = _alike_lines(configs, unpriced)
    return NoteView(
        bundle_id=decision.bundle_id, language=HTML_LANGUAGE.get(language, language), signature=signature,
        packages=rented,
        gpu_of=finance.gpu_names(d),
        chosen_package=next((p for p in rented if answer and by_id[answer].experiment_id in p.experiments), None),
        total=finance.campaign_total(rented), unpriced_gpus=finance.unpriced_gpus(d),
        exclusions=finance.exclusions(configs), tail_groups=finance.tail_groups(configs),
        memory_peaks=_memory_peaks(configs), timezone=d.window.timezone if d.window else None,
        decision=d, campaign=d.campaign, rule=d.rule, window=d.window, answer=answer,
        chosen=by_id.get(answer) if answer else None, verdict=d.decision,
        errors=d.finding_counts["error"], warnings=d.finding_counts["warning"],
        synthetic=bool(d.campaign and d.campaign.synthetic_data)
        or any(c.measurement and c.measurement.synthetic_data for c in configs),
        test_run=bool(configs) and all(c.test_run for c in configs),
        reference_origin=d.rule.reference.origin() if d.rule else None,
        looser=looser_rules(d.rule.threshold, d.rule.tolerance, d.rule.direction, d.rule.subgroups or ())
        if d.rule else (),
        configurations=configs, unpriced=unpriced, warned=warned, undefined_cost=undefined_cost,
        acceptance_rows=acceptance_rows[:ROWS_LISTED], acceptance_left_out=_left_out(acceptance_rows),
        memory_rows=memory_rows[:ROWS_LISTED], memory_left_out=_left_out(memory_rows),
        notes=grid_notes(configs),
        findings_per_severity=FINDINGS_PER_SEVERITY, warnings_on_page_one=WARNINGS_ON_PAGE_ONE,
        durations_listed=DURATIONS_LISTED,
        environments=_environments(configs),
        schedule=_schedule(configs),
        measurement_files=[(c.id, c.measurement.file) for c in configs if c.measurement],
        experiments=d.experiments, findings=finding_groups(d.findings, configs), inputs=d.inputs,
    )
