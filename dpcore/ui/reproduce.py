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
        rows.append({"Paper": e.cite, "Result": e.title, "Status": r.status,
                     "Paper's numbers within tolerance": _held(r, "level"),
                     "Orderings and trends that hold": _held(r, "shape"),
                     "Link": e.url, "Run took (s)": round(r.seconds, 1)})
    return pd.DataFrame(rows)


def _held(result: ReproductionResult, kind: str) -> str:
    """"2 / 3" of the checks of ``kind`` that hold, or a dash where the entry has none of that kind."""
    checks = [c for c in result.checks if c.kind == kind]
    return f"{sum(c.holds for c in checks)} / {len(checks)}" if checks else DASH


#: What each status means, for the page's help and its coloured box.
STATUS_HELP = {
    "reproduced": "every claim holds: the paper's own numbers within the tolerance each check states, and every "
                  "ordering or trend it reports",
    "reproduced in shape": "every ordering and trend the paper reports holds, but our level differs from its "
                           "numbers by more than the tolerance",
    "not reproduced": "an ordering or trend the paper reports does not hold here (or, where the paper gives only a "
                      "number, ours is outside its tolerance)",
}


def status_box(result: ReproductionResult) -> tuple[str, str]:
    """(kind of Streamlit box, text) for the entry's status and its gap: success, warning or error."""
    kind = {"reproduced": "success", "reproduced in shape": "warning", "not reproduced": "error"}[result.status]
    text = f"**{result.status.capitalize()}**: {STATUS_HELP[result.status]}."
    return kind, text + (f" {result.gap}" if result.gap else "")


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
        fig.add_trace(go.Scatter(x=[x], y=[value], name=label, mode="markers",
                                 marker=dict(color=palette.BLACK, size=14, symbol=("star", "x", "cross")[k % 3],
                                             line=dict(width=1, color="white"))))
        # the number on a white ground: as plain text beside its marker a curve ran through it ("9.34" on a phone)
        fig.add_annotation(x=math.log10(x) if entry.log_x else x, y=math.log10(value) if entry.log_y else value,
                           text=f"{value:g}", showarrow=False, xanchor="right", xshift=-9,
                           bgcolor="rgba(255,255,255,0.85)", font=dict(size=12, color=palette.BLACK))
    fig.update_layout(xaxis_title=entry.x_label + (" (log scale)" if entry.log_x else ""),
                      yaxis_title=entry.y_label + (" (log)" if entry.log_y else ""), height=440,
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
    """One line per check: a mark, what it tests (the paper's number, or an ordering or trend it reports), then the
    claim with its numbers and tolerance."""
    what = {"level": "the paper's number", "shape": "ordering or trend"}
    return "\n".join(f"- {':green[:material/check_circle: holds]' if c.holds else ':red[:material/cancel: fails]'} "
                     f"({what[c.kind]}) — {c.claim}" for c in result.checks)


def curve_table(result: ReproductionResult) -> pd.DataFrame | None:
    """The numbers behind the chart, one column per series."""
    if result.curve is None or result.curve.empty:
        return None
    wide = result.curve.pivot_table(index="x", columns="series", values="value", sort=False)
    return wide.reset_index().rename(columns={"x": "x"})
