"""One code of the registry: its record (`Code`), the severities, what a code concerns, and a table of them.

Standard library only, and it imports no list of codes: the lists (`audit`, `verify`, `seeds`) import it, and the
registry (`registry`) imports them, one way.
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


def table(rows: tuple[Code, ...], seeds: dict[str, str]) -> dict[str, Code]:
    """The rows by code, each with its seed; a code registered twice, or a seed of no code, is refused."""
    table: dict[str, Code] = {}
    for row in rows:
        if row.code in table:
            raise ValueError(f"code {row.code} is registered twice")
        seed = seeds.get(row.code)
        table[row.code] = row if seed is None else Code(row.code, row.severity, row.concerns, row.rule, row.fix, seed)
    if set(seeds) - set(table):
        raise ValueError(f"seeds of unregistered codes: {sorted(set(seeds) - set(table))}")
    return table
