"""The rules `validate` runs, in the one order their findings are reported: input by input as they were loaded,
each input's findings of loading first (the runner), then its rules here. A new rule is one function of its
concern's module, taking the loaded campaign and returning its findings, and one line in RULES."""

from __future__ import annotations

from collections.abc import Callable

from generator.audit.load import metricrules
from generator.audit.load.campaign import PROTOCOL_FILE
from generator.audit.load.findings import Finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.load import CampaignInputs
from generator.audit.validate import gridrows, protocol_rules, reforigin, registered, tariffs
from generator.audit.validate.corpus import idfiles, splits, subgrouprules, subgroupsets

Rule = Callable[[CampaignInputs], list[Finding]]


def of_protocol(check: Callable[[Protocol, str, list[Finding]], None]) -> Rule:
    """A rule of protocol.json's fields alone, written as `check(protocol, file, out)`: nothing without a protocol."""
    def rule(inputs: CampaignInputs) -> list[Finding]:
        out: list[Finding] = []
        if inputs.protocol is not None:
            check(inputs.protocol, PROTOCOL_FILE, out)
        return out
    return rule


def with_protocol(findings: Callable[[Protocol], list[Finding]]) -> Rule:
    """A rule of the protocol alone that returns its findings: nothing without a protocol."""
    return lambda inputs: findings(inputs.protocol) if inputs.protocol is not None else []


# Each input's rules in order, by the input (load.SECTIONS, whose order the runner follows: each input's findings
# of loading, then its rules). Rules that establish a fact for a later one (the expected IDs distinct, the
# reference matching them, the fingerprint) run before it.
RULES: dict[str, tuple[Rule, ...]] = {
    "protocol": (
        protocol_rules.paths,
        of_protocol(protocol_rules.check_classes),
        of_protocol(protocol_rules.check_measurement_links),
        of_protocol(protocol_rules.check_rentals),
        of_protocol(protocol_rules.check_resumes),
        of_protocol(protocol_rules.check_direction),
        with_protocol(lambda p: metricrules.range_findings(p, PROTOCOL_FILE)),
        of_protocol(protocol_rules.check_run_order),
        of_protocol(protocol_rules.check_revisions),
        with_protocol(lambda p: registered.registration_findings(p.quality, PROTOCOL_FILE)),
        of_protocol(protocol_rules.check_experiments),
        of_protocol(protocol_rules.check_times),
    ),
    "expected_ids": (
        idfiles.expected_ids,
        idfiles.corpora_repeated,
        splits.splits,
        with_protocol(reforigin.origin_findings),
        subgroupsets.subgroups,
        with_protocol(subgrouprules.looser_findings),
    ),
    "reference": (
        idfiles.references,
        idfiles.fingerprints,
    ),
    "tariffs": (tariffs.tariffs,),
    "raw_results": (gridrows.grid_rows,),
    "measurements": (),
}
