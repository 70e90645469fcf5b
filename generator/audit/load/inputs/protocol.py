"""The protocol (schemas/protocol.schema.json) as frozen dataclasses, built once from a schema-valid document."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.audit.load.inputs.access import (
    as_int,
    as_object,
    as_objects,
    as_scalar_map,
    as_str,
    as_strs,
    opt_int,
    opt_str,
)
from generator.audit.load.inputs.work import Corpus, FurtherCorpus, Quality, QualityReference, Split, Subgroup
from generator.core.jsonrecord import OMIT_IF_NONE
from generator.core.jsonvalue import JsonObject, JsonScalar

__all__ = ["SEED", "Corpus", "Exclusion", "ExperimentSpec", "Expense", "Files", "Fixed", "FurtherCorpus",
           "OutputFormat", "Protocol", "Quality",
           "QualityReference", "Rental", "Resume", "Split", "Subgroup", "Timer", "Variant", "Warmup", "WindowSpec"]


SEED = "seed"  # the declared variable whose variants are seeds (a stochastic protocol's)

@dataclass(frozen=True)
class Timer:
    """The steps inside elapsed_seconds (decision.json's campaign.timer)."""

    covers: tuple[str, ...]
    description: str

    @classmethod
    def of(cls, data: JsonObject) -> Timer:
        return cls(as_strs(data["covers"]), as_str(data["description"]))


@dataclass(frozen=True)
class Resume:
    """A resume setting registered as a variant of its own: the variant whose interrupted attempts it resumes."""

    of: str
    setting: str


@dataclass(frozen=True)
class Variant:
    """One variant: its value of the declared variable, its measurement JSON when it links one, and its resume
    setting when it is the resume variant of another."""

    id: str
    value: int | float | str  # as written: JSON Schema's `integer` admits 5.0, kept as the file writes it
    measurement: str | None
    resume: Resume | None = None

    @classmethod
    def of(cls, data: JsonObject) -> Variant:
        value = data["value"]
        if not isinstance(value, int | float | str) or isinstance(value, bool):
            raise TypeError("a variant's value is an integer or a string")
        resume = data.get("resume")
        r = as_object(resume) if resume is not None else None
        return cls(as_str(data["id"]), value, opt_str(data.get("measurement")),
                   Resume(as_str(r["of"]), as_str(r["setting"])) if r is not None else None)


@dataclass(frozen=True)
class Fixed:
    """What an experiment holds fixed; `written` keeps the settings as the file writes them (keys and order)."""

    corpus_revision: str
    input_order: str | None  # None when it is the experiment's declared variable
    model_revision: str
    tokenizer_revision: str
    precision: str | None
    batch: int | None
    context: int | None
    padding: str
    truncation: str
    seed: int | None  # null only with seed declared or common seeds listed (the schema says when)
    written: dict[str, JsonScalar] = field(compare=False, repr=False)

    def setting(self, column: str) -> JsonScalar:
        """The setting of a grid column (None when not written)."""
        return self.written.get(column)

    @classmethod
    def of(cls, data: JsonObject) -> Fixed:
        return cls(as_str(data["corpus_revision"]), opt_str(data["input_order"]), as_str(data["model_revision"]),
                   as_str(data["tokenizer_revision"]), opt_str(data.get("precision")), opt_int(data.get("batch")),
                   opt_int(data.get("context")), as_str(data["padding"]), as_str(data["truncation"]),
                   opt_int(data.get("seed")), as_scalar_map(data))


@dataclass(frozen=True)
class Warmup:
    """The warm-up rule, the same for every variant (decision.json's experiment.warmup)."""

    iterations: int
    inputs: str
    recompilation: str | None = field(default=None, metadata=OMIT_IF_NONE)

    def setting(self, key: str) -> int | str | None:
        """A key of the rule named at run time (None when the protocol does not write it)."""
        settings: dict[str, int | str | None] = {"iterations": self.iterations, "inputs": self.inputs,
                                                 "recompilation": self.recompilation}
        return settings.get(key)

    @classmethod
    def of(cls, data: JsonObject) -> Warmup:
        return cls(as_int(data["iterations"]), as_str(data["inputs"]), opt_str(data.get("recompilation")))


@dataclass(frozen=True)
class Rental:
    """The packages an experiment commits: one (`duration_days`), or consecutive ones (`periods`, no automatic
    extension: each is billed whole); `duration_days` is the first package, `periods` all of them in order."""

    gpu: str
    duration_days: int
    lots: int
    periods: tuple[int, ...]
    written_duration_days: int | None  # as the protocol writes it (None when it gives `periods` alone)
    # The provider's article IDs of the packages, one per package in order (known when they are booked): an
    # invoice line whose seller's item ID is one of them bills that package. None when the protocol gives none.
    article_ids: tuple[str, ...] | None = None
    # The id of a rental of the protocol's `rentals`, which several experiments may name; None for an experiment's
    # own rental (written inline), which only that experiment runs in.
    id: str | None = None

    @classmethod
    def of(cls, data: JsonObject) -> Rental:
        written = opt_int(data.get("duration_days"))
        listed, articles = data.get("periods"), data.get("article_ids")
        periods = tuple(as_int(p) for p in listed) if isinstance(listed, list) and listed else (as_int(written),)
        return cls(as_str(data["gpu"]), periods[0], as_int(data["lots"]), periods, written,
                   None if articles is None else as_strs(articles), opt_str(data.get("id")))

    @property
    def total_days(self) -> int:
        """The days the packages cover together."""
        return sum(self.periods)

    @property
    def label(self) -> str:
        """The packages' days as a reader writes them: `7`, or `7 + 3`."""
        return " + ".join(str(d) for d in self.periods)


@dataclass(frozen=True)
class ExperimentSpec:
    """One registered experiment: one declared variable, its variants, what is fixed, the runs and the package."""

    id: str
    description: str | None
    variable: str
    variants: tuple[Variant, ...]
    fixed: Fixed
    runs_per_variant: int
    cold_runs_per_variant: int
    order: str | None
    drawn_sequence: tuple[str, ...] | None
    warmup: Warmup
    rental: Rental
    seeds: tuple[int, ...] | None = None  # the common seeds every variant runs under, their runs kept apart
    # The further corpora's revisions (protocol corpora): every variant processes them too, after the first.
    further_corpora: tuple[str, ...] = ()

    @property
    def rental_key(self) -> str:
        """What the experiment's package is counted by: its shared rental's id, else its own id (one per rental)."""
        return f"rental {self.rental.id}" if self.rental.id is not None else f"experiment {self.id}"

    @classmethod
    def of(cls, data: JsonObject, further_corpora: tuple[str, ...] = (),
           rentals: dict[str, Rental] | None = None) -> ExperimentSpec:
        """The experiment of a schema-valid document; a `rental` that names a shared rental gets that rental (a
        KeyError when `rentals` lacks it: generator.audit.load.rentals finds that first)."""
        drawn, seeds, rental = data.get("drawn_sequence"), data.get("seeds"), data["rental"]
        return cls(as_str(data["id"]), opt_str(data.get("description")), as_str(data["variable"]),
                   tuple(Variant.of(v) for v in as_objects(data["variants"])), Fixed.of(as_object(data["fixed"])),
                   as_int(data["runs_per_variant"]), as_int(data["cold_runs_per_variant"]),
                   opt_str(data.get("order")), None if drawn is None else as_strs(drawn),
                   Warmup.of(as_object(data["warmup"])),
                   (rentals or {})[rental] if isinstance(rental, str) else Rental.of(as_object(rental)),
                   tuple(as_int(s) for s in seeds) if isinstance(seeds, list) else None, further_corpora)

    def attempts(self, phase: str) -> int:
        """The attempts of one phase registered per variant: its runs under each common seed and on each corpus
        (run_index 1 to this number); its runs when it lists no seeds and the work is one corpus."""
        runs = self.runs_per_variant if phase == "warm" else self.cold_runs_per_variant if phase == "cold" else 0
        return runs * (len(self.seeds) if self.seeds else 1) * (1 + len(self.further_corpora))


@dataclass(frozen=True)
class WindowSpec:
    """The campaign window: local times without offset, in an IANA time zone."""

    start: str
    end: str
    timezone: str


@dataclass(frozen=True)
class Files:
    """Where the evidence lives, relative to the campaign folder."""

    expected_ids: str
    reference: str
    raw_results: str
    tariffs: str
    predictions: str
    lab_manifest: str | None = None  # the Lab archive's MANIFEST.json the campaign carries, listing its tariffs

    def as_map(self) -> dict[str, str]:
        named = {"expected_ids": self.expected_ids, "reference": self.reference, "raw_results": self.raw_results,
                 "tariffs": self.tariffs, "predictions": self.predictions}
        return named if self.lab_manifest is None else {**named, "lab_manifest": self.lab_manifest}


@dataclass(frozen=True)
class Exclusion:
    """An outside cause registered before the runs, under which an attempt is set aside."""

    cause: str
    description: str


@dataclass(frozen=True)
class OutputFormat:
    """The declared format of every prediction file."""

    columns: tuple[str, ...]
    encoding: str
    delimiter: str


@dataclass(frozen=True)
class Expense:
    """An expense registered beside the packages: what it is, its amount in cents, and why it was needed."""

    what: str
    amount_usd_minor: int
    why: str

    @classmethod
    def of(cls, data: JsonObject) -> Expense:
        return cls(as_str(data["what"]), as_int(data["amount_usd_minor"]), as_str(data["why"]))


@dataclass(frozen=True)
class Protocol:
    """protocol.json: everything decided before the first measurement."""

    schema_version: str
    title: str
    question: str
    scenario: str
    registered_at: str
    synthetic_data: bool
    language: str | None
    notes: str | None
    exclusions: tuple[Exclusion, ...] | None
    corpus: Corpus
    classes: tuple[str, ...]
    output_format: OutputFormat
    quality: Quality
    experiments: tuple[ExperimentSpec, ...]
    timer: Timer
    window: WindowSpec
    deadline: str
    files: Files
    other_expenses: tuple[Expense, ...] | None = None
    splits: tuple[Split, ...] | None = None
    corpora: tuple[FurtherCorpus, ...] | None = None  # the corpora beside `corpus`, when the work is several
    rentals: tuple[Rental, ...] | None = None  # the rentals several experiments may run in, each with its id

    @classmethod
    def of(cls, data: JsonObject) -> Protocol:
        """The protocol of a schema-valid document (TypeError on a value of the wrong type)."""
        synthetic = data["synthetic_data"]
        if not isinstance(synthetic, bool):
            raise TypeError("synthetic_data is a boolean")
        exclusions, spent, splits = data.get("exclusions"), data.get("other_expenses"), data.get("splits")
        further = tuple(FurtherCorpus.of(c) for c in as_objects(data["corpora"])) if "corpora" in data else None
        shared = tuple(Rental.of(r) for r in as_objects(data["rentals"])) if "rentals" in data else None
        by_id = {r.id: r for r in reversed(shared or ()) if r.id is not None}  # the first of an id (a finding)
        w, f, o = as_object(data["window"]), as_object(data["files"]), as_object(data["output_format"])
        return cls(
            as_str(data["schema_version"]), as_str(data["title"]), as_str(data["question"]), as_str(data["scenario"]),
            as_str(data["registered_at"]), synthetic, opt_str(data.get("language")), opt_str(data.get("notes")),
            None if exclusions is None else tuple(Exclusion(as_str(e["cause"]), as_str(e["description"]))
                                                  for e in as_objects(exclusions)),
            Corpus.of(as_object(data["corpus"])), as_strs(data["classes"]),
            OutputFormat(as_strs(o["columns"]), as_str(o["encoding"]), as_str(o["delimiter"])),
            Quality.of(as_object(data["quality"])),
            tuple(ExperimentSpec.of(e, tuple(c.revision for c in further or ()), by_id)
                  for e in as_objects(data["experiments"])),
            Timer.of(as_object(data["timer"])),
            WindowSpec(as_str(w["start"]), as_str(w["end"]), as_str(w["timezone"])), as_str(data["deadline"]),
            Files(as_str(f["expected_ids"]), as_str(f["reference"]), as_str(f["raw_results"]), as_str(f["tariffs"]),
                  as_str(f["predictions"]), opt_str(f.get("lab_manifest"))),
            None if spent is None else tuple(Expense.of(e) for e in as_objects(spent)),
            None if splits is None else tuple(Split.of(s) for s in as_objects(splits)), further, shared)

    def id_files(self) -> list[tuple[str, str, str]]:
        """The files named beside `files`: each split's and each subgroup's IDs, each further corpus's expected IDs and
        reference (JSON path, role, relative path)."""
        named = [(f"/splits/{i}/ids", f"{s.name} split IDs", s.ids) for i, s in enumerate(self.splits or ())]
        named += [(f"/quality/subgroups/{i}/ids", f"{g.id} subgroup IDs", g.ids)
                  for i, g in enumerate(self.quality.subgroups)]
        for i, c in enumerate(self.corpora or ()):
            named += [(f"/corpora/{i}/expected_ids", f"{c.name} expected IDs", c.expected_ids),
                      (f"/corpora/{i}/reference", f"{c.name} reference", c.reference)]
        return named

    def corpus_revisions(self) -> tuple[str, ...]:
        """Every corpus of the useful work, by revision: the first, then the further ones in the order listed."""
        return (self.corpus.revision, *(c.revision for c in self.corpora or ()))

    def experiment(self, experiment_id: str) -> ExperimentSpec | None:
        return next((e for e in self.experiments if e.id == experiment_id), None)

    def rental_field(self, exp: ExperimentSpec) -> str:
        """The protocol field of an experiment's rental: its shared rental's entry in `rentals`, or its own."""
        index = next((i for i, r in enumerate(self.rentals or ()) if r.id is not None and r.id == exp.rental.id), None)
        if index is not None:
            return f"/rentals/{index}"
        return f"/experiments/{self.experiments.index(exp)}/rental"

    def sharing(self, exp: ExperimentSpec) -> tuple[ExperimentSpec, ...]:
        """The experiments run in the rental of `exp` (itself included), in the order registered."""
        return tuple(e for e in self.experiments if e.rental_key == exp.rental_key)
