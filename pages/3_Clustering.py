"""Clustering: DPLloyd vs Laplace input perturbation vs plain Lloyd (J. Zhang's 2021 course report, figures 3-4)."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import plotly.express as px
import streamlit as st

from dpcore.datasets import train_test_split
from dpcore.datasets.csv_upload import UNLABELLED
from dpcore.learners import get_learner
from dpcore.models.cluster_rows import DEFAULT_K
from dpcore.models.learners import CLUSTER_COMPARISON_NEIGHBOURING, CLUSTER_SEEDS
from dpcore.ui import (
    dataset_picker,
    epsilon_input,
    noise_mode_input,
    page_header,
    readable_log_ticks,
    run_guarded,
    show_table,
    show_warnings,
)
from dpcore.ui.cluster_rows import cluster_rows_demo, show_rows_clustering, show_rows_session_total
from dpcore.ui.common import bounded_number
from dpcore.ui.knobs import knob_widget, knob_widgets, other_knobs
from dpcore.ui.ledger import record_chart, record_releases, show_data_total
from dpcore.ui.links import stop_page
from dpcore.ui.models import (
    CLUSTER_LABELS,
    CLUSTER_STYLE,
    cluster_demo,
    cluster_scatter_figure,
    cluster_sweep,
    dplloyd_run_text,
    neighbouring_text,
    over_seeds_text,
    queued_sweep,
    random_centres_text,
)
from dpcore.ui.palette import GREY, epsilon_bands, legend_below, mark_epsilon
from dpcore.ui.present import headline_area
from dpcore.ui.uploads import data_arg, data_key, is_upload, upload_in_view, widget_part

page_header(
    "Private k-means clustering",
    "DPLloyd (Su et al.) adds Laplace noise to each cluster's count and coordinate sums in every Lloyd round; input "
    "perturbation adds Laplace noise to every record and then runs ordinary Lloyd. Both are compared with the "
    "non-private algorithm by accuracy against the true classes, each cluster matched one to one to the class it "
    "fits best (Hungarian matching). An uploaded table with no class column is clustered too: every row, read "
    "without classes.",
)

with st.sidebar:
    st.header("Settings")
    ds = dataset_picker("cluster.dataset", task="classification", images=False, default="iris", exclude=("adult",),
                        class_shares=False, unlabelled=True)  # an upload may have no label: its rows clustered only
if ds is None:  # outside the sidebar: what the picker needs (a file, a fix to one) is said in the main area too
    stop_page()
unlabelled = ds.task == UNLABELLED
with st.sidebar:
    dataset, n_classes = data_arg(ds), ds.n_classes  # a registry name, or this session's own file
    # one k per dataset, starting at its number of classes (a stale k = 3 on a 2-class set would look like a bug)
    dplloyd = get_learner("dplloyd")  # k and the neighbouring relation are its declared knobs
    k = knob_widget(dplloyd.knob("k"), key=f"cluster.k.{widget_part(ds.name)}{'.rows' if unlabelled else ''}",
                    value=DEFAULT_K if unlabelled else min(max(n_classes, 2), 20),
                    help=f"Default {DEFAULT_K}: your file has no classes to suggest k; try others." if unlabelled
                    else f"{ds.title} has {n_classes} classes.")
    if unlabelled:
        st.caption(f"k starts at {DEFAULT_K}, a default: with no classes, nothing in the file suggests a k.")
    epsilon = epsilon_input("cluster.epsilon")
    # the page starts on replace-one, the relation input perturbation protects, so that both are compared like
    # for like (DPLloyd's own default, add-remove, is one click away); the cluster command starts there too
    neighbouring = knob_widget(dplloyd.knob("neighbouring"), key="cluster.neighbouring",
                               value=CLUSTER_COMPARISON_NEIGHBOURING,
                               help="What ε protects: replacing one record's values, or whether a record is there "
                                    "at all. Input perturbation protects each record's values (replace-one).")
    auto_iter = st.checkbox("Su et al.'s default rounds", True, key="cluster.auto_iter",
                            help="1 round after a noisy-grid start when the data have few enough dimensions for "
                                 "a grid (Su et al.'s hybrid, e.g. iris), else 3 rounds after a data-independent "
                                 "sphere-packing start. The text under the charts says which one ran.")
    iterations = None if auto_iter else bounded_number(st, "DPLloyd rounds T", low=1, high=20, default=3,
                                                       key="cluster.iterations", whole=True, value=3)
    with st.expander("More settings"):  # every other knob the two private methods declare
        more = ()
        for name in ("dplloyd", "input-perturbation"):
            spec = get_learner(name)
            st.caption(CLUSTER_LABELS[name])
            chosen = knob_widgets(spec, other_knobs(spec, ("k", "neighbouring", "iterations")),
                                  spec.defaults(train_test_split(dataset, seed=0)), prefix=f"cluster.{name}",
                                  dataset=ds.name, images=False, container=st)
            more += tuple((name, knob, value) for knob, value in chosen.items())
    # no classes: one run per method, every row (the mean over seeds reads the accuracy of labelled data)
    seeds = 1 if unlabelled else bounded_number(st, "Seeds averaged", low=1, high=10, default=CLUSTER_SEEDS,
                                                key="cluster.seeds", whole=True, value=CLUSTER_SEEDS,
                                                help="The numbers at your ε and every point of the chart are means "
                                                     "over this many seeds, each its own split and noise; the "
                                                     "pictures show the first seed's run.")
    seed = noise_mode_input("cluster.seed", uploaded=is_upload(ds))

if unlabelled:  # no classes: every row clustered, read by what needs none (dpcore/ui/cluster_rows.py)
    upload_in_view(ds)
    rows = run_guarded(cluster_rows_demo, dataset, int(k), float(epsilon), iterations, seed, neighbouring, more)
    if rows is not None:
        show_rows_clustering(ds, rows, float(epsilon), neighbouring)
        show_rows_session_total(ds, rows, (int(k), float(epsilon), iterations, seed, neighbouring, more))
    stop_page()
if int(k) != n_classes:
    st.warning(f"k = {int(k)} but {ds.title} has {n_classes} classes. Accuracy matches clusters to "
               "classes one to one (Hungarian matching), so clusters left over count as errors and a missing cluster "
               "costs a whole class: accuracy then says little about privacy, even for the non-private algorithm.")


def _worth_saying(messages) -> list[str]:
    """The runs' warnings, less "no more accurate than centres drawn at random" (the paragraph under the numbers
    and the chart's grey band say it, with the numbers) and, when k differs from the number of classes, less "no
    more accurate than the most common class": the warning above already says accuracy then means little, even for
    the non-private algorithm."""
    said = [str(getattr(m, "message", m)) for m in messages]
    said = [m for m in said if "than centres drawn at random" not in m]
    return said if int(k) == n_classes else [m for m in said if "is no more accurate on the test rows" not in m]


upload_in_view(ds)  # the intro folded, one line on whose data this is
demo = run_guarded(cluster_demo, dataset, int(k), float(epsilon), iterations, seed, neighbouring, more, int(seeds))
if demo is not None:
    show_warnings(_worth_saying(demo["warnings"]), fold=is_upload(ds))  # kept with the result (cache too)
    over = demo["over_seeds"].set_index("method")  # the headline: the mean over the seeds, steadier than one run
    several = int(over["seeds"].max()) > 1
    # the settings sit in the sidebar, folded away on a phone: the numbers say what they are for
    st.markdown(f"**{ds.title} at ε = {float(epsilon):g}**, k = {int(k)} clusters"
                + (f", mean of {int(over['seeds'].max())} seeds" if several else ""))
    cols = st.columns(3)
    for c, name in zip(cols, over.index):
        c.metric(f"{name} accuracy", f"{over.loc[name, 'accuracy']:.3f}",
                 help=(f"± {over.loc[name, 'accuracy_sd']:.3f} over the seeds. " if several else "")
                 + f"Intra-cluster variance {over.loc[name, 'intra_cluster_variance']:.3f} (within-cluster / total "
                   "sum of squares; lower is tighter).")
    if several:
        st.caption(over_seeds_text(demo["over_seeds"], demo["metrics"], demo["seed"]))
    reference = demo["reference"]  # k centres drawn at random in the bounds: what a clustering reaches unlearnt
    st.markdown(random_centres_text(demo["metrics"], reference, over_seeds=demo["over_seeds"],
                                    over_reference=demo["over_seeds_reference"], seed=demo["seed"]))
    st.caption(f"Test rows of {ds.title}, features mapped from their declared bounds onto [-1, 1]. "
               "The pictures flatten the rows onto the two directions along which they spread most (PC 1 and PC 2, "
               "a PCA projection), for display only; the clustering runs in all dimensions. "
               + dplloyd_run_text(demo["run"], float(epsilon)) + " " + neighbouring_text(neighbouring))
    plots = headline_area().columns(3)
    run_accuracy = demo["metrics"].set_index("method")["accuracy"]  # the pictures' own run
    for col, name in zip(plots, CLUSTER_LABELS.values()):
        col.plotly_chart(cluster_scatter_figure(demo["points"], demo["centres"], name, demo["classes"],
                                                accuracy=float(run_accuracy[name]),
                                                mean=(float(over.loc[name, "accuracy"]), int(over["seeds"].max()))),
                         width="stretch", key=f"cluster.scatter.{name}")
    st.markdown("**Colour**: the class a point's cluster is matched to (grey: a cluster left unmatched when k "
                "exceeds the number of classes). **Shape**: the point's true class. ✕ marks a centre, ▲ a centre "
                "outside the view drawn at its edge: at small ε the noisy centres of input perturbation often lie far "
                "outside the data, and every point then joins the one centre that is nearest.")
    show_table(demo["metrics"], key="cluster.metrics_table")
    st.caption("Within / total sum of squares: the squared distance of each point to its centre, summed, over the "
               "squared distance to the overall mean (1 = no better than a single centre at the mean; above 1, "
               "centres far from the data, as the noisy centres of input perturbation at small ε can be).")
    # each private run of every seed released its centres: the session's total on the data, under the numbers, once
    # the chart's runs below are counted too
    record_releases(data_key(ds), ("cluster_demo", int(k), float(epsilon), iterations, seed, neighbouring, more,
                                   int(seeds)), demo.get("releases", ()), page="Clustering",
                    source="the result at the top")
    total_slot = st.empty()
if demo is None:  # refused (the message is above): the sweep runs the same settings and would say it again
    stop_page()

#: the two scores by the names the table's columns and the chart's title give them (the radio said "Normalised
#: intra-cluster variance" of what the table calls "Within / total sum of squares")
METRIC_TITLES = {"accuracy": "Accuracy", "intra_cluster_variance": "Within / total sum of squares"}
metric = st.radio("Metric", ["accuracy", "intra_cluster_variance"], horizontal=True, key="cluster.metric",
                  format_func=METRIC_TITLES.get)  # the names the table and the chart use
title = METRIC_TITLES[metric]
st.header(f"{title} vs ε")
epsilons = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
df = run_guarded(queued_sweep, cluster_sweep, dataset, int(k), iterations, epsilons, int(seeds), seed, neighbouring,
                 more, what=f"The three methods at {len(epsilons)} values of ε over {int(seeds)} seed(s)")
if df is not None:
    shown = () if demo is None else tuple(_worth_saying(demo["warnings"]))  # not twice: said above already
    show_warnings(_worth_saying(df.attrs.get("warnings", ())), hide=shown, fold=is_upload(ds))  # with their ε
if df is not None:
    fig = px.line(df, x="epsilon", y=metric, color="method", line_dash="method", symbol="method", log_x=True,
                  log_y=metric == "intra_cluster_variance", error_y=f"{metric}_sd" if int(seeds) > 1 else None,
                  **CLUSTER_STYLE,
                  labels={"epsilon": "ε (log scale)", metric: title, "method": "Method"})
    readable_log_ticks(fig, "x")
    if metric == "intra_cluster_variance":
        readable_log_ticks(fig, "y")
    elif demo is not None:  # random centres' mean, and their spread as a band: a line inside it learnt nothing
        reference = demo["over_seeds_reference"]  # on the same seeds' test rows as the chart's means
        fig.add_hrect(y0=reference.accuracy - reference.accuracy_sd, y1=reference.accuracy + reference.accuracy_sd,
                      fillcolor=GREY, opacity=0.15, line_width=0)
        # named in the legend: written on the plot, the name ran across the curves at ε 2 to 20
        fig.add_hline(y=reference.accuracy, line=dict(color=GREY, dash="dot"))
        fig.add_scatter(x=[None], y=[None], mode="lines", line=dict(color=GREY, dash="dot"), hoverinfo="skip",
                        name=f"random centres (no data used): {reference.accuracy:.2f} ± {reference.accuracy_sd:.2f}")
    fig.update_layout(height=420, yaxis_title="test accuracy (fraction)" if metric == "accuracy"
                      else "within / total sum of squares (log scale)")
    legend_below(fig, y=-0.3)  # the default -0.22 reached the x-axis title (presentation mode's larger ticks)
    epsilon_bands(fig, epsilons)
    if min(epsilons) <= epsilon <= max(epsilons):  # where the runs above the chart sit on it
        mark_epsilon(fig, epsilon)
    st.plotly_chart(fig, width="stretch", key="cluster.sweep_chart")
    if not min(epsilons) <= epsilon <= max(epsilons):
        st.caption(f"Your ε = {epsilon:g} (the runs above) lies outside this sweep's {min(epsilons):g} to "
                   f"{max(epsilons):g}.")
    spread = ("; bars and the table's SD columns show one standard deviation, how far the seeds spread"
              if int(seeds) > 1 else "")
    st.caption(f"Mean over {seeds} seed(s) (split and noise){spread}. The non-private line does not depend on ε. "
               "Input perturbation adds Lap(Σ ranges / ε) to every value of every record; DPLloyd splits each ε "
               "as described above the scatter plots."
               + (" Grey band: random centres (no data used), mean ± one standard deviation on the same seeds' test "
                  "rows; a private line inside it is no better than centres that never looked at the data."
                  if metric == "accuracy" and demo is not None else ""))
    show_table(df, key="cluster.sweep_table")
record_chart(ds, ("cluster_sweep", int(k), iterations, epsilons, int(seeds), seed, neighbouring, more), df,
             page="Clustering", source="the ε chart's points")
show_data_total(ds, container=total_slot)
