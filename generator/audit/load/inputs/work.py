"""The useful work a protocol registers: its corpora, quality rule, planned subgroups and splits, as dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.audit.load.inputs.access import as_int, as_number, as_object, as_objects, as_str, opt_str
from generator.core.jsonrecord import OMIT_IF_NONE
from generator.core.jsonvalue import JsonObject

__all__ = ["Corpus", "FurtherCorpus", "Quality", "QualityReference", "ReferenceSource", "Split", "Subgroup"]


@dataclass(frozen=True)
class Corpus:
    """The useful work: one corpus, its revision and size (decision.json's campaign.corpus, keys in this order)."""

    name: str
    revision: str
    size: int
    source: str | None = field(default=None, metadata=OMIT_IF_NONE)

    @classmethod
    def of(cls, data: JsonObject) -> Corpus:
        return cls(as_str(data["name"]), as_str(data["revision"]), as_int(data["size"]), opt_str(data.get("source")))


@dataclass(frozen=True)
class FurtherCorpus:
    """A corpus of the useful work beside the first: its name, revision and size, and its own expected IDs and
    reference labels (the first corpus's are the protocol's `files`)."""

    name: str
    revision: str
    size: int
    expected_ids: str
    reference: str
    source: str | None = field(default=None, metadata=OMIT_IF_NONE)

    @classmethod
    def of(cls, data: JsonObject) -> FurtherCorpus:
        return cls(as_str(data["name"]), as_str(data["revision"]), as_int(data["size"]), as_str(data["expected_ids"]),
                   as_str(data["reference"]), opt_str(data.get("source")))


@dataclass(frozen=True)
class ReferenceSource:
    """Where the reference value comes from: a registered split, a publication, or an earlier gpu-audit bundle
    (`kind`, and the fields of that kind only; the schema's if-then keeps the others out)."""

    kind: str  # split, publication or bundle
    split: str | None = field(default=None, metadata=OMIT_IF_NONE)  # split: the registered split's name
    citation: str | None = field(default=None, metadata=OMIT_IF_NONE)  # publication: as the file writes it
    id: str | None = field(default=None, metadata=OMIT_IF_NONE)  # bundle: its ID, GA- and 16 hex digits
    fingerprint: str | None = field(default=None, metadata=OMIT_IF_NONE)  # bundle: SHA-256 of its decision.json

    @classmethod
    def of(cls, data: JsonObject) -> ReferenceSource:
        return cls(as_str(data["kind"]), opt_str(data.get("split")), opt_str(data.get("citation")),
                   opt_str(data.get("id")), opt_str(data.get("fingerprint")))


@dataclass(frozen=True)
class QualityReference:
    """The named reference value the tolerance is measured against (a number as the file writes it)."""

    name: str
    value: float
    # The registered split it was measured on; left out of decision.json when not given (recompute.jsonrecord's
    # OMIT_IF_NONE, written out: this side imports only core).
    split: str | None = field(default=None, metadata={"omit_if_none": True})
    source: ReferenceSource | None = field(default=None, metadata=OMIT_IF_NONE)  # its origin, as registered

    def origin(self) -> ReferenceSource | None:
        """The registered origin: `source`, else `split` read as a split source; None when neither is given."""
        if self.source is not None:
            return self.source
        return None if self.split is None else ReferenceSource("split", split=self.split)

    @classmethod
    def of(cls, data: JsonObject) -> QualityReference:
        source = data.get("source")
        return cls(as_str(data["name"]), as_number(data["value"]), opt_str(data.get("split")),
                   ReferenceSource.of(as_object(source)) if isinstance(source, dict) else None)


@dataclass(frozen=True)
class Subgroup:
    """A planned subgroup: its ID file, how its edges were set, and its own rule where the protocol gives one, with
    the registered reason where that rule is looser than the main one (validate.corpus.subgrouprules)."""

    id: str
    ids: str
    edges: str
    threshold: float | None = field(default=None, metadata=OMIT_IF_NONE)
    tolerance: float | None = field(default=None, metadata=OMIT_IF_NONE)
    reference_value: float | None = field(default=None, metadata=OMIT_IF_NONE)
    reason: str | None = field(default=None, metadata=OMIT_IF_NONE)  # why its own rule is looser, as registered

    @classmethod
    def of(cls, data: JsonObject) -> Subgroup:
        def number(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else as_number(value)
        return cls(as_str(data["id"]), as_str(data["ids"]), as_str(data["edges"]), number("threshold"),
                   number("tolerance"), number("reference_value"), opt_str(data.get("reason")))


# The reproduction target a protocol that registers none is held to (docs/check.md): acceptable quality, acceptance
# alone. PyTorch guarantees no identical outputs even under the same seed (003), so a stricter target is the
# protocol's to register, never assumed.
DEFAULT_REPRODUCTION = "quality"


@dataclass(frozen=True)
class Quality:
    """The pre-registered acceptance rule."""

    metric: str
    threshold: float
    tolerance: float
    direction: str
    reference: QualityReference
    reproduction: str | None = None  # identical, bounded or quality; None: not registered (the default applies)
    reproduction_bound: float | None = None  # for bounded: the largest spread of the metric across warm runs
    subgroups: tuple[Subgroup, ...] = ()  # the planned subgroups, each judged on every run

    @property
    def reproduction_target(self) -> str:
        """The reproduction target applied: the registered one, else DEFAULT_REPRODUCTION."""
        return self.reproduction if self.reproduction is not None else DEFAULT_REPRODUCTION

    def subgroup_rule(self, subgroup: Subgroup) -> tuple[float, float, float]:
        """A subgroup's threshold, tolerance and reference value: its own, else the main rule's."""
        return (self.threshold if subgroup.threshold is None else subgroup.threshold,
                self.tolerance if subgroup.tolerance is None else subgroup.tolerance,
                self.reference.value if subgroup.reference_value is None else subgroup.reference_value)

    @classmethod
    def of(cls, data: JsonObject) -> Quality:
        target = data.get("reproduction")
        repro = as_object(target) if isinstance(target, dict) else None
        bound = repro.get("bound") if repro is not None else None
        return cls(as_str(data["metric"]), as_number(data["threshold"]), as_number(data["tolerance"]),
                   as_str(data["direction"]), QualityReference.of(as_object(data["reference"])),
                   as_str(repro["target"]) if repro is not None else None,
                   as_number(bound) if bound is not None else None,
                   tuple(Subgroup.of(g) for g in as_objects(data["subgroups"])) if "subgroups" in data else ())


@dataclass(frozen=True)
class Split:
    """Data the model was trained or tuned on, kept apart from the comparison corpus: name, revision, ID file."""

    name: str
    revision: str
    ids: str

    @classmethod
    def of(cls, data: JsonObject) -> Split:
        return cls(as_str(data["name"]), as_str(data["revision"]), as_str(data["ids"]))
