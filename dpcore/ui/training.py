"""Streamlit side of the Train page: live progress, cached runs, figures.

Training results are cached in ``st.session_state`` under a key made of the
frozen inputs (dataset, algorithm, knobs, seed), not with ``st.cache_data``:
the run draws a live progress bar and charts through ``on_epoch`` while it
trains, and a ``st.cache_data`` function must not drive elements created outside
it. The results themselves are plain numpy/pandas, as for any cached call.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from ..datasets import Dataset, train_test_split
from ..learners import get_learner, run_learner
from ..training import preset_for

ALGORITHMS = ("dpsgd", "output-perturbation", "label-dp-laplace", "label-dp-rr")
ALGO_NOTES = {
    "dpsgd": "DP-SGD (Abadi et al. 2016): every example's gradient is clipped to norm C, Gaussian noise σ·C is "
             "added to the sum, and the accountant tracks ε after each epoch.",
    "output-perturbation": "A network trained without privacy answers each test query with its softmax vector plus "
                           "Laplace noise of scale 2/ε: two softmax vectors differ by at most 2 in L1 norm, so each "
                           "released vector is ε-DP, and m answered queries cost m·ε in total.",
    "label-dp-laplace": "Only the labels are private. One-hot labels get Laplace noise of scale 2/ε (one changed "
                        "label moves the one-hot vector by 2 in L1) and are decoded by argmax; regression labels get "
                        "Laplace noise of scale (label range)/ε and are clamped.",
    "label-dp-rr": "Only the labels are private. Each label is kept with probability e^ε/(e^ε+k−1), otherwise "
                   "replaced by one of the other k−1 classes (k-ary randomized response, ε under replace-one).",
}
#: What each learner's ε protects, for the metric label, its help and the notes under the history.
EPS_LABEL = {"dpsgd": "ε spent (whole records)", "label-dp-laplace": "ε (labels only)",
             "label-dp-rr": "ε (labels only)", "output-perturbation": "ε (all answers released)"}
EPS_UNIT = {
    "dpsgd": "Protects each whole training record (features and label), as accounted by dp_accounting.",
    "label-dp-laplace": "Protects only each record's label; the features are used as they are. Not comparable "
                        "with DP-SGD's ε, which protects whole records.",
    "label-dp-rr": "Protects only each record's label (replace-one neighbours); the features are used as they are. "
                   "Not comparable with DP-SGD's ε, which protects whole records.",
    "output-perturbation": "Every released softmax vector costs ε; the total is the sum over all answered queries.",
}
EPS_UNIT_SHORT = {"label-dp-laplace": "per label", "label-dp-rr": "per label",
                  "output-perturbation": "over all released answers"}
HISTORY_NOTE = {
    "dpsgd": "The loss and accuracy curves use the test rows, which play no part in training. The table's training "
             "loss is computed on the private rows for display only and is not covered by ε; the ε column is what "
             "the accountant (dp_accounting) certifies for the training data after each epoch.",
    "label-dp-laplace": "The history is the network trained on the noisy labels; the ε shown is that of the label "
                        "noise (pure ε-DP per label), not an accountant's figure for whole records.",
    "label-dp-rr": "The history is the network trained on the randomized-response labels; the ε shown is that of "
                   "the label mechanism (pure ε-DP per label, replace-one), not a figure for whole records.",
    "output-perturbation": "The history is the NON-PRIVATE network before any noise (its ε column is ∞); privacy "
                           "comes only from the Laplace noise on each released answer, counted in the ε above.",
}

MODEL_KNOBS = ("model", "hidden", "activation", "epochs", "batch_size", "learning_rate")


def defaults_for(dataset: Dataset, test_size: float = 0.25) -> dict:
    """Preset knobs for ``dataset`` (model, batch size on its training rows, epochs, lr, clip)."""
    pre = preset_for(dataset)
    # the stratified split's size does not depend on the seed, only on the class counts
    n_train = int(train_test_split(dataset, test_size=test_size, seed=0).X_train.shape[0])
    return {"model": pre.model, "hidden": pre.hidden, "activation": pre.activation, "epochs": pre.epochs,
            "batch_size": pre.batch_size(n_train), "learning_rate": pre.learning_rate, "clip_norm": pre.clip_norm,
            "features": pre.features, "dct_size": pre.dct_size or 4, "hog_cell": pre.hog_cell or 4,
            "accountant": pre.accountant,
            "n_train": n_train, "note": pre.note}


class LiveProgress:
    """An ``on_epoch`` callback that moves a progress bar and redraws the charts epoch by epoch."""

    def __init__(self, label: str) -> None:
        self.bar = st.progress(0.0, text=label)
        self.chart = st.empty()
        self.rows: list[dict] = []
        self.label = label

    def __call__(self, info) -> None:
        self.rows.append({k: v for k, v in info.items() if k != "epochs"})
        frac = min(1.0, info["epoch"] / max(1, info["epochs"]))
        eps = info.get("epsilon", math.inf)
        self.bar.progress(frac, text=f"{self.label}: epoch {info['epoch']}/{info['epochs']}, ε spent "
                                     f"{'∞' if not math.isfinite(eps) else f'{eps:.3f}'}")
        self.chart.plotly_chart(history_figure(pd.DataFrame(self.rows)), key=f"train.live.{len(self.rows)}")

    def done(self) -> None:
        self.bar.progress(1.0, text=f"{self.label}: done")
        self.chart.empty()


def run_key(dataset: Dataset, algorithm: str, params: dict, epsilon: float, delta: float, seed: int) -> tuple:
    """Hashable key of a run: the same inputs give the same picture."""
    return (dataset.name, dataset.n_samples, algorithm, tuple(sorted(params.items())), float(epsilon),
            float(delta), int(seed))


def train_with_baseline(dataset: Dataset, algorithm: str, params: dict, *, epsilon: float, delta: float, seed: int,
                        on_epoch=None) -> dict:
    """Run ``algorithm`` and the non-private baseline on the same split and model; numpy/pandas out."""
    split = train_test_split(dataset, seed=seed)
    spec = get_learner(algorithm)
    params = {k: v for k, v in params.items() if k in spec.params}
    res = run_learner(algorithm, split, epsilon=epsilon, delta=delta, seed=seed, params=params, on_epoch=on_epoch)
    base_params = {k: v for k, v in params.items()
                   if k in ("model", "hidden", "activation", "features", "dct_size", "hog_cell", "hog_block")}
    base = run_learner("non-private", split, epsilon=epsilon, delta=delta, seed=seed, params=base_params)
    out: dict[str, Any] = {
        "task": split.task,
        "metrics": dict(res.metrics),
        "baseline": dict(base.metrics),
        "epsilon": res.epsilon,
        "delta": res.delta,
        "noise_multiplier": res.noise_multiplier,
        "seconds": res.seconds,
        "history": res.history.copy(),
        "warnings": list(res.extras.get("warnings", [])),
        "extras": {k: v for k, v in res.extras.items() if isinstance(v, (int, float, str))},
        "n_train": int(split.X_train.shape[0]),
        "n_test": int(split.X_test.shape[0]),
    }
    if split.task == "classification":
        names = list(dataset.target_names) or [str(i) for i in range(split.n_classes)]
        out["confusion"] = pd.DataFrame(res.extras["confusion_matrix"], index=names, columns=names)
    return out


def history_figure(history: pd.DataFrame) -> go.Figure:
    """Loss, test metric and epsilon spent against the epoch, one panel each."""
    metric = "accuracy" if "accuracy" in history else "mse"
    fig = make_subplots(rows=1, cols=3, subplot_titles=("Test loss", f"Test {metric}", "ε spent"))
    x = history["epoch"]
    fig.add_trace(go.Scatter(x=x, y=history["loss"], mode="lines+markers", name="loss"), 1, 1)
    fig.add_trace(go.Scatter(x=x, y=history[metric], mode="lines+markers", name=metric), 1, 2)
    eps = history["epsilon"].replace([np.inf], np.nan)
    fig.add_trace(go.Scatter(x=x, y=eps, mode="lines+markers", name="ε"), 1, 3)
    for c in (1, 2, 3):
        fig.update_xaxes(title_text="epoch", row=1, col=c)
    fig.update_yaxes(title_text="cross-entropy / squared error", row=1, col=1)
    fig.update_yaxes(title_text="accuracy (fraction)" if metric == "accuracy" else "MSE (label units²)", row=1, col=2)
    fig.update_yaxes(title_text="ε", rangemode="tozero", row=1, col=3)
    fig.update_layout(height=330, showlegend=False, margin=dict(t=40, b=40))
    return fig


def confusion_figure(cm: pd.DataFrame) -> go.Figure:
    fig = go.Figure(go.Heatmap(z=cm.values, x=[str(c) for c in cm.columns], y=[str(i) for i in cm.index],
                               colorscale="Blues", text=cm.values, texttemplate="%{text}",
                               colorbar=dict(title="test rows")))
    fig.update_layout(height=420, xaxis_title="predicted class", yaxis_title="true class",
                      xaxis=dict(type="category"), yaxis=dict(type="category", autorange="reversed"),
                      margin=dict(t=30))
    return fig
