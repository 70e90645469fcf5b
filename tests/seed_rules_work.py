"""Issue 31's seed rules (work), in the form of tests/seed_rules.py; tests/test_seed_rules.py runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seed_rules import (
    B4,
    B200,
    B200_ALL,
    PROTOCOL,
    RTX_ALL,
    A,
    P,
    SeedRule,
    Where,
    edit_json,
    edit_protocol,
    meas,
    set_row,
    set_rows,
)

# The B200 experiment is experiments[1] of the example; the RTX 4090 one, experiments[0].
B200_AT = "/experiments/1"
VARIANTS = ("b1", "b4", "b8")


def _b200_measured(c: Path, **configuration: Any) -> None:
    """Set configuration keys in every B200 measurement, as a consistent re-run at other settings writes them."""
    for variant in VARIANTS:
        edit_json(c, meas(B200, variant), lambda d: d["configuration"].update(configuration))


def _b200_at_fp16(c: Path, **fixed: Any) -> None:
    """The whole B200 experiment run, registered and measured at float16 (and at any other `fixed` values)."""
    edit_protocol(c, lambda p: p["experiments"][1]["fixed"].update(precision="float16", **fixed))
    set_rows(c, B200, None, precision="float16",
             **{k: str(v) for k, v in fixed.items() if k in ("context", "model_revision")})
    _b200_measured(c, dtype="float16", **({"context": fixed["context"]} if "context" in fixed else {}))


def m_other_precision_context_padding(c: Path) -> list[Where]:
    # Each experiment is consistent with itself: only the two experiments, ranked together, did different work.
    _b200_at_fp16(c, context=256, padding="left, to the longest input of the batch")
    return [Where(PROTOCOL, None, f"{B200_AT}/fixed/context"), Where(PROTOCOL, None, f"{B200_AT}/fixed/padding")]


def v_precision_compared(decision: dict[str, Any], findings: list[Any]) -> None:
    # The precision is compared across experiments: it is no difference of work, only context and padding are.
    fields = sorted(f.field for f in findings if f.code == "different-work")
    assert fields == [f"{B200_AT}/fixed/context", f"{B200_AT}/fixed/padding"], fields
    assert all(f.message.startswith("configurations of different work") for f in findings
               if f.code == "different-work")


def m_other_model_revision(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["experiments"][1]["fixed"].update(model_revision="synthetic-classifier-r2"))
    set_rows(c, B200, None, model_revision="synthetic-classifier-r2")
    for variant in VARIANTS:
        edit_json(c, meas(B200, variant), lambda d: d["model"].update(revision="synthetic-classifier-r2"))
    return [Where(PROTOCOL, None, f"{B200_AT}/fixed/model_revision")]


def m_other_warmup_rule(c: Path) -> list[Where]:
    # 5 passes under torch.compile on the B200, 2 eager passes on the RTX 4090: each experiment applies its own.
    edit_protocol(c, lambda p: p["experiments"][1]["warmup"].update(
        iterations=5, recompilation="torch.compile (mode max-autotune), compiled during the warm-up"))
    for variant in VARIANTS:
        for run in range(1, 6):
            set_row(c, B200, variant, "warm", run, warmup_iterations="5")
    _b200_measured(c, warmup=5)
    return [Where(PROTOCOL, None, f"{B200_AT}/warmup/iterations"),
            Where(PROTOCOL, None, f"{B200_AT}/warmup/recompilation")]


def m_hardware_and_precision_only(c: Path) -> list[Where]:
    _b200_at_fp16(c)
    return []


def v_ranked_together(decision: dict[str, Any], findings: list[Any]) -> None:
    # Only what the seeds compare across series differs (hardware and precision): every configuration of both
    # experiments is ranked in the one answer, which stays the example's.
    d = decision["decision"]
    assert d["status"] == "answered" and d["answer"] == B4, d
    ranked = {e["configuration"] for e in d["ranking"]}
    assert ranked == set(RTX_ALL[:2]) | set(B200_ALL), ranked
    assert not [f for f in findings if f.code == "different-work"]


RULES: list[SeedRule] = [
    SeedRule("work-same-across-experiments", "configurations ranked in one answer do the same work: another "
             "context and padding are not compared with the hardware and the precision", f"{A} 'Beispiel: "
             f"dieselben 1.000 Texte klassifizieren'; {A} 'Eingaben, Referenz und Manifest vorbereiten'; {P} §2",
             "different-work", m_other_precision_context_padding, protect="withheld", verify=v_precision_compared),
    SeedRule("work-same-model", "the same model revision in every experiment ranked together", f"{P} §1, §2; {A} "
             "'Eingaben, Referenz und Manifest vorbereiten'", "different-work", m_other_model_revision,
             protect="withheld"),
    SeedRule("work-same-warmup", "one warm-up rule for every variant of the comparison, experiments included",
             f"{A} 'Start, Aufwärmphase und gemessenen Durchlauf trennen'; {P} §3", "different-work",
             m_other_warmup_rule, protect="withheld"),
    SeedRule("work-hardware-precision-compared", "a second series may change the hardware or the precision; "
             "requalified under the same quality rule, it is ranked with the first", f"{A} 'Beispiel: dieselben "
             f"1.000 Texte klassifizieren'; {A} 'Qualität nach einem Wechsel der Präzision prüfen'",
             None, m_hardware_and_precision_only, protect="decision", verify=v_ranked_together),
]
