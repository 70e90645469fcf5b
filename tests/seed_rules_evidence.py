"""Issue 47's seed rules (nothing missing is read as consent; the device is the one rented), in the form of
tests/seed_rules.py;
test_seed_rules.py runs them. The prices here are test figures written by the tests, not a provider's."""

from __future__ import annotations

from pathlib import Path

from seed_rules import (
    B4,
    GRID,
    PROTOCOL,
    RTX,
    RTX_ALL,
    TARIFFS,
    A,
    L,
    P,
    SeedRule,
    Where,
    edit_json,
    edit_protocol,
    meas,
    set_rows,
)
from seed_rules_prices import _SOURCE, _rent_spot
from seed_rules_runs import _retime


def m_source_blank(c: Path) -> list[Where]:
    # a source cell of a no-break space, a zero-width space and a BOM shows nothing: it is no source
    _rent_spot(c, "\u00a0\u200b\ufeff")
    return [Where(TARIFFS, 4, "source")]


RULES: list[SeedRule] = [
    SeedRule("price-source-blank", "a published price's source that holds only blanks or invisible characters "
             "names nothing: it is no source", _SOURCE, "tariff-not-catalogue", m_source_blank, protect="withheld"),
]


def m_direction_contradicts_metric(c: Path) -> list[Where]:
    # macro-F1 is a score (1: every text right); registered lower_is_better it would reject every good run
    edit_protocol(c, lambda p: p["quality"].update(direction="lower_is_better"))
    return [Where(PROTOCOL, None, "/quality/direction")]


RULES += [
    SeedRule("quality-direction-of-metric", "the registered direction is the metric's own: a score registered "
             "lower_is_better is a protocol error, not every run rejected",
             f"{P} §1; {A} 'Festlegen, was als akzeptiertes Ergebnis zählt'", "quality-direction-contradicts-metric",
             m_direction_contradicts_metric, protect="withheld"),
]


def m_order_absent_blocked(c: Path) -> list[Where]:
    # the runs blocked by variant (b1 1..5, b4 1..5, b8 1..5) and no order registered: the order rule had
    # nothing to check, and the blocked runs passed
    edit_protocol(c, lambda p: p["experiments"][0].pop("order"))
    _retime(c, [(v, r) for v in ("b1", "b4", "b8") for r in range(1, 6)])
    return [Where(PROTOCOL, None, "/experiments/0/order")]


RULES += [
    SeedRule("order-registered", "every experiment registers its run order: an absent order is an error, not the "
             "order rule switched off", f"{P} §3", "run-order-missing", m_order_absent_blocked, targets=RTX_ALL),
]


def m_moving_revision(c: Path) -> list[Where]:
    # the RTX series registers, runs and records the model as `main`: a branch, whose weights move under the name
    edit_protocol(c, lambda p: p["experiments"][0]["fixed"].update(model_revision="main"))
    set_rows(c, RTX, None, model_revision="main")
    for v in ("b1", "b4", "b8"):
        edit_json(c, meas(RTX, v), lambda d: d["model"].update(revision="main"))
    return [Where(PROTOCOL, None, "/experiments/0/fixed/model_revision")]


RULES += [
    SeedRule("revision-immutable", "a model or tokenizer revision is immutable (a commit or a checksum), never a "
             "moving name such as main", f"{P} §1, §4 model_revision, tokenizer_revision", "revision-not-immutable",
             m_moving_revision, targets=RTX_ALL),
]


def m_gpu_of_another_model(c: Path) -> list[Where]:
    # the answer's runs were made on an RTX 4090 D, a cut-down export model, and billed as the rented RTX 4090
    lines = set_rows(c, RTX, "b4", gpu_model="NVIDIA GeForce RTX 4090 D")
    edit_json(c, meas(RTX, "b4"), lambda d: d["environment"].update(gpu_name="NVIDIA GeForce RTX 4090 D"))
    return [Where(meas(RTX, "b4"), None, "/environment/gpu_name"), Where(GRID, lines[0], "gpu_model")]


def m_test_run(c: Path) -> list[Where]:
    # the answer's measurement was written by campaign run --allow-cpu-for-tests
    edit_json(c, meas(RTX, "b4"), lambda d: d.update(test_run=True))
    return [Where(meas(RTX, "b4"), None, "/test_run")]


def m_measured_on_cpu(c: Path) -> list[Where]:
    # the answer's measurement ran on the processor
    edit_json(c, meas(RTX, "b4"), lambda d: (d["environment"].update(device="cpu"),
                                             d["configuration"].update(device="cpu")))
    return [Where(meas(RTX, "b4"), None, "/environment/device")]


def m_gpus_beyond_registered(c: Path) -> list[Where]:
    # the answer's program used two GPUs where one is registered
    edit_json(c, meas(RTX, "b4"), lambda d: d["environment"].update(devices_used=2, visible_device_count=2))
    return [Where(meas(RTX, "b4"), None, "/environment/devices_used")]


_DEVICE = f"{P} §2, §4 device; {L} §2"
RULES += [
    SeedRule("gpu-model-whole", "the GPU measured is the rented model, whole: another model whose name contains it "
             "(an RTX 4090 D for an RTX 4090) is not it", f"{P} §4 gpu_model", "gpu-not-rented",
             m_gpu_of_another_model, targets=(B4,)),
    SeedRule("test-run-never-ranked", "a test run (campaign run --allow-cpu-for-tests) is never evidence of a "
             "decision", _DEVICE, "test-run", m_test_run, targets=(B4,)),
    SeedRule("device-is-a-gpu", "the device measured is a GPU: a run on the CPU is never ranked", _DEVICE,
             "device-not-gpu", m_measured_on_cpu, targets=(B4,)),
    SeedRule("gpus-registered", "the GPUs measured are the registered count", f"{P} §2, §4 gpu_count",
             "gpu-count-not-registered", m_gpus_beyond_registered, targets=(B4,)),
]
