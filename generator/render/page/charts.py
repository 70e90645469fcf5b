"""Charts as deterministic data URLs: durations per configuration, memory peaks per phase.

SVG for the HTML note; a greyscale PNG of the same figure for the PDF, which WeasyPrint places at once where
drawing the SVG costs it far more (docs/performance.md). `python -m generator.render.page.charts` draws them in a
worker process (generator.core.system.worker), PNG first, so that importing matplotlib and drawing overlap the rest of
the rendering (the PDF waits for the PNG, the HTML for the SVG, which is drawn while the PDF is laid out).
"""

from __future__ import annotations

import base64
import io
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from matplotlib import font_manager, rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from generator.core.errors import EnvironmentProblemError
from generator.core.system.fontconfig import font_files
from generator.render.view.chartdata import ChartRequest, DurationSeries, MemoryPanel, PhasePeak

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

GIB = 2**30
WIDTH_IN = 6.6
PNG_DPI = 200  # 6.6 in wide: some 190 dots per inch across the A4 text width
FORMATS = ("png", "svg")
# Fixed salt and no date: the same data gives byte-identical SVG.
_RC: dict[RcKeyType, object] = {"svg.hashsalt": "gpu-audit", "svg.fonttype": "none", "font.size": 8,
                             "axes.spines.top": False, "axes.spines.right": False}
PHASE_WORDS = {"download": "download", "install": "install", "model_load": "load", "compile": "compile",
               "inputs": "inputs", "cold_forward": "cold", "warmup": "warmup"}
# Set-up phases a runner may write without memory counters (a download, an install): no bar when both are null.
_UNCOUNTED = frozenset({"download", "install", "compile"})
LABEL_WIDTH = 15  # characters per line of a label under its bar: "warm (max of 5)" on one line, in the margin
MIB = 2**20
# The chart's words in English; the note's language sends its own (generator.render.view.i18n.chart_words).
ENGLISH = {"warm_run": "warm run", "cold_run": "cold run", "warm_median": "median warm time",
           "elapsed": "elapsed seconds per complete run (timer scope as registered)",
           "failed_runs": "failed runs: %(num)s (no duration)", "failed": "failed", "peak_reserved": "peak reserved",
           "peak_allocated": "peak allocated (part of reserved)", "load": "load", "inputs": "inputs",
           "cold": "cold", "warmup": "warm-up", "warm_max": "warm (max of %(num)s)", "download": "download",
           "install": "install", "compile": "compile"}


def figure_inches(name: str, request: ChartRequest) -> tuple[float, float]:
    """The chart's figure size in inches: the A4 text width, and a height that grows with what it shows."""
    if name == "durations":
        return _durations_inches(request.durations)
    return _memory_inches(request.memory)


def _durations_inches(configs: Sequence[DurationSeries]) -> tuple[float, float]:
    return WIDTH_IN, 1.0 + 0.3 * len(configs)


def _memory_inches(panels: Sequence[MemoryPanel]) -> tuple[float, float]:
    experiments = {p.experiment for p in panels}
    return WIDTH_IN, 0.8 + 1.9 * len(experiments)  # one row of axes per experiment


def _to_data_url(fig: Figure, fmt: str) -> str:
    """The figure as an SVG or greyscale PNG data URL; no date, tool name or other varying metadata."""
    buf = io.BytesIO()
    # Fixed margins instead of bbox_inches="tight", which draws every figure twice.
    with rc_context(_RC):
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
            return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
        dpi = fig.dpi
        fig.set_dpi(PNG_DPI)
        try:
            canvas = FigureCanvasAgg(fig)
            canvas.draw()
            # The charts are grey by design: one channel, no alpha (PDF/A then needs no soft mask).
            image = Image.frombuffer("RGBA", canvas.get_width_height(physical=True), canvas.buffer_rgba())
            image.convert("L").save(buf, format="PNG")
        finally:
            fig.set_dpi(dpi)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _label_margin(labels: list[str], width_in: float) -> float:
    """The left margin, as a fraction of the width, that fits the longest y label at 8 pt."""
    longest = max((len(label) for label in labels), default=4)
    return min(0.45, (0.25 + 0.062 * longest) / width_in)


def _wrapped(text: str) -> str:
    return textwrap.fill(text, LABEL_WIDTH, break_long_words=False, break_on_hyphens=True)


def _fonts(request: ChartRequest) -> dict[RcKeyType, object]:
    """The fonts of the note's language (Noto Sans CJK for Chinese after DejaVu Sans: matplotlib falls back
    glyph by glyph along the list)."""
    return {"font.family": list(request.fonts or ["DejaVu Sans"])}


def durations_chart(configs: Sequence[DurationSeries], words: dict[str, str] = ENGLISH) -> Figure:
    """Each raw run a point (warm circles, cold triangles), the warm median a bar, failures named, never at 0."""
    with rc_context(_RC):
        _, height = _durations_inches(configs)
        fig = Figure(figsize=(WIDTH_IN, height))
        labels = [c.id for c in configs]
        fig.subplots_adjust(left=_label_margin(labels, WIDTH_IN), right=0.8, bottom=0.55 / height,
                            top=1 - 0.3 / height)
        ax = fig.add_subplot()
        xmax = max([d for c in configs for k in (c.timing.warm, c.timing.cold) for d in k.durations] or [1.0])
        for y, c in enumerate(configs):
            warm, cold = c.timing.warm, c.timing.cold
            ax.scatter(warm.durations, [y] * len(warm.durations), marker="o", s=16, facecolors="white",
                       edgecolors="black", linewidths=0.8, zorder=3, label=words["warm_run"] if y == 0 else None)
            ax.scatter(cold.durations, [y] * len(cold.durations), marker="^", s=18, color="0.45", zorder=3,
                       label=words["cold_run"] if y == 0 else None)
            if warm.median is not None:
                ax.plot([warm.median] * 2, [y - 0.3, y + 0.3], color="black", linewidth=2.2, zorder=4,
                        label=words["warm_median"] if y == 0 else None)
            failed = warm.failures + cold.failures
            if failed:
                ax.annotate(textwrap.fill(words["failed_runs"] % {"num": failed}, 16), (xmax * 1.04, y),
                            va="center", fontsize=7,
                            fontweight="bold", annotation_clip=False)
        ax.set_yticks(range(len(configs)), labels)
        ax.set_ylim(len(configs) - 0.5, -0.5)
        ax.set_xlim(0, xmax * 1.03)
        ax.set_xlabel(words["elapsed"])
        ax.grid(axis="x", color="0.85", linewidth=0.6)
        ax.legend(loc="lower right", fontsize=7, frameon=False, ncols=3, bbox_to_anchor=(1.0, 1.0))
        return fig


def phase_peaks(phases: Sequence[PhasePeak],
                words: dict[str, str] = ENGLISH) -> list[tuple[str, int | None, int | None, bool]]:
    """(label, peak allocated, peak reserved, failed) per phase; the warm repeats as one bar at their maximum."""
    rows: list[tuple[str, int | None, int | None, bool]] = []
    warm = [p for p in phases if p.phase == "warm_forward"]
    for p in phases:
        if p.phase in _UNCOUNTED and p.peak_allocated_bytes is None and p.peak_reserved_bytes is None:
            continue
        if p.phase != "warm_forward":
            name = PHASE_WORDS.get(p.phase)
            rows.append((_wrapped(words[name] if name else p.phase), p.peak_allocated_bytes,
                         p.peak_reserved_bytes, p.status == "failed"))
    if warm:
        alloc = [p.peak_allocated_bytes for p in warm if p.peak_allocated_bytes is not None]
        res = [p.peak_reserved_bytes for p in warm if p.peak_reserved_bytes is not None]
        rows.append((_wrapped(words["warm_max"] % {"num": len(warm)}), max(alloc) if alloc else None,
                     max(res) if res else None,
                     any(p.status == "failed" for p in warm)))
    return rows


def memory_chart(panels: Sequence[MemoryPanel], words: dict[str, str] = ENGLISH) -> Figure:
    """Peak reserved as an outlined bar with peak allocated inside it (never summed), per phase.

    One row per experiment (one GPU model, one y scale), its configurations side by side as groups of bars:
    one axes per row keeps the chart quick to draw.
    """
    rows: dict[str, list[tuple[str, Sequence[PhasePeak]]]] = {}
    for panel in panels:
        rows.setdefault(panel.experiment, []).append((panel.configuration, panel.phases))
    _, height = _memory_inches(panels)
    with rc_context(_RC):
        fig = Figure(figsize=(WIDTH_IN, height))
        fig.subplots_adjust(left=0.08, right=0.99, bottom=0.8 / height, top=1 - 0.42 / height, hspace=1.6)
        highest = max((p[2] or 0 for members in rows.values() for _, phases in members for p in phase_peaks(phases)),
                      default=0)
        unit, scale = ("MiB", MIB) if highest < GIB else ("GiB", GIB)  # MiB keeps small differences visible
        for r, members in enumerate(rows.values()):
            ax = fig.add_subplot(len(rows), 1, r + 1)
            top = max([(p[2] or 0) / scale for _, phases in members for p in phase_peaks(phases)] + [1e-9])
            start, ticks, labels = 0, [], []
            for title, phases in members:
                peaks = phase_peaks(phases, words)
                xs = [start + i for i in range(len(peaks))]
                first = r == 0 and start == 0
                ax.bar(xs, [(p[2] or 0) / scale for p in peaks], width=0.75, color="0.9", edgecolor="black",
                       linewidth=0.6, label=words["peak_reserved"] if first else None)
                ax.bar(xs, [(p[1] or 0) / scale for p in peaks], width=0.4, color="0.25",
                       label=words["peak_allocated"] if first else None)
                ax.text((xs[0] + xs[-1]) / 2, 1.04, title, transform=ax.get_xaxis_transform(), ha="center",
                        fontsize=7)
                for x, p in zip(xs, peaks, strict=True):
                    if p[3]:
                        ax.annotate(words["failed"], (x, (p[2] or 0) / scale + top * 0.04), ha="center", fontsize=6,
                                    fontweight="bold", annotation_clip=False)
                ticks += xs
                labels += [p[0] for p in peaks]
                start += len(peaks) + 1  # one empty slot between configurations
            ax.set_xticks(ticks, labels, fontsize=6, rotation=90)  # upright, long words overlap their neighbours
            ax.set_ylim(0, top * 1.25)  # room for "failed" inside the axes, below the configurations' names
            ax.tick_params(axis="x", length=0)
            ax.tick_params(axis="y", labelsize=6)
            ax.locator_params(axis="y", nbins=4)
            ax.grid(axis="y", color="0.85", linewidth=0.6)
            ax.set_ylabel(unit, fontsize=7)
            if r == 0:
                fig.legend(loc="upper right", fontsize=7, frameon=False, ncols=2)
        return fig


def _known_fonts(families: list[str]) -> None:
    """Make sure matplotlib knows each family: its font cache may predate a font installed since (Noto Sans CJK
    after matplotlib's first run), so a family it lacks is added from the files fontconfig names."""
    for family in families:
        try:
            font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
        except ValueError:
            for path in font_files(family) or []:
                font_manager.fontManager.addfont(path)


def draw(request: ChartRequest) -> Iterator[dict[str, str | None]]:
    """Both charts as data URLs, once per format of FORMATS in that order; None for a chart with nothing to show.

    A glyph no font of the language has is an error, never an empty box in the chart.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("error", r"Glyph \d+ .*missing from font", UserWarning)
        try:
            yield from _draw(request)
        except UserWarning as exc:
            raise EnvironmentProblemError(f"the charts cannot be drawn in the note's language ({exc}); install "
                                          "the fonts the README lists (Debian: fonts-dejavu-core, fonts-noto-cjk)"
                                          ) from None


def draw_json(request: object) -> Iterator[dict[str, str | None]]:
    """draw() for the worker process: the request as JSON, read back as a ChartRequest."""
    if not isinstance(request, dict):
        raise ValueError("a chart request is a JSON object")
    return draw(ChartRequest.from_json_dict(request))


def _draw(request: ChartRequest) -> Iterator[dict[str, str | None]]:
    _known_fonts(list(request.fonts))
    words = {**ENGLISH, **request.words}
    makers: dict[str, Callable[[], Figure]] = {
        "durations": lambda: durations_chart(request.durations, words),
        "memory": lambda: memory_chart(request.memory, words),
    }
    with rc_context(_fonts(request)):
        figures = {name: make() if request.shows(name) else None for name, make in makers.items()}
    for fmt in FORMATS:
        with rc_context(_fonts(request)):
            drawn = {name: None if fig is None else _to_data_url(fig, fmt) for name, fig in figures.items()}
        yield drawn


if __name__ == "__main__":
    from generator.core.system.worker import serve

    sys.exit(serve(draw_json))
