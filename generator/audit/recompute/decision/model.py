"""The typed decision: frozen dataclasses mirroring schemas/decision.schema.json, and their one JSON mapping."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.audit.load.findings import Finding
from generator.audit.load.inputs.protocol import (
    Corpus,
    Expense,
    FurtherCorpus,
    Protocol,
    QualityReference,
    Subgroup,
    Timer,
    Warmup,
)
from generator.audit.recompute.decision.answer import (
    Decision,
    Excluded,
    FindingRef,
    RankEntry,
    RunExclusion,
    Tie,
    Unpriced,
)
from generator.audit.recompute.decision.runcells import (
    ClaimedCells,
    CorpusRuns,
    EnvironmentCells,
    MemoryCells,
    PhaseTiming,
    RecomputedRun,
    ResumeBalance,
    SeedRuns,
    SubgroupSummary,
    Timing,
)
from generator.audit.recompute.money.spend import PackagePeriod, SharedRental
from generator.core.jsonrecord import OMIT_IF_NONE, JsonRecord
from generator.core.jsonvalue import JsonScalar

__all__ = [
    "CampaignSummary", "ClaimedCells", "Comparison", "Configuration", "CorpusRuns", "CostPerResult", "Coverage",
    "Decision",
    "DecisionDocument", "EnvironmentCells", "Evidence", "Excluded", "Experiment", "FindingRef", "InputFingerprint",
    "Measurement", "MemoryCells", "Package", "PackageCover", "PhaseTiming", "QualityRule", "RankEntry",
    "Recomputation", "RecomputedRun", "RegistrationStatus", "ResumeBalance", "Run", "RunExclusion", "SealParty",
    "SeedRuns", "Separation", "Tie",
    "Timing", "Tool", "Unpriced", "Window",
]

@dataclass(frozen=True)
class PackageCover(JsonRecord):
    """Whether a package of `days` (`hours` long) covers the window."""

    days: int
    hours: int
    covers: bool


@dataclass(frozen=True)
class Coverage(JsonRecord):
    """The window's hours (text, two decimals at most) and which packages cover them."""

    hours: str
    packages: tuple[PackageCover, ...]
    smallest_covering_days: int | None
    extra_30_day_periods: int | None


@dataclass(frozen=True)
class Window(JsonRecord):
    """The campaign window in its time zone, the deadline, and the packages covering it."""

    start: str
    end: str
    timezone: str
    deadline: str
    ends_before_deadline: bool
    hours: str
    packages: tuple[PackageCover, ...]
    smallest_covering_days: int | None
    extra_30_day_periods: int | None


@dataclass(frozen=True)
class Package(JsonRecord):
    """An experiment's rented package and its price from the tariffs (None throughout without a tariff)."""

    gpu: str
    duration_days: int
    lots: int
    covers_window: bool
    total_usd_minor: int | None
    gpus_per_lot: int | None
    gpus: int | None = field(metadata=OMIT_IF_NONE)
    price_per_lot_usd_minor: int | None
    price_status: str | None
    model_name: str | None
    snapshot_date: str | None
    price_source: str | None  # catalogue, provider or illustrative (generator.audit.validate.tariffrules)
    price_source_detail: str | None  # the catalogue's snapshot date, lab-manifest, or the source the row names
    # Consecutive packages (the protocol's rental.periods), each priced; absent for a single package.
    periods: tuple[PackagePeriod, ...] | None = field(metadata=OMIT_IF_NONE)
    # The shortest single package that covers the window, when it is shorter than the one rented, and its price.
    needed_days: int | None = field(metadata=OMIT_IF_NONE)
    needed_total_usd_minor: int | None = field(metadata=OMIT_IF_NONE)
    # The provider's article IDs of the packages, one per package in order (the protocol's rental.article_ids).
    article_ids: tuple[str, ...] | None = field(metadata=OMIT_IF_NONE)
    # The id of the protocol's shared rental the experiment ran in (`rentals`): experiments naming one id share
    # this one package, counted and billed once. Absent for an experiment's own rental.
    rental: str | None = field(default=None, metadata=OMIT_IF_NONE)


@dataclass(frozen=True)
class Separation(JsonRecord):
    """Whether two warm series decide between their configurations; gap and spread when both have runs."""

    decides: bool
    gap: float | None = field(metadata=OMIT_IF_NONE)
    spread: float | None = field(metadata=OMIT_IF_NONE)
    reason: str


@dataclass(frozen=True)
class Comparison(JsonRecord):
    """The separation of two configurations of one experiment."""

    configurations: tuple[str, str]
    decides: bool
    gap: float | None = field(metadata=OMIT_IF_NONE)
    spread: float | None = field(metadata=OMIT_IF_NONE)
    reason: str

    @classmethod
    def of(cls, a: str, b: str, sep: Separation) -> Comparison:
        """The comparison of configurations `a` and `b` from their separation."""
        return cls((a, b), sep.decides, sep.gap, sep.spread, sep.reason)


@dataclass(frozen=True)
class Experiment(JsonRecord):
    """One experiment as registered, with its package and pairwise timing comparisons."""

    id: str
    variable: str
    description: str
    fixed: dict[str, JsonScalar]  # as the protocol writes it: its keys (`batch` may be absent) and their order
    runs_per_variant: int
    cold_runs_per_variant: int
    warmup: Warmup
    order: str | None
    package: Package
    comparisons: tuple[Comparison, ...]
    # The common seeds every variant ran under (the protocol's experiments[].seeds); absent when none are listed.
    seeds: tuple[int, ...] | None = field(default=None, metadata=OMIT_IF_NONE)


@dataclass(frozen=True)
class DeviceUse(JsonRecord):
    """One GPU of a run over several: the texts of its share, the passes it recorded, whether it worked in each,
    and its highest peaks (each GPU's own, never summed)."""

    device: str
    gpu_name: str | None
    gpu_uuid: str | None
    texts: int
    passes: int
    worked: bool
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None


@dataclass(frozen=True)
class Measurement(JsonRecord):
    """What the configuration's measurement file observed, as it holds it."""

    file: str
    # As the file writes them (optional keys absent or null, in the file's order): a copy, not a reading; each
    # GPU's share of a pass over several is summed up in `devices`, not copied.
    environment: dict[str, JsonScalar]
    configuration: dict[str, JsonScalar]
    synthetic_data: bool
    phases: list[dict[str, JsonScalar]]
    devices: tuple[DeviceUse, ...] | None = field(default=None, metadata=OMIT_IF_NONE)


@dataclass(frozen=True)
class Run(JsonRecord):
    """One grid row of a configuration: its outcome, claimed and recomputed cells, and memory."""

    line: int
    phase: str
    run_index: int
    outcome: str
    completed_items: int | None
    elapsed_seconds: float | None
    claimed: ClaimedCells
    recomputed: RecomputedRun | None
    memory: MemoryCells
    notes: str
    seed: int | None = field(default=None, metadata=OMIT_IF_NONE)  # the row's seed, when the experiment lists seeds
    resumed: str | None = field(default=None, metadata=OMIT_IF_NONE)  # the attempt a resumption names
    corpus: str | None = field(default=None, metadata=OMIT_IF_NONE)  # the row's corpus, when the work is several


@dataclass(frozen=True)
class CostPerResult(JsonRecord):
    """Cost per distinct accepted result in cents with two decimals, or why it is undefined."""

    usd_minor: str | None
    undefined_reason: str | None


@dataclass(frozen=True)
class Evidence(JsonRecord):
    """The findings that concern a configuration: errors gate it, warnings are only listed."""

    errors: tuple[FindingRef, ...]
    warnings: tuple[FindingRef, ...]


@dataclass(frozen=True)
class Configuration(JsonRecord):
    """One (experiment, variant): runs, timing, verdicts and cost; `evidence` once the gate attributed findings."""

    id: str
    experiment_id: str
    variant_id: str
    variable: str
    # The variant's value, an int or a str as written: `object`, since from_json_value reads a union only as X | None.
    value: object
    gpu: str
    environment: EnvironmentCells
    measurement: Measurement | None
    runs: tuple[Run, ...]
    timing: Timing
    attempts: int
    completed: int
    failures: int
    out_of_memory: int
    accepted_runs: int
    accepted_unique_corpora: int
    accepted: bool
    memory_feasible: bool
    fits_window: bool
    fits_deadline: bool
    admissible: bool
    reasons: tuple[str, ...]
    committed_budget_usd_minor: int | None
    price_status: str | None
    duration_days: int
    cost_per_accepted_result: CostPerResult
    # Each planned subgroup across the runs; left out when the protocol plans none.
    subgroups: tuple[SubgroupSummary, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
    # Each common seed's runs kept apart, when the experiment lists seeds (absent otherwise).
    seeds: tuple[SeedRuns, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
    evidence: Evidence | None = field(default=None, metadata=OMIT_IF_NONE)
    resume: ResumeBalance | None = field(default=None, metadata=OMIT_IF_NONE)  # a resume variant's own part
    # Each corpus's runs kept apart, when the work is several corpora (absent otherwise).
    corpora: tuple[CorpusRuns, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
    # True when its evidence is a test run (marked test_run, or run on the CPU): never ranked (absent otherwise).
    test_run: bool | None = field(default=None, metadata=OMIT_IF_NONE)


@dataclass(frozen=True)
class Recomputation(JsonRecord):
    """What recompute gives the gate: the window, the experiments and their configurations."""

    window: Window
    experiments: tuple[Experiment, ...]
    configurations: tuple[Configuration, ...]


@dataclass(frozen=True)
class Tool(JsonRecord):
    """The program that made the decision."""

    name: str
    version: str


@dataclass(frozen=True)
class CorpusFingerprint(JsonRecord):
    """A corpus's content fingerprint as `check` computed it (validate.corpus.corpusprint), and its revision's check."""

    revision: str
    fingerprint: str | None  # content-sha256:<64 hex>; None when its files are not sound enough to fingerprint
    revision_check: str  # matches, differs, absent or unchecked


@dataclass(frozen=True)
class CampaignSummary(JsonRecord):
    """The registered question and corpus, as the protocol states them."""

    title: str
    question: str
    scenario: str
    registered_at: str
    synthetic_data: bool
    corpus: Corpus
    classes: list[str]
    timer: Timer
    notes: str
    language: str
    other_expenses: tuple[Expense, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
    corpora: tuple[FurtherCorpus, ...] | None = field(default=None, metadata=OMIT_IF_NONE)  # beside `corpus`
    # Each corpus's content fingerprint, the first corpus first (absent in decisions made before it existed).
    fingerprints: tuple[CorpusFingerprint, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
    rentals: tuple[SharedRental, ...] | None = field(default=None, metadata=OMIT_IF_NONE)  # the protocol's `rentals`

    @classmethod
    def of(cls, protocol: Protocol, fingerprints: tuple[CorpusFingerprint, ...] | None = None) -> CampaignSummary:
        """The summary of a valid protocol (its notes empty when it has none, its note language English), with
        each corpus's content fingerprint as `check` computed it."""
        spent = protocol.other_expenses
        return cls(protocol.title, protocol.question, protocol.scenario, protocol.registered_at,
                   protocol.synthetic_data, protocol.corpus, list(protocol.classes), protocol.timer,
                   protocol.notes if protocol.notes is not None else "",
                   protocol.language if protocol.language is not None else "en",
                   spent or None, protocol.corpora or None, fingerprints,
                   tuple(SharedRental(r.id, tuple(e.id for e in protocol.experiments if e.rental.id == r.id))
                         for r in protocol.rentals if r.id is not None) if protocol.rentals else None)


@dataclass(frozen=True)
class QualityRule(JsonRecord):
    """The pre-registered acceptance rule."""

    metric: str
    threshold: float
    tolerance: float
    direction: str
    reference: QualityReference
    # The target applied (reproduction): the registered one, else the default; absent in older decisions (default).
    reproduction: str | None = field(default=None, metadata=OMIT_IF_NONE)
    reproduction_bound: float | None = field(default=None, metadata=OMIT_IF_NONE)
    reproduction_registered: bool | None = field(default=None, metadata=OMIT_IF_NONE)  # False: the default applied
    subgroups: tuple[Subgroup, ...] | None = field(default=None, metadata=OMIT_IF_NONE)  # as registered

    @classmethod
    def of(cls, protocol: Protocol) -> QualityRule:
        """The protocol's quality rule, with the reproduction target applied and whether it was registered."""
        q = protocol.quality
        return cls(q.metric, q.threshold, q.tolerance, q.direction, q.reference, q.reproduction_target,
                   q.reproduction_bound, q.reproduction is not None, q.subgroups or None)


@dataclass(frozen=True)
class InputFingerprint(JsonRecord):
    """An input file read: its path in the campaign, size and SHA-256."""

    path: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class SealParty(JsonRecord):
    """Who signed the registration, or the authority that stamped it: subject, SHA-256 of the certificate, and
    (for an authority) whether the reader trusts it; an authority not trusted states a time nobody checked."""

    subject: str
    sha256: str
    trusted: bool | None = field(default=None, metadata=OMIT_IF_NONE)


@dataclass(frozen=True)
class RegistrationStatus(JsonRecord):
    """How the registration is proven (generator.audit.sealing.sealcheck): sealed-time-stamped, sealed-time-not-proven,
    declared (no seal: registered_at is the campaign's word) or seal-broken (it does not verify, or its files
    changed); the signer, the token's time (UTC) and authority, registration.json's SHA-256 and the files sealed."""

    status: str
    signer: SealParty | None = None
    time: str | None = None
    authority: SealParty | None = None
    registration_sha256: str | None = None
    sealed_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class DecisionDocument(JsonRecord):
    """decision.json as a whole. Findings are generator.audit.load.findings records, severity as its value."""

    schema_version: str
    tool: Tool
    generated_at: str
    campaign: CampaignSummary | None
    rule: QualityRule | None
    inputs: tuple[InputFingerprint, ...]
    window: Window | None
    experiments: tuple[Experiment, ...]
    configurations: tuple[Configuration, ...]
    decision: Decision
    finding_counts: dict[str, int]
    findings: tuple[Finding, ...]
    # absent in decisions made before the seal existed (their registration was declared, never sealed)
    registration: RegistrationStatus | None = field(default=None, metadata=OMIT_IF_NONE)
