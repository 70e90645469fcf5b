"""Shared rentals (protocol `rentals`): each id listed once, each id an experiment names listed, each rental named.

Several experiments may run in one rental (a batch series and a precision series one after the other on one rented
GPU): the protocol lists it once in `rentals`, with its `id`, and each experiment gives that id as its `rental`.
Its package is then committed, priced and billed once. A name that resolves to no rental, or to two, leaves the
experiments' packages unknown: the protocol is not read further (as for a schema violation), and the one finding
says which id to list. A rental no experiment names is committed by none: a warning says so.
"""

from __future__ import annotations

from generator.audit.load.campaign import PROTOCOL_FILE
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol, Rental
from generator.core.jsonvalue import JsonObject

__all__ = ["listed_rentals", "reference_findings", "use_findings"]


def _ids(data: JsonObject) -> list[str]:
    listed = data.get("rentals")
    return [str(r.get("id")) for r in listed if isinstance(r, dict)] if isinstance(listed, list) else []


def reference_findings(data: JsonObject) -> list[Finding]:
    """A schema-valid protocol's rental names: each id of `rentals` once, and each experiment's named rental listed
    (the protocol can be built only without them)."""
    ids, out = _ids(data), []
    for j, rid in enumerate(ids):
        if rid in ids[:j]:
            out.append(make_finding(
                "rental-id-duplicate", Severity.ERROR, PROTOCOL_FILE,
                f"rentals {ids.index(rid)} and {j} both have the id {rid!r}: an experiment naming it could mean "
                "either", field=f"/rentals/{j}/id", claimed=rid,
                rule="each rental of `rentals` has its own id, which experiments name it by",
                fix=f"give rentals/{j} another id and name it in the experiments that ran in it, or remove it if it "
                    "is the same rental"))
    experiments = data.get("experiments")
    for i, exp in enumerate(experiments if isinstance(experiments, list) else []):
        named = exp.get("rental") if isinstance(exp, dict) else None
        if isinstance(exp, dict) and isinstance(named, str) and named not in ids:
            known = ", ".join(repr(r) for r in dict.fromkeys(ids)) if ids else "none (the protocol has no `rentals`)"
            out.append(make_finding(
                "rental-unknown", Severity.ERROR, PROTOCOL_FILE,
                f"experiment {exp.get('id')!r} names the rental {named!r}, which `rentals` does not list: its "
                f"package is unknown (rentals listed: {known})", field=f"/experiments/{i}/rental", claimed=named,
                rule="an experiment's rental is its own (an object) or the id of a rental listed in `rentals`",
                fix=f"add the rental to `rentals` with \"id\": \"{named}\" (its gpu, duration_days or periods, lots), "
                    "or correct the name to one listed, or write the experiment's own rental there"))
    return out


def listed_rentals(protocol: Protocol) -> list[tuple[str, Rental, tuple[ExperimentSpec, ...]]]:
    """Each rental once, with its protocol field and the experiments run in it: the rentals of `rentals` first
    (in their order, an unused one with none), then each experiment's own."""
    out = [(f"/rentals/{j}", r, tuple(e for e in protocol.experiments if e.rental.id == r.id))
           for j, r in enumerate(protocol.rentals or ())]
    out += [(f"/experiments/{i}/rental", e.rental, (e,)) for i, e in enumerate(protocol.experiments)
            if e.rental.id is None]
    return out


def use_findings(protocol: Protocol) -> list[Finding]:
    """A rental of `rentals` that no experiment names: committed by none, so left out of the budget."""
    return [make_finding(
        "rental-unused", Severity.WARNING, PROTOCOL_FILE,
        f"the rental {rental.id!r} ({rental.gpu}, {rental.label} days, {rental.lots} lot(s)) is named by no "
        "experiment: no configuration ran in it, and it is not part of the committed budget", field=field,
        claimed=rental.id, rule="every rental listed in `rentals` is one that experiments ran in, each naming it "
                                "by its id",
        fix=f"give \"rental\": \"{rental.id}\" to the experiments that ran in it, or remove it from `rentals` if "
            "it was never rented")
        for field, rental, users in listed_rentals(protocol) if rental.id is not None and not users]
