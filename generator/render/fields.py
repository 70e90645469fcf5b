"""The decision's parts the model still holds as JSON objects, read in this one place (each accessor typed)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from generator.audit.recompute.jsonrecord import to_json_value
from generator.audit.recompute.model import Configuration, Experiment, Measurement, Run
from generator.render.chartdata import PhasePeak

# Run.claimed, Run.recomputed, Run.memory, Configuration.environment, Measurement.environment and .phases,
# Experiment.fixed are JSON objects in generator.audit.recompute.model until they become records of their own
# (the same JSON keys): only the functions below read them. Experiment.warmup, CampaignSummary.corpus and .timer
# and QualityRule.reference are read by the template alone, whose `x.key` reads a record's attribute as it reads
# an object's key.


@dataclass(frozen=True)
class RunMemory:
    """A run's memory as the grid states it (None: not recorded)."""

    baseline_allocated_bytes: int | None
    baseline_reserved_bytes: int | None
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None


def claimed_cell(run: Run, column: str) -> object:
    """What the grid claims in one column of a run (None: not recorded)."""
    return run.claimed.get(column)


def recomputed_cell(run: Run, key: str) -> object:
    """What the recomputation gives for one key of a run (None without a recomputation or without the key)."""
    return (run.recomputed or {}).get(key)


def is_recomputed(run: Run) -> bool:
    """Whether the run has a recomputation to compare its claims with."""
    return bool(run.recomputed)


def run_memory(run: Run) -> RunMemory:
    """The run's baselines and peaks."""
    m = run.memory
    return RunMemory(m.get("baseline_allocated_bytes"), m.get("baseline_reserved_bytes"),
                     m.get("peak_allocated_bytes"), m.get("peak_reserved_bytes"))


def memory_key(run: Run) -> str:
    """The run's memory as canonical JSON: runs whose memory reads the same share a row of the memory table."""
    return json.dumps(to_json_value(run.memory), sort_keys=True)


def environment_value(config: Configuration, key: str) -> object:
    """One key of the environment the grid records for a configuration (None when it has none)."""
    return config.environment.get(key)


def measured_gpu(measurement: Measurement) -> tuple[object, object]:
    """The GPU the measurement file saw and how many devices were visible."""
    env = measurement.environment
    return env.get("gpu_name"), env.get("visible_device_count")


def measured_phases(measurement: Measurement) -> tuple[PhasePeak, ...]:
    """The measurement's phases with their peaks."""
    return tuple(PhasePeak(p["phase"], p["status"], p.get("peak_allocated_bytes"), p.get("peak_reserved_bytes"))
                 for p in measurement.phases)


def held_fixed(experiment: Experiment) -> list[tuple[str, object]]:
    """What the experiment holds fixed, by name, in the order of Jinja's dictsort (case ignored)."""
    return sorted(experiment.fixed.items(), key=lambda item: item[0].lower())
