"""The inventory of the seeds' rules: per rule its seed source, finding code and a mutation of the example."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from conftest import GRID, read_grid, write_grid
from seal_helpers import seal_example

# Seed files (/work/shared/seeds): 000 German protocol, 001 Chinese, 002 French (the same protocol, so a rule of
# one is cited once as "000/001/002 §N"), 003 the provider's article (cited by its German section title),
# 004 the "IteraGPU Lab v1" README (cited by its section).
P = "000/001/002"
A = "003"
L = "004"

RTX, B200 = "rtx4090-batch", "b200-batch"
B1, B4, B8 = f"{RTX}/b1", f"{RTX}/b4", f"{RTX}/b8"
RTX_ALL = (B1, B4, B8)
B200_B8 = f"{B200}/b8"
B200_ALL = (f"{B200}/b1", f"{B200}/b4", B200_B8)
PROTOCOL, EXPECTED, REFERENCE, TARIFFS = "protocol.json", "expected-ids.csv", "reference.csv", "tarifs-forfaits.csv"
ZWSP, RLO = "\u200b", "\u202e"
STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"  # the measurements' run times


def _parse(text: str) -> datetime:
    return datetime.strptime(text, STAMP)


class _Any:
    """A location part the rule does not pin down (a schema message's path, say)."""

    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()


@dataclass(frozen=True)
class Where:
    """Where the finding must be: file, line (None: a finding without a line) and field (column or JSON path)."""

    file: str
    line: Any = ANY
    field: Any = ANY


@dataclass(frozen=True)
class SeedRule:
    """One rule of the seeds, the finding that enforces it, and a mutation of inputs/example that breaks it.

    `setup` first turns the example into a clean campaign whose answer is `SETUPS[setup][1]` (so that the
    defect is planted where it would win); `mutate` then plants the defect and returns where it must be found.
    `protect` says how the decision must be protected:
    - "configuration": every one of `targets` is inadmissible with `reason` among its reasons, absent from
      the ranking, listed as excluded, and not the answer;
    - "withheld": a shared input is wrong, the answer is null and the status "withheld";
    - "no-answer": the answer is null (no configuration can answer as registered);
    - "unpriced": the targets are not ranked and not the answer (a price that is not published commits nothing);
    - "warning": the finding is a warning and does not gate: the answer stays the setup's;
    - "decision": only `verify` (a rule of the decision itself, such as no p95 from five runs).
    `code` None is a decision rule without a finding: no error may be found, and `verify` checks the decision.
    """

    id: str
    rule: str
    source: str
    code: str | None
    mutate: Callable[[Path], list[Where]]
    setup: str = "example"
    protect: str = "configuration"
    targets: tuple[str, ...] = ()
    reason: str = "evidence has"
    severity: str = "error"
    verify: Callable[[dict[str, Any], list[Any]], None] | None = None


# ----------------------------------------------------------------------------------------------- helpers


def pred(exp: str, variant: str, phase: str, run: int) -> str:
    return f"predictions/{exp}/{variant}/{phase}-{run}.csv"


def meas(exp: str, variant: str) -> str:
    return f"measurements/{exp}-{variant}.json"


def index_of(folder: Path, exp: str, variant: str, phase: str, run: int) -> int:
    """The grid row index of one attempt (the header is row 0; no cell of the example holds a line break)."""
    rows = read_grid(folder)
    h = rows[0]
    for i, r in enumerate(rows[1:], start=1):
        if (r[h.index("experiment_id")], r[h.index("variant_id")], r[h.index("phase")],
                r[h.index("run_index")]) == (exp, variant, phase, str(run)):
            return i
    raise AssertionError(f"no row {exp}/{variant} {phase} {run}")


def line_of(folder: Path, exp: str, variant: str, phase: str, run: int) -> int:
    """The file line of one attempt: its row index + 1 (line 1 is the header)."""
    return index_of(folder, exp, variant, phase, run) + 1


def cell(folder: Path, exp: str, variant: str, phase: str, run: int, column: str) -> str:
    rows = read_grid(folder)
    return rows[index_of(folder, exp, variant, phase, run)][rows[0].index(column)]


def set_row(folder: Path, exp: str, variant: str, phase: str, run: int, **cells: str) -> int:
    """Set cells of one attempt's row; returns its file line."""
    i = index_of(folder, exp, variant, phase, run)
    rows = read_grid(folder)
    for column, value in cells.items():
        rows[i][rows[0].index(column)] = value
    write_grid(folder, rows)
    return i + 1


def set_rows(folder: Path, exp: str, variant: str | None, **cells: str) -> list[int]:
    """Set cells in every row of an experiment (or of one of its variants); returns their lines."""
    rows = read_grid(folder)
    h = rows[0]
    lines = []
    for i, r in enumerate(rows[1:], start=1):
        if r[h.index("experiment_id")] == exp and (variant is None or r[h.index("variant_id")] == variant):
            for column, value in cells.items():
                r[h.index(column)] = value
            lines.append(i + 1)
    write_grid(folder, rows)
    return lines


def append_copy(folder: Path, exp: str, variant: str, phase: str, run: int, **cells: str) -> int:
    """Append a copy of one attempt's row with some cells changed; returns the new row's line."""
    rows = read_grid(folder)
    new = list(rows[index_of(folder, exp, variant, phase, run)])
    for column, value in cells.items():
        new[rows[0].index(column)] = value
    rows.append(new)
    write_grid(folder, rows)
    return len(rows)


def edit_json(folder: Path, rel: str, change: Callable[[Any], object]) -> None:
    path = folder / rel
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def edit_protocol(folder: Path, change: Callable[[Any], object]) -> None:
    edit_json(folder, PROTOCOL, change)


def phase_index(folder: Path, rel: str, phase: str, repeat: int | None = None) -> int:
    doc = json.loads((folder / rel).read_text(encoding="utf-8"))
    return next(i for i, p in enumerate(doc["phases"]) if p["phase"] == phase and p.get("repeat") == repeat)


def set_phase(folder: Path, rel: str, phase: str, repeat: int | None, **values: Any) -> int:
    """Set fields of one measurement phase; returns its index in /phases."""
    index = phase_index(folder, rel, phase, repeat)

    def change(doc: Any) -> None:
        doc["phases"][index].update(values)

    edit_json(folder, rel, change)
    return index


def edit_lines(folder: Path, rel: str, change: Callable[[list[str]], list[str]]) -> None:
    """Rewrite a text file line by line (LF line ends, as the example writes them)."""
    path = folder / rel
    path.write_text("\n".join(change(path.read_text(encoding="utf-8").splitlines())) + "\n", encoding="utf-8")


def edit_tariffs(folder: Path, change: Callable[[list[str]], list[str]]) -> None:
    edit_lines(folder, TARIFFS, change)


def grid_line_text(folder: Path, line: int, change: Callable[[str], str]) -> None:
    """Edit one physical line of the grid as text (for defects that csv.writer would quote away)."""
    edit_lines(folder, GRID, lambda lines: [change(t) if n == line else t for n, t in enumerate(lines, start=1)])


# ------------------------------------------------------------------------------------------------ setups
# Each setup is a clean campaign (0 error findings) with a known answer; the mutation plants its defect in
# the configuration that answer names, so that only the gate stands between the defect and the answer.

OK_NOTE = "SYNTHETIC example generated by inputs/make_example.py (seed 20260924): not a measurement"


def _b8_completed(folder: Path) -> None:
    """b8's out-of-memory run 3 completed like run 2 (its phase copied, times included)."""
    rows = read_grid(folder)
    h = rows[0]
    run3 = index_of(folder, RTX, "b8", "warm", 3)
    new = list(rows[index_of(folder, RTX, "b8", "warm", 2)])
    new[h.index("run_index")], new[h.index("elapsed_seconds")] = "3", "29.912"
    rows[run3] = new
    write_grid(folder, rows)
    shutil.copyfile(folder / pred(RTX, "b8", "warm", 2), folder / pred(RTX, "b8", "warm", 3))

    def complete(doc: Any) -> None:
        two = next(p for p in doc["phases"] if p["phase"] == "warm_forward" and p["repeat"] == 2)
        three = next(i for i, p in enumerate(doc["phases"]) if p["phase"] == "warm_forward" and p["repeat"] == 3)
        doc["phases"][three] = {**two, "repeat": 3, "elapsed_seconds": 23.9}

    edit_json(folder, meas(RTX, "b8"), complete)


def _b8_wins(folder: Path) -> None:
    """rtx4090-batch/b8 with its out-of-memory run 3 completed like run 2: the fastest of three equal budgets.
    Run 3 keeps its own start and lasts what it measured; the runs after it move 15 s later."""
    rel = meas(RTX, "b8")
    three = phase_index(folder, rel, "warm_forward", 3)
    start = json.loads((folder / rel).read_text(encoding="utf-8"))["phases"][three]["started_at"]
    _b8_completed(folder)
    for variant in ("b1", "b4", "b8"):
        def shift(doc: Any, variant: str = variant) -> None:
            for i, p in enumerate(doc["phases"]):
                if variant == "b8" and i == three:
                    p["started_at"] = start
                    p["ended_at"] = (_parse(start) + timedelta(seconds=p["elapsed_seconds"])).strftime(STAMP)
                elif _parse(p["started_at"]) > _parse(start):
                    for key in ("started_at", "ended_at"):
                        p[key] = (_parse(p[key]) + timedelta(seconds=15)).strftime(STAMP)

        edit_json(folder, meas(RTX, variant), shift)


def _b8_failed(folder: Path) -> None:
    """The b8 run 3 failed for another reason than memory: b8 stays memory-feasible and accepted, but a failed
    attempt makes it inadmissible (issue 31 item 5), so b4 answers; its failure row is what the rules plant in."""
    set_row(folder, RTX, "b8", "warm", 3, notes=f"{OK_NOTE}; outcome=failed; completed=408; error=process killed "
                                                "by the scheduler (synthetic incident)")
    set_phase(folder, meas(RTX, "b8"), "warm_forward", 3, error="process killed by the scheduler (synthetic incident)")


def _b200_wins(folder: Path) -> None:
    """The RTX 4090 experiment rents 19 lots (209000 cents): the one-lot B200 (207100 cents) is now cheapest."""
    edit_protocol(folder, lambda p: p["experiments"][0]["rental"].update(lots=19))
    set_rows(folder, RTX, None, lots="19", package_total_usd_minor="209000")


SETUPS: dict[str, tuple[Callable[[Path], None] | None, str]] = {
    "example": (None, B4),
    "b8-wins": (_b8_wins, B8),
    "b8-failed": (_b8_failed, B4),
    "b200-wins": (_b200_wins, B200_B8),
    "times": (None, B4),  # the example dates every phase itself (inputs/make_example.py), in rotated order
    "sealed": (seal_example, B4),  # the example sealed and time-stamped before its window (tests/seal_helpers.py)
}


# ----------------------------------------------------------------------------- §1 the work and acceptance


def m_same_count_other_ids(c: Path) -> list[Where]:
    # 1000 rows still: one ID twice, one missing (two 1,000-line files do not prove equal ID sets)
    edit_lines(c, pred(RTX, "b8", "warm", 4), lambda ls: ls[:7] + [ls[8]] + ls[8:])
    return [Where(GRID, line_of(c, RTX, "b8", "warm", 4), "ids_match")]


def m_extra_answer(c: Path) -> list[Where]:
    edit_lines(c, pred(RTX, "b8", "warm", 5), lambda ls: ls[:5] + ["not-expected-pkg,utils"] + ls[6:])
    return [Where(GRID, line_of(c, RTX, "b8", "warm", 5), "ids_match")]


def m_hard_examples_dropped(c: Path) -> list[Where]:
    # the 50 last texts removed from the outputs, the row still claims the whole corpus
    edit_lines(c, pred(RTX, "b8", "warm", 1), lambda ls: ls[:-50])
    return [Where(GRID, line_of(c, RTX, "b8", "warm", 1), "observed_ids")]


def m_label_outside_classes(c: Path) -> list[Where]:
    edit_lines(c, pred(RTX, "b8", "warm", 2), lambda ls: ls[:3] + [ls[3].split(",")[0] + ",Utils"] + ls[4:])
    return [Where(GRID, line_of(c, RTX, "b8", "warm", 2), "format_valid")]


def m_quality_degraded(c: Path) -> list[Where]:
    edit_lines(c, pred(RTX, "b8", "warm", 4), lambda ls: [ls[0]] + [t.split(",")[0] + ",utils" for t in ls[1:]])
    return [Where(GRID, line_of(c, RTX, "b8", "warm", 4), "quality_value")]


def m_accepted_without_quality(c: Path) -> list[Where]:
    # predictions far below the threshold, quality_value left empty, the run still claimed accepted
    edit_lines(c, pred(RTX, "b8", "warm", 3), lambda ls: [ls[0]] + [t.split(",")[0] + ",utils" for t in ls[1:]])
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, quality_value=""), "corpus_accepted")]


def m_expected_count_claimed(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 2, expected_ids="999"), "expected_ids")]


def m_threshold_lowered(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 2, quality_threshold="0.7"), "quality_threshold")]


def m_tolerance_widened(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 4, quality_tolerance="0.1"), "quality_tolerance")]


def m_metric_changed(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "cold", 1, quality_metric="accuracy"), "quality_metric")]


def m_expected_duplicate(c: Path) -> list[Where]:
    edit_lines(c, EXPECTED, lambda ls: ls[:2] + [ls[1]] + ls[2:])
    return [Where(EXPECTED)]


def m_expected_shrunk(c: Path) -> list[Where]:
    # the hardest text removed from the expected IDs and the reference: 999 where 1000 are registered
    edit_lines(c, EXPECTED, lambda ls: ls[:-1])
    edit_lines(c, REFERENCE, lambda ls: ls[:-1])
    return [Where(EXPECTED, None)]


def m_reference_missing(c: Path) -> list[Where]:
    edit_lines(c, REFERENCE, lambda ls: ls[:10] + ls[11:])
    return [Where(REFERENCE, None)]


# ------------------------------------------------------------------------- §2 only the declared variable


def m_precision_changed(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 4, precision="float16"), "precision")]


def m_context_truncated(c: Path) -> list[Where]:
    lines = set_rows(c, RTX, "b8", context="256")
    edit_json(c, meas(RTX, "b8"), lambda d: d["configuration"].update(context=256))
    return [Where(GRID, lines[0], "context")]


def m_model_revision(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 5, model_revision="synthetic-classifier-r2"), "model_revision")]


def m_tokenizer_revision(c: Path) -> list[Where]:
    return [Where(GRID, set_rows(c, RTX, "b8", tokenizer_revision="synthetic-tokenizer-r2")[0], "tokenizer_revision")]


def m_seed_changed(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 1, seed="99"), "seed")]


def m_other_corpus(c: Path) -> list[Where]:
    lines = set_rows(c, RTX, "b8", corpus_revision="debian-descriptions-eval@sha256:0000000000000000")
    return [Where(GRID, lines[0], "corpus_revision")]


def m_batch4_filed_as_batch8(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, batch="4"), "batch")]


def m_oom_replaced_by_batch4(c: Path) -> list[Where]:
    # the out-of-memory run 3 silently rerun at batch 4 and filed under b8, with a whole prediction file
    rows = read_grid(c)
    h = rows[0]
    i = index_of(c, RTX, "b8", "warm", 3)
    rows[i] = list(rows[index_of(c, RTX, "b4", "warm", 3)])
    rows[i][h.index("variant_id")] = "b8"
    write_grid(c, rows)
    shutil.copyfile(c / pred(RTX, "b4", "warm", 3), c / pred(RTX, "b8", "warm", 3))
    return [Where(GRID, i + 1, "batch")]


def m_software_stack(c: Path) -> list[Where]:
    return [Where(GRID, set_rows(c, RTX, "b8", driver_version="580.65.06")[0], "driver_version")]


def m_gpu_count_of_lot(c: Path) -> list[Where]:
    # a B200 lot holds 2 GPUs, the measurement saw the program use 1
    return [Where(GRID, set_rows(c, B200, "b8", gpu_count="2")[0], "gpu_count")]


def m_gpu_not_rented(c: Path) -> list[Where]:
    # the b8 runs were made on a B200 and billed at the one-lot RTX 4090 price
    lines = set_rows(c, RTX, "b8", gpu_model="NVIDIA B200")
    edit_json(c, meas(RTX, "b8"), lambda d: d["environment"].update(gpu_name="NVIDIA B200"))
    return [Where(GRID, lines[0], "gpu_model")]


def m_gpu_model_not_seen(c: Path) -> list[Where]:
    edit_json(c, meas(RTX, "b8"), lambda d: d["environment"].update(gpu_name="NVIDIA H200"))
    return [Where(GRID, line_of(c, RTX, "b8", "cold", 1), "gpu_model")]


def m_fixed_corpus_revision(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["experiments"][0]["fixed"].update(corpus_revision="debian-descriptions-eval@sha256:1"))
    return [Where(PROTOCOL, None, "/experiments/0/fixed/corpus_revision")]


def m_measurement_of_other_variant(c: Path) -> list[Where]:
    # b8 linked to a measurement made at batch 4 (b4's file copied under b8's name)
    shutil.copyfile(c / meas(RTX, "b4"), c / meas(RTX, "b8"))
    return [Where(meas(RTX, "b8"), None, "/configuration/batch")]


def m_measurement_precision(c: Path) -> list[Where]:
    edit_json(c, meas(RTX, "b8"), lambda d: d["configuration"].update(dtype="float16"))
    return [Where(meas(RTX, "b8"), None, "/configuration/dtype")]


# ------------------------------------------------------------------------------ §3 comparable measurements


def m_timer_undeclared(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p.pop("timer"))
    return [Where(PROTOCOL)]


def m_cold_run_warmed(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b8", "cold", 1, warmup_iterations="2"), "warmup_iterations")]


def m_warmup_changed(c: Path) -> list[Where]:
    lines = set_rows(c, RTX, "b8", warmup_iterations="5")
    set_row(c, RTX, "b8", "cold", 1, warmup_iterations="0")
    edit_json(c, meas(RTX, "b8"), lambda d: d["configuration"].update(warmup=5))
    return [Where(GRID, lines[1], "warmup_iterations")]


def m_oom_row_deleted(c: Path) -> list[Where]:
    # the headline of issue 15: the OOM row and its partial file deleted, b8 then looks "4 ok, 0 failed"
    rows = read_grid(c)
    del rows[index_of(c, RTX, "b8", "warm", 3)]
    write_grid(c, rows)
    (c / pred(RTX, "b8", "warm", 3)).unlink()
    return [Where(GRID, None, "run_index")]


def m_slow_row_deleted(c: Path) -> list[Where]:
    rows = read_grid(c)
    del rows[index_of(c, RTX, "b4", "warm", 3)]
    write_grid(c, rows)
    (c / pred(RTX, "b4", "warm", 3)).unlink()
    return [Where(GRID, None, "run_index")]


def m_sixth_attempt(c: Path) -> list[Where]:
    # a sixth, faster run added to keep the best five
    shutil.copyfile(c / pred(RTX, "b4", "warm", 4), c / pred(RTX, "b4", "warm", 6))
    return [Where(GRID, append_copy(c, RTX, "b4", "warm", 4, run_index="6", elapsed_seconds="30.001"), "run_index")]


def m_attempt_twice(c: Path) -> list[Where]:
    return [Where(GRID, append_copy(c, RTX, "b4", "warm", 2, elapsed_seconds="30.001"), "run_index")]


def m_slow_run_aborted(c: Path) -> list[Where]:
    # the slowest b4 run declared aborted, so that it leaves the median; its measurement says it completed
    line = set_row(c, RTX, "b4", "warm", 3, elapsed_seconds="", corpus_accepted="false", quality_value="",
                   notes=f"{OK_NOTE}; outcome=aborted; completed=1000")
    return [Where(GRID, line, "notes")]


def m_oom_relabelled(c: Path) -> list[Where]:
    # outcome=oom rewritten outcome=failed: b8 would look memory-feasible; its measurement says out of memory
    notes = cell(c, RTX, "b8", "warm", 3, "notes").replace("outcome=oom", "outcome=failed")
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, notes=notes), "notes")]


def m_measurement_repeat_dropped(c: Path) -> list[Where]:
    edit_json(c, meas(RTX, "b4"), lambda d: d["phases"].pop())
    return [Where(meas(RTX, "b4"), None, "/phases")]


def m_measurement_repeat_before_failure(c: Path) -> list[Where]:
    index = phase_index(c, meas(RTX, "b8"), "warm_forward", 2)
    edit_json(c, meas(RTX, "b8"), lambda d: d["phases"].pop(index))
    return [Where(meas(RTX, "b8"), None, "/phases")]


def m_phase_order(c: Path) -> list[Where]:
    def swap(d: Any) -> None:
        d["phases"][2], d["phases"][3] = d["phases"][3], d["phases"][2]

    edit_json(c, meas(RTX, "b4"), swap)
    return [Where(meas(RTX, "b4"), None, "/phases")]


def _memory(c: Path, exp: str, variant: str, phase: str, run: int) -> tuple[int, int]:
    return (int(cell(c, exp, variant, phase, run, "peak_allocated_bytes")),
            int(cell(c, exp, variant, phase, run, "peak_reserved_bytes")))


def m_allocated_plus_reserved(c: Path) -> list[Where]:
    alloc, res = _memory(c, RTX, "b8", "warm", 2)
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 2, peak_reserved_bytes=str(alloc + res)), "peak_reserved_bytes")]


def m_peaks_subtracted(c: Path) -> list[Where]:
    alloc, res = _memory(c, RTX, "b4", "warm", 2)
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 2, peak_reserved_bytes=str(res - alloc)), "peak_reserved_bytes")]


def m_allocated_above_reserved(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b8", "cold", 1, peak_allocated_bytes="999999999999"), "peak_allocated_bytes")]


def m_peak_below_baseline(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 1, peak_allocated_bytes="1000"), "peak_allocated_bytes")]


def m_p95_column(c: Path) -> list[Where]:
    # a p95 from five runs written into the grid as a 39th column
    rows = read_grid(c)
    write_grid(c, [rows[0] + ["p95_seconds"]] + [r + ["42.0"] for r in rows[1:]])
    return [Where(GRID, 1)]


def m_measurement_missing(c: Path) -> list[Where]:
    (c / meas(RTX, "b4")).unlink()
    return [Where(meas(RTX, "b4"))]


# ------------------------------------------------------------------------------------------ §4 the grid


def m_column_renamed(c: Path) -> list[Where]:
    rows = read_grid(c)
    rows[0][rows[0].index("elapsed_seconds")] = "elapsed_s"
    write_grid(c, rows)
    return [Where(GRID, 1)]


def m_decimal_comma(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 1, elapsed_seconds="39,943"), "elapsed_seconds")]


def m_unquoted_comma(c: Path) -> list[Where]:
    line = line_of(c, RTX, "b4", "warm", 2)
    grid_line_text(c, line, lambda t: t + ", rerun after a driver warning")
    return [Where(GRID, line)]


def m_not_boolean(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 2, ids_match="yes"), "ids_match")]


def m_empty_memory_as_zero(c: Path) -> list[Where]:
    # the measurement did not record the peak (null); the grid turns "not measured" into 0 bytes
    set_phase(c, meas(RTX, "b8"), "warm_forward", 4, peak_allocated_bytes=None)
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 4, peak_allocated_bytes="0"), "peak_allocated_bytes")]


def m_completed_timed_zero(c: Path) -> list[Where]:
    # three of b1's five runs "took" 0 s: its median drops to 0 and b1 would beat b4
    lines = [set_row(c, RTX, "b1", "warm", r, elapsed_seconds="0") for r in (1, 2, 3)]
    return [Where(GRID, lines[0], "elapsed_seconds")]


def m_failed_timed_zero(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, elapsed_seconds="0"), "elapsed_seconds")]


def m_completed_without_duration(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 3, elapsed_seconds=""), "elapsed_seconds")]


def m_failed_run_accepted(c: Path) -> list[Where]:
    # the failed run's file replaced by a whole one, and the failure claimed an accepted corpus
    shutil.copyfile(c / pred(RTX, "b8", "warm", 2), c / pred(RTX, "b8", "warm", 3))
    notes = cell(c, RTX, "b8", "warm", 3, "notes").replace("completed=408", "completed=1000")
    line = set_row(c, RTX, "b8", "warm", 3, observed_ids="1000", ids_match="true", quality_value="0.876153",
                   corpus_accepted="true", notes=notes)
    return [Where(GRID, line, "corpus_accepted")]


def m_completed_count(c: Path) -> list[Where]:
    notes = cell(c, RTX, "b8", "warm", 3, "notes").replace("completed=408", "completed=900")
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, notes=notes), "notes")]


def m_repeats_counted_as_results(c: Path) -> list[Where]:
    return [Where(GRID, set_rows(c, RTX, "b4", accepted_unique_corpora="5")[0], "accepted_unique_corpora")]


def m_package_summed(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 5, package_total_usd_minor="55000"), "package_total_usd_minor")]


def m_package_times_gpus(c: Path) -> list[Where]:
    return [Where(GRID, set_rows(c, B200, "b8", package_total_usd_minor="414200")[0], "package_total_usd_minor")]


def m_package_prorated(c: Path) -> list[Where]:
    # 96 h of 168 h billed: a package is not billed by the hour
    return [Where(GRID, set_rows(c, B200, "b8", package_total_usd_minor="118343")[0], "package_total_usd_minor")]


def m_row_package_days(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "cold", 1, duration_days="3"), "duration_days")]


def m_row_lots(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 1, lots="2"), "lots")]


def m_prediction_missing(c: Path) -> list[Where]:
    (c / pred(RTX, "b4", "warm", 5)).unlink()
    return [Where(pred(RTX, "b4", "warm", 5))]


def m_unregistered_variant(c: Path) -> list[Where]:
    shutil.copytree(c / "predictions" / RTX / "b8", c / "predictions" / RTX / "b16")
    line = append_copy(c, RTX, "b8", "warm", 2, variant_id="b16", batch="16", elapsed_seconds="12.5")
    return [Where(GRID, line, "variant_id")]


def m_invisible_in_revision(c: Path) -> list[Where]:
    line = set_row(c, RTX, "b8", "warm", 1, model_revision=f"synthetic-classifier-r1{ZWSP}")
    return [Where(GRID, line, "model_revision")]


def m_invisible_in_notes(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 1, notes=f"{OK_NOTE} {RLO}DSU 00.05"), "notes")]


def m_formula_in_notes(c: Path) -> list[Where]:
    line = set_row(c, RTX, "b4", "warm", 1, notes='=HYPERLINK("http://example.invalid","see log")')
    return [Where(GRID, line, "notes")]


def m_invisible_in_expected_id(c: Path) -> list[Where]:
    edit_lines(c, EXPECTED, lambda ls: [ls[0], ls[1] + ZWSP] + ls[2:])
    edit_lines(c, REFERENCE, lambda ls: [ls[0], ls[1].replace(",", ZWSP + ",", 1)] + ls[2:])
    return [Where(EXPECTED, 2)]


# -------------------------------------------------------------------------------------------- §5 the cost


def m_tariff_not_catalogue(c: Path) -> list[Where]:
    # the B200 lot "published" at 50 USD: B200 would become the cheapest
    edit_tariffs(c, lambda ls: [t.replace(",207100,", ",5000,") for t in ls])
    set_rows(c, B200, None, package_total_usd_minor="5000")
    return [Where(TARIFFS, 3, "price_per_lot_usd_minor")]


def m_illustrative_price(c: Path) -> list[Where]:
    edit_tariffs(c, lambda ls: [t.replace(",207100,", ",5000,").replace("published", "illustrative")
                                if t.startswith("b200") else t for t in ls])
    set_rows(c, B200, None, package_total_usd_minor="5000")
    return [Where(TARIFFS, ANY, "price_status")]


def m_package_unverifiable(c: Path) -> list[Where]:
    # no tariff for the B200 any more, its rows still claim 207100 cents
    edit_tariffs(c, lambda ls: [t for t in ls if not t.startswith("b200")])
    return [Where(GRID, line_of(c, B200, "b8", "cold", 1), "package_total_usd_minor")]


def m_no_published_price(c: Path) -> list[Where]:
    edit_tariffs(c, lambda ls: ls[:1])
    set_rows(c, RTX, None, package_total_usd_minor="")
    set_rows(c, B200, None, package_total_usd_minor="")
    return [Where(TARIFFS, None, "gpu")]


def m_package_too_short(c: Path) -> list[Where]:
    # a 3-day RTX 4090 package for the 96 h window
    edit_protocol(c, lambda p: p["experiments"][0]["rental"].update(duration_days=3))
    set_rows(c, RTX, None, duration_days="3", package_total_usd_minor="")
    return [Where(PROTOCOL, None, f"/experiments/{RTX}/rental")]


def m_window_beyond_30_days(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: (p["window"].update(end="2026-11-20T09:00"), p.update(deadline="2026-11-21T18:00")))
    return [Where(PROTOCOL, None, "/window")]


def m_registered_after_start(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p.update(registered_at="2026-10-06T10:00:00+02:00"))
    return [Where(PROTOCOL, None, "/registered_at")]


def m_unknown_timezone(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["window"].update(timezone="Europe/Pariss"))
    return [Where(PROTOCOL, None, "/window/timezone")]


def m_window_in_spring_gap(c: Path) -> list[Where]:
    # 02:30 on 2027-03-28 does not exist in Europe/Paris (clocks jump from 02:00 to 03:00)
    edit_protocol(c, lambda p: (p["window"].update(start="2027-03-26T09:00", end="2027-03-28T02:30"),
                                p.update(deadline="2027-03-29T18:00")))
    return [Where(PROTOCOL, None, "/window/end")]


def m_window_in_autumn_overlap(c: Path) -> list[Where]:
    # 02:30 on 2026-10-25 occurs twice in Europe/Paris (clocks go back from 03:00 to 02:00)
    edit_protocol(c, lambda p: (p["window"].update(start="2026-10-21T09:00", end="2026-10-25T02:30"),
                                p.update(deadline="2026-10-25T18:00")))
    return [Where(PROTOCOL, None, "/window/end")]


def m_path_template_outside(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["files"].update(predictions="../{experiment_id}/{variant_id}/{phase}-{run_index}.csv"))
    return [Where(PROTOCOL, None, "/files/predictions")]


# ----------------------------------------------------------------------------------------- time is evidence


def _time_defect(c: Path, phase: str, repeat: int | None, started: str, ended: str) -> tuple[str, int]:
    return meas(RTX, "b4"), set_phase(c, meas(RTX, "b4"), phase, repeat, started_at=started, ended_at=ended)


def m_run_before_registration(c: Path) -> list[Where]:
    rel, i = _time_defect(c, "cold_forward", None, "2026-09-30T07:30:00.000000Z", "2026-09-30T07:31:00.000000Z")
    return [Where(rel, None, f"/phases/{i}/started_at"),
            Where(GRID, line_of(c, RTX, "b4", "cold", 1), "elapsed_seconds")]


def m_run_outside_window(c: Path) -> list[Where]:
    rel, i = _time_defect(c, "warm_forward", 2, "2026-10-05T06:30:00.000000Z", "2026-10-05T06:31:00.000000Z")
    return [Where(rel, None, f"/phases/{i}/started_at"),
            Where(GRID, line_of(c, RTX, "b4", "warm", 2), "elapsed_seconds")]


def m_run_after_deadline(c: Path) -> list[Where]:
    rel, i = _time_defect(c, "warm_forward", 5, "2026-10-09T16:50:00.000000Z", "2026-10-09T17:00:00.000000Z")
    return [Where(rel, None, f"/phases/{i}/ended_at"),
            Where(GRID, line_of(c, RTX, "b4", "warm", 5), "elapsed_seconds")]


def m_run_time_reversed(c: Path) -> list[Where]:
    # a run that "ended" before it started: its place on the timeline proves nothing
    rel, i = _time_defect(c, "warm_forward", 3, "2026-10-06T09:00:00.000000Z", "2026-10-06T08:59:00.000000Z")
    return [Where(rel, None, f"/phases/{i}/ended_at")]

def m_times_removed(c: Path) -> list[Where]:
    # measurements made by another tool, without started_at/ended_at: nothing proves when the runs happened
    paths = sorted((c / "measurements").iterdir())
    for path in paths:
        def strip(doc: Any) -> None:
            for phase in doc["phases"]:
                phase.pop("started_at", None)
                phase.pop("ended_at", None)

        edit_json(c, path.relative_to(c).as_posix(), strip)
    return [Where(path.relative_to(c).as_posix(), None, "/phases") for path in paths]


def m_interactive_scenario(c: Path) -> list[Where]:
    # an interactive service ranked from this offline test
    edit_protocol(c, lambda p: p.update(scenario="interactive-service"))
    return [Where(PROTOCOL)]

# ------------------------------------------------------------------------------------- cases of our own


def m_billed_as_cheaper_gpu(c: Path) -> list[Where]:
    # the B200 experiment registered as a one-lot RTX 4090 rental: B200 speed at the RTX 4090 price
    edit_protocol(c, lambda p: p["experiments"][1]["rental"].update(gpu="rtx-4090"))
    set_rows(c, B200, None, package_total_usd_minor="11000")
    return [Where(GRID, line_of(c, B200, "b8", "cold", 1), "gpu_model")]


def m_negative_duration(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 1, elapsed_seconds="-5"), "elapsed_seconds")]


def m_cheaper_duplicate_tariff(c: Path) -> list[Where]:
    # a second, cheaper B200 row placed first: the first of two prices would be read
    edit_tariffs(c, lambda ls: [ls[0], "b200,B200,7,5000,2,2026-09-24,published"] + ls[1:])
    set_rows(c, B200, None, package_total_usd_minor="5000")
    return [Where(TARIFFS, 4, "gpu")]


def m_lot_size_changed(c: Path) -> list[Where]:
    edit_tariffs(c, lambda ls: [t.replace(",207100,2,", ",207100,4,") for t in ls])
    return [Where(TARIFFS, 3, "gpus_per_lot")]


def m_oom_renumbered(c: Path) -> list[Where]:
    # the OOM run filed as a second "run 2", so that run 3 seems never attempted
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, run_index="2"), "run_index")]


def m_measurement_unlinked(c: Path) -> list[Where]:
    # b8's measurement unlinked and removed, its OOM rewritten outcome=failed: nothing contradicts the grid
    edit_protocol(c, lambda p: p["experiments"][0]["variants"][2].pop("measurement"))
    (c / meas(RTX, "b8")).unlink()
    notes = cell(c, RTX, "b8", "warm", 3, "notes").replace("outcome=oom", "outcome=failed")
    set_row(c, RTX, "b8", "warm", 3, notes=notes)
    return [Where(PROTOCOL, None, "/experiments/0/variants/2/measurement")]


def m_times_stripped_from_one(c: Path) -> list[Where]:
    # b4 ran before its registration, and its measurement's times were deleted; the other files keep theirs
    set_phase(c, meas(RTX, "b4"), "cold_forward", None, started_at="2026-09-30T07:30:00.000000Z",
              ended_at="2026-09-30T07:31:00.000000Z")

    def strip(doc: Any) -> None:
        for phase in doc["phases"]:
            phase.pop("started_at", None)
            phase.pop("ended_at", None)

    edit_json(c, meas(RTX, "b4"), strip)
    return [Where(meas(RTX, "b4"))]


def m_invented_price(c: Path) -> list[Where]:
    # a "published" H200 price that the catalogue snapshot does not hold
    edit_tariffs(c, lambda ls: ls + ["h200,H200,7,1000,1,2026-09-24,published"])
    return [Where(TARIFFS, 4)]


def m_environment_not_seen(c: Path) -> list[Where]:
    # b8 measured on a newer PyTorch and CUDA runtime than the stack the grid reports for every variant
    edit_json(c, meas(RTX, "b8"), lambda d: d["environment"].update(torch_version="2.12.0+cu130",
                                                                     runtime_version="13.0"))
    return [Where(GRID, line_of(c, RTX, "b8", "cold", 1), "torch_version")]


def m_measured_without_gpu(c: Path) -> list[Where]:
    # a measurement that says no GPU was available, yet carries GPU memory counters for every phase
    edit_json(c, meas(RTX, "b8"), lambda d: d["environment"].update(gpu_available=False,
                                                                     unavailable_reason="no CUDA device"))
    return [Where(meas(RTX, "b8"))]


def m_gpus_beyond_rental(c: Path) -> list[Where]:
    # the B200 program spread over 4 GPUs while one lot (2 GPUs) is rented and billed
    for variant in ("b1", "b4", "b8"):
        edit_json(c, meas(B200, variant), lambda d: d["environment"].update(devices_used=4, visible_device_count=4))
    return [Where(GRID, set_rows(c, B200, None, gpu_count="4")[0])]


# ------------------------------------------------------------------------ decision rules without a finding


def m_faster_not_accepted(c: Path) -> list[Where]:
    # an honest format failure of one b8 run: reported as not accepted, no claim is false
    edit_lines(c, pred(RTX, "b8", "warm", 2), lambda ls: ls[:3] + [ls[3].split(",")[0] + ",Utils"] + ls[4:])
    set_row(c, RTX, "b8", "warm", 2, format_valid="false", quality_value="", corpus_accepted="false")
    return []


def m_deadline_before_window_end(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p.update(deadline="2026-10-08T18:00"))
    return []


def m_overlapping_series(c: Path) -> list[Where]:
    # b1 as fast as b4, with overlapping ranges: the five runs do not decide between them
    for run, seconds in zip(range(1, 6), ("39.1", "41.9", "40.3", "42.6", "38.7"), strict=True):
        set_row(c, RTX, "b1", "warm", run, elapsed_seconds=seconds)
    return []


def _overlapping_series_measured(c: Path) -> list[Where]:
    """spread-vs-gap's b1 as fast as b4, its measurement timing the same runs (the forward pass 0.8 of the grid's
    duration, as everywhere in the example) instead of grid durations below the work measured."""
    where = m_overlapping_series(c)
    for run, seconds in zip(range(1, 6), (39.1, 41.9, 40.3, 42.6, 38.7), strict=True):
        work = round(seconds * 0.8, 3)
        start = json.loads((c / meas(RTX, "b1")).read_text(encoding="utf-8"))["phases"][
            phase_index(c, meas(RTX, "b1"), "warm_forward", run)]["started_at"]
        set_phase(c, meas(RTX, "b1"), "warm_forward", run, elapsed_seconds=work,
                  ended_at=(_parse(start) + timedelta(seconds=work)).strftime(STAMP))
    return where


def v_withheld_unmeasured(decision: dict[str, Any], findings: list[Any]) -> None:
    """No configuration's runs were measured (or dated): the answer is withheld with that one plain reason."""
    d = decision["decision"]
    assert d["answer"] is None and d["status"] == "withheld", d
    assert d["reason"] == "no answer: no configuration's runs were measured", d["reason"]
    assert d["ranking"] == [], d["ranking"]
    assert all(c["admissible"] is False for c in decision["configurations"])
    assert {c["id"] for c in decision["configurations"]} == {e["configuration"] for e in d["excluded"]}


def v_not_feasible(decision: dict[str, Any], findings: list[Any]) -> None:
    c = next(c for c in decision["configurations"] if c["id"] == B8)
    assert c["memory_feasible"] is False and c["out_of_memory"] == 1, c


def v_no_p95(decision: dict[str, Any], findings: list[Any]) -> None:
    for c in decision["configurations"]:
        for phase in ("warm", "cold"):
            assert c["timing"][phase]["p95"] is None, (c["id"], phase)
            assert "no p95" in c["timing"][phase]["tail_note"], (c["id"], phase)


def v_not_decided(decision: dict[str, Any], findings: list[Any]) -> None:
    d = decision["decision"]
    assert d["series_decides"] is False, d
    assert d["uncertainty"], d
    assert any(set(t["configurations"]) == {B1, B4} and t["timing_decides"] is False for t in d["ties"]), d["ties"]


def v_path_once(decision: dict[str, Any], findings: list[Any]) -> None:
    hits = [f for f in findings if f.code == "path-outside-campaign"]
    assert len(hits) == 1, [(f.file, f.line, f.field) for f in hits]


# ---------------------------------------------------------------------------------------------- the table

SEED_RULES: list[SeedRule] = [
    # §1: the useful work and acceptance
    SeedRule("ids-same-count-other-set", "two 1,000-line files do not prove equal ID sets; sets and duplicates "
             "are checked", f"{P} §1; {A} 'Beispiel: dieselben 1.000 Texte klassifizieren'", "ids-match-mismatch",
             m_same_count_other_ids, "b8-wins", targets=(B8,)),
    SeedRule("no-extra-answer", "no additional answer in the outputs", f"{P} §1", "ids-match-mismatch",
             m_extra_answer, "b8-wins", targets=(B8,)),
    SeedRule("hard-examples-kept", "removing difficult examples shrinks the corpus: every expected ID is answered",
             f"{A} 'Beispiel: dieselben 1.000 Texte klassifizieren'", "observed-ids-mismatch",
             m_hard_examples_dropped, "b8-wins", targets=(B8,)),
    SeedRule("format-valid", "the format is valid (labels in the declared classes)", f"{P} §1, §4 ids_match/"
             "format_valid", "format-valid-mismatch", m_label_outside_classes, "b8-wins", targets=(B8,)),
    SeedRule("quality-recomputed", "the pre-registered quality rule is met, recomputed from the outputs",
             f"{P} §1; {A} 'Festlegen, was als akzeptiertes Ergebnis zählt'", "quality-value-mismatch",
             m_quality_degraded, "b8-wins", targets=(B8,)),
    SeedRule("accepted-only-if-all", "corpus_accepted true only when every validation condition holds",
             f"{P} §4 corpus_accepted", "corpus-accepted-mismatch", m_accepted_without_quality, "b8-wins",
             targets=(B8,)),
    SeedRule("expected-count", "expected_ids and observed_ids are counts of the checked sets", f"{P} §4 "
             "expected_ids/observed_ids", "expected-ids-mismatch", m_expected_count_claimed, targets=(B4,)),
    SeedRule("threshold-registered", "the threshold is fixed before the test, never lowered afterwards",
             f"{P} §1, §4 quality_*; {A} 'Qualität nach einem Wechsel der Präzision prüfen'",
             "rule-not-registered", m_threshold_lowered, "b8-wins", targets=(B8,)),
    SeedRule("tolerance-registered", "the tolerance against the reference is fixed before the test", f"{P} §1; "
             f"{A} 'Festlegen, was als akzeptiertes Ergebnis zählt'", "rule-not-registered", m_tolerance_widened,
             targets=(B4,)),
    SeedRule("metric-registered", "the main metric is fixed before any measurement", f"{P} §1",
             "rule-not-registered", m_metric_changed, targets=(B4,)),
    SeedRule("expected-ids-once", "each of the expected IDs exactly once in the expected list", f"{P} §1",
             "duplicate-expected-id", m_expected_duplicate, protect="withheld"),
    SeedRule("corpus-size", "the corpus is the registered 1,000 texts", f"{P} §1; {A} 'Beispiel: dieselben "
             "1.000 Texte klassifizieren'", "corpus-size-mismatch", m_expected_shrunk, protect="withheld"),
    SeedRule("reference-per-text", "a checked reference for every text", f"{P} §1; {A} 'Eingaben, Referenz und "
             "Manifest vorbereiten'", "reference-missing-id", m_reference_missing, protect="withheld"),
    # §2: only the announced variant changes
    SeedRule("precision-held", "the same precision across the batch series", f"{P} §2; {A} 'Beispiel: dieselben "
             "1.000 Texte klassifizieren'", "fixed-value-mismatch", m_precision_changed, "b8-wins", targets=(B8,)),
    SeedRule("context-held", "the same context limit; truncating the texts changes the work", f"{P} §2; {A} "
             "'Eingaben, Referenz und Manifest vorbereiten'", "fixed-value-mismatch", m_context_truncated,
             "b8-wins", targets=(B8,)),
    SeedRule("model-held", "the same model revision", f"{P} §2", "fixed-value-mismatch", m_model_revision,
             "b8-wins", targets=(B8,)),
    SeedRule("tokenizer-held", "the same tokenizer revision", f"{P} §2", "fixed-value-mismatch",
             m_tokenizer_revision, "b8-wins", targets=(B8,)),
    SeedRule("seed-held", "the registered seed", f"{P} §1, §4 seed", "fixed-value-mismatch", m_seed_changed,
             "b8-wins", targets=(B8,)),
    SeedRule("corpus-held", "the same corpus for every configuration", f"{P} §2; {A} 'Nutzbare Ergebnisse "
             "zählen, nicht Wiederholungen von Messungen'", "fixed-value-mismatch", m_other_corpus, "b8-wins",
             targets=(B8,)),
    SeedRule("batch-as-registered", "a row applies its variant's value: a batch-4 run is not filed under batch 8",
             f"{P} §4 precision/batch/context", "variant-value-mismatch", m_batch4_filed_as_batch8, "b8-wins",
             targets=(B8,)),
    SeedRule("oom-not-replaced", "an out-of-memory batch-8 run is not silently replaced by a smaller batch",
             f"{A} 'Wiederholen und Fehlschläge beibehalten'", "variant-value-mismatch", m_oom_replaced_by_batch4,
             targets=(B8,)),
    SeedRule("software-stack-held", "differing software stacks make other configurations", f"{A} 'Eingaben, "
             f"Referenz und Manifest vorbereiten'; {P} §2", "not-comparable", m_software_stack, "b8-wins",
             targets=(B8,)),
    SeedRule("gpus-actually-used", "a commercial package with two GPUs does not mean the program uses both",
             f"{P} §2; {A} 'Speicher als Machbarkeitskriterium nutzen'; {L} §3", "gpu-count-not-seen",
             m_gpu_count_of_lot, "b200-wins", targets=(B200_B8,)),
    SeedRule("gpu-rented", "the GPU actually used is the rented one, not an offer's name", f"{P} §4 gpu_model; "
             f"{A} 'Eingaben, Referenz und Manifest vorbereiten'", "gpu-not-rented", m_gpu_not_rented, "b8-wins",
             targets=(B8,)),
    SeedRule("gpu-observed", "gpu_model is the hardware the runtime saw", f"{P} §2, §4 gpu_model; {L} §2",
             "gpu-model-not-seen", m_gpu_model_not_seen, "b8-wins", targets=(B8,)),
    SeedRule("one-corpus-revision", "the corpus revision is fixed once for the protocol", f"{P} §1",
             "corpus-revision-mismatch", m_fixed_corpus_revision, targets=RTX_ALL),
    SeedRule("measurement-describes-variant", "the measurement JSON is of the variant it is linked to (batch)",
             f"{P} §4 precision/batch/context; {L} §3", "measurement-config-mismatch",
             m_measurement_of_other_variant, "b8-wins", targets=(B8,)),
    SeedRule("measurement-precision", "the measurement JSON ran the registered precision", f"{P} §2; {L} §3",
             "measurement-config-mismatch", m_measurement_precision, "b8-wins", targets=(B8,)),
    # §3: comparable runs
    SeedRule("offline-scenario", "the scenario is an offline corpus; an interactive one is not ranked by this "
             "test", f"{A} 'Festlegen, was als akzeptiertes Ergebnis zählt'", "schema-violation",
             m_interactive_scenario, protect="withheld"),
    SeedRule("timer-declared", "what the timer covers is declared", f"{P} §3; {A} 'Start, Aufwärmphase und "
             "gemessenen Durchlauf trennen'", "schema-violation", m_timer_undeclared, protect="withheld"),
    SeedRule("cold-apart", "loading, first pass and warmed-up passes are kept apart", f"{P} §3, §4 phase; {L} §3",
             "warmup-mismatch", m_cold_run_warmed, "b8-wins", targets=(B8,)),
    SeedRule("warmup-identical", "one warm-up rule for all variants, not adjusted afterwards", f"{P} §3; {A} "
             "'Start, Aufwärmphase und gemessenen Durchlauf trennen'", "warmup-mismatch", m_warmup_changed,
             "b8-wins", targets=(B8,)),
    SeedRule("failure-row-kept", "a failed run keeps its row: it is not deleted", f"{P} §3; {A} 'Wiederholen und "
             "Fehlschläge beibehalten'", "missing-attempt", m_oom_row_deleted, targets=(B8,)),
    SeedRule("slow-row-kept", "a slow run is not silently discarded", f"{P} §3; {A} 'Dauern lesen, ohne fünf "
             "Versuche zu überinterpretieren'", "missing-attempt", m_slow_row_deleted, targets=(B4,)),
    SeedRule("five-runs-not-best-of-six", "five measured runs per variant; only the best run is not kept",
             f"{P} §3; {A} 'Dauern lesen, ohne fünf Versuche zu überinterpretieren'", "unregistered-attempt",
             m_sixth_attempt, targets=(B4,)),
    SeedRule("one-row-per-attempt", "one row per attempted run", f"{P} §4; {A} 'Wiederholen und Fehlschläge "
             "beibehalten'", "duplicate-row-key", m_attempt_twice, targets=(B4,)),
    SeedRule("slow-run-not-failed", "a slow run is explained, not declared failed to leave the median", f"{P} §3; "
             f"{A} 'Dauern lesen, ohne fünf Versuche zu überinterpretieren'", "outcome-disagrees-measurement",
             m_slow_run_aborted, targets=(B4,)),
    SeedRule("oom-stays-oom", "a configuration exceeding memory stays a failure observation", f"{P} §5; {A} "
             "'Speicher als Machbarkeitskriterium nutzen'", "outcome-disagrees-measurement", m_oom_relabelled,
             targets=(B8,)),
    SeedRule("measurement-repeats", "one warm_forward row per repeat", f"{L} §3", "warm-rows-mismatch",
             m_measurement_repeat_dropped, targets=(B4,)),
    SeedRule("measurement-repeats-until-failure", "each attempted repeat keeps its row up to the failure",
             f"{L} §3; {P} §3", "warm-rows-mismatch", m_measurement_repeat_before_failure, targets=(B8,)),
    SeedRule("measurement-phase-order", "phases model_load, inputs, cold_forward, warmup, warm_forward",
             f"{L} §3", "phase-order", m_phase_order, targets=(B4,)),
    SeedRule("allocated-not-added", "allocated is part of reserved: never add them", f"{P} §3; {A} 'Speicher als "
             f"Machbarkeitskriterium nutzen'; {L} §3", "memory-disagrees", m_allocated_plus_reserved, "b8-wins",
             targets=(B8,)),
    SeedRule("peaks-not-subtracted", "the two peaks may occur at different moments: never subtract them",
             f"{P} §3; {L} §3", "memory-disagrees", m_peaks_subtracted, targets=(B4,)),
    SeedRule("allocated-within-reserved", "allocated <= reserved", f"{P} §3; {L} §3",
             "allocated-exceeds-reserved", m_allocated_above_reserved, "b8-wins", targets=(B8,)),
    SeedRule("peak-after-reset", "the absolute peak after resetting the statistics is at least the baseline",
             f"{P} §3; {L} §3", "peak-below-baseline", m_peak_below_baseline, targets=(B4,)),
    SeedRule("no-p95-column", "five observations do not justify a p95: the grid has no place for one",
             f"{P} §3, §4 (the 38 columns); {A} 'Dauern lesen, ohne fünf Versuche zu überinterpretieren'",
             "unknown-column", m_p95_column, protect="withheld"),
    SeedRule("evidence-kept", "the measurements are kept with the results", f"{P} §5; {A} 'Das Protokoll "
             "herunterladen und einen wiederverwendbaren Nachweis behalten'", "missing-file", m_measurement_missing,
             targets=(B4,)),
    # §4: the grid
    SeedRule("grid-columns", "the distributed grid's columns, unchanged", f"{P} §4; {L} Inhalt", "renamed-column",
             m_column_renamed, protect="withheld"),
    SeedRule("decimal-point", "a decimal point for times", f"{P} §4", "decimal-comma", m_decimal_comma,
             targets=(B4,)),
    SeedRule("csv-quoting", "commas in a note are protected by the usual CSV rules", f"{P} §4", "field-count",
             m_unquoted_comma, protect="withheld"),
    SeedRule("booleans", "true/false after a real check", f"{P} §4 ids_match/format_valid", "not-boolean",
             m_not_boolean, targets=(B4,)),
    SeedRule("empty-is-not-zero", "an empty cell means not recorded; 0 means a real zero", f"{P} §4; {A} "
             "'Wiederholen und Fehlschläge beibehalten'", "zero-not-measured", m_empty_memory_as_zero, "b8-wins",
             targets=(B8,)),
    SeedRule("completed-run-not-zero", "a raw duration, never a zero or expected value", f"{P} §4 elapsed_seconds;"
             f" {A} 'Wiederholen und Fehlschläge beibehalten'", "completed-run-timed-zero", m_completed_timed_zero,
             targets=(B1,)),
    SeedRule("failure-not-zero", "a failure is not a time replaced by zero", f"{P} §5; {A} 'Wiederholen und "
             "Fehlschläge beibehalten'", "failed-run-timed-zero", m_failed_timed_zero, "b8-failed", targets=(B8,)),
    SeedRule("duration-kept", "every raw duration is kept", f"{P} §3, §4 elapsed_seconds", "missing-duration",
             m_completed_without_duration, targets=(B4,)),
    SeedRule("failure-never-accepted", "an interruption is never an economic success", f"{A} 'Wiederholen und "
             f"Fehlschläge beibehalten'; {P} §5", "failed-run-accepted", m_failed_run_accepted, "b8-failed",
             targets=(B8,)),
    SeedRule("completed-count", "the failure row keeps the number of completed entries", f"{A} 'Wiederholen und "
             "Fehlschläge beibehalten'", "completed-count-mismatch", m_completed_count, "b8-failed", targets=(B8,)),
    SeedRule("repeats-not-results", "five repeats of one corpus are not five results", f"{P} §4 "
             f"accepted_unique_corpora, §5; {A} 'Nutzbare Ergebnisse zählen, nicht Wiederholungen von Messungen'",
             "accepted-corpora-mismatch", m_repeats_counted_as_results, targets=(B4,)),
    SeedRule("package-once", "one expense is not added five times", f"{P} §4 package_total_usd_minor",
             "package-total-mismatch", m_package_summed, targets=(B4,)),
    SeedRule("b200-lot-two-gpus", "a B200 lot holds two GPUs and its price covers them", f"{P} §5; {A} 'Die "
             f"gebundenen Kosten mit unseren Paketen berechnen'; {L} §4", "package-total-mismatch",
             m_package_times_gpus, "b200-wins", targets=(B200_B8,)),
    SeedRule("no-hourly-billing", "a short run does not turn the package into hourly billing", f"{A} 'Die "
             f"gebundenen Kosten mit unseren Paketen berechnen'; {L} §4", "package-total-mismatch",
             m_package_prorated, "b200-wins", targets=(B200_B8,)),
    SeedRule("row-package-days", "duration_days is the whole package chosen", f"{P} §4 duration_days",
             "package-mismatch", m_row_package_days, targets=(B4,)),
    SeedRule("row-lots", "lots are the lots billed", f"{P} §4 lots", "package-mismatch", m_row_lots,
             targets=(B4,)),
    SeedRule("outputs-kept", "the individual outputs are kept for the audit", f"{P} §1, §5",
             "missing-prediction-file", m_prediction_missing, targets=(B4,)),
    SeedRule("variants-declared", "a new setting is a declared variant", f"{A} 'Beispiel: dieselben 1.000 Texte "
             "klassifizieren', 'Wiederholen und Fehlschläge beibehalten'", "unknown-variant",
             m_unregistered_variant, protect="withheld"),
    SeedRule("stable-identifiers", "stable identifiers and revisions (no hidden characters)", f"{P} §4 "
             f"experiment_id..seed; {A} 'Eingaben, Referenz und Manifest vorbereiten'", "invisible-character",
             m_invisible_in_revision, "b8-wins", targets=(B8,)),
    SeedRule("notes-shown-as-written", "notes are evidence read by people: hidden reordering is shown",
             f"{P} §4 notes; {A} 'Das Protokoll herunterladen und einen wiederverwendbaren Nachweis behalten'",
             "invisible-character", m_invisible_in_notes, protect="warning", severity="warning"),
    SeedRule("csv-not-formula", "a grid opened in a spreadsheet keeps its text (own case, issue 15 item 4)",
             f"{P} §4 (usual CSV rules)", "formula-like-cell", m_formula_in_notes, protect="warning",
             severity="warning"),
    SeedRule("expected-id-unique-text", "a unique identifier per text, without hidden characters", f"{P} §1; "
             f"{A} 'Eingaben, Referenz und Manifest vorbereiten'", "invisible-character", m_invisible_in_expected_id,
             protect="withheld"),
    # §5: the cost
    SeedRule("catalogue-prices", "the tariffs are the catalogue's snapshot, separate from measurements",
             f"{A} 'Die gebundenen Kosten mit unseren Paketen berechnen', 'Das Protokoll herunterladen'; {L} "
             "Inhalt, §4", "tariff-not-catalogue", m_tariff_not_catalogue, protect="withheld"),
    SeedRule("illustrative-not-committed", "only a published price commits a budget", f"{A} 'Die gebundenen "
             f"Kosten mit unseren Paketen berechnen'; {L} §4", "illustrative-price", m_illustrative_price,
             protect="unpriced", targets=B200_ALL, severity="info"),
    SeedRule("package-total-checked", "the package total is price per lot x lots from the tariffs",
             f"{P} §5; {L} §4", "package-total-unverifiable", m_package_unverifiable, targets=B200_ALL),
    SeedRule("no-price-no-answer", "the least committed budget needs a price: without one, no answer",
             f"{A} 'Festlegen, was als akzeptiertes Ergebnis zählt', 'Die gebundenen Kosten mit unseren Paketen "
             "berechnen'", "no-tariff", m_no_published_price, protect="no-answer", severity="warning"),
    SeedRule("package-covers-window", "the package covers the campaign window", f"{A} 'Die Dauer mit dem "
             f"vollständigen Zeitplan wählen'; {P} §5", "package-does-not-cover-window", m_package_too_short,
             targets=RTX_ALL),
    SeedRule("no-automatic-extension", "beyond 30 days the extra periods are named, never assumed", f"{A} 'Die "
             "Dauer mit dem vollständigen Zeitplan wählen'", "window-exceeds-packages", m_window_beyond_30_days,
             protect="no-answer", severity="warning"),
    SeedRule("registered-before-tests", "the decision and rule are written before the tests", f"{A} 'Festlegen, "
             f"was als akzeptiertes Ergebnis zählt'; {P} §1", "registered-after-start", m_registered_after_start,
             protect="withheld"),
    SeedRule("window-zone", "the window in one real time zone", f"{A} 'Die Dauer mit dem vollständigen Zeitplan "
             "wählen'", "unknown-timezone", m_unknown_timezone, protect="withheld"),
    SeedRule("window-spring-gap", "window times exist on the zone's timeline (spring gap)", f"{A} 'Die Dauer mit "
             "dem vollständigen Zeitplan wählen'", "window-time-nonexistent", m_window_in_spring_gap,
             protect="withheld"),
    SeedRule("window-autumn-overlap", "window times occur once on the zone's timeline (autumn overlap)",
             f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'", "window-time-ambiguous",
             m_window_in_autumn_overlap, protect="withheld"),
    SeedRule("outputs-in-the-folder", "the outputs are kept together with the protocol", f"{P} §5; {A} 'Das "
             "Protokoll herunterladen und einen wiederverwendbaren Nachweis behalten'", "path-outside-campaign",
             m_path_template_outside, protect="withheld", verify=v_path_once),
    # time is evidence (issue 15 item 5)
    SeedRule("runs-after-registration", "the protocol is registered before the runs", f"{A} 'Festlegen, was als "
             f"akzeptiertes Ergebnis zählt'; {P} §1", "run-before-registration", m_run_before_registration, "times",
             targets=(B4,)),
    SeedRule("runs-inside-window", "every run lies inside the rented window", f"{A} 'Die Dauer mit dem "
             "vollständigen Zeitplan wählen'", "run-outside-window", m_run_outside_window, "times", targets=(B4,)),
    SeedRule("runs-before-deadline", "the work ends before the deadline", f"{A} 'Festlegen, was als akzeptiertes "
             "Ergebnis zählt'", "run-after-deadline", m_run_after_deadline, "times", targets=(B4,)),
    SeedRule("run-times-valid", "a run's times place it on the timeline (end not before start)", f"{A} 'Die "
             "Dauer mit dem vollständigen Zeitplan wählen'", "run-time-invalid", m_run_time_reversed, "times",
             targets=(B4,)),
    SeedRule("run-times-recorded", "without run times registration and window cannot be proved: no answer",
             f"{A} 'Festlegen, was als akzeptiertes Ergebnis zählt', 'Die Dauer mit dem vollständigen Zeitplan "
             "wählen'", "run-times-missing", m_times_removed, protect="decision",
             verify=v_withheld_unmeasured),
    # cases of our own: what someone who wants a cheaper or faster configuration to win would try
    SeedRule("rental-is-the-gpu-measured", "the package is rented for the GPU actually measured", f"{A} 'Die "
             f"gebundenen Kosten mit unseren Paketen berechnen'; {P} §2, §5", "gpu-not-rented",
             m_billed_as_cheaper_gpu, targets=B200_ALL),
    SeedRule("duration-not-negative", "a raw duration of the announced scope", f"{P} §4 elapsed_seconds",
             "schema-violation", m_negative_duration, targets=(B4,)),
    SeedRule("one-price-per-package", "one catalogue price per GPU and duration", f"{A} 'Die gebundenen Kosten "
             f"mit unseren Paketen berechnen'; {L} Inhalt", "duplicate-tariff", m_cheaper_duplicate_tariff,
             protect="withheld"),
    SeedRule("catalogue-lot-size", "a B200 lot is the catalogue's two GPUs", f"{P} §5; {L} §4",
             "tariff-not-catalogue", m_lot_size_changed, protect="withheld"),
    SeedRule("oom-not-renumbered", "a failed attempt keeps its own run number", f"{P} §3; {A} 'Wiederholen und "
             "Fehlschläge beibehalten'", "duplicate-row-key", m_oom_renumbered, targets=(B8,)),
    SeedRule("memory-measured-per-variant", "memory feasibility needs a measurement of the variant",
             f"{A} 'Speicher als Machbarkeitskriterium nutzen'; {P} §3", "measurement-not-linked",
             m_measurement_unlinked, targets=(B8,)),
    SeedRule("run-times-per-measurement", "each measurement proves its own runs' times", f"{A} 'Festlegen, was "
             "als akzeptiertes Ergebnis zählt', 'Die Dauer mit dem vollständigen Zeitplan wählen'", "run-times-missing",
             m_times_stripped_from_one, "times", targets=(B4,)),
    SeedRule("no-invented-price", "gpu-audit never invents a catalogue price", f"{A} 'Die gebundenen Kosten "
             f"mit unseren Paketen berechnen'; {L} §4", "tariff-not-catalogue", m_invented_price, protect="withheld"),
    SeedRule("environment-observed", "the software stack is the one observed, not copied", f"{P} §4 "
             f"gpu_model..runtime_version; {A} 'Eingaben, Referenz und Manifest vorbereiten'",
             "environment-not-seen", m_environment_not_seen, "b8-wins", targets=(B8,)),
    SeedRule("no-gpu-no-measurement", "an absent GPU is no measurement of seconds or bytes", f"{A} 'Wiederholen "
             f"und Fehlschläge beibehalten'; {L} Voraussetzungen und Grenzen", "measurement-without-gpu",
             m_measured_without_gpu, "b8-wins", targets=(B8,)),
    SeedRule("gpus-within-rental", "the program runs on the GPUs of the lots billed", f"{P} §5; {A} 'Speicher als "
             "Machbarkeitskriterium nutzen'", "gpus-beyond-rental", m_gpus_beyond_rental, "b200-wins",
             targets=B200_ALL),
    # decision rules without a finding: observations, not errors, that still decide
    SeedRule("faster-not-accepted", "a faster configuration that is not accepted does not meet the goal",
             f"{P} §5; {A} 'Wiederholen und Fehlschläge beibehalten'", None, m_faster_not_accepted, "b8-wins",
             targets=(B8,), reason="not accepted"),
    SeedRule("memory-feasibility", "a configuration exceeding memory is not feasible", f"{P} §5; {A} 'Speicher als "
             "Machbarkeitskriterium nutzen'", None, lambda c: [], targets=(B8,), reason="not memory-feasible",
             verify=v_not_feasible),
    SeedRule("ends-before-deadline", "the configuration ends before the deadline", f"{A} 'Festlegen, was als "
             "akzeptiertes Ergebnis zählt'", None, m_deadline_before_window_end, protect="no-answer",
             targets=RTX_ALL + B200_ALL, reason="after the deadline"),
    SeedRule("no-p95-from-five", "five observations do not justify a p95", f"{P} §3; {A} 'Dauern lesen, ohne fünf "
             "Versuche zu überinterpretieren'", None, lambda c: [], protect="decision", verify=v_no_p95),
    SeedRule("spread-vs-gap", "a spread comparable to the gap between medians does not decide", f"{A} 'Dauern "
             "lesen, ohne fünf Versuche zu überinterpretieren'", None, _overlapping_series_measured,
             protect="decision",
             verify=v_not_decided),
]



@dataclass(frozen=True)
class CalculatorRule:
    """A rule of the Lab's package calculator (`gpu-audit cost`, the seeds' calcul_forfaits.py)."""

    id: str
    rule: str
    source: str
    argv: tuple[str, ...]
    exit_code: int
    says: tuple[str, ...]


CALCULATOR_RULES: list[CalculatorRule] = [
    CalculatorRule("two-rtx-lots", "two 7-day RTX 4090 lots cost 220 USD for two GPUs", f"{A} 'Die gebundenen "
                   "Kosten mit unseren Paketen berechnen', 'Das Protokoll herunterladen'",
                   ("--gpu", "rtx-4090", "--days", "7", "--lots", "2"), 0,
                   ("2 lots of 1 GPU = 2 GPUs: total 220.00 USD",)),
    CalculatorRule("b200-lot-price-once", "two B200 lots are four GPUs, the lot price is multiplied by two only",
                   f"{L} §4; {P} §5", ("--gpu", "b200", "--days", "7", "--lots", "2"), 0,
                   ("2 lots of 2 GPUs = 4 GPUs: total 4142.00 USD",)),
    CalculatorRule("no-invented-per-result", "without a count of accepted results, no cost per result",
                   f"{A} 'Das Protokoll herunterladen'; {L} §4; {P} §5", ("--gpu", "b200", "--days", "7",
                                                                           "--lots", "1"), 0,
                   ("cost per accepted result: not computed",)),
    CalculatorRule("zero-results-refused", "--accepted-results has no default and 0 is refused", f"{L} §4",
                   ("--gpu", "b200", "--days", "7", "--lots", "1", "--accepted-results", "0"), 2, ("0 is refused",)),
    CalculatorRule("whole-package-per-result", "the cost per result uses the whole package", f"{L} §4; {A} 'Die "
                   "gebundenen Kosten mit unseren Paketen berechnen'",
                   ("--gpu", "b200", "--days", "7", "--lots", "1", "--accepted-results", "3"), 0,
                   ("690.33 USD over 3 distinct accepted results",)),
    CalculatorRule("only-3-7-30-days", "packages of 3, 7 or 30 days, no pro-rata", f"{P} §5; {L} §4",
                   ("--gpu", "b200", "--days", "5", "--lots", "1"), 2, ("invalid choice: 5",)),
    CalculatorRule("monday-to-friday", "Monday 9:00 to Friday 9:00 is 96 h: more than 3 days, within 7",
                   f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'",
                   ("--window-start", "2026-10-05T09:00", "--window-end", "2026-10-09T09:00", "--timezone",
                    "Europe/Paris"), 0, ("window: 96 h", "smallest covering package: 7 days")),
    CalculatorRule("no-price-invented", "a GPU without a published price gets none", f"{A} 'Die gebundenen "
                   "Kosten mit unseren Paketen berechnen'", ("--gpu", "h200", "--days", "7", "--lots", "1"), 2,
                   ("no tariff for h200",)),
]
