"""A model as `--model` names it, loaded: a Hugging Face model directory, a reference-classifier file, or
`module:function` (a batch function, or a factory of a model); what each must provide is `BatchModel`."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from generator.core.errors import UsageError
from generator.core.system.safefiles import sha256_file


class BatchModel(Protocol):
    """What `--model` must provide."""

    name: str
    revision: str
    tokenizer_revision: str
    parameter_count: int

    def predict(self, texts: Sequence[str]) -> list[str]: ...


def load_model(spec: str, device: str, dtype: str, context: int) -> BatchModel:
    """A model directory, a reference-classifier file, or `module:function` (a batch function or a factory)."""
    path = Path(spec)
    if path.is_dir():
        from generator.gpu.models import hfmodel  # noqa: PLC0415 - imports transformers

        return hfmodel.HFClassifier(path, device, dtype, context)
    if path.is_file():
        from generator.gpu.models import textclf  # noqa: PLC0415

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
