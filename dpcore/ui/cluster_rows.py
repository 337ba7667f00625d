"""The Clustering page on a visitor's table with no label: the three k-means on every row, read without classes.

What needs classes (accuracy, Hungarian matching, the warning about k and the number of classes, the chart against
ε read by accuracy) is not shown; what is: the within / total sum of squares beside the non-private Lloyd's and
random centres' (with :data:`~dpcore.models.cluster_rows.SCORE_NOTE`: ε does not cover it), the ε spent, the private
centres in the columns' units and the rows coloured by cluster. The runs are this session's alone
(:func:`cluster_rows_demo`: memoised in the session, never in ``st.cache_data`` nor in the server's store of runs).
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ..accounting.neighbouring import Neighbouring
from ..models.cluster_rows import METHODS, NO_ACCURACY_NOTE, SCORE_NOTE, cluster_rows, random_centres_on_rows
from ..runtime.thread_warnings import caught as caught_warnings
from . import palette
from .common import format_epsilon, remembered, show_table, show_warnings
from .ledger import SESSION_KEY, record_run, session_total_text
from .models import (
    CLUSTER_LABELS,
    RANDOM_CENTRES,
    UPLOAD_RUNS,
    _cluster_params,
    add_centres,
    display_view,
    dplloyd_run_text,
    neighbouring_text,
)
from .present import headline_area
from .uploads import data_key

#: The score's name, as the labelled page's table and chart call it.
WITHIN_TOTAL = "Within / total sum of squares"


def cluster_rows_demo(dataset, k: int, epsilon: float, iterations: int | None, seed: int | None,
                      neighbouring: str = "replace-one", more: tuple = ()) -> dict:
    """:func:`cluster_rows_demo_of`, memoised in this session alone (a visitor's file never leaves it)."""
    return remembered(UPLOAD_RUNS, ("cluster_rows_demo", data_key(dataset), k, epsilon, iterations, seed,
                                    neighbouring, more),
                      lambda: cluster_rows_demo_of(dataset, k, epsilon, iterations, seed, neighbouring, more))


def cluster_rows_demo_of(dataset, k: int, epsilon: float, iterations: int | None, seed: int | None,
                         neighbouring: str = "replace-one", more: tuple = ()) -> dict:
    """The three methods on every row of ``dataset`` at ``epsilon`` (``seed`` None: secure noise).

    ``metrics``: each method's within / total sum of squares and ε spent, then random centres' (mean and spread
    over their draws, no data used); ``centres``: each method's centres in the columns' own units; ``points`` and
    ``centres_view``: the rows and centres on the display projection, each row's cluster per method; ``runs``: the
    :class:`~dpcore.models.cluster_rows.RowsClustering` of each method (their dp_accounting events); ``run``: what
    DPLloyd did; ``warnings``: the runs' warnings, kept with the result."""
    with caught_warnings() as caught:
        runs = {m: cluster_rows(dataset, m, k=k, epsilon=None if m == "lloyd" else epsilon, seed=seed,
                                params={key: v for key, v in _cluster_params(m, k, iterations, neighbouring,
                                                                             more).items() if key != "k"})
                for m in METHODS}
        reference = random_centres_on_rows(dataset, k)
    rows = [{"method": CLUSTER_LABELS[m], "intra_cluster_variance": r.within_total, "epsilon": r.epsilon}
            for m, r in runs.items()]
    rows.append({"method": RANDOM_CENTRES, "intra_cluster_variance": reference.intra_cluster_variance,
                 "intra_cluster_variance_sd": reference.intra_cluster_variance_sd, "epsilon": 0.0})
    names = list(dataset.feature_names)
    centres = pd.DataFrame([{"method": CLUSTER_LABELS[m], "cluster": j + 1, **dict(zip(names, c))}
                            for m, r in runs.items() for j, c in enumerate(r.centres)])
    pts, place = display_view(dataset.X, dataset.bounds)
    view = []
    for m, r in runs.items():
        pts[CLUSTER_LABELS[m]] = [f"cluster {int(c) + 1}" for c in r.labels]
        view += [{"method": CLUSTER_LABELS[m], "cluster": f"cluster {j + 1}", "PC1": a, "PC2": b, "in_view": inside}
                 for j, (a, b, inside) in enumerate(place(r.centres_unit))]
    return {"metrics": pd.DataFrame(rows), "centres": centres, "points": pts, "centres_view": pd.DataFrame(view),
            "runs": runs, "run": runs["dplloyd"].run, "reference": reference, "k": k,
            "warnings": [str(w.message) for w in caught]}


def rows_scatter_figure(points: pd.DataFrame, centres: pd.DataFrame, method: str, k: int) -> go.Figure:
    """The rows on the display projection, coloured by their cluster under ``method``; ✕ its centres (▲: outside
    the view, drawn at its edge)."""
    fig = go.Figure()
    for j in range(k):
        name = f"cluster {j + 1}"
        part = points[points[method] == name]
        colour = palette.SERIES_COLOURS[j % len(palette.SERIES_COLOURS)]
        fig.add_scatter(x=part.PC1, y=part.PC2, mode="markers", opacity=0.7, name=name,
                        marker=dict(color=colour, size=7), hovertemplate=f"{name}<extra></extra>")
    c = centres[centres.method == method]
    add_centres(fig, c, [f"centre of {n}" for n in c.cluster])
    fig.update_layout(title=method, height=440, margin=dict(l=10, r=10, t=40, b=10),
                      xaxis_title="PC 1 (display only)", yaxis_title="PC 2",
                      legend=dict(orientation="h", yanchor="top", y=-0.3))
    return fig


def metric_label(name: str, spent: float) -> str:
    """A method's headline label: its name and the ε it spent, short enough for four across a laptop's screen.

    >>> metric_label("DPLloyd", 0.5), metric_label("Lloyd (non-private)", float("inf"))
    ('DPLloyd, ε 0.5', 'Lloyd, not private')
    >>> metric_label(RANDOM_CENTRES, 0.0)
    'Random centres, ε 0'
    """
    if spent == float("inf"):
        return name.split(" (")[0] + ", not private"
    return f"{name.split(' (')[0]}, ε {format_epsilon(spent)}"


def no_tighter_text(metrics: pd.DataFrame, reference) -> str:
    """The private methods whose within / total is no lower than random centres' (within one standard deviation of
    their mean: no tighter than centres that never looked at the rows), in one sentence, or "".

    >>> import numpy as np
    >>> from dpcore.models.kmeans import RandomCentresReference
    >>> ref = RandomCentresReference(np.nan, np.nan, 1.2, 0.4, 20, np.zeros((20, 3, 2)))
    >>> m = pd.DataFrame({"intra_cluster_variance": [0.2, 0.9]}, index=["DPLloyd", "Input perturbation"])
    >>> no_tighter_text(m, ref)
    'At this ε, Input perturbation (0.900) is no tighter than random centres. '
    """
    private = [CLUSTER_LABELS[m] for m in METHODS if m != "lloyd"]
    floor = reference.intra_cluster_variance - reference.intra_cluster_variance_sd
    loose = [n for n in private if n in metrics.index and metrics.loc[n, "intra_cluster_variance"] >= floor]
    if not loose:
        return ""
    who = " and ".join(f"{n} ({metrics.loc[n, 'intra_cluster_variance']:.3f})" for n in loose)
    return f"At this ε, {who} {'is' if len(loose) == 1 else 'are'} no tighter than random centres. "


def show_rows_clustering(ds, demo: dict, epsilon: float, neighbouring: str) -> None:
    """Draw :func:`cluster_rows_demo`'s result under the page's header."""
    show_warnings(demo["warnings"], fold=True)
    metrics = demo["metrics"].set_index("method")
    k = int(demo["k"])
    columns = f"{ds.n_features} column{'' if ds.n_features == 1 else 's'}"  # a file of one column: "1 column"
    st.markdown(f"**Your rows ({ds.n_samples} rows, {columns}) at ε = {epsilon:g}**, k = {k} "
                f"clusters, every row clustered: {WITHIN_TOTAL.lower()} (lower is tighter) and the ε each spent.")
    cols = st.columns(len(metrics))
    for c, name in zip(cols, metrics.index):
        c.metric(metric_label(name, float(metrics.loc[name, "epsilon"])),
                 f"{metrics.loc[name, 'intra_cluster_variance']:.3f}",
                 help=f"{name}: within-cluster / total sum of squares of your rows; lower is tighter.")
    ref = demo["reference"]
    st.markdown(f"**{WITHIN_TOTAL}** of every row to its centre (in the [-1, 1] coordinates of the declared "
                f"bounds; lower is tighter, 1 is no better than one centre at the mean): the private methods beside "
                f"the non-private Lloyd and beside {RANDOM_CENTRES.lower()}, k centres drawn uniformly in the "
                f"declared bounds ({ref.intra_cluster_variance:.3f} ± {ref.intra_cluster_variance_sd:.3f} over "
                f"{ref.draws} draws). {no_tighter_text(metrics, ref)}**{SCORE_NOTE}**")
    st.caption(NO_ACCURACY_NOTE + " " + dplloyd_run_text(demo["run"], float(epsilon)) + " "
               + neighbouring_text(neighbouring))
    plots = headline_area().columns(3)
    for col, m in zip(plots, METHODS):
        name = CLUSTER_LABELS[m]
        col.plotly_chart(rows_scatter_figure(demo["points"], demo["centres_view"], name, k), width="stretch",
                         key=f"cluster.rows.scatter.{m}")
    st.caption("Every row of your file, flattened onto the two directions along which the rows spread most (PC 1 "
               "and PC 2, for display only; the clustering runs in all columns), coloured by its cluster. ✕ marks "
               "a centre, ▲ a centre outside the view drawn at its edge.")
    show_table(demo["metrics"], key="cluster.rows.metrics_table",
               labels={"intra_cluster_variance": WITHIN_TOTAL, "intra_cluster_variance_sd": "Random centres' SD"})
    st.subheader("The private centres, in your columns' units")
    st.caption("These are the release: what the ε above pays for. Input perturbation's can lie outside your bounds, "
               "as its noisy records do (More settings clips those records to the bounds). Lloyd's centres are not "
               "private; they are shown to compare with, on your own rows.")
    show_table(demo["centres"], key="cluster.rows.centres_table")


def show_rows_session_total(ds, demo: dict, inputs: tuple) -> None:
    """Record the private runs on show in this session's total on the file, once per ``inputs`` (the same inputs
    show the same release again), and say the total: each change of k, ε or a setting clusters the same private
    rows again, and both private methods release their centres."""
    store = st.session_state.setdefault(SESSION_KEY, {})
    data = data_key(ds)
    for m, run in demo["runs"].items():
        if run.dp_event is not None:
            record_run(data, (*inputs, m), event=run.dp_event, epsilon=run.epsilon, delta=0.0,
                       neighbouring=Neighbouring.of(run.neighbouring), store=store, page="Clustering")
    if text := session_total_text(data, "your file", store=store):
        st.caption(f"**Session total.** {text}")


__all__ = ["cluster_rows_demo", "cluster_rows_demo_of", "rows_scatter_figure", "show_rows_clustering",
           "show_rows_session_total"]
