"""The registry of every finding and problem code: severity, what it concerns, its rule, seed and default fix.

Standard library only: `verify` checks its problem codes here and must stay light. The rows live in `audit` (the
findings of `validate` and `check`) and `verify` (verify's problems and the invoice check's findings), the seeds in
`seeds`; each imports the type from `code`, and only this module imports them: `python -m generator.core.codes.registry`
prints docs/findings.md.
"""

from __future__ import annotations

from generator.core.codes.audit import AUDIT
from generator.core.codes.code import Code, UnregisteredCode, table
from generator.core.codes.seeds import SEEDS
from generator.core.codes.verify import INVOICE_CODES, VERIFY


def _tables() -> tuple[dict[str, Code], dict[str, Code], dict[str, Code]]:
    return table(AUDIT, SEEDS), table(VERIFY, {}), table(INVOICE_CODES, {})


# Three tables, one per kind of record: a code means one thing within its table (verify's `missing-file` is a
# file the signed manifest lists, the audit's one a file the protocol names).
FINDINGS, PROBLEMS, INVOICE_FINDINGS = _tables()
TABLES = {"finding": FINDINGS, "problem": PROBLEMS, "invoice finding": INVOICE_FINDINGS}


def registered(code: str, kind: str = "finding") -> str:
    """`code` itself, once it is known to be registered in the table of `kind` (a key of TABLES)."""
    if code not in TABLES[kind]:
        raise UnregisteredCode(f"{code!r} is not a registered {kind} code (generator/core/codes/)")
    return code


_SECTIONS = (("Findings of `validate` and `check`", "finding"), ("Problems of `verify`", "problem"),
             ("Findings of `invoice check`", "invoice finding"))


def _cell(text: str | None) -> str:
    return "" if text is None else text.replace("|", "\\|").replace("\n", " ")


def markdown() -> str:
    """docs/findings.md: every registered code, one table per command family, in the order of the code."""
    lines = ["# Findings and problems", "",
             "Every code gpu-audit reports, generated from its registry (`python -m generator.core.codes.registry >",
             "docs/findings.md`; a test keeps the two equal). *Severity* is blank where the caller sets it (a",
             "format problem is an error in a shared input and a warning in a prediction file, say); *concerns*",
             "is what an error withholds: one configuration, the whole decision (a shared input), whichever the",
             "file read belongs to, a bundle, or an invoice. *Seed* cites the seed documents the rule comes from",
             "(000/001/002 the protocol, 003 the provider's article, 004 the Lab's README).", ""]
    for title, kind in _SECTIONS:
        lines += [f"## {title}", "", "| code | severity | concerns | rule | default fix | seed |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for code in sorted(TABLES[kind]):
            row = TABLES[kind][code]
            lines.append(f"| `{code}` | {row.severity or ''} | {row.concerns} | {_cell(row.rule)} | {_cell(row.fix)} "
                         f"| {_cell(row.seed)} |")
        lines.append("")
    lines.append(f"{sum(map(len, TABLES.values()))} codes.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
