"""Streamlit side of the "Papers, reproduced" page: one shared run per entry, its chart and its tables."""
from __future__ import annotations

import math
from typing import Callable

import pandas as pd
import plotly.graph_objects as go

from ..reproduce import Reproduction, ReproductionResult, run_reproduction
from . import palette
from .common import DASH, readable_log_ticks, remembered, shared_call


def cached_reproduction(name: str, on_progress: Callable | None = None) -> ReproductionResult:
    """Run the entry ``name`` once for every visitor of this server (its runs are seeded: the same for all), and
    keep it in this session. ``on_progress`` gets ``{"done", "total", "message"}``."""
    def compute(progress):
        return run_reproduction(name, on_progress=lambda done, total, message: progress(
            {"done": done, "total": total, "message": message}))

    return remembered("repro.results", (name,), lambda: shared_call(("reproduce", name), compute,
                                                                    on_progress=on_progress))


def overview_table(results: dict) -> pd.DataFrame:
    """One row per entry run so far: the paper, what it shows, the checks that hold, and whether it is reproduced."""
    from ..reproduce import get_reproduction

    rows = []
    for name, r in results.items():
        e = get_reproduction(name)
        held = f"{sum(c.holds for c in r.checks)} / {len(r.checks)}"
        verdict = r.reproduced + ("" if r.reproduced == "yes" else " (see its gap)")
        rows.append({"Paper": e.cite, "Result": e.title, "Checks that hold": held, "Reproduced": verdict,
                     "Run took (s)": round(r.seconds, 1),
                     "Command": f"python -m dpcore reproduce {name}"})
    return pd.DataFrame(rows)


def progress_callback(bar) -> Callable:
    """Moves a ``st.progress`` bar through an entry's runs."""
    def cb(info) -> None:
        total = max(int(info["total"]), 1)
        bar.progress(min(1.0, info["done"] / total), text=f"{info['done']} / {total}: {info['message']}")

    return cb


def reproduction_figure(entry: Reproduction, result: ReproductionResult) -> go.Figure | None:
    """The curve behind the entry: one line per method (error bars over seeds), references dashed grey."""
    curve = result.curve
    if curve is None or curve.empty:
        return None
    fig = go.Figure()
    i = refs = 0
    for series, df in curve.groupby("series", sort=False):
        df = df.sort_values("x")
        if "reference" in df and df["reference"].any():  # grey, each reference with its own dash
            fig.add_trace(go.Scatter(x=df.x, y=df.value, name=str(series), mode="lines",
                                     line=dict(color=palette.GREY, dash=("dash", "dot", "dashdot")[refs % 3],
                                               width=2)))
            refs += 1
            continue
        err = dict(type="data", array=df["sd"], visible=True, thickness=1) if "sd" in df and df["sd"].gt(0).any() \
            else None
        fig.add_trace(go.Scatter(x=df.x, y=df.value, name=str(series), mode="lines+markers", error_y=err,
                                 **palette.line_and_marker(i)))
        i += 1
    for k, (x, value, label) in enumerate(result.published_points):
        fig.add_trace(go.Scatter(x=[x], y=[value], name=label, mode="markers+text", text=[f"{value:g}"],
                                 textposition="middle left",
                                 marker=dict(color=palette.BLACK, size=14, symbol=("star", "x", "cross")[k % 3],
                                             line=dict(width=1, color="white"))))
    fig.update_layout(xaxis_title=entry.x_label + (" — log scale" if entry.log_x else ""),
                      yaxis_title=entry.y_label + (" — log scale" if entry.log_y else ""), height=440,
                      margin=dict(l=10, r=10, t=30, b=10))
    if entry.log_x:
        fig.update_xaxes(type="log")
        readable_log_ticks(fig, "x")
    if entry.log_y:
        fig.update_yaxes(type="log")
        readable_log_ticks(fig, "y")
    return palette.legend_below(fig)


def comparison_table(result: ReproductionResult) -> pd.DataFrame:
    """Published beside ours, readable: a dash where the paper gives only a curve."""
    def fmt(v) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return DASH
        return f"{v:.4g}"

    return pd.DataFrame({"Quantity": result.table.quantity, "Published": result.table.published.map(fmt),
                         "Ours": result.table.ours.map(fmt)})


def checks_markdown(result: ReproductionResult) -> str:
    """One line per check: a mark, then the claim with its numbers and tolerance."""
    return "\n".join(f"- {':green[:material/check_circle: holds]' if c.holds else ':red[:material/cancel: fails]'} "
                     f"— {c.claim}" for c in result.checks)


def curve_table(result: ReproductionResult) -> pd.DataFrame | None:
    """The numbers behind the chart, one column per series."""
    if result.curve is None or result.curve.empty:
        return None
    wide = result.curve.pivot_table(index="x", columns="series", values="value", sort=False)
    return wide.reset_index().rename(columns={"x": "x"})
