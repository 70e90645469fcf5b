"""Edges of the rules in seed_rules.py, seed_rules_runs.py and seed_rules_outcomes.py: at the limit, one past."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from conftest import GRID, read_grid, write_grid
from seed_edges import Edge
from seed_rules import (
    B200,
    EXPECTED,
    PROTOCOL,
    REFERENCE,
    RTX,
    TARIFFS,
    Where,
    cell,
    edit_json,
    edit_lines,
    edit_protocol,
    edit_tariffs,
    line_of,
    meas,
    phase_index,
    pred,
    set_phase,
    set_row,
    set_rows,
)
from seed_rules_messages import _first_phase_at, _last_phase_to
from seed_rules_prices import _b200_month

from generator.core.metrics import compute_metric

# ------------------------------------------------------------------------------------------------ helpers


def _phase(c: Path, rel: str, phase: str, repeat: int | None = None) -> dict[str, Any]:
    doc = json.loads((c / rel).read_text(encoding="utf-8"))
    return doc["phases"][phase_index(c, rel, phase, repeat)]


def _scored(c: Path) -> list[tuple[float, int]]:
    """(recomputed quality, grid line) of every row with a quality value, from its prediction file and the
    reference, by the registered metric over the declared classes."""
    protocol = json.loads((c / PROTOCOL).read_text(encoding="utf-8"))
    with (c / REFERENCE).open(encoding="utf-8", newline="") as f:
        reference = {r["id"]: r["label"] for r in csv.DictReader(f)}
    rows = read_grid(c)
    h = rows[0]
    out = []
    for line, r in enumerate(rows[1:], start=2):
        if r[h.index("quality_value")] == "":
            continue
        path = c / pred(r[h.index("experiment_id")], r[h.index("variant_id")], r[h.index("phase")],
                        int(r[h.index("run_index")]))
        with path.open(encoding="utf-8", newline="") as f:
            labels = {p["id"]: p["label"] for p in csv.DictReader(f)}
        ids = sorted(reference)
        out.append((compute_metric(protocol["quality"]["metric"], [reference[i] for i in ids],
                                   [labels[i] for i in ids], protocol["classes"]), line))
    return out


def _rule_cells(c: Path, column: str, value: float, line: int | None = None, claimed: float | None = None) -> None:
    """Every row's `column` written `value` (repr: the exact float), the row at `line` `claimed` instead."""
    rows = read_grid(c)
    i = rows[0].index(column)
    for n, r in enumerate(rows[1:], start=2):
        r[i] = repr(claimed if n == line and claimed is not None else value)
    write_grid(c, rows)


def _worst(c: Path) -> tuple[float, int]:
    """The campaign's lowest recomputed quality and its row, the planned subgroups left out (they would judge each
    subgroup by the moved rule too, which is not this edge)."""
    edit_protocol(c, lambda p: p["quality"].pop("subgroups"))
    return min(_scored(c))


def _threshold(lowered: bool) -> Callable[[Path], list[Where]]:
    """The registered threshold exactly the campaign's lowest recomputed quality: that run is accepted (value >=
    threshold). `lowered`: registered one unit (1e-6, the grid's decimals) higher, the row of that run claims the
    old threshold, one unit lower than registered, so that it passes."""
    def plant(c: Path) -> list[Where]:
        worst, line = _worst(c)
        registered = worst + 1e-6 if lowered else worst
        edit_protocol(c, lambda p: p["quality"].update(threshold=registered))
        _rule_cells(c, "quality_threshold", registered, line, worst)
        return [Where(GRID, line, "quality_threshold")]

    return plant


def _tolerance(widened: bool) -> Callable[[Path], list[Where]]:
    """The reference value moved so that the campaign's lowest quality degrades it by exactly the registered
    tolerance (reference - value, as the float the check computes): that run is accepted (degradation <=
    tolerance). `widened`: registered one unit (1e-6) narrower, the row of that run claims the old tolerance."""
    def plant(c: Path) -> list[Where]:
        worst, line = _worst(c)
        reference = round(worst + 0.03, 6)
        exact = reference - worst
        registered = exact - 1e-6 if widened else exact
        edit_protocol(c, lambda p: (p["quality"].update(tolerance=registered),
                                    p["quality"]["reference"].update(value=reference)))
        _rule_cells(c, "quality_tolerance", registered, line, exact)
        return [Where(GRID, line, "quality_tolerance")]

    return plant


RTX30 = "rtx-4090,GeForce RTX 4090,30,40000,1,2026-09-24,published,TEST quote Q-30 (test figure)"


def _month(end: str, field: str) -> Callable[[Path], list[Where]]:
    """The window ends at `end` (Europe/Paris, from the example's start; the deadline at 18:00 that day), the RTX
    4090 rented for 30 days at a provider's quoted price, the B200 for 30 days unpriced (seed_rules_prices)."""
    def plant(c: Path) -> list[Where]:
        edit_protocol(c, lambda p: (p["window"].update(end=end), p.update(deadline=f"{end[:10]}T18:00"),
                                    p["experiments"][0]["rental"].update(duration_days=30)))
        edit_tariffs(c, lambda ls: [ls[0] + ",source", *(t + "," for t in ls[1:] if t), RTX30])
        set_rows(c, RTX, None, duration_days="30", package_total_usd_minor="40000")
        _b200_month(c)
        return [Where(PROTOCOL, None, field)]

    return plant


def _sydney(start: str) -> Callable[[Path], list[Where]]:
    """The window starts at `start` in Australia/Sydney, whose clocks jump from 02:00 to 03:00 on 2026-10-04; it
    ends when the example's does (18:00 there is 07:00Z), the deadline ten hours later."""
    def plant(c: Path) -> list[Where]:
        edit_protocol(c, lambda p: (p["window"].update(start=start, end="2026-10-09T18:00",
                                                       timezone="Australia/Sydney"),
                                    p.update(deadline="2026-10-10T04:00")))
        return [Where(PROTOCOL, None, "/window/start")]

    return plant


def _registered_before_first(c: Path, run: str) -> list[Where]:
    # registered a microsecond before the window's start (07:00Z): the first run can start a microsecond after it
    edit_protocol(c, lambda p: p.update(registered_at="2026-10-05T06:59:59.999999Z"))
    return _first_phase_at(c, run)


def _deadline_on_end(c: Path, ended: str) -> list[Where]:
    # the deadline on the window's end (09:00 Paris, 07:00Z): the last run ends on it, or a microsecond after it
    edit_protocol(c, lambda p: p.update(deadline="2026-10-09T09:00"))
    return _last_phase_to(c, ended)


def _inputs_ended(c: Path, ended: str) -> list[Where]:
    """rtx4090-batch/b4's inputs phase (started 07:31:46.866Z) dated `ended`, lasting 0 s by its own timer."""
    rel = meas(RTX, "b4")
    i = set_phase(c, rel, "inputs", None, ended_at=ended, elapsed_seconds=0.0)
    return [Where(rel, None, f"/phases/{i}/ended_at")]


def _load_ends(c: Path, ended: str) -> list[Where]:
    """rtx4090-batch/b1's model load (its file's first phase) ending at `ended`; its inputs start 07:30:06.297Z."""
    rel = meas(RTX, "b1")
    set_phase(c, rel, "model_load", None, ended_at=ended)
    return [Where(rel, None, f"/phases/{phase_index(c, rel, 'inputs')}/started_at")]


# The warm runs of rtx4090-batch in the order the example ran them (rotated: 1-4-8, 4-8-1, 8-1-4, ...).
DRAWN = ["b1", "b4", "b8", "b4", "b8", "b1", "b8", "b1", "b4", "b1", "b4", "b8", "b4", "b8", "b1"]


def _drawn(sequence: list[str]) -> Callable[[Path], list[Where]]:
    def plant(c: Path) -> list[Where]:
        edit_protocol(c, lambda p: p["experiments"][0].update(order="drawn", drawn_sequence=sequence))
        return [Where(PROTOCOL, None, "/experiments/0/drawn_sequence")]

    return plant


OOM_WORDS = "torch.OutOfMemoryError: Tried to allocate 2.00 GiB (synthetic incident)"


def _oom_worded(outcome: str) -> Callable[[Path], list[Where]]:
    """b8's run 3 failed with PyTorch's own exception name (no 'out of memory' in words); its row says `outcome`."""
    def plant(c: Path) -> list[Where]:
        set_phase(c, meas(RTX, "b8"), "warm_forward", 3, error=OOM_WORDS)
        notes = cell(c, RTX, "b8", "warm", 3, "notes").replace("outcome=oom", f"outcome={outcome}")
        return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, notes=notes), "notes")]

    return plant


def _peak(c: Path, below: int) -> list[Where]:
    """b4's warm run 1: its absolute peak allocated `below` bytes under its baseline, in the grid and the JSON."""
    rel = meas(RTX, "b4")
    base = _phase(c, rel, "warm_forward", 1)["baseline_allocated_bytes"]
    i = set_phase(c, rel, "warm_forward", 1, peak_allocated_bytes=base - below)
    line = set_row(c, RTX, "b4", "warm", 1, peak_allocated_bytes=str(base - below))
    return [Where(GRID, line, "peak_allocated_bytes"), Where(rel, None, f"/phases/{i}/peak_allocated_bytes")]


def _unmeasured_peak(grid: str) -> Callable[[Path], list[Where]]:
    """b8's warm run 4 with a real zero (its baseline allocated 0 B, in both files) and a peak not measured (null in
    the JSON), written `grid` in the grid."""
    def plant(c: Path) -> list[Where]:
        set_phase(c, meas(RTX, "b8"), "warm_forward", 4, peak_allocated_bytes=None, baseline_allocated_bytes=0)
        line = set_row(c, RTX, "b8", "warm", 4, peak_allocated_bytes=grid, baseline_allocated_bytes="0")
        return [Where(GRID, line, "peak_allocated_bytes")]

    return plant


def _one_more_text(c: Path) -> list[Where]:
    edit_lines(c, EXPECTED, lambda ls: [*ls, "zz-edge-text"])
    edit_lines(c, REFERENCE, lambda ls: [*ls, "zz-edge-text,utils"])
    return [Where(EXPECTED, None)]


def _same_ids_reordered(c: Path) -> None:
    edit_lines(c, pred(RTX, "b8", "warm", 4), lambda ls: [ls[0], *reversed(ls[1:])])


def _last_id_repeats_first(c: Path) -> list[Where]:
    # 1000 lines still: the file's last ID replaced by its first one (999 distinct IDs, one of them twice)
    edit_lines(c, pred(RTX, "b8", "warm", 4), lambda ls: [*ls[:-1], ls[1]])
    return [Where(GRID, line_of(c, RTX, "b8", "warm", 4), "ids_match")]


def _cold_b1(c: Path, short_ms: int) -> list[Where]:
    """b1's cold run written `short_ms` ms under the 93.479 s its cold_forward measured."""
    work = _phase(c, meas(RTX, "b1"), "cold_forward")["elapsed_seconds"]
    line = set_row(c, RTX, "b1", "cold", 1, elapsed_seconds=f"{work - short_ms / 1000:.3f}")
    return [Where(GRID, line, "elapsed_seconds")]


def _warm_b4_beyond(c: Path, over_ms: int) -> list[Where]:
    """b4's warm run 1 written `over_ms` ms over the longest its dating allows: its phase's bracket (31.954 s) twice,
    the host steps it leaves out never more than its work (durations.HOST_SHARE)."""
    phase = _phase(c, meas(RTX, "b4"), "warm_forward", 1)
    bracket = (datetime.fromisoformat(phase["ended_at"]) - datetime.fromisoformat(phase["started_at"]))
    allowed_ms = round(bracket.total_seconds() * 1000) * 2
    line = set_row(c, RTX, "b4", "warm", 1, elapsed_seconds=f"{(allowed_ms + over_ms) / 1000:.3f}")
    return [Where(GRID, line, "elapsed_seconds")]


def _grid_cells(column: str, value: str, variant: str = "b8", exp: str = RTX) -> Callable[[Path], list[Where]]:
    def plant(c: Path) -> list[Where]:
        return [Where(GRID, set_rows(c, exp, variant, **{column: value})[0], column)]

    return plant


def _context(value: int) -> Callable[[Path], list[Where]]:
    def plant(c: Path) -> list[Where]:
        lines = set_rows(c, RTX, "b8", context=str(value))
        edit_json(c, meas(RTX, "b8"), lambda d: d["configuration"].update(context=value))
        return [Where(GRID, lines[0], "context")]

    return plant


def _lot_size(gpus: int) -> Callable[[Path], list[Where]]:
    def plant(c: Path) -> list[Where]:
        edit_tariffs(c, lambda ls: [t.replace(",207100,2,", f",207100,{gpus},") for t in ls])
        return [Where(TARIFFS, 3, "gpus_per_lot")]

    return plant


def _at(plant: Callable[[Path], object]) -> Callable[[Path], None]:
    """A planting used for the `at` side, where nothing is to be found."""
    def at(c: Path) -> None:
        plant(c)

    return at


def _unchanged(c: Path) -> None:
    """The setup is itself exactly at the limit (a registered value held, the exact sum): nothing to move."""


# ------------------------------------------------------------------------------------------------- the table

EDGES: list[Edge] = [
    # one ID: the same 1,000 IDs in another order are the same set; the last one replaced by the first is not
    Edge("ids-same-count-other-set", "one ID", _same_ids_reordered, _last_id_repeats_first),
    Edge("threshold-registered", "0.000001", _at(_threshold(False)), _threshold(True)),
    Edge("tolerance-registered", "0.000001", _at(_tolerance(False)), _tolerance(True)),
    Edge("corpus-size", "one text", _unchanged, _one_more_text),
    # the registered 512 tokens held; 513 is no truncation but still another context (the seed rule plants 256)
    Edge("context-held", "1 token", _unchanged, _context(513)),
    # batch 8 as registered; a batch-9 run filed under b8 (the seed rule plants the smaller batch 4)
    Edge("batch-as-registered", "1 in batch", _unchanged, lambda c: [Where(GRID, set_row(c, RTX, "b8", "warm", 3,
                                                                                          batch="9"), "batch")]),
    Edge("oom-stays-oom", "one wording", _at(_oom_worded("oom")), _oom_worded("failed")),
    Edge("peak-after-reset", "1 byte", _at(lambda c: _peak(c, 0)), lambda c: _peak(c, 1)),
    Edge("empty-is-not-zero", "an empty cell against 0", _at(_unmeasured_peak("")),
         _unmeasured_peak("0")),
    # the exact price of one B200 lot; one cent less (the seed rule plants the price times the lot's two GPUs)
    Edge("b200-lot-two-gpus", "1 cent", _unchanged, _grid_cells("package_total_usd_minor", "207099", "b8", B200)),
    # 720 h exactly: the window crosses the autumn change (2026-10-25), so 30 days of wall clock end at 08:00
    Edge("no-automatic-extension", "1 s", _at(_month("2026-11-04T08:00", "/window")),
         _month("2026-11-04T08:00:01", "/window")),
    # 01:59:59 exists in Sydney on 2026-10-04; 02:00:00 does not (the gap's first second)
    Edge("window-spring-gap", "1 s", _at(_sydney("2026-10-04T01:59:59")), _sydney("2026-10-04T02:00")),
    # 03:00 occurs once in Paris on 2026-10-25; 02:59:59 twice (the repeated hour's last second)
    Edge("window-autumn-overlap", "1 s", _at(_month("2026-10-25T03:00", "/window/end")),
         _month("2026-10-25T02:59:59", "/window/end")),
    # "registered before the runs": a run at the registration instant is not after it, so `at` is the first
    # microsecond after the registration and `past` the registration instant itself (also before the window)
    Edge("runs-after-registration", "1 µs",
         _at(lambda c: _registered_before_first(c, "2026-10-05T07:00:00.000000Z")),
         lambda c: _registered_before_first(c, "2026-10-05T06:59:59.999999Z")),
    # ending on the deadline is ending before it (runs-on-window-edges); a microsecond after it is not
    Edge("runs-before-deadline", "1 µs", _at(lambda c: _deadline_on_end(c, "2026-10-09T07:00:00.000000Z")),
         lambda c: _deadline_on_end(c, "2026-10-09T07:00:00.000001Z")),
    # a phase may end when it starts (0 s); one microsecond earlier it ends before it starts
    Edge("run-times-valid", "1 µs", _at(lambda c: _inputs_ended(c, "2026-10-05T07:31:46.866000Z")),
         lambda c: _inputs_ended(c, "2026-10-05T07:31:46.865999Z")),
    # the catalogue's two GPUs per B200 lot; one GPU fewer (the seed rule plants four)
    Edge("catalogue-lot-size", "1 GPU", _unchanged, _lot_size(1)),
    # runphases.TOLERANCE_S: a grid duration 1 ms under its measured forward pass is the rounding of 3 decimals
    Edge("duration-all-phases-measured", "0.001 s", _at(lambda c: _cold_b1(c, 1)),
         lambda c: _cold_b1(c, 2)),
    Edge("duration-within-bracket", "0.001 s", _at(lambda c: _warm_b4_beyond(c, 1)),
         lambda c: _warm_b4_beyond(c, 2)),
    # a phase starts after the one before it ends, within runphases.TOLERANCE_S (1 ms): b1's inputs start exactly
    # 1 ms before its model load ends, then 1 ms and 1 µs before
    Edge("phases-in-order", "1 µs", _at(lambda c: _load_ends(c, "2026-10-05T07:30:06.298000Z")),
         lambda c: _load_ends(c, "2026-10-05T07:30:06.298001Z")),
    # each variant drawn exactly runs_per_variant (5) times, in the order the runs followed; one draw more
    Edge("order-drawn-registered", "one draw", _at(_drawn(DRAWN)), _drawn([*DRAWN, "b1"])),
]

EDGELESS: dict[str, str] = {
    "metric-registered": "the metric is a name, any other one is the seed rule's own defect; its 'before' is the "
                         "registration's edge (registered-a-second-before-start, registered-on-window-start)",
    "oom-not-replaced": "the same variant-value comparison as batch-as-registered, whose edge plants batch 9 under "
                        "b8; the smaller batch is this rule's own mutation",
    "no-p95-column": "the grid's columns are names, not a count ('p95', 'five' matched): an unknown column is found "
                     "by its name (grid-columns, grid-read-by-header)",
    "booleans": "'after' in 'true/false after a real check': a boolean has no limit",
    "csv-not-formula": "the figures are the issue's number; a formula is a cell's first character, not a quantity",
    "package-covers-window": "its edge is seven-day-window (168 h on a 7-day package holds) and "
                             "seven-days-and-a-second (one second past)",
    "registered-before-tests": "its edge is registered-a-second-before-start (holds) and registered-on-window-start "
                               "(at the start: too late)",
    "window-zone": "a time zone is a name (unknown-timezone), not a figure: 'window' matched",
    "runs-inside-window": "its edges are runs-on-window-edges (a run on the start and on the end holds), "
                          "run-a-microsecond-before-window and run-a-microsecond-after-window",
    "run-times-recorded": "all or none: one phase short of all is run-times-all-or-none and run-times-not-one-stamp, "
                          "one file short of all run-times-per-measurement",
    "memory-feasibility": "exceeding memory is an out-of-memory attempt counted (none: feasible, b8-wins; one: not, "
                          "the example), never bytes against a limit; oom-stays-oom's edge holds the wording",
    "ends-before-deadline": "a decision without a finding: the window ending on the deadline holds "
                            "(runs-on-window-edges); ending after it withholds the answer with no finding for an Edge "
                            "to name, so its past side (decision.Window.ends_before_deadline) is untested",
    "no-p95-from-five": "a decision without a finding: the tail's 20 observations (timing.MIN_FOR_TAIL) are "
                        "ours, not the seeds'; five (the example) show no p95, 20 do (test_recompute_units)",
    "excluded-needs-rule": "an exclusion is a listed cause, not a figure; its 'before' is the protocol's registration "
                           "(runs-after-registration's edge), its other sides excluded-registered-cause and "
                           "exclusion-listed",
}
