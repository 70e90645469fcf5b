"""The gate: an answer only from evidence without error findings, and only to the question as registered."""

from __future__ import annotations

from typing import Any

from generator.audit.findings import Finding
from generator.audit.recompute import timing

# Findings listed per configuration in its reasons; the rest are counted.
REASON_REFS = 5


def _ref(f: Finding) -> dict[str, Any]:
    return {"code": f.code, "severity": f.severity.value, "file": f.file, "line": f.line, "field": f.field}


def _where(ref: dict[str, Any]) -> str:
    return f"{ref['code']} at {ref['file']}" + (f":{ref['line']}" if ref["line"] is not None else "") \
        + (f" ({ref['field']})" if ref["field"] else "")


def _refs_text(refs: list[dict[str, Any]]) -> str:
    shown = ", ".join(_where(r) for r in refs[:REASON_REFS])
    return shown + (f" and {len(refs) - REASON_REFS} more" if len(refs) > REASON_REFS else "")


def evidence_reason(errors: list[dict[str, Any]]) -> str:
    """The reason a configuration with error findings is not admissible, naming their codes and lines."""
    return f"evidence has {len(errors)} error finding(s): {_refs_text(errors)}"


def apply_findings(configs: list[dict[str, Any]], findings: list[Finding]) -> None:
    """Give each configuration the findings that concern it; one error makes it inadmissible."""
    for c in configs:
        mine = [f for f in findings if c["id"] in f.configurations]
        errors = [_ref(f) for f in mine if f.is_error]
        c["evidence"] = {"errors": errors, "warnings": [_ref(f) for f in mine if not f.is_error]}
        if errors:
            c["admissible"] = False
            c["reasons"] = [*c["reasons"], evidence_reason(errors)]


def _priced(c: dict[str, Any]) -> bool:
    """Whether the configuration's committed budget rests on a published price (the question asks for it)."""
    return c["committed_budget_usd_minor"] is not None and c.get("price_status") == "published"


def _unpriced_reason(c: dict[str, Any]) -> str:
    if c["committed_budget_usd_minor"] is None:
        return f"no published price for {c['gpu']} ({c.get('duration_days')} days): the committed budget is undefined"
    return f"the price of {c['gpu']} ({c.get('duration_days')} days) is {c.get('price_status')}, not published"


def _median(c: dict[str, Any]) -> float:
    median = c["timing"]["warm"]["median"]
    return median if median is not None else float("inf")


def _entry(c: dict[str, Any]) -> dict[str, Any]:
    return {"configuration": c["id"], "committed_budget_usd_minor": c["committed_budget_usd_minor"],
            "warm_median_seconds": c["timing"]["warm"]["median"]}


def _pairs(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for a, b in pairs:
        sep = timing.separation(a["timing"]["warm"], b["timing"]["warm"])
        out.append({"configurations": [a["id"], b["id"]], "timing_decides": sep["decides"], "reason": sep["reason"]})
    return out


def _base(configs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"answer": None, "status": "no-admissible", "series_decides": None, "ranking": [], "time_ordering": [],
            "unpriced": [], "ties": [], "uncertainty": [], "fix": None, "shared_errors": [],
            "excluded": [{"configuration": c["id"], "reasons": c["reasons"]} for c in configs if not c["admissible"]]}


def withheld(configs: list[dict[str, Any]], shared: list[Finding], *, unreadable: bool = False) -> dict[str, Any]:
    """No answer: a shared input has an error (or could not be read), so no configuration can be chosen."""
    out = _base(configs)
    refs = [_ref(f) for f in shared]
    inputs = ", ".join(sorted({f.shared_input or "campaign" for f in shared})) or "the campaign"
    out.update(status="withheld", shared_errors=refs,
               reason=(f"no answer: {len(refs)} error finding(s) in shared inputs ({inputs}): {_refs_text(refs)}"
                       if refs else "no answer: the protocol, the expected IDs, the reference or the raw results "
                                    "could not be read"),
               fix="correct the shared inputs named in the findings and run gpu-audit check again; every "
                   "configuration rests on them, so none can be chosen until then")
    if unreadable and refs:
        out["reason"] += "; nothing could be recomputed"
    return out


def gate(configs: list[dict[str, Any]], findings: list[Finding]) -> dict[str, Any]:
    """The decision from recomputed configurations and every attributed finding (configs gain their evidence)."""
    apply_findings(configs, findings)
    shared = [f for f in findings if f.is_error and f.shared_input]
    if shared:
        return withheld(configs, shared)
    out = _base(configs)
    admissible = [c for c in configs if c["admissible"]]
    if not admissible:
        reasons = sorted({r for c in configs for r in c["reasons"]})
        out["reason"] = "no admissible configuration: " + ("; ".join(reasons) if reasons else "no runs")
        out["fix"] = "see the reasons of each configuration and the findings"
        return out
    priced = sorted((c for c in admissible if _priced(c)), key=lambda c: (c["committed_budget_usd_minor"], _median(c)))
    out["unpriced"] = [{"configuration": c["id"], "reason": _unpriced_reason(c)} for c in admissible if not _priced(c)]
    if not priced:
        # The registered question asks for the least committed budget: without a published price it has no
        # answer. An order by time is still information, shown as what it is.
        ordered = sorted(admissible, key=_median)
        gpus = ", ".join(sorted({c["gpu"] for c in admissible}))
        pairs = _pairs(list(zip(ordered, ordered[1:])))
        out.update(status="unanswerable", time_ordering=[_entry(c) for c in ordered], ties=pairs,
                   series_decides=all(p["timing_decides"] for p in pairs),
                   reason=f"cannot be answered: no published price for {gpus}; the question asks for the least "
                          "committed budget",
                   fix="add the provider's published price for the rented package to the tariffs, or register a "
                       "question that does not rest on the price",
                   uncertainty=["the order by median warm time is not the answer to the registered question"])
        return out
    best = priced[0]
    tied = [c for c in priced[1:] if c["committed_budget_usd_minor"] == best["committed_budget_usd_minor"]]
    ties = _pairs([(best, other) for other in tied])
    apart = [t["configurations"][1] for t in ties if t["timing_decides"]]
    close = [t for t in ties if not t["timing_decides"]]
    reason = "lowest committed budget among admissible configurations"
    if tied:
        reason += f"; tied on budget with {', '.join(c['id'] for c in tied)}, ordered by median warm time"
    if apart:
        reason += f"; the timing series separates it from {', '.join(apart)}"
    if close:
        reason += f"; the timing series does not separate it from {', '.join(t['configurations'][1] for t in close)}"
    out.update(answer=best["id"], status="answered", ranking=[_entry(c) for c in priced], ties=ties,
               series_decides=not close, reason=reason,
               uncertainty=[f"{t['configurations'][0]} and {t['configurations'][1]} commit the same budget and the "
                            f"timing series does not separate them ({t['reason']})" for t in close])
    return out
