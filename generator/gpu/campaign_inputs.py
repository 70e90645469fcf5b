"""What `campaign run` reads and checks before anything runs: the protocol, the corpus, the model and the GPU.

Model interface (`--model`), loaded once per (precision, context) the protocol runs:
- a Hugging Face model directory (`hfmodel`: sequence classification, or sentence embedding with a head file);
- a file written by `gpu-audit campaign train` (the shipped reference classifier);
- `module:function`, a batch function ``function(texts: list[str]) -> list[str]`` (it may also take the keywords
  ``device``, ``dtype`` and ``context``, given when it names them; its optional attributes ``name``, ``revision``,
  ``tokenizer_revision`` and ``parameter_count`` describe it, the revision being otherwise the SHA-256 of its
  module's source file), or a factory ``function(device, dtype, context)`` (only those keywords) returning an
  object with ``predict(texts) -> list[str]`` and those four attributes.
A model may also offer ``cut(texts) -> list[bool]`` (which texts its context truncates), ``padding`` and
``precision`` (how it pads and what the dtype does): recorded when present.
"""

from __future__ import annotations

import csv
import importlib
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from generator.core.errors import EnvironmentProblemError, UsageError
from generator.core.safefiles import sha256_file
from generator.gpu.campaign_registered import corpus_mistakes, refuse
from generator.gpu.corpus_folder import read_folder, read_texts
from generator.gpu.environment import collect_environment, import_torch
from generator.gpu.measure import DTYPES

read_corpus = read_texts  # the timed chain's reading of the texts (eval.jsonl or eval.csv)


class BatchModel(Protocol):
    """What `--model` must provide."""

    name: str
    revision: str
    tokenizer_revision: str
    parameter_count: int

    def predict(self, texts: Sequence[str]) -> list[str]: ...


@dataclass(frozen=True)
class Settings:
    """What one variant runs with: the declared variable's value, the rest held fixed."""

    batch: int
    precision: str
    context: int
    seed: int
    gpu_count: int = 1  # the lot's GPUs the pass is sharded over (data-parallel from 2)


@dataclass(frozen=True)
class Subgroup:
    """A planned subgroup: its id, its IDs file (relative to the campaign and to --corpus) and its IDs."""

    id: str
    ids_file: str
    ids: tuple[str, ...]


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
    experiments: list[dict[str, Any]] = field(default_factory=list)
    subgroups: list[Subgroup] = field(default_factory=list)

    def settings(self, exp: dict[str, Any], variant: dict[str, Any]) -> Settings:
        """The variant's settings: its value for the declared variable, the experiment's fixed ones otherwise."""
        values = {k: exp["fixed"].get(k) for k in ("batch", "precision", "context", "seed")}
        values["gpu_count"] = exp["fixed"].get("gpu_count", 1)
        values[exp["variable"]] = variant["value"]
        return Settings(batch=int(values["batch"]), precision=str(values["precision"]),
                        context=int(values["context"]), seed=int(values["seed"]), gpu_count=int(values["gpu_count"]))


def corpus_revision(corpus_file: Path) -> str:
    """The content fingerprint of the corpus whose texts file this is (`content-sha256:<64 hex>` of its expected
    IDs and the reference labels beside it): the value `check` recomputes from the campaign folder."""
    return read_folder(corpus_file.parent).fingerprint


def classify(model: BatchModel, ids: list[str], texts: list[str], batch: int,
             done: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Tokenise, transfer, infer and bring the labels to the host, batch by batch, into `done` (so an attempt that
    fails midway still knows what it completed). A user model's own error becomes a RuntimeError: an attempt
    failure, not a crash."""
    for i in range(0, len(ids), batch):
        try:
            labels = model.predict(texts[i:i + batch])
        except RuntimeError:
            raise
        except Exception as exc:
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc
        if len(labels) != len(ids[i:i + batch]):
            raise RuntimeError(f"the model returned {len(labels)} labels for {len(ids[i:i + batch])} texts")
        done.extend(zip(ids[i:i + batch], (str(x) for x in labels), strict=True))
    return done


def make_plan(config: CampaignConfig, raw: bytes | None = None) -> Plan:
    """Read and cross-check the protocol (`raw`, else the file), corpus and reference; raise UsageError before
    anything runs."""
    try:
        raw = config.protocol.read_bytes() if raw is None else raw
        protocol = json.loads(raw.decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the protocol {config.protocol}: {exc}") from None
    corpus = read_folder(config.corpus)
    ids, reference = corpus.ids, corpus.reference
    try:
        exps = protocol["experiments"]
        fixed = exps[0]["fixed"]
        classes = list(protocol["classes"])
        refuse(corpus_mistakes(protocol, corpus, config.corpus))
        revision = str(protocol["corpus"]["revision"])
    except (KeyError, IndexError, TypeError, ValueError, OSError) as exc:
        raise UsageError(f"the protocol or corpus lacks a required part ({type(exc).__name__}: {exc})") from None
    if protocol.get("corpora"):
        raise UsageError("several corpora (corpora) are not supported: `campaign run` processes the one corpus it is "
                         "given; run each corpus's series with its own protocol")
    unlisted = sorted(set(reference.values()) - set(classes))
    if unlisted:
        raise UsageError(f"the reference labels {', '.join(map(repr, unlisted[:5]))} are not among the protocol's "
                         f"classes: add them to /classes (it lists {json.dumps(classes, ensure_ascii=False)})")
    for exp in exps:
        _check_experiment(exp, fixed)
    plan = Plan(protocol=protocol, protocol_bytes=raw, corpus_path=corpus.texts_file, corpus_revision=revision, ids=ids,
                reference=reference, classes=classes, experiments=exps,
                subgroups=_subgroups(protocol, config.corpus, set(ids)))
    for exp in exps:
        for v in exp["variants"]:
            try:
                st = plan.settings(exp, v)
            except (TypeError, ValueError) as exc:
                raise UsageError(f"experiment {exp['id']!r} variant {v.get('id')!r}: batch, context, seed and "
                                 f"gpu_count must be whole numbers, fixed unless declared ({exc})") from None
            if st.precision not in DTYPES:
                raise UsageError(f"experiment {exp['id']!r} variant {v['id']!r}: precision must be one of "
                                 f"{', '.join(DTYPES)}, got {st.precision!r}")
            if st.batch < 1 or st.context < 1 or st.gpu_count < 1:
                raise UsageError(f"experiment {exp['id']!r} variant {v['id']!r}: batch, context and gpu_count must "
                                 "be >= 1")
    return plan


VARIABLES = ("batch", "precision", "context", "seed", "gpu_count")
SHARED = ("corpus_revision", "model_revision", "tokenizer_revision", "input_order")


def _check_experiment(exp: dict[str, Any], fixed: dict[str, Any]) -> None:
    """Refuse, before any work, what `campaign run` does not do."""
    if exp.get("variable") not in VARIABLES:
        raise UsageError(f"experiment {exp.get('id')!r}: the declared variable must be one of {', '.join(VARIABLES)}, "
                         f"not {exp.get('variable')!r}")
    if exp.get("seeds"):
        raise UsageError(f"experiment {exp['id']!r}: common seeds (seeds) are not supported; run each seed's "
                         "series with its own protocol")
    if any("resume" in v for v in exp.get("variants", [])):
        raise UsageError(f"experiment {exp.get('id')!r}: a resume variant's attempts resume interrupted ones, "
                         "which `campaign run` does not do; register it in a protocol of its own")
    if exp.get("cold_runs_per_variant") not in (0, 1):
        raise UsageError(f"experiment {exp['id']!r}: cold_runs_per_variant must be 0 or 1")
    if any(exp["fixed"].get(k) != fixed.get(k) for k in SHARED):
        raise UsageError(f"every experiment must hold the same {', '.join(SHARED)} (one model, one corpus)")
    order = exp.get("order", "rotated")
    if order == "drawn":
        seq, ids = exp.get("drawn_sequence") or [], [v["id"] for v in exp["variants"]]
        if sorted(seq) != sorted(ids * int(exp["runs_per_variant"])):
            raise UsageError(f"experiment {exp['id']!r}: order drawn needs drawn_sequence naming each variant "
                             "runs_per_variant times")
    elif order != "rotated":
        raise UsageError(f"experiment {exp['id']!r}: the order must be rotated or drawn, not {order!r}")


def _subgroups(protocol: dict[str, Any], corpus: Path, ids: set[str]) -> list[Subgroup]:
    """The planned subgroups' ID files, read from --corpus at the path the protocol names (copied into the
    campaign)."""
    out = []
    for g in protocol["quality"].get("subgroups") or []:
        path = corpus / g["ids"]
        try:
            with path.open(encoding="utf-8-sig", newline="") as fh:
                members = tuple(r["id"] for r in csv.DictReader(fh))
        except (OSError, KeyError, UnicodeDecodeError, csv.Error) as exc:
            raise UsageError(f"subgroup {g['id']!r}: cannot read {path} (a CSV with the header id, at the path "
                             f"quality.subgroups[].ids names, inside --corpus): {exc}") from None
        if not set(members) <= ids:
            raise UsageError(f"subgroup {g['id']!r}: {path} names IDs that are not in the corpus")
        out.append(Subgroup(id=str(g["id"]), ids_file=str(g["ids"]), ids=members))
    return out



def load_model(spec: str, device: str, dtype: str, context: int) -> BatchModel:
    """A model directory, a reference-classifier file, or `module:function` (a batch function or a factory)."""
    path = Path(spec)
    if path.is_dir():
        from generator.gpu import hfmodel  # noqa: PLC0415 - imports transformers

        return hfmodel.HFClassifier(path, device, dtype, context)
    if path.is_file():
        from generator.gpu import textclf  # noqa: PLC0415

        return textclf.ReferenceClassifier(path, device, dtype, context)
    if ":" not in spec:
        raise UsageError(f"--model {spec!r} is neither a model directory, a file nor module:function")
    module, _, func = spec.partition(":")
    try:
        mod = importlib.import_module(module)
        fn = getattr(mod, func)
        params = inspect.signature(fn).parameters
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        raise UsageError(f"--model {spec!r} cannot be loaded ({type(exc).__name__}: {exc})") from None
    keywords = {"device": device, "dtype": dtype, "context": context}
    if params and set(params) <= set(keywords):
        model: BatchModel = fn(**keywords)  # the factory form
        return model
    return EntryPoint(spec, fn, {k: v for k, v in keywords.items() if k in params}, getattr(mod, "__file__", None))


class EntryPoint:
    """A batch function `module:function` as a model: texts in, labels out; described by its attributes."""

    def __init__(self, spec: str, fn: Callable[..., Sequence[str]], keywords: dict[str, Any],
                 source: str | None) -> None:
        self._fn, self._keywords = fn, keywords
        self.name = str(getattr(fn, "name", f"entry point {spec}"))
        default = "sha256:" + sha256_file(Path(source)) if source and Path(source).is_file() else spec
        self.revision = str(getattr(fn, "revision", default))
        self.tokenizer_revision = str(getattr(fn, "tokenizer_revision", f"{spec} (tokenises itself)"))
        self.parameter_count = int(getattr(fn, "parameter_count", 0))
        cut = getattr(fn, "cut", None)
        if callable(cut):
            self.cut = cut
        for attr in ("padding", "precision"):
            if isinstance(getattr(fn, attr, None), str):
                setattr(self, attr, getattr(fn, attr))

    def predict(self, texts: Sequence[str]) -> list[str]:
        return [str(x) for x in self._fn(list(texts), **self._keywords)]


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

