"""The IteraGPU Lab's `mesure_memoire.py measure` output, linked as a variant's measurement: what it lacks.

The seeds (004 §3) describe that file: `environment`, `configuration`, `synthetic_model` and `phases`, for the Lab's
synthetic `Linear -> GELU -> Linear` network. It is the measurement format's ancestor, not one of its files: it has
no `schema_version`, measures no classifier of the campaign (`model`), dates no phase and cannot see the driver. A
file of that shape that the schema refuses is named as what it is, with each missing piece and how to get it,
instead of leaving its reader with a list of schema violations.
"""

from __future__ import annotations

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.core.jsonvalue import JsonValue

# The keys the Lab's script writes (004 §3): a file with these and without the format's version is its output.
LAB_KEYS = frozenset({"environment", "configuration", "synthetic_model", "phases"})
CODE = "lab-measurement-unreadable"


def is_lab_output(data: JsonValue) -> bool:
    """Whether a JSON document has the shape of the Lab's `mesure_memoire.py measure` output."""
    if not isinstance(data, dict):
        return False
    keys = set(data)
    return "synthetic_model" in keys or ("schema_version" not in keys and {"environment", "configuration",
                                                                          "phases"} <= keys <= LAB_KEYS)


def _lacks(data: dict[str, JsonValue]) -> list[str]:
    """Each piece of a configuration's measurement the Lab's file does not hold, in words."""
    out = []
    if "schema_version" not in data:
        out.append('schema_version "1" (the measurement format\'s version)')
    if "model" not in data:
        what = "the Lab's synthetic MLP" if "synthetic_model" in data else "no named model"
        out.append(f"a model block naming the campaign's classifier (it measured {what})")
    phases = data.get("phases")
    listed = phases if isinstance(phases, list) else []
    undated = sum(1 for p in listed if not (isinstance(p, dict) and p.get("started_at") and p.get("ended_at")))
    if undated or not listed:
        out.append(f"started_at and ended_at on its phases ({undated} of {len(listed)} undated): nothing places its "
                   "runs after the registration, inside the window and before the deadline")
    env = data.get("environment")
    if not (isinstance(env, dict) and env.get("driver_version")):
        out.append("environment.driver_version (the Lab's script cannot see the driver)")
    return out


def lab_output_findings(rel: str, data: JsonValue, configurations: list[str]) -> list[Finding]:
    """One error on a linked measurement that is the Lab's output, naming what it lacks; none for another file."""
    if not isinstance(data, dict) or not is_lab_output(data):
        return []
    lacks = _lacks(data)
    names = ", ".join(configurations) or "its variant"
    return [make_finding(CODE, Severity.ERROR, rel,
                         f"{rel} is the output of the Lab's `mesure_memoire.py measure`, not a measurement of "
                         f"{names}: it lacks " + "; ".join(lacks), field="/", claimed="mesure_memoire.py measure",
                         recomputed="measurement.schema.json",
                         rule="a configuration's measurement is the format's own file: its model, its dated phases "
                              "and its environment, driver included",
                         fix=f"measure {names} with `gpu-audit campaign run` or `gpu-audit measure run`, which "
                             "write all of these, and link that file; record the driver with nvidia-smi or rocm-smi")]
