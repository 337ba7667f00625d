"""Clustering: DPLloyd vs Laplace input perturbation vs plain Lloyd (seed 000, figures 3 and 4)."""
from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dpcore.datasets import REGISTRY, dataset_names
from dpcore.ui import readable_log_ticks, epsilon_input, page_header, run_guarded, seed_input, show_table
from dpcore.ui.models import CLUSTER_LABELS, cluster_demo, cluster_sweep

page_header(
    "Private k-means clustering",
    "DPLloyd (Su et al.) adds Laplace noise to each cluster's count and coordinate sums in every Lloyd round; input "
    "perturbation adds Laplace noise to every record and then runs ordinary Lloyd. Both are compared with the "
    "non-private algorithm by accuracy against the true classes after Hungarian matching.",
)

with st.sidebar:
    st.header("Settings")
    names = [n for n in dataset_names("classification", images=False) if n != "adult"]
    dataset = st.selectbox("Dataset", names, index=names.index("iris"), key="cluster.dataset",
                           format_func=lambda n: REGISTRY[n].title)
    k = st.number_input("Clusters k", 2, 20, 3, key="cluster.k")
    epsilon = epsilon_input("cluster.epsilon", default=1.0)
    auto_iter = st.checkbox("Su et al.'s default rounds", True, key="cluster.auto_iter",
                            help="1 DPLloyd round after the noisy-grid initialisation (their hybrid).")
    iterations = None if auto_iter else int(st.number_input("DPLloyd rounds T", 1, 20, 3, key="cluster.iterations"))
    seeds = st.number_input("Seeds averaged in the sweep", 1, 10, 3, key="cluster.seeds")
    seed = seed_input("cluster.seed")

demo = run_guarded(cluster_demo, dataset, int(k), float(epsilon), iterations, seed)
if demo is not None:
    m = demo["metrics"].set_index("method")
    cols = st.columns(3)
    for c, name in zip(cols, m.index):
        c.metric(f"{name} accuracy", f"{m.loc[name, 'accuracy']:.3f}",
                 help=f"Intra-cluster variance {m.loc[name, 'intra_cluster_variance']:.3f} "
                      "(within-cluster / total sum of squares; lower is tighter).")
    st.caption(f"Test rows of {REGISTRY[dataset].title}, features mapped from their declared bounds onto [-1, 1]. "
               "The 2-D PCA projection is for display only; the clustering runs in all dimensions.")
    pts, cen = demo["points"], demo["centres"]
    classes = sorted(pts["class"].unique())
    plots = st.columns(3)
    for col, name in zip(plots, CLUSTER_LABELS.values()):
        fig = px.scatter(pts, x="PC1", y="PC2", color=name, symbol="class", opacity=0.7,
                         labels={name: "matched class"}, title=name, category_orders={name: classes},
                         color_discrete_sequence=px.colors.qualitative.Set1)
        c = cen[cen.method == name]
        fig.add_trace(go.Scatter(x=c.PC1, y=c.PC2, mode="markers", name="centres",
                                 text=[f"centre → {m}" + ("" if v else " (outside the view, drawn at its edge)")
                                       for m, v in zip(c.matched_class, c.in_view)],
                                 marker=dict(symbol=["x" if v else "triangle-up" for v in c.in_view], size=16,
                                             color="black", line=dict(width=2))))
        fig.update_layout(height=380, margin=dict(l=10, r=10, t=40, b=10), showlegend=False,
                          xaxis_title="PC 1 (display only)", yaxis_title="PC 2")
        col.plotly_chart(fig, width="stretch", key=f"cluster.scatter.{name}")
    st.caption("Points are coloured by the class their cluster is matched to (Hungarian matching), shaped by "
               "their true class; ✕ marks a centre, ▲ a centre outside the view drawn at its edge.")
    show_table(demo["metrics"], key="cluster.metrics_table")
    st.caption("Within / total sum of squares: the squared distance of each point to its centre, summed, over the "
               "squared distance to the overall mean (1 = no better than a single centre at the mean; above 1, "
               "centres far from the data, as the noisy centres of input perturbation at small ε can be).")

st.subheader("Accuracy vs ε")
epsilons = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
progress = st.progress(0.0, text="Sweeping ε …")
df = run_guarded(cluster_sweep, dataset, int(k), iterations, epsilons, int(seeds), seed)
progress.progress(1.0, text="Done")
if df is not None:
    metric = st.radio("Metric", ["accuracy", "intra_cluster_variance"], horizontal=True, key="cluster.metric",
                      format_func=lambda s: {"accuracy": "Accuracy (Hungarian matching)",
                                             "intra_cluster_variance": "Normalised intra-cluster variance"}[s])
    fig = px.line(df, x="epsilon", y=metric, color="method", markers=True, log_x=True,
                  log_y=metric == "intra_cluster_variance",
                  error_y="accuracy_sd" if metric == "accuracy" else None,
                  labels={"epsilon": "ε (log scale)", metric: metric.replace("_", " "), "method": "Method"})
    readable_log_ticks(fig, "x")
    if metric == "intra_cluster_variance":
        readable_log_ticks(fig, "y")
    fig.update_layout(height=420, yaxis_title="test accuracy (fraction)" if metric == "accuracy"
                      else "within / total sum of squares")
    st.plotly_chart(fig, width="stretch", key="cluster.sweep_chart")
    st.caption(f"Mean over {seeds} seeds (split and noise); bars show one standard deviation. The non-private "
               "line does not depend on ε. DPLloyd spends 40% of ε on a noisy grid histogram for its start "
               "(Su et al.'s hybrid), the rest on the rounds; input perturbation adds Lap(Σ ranges / ε) per value.")
    show_table(df, key="cluster.sweep_table")
