"""A raw-results grid row (schemas/raw-results-row.schema.json) as a frozen dataclass: each cell typed, None empty."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from generator.core.jsonvalue import JsonScalar

__all__ = ["GRID_COLUMNS", "TARIFF_COLUMNS", "GridRow", "TariffRow"]


def _str(value: JsonScalar) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: JsonScalar) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: JsonScalar) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _bool(value: JsonScalar) -> bool | None:
    return value if isinstance(value, bool) else None


@dataclass(frozen=True)
class GridRow:
    """One attempted run as the grid writes it. A cell that is empty, missing or no value of its column's type
    (already a finding of reading) is None; a number is kept as written (an integer stays an integer)."""

    experiment_id: str | None
    variant_id: str | None
    corpus_revision: str | None
    model_revision: str | None
    tokenizer_revision: str | None
    seed: int | None
    gpu_model: str | None
    gpu_count: int | None
    device: str | None
    driver_version: str | None
    python_version: str | None
    torch_version: str | None
    runtime_version: str | None
    precision: str | None
    batch: int | None
    context: int | None
    phase: str | None
    run_index: int | None
    warmup_iterations: int | None
    expected_ids: int | None
    observed_ids: int | None
    ids_match: bool | None
    format_valid: bool | None
    quality_metric: str | None
    quality_threshold: float | None
    quality_tolerance: float | None
    quality_value: float | None
    corpus_accepted: bool | None
    elapsed_seconds: float | None
    baseline_allocated_bytes: int | None
    baseline_reserved_bytes: int | None
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None
    duration_days: int | None
    lots: int | None
    package_total_usd_minor: int | None
    accepted_unique_corpora: int | None
    notes: str | None

    @classmethod
    def of(cls, cells: Mapping[str, JsonScalar]) -> GridRow:
        """The row of a reader's typed cells (csvtable's), by column name."""
        return cls(
            experiment_id=_str(cells.get('experiment_id')),
            variant_id=_str(cells.get('variant_id')),
            corpus_revision=_str(cells.get('corpus_revision')),
            model_revision=_str(cells.get('model_revision')),
            tokenizer_revision=_str(cells.get('tokenizer_revision')),
            seed=_int(cells.get('seed')),
            gpu_model=_str(cells.get('gpu_model')),
            gpu_count=_int(cells.get('gpu_count')),
            device=_str(cells.get('device')),
            driver_version=_str(cells.get('driver_version')),
            python_version=_str(cells.get('python_version')),
            torch_version=_str(cells.get('torch_version')),
            runtime_version=_str(cells.get('runtime_version')),
            precision=_str(cells.get('precision')),
            batch=_int(cells.get('batch')),
            context=_int(cells.get('context')),
            phase=_str(cells.get('phase')),
            run_index=_int(cells.get('run_index')),
            warmup_iterations=_int(cells.get('warmup_iterations')),
            expected_ids=_int(cells.get('expected_ids')),
            observed_ids=_int(cells.get('observed_ids')),
            ids_match=_bool(cells.get('ids_match')),
            format_valid=_bool(cells.get('format_valid')),
            quality_metric=_str(cells.get('quality_metric')),
            quality_threshold=_num(cells.get('quality_threshold')),
            quality_tolerance=_num(cells.get('quality_tolerance')),
            quality_value=_num(cells.get('quality_value')),
            corpus_accepted=_bool(cells.get('corpus_accepted')),
            elapsed_seconds=_num(cells.get('elapsed_seconds')),
            baseline_allocated_bytes=_int(cells.get('baseline_allocated_bytes')),
            baseline_reserved_bytes=_int(cells.get('baseline_reserved_bytes')),
            peak_allocated_bytes=_int(cells.get('peak_allocated_bytes')),
            peak_reserved_bytes=_int(cells.get('peak_reserved_bytes')),
            duration_days=_int(cells.get('duration_days')),
            lots=_int(cells.get('lots')),
            package_total_usd_minor=_int(cells.get('package_total_usd_minor')),
            accepted_unique_corpora=_int(cells.get('accepted_unique_corpora')),
            notes=_str(cells.get('notes')))

    def cell(self, column: str) -> JsonScalar:
        """The cell of a column named at run time (one of GRID_COLUMNS)."""
        if column not in GRID_COLUMNS:
            raise KeyError(column)
        value: JsonScalar = getattr(self, column)
        return value

    def counter(self, column: str) -> int | None:
        """A memory counter named at run time; None for a column the grid does not have (final_*_bytes)."""
        return _int(self.cell(column)) if column in GRID_COLUMNS else None

    def key(self) -> tuple[str, str, str, int]:
        """The key that identifies one attempt: experiment, variant, phase, run index."""
        return (str(self.experiment_id), str(self.variant_id), str(self.phase), int(self.run_index or 0))


GRID_COLUMNS = frozenset(f.name for f in fields(GridRow))
TARIFF_COLUMNS = ("gpu", "model_name", "duration_days", "price_per_lot_usd_minor", "gpus_per_lot", "snapshot_date",
                  "price_status")


@dataclass(frozen=True)
class TariffRow:
    """One package price of the tariffs file (schemas/tariffs-row.schema.json); None where a cell is not valid."""

    gpu: str | None
    model_name: str | None
    duration_days: int | None
    price_per_lot_usd_minor: int | None
    gpus_per_lot: int | None
    snapshot_date: str | None
    price_status: str | None
    source: str | None = None  # the optional last column: where the provider publishes the price
    complete: bool = field(default=True, compare=False)  # every column in the file's header

    @classmethod
    def of(cls, cells: Mapping[str, JsonScalar]) -> TariffRow:
        """The row of a reader's typed cells, by column name."""
        return cls(_str(cells.get("gpu")), _str(cells.get("model_name")), _int(cells.get("duration_days")),
                   _int(cells.get("price_per_lot_usd_minor")), _int(cells.get("gpus_per_lot")),
                   _str(cells.get("snapshot_date")), _str(cells.get("price_status")), _str(cells.get("source")),
                   all(c in cells for c in TARIFF_COLUMNS))

    def cell(self, column: str) -> JsonScalar:
        """The cell of a column named at run time."""
        value: JsonScalar = getattr(self, column)
        return value
