"""The gate: an answer only from evidence without error findings, and only to the question as registered."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from generator.audit.load.findings import Finding
from generator.audit.recompute.decision.answer import REASON_REFS
from generator.audit.recompute.decision.model import (
    Configuration,
    Decision,
    Evidence,
    Excluded,
    FindingRef,
    RankEntry,
    Tie,
    Unpriced,
)
from generator.audit.recompute.evidence import attempts
from generator.audit.recompute.quality import seeds


def _refs_text(refs: Sequence[FindingRef]) -> str:
    shown = ", ".join(r.where() for r in refs[:REASON_REFS])
    return shown + (f" and {len(refs) - REASON_REFS} more" if len(refs) > REASON_REFS else "")


def evidence_reason(errors: Sequence[FindingRef]) -> str:
    """The reason a configuration with error findings is not admissible, naming their codes and lines."""
    return f"evidence has {len(errors)} error finding(s): {_refs_text(errors)}"


def with_evidence(configs: Sequence[Configuration], findings: list[Finding]) -> list[Configuration]:
    """Each configuration with the findings that concern it; one error makes it inadmissible."""
    out = []
    for c in configs:
        mine = [f for f in findings if c.id in f.configurations]
        errors = tuple(FindingRef.of(f) for f in mine if f.is_error)
        evidence = Evidence(errors=errors, warnings=tuple(FindingRef.of(f) for f in mine if not f.is_error))
        if errors:
            c = replace(c, admissible=False, reasons=(*c.reasons, evidence_reason(errors)))
        out.append(replace(c, evidence=evidence))
    return out


def _priced(c: Configuration) -> bool:
    """Whether the configuration's committed budget rests on a published price (the question asks for it)."""
    return c.committed_budget_usd_minor is not None and c.price_status == "published"


def _unpriced_reason(c: Configuration) -> str:
    if c.committed_budget_usd_minor is None:
        return f"no published price for {c.gpu} ({c.duration_days} days): the committed budget is undefined"
    return f"the price of {c.gpu} ({c.duration_days} days) is {c.price_status}, not published"


def _median(c: Configuration) -> float:
    median = c.timing.warm.median
    return median if median is not None else float("inf")


def _budget(c: Configuration) -> int:
    # Only priced configurations are sorted by budget; they all have one.
    return c.committed_budget_usd_minor if c.committed_budget_usd_minor is not None else 0


def _entry(c: Configuration) -> RankEntry:
    return RankEntry(configuration=c.id, committed_budget_usd_minor=c.committed_budget_usd_minor,
                     warm_median_seconds=c.timing.warm.median)


def _pairs(pairs: list[tuple[Configuration, Configuration]]) -> tuple[Tie, ...]:
    out = []
    for a, b in pairs:
        sep = attempts.separation(a.timing.warm, b.timing.warm)
        out.append(Tie(configurations=(a.id, b.id), timing_decides=sep.decides, reason=sep.reason))
    return tuple(out)


def _base(configs: Sequence[Configuration], reason: str) -> Decision:
    """No answer (callers replace the fields that give one); the configurations not admissible are excluded."""
    return Decision(answer=None, status="no-admissible", series_decides=None, ranking=(), time_ordering=(),
                    unpriced=(), ties=(), uncertainty=(), fix=None, shared_errors=(),
                    excluded=tuple(Excluded(configuration=c.id, reasons=c.reasons) for c in configs
                                   if not c.admissible),
                    reason=reason)


def withhold(configs: Sequence[Configuration], shared: list[Finding], *, unreadable: bool) -> Decision:
    """No answer: a shared input has an error (or could not be read), so no configuration can be chosen."""
    refs = tuple(FindingRef.of(f) for f in shared)
    inputs = ", ".join(sorted({f.shared_input or "campaign" for f in shared})) or "the campaign"
    reason = (f"no answer: {len(refs)} error finding(s) in shared inputs ({inputs}): {_refs_text(refs)}" if refs
              else "no answer: the protocol, the expected IDs, the reference or the raw results could not be read")
    if unreadable and refs:
        reason += "; nothing could be recomputed"
    return replace(_base(configs, reason), status="withheld", shared_errors=refs,
                 fix="correct the shared inputs named in the findings and run gpu-audit check again; every "
                     "configuration rests on them, so none can be chosen until then")


# The one reason given when no configuration rests on measured runs (issue 47: measured evidence is required).
UNMEASURED_REASON = "no answer: no configuration's runs were measured"


def measured(c: Configuration) -> bool:
    """Whether the configuration rests on a readable measurement of its own runs that dates them."""
    m = c.measurement
    return m is not None and any(p.get("started_at") and p.get("ended_at") for p in m.phases)


def unmeasured(configs: Sequence[Configuration], shared: list[Finding]) -> Decision:
    """No answer, for one plain reason: not one configuration's runs were measured (each one's findings say what
    is missing); the shared inputs' errors are still listed."""
    return replace(_base(configs, UNMEASURED_REASON),
                   status="withheld", shared_errors=tuple(FindingRef.of(f) for f in shared),
                   fix="no variant links a readable measurement JSON whose phases are dated: measure every "
                       "variant with `gpu-audit campaign run` or `gpu-audit measure run`, which date every phase, "
                       "name each file in its variant's `measurement` field, and run gpu-audit check again; the "
                       "Lab's `mesure_memoire.py measure` output measures its synthetic MLP and dates no phase")


def _unanswerable(configs: Sequence[Configuration], admissible: list[Configuration],
                  unpriced: tuple[Unpriced, ...]) -> Decision:
    """The registered question asks for the least committed budget: without a published price it has no
    answer. An order by time is still information, shown as what it is."""
    ordered = sorted(admissible, key=_median)
    gpus = ", ".join(sorted({c.gpu for c in admissible}))
    pairs = _pairs(list(zip(ordered, ordered[1:], strict=False)))
    return replace(_base(configs, f"cannot be answered: no published price for {gpus}; the question asks for the "
                                  "least committed budget"),
                 status="unanswerable", unpriced=unpriced, time_ordering=tuple(_entry(c) for c in ordered),
                 ties=pairs, series_decides=all(p.timing_decides for p in pairs),
                 fix="add the provider's published price for the rented package to the tariffs, or register a "
                     "question that does not rest on the price",
                 uncertainty=("the order by median warm time is not the answer to the registered question",))


def _answered(configs: Sequence[Configuration], priced: list[Configuration],
              unpriced: tuple[Unpriced, ...]) -> Decision:
    """The least committed budget; configurations tied on it are ordered by median warm time."""
    best = priced[0]
    tied = [c for c in priced[1:] if c.committed_budget_usd_minor == best.committed_budget_usd_minor]
    ties = _pairs([(best, other) for other in tied])
    apart = [t.configurations[1] for t in ties if t.timing_decides]
    close = [t for t in ties if not t.timing_decides]
    reason = "lowest committed budget among admissible configurations"
    if tied:
        reason += f"; tied on budget with {', '.join(c.id for c in tied)}, ordered by median warm time"
    if apart:
        reason += f"; the timing series separates it from {', '.join(apart)}"
    if close:
        reason += f"; the timing series does not separate it from {', '.join(t.configurations[1] for t in close)}"
    return replace(_base(configs, reason), answer=best.id, status="answered", unpriced=unpriced,
                 ranking=tuple(_entry(c) for c in priced), ties=ties, series_decides=not close,
                 uncertainty=tuple(f"{t.configurations[0]} and {t.configurations[1]} commit the same budget and "
                                   f"the timing series does not separate them ({t.reason})" for t in close))


def decide(configs: Sequence[Configuration], findings: list[Finding]) -> tuple[list[Configuration], Decision]:
    """The configurations with their evidence, and the decision from them and every attributed finding; whatever
    the decision, it lists every attempt set aside as excluded."""
    gated, decision = _decide(configs, findings)
    return gated, replace(decision, exclusions=attempts.exclusions(gated) or None)


def _decide(configs: Sequence[Configuration], findings: list[Finding]) -> tuple[list[Configuration], Decision]:
    gated = seeds.every_seed(with_evidence(configs, findings))
    shared = [f for f in findings if f.is_error and f.shared_input]
    if gated and not any(measured(c) for c in gated):
        return gated, unmeasured(gated, shared)
    if shared:
        return gated, withhold(gated, shared, unreadable=False)
    admissible = [c for c in gated if c.admissible]
    if not admissible:
        reasons = sorted({r for c in gated for r in c.reasons})
        return gated, replace(_base(gated, "no admissible configuration: "
                                    + ("; ".join(reasons) if reasons else "no runs")),
                              fix="see the reasons of each configuration and the findings")
    priced = sorted((c for c in admissible if _priced(c)), key=lambda c: (_budget(c), _median(c)))
    unpriced = tuple(Unpriced(configuration=c.id, reason=_unpriced_reason(c)) for c in admissible if not _priced(c))
    if not priced:
        return gated, _unanswerable(gated, admissible, unpriced)
    return gated, _answered(gated, priced, unpriced)

