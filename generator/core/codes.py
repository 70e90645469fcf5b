"""The registry of every finding and problem code: severity, what it concerns, its rule, seed and default fix.

Standard library only: `verify` checks its problem codes here and must stay light. The rows live in
`codes_audit` (the findings of `validate` and `check`) and `codes_verify` (verify's problems and the invoice
check's findings); `python -m generator.core.codes` prints docs/findings.md from them.
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR, WARNING, INFO = "error", "warning", "info"
# What a code concerns: a configuration's own evidence (grid rows, its prediction and measurement files), a
# shared input the whole decision rests on (protocol, expected IDs, reference, tariffs), whichever the file
# read belongs to (the readers' format codes), a bundle or note under `verify`, or an invoice.
CONFIGURATION = "configuration"
SHARED = "shared input"
FILE = "the file's owner"
BUNDLE = "bundle"
INVOICE = "invoice"
CONCERNS = (CONFIGURATION, SHARED, FILE, BUNDLE, INVOICE)


@dataclass(frozen=True)
class Code:
    """One row of the table. `severity` None: the caller sets it (by the file read, or by the run's outcome)."""

    code: str
    severity: str | None
    concerns: str
    rule: str
    fix: str | None = None
    seed: str | None = None

    def __post_init__(self) -> None:
        if self.severity not in (ERROR, WARNING, INFO, None) or self.concerns not in CONCERNS:
            raise ValueError(f"code {self.code}: severity {self.severity!r} or concerns {self.concerns!r} unknown")


class UnregisteredCode(ValueError):
    """A finding or problem built with a code the registry does not hold: a programming error, never input's."""


def _table(rows: tuple[Code, ...], seeds: dict[str, str]) -> dict[str, Code]:
    table: dict[str, Code] = {}
    for row in rows:
        if row.code in table:
            raise ValueError(f"code {row.code} is registered twice")
        seed = seeds.get(row.code)
        table[row.code] = row if seed is None else Code(row.code, row.severity, row.concerns, row.rule, row.fix, seed)
    if set(seeds) - set(table):
        raise ValueError(f"seeds of unregistered codes: {sorted(set(seeds) - set(table))}")
    return table


def _tables() -> tuple[dict[str, Code], dict[str, Code], dict[str, Code]]:
    from generator.core.codes_audit import AUDIT
    from generator.core.codes_seeds import SEEDS
    from generator.core.codes_verify import INVOICE_CODES, VERIFY

    return _table(AUDIT, SEEDS), _table(VERIFY, {}), _table(INVOICE_CODES, {})


if __name__ == "__main__":  # run as a script, this module is not generator.core.codes: print that one's table
    from generator.core.codes import markdown as _markdown

    print(_markdown(), end="")
    raise SystemExit(0)
# Three tables, one per kind of record: a code means one thing within its table (verify's `missing-file` is a
# file the signed manifest lists, the audit's one a file the protocol names).
FINDINGS, PROBLEMS, INVOICE_FINDINGS = _tables()
TABLES = {"finding": FINDINGS, "problem": PROBLEMS, "invoice finding": INVOICE_FINDINGS}


def registered(code: str, kind: str = "finding") -> str:
    """`code` itself, once it is known to be registered in the table of `kind` (a key of TABLES)."""
    if code not in TABLES[kind]:
        raise UnregisteredCode(f"{code!r} is not a registered {kind} code (generator/core/codes_*.py)")
    return code


_SECTIONS = (("Findings of `validate` and `check`", "finding"), ("Problems of `verify`", "problem"),
             ("Findings of `invoice check`", "invoice finding"))


def _cell(text: str | None) -> str:
    return "" if text is None else text.replace("|", "\\|").replace("\n", " ")


def markdown() -> str:
    """docs/findings.md: every registered code, one table per command family, in the order of the code."""
    lines = ["# Findings and problems", "",
             "Every code gpu-audit reports, generated from its registry (`python -m generator.core.codes >",
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

