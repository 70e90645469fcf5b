"""Plain-text and JSON presentation of findings: every finding message is made here."""

from __future__ import annotations

import json
from typing import Any, Sequence

from generator.findings import Finding, count_by_severity


def location(f: Finding) -> str:
    """`file:line: field` as far as known."""
    where = f.file
    if f.line is not None:
        where += f":{f.line}"
    if f.field:
        where += f": {f.field}"
    return where


def format_finding(f: Finding) -> str:
    """One finding as two to four lines: where, what, the rule and the fix."""
    lines = [f"{location(f)}: {f.message} [{f.severity.value} {f.code}]"]
    if f.claimed is not None or f.recomputed is not None:
        lines.append(f"  claimed: {f.claimed!r}; recomputed: {f.recomputed!r}")
    if f.rule:
        lines.append(f"  rule: {f.rule}")
    if f.fix:
        lines.append(f"  fix: {f.fix}")
    return "\n".join(lines)


def summary(findings: Sequence[Finding]) -> str:
    """`N errors, N warnings, N info`."""
    c = count_by_severity(list(findings))
    return f"{c['error']} errors, {c['warning']} warnings, {c['info']} info"


def format_findings(findings: Sequence[Finding], *, subject: str, max_findings: int) -> str:
    """All findings up to the cap, then the count of the rest and a summary line."""
    shown = list(findings[:max_findings])
    parts = [format_finding(f) for f in shown]
    rest = len(findings) - len(shown)
    if rest > 0:
        parts.append(f"... and {rest} more findings not listed (raise --max-findings to list them)")
    parts.append(f"{subject}: {summary(findings)}")
    return "\n".join(parts)


def findings_payload(findings: Sequence[Finding], max_findings: int) -> dict[str, Any]:
    """The JSON form: counts over all findings, the first `max_findings` listed."""
    return {
        "counts": count_by_severity(list(findings)),
        "total": len(findings),
        "listed": min(len(findings), max_findings),
        "findings": [f.to_dict() for f in findings[:max_findings]],
    }


def findings_to_json(findings: Sequence[Finding], max_findings: int) -> str:
    """Findings as indented, key-sorted JSON."""
    return json.dumps(findings_payload(findings, max_findings), indent=2, sort_keys=True, ensure_ascii=False, default=str)
