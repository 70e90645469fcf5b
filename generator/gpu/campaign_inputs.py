"""What `campaign run` reads and checks before anything runs: the protocol, the corpus, the model and the GPU.

Model interface (`--model`):
- a file written by `gpu-audit campaign train` (the shipped reference classifier), or
- `module:function`: ``function(device: str, dtype: str, context: int)`` returns an object with
  ``predict(texts: Sequence[str]) -> list[str]`` (tokenise, transfer, infer and return the labels on the host)
  and the attributes ``name``, ``revision``, ``tokenizer_revision`` (strings) and ``parameter_count`` (int).
"""

from __future__ import annotations

import csv
import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from generator.core.errors import EnvironmentProblemError, UsageError
from generator.core.safefiles import sha256_file
from generator.gpu.environment import collect_environment, import_torch
from generator.gpu.measure import DTYPES

CORPUS_FILE, REFERENCE_FILE = "eval.jsonl", "eval-reference.csv"


class BatchModel(Protocol):
    """What `--model` must provide."""

    name: str
    revision: str
    tokenizer_revision: str
    parameter_count: int

    def predict(self, texts: Sequence[str]) -> list[str]: ...


@dataclass(frozen=True)
class CampaignConfig:
    """The command line of `campaign run`."""

    protocol: Path
    model: str
    corpus: Path
    device: str
    out: Path
    allow_cpu_for_tests: bool = False


@dataclass
class Plan:
    """The protocol, corpus and reference read and cross-checked, and the settings every experiment shares."""

    protocol: dict[str, Any]
    protocol_bytes: bytes
    corpus_path: Path
    corpus_revision: str
    ids: list[str]
    reference: dict[str, str]
    classes: list[str]
    precision: str
    context: int
    seed: int
    experiments: list[dict[str, Any]] = field(default_factory=list)


def corpus_revision(corpus_file: Path) -> str:
    """The revision string the protocol registers: the name and the start of the file's SHA-256."""
    return "debian-descriptions-eval@sha256:" + sha256_file(corpus_file)[:16]


def read_corpus(path: Path) -> tuple[list[str], list[str]]:
    """IDs and texts of a JSON-lines corpus, in file order (the registered input order)."""
    ids, texts = [], []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                ids.append(str(record["id"]))
                texts.append(str(record["text"]))
    return ids, texts


def make_plan(config: CampaignConfig) -> Plan:
    """Read and cross-check the protocol, corpus and reference; raise UsageError before anything runs."""
    try:
        raw = config.protocol.read_bytes()
        protocol = json.loads(raw.decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the protocol {config.protocol}: {exc}") from None
    corpus_file, ref_file = config.corpus / CORPUS_FILE, config.corpus / REFERENCE_FILE
    for f in (corpus_file, ref_file):
        if not f.is_file():
            raise UsageError(f"{f} is missing: --corpus must hold {CORPUS_FILE} and {REFERENCE_FILE}")
    try:
        revision = corpus_revision(corpus_file)
        ids, _ = read_corpus(corpus_file)
        with ref_file.open(encoding="utf-8-sig", newline="") as fh:
            reference = {r["id"]: r["label"] for r in csv.DictReader(fh)}
        exps = protocol["experiments"]
        fixed = exps[0]["fixed"]
        classes = list(protocol["classes"])
        registered = protocol["corpus"]["revision"]
    except (KeyError, IndexError, TypeError, ValueError, OSError) as exc:
        raise UsageError(f"the protocol or corpus lacks a required part ({type(exc).__name__}: {exc})") from None
    if registered != revision:
        raise UsageError(f"the corpus {corpus_file} has revision {revision}, the protocol registers {registered}")
    if protocol.get("corpora"):
        raise UsageError("several corpora (corpora) are not supported: `campaign run` processes the one corpus it is "
                         "given; run each corpus's series with its own protocol")
    if len(set(ids)) != len(ids) or set(ids) != set(reference):
        raise UsageError(f"{CORPUS_FILE} and {REFERENCE_FILE} do not hold the same unique IDs")
    for exp in exps:
        if exp.get("variable") != "batch":
            raise UsageError(f"experiment {exp.get('id')!r}: only the declared variable `batch` is supported")
        if exp.get("seeds"):
            raise UsageError(f"experiment {exp['id']!r}: common seeds (seeds) are not supported; run each seed's "
                             "series with its own protocol")
        if any("resume" in v for v in exp.get("variants", [])):
            raise UsageError(f"experiment {exp.get('id')!r}: a resume variant's attempts resume interrupted ones, "
                             "which `campaign run` does not do; register it in a protocol of its own")
        if exp.get("cold_runs_per_variant") not in (0, 1):
            raise UsageError(f"experiment {exp['id']!r}: cold_runs_per_variant must be 0 or 1")
        if exp["fixed"] != fixed:
            raise UsageError("every experiment must hold the same fixed settings (one model, one precision)")
        if exp.get("order", "rotated") != "rotated":
            raise UsageError(f"experiment {exp['id']!r}: only the rotated order is supported")
    if fixed.get("precision") not in DTYPES:
        raise UsageError(f"fixed.precision must be one of {', '.join(DTYPES)}, got {fixed.get('precision')!r}")
    return Plan(protocol=protocol, protocol_bytes=raw, corpus_path=corpus_file, corpus_revision=revision, ids=ids,
                 reference=reference, classes=classes, precision=fixed["precision"], context=int(fixed["context"]),
                 seed=int(fixed["seed"]), experiments=exps)


def load_model(spec: str, device: str, dtype: str, context: int) -> BatchModel:
    """A reference-classifier file, or `module:function` called as function(device=, dtype=, context=)."""
    path = Path(spec)
    if path.is_file():
        from generator.gpu import textclf  # noqa: PLC0415

        return textclf.ReferenceClassifier(path, device, dtype, context)
    if ":" not in spec:
        raise UsageError(f"--model {spec!r} is neither a file nor module:function")
    module, _, func = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"--model {spec!r} cannot be loaded ({type(exc).__name__}: {exc})") from None
    return factory(device=device, dtype=dtype, context=context)


def campaign_environment(config: CampaignConfig) -> tuple[Any, dict[str, Any]]:
    """torch and the environment seen; refuse a machine without the GPU unless the CPU test flag allows it."""
    torch, reason = import_torch()
    if torch is None:
        raise EnvironmentProblemError(f"cannot run the campaign: {reason}. No file was written")
    if config.device == "cpu":
        if not config.allow_cpu_for_tests:
            raise UsageError("--device cpu is refused: campaigns are measured on a GPU (cuda:N); "
                             "--allow-cpu-for-tests exists for the test suite only")
        env = collect_environment("cuda:0", devices_used=0)
        env.update(device="cpu", gpu_available=False, gpu_name=None, gpu_total_memory_bytes=None,
                   unavailable_reason=env["unavailable_reason"] or "CPU test run: no GPU used")
        return torch, env
    env = collect_environment(config.device, devices_used=1)
    if not env["gpu_available"]:
        raise EnvironmentProblemError(f"cannot run the campaign on {config.device}: {env['unavailable_reason']}. "
                                      "Nothing runs on the CPU instead, and no file was written")
    return torch, env

