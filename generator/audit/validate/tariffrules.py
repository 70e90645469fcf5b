"""The one tariff rule `check`, `build` and `cost` apply: where a price comes from, and what a tariffs file owes it.

A price comes from the catalogue snapshot gpu-audit ships (`generator/data/published-tariffs.csv`: a row for one
of its keys is that price, unchanged; the only prices called "catalogue"), from the provider as stated in the
campaign (a `published` row for any other key, with its support: a named quote or page in the `source` column, or
the Lab archive's MANIFEST.json in the campaign listing the whole tariffs file), or it is illustrative and never
commits a budget. Whatever supports a provider's price travels inside the campaign: it is the campaign's own
statement, not an authenticated price (`gpu-audit invoice check` against the provider's invoice confirms it). A
`published` row that is none of these is an error: gpu-audit never takes a price on the word "published" alone.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from generator.audit.load.findings import Finding, Severity, follows_from, make_finding
from generator.audit.load.inputs.rows import TariffRow

CATALOGUE, PROVIDER, ILLUSTRATIVE = "catalogue", "provider", "illustrative"
LAB_MANIFEST = "lab-manifest"  # the support of a provider price whose tariffs file a Lab manifest lists
PRICE_COLUMNS = ("price_per_lot_usd_minor", "gpus_per_lot", "snapshot_date")
E = Severity.ERROR
# Characters that show nothing: whitespace, controls, format characters (U+200B, U+FEFF, ...), separators,
# and the default-ignorable fillers and selectors a cell can hold instead of a word.
_BLANK_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
_BLANK_OTHERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
                          + "".join(chr(c) for c in range(0xFE00, 0xFE10)))


@dataclass(frozen=True)
class Price:
    """One tariff row's terms, whatever the file's representation."""

    gpu: str
    duration_days: int
    price_per_lot_usd_minor: int
    gpus_per_lot: int
    snapshot_date: str
    price_status: str
    source: str | None = None

    def terms(self, column: str) -> int | str:
        """The value of one of PRICE_COLUMNS."""
        value: int | str = getattr(self, column)
        return value


@dataclass(frozen=True)
class ManifestProof:
    """The tariffs file against the Lab archive's manifest the campaign carries: whether the manifest has the Lab's
    structure and lists this very file, itself of the Lab's structure (a statement that holds together, which
    supports a provider price as stated in the campaign; it authenticates nothing)."""

    stands: bool
    cause: tuple[str, str] | None = None  # (code, file) of the first finding that keeps it from standing


def blank(text: str | None) -> bool:
    """Whether a cell names nothing: empty, or only whitespace and characters that show nothing."""
    return text is None or all(c.isspace() or c in _BLANK_OTHERS or unicodedata.category(c) in _BLANK_CATEGORIES
                               for c in text)


def as_written(text: str) -> str:
    """A blank cell as the file writes it, every character but the plain space shown as `<U+00A0>`."""
    return "".join(c if c == " " else f"<U+{ord(c):04X}>" for c in text)


def price_of(row: TariffRow) -> Price | None:
    """A tariff row's terms; None when one is missing (the schema's finding already)."""
    if row.gpu is None or row.duration_days is None or row.price_per_lot_usd_minor is None \
            or row.gpus_per_lot is None or row.snapshot_date is None or row.price_status is None:
        return None
    return Price(row.gpu, row.duration_days, row.price_per_lot_usd_minor, row.gpus_per_lot, row.snapshot_date,
                 row.price_status, row.source)


def published_catalogue() -> dict[tuple[str, int], Price]:
    """The catalogue snapshot gpu-audit ships (`generator/data/published-tariffs.csv`), by GPU and duration."""
    from generator.audit.load.readers.csvtable import parse_table
    from generator.core.system.resources import published_tariffs

    table = parse_table(published_tariffs().read_text(encoding="utf-8"), "published tariffs", "tariffs-row")
    prices = [price_of(TariffRow.of(r)) for r in table.rows]
    return {(p.gpu, p.duration_days): p for p in prices if p is not None}


def price_source(price: Price, catalogue: dict[tuple[str, int], Price], proof: ManifestProof | None
                 ) -> tuple[str, str | None] | None:
    """(kind, source) of a price: catalogue (its snapshot date), provider as stated in the campaign (the Lab manifest
    the campaign carries, or the source named), illustrative; None for a published price with no source (or one of
    only blanks and invisible characters, or a manifest that does not stand), which is an error."""
    if price.price_status == ILLUSTRATIVE:
        return ILLUSTRATIVE, None
    if (price.gpu, price.duration_days) in catalogue:
        return CATALOGUE, catalogue[(price.gpu, price.duration_days)].snapshot_date
    if proof is not None and proof.stands:
        return PROVIDER, LAB_MANIFEST
    if not blank(price.source):
        return PROVIDER, price.source
    return None


def _finding(file: str, line: int, column: str, message: str, fix: str, claimed: int | str,
             recomputed: int | str, cause: tuple[str, str] | None = None) -> Finding:
    return make_finding("tariff-not-catalogue", E, file, message, line=line, field=column, claimed=claimed,
                        recomputed=recomputed, fix=fix, extra=follows_from(*cause) if cause else None,
                        rule="a published price is the catalogue snapshot's unchanged, or the provider's with its "
                             "source; gpu-audit never invents one")


def _no_source(price: Price, line: int, file: str, proof: ManifestProof | None) -> Finding:
    """A published price the catalogue does not hold, with no source or a blank one (and no Lab manifest that
    stands: the finding then follows from the manifest's)."""
    written = price.source or ""
    names = f"a source cell of {as_written(written)!r}, which names nothing" if written else "no source"
    cause = proof.cause if proof is not None and not proof.stands else None
    unsupported = f", and the Lab manifest named supports nothing ({cause[0]})" if cause else ""
    return _finding(file, line, "source", f"{price.gpu} for {price.duration_days} days is marked published, but the "
                    f"catalogue snapshot publishes no such price and the row names {names}{unsupported}",
                    "write where the provider publishes it in the source column (a quote number, or a URL with the "
                    "date you read it), copy the Lab archive's tarifs-forfaits.csv with its MANIFEST.json unchanged "
                    "(protocol files.lab_manifest), or mark the row illustrative",
                    as_written(written) if written else "published", "a source", cause)


def row_findings(price: Price, line: int, file: str, catalogue: dict[tuple[str, int], Price],
                 proof: ManifestProof | None) -> list[Finding]:
    """A row's price against the catalogue: a catalogue key's price unchanged (always, in a file a Lab manifest
    lists: that file claims to be the Lab's), any other published price with its source."""
    listed = proof is not None and proof.stands
    known = catalogue.get((price.gpu, price.duration_days))
    if price.price_status != "published" and not (listed and known is not None):
        return []
    if known is None:
        if price_source(price, catalogue, proof) is not None:
            return []
        return [_no_source(price, line, file, proof)]
    where = "the Lab archive's manifest lists this file, and " if listed and price.price_status != "published" else ""
    return [_finding(file, line, column, f"{column} {price.terms(column)!r} of {price.gpu} for {price.duration_days} "
                     f"days: {where}the catalogue snapshot of {known.snapshot_date} says {known.terms(column)!r}",
                     f"write {known.terms(column)}" + ("" if listed else ", or mark the row illustrative"),
                     price.terms(column), known.terms(column))
            for column in PRICE_COLUMNS if price.terms(column) != known.terms(column)]


def table_findings(rows: list[TariffRow], lines: list[int], file: str, proof: ManifestProof | None = None
                   ) -> list[Finding]:
    """Every complete row's price against the catalogue and its source (row_findings, row by row)."""
    catalogue = published_catalogue()
    prices = [(price_of(row), line) for row, line in zip(rows, lines, strict=True)]
    return [f for price, line in prices if price is not None
            for f in row_findings(price, line, file, catalogue, proof)]


def manifest_findings(tariffs_file: str, size: int, sha256: str, manifest_file: str, listed: tuple[int, str] | None,
                      refused: str | None) -> tuple[ManifestProof, list[Finding]]:
    """Whether the Lab manifest lists the tariffs file with this size and SHA-256; each way it does not is an error."""
    if listed is None:
        return ManifestProof(False), [make_finding(
            "lab-manifest-refused", E, manifest_file, f"the Lab archive's manifest cannot support {tariffs_file}: "
            f"{refused}", field="files.lab_manifest", value=manifest_file,
            rule="the manifest lists tarifs-forfaits.csv once, with its size in bytes and a 64-hex SHA-256",
            fix="copy the MANIFEST.json of the Lab archive the tariffs came from, unchanged, or remove "
                "files.lab_manifest and name each provider price's source")]
    differences: list[tuple[str, str, str, int | str, int | str]] = [
        ("size", f"{size} bytes", f"{listed[0]} bytes", size, listed[0]),
        ("sha256", f"SHA-256 {sha256}", f"SHA-256 {listed[1]}", sha256, listed[1])]
    out = [make_finding(
        "tariffs-not-in-manifest", E, tariffs_file, f"{tariffs_file} has {has}; {manifest_file} lists {lists}",
        field=field, claimed=expected, recomputed=read,
        rule="a tariffs file presented as the Lab archive's (files.lab_manifest) is the file its manifest lists, "
             "byte for byte",
        fix="copy tarifs-forfaits.csv from the Lab archive unchanged, or remove files.lab_manifest")
        for field, has, lists, read, expected in differences if read != expected]
    return ManifestProof(not out), out
