"""The registered run order: rotated rounds or the sequence drawn before the runs, proved by the warm runs' times."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol
from generator.audit.recompute.times.runphases import Dated

Run = tuple[str, int]  # (variant id, warm repeat)
# Runs named in a message before it is cut: enough to see the pattern of a few rounds.
SHOWN = 15
_FIX = ("run the campaign again in the registered order (or register, before new runs, the order they will "
        "follow); an order chosen or changed after the runs lets drift in time favour one variant")


def _text(runs: list[Run]) -> str:
    shown = ", ".join(f"{v} {r}" for v, r in runs[:SHOWN])
    return shown + (f", ... ({len(runs)} runs)" if len(runs) > SHOWN else "")


def _warm_runs(exp: ExperimentSpec, measurements: dict[str, MeasurementDoc],
               dated: dict[str, list[Dated]]) -> list[Run] | None:
    """The experiment's warm runs in the order they started; None when one variant's warm runs are not all dated
    (that is a finding of its own: nothing proves the order then)."""
    runs: list[tuple[datetime, str, int]] = []
    for v in (v for v in exp.variants if v.resume is None):  # resumptions are not in the registered order
        file = v.measurement or ""
        warm = [(d.start, v.id, d.phase.repeat) for d in dated.get(file, [])
                if d.phase.phase == "warm_forward" and isinstance(d.phase.repeat, int)]
        if file not in measurements or len(warm) != sum(p.phase == "warm_forward"
                                                        for p in measurements[file].phases):
            return None
        runs.extend(warm)
    return [(v, r) for _, v, r in sorted(runs)]


def _departure(actual: list[Run], expected: list[Run]) -> str:
    """Where the runs first leave the registered order."""
    k = next((i for i, (a, e) in enumerate(zip(actual, expected, strict=False)) if a != e),
             min(len(actual), len(expected)))
    ran = f"{actual[k][0]} {actual[k][1]}" if k < len(actual) else "no run"
    due = f"{expected[k][0]} {expected[k][1]}" if k < len(expected) else "no run"
    return f"run {k + 1} is {ran} where {due} was due"


def rotated(actual: list[Run], variants: list[str]) -> list[Run]:
    """The order `rotated` registers for these runs: round r runs each variant once, the first round's order
    shifted by r - 1 (1-4-8, 4-8-1, 8-1-4, ...)."""
    present = set(actual)
    rounds = sorted({r for _, r in actual})
    first = [v for v, r in actual if r == rounds[0]] if rounds else []
    base = first + [v for v in variants if v not in first]
    out: list[Run] = []
    for k, r in enumerate(rounds):
        shift = k % len(base)
        out.extend((v, r) for v in base[shift:] + base[:shift] if (v, r) in present)
    return out


def drawn(actual: list[Run], sequence: Sequence[str]) -> list[Run]:
    """The order the drawn sequence registers for these runs: the k-th time a variant is drawn is its repeat k."""
    present, seen = set(actual), Counter[str]()
    out: list[Run] = []
    for v in sequence:
        seen[v] += 1
        if (v, seen[v]) in present:
            out.append((v, seen[v]))
    return out


def _sequence_problem(exp: ExperimentSpec) -> str | None:
    """Why a drawn experiment's sequence cannot be followed; None when it can."""
    sequence = exp.drawn_sequence
    if not sequence:
        return "registers order drawn without the drawn sequence"
    counts, variants, runs = Counter(sequence), [v.id for v in exp.variants if v.resume is None], exp.attempts("warm")
    wrong = sorted(v for v in set(variants) | set(counts) if counts[v] != (runs if v in variants else 0))
    if wrong:
        times = (f"runs_per_variant ({exp.runs_per_variant}) times under each of its {len(exp.seeds)} common seeds, "
                 f"{runs} in all" if exp.seeds else f"runs_per_variant ({runs}) times")
        return (f"draws {', '.join(f'{v} {counts[v]} time(s)' for v in wrong)}; the sequence names each variant "
                f"of the experiment exactly {times}")
    return None


def order_findings(protocol: Protocol, measurements: dict[str, MeasurementDoc],
                   dated: dict[str, list[Dated]]) -> list[Finding]:
    """Each experiment's warm runs, ordered by their start times, against its registered order.

    `dated` maps a measurement file to its dated phases. A sequence missing or unusable is an error on the
    experiment whatever the times; the order itself is proved only when every warm run is dated.
    """
    out = []
    for n, exp in enumerate(protocol.experiments):
        order = exp.order
        field = f"/experiments/{n}/order"
        problem = _sequence_problem(exp) if order == "drawn" else None
        if problem is not None:
            out.append(make_finding(
                "drawn-sequence-missing", Severity.ERROR, "protocol.json", f"experiment {exp.id!r} {problem}",
                field=f"/experiments/{n}/drawn_sequence" if exp.drawn_sequence else field, claimed=order,
                rule="order drawn: the drawn sequence of warm runs is registered in the protocol before the runs "
                     "(drawn_sequence), and the runs follow it",
                fix="register the sequence drawn before the runs in drawn_sequence; a sequence written after "
                    "the runs describes them instead of ordering them, so measure again after registering it"))
            continue
        actual = _warm_runs(exp, measurements, dated)
        if order not in ("rotated", "drawn") or not actual:  # no order: run-order-missing (protocol_rules)
            continue
        variants = [v.id for v in exp.variants if v.resume is None]
        expected = rotated(actual, variants) if order == "rotated" else drawn(actual, exp.drawn_sequence or ())
        if actual == expected:
            continue
        what = ("every round runs each variant once and the first variant rotates" if order == "rotated" else
                "the runs follow the drawn sequence")
        out.append(make_finding(
            "run-order-not-registered", Severity.ERROR, "protocol.json",
            f"the warm runs of experiment {exp.id!r} started in the order {_text(actual)}; order {order} "
            f"registers {_text(expected)} ({what}): {_departure(actual, expected)}", field=field, claimed=_text(actual),
            recomputed=_text(expected), rule=f"protocol experiments[{exp.id}].order: {order}", fix=_FIX))
    return out
