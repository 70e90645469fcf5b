"""A `campaign run` test model: the tiny reference classifier, interrupted once like a real attempt (out of memory).

`--model flaky_model:load` (a factory). GPU_AUDIT_FLAKY_MODEL names the classifier file; GPU_AUDIT_FLAKY_FAIL_AT=N
makes each loaded copy raise an out-of-memory error on its N-th call with a batch of 8 texts, once; with
GPU_AUDIT_FLAKY_ONCE=FILE, only the first copy of any process to get there fails (it creates FILE).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generator.gpu.models import textclf

BATCH = 8


class Flaky:
    """The classifier's predictions, one call of batch 8 failing."""

    def __init__(self, device: str, dtype: str, context: int) -> None:
        self._inner = textclf.ReferenceClassifier(Path(os.environ["GPU_AUDIT_FLAKY_MODEL"]), device, dtype, context)
        self._fail_at = int(os.environ.get("GPU_AUDIT_FLAKY_FAIL_AT", "0"))
        self._calls = 0
        self.name, self.revision = self._inner.name, self._inner.revision
        self.tokenizer_revision, self.parameter_count = self._inner.tokenizer_revision, self._inner.parameter_count

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)  # cut, padding, precision

    def predict(self, texts: Sequence[str]) -> list[str]:
        if len(texts) == BATCH:
            self._calls += 1
            once = os.environ.get("GPU_AUDIT_FLAKY_ONCE")
            if self._calls == self._fail_at and not (once and Path(once).exists()):
                if once:
                    Path(once).touch()
                raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (simulated by the test model)")
        return list(self._inner.predict(texts))


def load(device: str, dtype: str, context: int) -> Flaky:
    return Flaky(device, dtype, context)
