"""`campaign run` with the models a team brings: a tiny transformer directory, `module:function`, each variable,
the drawn order and an out-of-memory batch, every campaign checked by `gpu-audit check` (CPU only, no download)."""

from __future__ import annotations

import copy
import csv
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from test_campaign_run import errors, run_times_registered_now  # noqa: E402 (the same registration and check)

from generator.audit.load.readers.grid import row_outcome  # noqa: E402
from generator.audit.validate.registered import incident_findings  # noqa: E402
from generator.gpu.campaign import campaign_run  # noqa: E402
from generator.gpu.models import hfmodel  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "inputs" / "corpora" / "debian-descriptions"
N = 24
CLASSES = ["admin", "games", "graphics", "net", "science", "sound", "text", "utils"]
ENTRY = '''
import torch

def classify(texts):
    return ["admin" for _ in texts]

def greedy(texts):
    # batches holding a long text run "out of memory": a batch of 1 never does
    if len(texts) > 1 and any(len(t.split()) > 40 for t in texts):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    return ["admin" for _ in texts]

def plain_oom(texts):
    if len(texts) > 1 and any(len(t.split()) > 40 for t in texts):
        raise RuntimeError("CUDA error: out of memory")
    return ["admin" for _ in texts]
'''


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A 24-text corpus with short/medium/long subgroups, a tiny random BERT classifier directory, and an entry-point
    module."""
    root = tmp_path_factory.mktemp("models")
    corpus = root / "corpus"
    (corpus / "subgroups").mkdir(parents=True)
    records = [json.loads(x) for x in (CORPUS / "eval.jsonl").read_text(encoding="utf-8").splitlines()[:N]]
    (corpus / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with (CORPUS / "eval-reference.csv").open(encoding="utf-8", newline="") as fh:
        ref = list(csv.reader(fh))[: N + 1]
    with (corpus / "eval-reference.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(ref)
    groups: dict[str, list[str]] = {"short": [], "medium": [], "long": []}
    for r in records:
        n = len(r["text"].split())
        groups["short" if n <= 20 else "medium" if n <= 40 else "long"].append(str(r["id"]))
    assert all(groups.values()), {k: len(v) for k, v in groups.items()}
    for name, ids in groups.items():
        (corpus / "subgroups" / f"{name}.csv").write_text("id\n" + "".join(i + "\n" for i in ids), encoding="utf-8")
    words = sorted({w for r in records for w in re.findall(r"[a-z0-9]+|[^a-z0-9\s]", r["text"].lower())})
    model = root / "tiny-bert"
    model.mkdir()
    vocab = model / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n", encoding="utf-8")
    transformers.BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(str(model))
    config = transformers.BertConfig(vocab_size=len(words) + 5, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=128,
                                     num_labels=len(CLASSES), id2label=dict(enumerate(CLASSES)),
                                     label2id={c: i for i, c in enumerate(CLASSES)},
                                     architectures=["BertForSequenceClassification"])
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(config).save_pretrained(str(model))
    module = root / "entry"
    module.mkdir()
    (module / "tinyentry.py").write_text(ENTRY, encoding="utf-8")
    return {"root": root, "corpus": corpus, "model": model, "entry": module / "tinyentry.py", "groups": groups}


def protocol(kit: dict[str, Any], variable: str, values: list[Any], *, model_revision: str, tokenizer_revision: str,
             order: str = "rotated", cold: int = 0, runs: int = 2) -> dict[str, Any]:
    """A protocol registered now for the kit's corpus: one experiment varying `variable`, subgroups planned."""
    base = json.loads((ROOT / "inputs" / "h200-campaign-protocol.json").read_text(encoding="utf-8"))
    revision = campaign_run.corpus_revision(kit["corpus"] / "eval.jsonl")
    base["corpus"].update(revision=revision, size=N)
    base["quality"].update(threshold=0.0, tolerance=1.0)
    base["quality"]["reference"]["value"] = 0.5
    base["quality"]["subgroups"] = [{"id": g, "ids": f"subgroups/{g}.csv", "edges": f"{g} by words (test edges)"}
                                    for g in kit["groups"]]
    base.update(run_times_registered_now())
    exp = copy.deepcopy(base["experiments"][0])
    exp.update(id="series", variable=variable, runs_per_variant=runs, cold_runs_per_variant=cold, order=order)
    exp["variants"] = [{"id": f"v{k}", "value": v, "measurement": f"measurements/series-v{k}.json"}
                       for k, v in enumerate(values)]
    fixed = {"batch": 4, "precision": "float32", "context": 64, "seed": 7}
    fixed[variable] = None
    exp["fixed"].update(corpus_revision=revision, model_revision=model_revision, tokenizer_revision=tokenizer_revision,
                        **fixed)
    if order == "drawn":
        exp["drawn_sequence"] = [v["id"] for _ in range(runs) for v in reversed(exp["variants"])]
    base["experiments"] = [exp]
    return base


def run(kit: dict[str, Any], tmp: Path, proto: dict[str, Any], model: str) -> Path:
    """Run the protocol on the CPU; the campaign folder, which `check` must find without error."""
    (tmp / "protocol.json").write_text(json.dumps(proto, indent=2), encoding="utf-8")
    out = tmp / "camp"
    campaign_run.run_campaign(campaign_run.CampaignConfig(
        protocol=tmp / "protocol.json", model=model, corpus=kit["corpus"], device="cpu", out=out,
        allow_cpu_for_tests=True))
    assert [(f.code, f.message) for f in errors(out)] == []
    return out


def grid(out: Path) -> list[dict[str, str]]:
    with (out / "resultats-bruts.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def measurement(out: Path, k: int) -> dict[str, Any]:
    return json.loads((out / f"measurements/series-v{k}.json").read_text(encoding="utf-8"))


def hf(kit: dict[str, Any], variable: str, values: list[Any], **kw: Any) -> dict[str, Any]:
    return protocol(kit, variable, values, model_revision=hfmodel.model_revision(kit["model"]),
                    tokenizer_revision=hfmodel.tokenizer_revision(kit["model"]), **kw)


def test_transformer_batch_series_with_cold_runs(kit: dict[str, Any], tmp_path: Path) -> None:
    out = run(kit, tmp_path, hf(kit, "batch", [1, 4], cold=1), str(kit["model"]))
    rows = grid(out)
    weights = hashlib.sha256((kit["model"] / "model.safetensors").read_bytes()).hexdigest()
    assert {r["model_revision"] for r in rows} == {"sha256:" + weights}
    assert [r["batch"] for r in rows if r["phase"] == "cold"] == ["1", "4"]
    assert all(r["precision"] == "float32" and r["context"] == "64" for r in rows)
    assert (out / "subgroups" / "long.csv").read_bytes() == (kit["corpus"] / "subgroups" / "long.csv").read_bytes()
    model = measurement(out, 0)["model"]
    assert model["truncation"]["reported"] and set(model["truncation"]["by_subgroup"]) == {"short", "medium", "long"}
    assert "no autocast" in model["precision"] and "longest" in model["padding"]


def test_precision_series(kit: dict[str, Any], tmp_path: Path) -> None:
    out = run(kit, tmp_path, hf(kit, "precision", ["float32", "bfloat16"]), str(kit["model"]))
    assert {(r["variant_id"], r["precision"]) for r in grid(out)} == {("v0", "float32"), ("v1", "bfloat16")}
    assert measurement(out, 1)["configuration"]["dtype"] == "bfloat16"
    assert "weights cast to bfloat16" in measurement(out, 1)["model"]["precision"]


def test_context_series_records_truncation(kit: dict[str, Any], tmp_path: Path) -> None:
    out = run(kit, tmp_path, hf(kit, "context", [8, 128]), str(kit["model"]))
    short, full = measurement(out, 0)["model"]["truncation"], measurement(out, 1)["model"]["truncation"]
    assert short["context"] == 8 and short["texts_cut"] > full["texts_cut"] and sum(short["by_subgroup"].values())
    assert "texts cut" in grid(out)[0]["notes"] and {r["context"] for r in grid(out)} == {"8", "128"}


def test_seed_series(kit: dict[str, Any], tmp_path: Path) -> None:
    out = run(kit, tmp_path, hf(kit, "seed", [11, 12]), str(kit["model"]))
    assert {(r["variant_id"], r["seed"]) for r in grid(out)} == {("v0", "11"), ("v1", "12")}
    assert measurement(out, 1)["configuration"]["seed"] == 12


def test_drawn_order_is_followed(kit: dict[str, Any], tmp_path: Path) -> None:
    proto = hf(kit, "batch", [1, 4, 8], order="drawn")
    out = run(kit, tmp_path, proto, str(kit["model"]))
    starts = sorted((p["started_at"], k, p["repeat"]) for k in range(3) for p in measurement(out, k)["phases"]
                    if p["phase"] == "warm_forward")
    assert [f"v{k}" for _, k, _ in starts] == proto["experiments"][0]["drawn_sequence"]
    assert "drawn" in measurement(out, 0)["model"]["run_order"]


def test_entry_point_function(kit: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(kit["entry"].parent))
    revision = "sha256:" + hashlib.sha256(kit["entry"].read_bytes()).hexdigest()
    proto = protocol(kit, "batch", [1, 4], model_revision=revision, tokenizer_revision="tinyentry:classify "
                     "(tokenises itself)")
    out = run(kit, tmp_path, proto, "tinyentry:classify")
    assert {r["model_revision"] for r in grid(out)} == {revision}
    assert measurement(out, 0)["model"]["truncation"] == {"context": 64, "reported": False}


@pytest.mark.parametrize("function", ["greedy", "plain_oom"])
def test_out_of_memory_kept(kit: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            function: str) -> None:
    monkeypatch.syspath_prepend(str(kit["entry"].parent))
    sys.modules.pop("tinyentry", None)
    revision = "sha256:" + hashlib.sha256(kit["entry"].read_bytes()).hexdigest()
    proto = protocol(kit, "batch", [1, 8], model_revision=revision,
                     tokenizer_revision=f"tinyentry:{function} (tokenises itself)")
    out = run(kit, tmp_path, proto, f"tinyentry:{function}")
    rows = grid(out)
    assert all(r["notes"].find("outcome=") < 0 for r in rows if r["variant_id"] == "v0")
    failed = [r for r in rows if r["variant_id"] == "v1"]
    assert len(failed) == 2 and all("outcome=oom" in r["notes"] and r["elapsed_seconds"] == "" for r in failed)
    # each incident explained as check reads notes (error= with the message), so check has nothing to warn of
    assert [f for r in failed for f in incident_findings(row_outcome(r["notes"]), r["notes"], 2, "g.csv")] == []
    completed = int(re.search(r"completed=(\d+)", failed[0]["notes"]).group(1))  # type: ignore[union-attr]
    with (out / "predictions/series/v1/warm-1.csv").open(encoding="utf-8", newline="") as fh:
        assert len(list(csv.reader(fh))) - 1 == completed < N
    assert len(rows) == 4  # never retried with a smaller batch


def test_sentence_embedding_with_head(kit: dict[str, Any], tmp_path: Path) -> None:
    model = tmp_path / "embedder"
    model.mkdir()
    for f in kit["model"].iterdir():
        if f.name != "config.json":
            (model / f.name).write_bytes(f.read_bytes())
    config = json.loads((kit["model"] / "config.json").read_text(encoding="utf-8"))
    config["architectures"] = ["BertModel"]
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    torch.manual_seed(1)
    torch.save({"format": hfmodel.HEAD_FORMAT, "classes": CLASSES, "weight": torch.randn(len(CLASSES), 32),
                "bias": torch.zeros(len(CLASSES)), "pooling": "mean", "normalize": True}, model / hfmodel.HEAD_FILE)
    revision = hfmodel.model_revision(model)
    assert revision.startswith("sha256sum:")  # the weights and the head, together
    proto = protocol(kit, "batch", [2, 4], model_revision=revision,
                     tokenizer_revision=hfmodel.tokenizer_revision(model))
    out = run(kit, tmp_path, proto, str(model))
    assert "linear head" in measurement(out, 0)["model"]["name"]
