"""The decision's cell records and the JSON objects it keeps as the files write them, read in this one place."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from generator.audit.recompute.decision.model import Configuration, Experiment, Measurement, Run
from generator.audit.recompute.decision.runcells import MemoryCells
from generator.audit.recompute.times.runphases import SETUP_PHASES, parse_utc
from generator.core.jsonrecord import to_json_value
from generator.render.view.chartdata import PhasePeak
from generator.render.view.rows import ScheduleRow

# The template names a run's cells and a configuration's environment by their grid column, so they are read by
# name here; Measurement.environment and .phases and Experiment.fixed stay JSON objects as the files write them
# (generator.audit.recompute.decision.model), read only by the functions below.


def claimed_cell(run: Run, column: str) -> object:
    """What the grid claims in one column of a run (None: not recorded)."""
    value: object = getattr(run.claimed, column, None)
    return value


def recomputed_cell(run: Run, key: str) -> object:
    """What the recomputation gives for one key of a run (None without a recomputation or without the key)."""
    value: object = getattr(run.recomputed, key, None) if run.recomputed is not None else None
    return value


def is_recomputed(run: Run) -> bool:
    """Whether the run has a recomputation to compare its claims with."""
    return run.recomputed is not None


def run_memory(run: Run) -> MemoryCells:
    """The run's baselines and peaks."""
    return run.memory


def memory_key(run: Run) -> str:
    """The run's memory as canonical JSON: runs whose memory reads the same share a row of the memory table."""
    return json.dumps(to_json_value(run.memory), sort_keys=True)


def environment_value(config: Configuration, key: str) -> object:
    """One key of the environment the grid records for a configuration (None when it has none)."""
    value: object = getattr(config.environment, key, None)
    return value


def measured_gpu(measurement: Measurement) -> tuple[object, object]:
    """The GPU the measurement file saw and how many devices were visible."""
    env = measurement.environment
    return env.get("gpu_name"), env.get("visible_device_count")


def measured_phases(measurement: Measurement) -> tuple[PhasePeak, ...]:
    """The measurement's phases with their peaks."""
    return tuple(PhasePeak(str(p["phase"]), str(p["status"]), _bytes(p.get("peak_allocated_bytes")),
                           _bytes(p.get("peak_reserved_bytes"))) for p in measurement.phases)


def _bytes(value: object) -> int | None:
    """A byte count as the measurement's schema writes it (an integer), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def held_fixed(experiment: Experiment) -> list[tuple[str, object]]:
    """What the experiment holds fixed, by name, in the order of Jinja's dictsort (case ignored)."""
    return sorted(experiment.fixed.items(), key=lambda item: item[0].lower())


# What an experiment holds fixed, in the words of the experiment's section (each labelled through the catalogue,
# in this order); the revisions are identifiers, shown in the technical appendix with every field as written.
READER_FIXED = ("batch", "precision", "context", "seed", "gpu_count", "input_order", "padding", "truncation",
                "quantisation", "compile", "attention_backend", "deterministic")


def fixed_in_words(experiment: Experiment) -> list[tuple[str, object]]:
    """What the experiment holds fixed that a reader needs beside its description, in READER_FIXED's order: the
    fields with a value (a null one is the declared variable, or the common seeds)."""
    return [(k, experiment.fixed[k]) for k in READER_FIXED if experiment.fixed.get(k) is not None]


def _seconds(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _moment(phases: Sequence[Mapping[str, object]], key: str, last: bool = False) -> str | None:
    """The earliest (or latest) of the phases' `key` stamps, as the file writes it; None when none is dated."""
    dated = [(when, str(p[key])) for p in phases if (when := parse_utc(p.get(key))) is not None]
    if not dated:
        return None
    return (max(dated) if last else min(dated))[1]


def measured_schedule(configuration: str, measurement: Measurement) -> ScheduleRow:
    """A configuration's time on the rental as its measurement records it: the set-up phases, outside the timer
    (each with its duration; None when it failed), when the set-up began, when the runs began and when the last
    phase ended."""
    phases = measurement.phases
    setup = [p for p in phases if p.get("phase") in SETUP_PHASES]
    runs = [p for p in phases if p.get("phase") not in SETUP_PHASES]
    return ScheduleRow(configuration, [(str(p["phase"]), _seconds(p.get("elapsed_seconds"))) for p in setup],
                       _moment(setup, "started_at"), _moment(runs, "started_at"),
                       _moment(phases, "ended_at", last=True))
