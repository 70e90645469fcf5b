"""The Finding record: one problem or observation about the inputs, as data."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from dataclasses import field as dataclass_field
from enum import Enum

from generator.core.codes.registry import registered
from generator.core.jsonrecord import OMIT_IF_NONE


class Severity(str, Enum):  # noqa: UP042 - a StrEnum would change what str() of a member gives
    """How much a finding matters: errors fail the audit, warnings and info do not."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class FindingRef:
    """Where a finding is, to name it beside a configuration, the answer, or the findings that follow from it."""

    code: str
    severity: str
    file: str
    line: int | None
    field: str | None

    @classmethod
    def of(cls, f: Finding) -> FindingRef:
        """The reference to a finding."""
        return cls(f.code, f.severity.value, f.file, f.line, f.field)

    def where(self) -> str:
        """`code at file:line (field)`, as reasons name it."""
        return f"{self.code} at {self.file}" + (f":{self.line}" if self.line is not None else "") \
            + (f" ({self.field})" if self.field else "")


@dataclass(frozen=True)
class FollowOns:
    """The findings that follow from one cause (audit.validate.followons): how many, how many of them errors, and
    the first FIRST_FOLLOW_ONS of them in the findings' order."""

    count: int
    errors: int
    first: tuple[FindingRef, ...]


# The follow-ons a cause names (in the terminal, decision.json and the note); all of them are still findings.
FIRST_FOLLOW_ONS = 5
# decision.json leaves these keys out of a finding that neither follows from another nor has follow-ons.
_LINKS = ("caused_by", "follow_ons")


@dataclass(frozen=True)
class Finding:
    """One finding: a stable code, where it is, what was claimed or found, and what to do.

    `line` is the 1-based physical line in the file where the record starts (None for whole-file
    or JSON findings); `field` is a column name or a JSON path. `configurations` names the configurations
    (`experiment/variant`) whose own evidence the finding concerns; `shared_input` names the shared input it
    concerns instead (`protocol`, `expected_ids`, `reference`, `tariffs`, `grid`). `audit.validate.attribution`
    fills both in once every finding is known; a finding that concerns neither is about a file no
    configuration rests on.
    """

    code: str
    severity: Severity
    file: str
    message: str
    line: int | None = None
    field: str | None = None
    value: object = None  # the value as the file writes it: a JSON scalar, list or object
    rule: str | None = None
    fix: str | None = None
    claimed: object = None
    recomputed: object = None
    extra: dict[str, object] = dataclass_field(default_factory=dict)
    configurations: tuple[str, ...] = ()
    shared_input: str | None = None
    # set by generator.audit.validate.followons once every finding is known: the one this finding follows from, or (on
    # that cause) the findings that follow from it
    caused_by: FindingRef | None = dataclass_field(default=None, metadata=OMIT_IF_NONE)
    follow_ons: FollowOns | None = dataclass_field(default=None, metadata=OMIT_IF_NONE)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dictionary (severity as its string value; the links only where there are any)."""
        data = asdict(self)
        data["severity"] = self.severity.value
        data["configurations"] = list(self.configurations)
        for key in _LINKS:
            if data[key] is None:
                del data[key]
        if self.follow_ons is not None:
            data["follow_ons"]["first"] = list(data["follow_ons"]["first"])
        return data

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


_UNSET = object()


def make_finding(code: str, severity: Severity, file: str, message: str, *, line: int | None = None,
                 field: str | None = None, claimed: object = None, recomputed: object = None, value: object = _UNSET,
                 rule: str | None = None, fix: str | None = None, extra: dict[str, object] | None = None,
                 configurations: tuple[str, ...] = ()) -> Finding:
    """The one builder of findings: `value` is the claimed value unless given, as most rules report it.

    `code` must be registered (generator.core.codes.registry): UnregisteredCode otherwise."""
    return Finding(code=registered(code), severity=severity, file=file, message=message, line=line, field=field,
                   value=claimed if value is _UNSET else value, rule=rule, fix=fix, claimed=claimed,
                   recomputed=recomputed, extra=dict(extra or {}), configurations=configurations)


def cell_text(value: object) -> str:
    """A claimed or recomputed value as the files write it: `true`, `false`, `(empty)` for an empty cell or an
    absent value, numbers and text as they are; never Python's `True` or `None`."""
    if value is None or value == "":
        return "(empty)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


# A finding that only follows from another one (a claimed cell contradicted because its evidence is missing)
# names that cause in extra[FOLLOWS_FROM], by code and file; generator.audit.validate.followons links it to that cause
# (caused_by), which the terminal, decision.json and the note name it under.
FOLLOWS_FROM = "follows_from"


def follows_from(code: str, file: str) -> dict[str, object]:
    """The `extra` of a finding that follows from the finding `code` on `file`."""
    return {FOLLOWS_FROM: {"code": code, "file": file}}


def sort_key(f: Finding) -> tuple[int, str, int, str, str]:
    """Deterministic order: errors first, then by file, line, field and code."""
    rank = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}[f.severity]
    return (rank, f.file, f.line or 0, f.field or "", f.code)


def count_by_severity(findings: list[Finding]) -> dict[str, int]:
    """Counts per severity, every severity present as a key."""
    counts = {s.value: 0 for s in Severity}
    for f in findings:
        counts[f.severity.value] += 1
    return counts
