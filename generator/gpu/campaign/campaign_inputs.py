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
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator.core.errors import EnvironmentProblemError, UsageError
from generator.gpu.campaign.campaign_registered import Mistake, corpus_accepts, corpus_mistakes, refuse
from generator.gpu.campaign.corpus_folder import read_folder, read_texts
from generator.gpu.measure.environment import collect_environment, import_torch
from generator.gpu.measure.measure import DTYPES
from generator.gpu.models.loading import BatchModel

read_corpus = read_texts  # the timed chain's reading of the texts (eval.jsonl or eval.csv)


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
    further_corpora: tuple[Path, ...] = ()  # one folder per entry of the protocol's `corpora`, in its order


@dataclass
class CorpusData:
    """One corpus of the work, read from its folder: its texts file, revision, IDs in input order, reference, and
    where the campaign holds its expected IDs and reference."""

    path: Path
    revision: str
    ids: list[str]
    reference: dict[str, str]
    expected_ids_file: str
    reference_file: str


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
    corpora: list[CorpusData] = field(default_factory=list)  # the work: the first corpus, then `corpora`'s

    def settings(self, exp: dict[str, Any], variant: dict[str, Any]) -> Settings:
        """The variant's settings: its value for the declared variable, the experiment's fixed ones otherwise (the
        seed, when fixed.seed is null beside common seeds, the first of them: each run gets its own)."""
        values = {k: exp["fixed"].get(k) for k in ("batch", "precision", "context", "seed")}
        if values["seed"] is None and exp.get("seeds"):
            values["seed"] = exp["seeds"][0]
        values["gpu_count"] = exp["fixed"].get("gpu_count", 1)
        values[exp["variable"]] = variant["value"]
        return Settings(batch=int(values["batch"]), precision=str(values["precision"]),
                        context=int(values["context"]), seed=int(values["seed"]), gpu_count=int(values["gpu_count"]))

    def run(self, exp: dict[str, Any], variant: dict[str, Any], phase: str,
            run_index: int) -> tuple[Settings, CorpusData]:
        """The settings and corpus of one attempt. Run indexes count a variant's runs on the first corpus under each
        common seed in turn, then on each further corpus alike (five warm runs under two seeds on two corpora: 1-5
        seed A and 6-10 seed B on the first corpus, 11-15 seed A and 16-20 seed B on the second)."""
        runs = int(exp["runs_per_variant"] if phase == "warm" else exp["cold_runs_per_variant"])
        seeds = exp.get("seeds") or [None]
        k = run_index - 1
        corpus = self.corpora[min(k // (runs * len(seeds)), len(self.corpora) - 1)]
        seed = seeds[(k // runs) % len(seeds)]
        st = self.settings(exp, variant)
        return (st if seed is None else replace(st, seed=int(seed))), corpus


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


def read_corpus_folder(folder: Path, entry: dict[str, Any], pointer: str) -> CorpusData:
    """One further corpus folder (eval.jsonl or eval.csv, eval-reference.csv) read and checked against the entry of
    the protocol's `corpora` at `pointer`: its revision names the folder's content and its size counts its texts,
    or one line each says the value to set."""
    corpus = read_folder(folder)
    registered, size = entry.get("revision"), entry.get("size")
    mistakes = []
    accepts = corpus_accepts(registered, corpus.fingerprint, corpus.texts_file) if isinstance(registered, str) else None
    if not accepts:
        mistakes.append(Mistake(f"the content fingerprint of {folder} (its expected IDs and reference labels)",
                                (f"{pointer}/revision",), (registered,), corpus.fingerprint,
                                placeholder=accepts is None))
    if size != len(corpus.ids):
        mistakes.append(Mistake(f"the number of texts in {corpus.texts_file}", (f"{pointer}/size",), (size,),
                                len(corpus.ids), placeholder=not isinstance(size, int)))
    refuse(mistakes)
    return CorpusData(corpus.texts_file, str(registered), corpus.ids, corpus.reference, entry["expected_ids"],
                      entry["reference"])


def _corpora(protocol: dict[str, Any], config: CampaignConfig) -> list[CorpusData]:
    """The work's corpora: --corpus for the protocol's `corpus` (its revision, size and each experiment's
    fixed.corpus_revision checked at once), then one --corpus per entry of `corpora`."""
    further = list(protocol.get("corpora") or [])
    if len(further) != len(config.further_corpora):
        raise UsageError(f"the protocol's work is {1 + len(further)} corpora (corpus and {len(further)} in corpora), "
                         f"but {1 + len(config.further_corpora)} --corpus folder(s) were given: give one --corpus "
                         "per corpus, the protocol's corpus first, then those of corpora in their order")
    files = protocol["files"]
    first = read_folder(config.corpus)
    refuse(corpus_mistakes(protocol, first, config.corpus))
    out = [CorpusData(first.texts_file, str(protocol["corpus"]["revision"]), first.ids, first.reference,
                      files["expected_ids"], files["reference"])]
    for i, (entry, folder) in enumerate(zip(further, config.further_corpora, strict=True)):
        out.append(read_corpus_folder(folder, entry, f"/corpora/{i}"))
    return out


def make_plan(config: CampaignConfig, raw: bytes | None = None) -> Plan:
    """Read and cross-check the protocol (`raw`, else the file), corpora and references; raise UsageError before
    anything runs."""
    try:
        raw = config.protocol.read_bytes() if raw is None else raw
        protocol = json.loads(raw.decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the protocol {config.protocol}: {exc}") from None
    try:
        exps = protocol["experiments"]
        fixed = exps[0]["fixed"]
        classes = list(protocol["classes"])
        corpora = _corpora(protocol, config)
    except (KeyError, IndexError, TypeError, ValueError, OSError) as exc:
        raise UsageError(f"the protocol or corpus lacks a required part ({type(exc).__name__}: {exc})") from None
    unlisted = sorted({label for c in corpora for label in c.reference.values()} - set(classes))
    if unlisted:
        raise UsageError(f"the reference labels {', '.join(map(repr, unlisted[:5]))} are not among the protocol's "
                         f"classes: add them to /classes (it lists {json.dumps(classes, ensure_ascii=False)})")
    first = corpora[0]
    for exp in exps:
        _check_experiment(exp, fixed, len(corpora))
        experiment_rental(protocol, exp)  # a shared rental's id names one the protocol lists
    plan = Plan(protocol=protocol, protocol_bytes=raw, corpus_path=first.path, corpus_revision=first.revision,
                ids=first.ids, reference=first.reference, classes=classes, experiments=exps,
                subgroups=_subgroups(protocol, config.corpus, set(first.ids)), corpora=corpora)
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


def registered_variants(exp: dict[str, Any]) -> list[dict[str, Any]]:
    """The variants of the registered series: all but the resume variants, which run only to resume."""
    return [v for v in exp["variants"] if "resume" not in v]


def attempts(exp: dict[str, Any], phase: str, corpora: int) -> int:
    """A variant's registered attempts of one phase: its runs under each common seed on each corpus (run_index 1 to
    this number), as `check` counts them."""
    runs = int(exp["runs_per_variant"] if phase == "warm" else exp["cold_runs_per_variant"])
    return runs * len(exp.get("seeds") or [None]) * corpora


def _check_resumes(exp: dict[str, Any]) -> None:
    """A resume variant resumes another, registered variant of its experiment, with its value, on one GPU."""
    by_id = {v["id"]: v for v in registered_variants(exp)}
    for v in (v for v in exp["variants"] if "resume" in v):
        of = v["resume"].get("of") if isinstance(v["resume"], dict) else None
        if of not in by_id or by_id[of]["value"] != v["value"]:
            raise UsageError(f"experiment {exp['id']!r} variant {v['id']!r}: resume.of must name another variant "
                             "of the experiment that is no resume variant, and the value must be that variant's")
        if int(exp["fixed"].get("gpu_count", 1)) > 1 or (exp["variable"] == "gpu_count" and int(v["value"]) > 1):
            raise UsageError(f"experiment {exp['id']!r} variant {v['id']!r}: `campaign run` resumes attempts on one "
                             "GPU only; register the resume variant of a gpu_count 1 variant")


def _check_experiment(exp: dict[str, Any], fixed: dict[str, Any], corpora: int) -> None:
    """Refuse, before any work, what `campaign run` does not do."""
    if exp.get("variable") not in VARIABLES:
        raise UsageError(f"experiment {exp.get('id')!r}: the declared variable must be one of {', '.join(VARIABLES)}, "
                         f"not {exp.get('variable')!r}")
    seeds = exp.get("seeds")
    if seeds is not None and (not seeds or not all(isinstance(x, int) and not isinstance(x, bool) for x in seeds)):
        raise UsageError(f"experiment {exp['id']!r}: seeds must list whole numbers")
    _check_resumes(exp)
    if exp.get("cold_runs_per_variant") not in (0, 1):
        raise UsageError(f"experiment {exp['id']!r}: cold_runs_per_variant must be 0 or 1")
    if any(exp["fixed"].get(k) != fixed.get(k) for k in SHARED):
        raise UsageError(f"every experiment must hold the same {', '.join(SHARED)} (one model, one corpus)")
    order = exp.get("order", "rotated")
    if order == "drawn":
        seq, ids = exp.get("drawn_sequence") or [], [v["id"] for v in registered_variants(exp)]
        if sorted(seq) != sorted(ids * attempts(exp, "warm", corpora)):
            raise UsageError(f"experiment {exp['id']!r}: order drawn needs drawn_sequence naming each variant "
                             "runs_per_variant times under each common seed and on each corpus "
                             f"({attempts(exp, 'warm', corpora)} times; a resume variant never)")
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


def experiment_rental(protocol: dict[str, Any], exp: dict[str, Any]) -> dict[str, Any]:
    """The experiment's rental: its own (an object), or the one of the protocol's `rentals` whose id it names."""
    named, what = exp.get("rental"), json.dumps(exp.get("id"), ensure_ascii=False)
    if isinstance(named, dict):
        return named
    if not isinstance(named, str):  # absent or not a name: no entry of `rentals` may match it by accident
        raise UsageError(f"experiment {what} has no rental: write its own rental (gpu, duration_days, lots) or the "
                         "id of one listed in the protocol's rentals")
    listed = [r for r in protocol.get("rentals") or [] if isinstance(r, dict) and r.get("id") == named]
    if len(listed) != 1:
        ids = ", ".join(json.dumps(r.get("id"), ensure_ascii=False) for r in protocol.get("rentals") or []
                        if isinstance(r, dict)) or "none"
        raise UsageError(f"experiment {what}: rental {json.dumps(named, ensure_ascii=False)} names no single rental "
                         f"of the protocol's rentals (listed: {ids}); list it there with that id, or write the "
                         "experiment's own rental")
    return listed[0]
