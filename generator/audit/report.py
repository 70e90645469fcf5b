"""Plain-text and JSON presentation of findings: every finding message is made here."""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal

from generator.audit.load.findings import FIRST_FOLLOW_ONS, Finding, cell_text, count_by_severity
from generator.audit.load.textsafety import terminal_safe
from generator.audit.recompute.decision.model import CorpusFingerprint, Coverage, DecisionDocument, RegistrationStatus
from generator.audit.validate import followons
from generator.audit.validate.corpus.subgrouprules import looser_rules
from generator.core.instants import is_date
from generator.core.jsonvalue import JsonDocument
from generator.core.money import usd_amount
from generator.core.termtext import counted, escape_terminal


def location(f: Finding) -> str:
    """`file:line: field` as far as known; the names escaped (a name is one line: a CR in it is shown, not applied)."""
    where = escape_terminal(f.file)
    if f.line is not None:
        where += f":{f.line}"
    if f.field:
        where += f": {escape_terminal(f.field)}"
    return where


def _values(f: Finding) -> str | None:
    """`claimed: true; recomputed: false`, as the files write values; a value nothing recomputes is left out."""
    if f.claimed is None and f.recomputed is None:
        return None
    if f.recomputed is None:
        return f"  claimed: {escape_terminal(cell_text(f.claimed))}"
    return f"  claimed: {escape_terminal(cell_text(f.claimed))}; recomputed: {escape_terminal(cell_text(f.recomputed))}"


def format_finding(f: Finding, indent: str = "") -> str:
    """One finding as two to four lines: where, what, the rule and the fix."""
    # One line, whatever the message quotes.
    lines = [f"{location(f)}: {escape_terminal(f.message)} [{f.severity.value} {f.code}]"]
    values = _values(f)
    if values:
        lines.append(values)
    if f.rule:
        lines.append(f"  rule: {f.rule}")
    if f.fix:
        lines.append(f"  fix: {f.fix}")
    # Input text reaches the terminal here: a bidirectional control or an escape sequence in a cell would
    # rewrite what the reader sees, so they are shown as <U+202E> instead.
    return terminal_safe("\n".join(indent + line for line in lines))


def _follow_on_lines(cause: Finding, follow: Sequence[Finding]) -> list[str]:
    """Under a cause: how many findings follow from it, the first FIRST_FOLLOW_ONS of them in one line each, and
    where the rest are."""
    n = len(follow)
    head = (f"  {counted(n, 'further finding')} {'follows' if n == 1 else 'follow'} from it (fix it first)"
            + (":" if n <= FIRST_FOLLOW_ONS else f"; the first {FIRST_FOLLOW_ONS}:"))
    lines = [head] + [terminal_safe(f"    {location(f)}: {escape_terminal(f.message)} [{f.severity.value} {f.code}]")
                      for f in follow[:FIRST_FOLLOW_ONS]]
    if n > FIRST_FOLLOW_ONS:
        lines.append(f"    ... and {n - FIRST_FOLLOW_ONS} more (--json lists each, its caused_by naming "
                     f"{cause.code})")
    return lines


def summary(findings: Sequence[Finding]) -> str:
    """`N errors, N warnings, N info`; the findings that follow from another one are counted apart in each
    severity: `1 error (+36 that follow from it)`. Every finding counts: the exit status rests on the total."""
    parts = []
    for severity, word in (("error", "error"), ("warning", "warning"), ("info", "")):
        mine = [f for f in findings if f.severity.value == severity]
        follow = [f for f in mine if f.caused_by is not None]
        text = counted(len(mine) - len(follow), word) if word else f"{len(mine) - len(follow)} info"
        if follow:
            causes = {f.caused_by for f in follow}
            text += (f" (+{len(follow)} that {'follows' if len(follow) == 1 else 'follow'} from "
                     f"{'it' if len(causes) == 1 else 'them'})")
        parts.append(text)
    return ", ".join(parts)


def format_findings(findings: Sequence[Finding], *, subject: str, max_findings: int) -> str:
    """The findings up to the cap, each cause with the findings that follow from it under it (the first few),
    then the count of the rest and a summary line."""
    findings = followons.link(findings)  # the causes rules name, where no check linked them yet
    top = [f for f in findings if f.caused_by is None]
    parts: list[str] = []
    for f in top[:max_findings]:
        parts.append(format_finding(f))
        if f.follow_ons is not None:
            parts.extend(_follow_on_lines(f, followons.follow_ons_of(f, findings)))
    rest = top[max_findings:]
    if rest:
        hidden = len(rest) + sum(f.follow_ons.count for f in rest if f.follow_ons is not None)
        parts.append(f"... and {hidden} more findings not listed (raise --max-findings to list them)")
    parts.append(f"{escape_terminal(subject)}: {summary(findings)}")
    return "\n".join(parts)


def findings_payload(findings: Sequence[Finding], max_findings: int) -> dict[str, object]:
    """The JSON form: counts over all findings, the first `max_findings` listed."""
    return {
        "counts": count_by_severity(list(findings)),
        "total": len(findings),
        "listed": min(len(findings), max_findings),
        "findings": [f.to_dict() for f in findings[:max_findings]],
    }


def json_safe(text: str) -> str:
    """JSON text whose invisible and control characters are \\u escapes: the same data once parsed, but a
    terminal showing it applies none of them (json.dumps leaves U+202E, DEL and the C1 controls raw)."""
    return terminal_safe(text, "\\u{:04x}")


def findings_to_json(findings: Sequence[Finding], max_findings: int) -> str:
    """Findings as indented, key-sorted JSON."""
    return json_safe(json.dumps(findings_payload(findings, max_findings), indent=2, sort_keys=True,
                                ensure_ascii=False, default=str))


def _usd(cents: object) -> str:
    return "undefined" if cents is None else f"{usd_amount(int(str(cents)))} USD"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f} s"


def _alerts(decision: DecisionDocument) -> list[str]:
    """What the figures are not: generated, or a test run (every configuration on one: no decision); and each
    subgroup rule looser than the corpus rule, with its registered reason."""
    lines = []
    if decision.campaign is not None and decision.campaign.synthetic_data:
        lines.append("SYNTHETIC DATA: this campaign's figures were generated, not measured.")
    configs = decision.configurations
    if configs and all(c.test_run for c in configs):
        lines.append("TEST RUN: NO DECISION: every configuration rests on a test run (campaign run "
                     "--allow-cpu-for-tests, or a run on the CPU); no rented GPU was measured.")
    rule = decision.rule
    for r in looser_rules(rule.threshold, rule.tolerance, rule.direction, rule.subgroups or ()) if rule else ():
        lines.append(f"LOOSER SUBGROUP RULE: {r.subgroup} {r.part} {r.value} (corpus rule {r.main}); "
                     + (f"reason registered: {r.reason}" if r.reason else "no reason registered"))
    return lines


_REVISION_CHECKS = {"matches": "the revision carries it", "differs": "the revision carries another one: an error",
                    "absent": "the revision carries none: recorded as written, not tied to these files",
                    "unchecked": "not checked"}


def _fingerprint_line(k: CorpusFingerprint) -> str:
    """A corpus's content fingerprint and what its revision says of it (generator.audit.validate.corpus.corpusprint)."""
    if k.fingerprint is None:
        return f"Corpus {k.revision}: no content fingerprint (its expected IDs and reference labels are not sound)"
    return f"Corpus {k.revision}: content fingerprint {k.fingerprint} ({_REVISION_CHECKS[k.revision_check]})"
def registration_line(r: RegistrationStatus) -> str:
    """The registration's status in one line: who sealed, and when the authority says (trusted or not)."""
    signer = "" if r.signer is None else f"; signed by {escape_terminal(r.signer.subject)} (SHA-256 {r.signer.sha256})"
    if r.status == "sealed-time-stamped" and r.authority is not None:
        trust = "" if r.authority.trusted else "; time stated by an unchecked authority"
        return (f"sealed and time-stamped by {escape_terminal(r.authority.subject)} (SHA-256 {r.authority.sha256}) "
                f"at {r.time}{trust}{signer}")
    if r.status == "sealed-time-not-proven":
        return f"sealed, time not proven (no time-stamp token: the seal proves who registered what, not when){signer}"
    if r.status == "seal-broken":
        return ("SEAL BROKEN: the registration's seal does not verify, or its files changed after registration (see "
                "the errors)")
    return "declared, not sealed: registered_at and the protocol's rules are the campaign's word"


def format_decision(decision: DecisionDocument) -> str:
    """The decision as the terminal shows it: answer first, then one line per configuration."""
    d = decision.decision
    lines = _alerts(decision)
    campaign = decision.campaign
    if campaign is not None:
        lines.append(f"Question: {campaign.question}")
        lines.extend(_fingerprint_line(k) for k in campaign.fingerprints or ())
    if decision.registration is not None:
        lines.append(f"Registration: {registration_line(decision.registration)}")
    by_id = {c.id: c for c in decision.configurations}
    if d.answer:
        chosen = by_id[d.answer]
        per = chosen.cost_per_accepted_result
        lines.append(f"Answer: {d.answer} ({d.reason})")
        lines.append(f"Committed budget: {_usd(chosen.committed_budget_usd_minor)}; cost per accepted result: "
                     + (f"{_usd_decimal(per.usd_minor)}" if per.usd_minor is not None
                        else f"undefined ({per.undefined_reason})"))
        package = next((e.package for e in decision.experiments if e.id == chosen.experiment_id), None)
        if package is not None:
            lines.append("  price: " + price_origin(package.price_source, package.price_source_detail,
                                                    package.price_status, package.snapshot_date))
    else:
        lines.append(f"Answer: none ({d.reason})")
        if d.fix:
            lines.append(f"  to get an answer: {d.fix}")
    if d.time_ordering:
        lines.append("Order by median warm time (not the answer): "
                     + ", ".join(f"{e.configuration} {_seconds(e.warm_median_seconds)}" for e in d.time_ordering))
    if d.series_decides is not None:
        lines.append(f"Series decides: {'yes' if d.series_decides else 'no'}")
    for note in d.uncertainty:
        lines.append(f"  uncertainty: {note}")
    for e in d.exclusions or ():
        lines.append(f"  excluded attempt: {e.configuration} {e.phase} {e.run_index} (line {e.line}), "
                     f"cause={escape_terminal(str(e.cause or ''))}")
    w = decision.window
    if w:
        covering = (f"smallest covering package: {w.smallest_covering_days} days" if w.smallest_covering_days
                    else f"longer than 30 days: {counted(w.extra_30_day_periods or 0, 'extra 30-day period')}")
        lines.append(f"Window: {w.start} to {w.end} {w.timezone} = {w.hours} h; {covering}; "
                     f"deadline {w.deadline}{' (the end of that day)' if is_date(w.deadline) else ''} "
                     f"({'met' if w.ends_before_deadline else 'NOT met'})")
    if decision.configurations:
        lines.append("Configurations:")
    for c in decision.configurations:
        t = c.timing.warm
        verdict = "admissible" if c.admissible else "not admissible: " + "; ".join(c.reasons)
        lines.append(f"  {c.id}: warm {t.successes} ok / {t.failures} failed, median {_seconds(t.median)} "
                     f"(min {_seconds(t.min)}, max {_seconds(t.max)}); budget "
                     f"{_usd(c.committed_budget_usd_minor)}; {verdict}")
        if c.resume is not None:
            resumed = counted(c.resume.resumed, "interrupted attempt")
            lines.append(f"    resume variant of {c.resume.of}: {resumed} resumed, "
                         f"their {_seconds(c.resume.interrupted_seconds)} until the interruption counted")
        warnings = c.evidence.warnings if c.evidence is not None else ()
        if warnings:
            lines.append(f"    {counted(len(warnings), 'warning')}: " + ", ".join(sorted({w.code for w in warnings})))
    return terminal_safe("\n".join(lines))  # the question and the reasons are input text: see format_finding


def price_origin(source: object, detail: object, status: object, date: object, where: str = "this campaign") -> str:
    """Where a package's price comes from (validate.tariffrules), in the words of the note: only the snapshot
    gpu-audit ships is a catalogue; a price the campaign's own files vouch for is stated, not authenticated."""
    if source == "catalogue":
        return f"published, catalogue snapshot of {date}"
    if source == "provider":
        support = "its tariffs file, listed by the Lab MANIFEST.json it carries" if detail == "lab-manifest" \
            else f"source: {detail}"
        return f"provider price as stated in {where} ({support}; {date}), not authenticated: only gpu-audit " \
               "invoice check against the provider's invoice confirms it"
    if status:
        return f"{status}, not a price this decision can use ({date})"
    return "no price in the tariffs"


def _usd_decimal(cents: str) -> str:
    """A cents amount held as a decimal string (a cost per result) in USD."""
    return f"{usd_amount(Decimal(cents))} USD"


def format_quote(q: JsonDocument) -> str:
    """The `cost` command's answer (cost.quote), in the Lab's words."""
    gpus = q["gpus"]
    lines = [f"{q['gpu']} ({q['model_name']}), {q['duration_days']} days x {counted(q['lots'], 'lot')} of "
             f"{counted(q['gpus_per_lot'], 'GPU')} = {counted(gpus, 'GPU')}: total {_usd(q['total_usd_minor'])} "
             f"({q['total_usd_minor']} cents; "
             f"{q['price_per_lot_usd_minor']} cents per lot)",
             "price: " + price_origin(q["price_source"], q["price_source_detail"], q["price_status"],
                                      q["snapshot_date"], "the tariffs file")]
    per = q["per_result"]
    usd_minor = per.get("usd_minor") if isinstance(per, dict) else None
    if q["accepted_results"] is None:
        lines.append("cost per accepted result: not computed (give --accepted-results with the number of distinct "
                     "accepted results)")
    else:
        lines.append(f"cost per accepted result: {_usd_decimal(str(usd_minor))} over "
                     f"{counted(q['accepted_results'], 'distinct accepted result')}; the whole package counts, "
                     "even if part of it is unused")
    return "\n".join(lines)


def format_window(w: Coverage) -> str:
    """Which packages cover a window."""
    lines = [f"window: {w.hours} h"]
    for p in w.packages:
        lines.append(f"  {p.days}-day package ({p.hours} h): {'covers' if p.covers else 'does not cover'}")
    if w.smallest_covering_days:
        lines.append(f"smallest covering package: {w.smallest_covering_days} days")
    else:
        extra = counted(w.extra_30_day_periods or 0, "extra 30-day period")
        lines.append(f"no package covers it: {extra} needed beyond one 30-day package (never extended automatically)")
    return "\n".join(lines)
