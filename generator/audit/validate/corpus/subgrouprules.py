"""A subgroup's own rule against the corpus rule: which are looser, with their registered reasons, and the warning
when a looser one has none.

The seeds forbid lowering a threshold after the runs to let a configuration into the comparison: a subgroup may
still be judged by a looser rule of its own (few texts spread more), but only with a reason registered beside
it, and page 1 of the note shows every such rule, reason or not (generator.render.view.view reads `looser_rules`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.work import Subgroup
from generator.audit.validate.tariffrules import as_written, blank

__all__ = ["LooserRule", "is_looser", "looser_findings", "looser_rules"]

PROTOCOL_FILE = "protocol.json"
THRESHOLD, TOLERANCE = "threshold", "tolerance"
HIGHER_IS_BETTER = "higher_is_better"


@dataclass(frozen=True)
class LooserRule:
    """One part of a subgroup's own rule that is looser than the corpus rule's."""

    index: int  # the subgroup's position in /quality/subgroups
    subgroup: str
    part: str  # THRESHOLD or TOLERANCE
    value: float  # the subgroup's own
    main: float  # the corpus rule's
    reason: str | None  # the registered reason; None when there is none or it is blank

    @property
    def field(self) -> str:
        return f"/quality/subgroups/{self.index}/{self.part}"


def is_looser(part: str, value: float, main: float, direction: str) -> bool:
    """Whether a subgroup's threshold or tolerance accepts more than the main one: a larger tolerance always, a
    lower threshold when higher is better, a higher one when lower is better. Equal is not looser."""
    if part == TOLERANCE:
        return value > main
    return value < main if direction == HIGHER_IS_BETTER else value > main


def looser_rules(threshold: float, tolerance: float, direction: str,
                 subgroups: Sequence[Subgroup]) -> tuple[LooserRule, ...]:
    """Every subgroup threshold and tolerance looser than the main rule's, in protocol order."""
    out = []
    for i, group in enumerate(subgroups):
        reason = None if blank(group.reason) else group.reason
        for part, value, main in ((THRESHOLD, group.threshold, threshold), (TOLERANCE, group.tolerance, tolerance)):
            if value is not None and is_looser(part, value, main, direction):
                out.append(LooserRule(i, group.id, part, value, main, reason))
    return tuple(out)


def looser_findings(protocol: Protocol) -> list[Finding]:
    """A warning for each looser subgroup threshold or tolerance without a registered reason (a blank one is
    none): the subgroup's value claimed, the main rule's recomputed."""
    q = protocol.quality
    out = []
    for rule in looser_rules(q.threshold, q.tolerance, q.direction, q.subgroups):
        if rule.reason is not None:
            continue
        written = q.subgroups[rule.index].reason
        why = ("no reason is registered" if written is None
               else f"its reason {as_written(written)!r} is blank (white space and invisible characters only)")
        worse = (("a larger tolerance accepts runs further below the reference" if rule.part == TOLERANCE
                  else "a lower threshold accepts worse runs") if q.direction == HIGHER_IS_BETTER
                 else ("a larger tolerance accepts runs further above the reference" if rule.part == TOLERANCE
                       else "a higher threshold accepts worse runs"))
        out.append(make_finding(
            "subgroup-rule-looser-unexplained", Severity.WARNING, PROTOCOL_FILE,
            f"the {rule.subgroup} subgroup's own {rule.part} {rule.value} is looser than the corpus rule's "
            f"{rule.main} ({q.direction.replace('_', ' ')}: {worse}), and {why}",
            field=rule.field, claimed=rule.value, recomputed=rule.main,
            rule="a subgroup's own threshold or tolerance looser than the corpus rule needs a reason registered "
                 "before the runs: a rule loosened afterwards lets a configuration into the comparison unseen",
            fix=f"register why the {rule.subgroup} subgroup needs a looser rule in /quality/subgroups/{rule.index}"
                "/reason (for example the bootstrap spread of the reference on its tuning texts) before the runs, "
                "or judge it by the corpus rule; page 1 of the note shows the looser rule either way"))
    return out
