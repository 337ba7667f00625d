"""Streamlit side of the trade-off explorer: option lists, the live sweep runner, the chart.

The sweep itself (parallel runs, disk cache, Dask) is :mod:`dpcore.sweep`; this
module only turns its streamed results into a progress bar and a chart redrawn
as runs finish, and keeps finished sweeps in ``st.session_state`` so reopening
the same settings shows the curve at once.
"""
from __future__ import annotations

import time
from typing import Any, Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from .common import readable_log_ticks

from ..exceptions import DPValueError
from ..learners import learners
from ..sweep import AXES, BUILTIN_AXES, SweepConfig, SweepResult, build_table, cached_result, run_sweep, summarize

#: Learners tried first as the page's default selection (the seeds' headline comparisons).
PREFERRED = ("dpsgd", "erm-objective", "erm-output", "output-perturbation", "label-dp-laplace", "dplloyd",
             "functional-mechanism", "pate", "dp-fedavg")
#: Default (min, max, points) per axis.
DEFAULT_RANGES = {
    "epsilon": (0.1, 10.0, 5),
    "clip_norm": (0.1, 10.0, 5),
    "noise_multiplier": (0.5, 4.0, 5),
    "learning_rate": (0.01, 1.0, 5),
    "train_fraction": (0.1, 1.0, 5),
}
_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
_TRIVIAL = ("majority", "mean")
STATE = "sweep.results"


def _fits(spec, task: str, is_image: bool) -> bool:
    return task in spec.tasks and (is_image or not spec.images_only) and spec.name not in _TRIVIAL


def sweepable(task: str, is_image: bool, axis: str) -> list[str]:
    """Learners that fit the data and can be swept along ``axis`` (private ones only for epsilon)."""
    out = []
    for name, spec in learners().items():
        if not _fits(spec, task, is_image):
            continue
        if axis == "epsilon" and not spec.private:
            continue
        if axis not in BUILTIN_AXES and axis not in spec.params:
            continue
        out.append(name)
    return sorted(out, key=lambda n: (n not in PREFERRED, PREFERRED.index(n) if n in PREFERRED else 0, n))


def axis_options(task: str, is_image: bool) -> list[str]:
    """The named axes along which at least one registered learner can be swept on this data."""
    return [a for a in AXES if sweepable(task, is_image, a)]


def knobs_of(names: list[str]) -> dict[str, tuple[str, ...]]:
    regs = learners()
    return {n: regs[n].params for n in names if n in regs}


def parse_knobs(text: str) -> dict[str, Any]:
    """``key=value`` lines (or comma-separated) into a dict, numbers and booleans converted.

    >>> parse_knobs("epochs=5\\nmodel = mlp, lr_decay=false")
    {'epochs': 5, 'model': 'mlp', 'lr_decay': False}
    """
    out: dict[str, Any] = {}
    for item in text.replace(",", "\n").splitlines():
        item = item.strip()
        if not item or item.startswith("#"):
            continue
        if "=" not in item:
            raise DPValueError(f"fixed knobs are written key=value, one per line; got {item!r}")
        k, v = (s.strip() for s in item.split("=", 1))
        out[k.replace("-", "_")] = _parse(v)
    return out


def _parse(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(v.lower(), v)


def remembered(config: SweepConfig, *, cache_dir=None) -> SweepResult | None:
    """The finished sweep for these settings: from this session, else read whole from the disk cache."""
    store = st.session_state.setdefault(STATE, {})
    key = config.fingerprint()
    if key in store:
        return store[key]
    res = cached_result(config, cache_dir=cache_dir)
    if res is not None:
        _remember(key, res)
    return res


def run_live(config: SweepConfig, *, n_jobs: int, scheduler: str | None, progress_slot, chart_slot,
             metric: str, log_x: bool, band: str, cache_dir=None) -> SweepResult | None:
    """Run the sweep, redrawing the progress bar and the chart as runs finish; errors become ``st.error``."""
    rows: list[Mapping[str, Any]] = []
    bar = progress_slot.progress(0.0, text=f"0 / {len(config.runs())} runs")
    last = [0.0]
    n_drawn = [0]

    def on_result(p) -> None:
        rows.append(p.row)
        bar.progress(p.fraction, text=f"{p.done} / {p.total} runs" + (" (cached)" if p.cached else ""))
        now = time.perf_counter()
        if now - last[0] > 0.5 or p.done == p.total:
            last[0] = now
            n_drawn[0] += 1
            fig = sweep_figure(build_table(config, rows), config, metric=metric, log_x=log_x, band=band)
            chart_slot.plotly_chart(fig, width="stretch", key=f"sweep.live.{n_drawn[0]}")

    try:
        res = run_sweep(config, n_jobs=n_jobs, scheduler=scheduler or None, on_result=on_result, cache_dir=cache_dir)
    except Exception as exc:  # noqa: BLE001 - a person never sees a traceback
        st.error(str(exc) or type(exc).__name__)
        return None
    finally:
        progress_slot.empty()
    _remember(config.fingerprint(), res)
    return res


def _remember(key: str, res: SweepResult, keep: int = 20) -> None:
    store = st.session_state.setdefault(STATE, {})
    store[key] = res
    while len(store) > keep:  # oldest first: dicts keep insertion order
        store.pop(next(iter(store)))


def _rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


METRIC_LABELS = {
    "accuracy": "Test accuracy (fraction correct)",
    "mse": "Test MSE (squared target units)",
    "r2": "Test R² (1 = perfect, 0 = the mean)",
}


def sweep_figure(table: pd.DataFrame, config: SweepConfig, *, metric: str, log_x: bool = True,
                 band: str = "minmax") -> go.Figure:
    """Mean across seeds per learner with a band (min-max or ±1 std), baselines as horizontal lines.

    Log x when ``log_x``; the y-axis is logarithmic too for MSE (seed 002's log-log plot).
    """
    regs = learners()
    fig = go.Figure()
    summ = summarize(table, metric) if not table.empty and metric in table.columns else pd.DataFrame()
    xs = list(config.values)
    x0, x1 = (min(xs), max(xs)) if xs else (0, 1)
    for i, name in enumerate(config.learners):
        s = summ[(summ.learner == name) & (summ.role == "swept")].sort_values("value") if not summ.empty else summ
        if s.empty:
            continue
        c = _COLOURS[i % len(_COLOURS)]
        lo, hi = (s["min"], s["max"]) if band == "minmax" else (s["mean"] - s["std"], s["mean"] + s["std"])
        title = regs[name].title if name in regs else name
        fig.add_scatter(x=s.value, y=hi, mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip",
                        legendgroup=name)
        fig.add_scatter(x=s.value, y=lo, mode="lines", line=dict(width=0), fill="tonexty", fillcolor=_rgba(c, 0.18),
                        showlegend=False, hoverinfo="skip", legendgroup=name)
        fig.add_scatter(x=s.value, y=s["mean"], mode="lines+markers", name=title, line=dict(color=c, width=3),
                        legendgroup=name, customdata=s[["n", "epsilon_spent"]],
                        hovertemplate="%{x:.3g}: mean %{y:.4g} over %{customdata[0]} seed(s); "
                                      "ε spent %{customdata[1]:.3g}<extra>" + title + "</extra>")
    # a non-private baseline takes the colour of the (first) learner it is the counterpart of
    owner = {}
    for i, name in enumerate(config.learners):
        owner.setdefault(config.baseline_for(name), _COLOURS[i % len(_COLOURS)])
    if not summ.empty:
        for _, b in summ[summ.role != "swept"].iterrows():
            title = regs[b.learner].title if b.learner in regs else b.learner
            kind = "trivial" if b.role == "trivial" else "non-private"
            label = title if kind in title.lower() else f"{title} ({kind})"
            # traces, not add_hline: hline annotations misplace on log axes
            fig.add_scatter(x=[x0, x1], y=[b["mean"], b["mean"]], mode="lines", name=f"{label}: {b['mean']:.3g}",
                            line=dict(color=owner.get(b.learner, "black") if kind == "non-private" else "grey",
                                      dash="dash" if kind == "non-private" else "dot", width=2))
    axis = AXES.get(config.axis)
    x_title = axis.label if axis else config.axis.replace("_", " ")
    fig.update_layout(
        xaxis_title=x_title + (" — log scale" if log_x else ""),
        yaxis_title=METRIC_LABELS.get(metric, metric) + (" — log scale" if metric == "mse" else ""),
        xaxis_type="log" if log_x else "linear",
        xaxis=dict(tickmode="array", tickvals=xs, ticktext=[f"{v:.3g}" for v in xs]) if 1 < len(xs) <= 12 else {},
        yaxis_type="log" if metric == "mse" else "linear",
        legend=dict(orientation="h", y=-0.2),
        height=460,
        margin=dict(t=30, b=40),
    )
    return readable_log_ticks(fig, "y") if metric == "mse" else fig


__all__ = [
    "DEFAULT_RANGES",
    "METRIC_LABELS",
    "axis_options",
    "knobs_of",
    "parse_knobs",
    "remembered",
    "run_live",
    "sweep_figure",
    "sweepable",
]
