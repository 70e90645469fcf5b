"""The campaign process's state: its plan, the models loaded, the lot's helper ranks, and one timed attempt."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.core.errors import EnvironmentProblemError
from generator.gpu.campaign.campaign_inputs import CampaignConfig, Plan, Settings, classify, read_corpus
from generator.gpu.campaign.campaign_rows import WARMUP_TEXTS, truncation
from generator.gpu.campaign.lot import Lot, lot_devices, sharded_phase
from generator.gpu.measure.environment import lot_environment
from generator.gpu.measure.phases import run_phase
from generator.gpu.models.loading import BatchModel, load_model


@dataclass
class Loaded:
    """A model loaded for one (precision, context): its model_load phase and the truncation it applies."""

    model: BatchModel
    load_row: dict[str, Any]
    truncation: dict[str, Any]


@dataclass
class Session:
    """The campaign process's run: its plan, the models loaded and counters, and the folder being written."""

    plan: Plan
    config: CampaignConfig
    torch: Any
    counters: Any
    env: dict[str, Any]
    tmp: Path
    models: dict[tuple[str, int], Loaded] = field(default_factory=dict)
    lot: Lot | None = None  # the helper ranks of a data-parallel run, when a variant uses several GPUs
    lot_models: dict[tuple[str, int], int] = field(default_factory=dict)  # the ranks that hold each model

    def loaded(self, st: Settings, fresh: bool = False) -> Loaded:
        """The model for these settings, loaded (and its load timed) the first time they are needed, or again when
        `fresh` (a variant's own model_load; the new copy replaces the old). One model per (precision, context)
        stays in memory, so a variant's baseline counts the weights of the others loaded before it."""
        key = (st.precision, st.context)
        if fresh or key not in self.models:
            self.torch.manual_seed(st.seed)
            row, model = run_phase(self.torch, self.counters, "model_load", lambda: self._load(st))
            if model is None:
                raise EnvironmentProblemError(f"the model could not be loaded on {self.config.device} "
                                              f"({st.precision}, context {st.context}): {row['error']}")
            old = self.models.pop(key, None)
            self.models[key] = Loaded(model, row, old.truncation if old else truncation(self.plan, model, st.context))
        elif st.gpu_count > self.lot_models.get(key, 1):
            self._load_helpers(st)
        return self.models[key]

    def _load(self, st: Settings) -> BatchModel:
        """Rank 0's model, and the helpers' when the settings use several GPUs (timed together as model_load)."""
        model = load_model(self.config.model, self.config.device, st.precision, st.context)
        if st.gpu_count > 1:
            self._load_helpers(st)
        return model

    def _load_helpers(self, st: Settings) -> None:
        assert self.lot is not None  # started before the first experiment when a variant uses several GPUs
        self.lot.load(st)
        self.lot_models[(st.precision, st.context)] = st.gpu_count

    def environment(self, st: Settings) -> dict[str, Any]:
        """The environment a variant's rows and measurement record: with several GPUs, each of them."""
        return lot_environment(self.torch, self.env, lot_devices(self.config.device, st.gpu_count))

    def timed_pass(self, loaded: Loaded, st: Settings, corpus: Path, name: str, repeat: int | None,
                   skip: frozenset[str] = frozenset()) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """One attempt over `corpus` (its texts but those `skip` names, for a resumption): on rank 0 alone, or
        sharded over the lot's GPUs (never a resumption: `campaign run` resumes on one GPU)."""
        if st.gpu_count > 1 and self.lot is not None:
            return sharded_phase(self.torch, self.counters, self.lot, name, loaded.model, corpus, st, repeat=repeat)
        return timed_run(self.torch, self.counters, loaded.model, corpus, st.batch, name, repeat, skip)

    def warmup(self, loaded: Loaded, st: Settings, iterations: int) -> dict[str, Any]:
        """The registered warm-up, on rank 0 alone or sharded like the runs it prepares."""
        if st.gpu_count > 1 and self.lot is not None:
            row, _ = sharded_phase(self.torch, self.counters, self.lot, "warmup", loaded.model, self.plan.corpus_path,
                                   st, passes=iterations, limit=WARMUP_TEXTS)
            return row
        return warmup_phase(self.torch, self.counters, loaded.model, self.plan.corpus_path, st.batch, iterations)


def corpus_pass(model: BatchModel, corpus_file: Path, batch: int, done: list[tuple[str, str]],
                limit: int | None = None, skip: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """The timed chain: read the corpus, then tokenise, transfer, infer, labels on the host, batch by batch (the
    texts `skip` names left out: those an interrupted attempt completed before its resumption)."""
    ids, texts = read_corpus(corpus_file, limit)
    if skip:
        kept = [(i, t) for i, t in zip(ids, texts, strict=True) if i not in skip]
        ids, texts = [i for i, _ in kept], [t for _, t in kept]
    return classify(model, ids, texts, batch, done)


def timed_run(torch: Any, counters: Any, model: BatchModel, corpus_file: Path, batch: int, name: str,
              repeat: int | None, skip: frozenset[str] = frozenset()) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """One attempt measured as a phase (synchronised start and stop, baselines, reset and absolute peaks)."""
    done: list[tuple[str, str]] = []
    row, _ = run_phase(torch, counters, name, lambda: corpus_pass(model, corpus_file, batch, done, skip=skip),
                       repeat=repeat)
    return row, done


def warmup_phase(torch: Any, counters: Any, model: BatchModel, corpus_file: Path, batch: int,
            iterations: int) -> dict[str, Any]:
    """The registered warm-up, timed as one phase: `iterations` passes over the corpus's first texts."""
    def fn() -> None:
        for _ in range(iterations):
            corpus_pass(model, corpus_file, batch, [], limit=WARMUP_TEXTS)
    row, _ = run_phase(torch, counters, "warmup", fn, iterations=iterations)
    return row
