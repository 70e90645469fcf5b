"""The tariffs file's rules: one price per GPU and duration, each price's source (tariffrules), and the Lab manifest
that presents the file as the Lab's, as it lists it and of the archive's structure (labarchive)."""

from __future__ import annotations

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.rows import TariffRow
from generator.audit.load.load import CampaignInputs
from generator.audit.load.readers.csvtable import Table
from generator.audit.validate.labarchive import manifest_structure_findings, tariffs_structure_findings
from generator.audit.validate.tariffrules import ManifestProof, manifest_findings, table_findings

E = Severity.ERROR


def tariffs_proof(inputs: CampaignInputs) -> tuple[ManifestProof | None, list[Finding]]:
    """Whether the Lab manifest the protocol names stands: the archive's structure, listing the tariffs file, itself
    of the Lab's 15 models x 3 durations (labarchive). None: no manifest named or read. Even when it stands, a
    price it supports is the provider's as stated in the campaign, not authenticated."""
    table, reading, named = inputs.tariffs, inputs.lab_manifest, inputs.files.get("lab_manifest")
    if reading is None or named is None or table is None or table.size is None or table.sha256 is None:
        return None, []
    entry = reading.entry
    proof, found = manifest_findings(table.file, table.size, table.sha256, named,
                                     (entry.size, entry.sha256) if entry else None, reading.refused)
    keys = [(r.gpu, r.duration_days, line) for r, line in zip(inputs.tariff_rows, table.lines, strict=False)
            if r.gpu is not None and r.duration_days is not None]
    found += manifest_structure_findings(reading.items, named) if reading.parsed else []
    found += tariffs_structure_findings(keys, table.file)
    cause = (found[0].code, found[0].file) if found else None
    return ManifestProof(proof.stands and not found, cause), found


def _check_tariffs(inputs: CampaignInputs, table: Table, rows: list[TariffRow], out: list[Finding]) -> None:
    """One price per GPU and duration; each price from the catalogue, the provider with its source, or
    illustrative (tariffrules); a file presented as the Lab's, as its manifest lists it and of its structure."""
    seen: dict[tuple[str | None, int | None], int] = {}
    proof, found = tariffs_proof(inputs)
    out.extend(found)
    out.extend(table_findings(rows, table.lines[:len(rows)], table.file, proof))
    for row, line in zip(rows, table.lines, strict=False):
        key = (row.gpu, row.duration_days)
        if None in key:
            continue
        if key in seen:
            out.append(make_finding("duplicate-tariff", E, table.file,
                                    f"{key[0]} for {key[1]} days already priced on line {seen[key]}", line=line,
                                    field="gpu", value=key[0], rule="one price per GPU and duration",
                                    fix="keep one row"))
        seen[key] = line


def tariffs(inputs: CampaignInputs) -> list[Finding]:
    """The tariffs file's rules, when it was read (`_check_tariffs`)."""
    out: list[Finding] = []
    if inputs.tariffs is not None:
        _check_tariffs(inputs, inputs.tariffs, inputs.tariff_rows, out)
    return out
