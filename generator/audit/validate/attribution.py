"""Attribution: which configuration's own evidence, or which shared input, each finding concerns."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from generator.audit.load.campaign import PROTOCOL_FILE
from generator.audit.load.findings import Finding
from generator.audit.load.inputs.protocol import Protocol

if TYPE_CHECKING:
    from generator.audit.load.load import CampaignInputs

# The shared inputs a decision rests on as a whole; an error in one of them withholds the answer.
SHARED_ROLES = {"expected_ids": "expected_ids", "reference": "reference", "tariffs": "tariffs",
                "raw_results": "grid"}
_EXPERIMENT_FIELD = re.compile(r"^/experiments/([^/]+)(?:/variants/([^/]+))?")
_RENTAL_FIELD = re.compile(r"^/rentals/([0-9]+)(?:/|$)")


@dataclass
class Owners:
    """Where each piece of evidence belongs: grid lines, prediction files and measurement files to configurations."""

    protocol: Protocol | None
    files: dict[str, str]
    by_line: dict[int, str] = field(default_factory=dict)
    by_file: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    # A resume variant's balance holds the attempts of the variant it resumes: their evidence concerns it too.
    resumed_by: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    @property
    def registered(self) -> set[str]:
        if not self.protocol:
            return set()
        return {f"{e.id}/{v.id}" for e in self.protocol.experiments for v in e.variants}


def owners_of(inputs: CampaignInputs) -> Owners:
    """Index a loaded campaign (`load.load.CampaignInputs`) by the configuration each file or row serves."""
    owners = Owners(protocol=inputs.protocol, files=inputs.files)
    registered = owners.registered
    rows = inputs.grid_rows
    lines = inputs.grid.lines if inputs.grid is not None else []
    row_config: dict[int, str] = {}
    for index, (row, line) in enumerate(zip(rows, lines, strict=False)):
        config = f"{row.experiment_id}/{row.variant_id}"
        if config in registered:
            owners.by_line[line] = config
            row_config[index] = config
    for run in inputs.run_files:
        if run.row_index in row_config:
            owners.by_file[run.relpath].add(row_config[run.row_index])
    for exp in inputs.protocol.experiments if inputs.protocol else ():
        for variant in exp.variants:
            if variant.measurement:
                owners.by_file[variant.measurement].add(f"{exp.id}/{variant.id}")
            if variant.resume is not None:
                owners.resumed_by[f"{exp.id}/{variant.resume.of}"].add(f"{exp.id}/{variant.id}")
    for configs in owners.by_file.values():
        configs.update(*(owners.resumed_by.get(c, ()) for c in list(configs)))
    return owners


def _experiment_configs(protocol: Protocol, match: re.Match[str]) -> tuple[str, ...] | None:
    """The configurations a protocol field under /experiments/N (index or id) concerns; None when ambiguous."""
    experiments = protocol.experiments
    key = match.group(1)
    ids = [e.id for e in experiments]
    if key.isdigit() and int(key) < len(experiments):
        exp = experiments[int(key)]
    elif ids.count(key) == 1:
        exp = experiments[ids.index(key)]
    else:
        return None
    if ids.count(exp.id) != 1:
        return None  # two experiments share an id: no configuration can be told apart
    variants = exp.variants
    vkey = match.group(2)
    if vkey is not None:
        if vkey.isdigit() and int(vkey) < len(variants):
            return (f"{exp.id}/{variants[int(vkey)].id}",)
        return None
    return tuple(f"{exp.id}/{v.id}" for v in variants)


def _rental_configs(protocol: Protocol, field: str) -> tuple[str, ...] | None:
    """The configurations a field under /rentals/N concerns: those of the experiments run in that rental."""
    match = _RENTAL_FIELD.match(field)
    listed = protocol.rentals or ()
    if match is None or int(match.group(1)) >= len(listed):
        return None
    rid = listed[int(match.group(1))].id
    return tuple(f"{e.id}/{v.id}" for e in protocol.experiments if e.rental.id == rid for v in e.variants) or None


def _attribute_one(f: Finding, owners: Owners) -> Finding:
    if f.configurations or f.shared_input:
        return f  # attributed where it was made
    files = owners.files
    if f.file == files.get("raw_results"):
        config = owners.by_line.get(f.line) if f.line is not None else None
        # A grid finding without a row of a registered configuration (its header, an unknown variant, an
        # unreadable row) concerns the grid as a whole.
        return replace(f, configurations=(config, *sorted(owners.resumed_by.get(config, ())))) if config \
            else replace(f, shared_input="grid")
    if f.file in owners.by_file:
        return replace(f, configurations=tuple(sorted(owners.by_file[f.file])))
    if f.file == PROTOCOL_FILE:
        match = _EXPERIMENT_FIELD.match(f.field or "")
        configs = _experiment_configs(owners.protocol, match) if match and owners.protocol else None
        configs = configs or (_rental_configs(owners.protocol, f.field or "") if owners.protocol else None)
        return replace(f, configurations=configs) if configs else replace(f, shared_input="protocol")
    for role, shared in SHARED_ROLES.items():
        if f.file == files.get(role):
            return replace(f, shared_input=shared)
    for corpus in (owners.protocol.corpora or ()) if owners.protocol else ():
        if f.file in (corpus.expected_ids, corpus.reference):  # a further corpus's: shared like the first's
            return replace(f, shared_input="expected_ids" if f.file == corpus.expected_ids else "reference")
    # Anything else (the folder itself, a file no configuration rests on) is about the campaign as a whole.
    return replace(f, shared_input="protocol" if f.file in ("the campaign folder", PROTOCOL_FILE) else "campaign")


def attribute(findings: list[Finding], owners: Owners) -> list[Finding]:
    """Every finding with its configurations or its shared input filled in (explicit attributions are kept)."""
    return [_attribute_one(f, owners) for f in findings]
