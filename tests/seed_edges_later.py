"""Edges of the seed rules in the later seed_rules_*.py modules (messages to metrics): at the limit, one unit past."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from conftest import GRID, read_grid, write_grid
from seal_helpers import WINDOW_START, seal_in_place
from seed_edges import Edge
from seed_rules import (
    ANY,
    B200,
    PROTOCOL,
    RTX,
    STAMP,
    TARIFFS,
    Where,
    _parse,
    edit_json,
    edit_lines,
    edit_protocol,
    meas,
    pred,
    set_row,
    set_rows,
)
from seed_rules_measured import m_cold_run_missing_in_format_2
from seed_rules_messages import _first_phase_at, _last_phase_to
from seed_rules_origin import set_source
from seed_rules_prices import (
    LAB_HEADER,
    MANIFEST,
    _manifest,
    lab_tariff_rows,
    m_periods_cover_ten_days,
)
from seed_rules_protocol import _DRAWN, _register, _relabel_ten, _second_seed
from seed_rules_runs34 import _setup
from seed_rules_seal import LONG, TOKEN
from seed_rules_subgroups import _labels

from generator.core.metrics import compute_metric

Plant = Callable[[Path], None]
Past = Callable[[Path], list[Where]]


# ------------------------------------------------------------------------------- registration and window (1 µs)


def _registered(text: str) -> Plant:
    return lambda c: edit_protocol(c, lambda p: p.update(registered_at=text))


def _registered_on_start(c: Path) -> list[Where]:
    # "before" the window: the registration at its start is too late, so `at` is the last microsecond before it
    # (07:00Z, 09:00 in Paris, written at -05:00 as the rule's own mutation writes it)
    _registered("2026-10-05T02:00:00-05:00")(c)
    return [Where(PROTOCOL, None, "/registered_at")]


def _first_run_on_start(registered: str) -> Plant:
    """The campaign's first phase (rtx4090-batch/b1's model load) on the window's start, 07:00Z, registered at
    `registered` (written at +02:00, as the rule's own mutation writes it)."""
    def plant(c: Path) -> None:
        _registered(registered)(c)
        _first_phase_at(c, "2026-10-05T07:00:00.000000Z")
    return plant


def _registered_on_first_run(c: Path) -> list[Where]:
    # "after" the registration: a run at its instant is not, so `at` registers the microsecond before the run (which
    # starts on the window's start, so that the registration is before the window too); `past` at the run's instant
    _first_run_on_start("2026-10-05T09:00:00+02:00")(c)
    return _first_phase_at(c, "2026-10-05T07:00:00.000000Z")


def _setup_from(download_at: str) -> Plant:
    return lambda c: _setup(c, download_at=download_at)


def _setup_a_microsecond_early(c: Path) -> list[Where]:
    _setup(c, download_at="2026-10-05T06:59:59.999999Z")
    return [Where(meas(RTX, "b4"), None, "/phases/0/started_at")]


def _deadline_day(c: Path) -> None:
    """A deadline written as Oct 9 alone: the end of that day in Paris, 22:00Z; the window ends there too."""
    edit_protocol(c, lambda p: (p["window"].update(end="2026-10-10T00:00"), p.update(deadline="2026-10-09")))


def _last_run_at_deadline(c: Path) -> None:
    _deadline_day(c)
    _last_phase_to(c, "2026-10-09T22:00:00.000000Z")


def _last_run_after_deadline(c: Path) -> list[Where]:
    _deadline_day(c)
    return _last_phase_to(c, "2026-10-09T22:00:00.000001Z")


# ------------------------------------------------------------------------------- prices and packages


def _lab_priced(c: Path, rows: list[str] | None = None, change: Any = None) -> None:
    """The tariffs file of the Lab's shape (45 prices, the example's two rented ones among them) and its manifest,
    named in the protocol; the example's rentals unchanged, so b4 still answers."""
    (c / TARIFFS).write_text("\n".join([LAB_HEADER, *(lab_tariff_rows() if rows is None else rows)]) + "\n",
                             encoding="utf-8")
    _manifest(c, change=change)


def _tariffs_item(change: Callable[[dict[str, Any]], None]) -> Any:
    """A manifest change that edits the tariffs file's item (the seventh of the nine)."""
    def edit(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        change(items[6])
        return items
    return edit


def _last_hex_digit(sha256: str) -> str:
    return sha256[:-1] + ("0" if sha256[-1] != "0" else "1")


def _manifest_size_one_more(c: Path) -> list[Where]:
    _lab_priced(c, change=_tariffs_item(lambda item: item.update(size=item["size"] + 1)))
    return [Where(TARIFFS, None, "size")]


def _manifest_sha_last_digit(c: Path) -> list[Where]:
    _lab_priced(c, change=_tariffs_item(lambda item: item.update(sha256=_last_hex_digit(item["sha256"]))))
    return [Where(TARIFFS, None, "sha256")]


def _eighth_sha_short(c: Path) -> list[Where]:
    # the eighth content file (LICENSE.txt, /files/7) with 63 hex digits: not a SHA-256
    def short(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        items[7]["sha256"] = items[7]["sha256"][:63]
        return items
    _lab_priced(c, change=short)
    return [Where(MANIFEST, None, "/files/7/sha256")]


def _sixteen_models(c: Path) -> list[Where]:
    # a 16th model, priced for 3, 7 and 30 days like the others: 48 prices where the Lab's file has 45
    _lab_priced(c, [*lab_tariff_rows(), *(f"test-gpu-13,Test GPU 13,{d},{70000 + d},1,2026-11-30,published"
                                          for d in (3, 7, 30))])
    return [Where(TARIFFS, None, "gpu")]


def _ten_days_and(end: str, total: int = 16000) -> Plant:
    def plant(c: Path) -> None:
        m_periods_cover_ten_days(c)
        edit_protocol(c, lambda p: p["window"].update(end=end))
        set_rows(c, RTX, None, package_total_usd_minor=str(total))
    return plant


def _ten_days_and_a_second(c: Path) -> list[Where]:
    _ten_days_and("2026-10-15T09:00:01")(c)
    return [Where(PROTOCOL, None, f"/experiments/{RTX}/rental")]


def _periods_a_cent_more(c: Path) -> list[Where]:
    _ten_days_and("2026-10-15T09:00", 16001)(c)
    return [Where(GRID, line, "package_total_usd_minor") for line in set_rows(c, RTX, None)]


def _window_to(end: str) -> Plant:
    return lambda c: edit_protocol(c, lambda p: p["window"].update(end=end))


def _three_days(c: Path) -> list[Where]:
    # a window of exactly 72 h: the 3-day package covers it, so each 7-day package is longer than needed
    _window_to("2026-10-08T09:00")(c)
    return [Where(PROTOCOL, None, f"/experiments/{RTX}/rental"), Where(PROTOCOL, None, f"/experiments/{B200}/rental")]


# ------------------------------------------------------------------------------- reproduction, order, subgroups


def _b4_warm_values(c: Path) -> list[float]:
    """rtx4090-batch/b4's macro-F1 of each warm run, computed as check computes it."""
    reference = _labels(c, "reference.csv")
    classes = json.loads((c / PROTOCOL).read_text(encoding="utf-8"))["classes"]
    values = []
    for run in range(1, 6):
        labels = _labels(c, pred(RTX, "b4", "warm", run))
        values.append(compute_metric("macro_f1", list(reference.values()), [labels[i] for i in reference], classes))
    return values


def _bounded(by: float) -> Plant:
    """Ten texts of b4's warm run 3 relabelled, and the bound registered at the spread this makes, plus `by`."""
    def plant(c: Path) -> None:
        _relabel_ten(c)
        values = _b4_warm_values(c)
        set_row(c, RTX, "b4", "warm", 3, quality_value=f"{values[2]:.6f}")  # the grid claims what it gives now
        # the spread as the rule takes it: the values as written, subtracted in decimal (not in binary)
        spread = float(Decimal(repr(max(values))) - Decimal(repr(min(values))))
        _register(c, target="bounded", bound=spread + by)
    return plant


def _bound_a_millionth_short(c: Path) -> list[Where]:
    # the spread is reported to six decimals: a bound one millionth below it
    _bounded(-1e-6)(c)
    return [Where(GRID, ANY, "quality_value")]


def _drawn(sequence: list[str]) -> Plant:
    def plant(c: Path) -> None:
        _second_seed(c)
        edit_protocol(c, lambda p: p["experiments"][0].update(order="drawn", drawn_sequence=sequence))
    return plant


def _drawn_past(sequence: list[str]) -> Past:
    def plant(c: Path) -> list[Where]:
        _drawn(sequence)(c)
        return [Where(PROTOCOL, None, "/experiments/0/drawn_sequence")]
    return plant


def _long_rule(**values: float) -> Plant:
    return lambda c: edit_protocol(c, lambda p: p["quality"]["subgroups"][2].update(values))


def _long_rule_past(key: str, value: float) -> Past:
    def plant(c: Path) -> list[Where]:
        _long_rule(**{key: value})(c)
        return [Where(PROTOCOL, None, f"/quality/subgroups/2/{key}")]
    return plant


# ------------------------------------------------------------------------------- measured, origin, grid, metrics


def _cold_runs_both(c: Path) -> None:
    """Both seeds' cold runs of b4 measured in format 2: its cold process repeat 1, and the second seed's, 2."""
    m_cold_run_missing_in_format_2(c)

    def second(doc: Any) -> None:
        # the first process (model_load, inputs, cold_forward repeat 1) moved half an hour earlier, when the GPU is
        # free; the second, a copy of it at its old times, runs cold run 2
        at = next(i for i, p in enumerate(doc["phases"]) if p["phase"] == "cold_forward") + 1
        process = [dict(p) for p in doc["phases"][:at]]
        process[-1]["repeat"] = 2
        for p in doc["phases"][:at]:
            p["started_at"], p["ended_at"] = _earlier(p["started_at"]), _earlier(p["ended_at"])
        doc["phases"][at:at] = process

    edit_json(c, meas(RTX, "b4"), second)


def _earlier(stamp: str) -> str:
    return (_parse(stamp) - dt.timedelta(minutes=30)).strftime(STAMP)


def _fingerprint(digits: int) -> Plant:
    return lambda c: set_source(c, {"kind": "bundle", "id": "GA-0123456789ABCDEF", "fingerprint": "a" * digits})


def _fingerprint_65(c: Path) -> list[Where]:
    _fingerprint(65)(c)
    return [Where(PROTOCOL, None, "/quality/reference/source/fingerprint")]


def _last_two_columns_swapped(c: Path) -> list[Where]:
    rows = read_grid(c)
    write_grid(c, [[*r[:-2], r[-1], r[-2]] for r in rows])
    return [Where(GRID, 1, rows[0][-1])]


def _quality(key: str, value: float) -> Plant:
    """The protocol's threshold or tolerance set to `value`, and every grid row's copy of it."""
    def plant(c: Path) -> None:
        edit_protocol(c, lambda p: p["quality"].update({key: value}))
        for exp in (RTX, B200):
            set_rows(c, exp, None, **{f"quality_{key}": f"{value:g}"})
    return plant


def _quality_past(key: str, value: float) -> Past:
    def plant(c: Path) -> list[Where]:
        _quality(key, value)(c)
        return [Where(PROTOCOL, None, f"/quality/{key}")]
    return plant


# ------------------------------------------------------------------------------- the sealed registration


def _sealed_at(at: dt.datetime) -> Plant:
    return lambda c: seal_in_place(c, at)


def _sealed_on_window_start(c: Path) -> list[Where]:
    # "before" the window starts: a seal at its start is too late, so `at` is the last second before it (the
    # token's time is written in whole seconds)
    seal_in_place(c, WINDOW_START)
    return [Where(TOKEN, None, None)]


def _first_run_sealed(at: dt.datetime) -> Plant:
    """The first phase on the window's start (07:00Z), the registration sealed at `at`."""
    def plant(c: Path) -> None:
        _first_phase_at(c, "2026-10-05T07:00:00.000000Z")
        seal_in_place(c, at)
    return plant


def _sealed_on_first_run(c: Path) -> list[Where]:
    # "before" the first run: a seal at its start is too late, so `at` is the second before it; the run starts on
    # the window's start, so that a seal before the run is before the window too
    _first_run_sealed(WINDOW_START)(c)
    return [Where(TOKEN, None, None)]


def _one_id_removed(c: Path) -> list[Where]:
    edit_lines(c, LONG, lambda ls: ls[:-1])
    return [Where(LONG, None, None)]


def _reference_a_thousandth_lower(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["quality"]["reference"].update(value=0.839))
    return [Where(PROTOCOL, None, "/quality/reference/value")]


def _tariff_a_cent_less(c: Path) -> list[Where]:
    edit_lines(c, TARIFFS, lambda ls: [ls[0], ls[1].replace(",11000,", ",10999,"), *ls[2:]])
    return [Where(TARIFFS, None, None)]


def _long_threshold_a_thousandth_under(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["quality"]["subgroups"][2].update(threshold=0.799))
    return [Where(PROTOCOL, None, "/quality/subgroups/2/threshold")]


def _unchanged(c: Path) -> None:
    """The sealed setup as it is: the limit of a sealed file is that it does not change."""


# ------------------------------------------------------------------------------- the edges

_ONE_MORE = [*_DRAWN, "b4"]  # b4 drawn 11 times under two seeds where it runs 10
_ONE_FEWER = _DRAWN[:-1]  # the last run (b1) drawn 9 times

EDGES: list[Edge] = [
    Edge("registered-on-window-start", "1 µs", _registered("2026-10-05T01:59:59.999999-05:00"),
         _registered_on_start),
    Edge("run-on-registration", "1 µs", _first_run_on_start("2026-10-05T08:59:59.999999+02:00"),
         _registered_on_first_run),
    Edge("setup-inside-rental", "1 µs", _setup_from("2026-10-05T07:00:00.000000Z"), _setup_a_microsecond_early),
    Edge("deadline-date-only", "1 µs", _last_run_at_deadline, _last_run_after_deadline, code="run-after-deadline"),
    Edge("price-manifest-stated", "1 byte", _lab_priced, _manifest_size_one_more, code="tariffs-not-in-manifest"),
    Edge("price-manifest-stated", "the last hex digit", _lab_priced, _manifest_sha_last_digit,
         code="tariffs-not-in-manifest"),
    Edge("price-manifest-content-checksums", "one hex digit", _lab_priced, _eighth_sha_short),
    Edge("price-lab-tariffs-15x3", "one model", _lab_priced, _sixteen_models),
    Edge("price-periods-summed", "1 s", _ten_days_and("2026-10-15T09:00"), _ten_days_and_a_second,
         code="package-does-not-cover-window"),
    Edge("price-periods-summed", "1 cent", _ten_days_and("2026-10-15T09:00"), _periods_a_cent_more,
         code="package-total-mismatch"),
    Edge("price-package-needed", "1 s", _window_to("2026-10-08T09:00:01"), _three_days),
    Edge("reproduction-bounded", "0.000001", _bounded(0.0), _bound_a_millionth_short),
    Edge("seeds-drawn-order", "one run", _drawn(_DRAWN), _drawn_past(_ONE_MORE), code="drawn-sequence-missing"),
    Edge("seeds-drawn-order", "one run", _drawn(_DRAWN), _drawn_past(_ONE_FEWER), code="drawn-sequence-missing"),
    Edge("subgroup-rule-not-loosened", "0.001", _long_rule(threshold=0.8), _long_rule_past("threshold", 0.799)),
    Edge("subgroup-rule-not-loosened", "0.001", _long_rule(tolerance=0.03), _long_rule_past("tolerance", 0.031)),
    Edge("cold-runs-measured", "1 run", _cold_runs_both, m_cold_run_missing_in_format_2),
    Edge("reference-bundle-fingerprint", "one hex digit", _fingerprint(64), _fingerprint_65),
    Edge("grid-read-by-header", "one swap", lambda c: None, _last_two_columns_swapped),
    Edge("metric-threshold-in-range", "0.001", _quality("threshold", 0.0), _quality_past("threshold", -0.001)),
    Edge("metric-tolerance-in-range", "0.001", _quality("tolerance", 1.0), _quality_past("tolerance", 1.001)),
    Edge("seal-before-window", "1 s", _sealed_at(WINDOW_START - dt.timedelta(seconds=1)), _sealed_on_window_start),
    Edge("seal-before-first-run", "1 s", _first_run_sealed(WINDOW_START - dt.timedelta(seconds=1)),
         _sealed_on_first_run),
    Edge("seal-ids-removed", "one ID", _unchanged, _one_id_removed),
    Edge("seal-reference-value", "0.001", _unchanged, _reference_a_thousandth_lower),
    Edge("seal-tariff-row", "1 cent", _unchanged, _tariff_a_cent_less),
    Edge("seal-threshold-loosened", "0.001", _unchanged, _long_threshold_a_thousandth_under),
]

_WINDOW = "runs-on-window-edges (on the start and the end: holds)"
EDGELESS: dict[str, str] = {
    "registration-offset": "an instant written at +02:00, no limit of its own: the registration's limits are "
                           "run-on-registration's Edge and registered-on-window-start's, both a microsecond wide",
    "registration-negative-offset": "run-on-registration's limit (a run after the registration instant) written at "
                                    "-07:00: that rule's Edge holds a microsecond after it and fails at it",
    "registered-a-second-before-start": "the inside side of registered-on-window-start, whose Edge plants the "
                                        "microsecond before the window's start",
    "runs-on-window-edges": "the window's limits exactly: run-a-microsecond-before-window and "
                            "run-a-microsecond-after-window are its two past sides",
    "run-a-microsecond-before-window": f"the past side of {_WINDOW}",
    "run-a-microsecond-after-window": f"the past side of {_WINDOW}",
    "price-no-automatic-extension": "its limit is the periods' sum: price-periods-summed's Edge holds on exactly 10 "
                                    "days of [7, 3] and finds package-does-not-cover-window one second past "
                                    "(seven-day-window and seven-days-and-a-second for one package)",
    "subgroup-rule-loosened-with-reason": "its figure is page 1; the looser rule's limit is subgroup-rule-not-"
                                          "loosened's Edge (equal to the corpus rule: no warning; 0.001 looser: one)",
    "input-order-declared": "an input order is a value named whole, not an order of runs: no figure or sequence to "
                            "stand on",
    "input-order-recorded": "a recorded input order is present or absent: no limit",
    "input-order-variant": "the input order run is the registered one or another: compared whole, no limit",
    "input-order-held": "the input order held fixed is the one run or another: compared whole, no limit",
    "resume-chain-acyclic": "'earlier' is the resumption chain's structure, not a figure: its sides are "
                            "resume-not-itself (a resumption naming itself) and this rule's two-attempt cycle",
    "order-registered": "an order registered or absent: no limit (the run orders' edges are the order-* rules of "
                        "seed_rules_runs)",
    "gpu-model-whole": "the 4090 is part of a model's name, compared whole: no figure to move by one",
    "seal-reference-label": "its mutation already changes one label, the smallest change a sealed reference can see",
    "seal-verifies": "a signature verifies or not: 'after' is no limit",
    "stamps-at-another-offset": "the same instants at -04:00, no limit of its own: the window's edge at -04:00 is "
                                "run-on-window-start-at-offset and run-before-window-at-offset",
    "run-on-window-start-at-offset": "the inside side of run-before-window-at-offset (a microsecond before)",
    "run-before-window-at-offset": "the past side of run-on-window-start-at-offset (on the start)",
    "stamp-without-offset": "a stamp has an offset or names no instant: 'window' is no limit here",
}
