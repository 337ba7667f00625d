"""Streamlit side of the trade-off explorer: option lists, the live sweep runner, the chart.

The sweep itself (parallel runs, disk cache, Dask) is :mod:`dpcore.sweep`; this
module only turns its streamed results into a progress bar and a chart redrawn
as runs finish, and keeps finished sweeps in ``st.session_state`` so reopening
the same settings shows the curve at once.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ..decision.advisor import metric_name
from ..exceptions import DPValueError
from ..learners import learners, parse_value
from ..runtime.thread_warnings import caught as caught_warnings
from ..sweep import (
    AXES,
    SweepCache,
    SweepConfig,
    SweepResult,
    build_table,
    cached_result,
    from_upload,
    run_sweep,
    summarize,
)
from ..sweep.choices import DEFAULT_LEARNERS, axis_options, default_learners, sweepable
from ..sweep.engine import ID_COLUMNS, TAIL_COLUMNS
from ..sweep.summary import (  # notes, labels, the best point
    best_swept,
    neighbouring_note,
    neighbours_said,
    overspent_note,
    spends_more,
    spent_text,
)
from ..teaching.verdict import round_epsilon
from . import palette
from .common import DASH, format_epsilon, format_number, readable_log_ticks, remember, shared_call
from .live import CHART_SECONDS, Every

_COLOURS = palette.SERIES_COLOURS
STATE = "sweep.results"
ENGINE_COLUMNS = ID_COLUMNS + TAIL_COLUMNS



def swept_range_verdict(low: float, high: float, points: int) -> str:
    """The verdict band at each end of a swept ε range (markdown, for beside the sweep's knobs). One point sweeps the
    minimum alone (:func:`dpcore.sweep.axes.value_range`): the text then names that ε alone, where it read "to ε = 10:
    weak guarantee" beside a chart of ε = 0.1 only."""
    from .common import verdict_text

    if points <= 1 or low == high:
        return (f"At ε = {low:g}: {verdict_text(low, short=True)}"
                + ("  \nOne point: the sweep runs the minimum alone (raise *Points* to reach the maximum)."
                   if low != high else ""))
    return (f"From ε = {low:g}: {verdict_text(low, short=True)}  \nto ε = {high:g}: {verdict_text(high, short=True)}"
            "  \nThe chart shades the bands along its ε axis.")

def table_csv(table: pd.DataFrame, dataset) -> bytes:
    """The sweep's table as the CSV the page offers for download. On an upload its text columns (each run's warnings)
    are scrubbed as the downloaded reports are (:func:`dpcore.decision.report.scrub`): a learner's warning quotes the
    class it answered for every row ("the most common training class ('no')"), a label's cell value, which a file
    meant to be shared must not carry."""
    from ..decision.report import scrub
    from .uploads import is_upload

    out = table.copy()
    if is_upload(dataset):
        for col in ("warnings", "leak_warnings"):
            if col in out:
                out[col] = out[col].map(lambda v: scrub(v, dataset) if isinstance(v, str) else v)
    return out.to_csv(index=False).encode()


def title_of(name: str) -> str:
    """A learner's human title (its registry name if unknown)."""
    spec = learners().get(name)
    return spec.title if spec is not None else name


def knobs_markdown(names: list[str]) -> str:
    """One bullet per learner: its title and the knob names it takes (what to type in "Fixed knobs")."""
    regs = learners()
    lines = []
    for n in names:
        spec = regs.get(n)
        if spec is None:
            continue
        knobs = ", ".join(f"`{k.name}` ({k.describe()})" for k in spec.knobs) or ", ".join(
            f"`{p}`" for p in spec.params) or "none"
        lines.append(f"- **{title_of(n)}**: {knobs}")
    return "\n".join(lines) + "\n\nWrite one `name=value` per line; each learner gets the knobs it takes."


def n_to_compute(config: SweepConfig, *, cache_dir=None) -> int:
    """How many runs of ``config`` are not in the disk cache yet (all of them for an upload: never cached)."""
    if from_upload(config):
        return len(config.runs())
    cache = SweepCache(cache_dir)
    return sum(run.key not in cache for run in config.runs())


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
        if not k:  # '=3' named no knob: said as the command line's --set says it, not as a knob '' no learner takes
            raise DPValueError(f"fixed knobs are written key=value, one per line, with a key before '='; got {item!r}")
        key, value = k.replace("-", "_"), None if v.lower() == "none" else parse_value(v)
        if key in out and out[key] != value:  # neither line may quietly win
            raise DPValueError(f"fixed knobs give {key} twice ({key}={out[key]} and {item!r}); keep one line")
        out[key] = value
    return out


def remembered(config: SweepConfig, *, cache_dir=None) -> SweepResult | None:
    """The finished sweep for these settings: from this session, else read whole from the disk cache (never for an
    upload, whose results live in this session only)."""
    store = st.session_state.setdefault(STATE, {})
    key = config.fingerprint()
    if key in store:
        return store[key]
    if from_upload(config):
        return None
    res = cached_result(config, cache_dir=cache_dir)
    if res is not None:
        _remember(key, res)
    return res


def run_live(config: SweepConfig, *, n_jobs: int, scheduler: str | None, progress_slot, chart_slot,
             metric: str, log_x: bool, band: str, mark: float | None = None, cache_dir=None) -> SweepResult | None:
    """Run the sweep, redrawing the progress bar and the chart as runs finish; errors become ``st.error``.

    The sweep is heavy work of the server: it waits its turn on the bounded run queue (:func:`shared_call`),
    a visitor asking for the same sweep while it runs follows it instead of starting another (never a sweep of an
    upload, which is this session's alone: :func:`dpcore.ui.uploads.private_key`), and it stops
    when nobody waits for it (finished runs stay in the sweep's cache). Its parts go to the operator's cluster
    when there is one, so the queue runs it here (``here``) and does not keep it: the sweep's own cache does,
    and it may hold a visitor's upload. ``mark``: the class's ε, on the live chart as on the finished one."""
    rows: list[Mapping[str, Any]] = []
    bar = progress_slot.progress(0.0, text=f"0 / {len(config.runs())} runs")
    chart_due = Every(CHART_SECONDS)  # spaced more widely while a class follows runs (dpcore.ui.live)
    n_drawn = [0]

    def on_result(p) -> None:
        rows.append(p.row)
        bar.progress(p.fraction, text=f"{p.done} / {p.total} runs" + (" (cached)" if p.cached else ""))
        if chart_due(last=p.done == p.total):
            n_drawn[0] += 1
            fig = sweep_figure(build_table(config, rows), config, metric=metric, log_x=log_x, band=band, mark=mark)
            chart_slot.plotly_chart(fig, width="stretch", key=f"sweep.live.{n_drawn[0]}")

    def compute(progress) -> SweepResult:
        # one lane: the server's cores are the class's (a sweep's batched runs would take both)
        return run_sweep(config, n_jobs=n_jobs, scheduler=scheduler or None, on_result=progress, cache_dir=cache_dir,
                         lanes=1)

    try:
        with caught_warnings():  # the table carries the runs' warnings; the page shows them from it
            # an upload's sweep is this session's alone: its key names the file by a digest only (not an
            # UploadRef), so it is marked private here, else two visitors with one file would join one run
            res = shared_call(("sweep", config.fingerprint()), compute, on_progress=on_result, keep=False,
                              here=True, done="computed", private=from_upload(config))
    except Exception as exc:  # noqa: BLE001 - a person never sees a traceback
        chart_slot.empty()  # no half-drawn chart above the error
        st.error(str(exc) or type(exc).__name__)
        return None
    finally:
        progress_slot.empty()
    _remember(config.fingerprint(), res)
    return res


def _remember(key: str, res: SweepResult, keep: int = 20) -> None:
    remember(st.session_state.setdefault(STATE, {}), key, res, max_kept=keep)


def _rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


METRIC_LABELS = {
    "accuracy": "Test accuracy (fraction correct)",
    "balanced_accuracy": "Balanced accuracy (each class's share found right, averaged)",
    "mse": "Test MSE (squared target units)",
    "r2": "Test R² (1 = perfect, 0 = the mean)",
}


#: metrics read as a fraction, from 0 to 1
_FRACTIONS = ("accuracy", "balanced_accuracy")


def metric_text(value, metric: str) -> str:
    """A sweep's score as text: accuracies and R² to three decimals, as every page writes them (0.100, not 0.1);
    MSE, in the target's own squared units, to three significant figures.

    >>> metric_text(0.1, "accuracy"), metric_text(0.9104, "r2"), metric_text(1234.5, "mse"), metric_text(None, "mse")
    ('0.100', '0.910', '1.23e+03', '—')
    """
    if metric not in (*_FRACTIONS, "r2") or value is None or not math.isfinite(float(value)):
        return format_number(value)
    return f"{float(value):.3f}"


def sweep_figure(table: pd.DataFrame, config: SweepConfig, *, metric: str, log_x: bool = True,
                 band: str = "minmax", mark: float | None = None) -> go.Figure:
    """Mean across seeds per learner with a band (min-max or ±1 std), baselines as horizontal lines.

    Log x when ``log_x``; the y-axis is logarithmic too for MSE (as A. L. Hansen's 2023 label-DP study plots it).
    ``mark``: an ε drawn as a dash-dotted vertical line named "your ε = 1" in the legend (the ε a class trained and
    attacked at), on an ε axis and inside the swept range only.
    """
    regs = learners()
    fig = go.Figure()
    summ = summarize(table, metric) if not table.empty and metric in table.columns else pd.DataFrame()
    xs = list(config.values)
    x0, x1 = (min(xs), max(xs)) if xs else (0, 1)
    x_range = None
    if len(xs) == 1:  # one value: a readable range around it, baselines drawn across it
        v = xs[0]
        if log_x and v > 0:
            x0, x1 = v / 3, v * 3
            x_range = [math.log10(x0), math.log10(x1)]
        else:
            half = abs(v) / 2 if v else 1.0
            x0, x1 = v - half, v + half
            x_range = [x0, x1]
    leaky = set(table.loc[table["leaks_privacy"].astype(bool), "learner"]) if "leaks_privacy" in table else set()
    over = table[spends_more(table)]
    overspent = set(zip(over["learner"], over["value"])) if not over.empty else set()  # spent more than their ε
    labels: list[tuple[float, float, str, str]] = []  # (x, y, text, colour) of the points that say their ε spent
    for i, name in enumerate(config.learners):
        s = summ[(summ.learner == name) & (summ.role == "swept")].sort_values("value") if not summ.empty else summ
        if s.empty:
            continue
        c = _COLOURS[i % len(_COLOURS)]
        lo, hi = (s["min"], s["max"]) if band == "minmax" else (s["mean"] - s["std"], s["mean"] + s["std"])
        title = regs[name].title if name in regs else name
        if name in leaky:
            title += " ⚠ leaks privacy"
        fig.add_scatter(x=s.value, y=hi, mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip",
                        legendgroup=name)
        fig.add_scatter(x=s.value, y=lo, mode="lines", line=dict(width=0), fill="tonexty", fillcolor=_rgba(c, 0.18),
                        showlegend=False, hoverinfo="skip", legendgroup=name)
        style = palette.series_style(i)
        # off the ε axis (σ, clip norm, epochs ...) each point says the ε it spent: a flat curve of weak guarantees
        # read as "the noise does not matter"; on it, each point that spent more than its x (output perturbation:
        # ε per answer, every test answer released) says what it spent (the page's note says why)
        if config.axis != "epsilon":
            labelled = s["epsilon_spent"].notna().to_numpy()
        else:
            labelled = np.array([(name, v) in overspent for v in s["value"]], dtype=bool)
        mine = [(x, y, spent_label(e), c) for x, y, e, on in zip(s.value, s["mean"], s["epsilon_spent"], labelled)
                if on]
        if config.axis != "epsilon" and len(mine) > 1 and len({text for *_, text, _ in mine}) == 1:
            # a clip-norm (noise, learning-rate, data-size) sweep at one target ε: every point read "ε 4"; said
            # once in the legend instead (a line of its own: one line ran past a phone's edge), the points left to
            # the curve
            title += f"<br>every run spent {mine[0][2]}"
        else:
            labels += mine
        fig.add_scatter(x=s.value, y=s["mean"], mode="lines+markers", name=palette.legend_lines(title),
                        line=dict(color=c, width=3, dash=style["dash"]),
                        marker=dict(symbol="x" if name in leaky else style["symbol"], size=10 if name in leaky else 8),
                        legendgroup=name,
                        # the ε spent as the pages write it (rounded up), not plotly's nearest 3 figures
                        customdata=[[n, format_epsilon(e)] for n, e in zip(s["n"], s["epsilon_spent"])],
                        hovertemplate="%{x:.3g}: mean %{y:.4g} over %{customdata[0]} seed(s); "
                                      "ε spent %{customdata[1]}<extra>" + title + "</extra>")
    # a non-private baseline takes the colour of the (first) learner it is the counterpart of
    owner = {}
    for i, name in enumerate(config.learners):
        owner.setdefault(config.baseline_for(name), _COLOURS[i % len(_COLOURS)])
    if not summ.empty:
        for _, b in summ[summ.role != "swept"].iterrows():
            title = regs[b.learner].title if b.learner in regs else b.learner
            kind = "trivial" if b.role == "trivial" else "non-private"
            label = title if kind in title.lower() else f"{title} ({kind})"
            # a line over seeds that differ says it is their mean: the lesson's Train page, at seed 0, shows the
            # non-private model's 0.962, and this line at the same dataset and seed read 0.958 (seeds 0 to 2), unsaid
            spread = int(b["n"]) > 1 and b["max"] > b["min"]
            name = f"{label}: {b['mean']:.3g}" + (f", mean of {int(b['n'])} seeds" if spread else "")
            # traces, not add_hline: hline annotations misplace on log axes
            fig.add_scatter(x=[x0, x1], y=[b["mean"], b["mean"]], mode="lines", name=palette.legend_lines(name),
                            line=dict(color=owner.get(b.learner, palette.BLACK) if kind == "non-private"
                                      else palette.GREY,
                                      dash="dash" if kind == "non-private" else "dot", width=2))
    axis = AXES.get(config.axis)
    x_title = axis.label if axis else config.axis.replace("_", " ")
    fig.update_layout(
        xaxis_title=x_title + (" — log scale" if log_x else ""),
        yaxis_title=METRIC_LABELS.get(metric, metric) + (" — log scale" if metric == "mse" else ""),
        xaxis_type="log" if log_x else "linear",
        xaxis=dict(tickmode="array", tickvals=xs, ticktext=[f"{v:.3g}" for v in xs]) if 1 <= len(xs) <= 12 else {},
        yaxis_type="log" if metric == "mse" else "linear",
        legend=dict(orientation="h", y=-0.2),
        height=460,
        margin=dict(t=30, b=40),
    )
    if x_range is None and len(xs) > 1 and (x0 > 0 or not log_x):
        # the swept range, padded as Plotly pads a marker: a live chart's first frames hold only the baselines' lines,
        # which Plotly fits edge to edge, dropping the last value's tick ("10" on the lesson's ε axis)
        lo, hi = (math.log10(x0), math.log10(x1)) if log_x else (x0, x1)
        x_range = [lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)]
    if x_range is not None:
        fig.update_xaxes(range=x_range)
    if metric in _FRACTIONS and (summ.empty or not (summ.role == "swept").any()):
        # no learner's point yet (a live chart's first frames): the fraction's own scale, not Plotly's ±1 around a
        # lone baseline, which drew accuracy from -0.5
        fig.update_yaxes(range=[0.0, 1.05])
    place_point_labels(fig, labels, log_x=log_x, log_y=metric == "mse")
    if config.axis == "epsilon":  # the verdict bands behind an ε axis
        palette.epsilon_bands(fig, [x0, x1], log=log_x)
    if mark is not None and config.axis == "epsilon" and x0 <= mark <= x1 and (mark > 0 or not log_x):
        mark_line = dict(color=palette.BLACK, dash="dashdot", width=2)
        fig.add_vline(x=mark, line=mark_line)  # a shape: data units
        # named in the legend, not on the plot: at the plot's foot its name sat on the trivial baseline (MNIST's
        # majority class, 0.1, runs along the bottom), and the curves and the non-private line take its top
        fig.add_scatter(x=[None], y=[None], mode="lines", line=mark_line, name=f"your ε = {mark:g}",
                        hoverinfo="skip")
    if log_x and len(xs) > 12:  # too many values to label each: full-number 1-2-5 ticks (Plotly writes 0.02 as "2")
        readable_log_ticks(fig, "x")
    return readable_log_ticks(fig, "y") if metric == "mse" else fig


def best_swept_label(symbol: str, value: float, spent: float | None, axis: str = "epsilon") -> str:
    """The Trade-off explorer's "Best swept" metric label: the point's value on the ``axis`` (:func:`swept_text`: an ε
    rounded up) and, when its runs spent more than the ε on the axis, the ε they spent, rounded up as every ε spent is
    (:func:`spent_text`; ``:.3g`` wrote 9,034 as "9.03e+03", below the ε spent).

    >>> best_swept_label("ε", 20.0, 9034.2), best_swept_label("σ", 1.25, None, "noise_multiplier")
    ('Best swept: ε = 20, spent 9,040', 'Best swept: σ = 1.25')
    >>> best_swept_label("ε", 0.12345, None)
    'Best swept: ε = 0.124'
    """
    return f"Best swept: {symbol} = {swept_text(value, axis)}" + (f", spent {spent_text(spent)}" if spent else "")


def spent_label(epsilon: float) -> str:
    """A point's "ε spent" label (rounded up), written by :func:`~dpcore.sweep.summary.spent_text` as the note under
    the chart is.

    >>> spent_label(9000.0), spent_label(2634.1), spent_label(4.5), spent_label(0.31623), spent_label(float("inf"))
    ('ε 9,000', 'ε 2,640', 'ε 4.5', 'ε 0.317', 'ε ∞ (not private)')
    """
    return f"ε {spent_text(epsilon, infinity=format_epsilon(epsilon))}"


def swept_text(value: float, axis: str) -> str:
    """A point of the swept axis as the page names it: an ε rounded up as every ε shown is (its runs spend up to it:
    DP-SGD's accountant lands just below the target, so 0.12345 written "0.123" read as less than they spent), any
    other knob (a clip norm, σ, a size) to three figures.

    >>> swept_text(0.12345, "epsilon"), swept_text(0.12345, "clip_norm"), swept_text(10.0, "epsilon")
    ('0.124', '0.123', '10')
    """
    return format_epsilon(value) if axis == "epsilon" else f"{value:.3g}"


#: Plot areas (width, height in px) a point label is placed for, as measured on the page: the chart beside the
#: sidebar at 1280 px, and on a 390 px phone (its legend of six rows leaves the plot about 215 px).
_PLOT_SIZES = ((740, 320), (285, 215))
_LABEL_FONT_PX, _LABEL_CHAR_PX, _LABEL_HEIGHT_PX = 11, 6.2, 14
#: How far (px) a label may sit from its marker's edge, nearest first; a farther spot costs :data:`_FAR_COST` more.
_LABEL_GAPS, _FAR_COST = (2, 14), 60.0
_MARKER_RADIUS_PX = 5


def _label_boxes(width: float):
    """(cost, (left, right, bottom, top)) of each spot a ``width`` px label may take around a point at (0, 0) (px, y
    up), in the order ties are settled: beside the marker diagonally (clear of a rising or falling line through it),
    then straight above, below, left or right of it, near then farther."""
    h, r = _LABEL_HEIGHT_PX, _MARKER_RADIUS_PX
    for k, gap in enumerate(_LABEL_GAPS):
        d = r + gap
        extra = k * _FAR_COST
        yield extra, (-width - gap, -gap, gap, gap + h)  # above left
        yield extra, (gap, gap + width, -gap - h, -gap)  # below right
        yield extra, (gap, gap + width, gap, gap + h)  # above right
        yield extra, (-width - gap, -gap, -gap - h, -gap)  # below left
        yield extra, (-width / 2, width / 2, d, d + h)  # above
        yield extra, (-width / 2, width / 2, -d - h, -d)  # below
        yield extra, (-width - d, -d, -h / 2, h / 2)  # left
        yield extra, (d, d + width, -h / 2, h / 2)  # right


def _drawn_geometry(fig: go.Figure, *, log_x: bool, log_y: bool):
    """The lines (lists of points) and markers the figure draws, in axis units (log10 on a log axis)."""
    def units(vals, log):
        v = np.asarray(list(vals), dtype=float)
        return np.log10(np.where(v > 0, v, np.nan)) if log else v
    lines, markers, extent = [], [], []
    for t in fig.data:
        if t.x is None or t.y is None:
            continue
        x, y = units(t.x, log_x), units(t.y, log_y)
        keep = np.isfinite(x) & np.isfinite(y)
        extent.append(np.column_stack([x[keep], y[keep]]))
        mode = t.mode or ""
        if "lines" in mode and (t.line.width is None or t.line.width > 0):
            lines.append(np.column_stack([x[keep], y[keep]]))
        if "markers" in mode:
            markers.append(np.column_stack([x[keep], y[keep]]))
    return lines, markers, np.concatenate(extent) if extent else np.zeros((0, 2))


def _overlap(a, b) -> float:
    """Area shared by two (left, right, bottom, top) boxes."""
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[2], b[2]))


def place_point_labels(fig: go.Figure, labels, *, log_x: bool, log_y: bool) -> None:
    """Write each (x, y, text, colour) of ``labels`` beside its point where it covers the fewest lines, markers and
    labels already placed, and stays inside the plot, judged at the plot sizes of :data:`_PLOT_SIZES` (a label on
    a trace's text sat under its point, on the other learners' points and lines, and past a phone's right edge)."""
    if not labels:
        return
    lines, markers, pts = _drawn_geometry(fig, log_x=log_x, log_y=log_y)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.05 * np.where(hi > lo, hi - lo, 1.0)
    lo, hi = lo - pad, hi + pad
    # the axes' ranges set here (5 % around what is drawn, as Plotly pads), so the spots are judged where they fall
    for k, axis in enumerate(("xaxis", "yaxis")):
        given = fig.layout[axis].range
        if given is not None:
            lo[k], hi[k] = given
        else:
            fig.layout[axis].range = [float(lo[k]), float(hi[k])]
    span = hi - lo
    # per plot size: every line sampled every 2 px, the markers' centres, the labels placed so far (all in px)
    scenes = []
    for size in _PLOT_SIZES:
        scale = np.asarray(size, dtype=float) / span
        samples = [np.zeros((0, 2))]
        for line in lines:
            p = (line - lo) * scale
            for a, b in zip(p[:-1], p[1:]):
                t = np.linspace(0.0, 1.0, max(2, int(np.hypot(*(b - a)) / 2)))[:, None]
                samples.append(a + t * (b - a))
        dots = np.concatenate([(m - lo) * scale for m in markers]) if markers else np.zeros((0, 2))
        scenes.append((size, scale, np.concatenate(samples), dots, []))

    def cost(box, scene) -> float:
        (w, h), _, samples, dots, placed = scene
        area = (box[1] - box[0]) * (box[3] - box[2])
        inside = ((samples[:, 0] >= box[0]) & (samples[:, 0] <= box[1]) & (samples[:, 1] >= box[2])
                  & (samples[:, 1] <= box[3]))
        r = _MARKER_RADIUS_PX
        on_dots = sum(_overlap(box, (x - r, x + r, y - r, y + r)) for x, y in dots)
        return (20.0 * (area - _overlap(box, (0, w, 0, h))) + 20.0 * np.count_nonzero(inside) + 2.0 * on_dots
                + 2.0 * sum(_overlap(box, other) for other in placed))

    for x, y, text, colour in labels:
        at = np.array([math.log10(x) if log_x else float(x), math.log10(y) if log_y else float(y)])
        width = _LABEL_CHAR_PX * len(text) + 2

        def total(spot, at=at) -> float:
            extra, (x0, x1, y0, y1) = spot
            return extra + sum(cost((px + x0, px + x1, py + y0, py + y1), scene)
                               for scene in scenes for px, py in [(at - lo) * scene[1]])

        _, (x0, x1, y0, y1) = min(_label_boxes(width), key=total)
        for scene in scenes:
            px, py = (at - lo) * scene[1]
            scene[4].append((px + x0, px + x1, py + y0, py + y1))
        # on a light backing: where every spot crosses something (a point in a corner among baselines), the line
        # passes behind the number rather than through it
        fig.add_annotation(x=at[0], y=at[1], text=text, showarrow=False, font=dict(size=_LABEL_FONT_PX, color=colour),
                           xanchor="left", yanchor="bottom", xshift=x0, yshift=y0, bgcolor="rgba(255,255,255,0.8)",
                           borderpad=0)


ROLE_LABELS = {"swept": "private (swept)", "baseline": "non-private baseline", "trivial": "trivial baseline"}
#: The swept value's column header in the tables, short beside the axis's full label (the chart's axis title):
#: "Noise multiplier σ (noise std / C)" and "Clipping norm C (L2)" widened the summary past a laptop's width and cut
#: off its "ε spent" column
SHORT_AXIS_HEADERS = {"epsilon": "ε", "clip_norm": "Clip norm C", "noise_multiplier": "Noise multiplier σ",
                      "learning_rate": "Learning rate η", "train_fraction": "Share of training set"}


def _axis_header(axis: str) -> str:
    return SHORT_AXIS_HEADERS.get(axis) or (AXES[axis].label if axis in AXES else axis.replace("_", " "))


def _leak_text(v) -> str:
    return "⚠ yes: ε is not a guarantee" if bool(v) else ""


def _leak_column(df: pd.DataFrame) -> pd.Series | None:
    """The "Leaks privacy" cells, only for private (swept) rows; None when no private row leaked.

    A non-private baseline has no guarantee to lose, so a leak there is not flagged.
    """
    if "leaks_privacy" not in df:
        return None
    flags = df["leaks_privacy"].astype(bool) & (df["role"] == "swept")
    return flags.map(_leak_text) if flags.any() else None


def _insert_leaks(out: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    col = _leak_column(df)
    if col is not None:  # right after "Kind", where a narrow screen still shows it
        out.insert(2, "Leaks privacy", col.to_numpy())
    return out


#: What the summary's short headers mean, under the table (kept short so that it fits a laptop's width)
SUMMARY_COLUMNS = ("Each row: one learner at one value, over its seeds. Std (standard deviation) is how far the seeds' "
                   "scores spread around their mean; Min and Max are the lowest and highest seed's score.")


def display_summary(summ: pd.DataFrame, *, metric: str, axis: str) -> pd.DataFrame:
    """The across-seed summary with readable headers and cells (strings; "—" where there is no number)."""
    name = metric_name(metric, title=True)
    out = pd.DataFrame({
        "Learner": summ["learner"].map(title_of),
        "Kind": summ["role"].map(lambda r: ROLE_LABELS.get(r, r)),
        _axis_header(axis): summ["value"].map(format_number),
        f"Mean {name}": summ["mean"].map(lambda v: metric_text(v, metric)),
        "Std": summ["std"].map(format_number),  # across seeds, as every column here
        "Min": summ["min"].map(lambda v: metric_text(v, metric)),
        "Max": summ["max"].map(lambda v: metric_text(v, metric)),
        "Seeds": summ["n"].astype(int),
        # "∞" alone: the Kind column already says non-private, and the table then fits a laptop's width
        "ε spent": summ["epsilon_spent"].map(lambda e: "∞" if e == math.inf else format_epsilon(e)),
    })
    return _insert_leaks(out, summ)


def display_runs(table: pd.DataFrame, *, axis: str) -> pd.DataFrame:
    """Every run with readable headers and cells; dataset and axis (the same in every row) are left out."""
    out = pd.DataFrame({
        "Learner": table["learner"].map(title_of),
        "Kind": table["role"].map(lambda r: ROLE_LABELS.get(r, r)),
        _axis_header(axis): table["value"].map(format_number),
        "Seed": table["seed"].astype(int),
    })
    for m in [c for c in table.columns if c not in set(ENGINE_COLUMNS)]:
        out[metric_name(m, title=True)] = table[m].map(lambda v: format_number(v, 4))
    out["ε spent"] = table["epsilon"].map(format_epsilon)
    out["ε target"] = table["epsilon_target"].map(format_number)
    out["δ"] = table["delta"].map(lambda d: format_number(d) if d else DASH)
    if "neighbouring" in table:  # what one ε protects
        units = table["unit"].fillna("records") if "unit" in table else pd.Series("records", index=table.index)
        out["Neighbours"] = [neighbours_said(r, u) or DASH for r, u in zip(table["neighbouring"].fillna(""), units)]
    if "unit" in table and (table["unit"].fillna("records") != "records").any():  # label DP, a federation ...
        from ..accounting import UNIT_SAID

        private = table["neighbouring"].fillna("").astype(bool) if "neighbouring" in table else True
        out["Protects"] = table["unit"].fillna("records").map(lambda u: UNIT_SAID.get(u, u)).where(private, DASH)
    out["Noise multiplier σ"] = table["noise_multiplier"].map(format_number)
    out["Seconds"] = table["seconds"].map(lambda v: f"{v:.2f}")
    out["From cache"] = table["cached"].map(lambda c: "yes" if c else "")
    if "warnings" in table and table["warnings"].fillna("").astype(bool).any():
        out["Warnings"] = table["warnings"].fillna("")
    return _insert_leaks(out, table)


def _where_raised(w: dict, table: pd.DataFrame) -> str:
    """"At ε = 0.1 (1 of 2 runs), 0.3: " when a warning was not raised by every run of its learners, else ""."""
    if w["everywhere"] or not w["where"]:
        return ""
    axis = next((a for a in table.get("axis", pd.Series(dtype=object)).dropna()), "value")
    name = _axis_header(str(axis))
    at = ", ".join(format_number(v) + (f" ({k} of {n} runs)" if k < n else "") for v, (k, n) in w["where"].items())
    return f"At {name} = {at}: "


def _better(a: float, b: float, metric: str) -> bool:
    return a < b if metric == "mse" else a > b


def _swept_vs_trivial(summ: pd.DataFrame):
    """``(learner, its summary rows, trivial mean)`` per swept learner; nothing when there is no trivial line."""
    triv = summ[summ.role == "trivial"]["mean"]
    if triv.empty:
        return
    t = float(triv.iloc[0])
    for name, g in summ[summ.role == "swept"].groupby("learner", sort=False):
        yield name, g, t


def no_better_than_trivial(summ: pd.DataFrame, metric: str) -> list[tuple[str, float, float]]:
    """Swept learners whose best mean (over every value tried) does not beat the trivial baseline.

    Returns ``(learner, best mean, trivial mean)`` tuples; empty when there is no trivial line.
    """
    out = []
    for name, g, t in _swept_vs_trivial(summ):
        best = float(g["mean"].min() if metric == "mse" else g["mean"].max())
        if not _better(best, t, metric):
            out.append((name, best, t))
    return out


def worse_than_trivial_at(summ: pd.DataFrame, metric: str) -> list[tuple[str, list[float]]]:
    """Swept learners that beat the trivial baseline somewhere but not at every value: ``(learner, values)``.

    The values are those where the learner's mean is no better than the trivial predictor's
    (learners that never beat it are reported by :func:`no_better_than_trivial`).

    Examples
    --------
    >>> summ = pd.DataFrame({"learner": ["fm"] * 3 + ["mean"], "role": ["swept"] * 3 + ["trivial"],
    ...                      "value": [0.1, 1.0, 10.0, float("nan")], "mean": [9.0, 7.0, 3.0, 6.0]})
    >>> worse_than_trivial_at(summ, "mse")
    [('fm', [0.1, 1.0])]
    """
    out = []
    for name, g, t in _swept_vs_trivial(summ):
        worse = [float(v) for v, m in zip(g["value"], g["mean"]) if not _better(float(m), t, metric)]
        if worse and len(worse) < len(g):
            out.append((name, sorted(worse)))
    return out


__all__ = [
    "DEFAULT_LEARNERS",
    "METRIC_LABELS",
    "axis_options",
    "default_learners",
    "display_runs",
    "display_summary",
    "neighbouring_note",
    "overspent_note",
    "swept_text",
    "best_swept",
    "knobs_markdown",
    "n_to_compute",
    "no_better_than_trivial",
    "worse_than_trivial_at",
    "table_csv",
    "title_of",
    "parse_knobs",
    "remembered",
    "run_live",
    "sweep_figure",
    "sweepable",
]


def display_tuning_tax(tax: pd.DataFrame) -> pd.DataFrame:
    """The tuning-tax table with readable headers: one row per swept private learner."""
    return pd.DataFrame({
        "Learner": tax["learner"].map(title_of),
        "Candidates tried": tax["candidates"].astype(int),
        # the candidates' ε differ when the sweep moves the noise, the budget or the epochs: the largest is shown
        "ε of one run (the largest)": tax["run_epsilon"].map(format_epsilon),
        # this sweep tried a fixed grid: Papernot & Steinke's bound is for a search that draws how many it tries
        "ε had the search been private (a random number of candidates, best kept)": tax["search_epsilon"].map(
            lambda v: DASH if pd.isna(v) else format_epsilon(v)),
        "ε if every run were released (composition)": tax["composition_epsilon"].map(format_epsilon),
        # the composition holds that ε at the sum of the runs' δ, not at one run's
        "δ of that composition": tax["composition_delta"].map(lambda d: f"{round_epsilon(d, 2):.2g}"),
        "Note": tax["note"],
    })
