"""The weight estimate: memory of a model's weights from its parameter count and bits, plus an assumed reserve."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from generator.core.errors import UsageError

GIB = 2**30
GB = 10**9
NOT_INCLUDED = (
    "activations",
    "KV cache",
    "quantisation metadata (scales, zero points)",
    "gradients",
    "optimiser state",
    "libraries and runtime context (CUDA/HIP context, framework, kernels)",
)

@dataclass(frozen=True)
class WeightEstimate:
    """Memory taken by the weights alone, plus a reserve that is an assumption, not a measurement."""

    parameters: int
    bits: int
    bytes_per_parameter: int
    weight_bytes: int
    reserve_gib: Decimal
    reserve_bytes: int
    not_included: tuple[str, ...] = NOT_INCLUDED

    @property
    def weight_gib(self) -> Decimal:
        return Decimal(self.weight_bytes) / GIB

    @property
    def weight_gb(self) -> Decimal:
        return Decimal(self.weight_bytes) / GB

    @property
    def total_bytes(self) -> int:
        return self.weight_bytes + self.reserve_bytes

    @property
    def total_gib(self) -> Decimal:
        return Decimal(self.total_bytes) / GIB

    @property
    def total_gb(self) -> Decimal:
        return Decimal(self.total_bytes) / GB

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: exact byte counts, unrounded GiB/GB figures and the stated limits."""
        return {
            "parameters": self.parameters,
            "bits": self.bits,
            "bytes_per_parameter": self.bytes_per_parameter,
            "weight_bytes": self.weight_bytes,
            "weight_gib": float(self.weight_gib),
            "weight_gb": float(self.weight_gb),
            "reserve_gib": float(self.reserve_gib),
            "reserve_bytes": self.reserve_bytes,
            "reserve_is_assumption": True,
            "total_bytes": self.total_bytes,
            "total_gib": float(self.total_gib),
            "total_gb": float(self.total_gb),
            "gib_bytes": GIB,
            "gb_bytes": GB,
            "not_included": list(self.not_included),
            "predicts_fit": False,
        }


def round2(value: Decimal) -> Decimal:
    """Round half up to two decimals, for display."""
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def parse_parameter_count(text: str) -> int:
    """Read a positive whole parameter count written as 7000000000 or 7e9; raise UsageError otherwise."""
    try:
        value = Decimal(text.strip().replace("_", ""))
    except InvalidOperation:
        raise UsageError(f"--parameters {text!r} is not a number; give a positive whole count such as 7000000000 "
                         "or 7e9") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise UsageError(f"--parameters {text!r} is not a whole number of parameters")
    if value <= 0:
        raise UsageError(f"--parameters must be positive, got {text!r}")
    return int(value)


def parse_reserve_gib(text: str) -> Decimal:
    """Read a non-negative finite reserve in GiB; raise UsageError otherwise."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise UsageError(f"--reserve-gib {text!r} is not a number of GiB") from None
    if not value.is_finite() or value < 0:
        raise UsageError(f"--reserve-gib must be a finite number >= 0, got {text!r}")
    return value


def estimate_weights(parameters: int, bits: int, reserve_gib: Decimal | int | str = 0) -> WeightEstimate:
    """Weights of `parameters` stored at `bits` each, rounded up to whole bytes per parameter, plus a reserve."""
    if isinstance(parameters, bool) or not isinstance(parameters, int) or parameters <= 0:
        raise UsageError(f"the parameter count must be a positive whole number, got {parameters!r}")
    if isinstance(bits, bool) or not isinstance(bits, int) or bits <= 0:
        raise UsageError(f"--bits must be a positive whole number of bits per parameter, got {bits!r}")
    reserve = parse_reserve_gib(str(reserve_gib))
    bytes_per_parameter = (bits + 7) // 8
    return WeightEstimate(
        parameters=parameters,
        bits=bits,
        bytes_per_parameter=bytes_per_parameter,
        weight_bytes=parameters * bytes_per_parameter,
        reserve_gib=reserve,
        reserve_bytes=math.ceil(reserve * GIB),
    )
