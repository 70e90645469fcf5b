"""Charts as deterministic SVG data URLs: durations per configuration, memory peaks per phase."""

from __future__ import annotations

import base64
import io
from typing import Any

from matplotlib import rc_context
from matplotlib.figure import Figure

GIB = 2**30
# Fixed salt and no date: the same data gives byte-identical SVG.
_RC = {"svg.hashsalt": "gpu-audit", "svg.fonttype": "none", "font.size": 8, "font.family": "DejaVu Sans",
       "axes.spines.top": False, "axes.spines.right": False}


def _to_data_url(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def durations_chart(configs: list[dict[str, Any]]) -> str:
    """Each raw run a point (warm circles, cold triangles), the warm median a bar, failures named, never at 0."""
    with rc_context(_RC):
        height = 0.9 + 0.38 * len(configs)
        fig = Figure(figsize=(6.6, height))
        ax = fig.add_subplot()
        labels = []
        xmax = max([d for c in configs for k in ("warm", "cold") for d in c["timing"][k]["durations"]] or [1.0])
        for y, c in enumerate(configs):
            labels.append(c["id"])
            warm, cold = c["timing"]["warm"], c["timing"]["cold"]
            ax.scatter(warm["durations"], [y] * len(warm["durations"]), marker="o", s=16, facecolors="white",
                       edgecolors="black", linewidths=0.8, zorder=3, label="warm run" if y == 0 else None)
            ax.scatter(cold["durations"], [y] * len(cold["durations"]), marker="^", s=18, color="0.45", zorder=3,
                       label="cold run" if y == 0 else None)
            if warm["median"] is not None:
                ax.plot([warm["median"]] * 2, [y - 0.3, y + 0.3], color="black", linewidth=2.2, zorder=4,
                        label="warm median" if y == 0 else None)
            failed = warm["failures"] + cold["failures"]
            if failed:
                ax.annotate(f"{failed} failed (no duration)", (xmax * 1.04, y), va="center", fontsize=7,
                            fontweight="bold", annotation_clip=False)
        ax.set_yticks(range(len(configs)), labels)
        ax.set_ylim(len(configs) - 0.5, -0.5)
        ax.set_xlim(0, xmax * 1.03)
        ax.set_xlabel("elapsed seconds per complete run (timer scope as registered)")
        ax.grid(axis="x", color="0.85", linewidth=0.6)
        ax.legend(loc="lower right", fontsize=7, frameon=False, ncols=3, bbox_to_anchor=(1.0, 1.0))
        return _to_data_url(fig)


def memory_chart(phases: list[dict[str, Any]], title: str) -> str:
    """Absolute peaks per phase, allocated and reserved side by side (never summed); warm_forward at its max."""
    rows: list[tuple[str, int | None, int | None, bool]] = []
    warm = [p for p in phases if p["phase"] == "warm_forward"]
    for p in phases:
        if p["phase"] != "warm_forward":
            rows.append((p["phase"], p.get("peak_allocated_bytes"), p.get("peak_reserved_bytes"), p["status"] == "failed"))
    if warm:
        alloc = [p["peak_allocated_bytes"] for p in warm if p.get("peak_allocated_bytes") is not None]
        res = [p["peak_reserved_bytes"] for p in warm if p.get("peak_reserved_bytes") is not None]
        rows.append((f"warm_forward (max of {len(warm)})", max(alloc) if alloc else None, max(res) if res else None,
                     any(p["status"] == "failed" for p in warm)))
    with rc_context(_RC):
        fig = Figure(figsize=(6.6, 1.7))
        ax = fig.add_subplot()
        xs = range(len(rows))
        ax.bar([x - 0.2 for x in xs], [(r[1] or 0) / GIB for r in rows], width=0.38, color="0.25",
               label="peak allocated")
        ax.bar([x + 0.2 for x in xs], [(r[2] or 0) / GIB for r in rows], width=0.38, color="0.82", edgecolor="black",
               linewidth=0.6, label="peak reserved")
        ax.set_xticks(list(xs), [r[0] + (" (failed)" if r[3] else "") for r in rows], fontsize=7)
        ax.set_ylabel("GiB")
        ax.set_title(title, fontsize=8, loc="left")
        ax.legend(fontsize=7, frameon=False, loc="upper left")
        ax.grid(axis="y", color="0.85", linewidth=0.6)
        return _to_data_url(fig)
