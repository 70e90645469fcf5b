"""The reference text classifier: hashed word and bigram embeddings, mean-pooled, then a linear layer."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import math
import random
import re
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generator.core.errors import EnvironmentProblemError, UsageError
from generator.core.metrics import compute_metric
from generator.core.system.safefiles import write_new_file

FORMAT = "gpu-audit-hashed-bow/1"
_WORD = re.compile(r"[a-z0-9]+")
DEFAULTS: dict[str, Any] = {"buckets": 16384, "dim": 48, "context": 512}


def _torch() -> Any:
    try:
        import torch  # noqa: PLC0415 - heavy, optional dependency
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken installation raising something else
        raise EnvironmentProblemError(f"PyTorch could not be imported ({type(exc).__name__}: {exc}); "
                                      "install torch to train or run the reference classifier") from None
    return torch


def tokenizer_revision(buckets: int, context: int) -> str:
    """Names the whole tokenisation: any change to it gives another revision."""
    return f"hashed-words-crc32-uni+bigram-v1-b{buckets}-c{context}"


def saved_tokenizer_revision(path: Path, context: int) -> str:
    """The tokenizer revision a saved model gets at this context, read on the CPU (its bucket count)."""
    try:
        saved = _torch().load(path, map_location="cpu", weights_only=True)
        return tokenizer_revision(int(saved["config"]["buckets"]), context)
    except Exception as exc:  # noqa: BLE001 - torch.load fails on a foreign file with any error
        raise UsageError(f"{path} is not a reference-classifier file ({type(exc).__name__}: {exc})") from None


def words(text: str, context: int) -> list[str]:
    """Lower-cased [a-z0-9]+ words; only the first `context` are kept (the registered truncation)."""
    return _WORD.findall(text.lower())[:context]


def features(text: str, buckets: int, context: int) -> list[int]:
    """Bucket ids of the unigrams and bigrams of the kept words; 0 is padding, so ids are 1..buckets-1.

    crc32, not hash(): Python's string hash changes between processes.
    """
    w = words(text, context)
    grams = w + [f"{a} {b}" for a, b in zip(w, w[1:], strict=False)]
    return [zlib.crc32(g.encode("utf-8")) % (buckets - 1) + 1 for g in grams] or [0]


def build_model(torch: Any, buckets: int, dim: int, n_classes: int) -> Any:
    """Embedding -> masked mean over the padded positions -> Linear."""

    class HashedBagClassifier(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = torch.nn.Embedding(buckets, dim, padding_idx=0)
            self.out = torch.nn.Linear(dim, n_classes)

        def forward(self, ids: Any) -> Any:
            mask = (ids != 0).unsqueeze(-1).to(self.embedding.weight.dtype)
            summed = (self.embedding(ids) * mask).sum(dim=1)
            pooled = summed / mask.sum(dim=1).clamp(min=1)
            return self.out(pooled)

    return HashedBagClassifier()


def pad(torch: Any, rows: Sequence[Sequence[int]]) -> Any:
    """Right-pad to the longest row of the batch (the registered padding policy)."""
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [0] * (width - len(r)) for r in rows], dtype=torch.long)


class ReferenceClassifier:
    """Batch-predict callable of the shipped weights: texts in, labels out, on the host."""

    def __init__(self, path: Path, device: str, dtype: str, context: int | None = None) -> None:
        torch = _torch()
        self._torch = torch
        blob = path.read_bytes()
        self.revision = "sha256:" + hashlib.sha256(blob).hexdigest()
        try:
            saved = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - torch.load fails on a foreign file with any error
            raise UsageError(f"{path} is not a reference-classifier file ({type(exc).__name__}: {exc})") from None
        if not isinstance(saved, dict) or saved.get("format") != FORMAT:
            raise UsageError(f"{path} is not a {FORMAT} file written by `gpu-audit campaign train`")
        cfg = saved["config"]
        self.classes: list[str] = list(saved["classes"])
        self.buckets, self.dim = int(cfg["buckets"]), int(cfg["dim"])
        self.context = int(context if context is not None else cfg["context"])
        self.tokenizer_revision = tokenizer_revision(self.buckets, self.context)
        self.name = f"reference classifier (hashed uni+bigram bag, {self.buckets}x{self.dim} embedding, linear)"
        model = build_model(torch, self.buckets, self.dim, len(self.classes))
        model.load_state_dict(saved["state_dict"])
        model.eval()
        self.parameter_count = sum(int(p.numel()) for p in model.parameters())
        self.device = torch.device(device)
        self.model = model.to(dtype=getattr(torch, dtype)).to(self.device)
        self.padding = "right, with bucket id 0, to the longest text of the batch (masked mean)"
        self.precision = f"{dtype}: weights cast to {dtype}, no autocast"

    def cut(self, texts: Sequence[str]) -> list[bool]:
        """Which texts the context truncates (more words than it keeps)."""
        return [len(_WORD.findall(t.lower())) > self.context for t in texts]

    def predict(self, texts: Sequence[str]) -> list[str]:
        """Tokenise, transfer, infer and bring the labels back to the host."""
        torch = self._torch
        ids = pad(torch, [features(t, self.buckets, self.context) for t in texts]).to(self.device)
        with torch.inference_mode():
            best = self.model(ids).argmax(dim=1).cpu().tolist()
        return [self.classes[i] for i in best]


# --------------------------------------------------------------------------- training


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Records of a JSON-lines corpus file."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def macro_f1(truth: Sequence[str], pred: Sequence[str]) -> float:
    """The tuning split's macro-F1, as the registry of metrics computes it (generator.core.metrics)."""
    return compute_metric("macro_f1", truth, pred)


def _predict_all(torch: Any, model: Any, feats: list[list[int]], batch: int) -> list[int]:
    out: list[int] = []
    model.eval()
    with torch.inference_mode():
        for i in range(0, len(feats), batch):
            out.extend(model(pad(torch, feats[i:i + batch])).argmax(dim=1).tolist())
    return out


def train(train_path: Path, tune_path: Path, seed: int, lrs: Sequence[float], epochs: int,
          buckets: int = DEFAULTS["buckets"], dim: int = DEFAULTS["dim"], context: int = DEFAULTS["context"],
          limit: int | None = None, minibatch: int = 64,
          bootstrap: int = 1000) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train on train_path only, choose (lr, epochs) by macro-F1 on tune_path only.

    Returns (the saved blob, the tuning report). Deterministic for a seed on one platform and PyTorch
    version: one thread, seeded generators, deterministic algorithms.
    """
    torch = _torch()
    if epochs < 1 or not lrs:
        raise UsageError("--epochs must be >= 1 and at least one learning rate given")
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    train_rows = read_jsonl(train_path)[:limit]
    tune_rows = read_jsonl(tune_path)[:limit]
    classes = sorted({r["label"] for r in train_rows})
    index = {c: i for i, c in enumerate(classes)}
    x_train = [features(r["text"], buckets, context) for r in train_rows]
    y_train = torch.tensor([index[r["label"]] for r in train_rows], dtype=torch.long)
    x_tune = [features(r["text"], buckets, context) for r in tune_rows]
    truth = [r["label"] for r in tune_rows]
    grid: list[dict[str, Any]] = []
    best: tuple[float, float, int, dict[str, Any]] | None = None
    for lr in lrs:
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        model = build_model(torch, buckets, dim, len(classes))
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        for epoch in range(1, epochs + 1):
            _epoch(torch, model, opt, x_train, y_train, gen, minibatch)
            score = macro_f1(truth, [classes[i] for i in _predict_all(torch, model, x_tune, 1)])
            grid.append({"lr": lr, "epochs": epoch, "tune_macro_f1": round(score, 6)})
            if best is None or score > best[0]:
                best = (score, lr, epoch, copy.deepcopy(model.state_dict()))
    assert best is not None
    _, lr, epoch, state = best
    model = build_model(torch, buckets, dim, len(classes))
    model.load_state_dict(state)
    pred = [classes[i] for i in _predict_all(torch, model, x_tune, 1)]
    sd = _bootstrap_sd(truth, pred, seed, bootstrap)
    config = {"buckets": buckets, "dim": dim, "context": context}
    blob = {"format": FORMAT, "config": config, "classes": classes,
            "state_dict": {k: v.contiguous() for k, v in state.items()}}
    report = {
        "format": FORMAT, "seed": seed, "config": config, "classes": classes,
        "train_file": train_path.name, "train_records": len(train_rows),
        "tune_file": tune_path.name, "tune_records": len(tune_rows),
        "optimizer": "Adam", "minibatch": minibatch, "learning_rates": list(lrs), "max_epochs": epochs,
        "grid": grid, "chosen": {"lr": lr, "epochs": epoch},
        "tune_macro_f1_fp32_batch1": round(macro_f1(truth, pred), 6),
        "tune_macro_f1_bootstrap": {"resamples": bootstrap, "sd": round(sd, 6)},
        "tokenizer_revision": tokenizer_revision(buckets, context),
    }
    return blob, report


def _epoch(torch: Any, model: Any, opt: Any, x_train: list[list[int]], y_train: Any, gen: Any, minibatch: int) -> None:
    """One pass over the training split in the generator's shuffled order, a minibatch per optimiser step."""
    model.train()
    order = torch.randperm(len(x_train), generator=gen).tolist()
    for i in range(0, len(order), minibatch):
        idx = order[i:i + minibatch]
        loss = torch.nn.functional.cross_entropy(model(pad(torch, [x_train[j] for j in idx])), y_train[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()


def _bootstrap_sd(truth: list[str], pred: list[str], seed: int, resamples: int) -> float:
    """Sampling spread of macro-F1 on the tuning split, to choose a tolerance before the evaluation."""
    rng = random.Random(seed)
    samples = []
    for _ in range(resamples):
        pick = [rng.randrange(len(truth)) for _ in truth]
        samples.append(macro_f1([truth[i] for i in pick], [pred[i] for i in pick]))
    mean = sum(samples) / len(samples)
    return math.sqrt(sum((s - mean) ** 2 for s in samples) / (len(samples) - 1)) if len(samples) > 1 else 0.0


def save(blob: dict[str, Any], path: Path) -> str:
    """Write the weights file (it must not exist), in full or not at all, and return its SHA-256."""
    torch = _torch()
    buffer = io.BytesIO()
    torch.save(blob, buffer)
    data = buffer.getvalue()
    write_new_file(path, data, what="model file")
    return hashlib.sha256(data).hexdigest()
