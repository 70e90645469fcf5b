"""`validate`: the rules of `rules.RULES` run over a loaded campaign, in order, each input's findings of loading
first; and `gpu-audit validate`, which adds the prediction files' format and attributes every finding."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from generator.audit.load import load
from generator.audit.load.findings import Finding, Severity, sort_key
from generator.audit.load.load import CampaignInputs, RunFile
from generator.audit.load.readers.predictions import read_labels, size_limit
from generator.audit.validate import followons
from generator.audit.validate.attribution import attribute, owners_of
from generator.audit.validate.rules import RULES

__all__ = ["CampaignInputs", "RunFile", "ValidationResult", "load_and_validate", "validate_campaign", "validate_inputs"]


@dataclass
class ValidationResult:
    """The loaded inputs and their findings, sorted."""

    inputs: CampaignInputs
    findings: list[Finding]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]


def validate_inputs(inputs: CampaignInputs) -> CampaignInputs:
    """The rules across fields, rows and files; the inputs again, with every finding of loading and validation.

    Each input's load findings come first, then its rules, input by input in the order they were loaded. The
    rules note what they establish (the expected IDs distinct, the reference matching them, the fingerprint) on
    this copy, never on `inputs`.
    """
    checked = replace(inputs, expected_distinct=False, reference_matches=False, fingerprint=None)
    out: list[Finding] = []
    for section in load.SECTIONS:
        out.extend(inputs.load_findings[section])
        for rule in RULES[section]:
            out.extend(rule(checked))
    checked.findings = out
    return checked


def load_and_validate(path: Path, *, fast: bool = True) -> CampaignInputs:
    """`load.load_campaign`, then `validate_inputs`: the inputs `check` recomputes from."""
    return validate_inputs(load.load_campaign(path, fast=fast))


def validate_campaign(path: Path, *, fast: bool = True) -> ValidationResult:
    """`gpu-audit validate`: every file parsed and checked; prediction formats checked against the classes."""
    inputs = load_and_validate(path, fast=fast)
    findings = list(inputs.findings)
    max_bytes = size_limit(inputs.expected, inputs.classes)  # the bound `check` reads prediction files with
    for run in inputs.run_files:
        if run.readable is not None:
            labels = read_labels(run.readable, run.relpath, inputs.classes, Severity.WARNING, fast=fast,
                                 max_bytes=max_bytes)
            findings.extend(labels.problems)
    findings = followons.link(attribute(findings, owners_of(inputs)), inputs.grid)
    return ValidationResult(inputs=inputs, findings=sorted(findings, key=sort_key))
