"""A Hugging Face model directory as a `campaign run` model: loaded offline, revisions hashed, truncation counted.

transformers is imported only here, and only when a directory is given as `--model`. Two layouts:
- a sequence-classification model (config.json naming a ...ForSequenceClassification architecture, its weights,
  its tokenizer): the labels are config.id2label;
- a sentence-embedding model (config, weights, tokenizer) with the head file `gpu-audit-head.pt`: a dict saved
  by torch.save with `format` "gpu-audit-linear-head/1", `classes` (list of labels), `weight` [classes, hidden],
  `bias` [classes], `pooling` ("mean" over the attention mask, or "cls") and `normalize` (L2 before the head).
Precision: the weights are cast to the registered dtype (`model.to(dtype)`); no autocast is used.
Padding: to the longest text of the batch, on the tokenizer's padding side; truncation: to `context` tokens,
special tokens included.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generator.core.errors import EnvironmentProblemError, UsageError
from generator.core.system.safefiles import sha256_file

HEAD_FILE = "gpu-audit-head.pt"
HEAD_FORMAT = "gpu-audit-linear-head/1"
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "merges.txt",
                   "special_tokens_map.json", "added_tokens.json", "spiece.model", "sentencepiece.bpe.model",
                   "tokenizer.model")


def files_revision(files: Sequence[Path]) -> str:
    """One file: sha256:<its SHA-256> (what `sha256sum FILE` prints). Several: sha256sum:<the SHA-256 of the
    `sha256sum` listing of the files sorted by name>, i.e. `sha256sum $(ls FILES | sort) | sha256sum`."""
    ordered = sorted(files, key=lambda p: p.name)
    if len(ordered) == 1:
        return "sha256:" + sha256_file(ordered[0])
    listing = "".join(f"{sha256_file(p)}  {p.name}\n" for p in ordered)
    return "sha256sum:" + hashlib.sha256(listing.encode("utf-8")).hexdigest()


def weight_files(directory: Path) -> list[Path]:
    """The weight files of a model directory (and its head file), sorted by name."""
    return sorted((p for p in directory.iterdir() if p.is_file() and p.suffix in WEIGHT_SUFFIXES),
                  key=lambda p: p.name)


def model_revision(directory: Path) -> str:
    """The model revision: the SHA-256 over the weight files (the head file included), sorted by name."""
    files = weight_files(directory)
    if not files:
        raise UsageError(f"{directory} holds no weight file ({', '.join(WEIGHT_SUFFIXES)})")
    return files_revision(files)


def tokenizer_revision(directory: Path) -> str:
    """The tokenizer revision: the SHA-256 over the tokenizer files present, sorted by name."""
    files = [directory / n for n in TOKENIZER_FILES if (directory / n).is_file()]
    if not files:
        raise UsageError(f"{directory} holds no tokenizer file ({', '.join(TOKENIZER_FILES)})")
    return files_revision(files)


def _transformers() -> Any:
    try:
        import transformers  # noqa: PLC0415 - heavy, optional: only for a model directory

        transformers.utils.logging.disable_progress_bar()  # only the CLI prints
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken installation raising something else
        raise EnvironmentProblemError(f"transformers could not be imported ({type(exc).__name__}: {exc}); "
                                      "install it to run a Hugging Face model directory") from None
    return transformers


class HFClassifier:
    """Batch-predict callable of a model directory: tokenise, transfer, infer, labels on the host."""

    def __init__(self, directory: Path, device: str, dtype: str, context: int) -> None:
        import torch  # noqa: PLC0415

        tf = _transformers()
        self._torch = torch
        self.context = int(context)
        self.revision = model_revision(directory)
        self.tokenizer_revision = tokenizer_revision(directory)
        self.tokenizer = tf.AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
        self.padding = f"to the longest text of the batch, {self.tokenizer.padding_side} side (attention mask)"
        self.precision = f"{dtype}: weights cast to {dtype} (model.to), no autocast"
        head_path = directory / HEAD_FILE
        self.device = torch.device(device)
        self.head: Any = None
        self.pooling, self.normalize = "", False
        if head_path.is_file():
            self._load_head(torch, head_path, dtype)
            model = tf.AutoModel.from_pretrained(str(directory), local_files_only=True)
            normalised = ", normalised" if self.normalize else ""
            kind = f"sentence embedding + linear head ({self.pooling} pooling{normalised})"
        else:
            config = tf.AutoConfig.from_pretrained(str(directory), local_files_only=True)
            if not any(str(a).endswith("ForSequenceClassification") for a in config.architectures or []):
                raise UsageError(f"{directory}: config.json names no ...ForSequenceClassification architecture and "
                                 f"there is no {HEAD_FILE}; give a classification model or add the head file")
            model = tf.AutoModelForSequenceClassification.from_pretrained(str(directory), local_files_only=True)
            self.classes = [str(model.config.id2label[i]) for i in range(model.config.num_labels)]
            kind = "sequence classification"
        limit = getattr(model.config, "max_position_embeddings", None)
        if isinstance(limit, int) and self.context > limit:
            raise UsageError(f"context {self.context} exceeds the model's {limit} positions")
        model.eval()
        self.parameter_count = sum(int(p.numel()) for p in model.parameters()) + (
            0 if self.head is None else sum(int(t.numel()) for t in self.head))
        self.model = model.to(device=self.device, dtype=getattr(torch, dtype))
        if self.head is not None:
            self.head = tuple(t.to(device=self.device, dtype=getattr(torch, dtype)) for t in self.head)
        self.name = f"{getattr(model.config, 'model_type', 'transformer')} {kind} ({directory.name})"

    def _load_head(self, torch: Any, path: Path, dtype: str) -> None:
        try:
            saved = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - torch.load fails on a foreign file with any error
            raise UsageError(f"{path} is not a head file ({type(exc).__name__}: {exc})") from None
        if not isinstance(saved, dict) or saved.get("format") != HEAD_FORMAT:
            raise UsageError(f"{path} is not a {HEAD_FORMAT} file")
        self.classes = [str(c) for c in saved["classes"]]
        self.pooling = str(saved.get("pooling", "mean"))
        if self.pooling not in ("mean", "cls"):
            raise UsageError(f"{path}: pooling must be mean or cls, not {self.pooling!r}")
        self.normalize = bool(saved.get("normalize", False))
        self.head = (saved["weight"], saved["bias"])

    def cut(self, texts: Sequence[str]) -> list[bool]:
        """Which texts the registered context truncates (their token count, special tokens included, exceeds it)."""
        # verbose=False: counting past the model's length is the point here (the runs truncate), so transformers'
        # "will result in indexing errors" warning does not apply
        ids = self.tokenizer(list(texts), truncation=False, add_special_tokens=True, verbose=False)["input_ids"]
        return [len(x) > self.context for x in ids]

    def predict(self, texts: Sequence[str]) -> list[str]:
        """Tokenise (padding, truncation), transfer, infer and bring the labels back to the host."""
        torch = self._torch
        enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.context,
                             return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()}
        with torch.inference_mode():
            if self.head is None:
                logits = self.model(**enc).logits
            else:
                hidden = self.model(**enc).last_hidden_state
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
                if self.normalize:
                    pooled = torch.nn.functional.normalize(pooled, dim=-1)
                weight, bias = self.head
                logits = pooled @ weight.T + bias
            best = logits.argmax(dim=-1).cpu().tolist()
        return [self.classes[i] for i in best]
