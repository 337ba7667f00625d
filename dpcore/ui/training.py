"""Streamlit side of the Train page: live progress, cached runs, figures.

Training results are cached in ``st.session_state`` under a key made of the
frozen inputs (dataset, algorithm, knobs, seed), not with ``st.cache_data``:
the run draws a live progress bar and charts through ``on_epoch`` while it
trains, and a ``st.cache_data`` function must not drive elements created outside
it. The results themselves are plain numpy/pandas, as for any cached call.
"""
from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from ..datasets import Dataset, train_test_split
from ..exceptions import DPValueError
from ..learners import get_learner, learner_names, run_learner, trivial_learner
from . import palette
from .common import format_epsilon, show_table, verdict_line
from .live import BAR_SECONDS, CHART_SECONDS, Every
from .uploads import UploadRef, data_key


def train_learners(task: str | None = None) -> list[str]:
    """The learners the Train page offers (for ``task``): every private network learner registered
    (``family="network"``), in the order they registered."""
    return learner_names(task, family="network", private=True)


#: History columns computed on the training rows: shown only in the diagnostics expander, never in the main table.
DIAGNOSTIC_COLUMNS = ("train_loss",)
#: What the diagnostics expander says for a learner that declares nothing more precise (``Wording.diagnostics``).
UNCOVERED_DIAGNOSTICS = {
    "title": "Non-private diagnostics (not covered by ε)", "column": "Training loss (private rows, not covered by ε)",
    "text": "Statistics of the private training rows, computed for display only: the ε above does not cover them, so "
            "a real release would not publish them."}


def knobs_of_group(spec, group: str | None, *, advanced: bool = False) -> list:
    """The knobs a page shows in one section: ``group`` (any when None), advanced or not."""
    return [k for k in spec.knobs if (group is None or k.group == group) and k.advanced == advanced
            and k.name != spec.direct_noise]  # that one is the page's "Set σ directly" box


def defaults_for(dataset: Dataset, algorithm: str = "dpsgd", test_size: float = 0.25) -> dict:
    """The learner's knob defaults on ``dataset`` (its preset included), the training rows and the split.

    Raises :class:`~dpcore.exceptions.DPValueError` with what to do when the dataset is too
    small to split into training and test rows.
    """
    # the stratified split's size does not depend on the seed, only on the class counts
    try:
        split = train_test_split(dataset, test_size=test_size, seed=0)
    except DPValueError as exc:
        reason = str(exc)
        raise DPValueError(f"{reason[:1].upper()}{reason[1:]}. This page trains on {1 - test_size:.0%} of the rows "
                           "and tests on the other "
                           f"{test_size:.0%} (at least one per class for classification): use a dataset with more "
                           "rows (a few dozen at the very least).") from exc
    return {"defaults": get_learner(algorithm).defaults(split), "n_train": int(split.X_train.shape[0]),
            "split": split}


class LiveProgress:
    """An ``on_epoch`` callback that moves a progress bar and redraws the charts epoch by epoch."""

    def __init__(self, label: str) -> None:
        self.bar = st.progress(0.0, text=label)
        self.chart = st.empty()
        self.rows: list[dict] = []
        self.label = label
        # building a figure per epoch for every visitor following the same run would compete with the training
        # itself for the interpreter: redraws are spaced, more widely while a class follows runs (dpcore.ui.live)
        self._bar_due, self._chart_due = Every(BAR_SECONDS), Every(CHART_SECONDS)

    def __call__(self, info) -> None:
        self.rows.append({k: v for k, v in info.items() if k != "epochs"})
        last = info["epoch"] >= info["epochs"]
        if self._bar_due(last=last):
            frac = min(1.0, info["epoch"] / max(1, info["epochs"]))
            eps = info.get("epsilon", math.inf)
            self.bar.progress(frac, text=f"{self.label}: epoch {info['epoch']}/{info['epochs']}, ε spent "
                                         f"{'∞ (not private)' if not math.isfinite(eps) else f'{eps:.3f}'}")
        if self._chart_due(last=last):
            self.chart.plotly_chart(shared_history_figure(pd.DataFrame(self.rows)),
                                    key=f"train.live.{len(self.rows)}")

    def done(self) -> None:
        self.bar.progress(1.0, text=f"{self.label}: done")
        self.chart.empty()


def _fingerprint(dataset: Dataset) -> "str | UploadRef":
    """What identifies the data: the registry name, or for an upload an :class:`~dpcore.ui.uploads.UploadRef` with the
    digest the sweeps' cache uses (its values, its declared or read bounds, its label range and classes), which keeps
    the run in this session (:func:`dpcore.ui.shared_call`).

    Two uploads with the same file name and row count but different values, or the same file with other declared
    bounds, must not share a result.
    """
    return data_key(dataset)


def run_key(dataset: Dataset, algorithm: str, params: dict, epsilon: float, delta: float, seed: int | None) -> tuple:
    """Hashable key of a run: the same inputs give the same picture (``seed=None``: secure noise, one release).

    With its noise set directly (DP-SGD's σ, the learner's ``direct_noise``) a learner ignores ``epsilon`` (it
    reports the ε spent instead), so ``epsilon`` is left out of the key.
    """
    eps = None if get_learner(algorithm).sets_noise_directly(params) else float(epsilon)
    return (_fingerprint(dataset), dataset.task, dataset.n_samples, algorithm, tuple(sorted(params.items())), eps,
            float(delta), "secure" if seed is None else int(seed))


def train_with_baseline(dataset: Dataset, algorithm: str, params: dict, *, epsilon: float, delta: float,
                        seed: int | None, on_epoch=None) -> dict:
    """Run ``algorithm`` and the non-private baseline on the same split and model; numpy/pandas out.

    For regression the mean predictor (the training rows' mean label for every test row, a
    non-private reference) is scored on the same split too, as ``out["trivial"]``. ``seed=None`` runs the private
    learner in secure mode (``run_learner(secure=True)``; the split and the references use seed 0).
    """
    secure = seed is None
    seed = 0 if secure else seed
    split = train_test_split(dataset, seed=seed)
    spec = get_learner(algorithm)
    params = {k: v for k, v in params.items() if k in spec.params}
    res = run_learner(algorithm, split, epsilon=epsilon if spec.private else None, delta=delta,
                      seed=None if secure else seed, secure=secure, params=params, on_epoch=on_epoch)
    base = run_learner(spec.baseline or "non-private", split, delta=delta, seed=seed,
                       params=spec.shared_params(params))
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
        "event": res.event,  # for the session's running total (dpcore.ui.ledger)
        "neighbouring": res.neighbouring,
        "secure": secure,
    }
    if split.task == "classification":
        names = list(dataset.target_names) or [str(i) for i in range(split.n_classes)]
        out["confusion"] = pd.DataFrame(res.extras["confusion_matrix"], index=names, columns=names)
        # chance level: always answering the training rows' most common class, scored on the same test rows
        out["chance"] = float(run_learner(trivial_learner(split.task), split, seed=seed).metrics["accuracy"])
    else:
        out["trivial"] = dict(run_learner(trivial_learner(split.task), split, seed=seed).metrics)
    return out


#: A private model this close to its non-private twin (in accuracy) is told that more ε buys little more.
CLOSE_GAP = 0.035


def noise_tile(out: dict) -> tuple[str, str, str]:
    """Label, value and help of the tile saying how much noise the run added: DP-SGD's noise multiplier σ, or, for a
    learner that adds its noise elsewhere, the scale it used (read from the run's extras)."""
    sigma, ex = out["noise_multiplier"], out.get("extras", {})
    if sigma is not None:
        return ("Noise multiplier σ", f"{sigma:.2f}",
                "The Gaussian noise added to each summed batch gradient, as a multiple of the clip norm.")
    if "noise_scale" in ex:
        return ("Laplace scale per answer", f"{ex['noise_scale']:.3g}",
                f"Each released probability vector gets Laplace noise of scale 2 / ε per answer (its L1 sensitivity "
                f"is 2), here with ε = {ex['epsilon_per_query']:.3g} per answer. The network itself has no noise.")
    if "label_noise_scale" in ex:
        return ("Laplace scale on each label", f"{ex['label_noise_scale']:.3g}",
                f"Each training label (one-hot, or the declared label range) gets Laplace noise of scale "
                f"{ex['sensitivity_l1']:g} / ε once; the features and the training are noise-free.")
    if "p_keep" in ex:
        return ("Label kept with probability", f"{ex['p_keep']:.3f}",
                "Randomized response: each training label is kept with this probability, otherwise replaced by "
                "one of the other classes at random; the features and the training are noise-free.")
    return "Noise multiplier σ", "—", "This run adds no Gaussian noise to gradients."


def show_headline(out: dict, algorithm: str) -> None:
    """The final metrics: private vs non-private (and, for regression, the mean predictor and R²), ε and the
    noise it added."""
    eps = out["epsilon"]
    wording = get_learner(algorithm).wording
    eps_help = f"δ = {out['delta']:g}. {wording.unit}"
    noise_label, noise_text, noise_help = noise_tile(out)
    if out["task"] == "classification":
        cols = st.columns(4)
        priv, base = out["metrics"]["accuracy"], out["baseline"]["accuracy"]
        cols[0].metric("Test accuracy (private)", f"{priv:.3f}", f"{priv - base:+.3f} vs non-private")
        cols[1].metric("Test accuracy (non-private)", f"{base:.3f}")
        cols[2].metric(wording.epsilon_label, format_epsilon(eps, 4), help=eps_help)
        cols[3].metric(noise_label, noise_text, help=noise_help)
        if out.get("chance") is not None:
            st.markdown(f"**Chance level** (always answering the most common class): **{out['chance']:.3f}**. "
                        "Accuracy is the fraction of test rows predicted correctly, on every page.")
        if (wording.near_baseline and eps is not None and math.isfinite(float(eps))
                and 0 <= base - priv <= CLOSE_GAP):
            gap = 100 * (base - priv)
            st.caption((f"Within {gap:.1f} points of the model trained without privacy: at this ε the noise costs "
                        f"little here, so a larger ε buys little more. {wording.near_baseline}") if gap >= 0.05 else
                       "As accurate as the model trained without privacy: at this ε the noise costs nothing "
                       "measurable on these test rows.")
        _epsilon_verdict(eps, wording.epsilon_label, wording.subject)
        return
    priv, base, triv = out["metrics"], out["baseline"], out["trivial"]
    r2_help = ("R² = 1 − MSE / variance of the test labels: 1 is a perfect fit, 0 is predicting the test rows' "
               "mean, below 0 is worse than that.")
    mean_help = ("Predicts the training rows' mean label for every test row. A non-private reference: it reads the "
                 "training labels without noise. A model that does not beat it has learned nothing useful.")
    top, bottom = st.columns(4), st.columns(4)
    top[0].metric("Test MSE (private)", f"{priv['mse']:.4g}", f"{priv['mse'] - base['mse']:+.4g} vs non-private",
                  delta_color="inverse", help="Mean squared error on the test rows, in label units².")
    top[1].metric("Test MSE (non-private)", f"{base['mse']:.4g}")
    top[2].metric("Test MSE (mean predictor)", f"{triv['mse']:.4g}", help=mean_help)
    top[3].metric(wording.epsilon_label, format_epsilon(eps, 4), help=eps_help)
    bottom[0].metric("Test R² (private)", f"{priv['r2']:.3f}", help=r2_help)
    bottom[1].metric("Test R² (non-private)", f"{base['r2']:.3f}", help=r2_help)
    bottom[2].metric("Test R² (mean predictor)", f"{triv['r2']:.3f}", help=r2_help)
    bottom[3].metric(noise_label, noise_text, help=noise_help)
    st.caption("Mean predictor: the training rows' mean label for every test row, on the same split. A non-private "
               "reference (it reads the training labels without noise), not a released model.")
    _epsilon_verdict(eps, wording.epsilon_label, wording.subject)


def _epsilon_verdict(eps, label: str, subject: str | None = None) -> None:
    """The verdict band of the ε this run spent (nothing to judge when it was trained without privacy); ``subject``:
    what it protects when not a whole record."""
    if eps is not None and math.isfinite(float(eps)):
        verdict_line(float(eps), what=label, subject=subject)
    else:
        verdict_line(math.inf, what=label, compare=False)


def worse_than_mean_note(out: dict) -> str | None:
    """One line when a private regression model does worse than predicting the training mean, else None."""
    if out["task"] != "regression" or out["metrics"]["mse"] <= out["trivial"]["mse"]:
        return None
    return (f"The private model is worse than predicting the training mean (Test MSE {out['metrics']['mse']:.4g} vs "
            f"{out['trivial']['mse']:.4g}): at this ε, with {out['n_train']} training rows, the privacy noise "
            "outweighs what the model learns. A larger ε or more data lets it beat the mean predictor.")


def budget_text(out: dict, algorithm: str) -> str:
    """How the run's ε adds up, in the learner's words (``Wording.budget``: output perturbation's m answers, whose
    training history has no finite ε to draw), or "" for a learner that declares none."""
    text = get_learner(algorithm).wording.budget
    return text.format(**{**out["extras"], "epsilon": out["epsilon"]}) if text else ""


def history_labels(task: str) -> dict:
    """Table headers that say the units of each column."""
    if task == "classification":
        return {"loss": "Test loss (cross-entropy)"}
    return {"loss": "Test loss (MSE, labels scaled to [0, 1])", "mse": "Test MSE (label units²)"}


def history_caption(task: str) -> str | None:
    if task == "classification":
        return None
    return ("Units: the test loss is the mean squared error on labels scaled to [0, 1] by the label range (what the "
            "network is trained on); the test MSE is the same error in the original label units², so it equals the "
            "loss × (label range)².")


def split_history(history: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(main table, diagnostics): the training-row columns go to the diagnostics, with the epoch."""
    diag = [c for c in DIAGNOSTIC_COLUMNS if c in history]
    main = history.drop(columns=diag)
    return main, history[["epoch", *diag]] if diag else history.iloc[:, :0]


def show_diagnostics(out: dict, algorithm: str, diagnostics: pd.DataFrame) -> None:
    """The training-row statistics, in an expander collapsed by default and labelled by what covers them."""
    spec = get_learner(algorithm).wording.diagnostics or UNCOVERED_DIAGNOSTICS
    with st.expander(spec["title"], expanded=False):
        st.caption(spec["text"] + ("" if out["task"] == "classification" else
                                   " For regression the loss is on labels scaled to [0, 1]."))
        if "accuracy_without_noise" in out["extras"]:
            st.markdown(f"Test accuracy of the network before the noise on its outputs: "
                        f"**{out['extras']['accuracy_without_noise']:.3f}**.")
        if diagnostics.shape[1] > 1:
            show_table(diagnostics, key="train.diagnostics_table", labels={"train_loss": spec["column"]})


def reference_of(out: dict) -> float | None:
    """The non-private model's final score on the metric the history chart's second panel draws (test accuracy, or
    test MSE for regression): the line the private run is read against."""
    metric = "accuracy" if out.get("task") == "classification" else "mse"
    value = out.get("baseline", {}).get(metric)
    return None if value is None or not math.isfinite(float(value)) else float(value)


def shared_history_figure(history: pd.DataFrame, chance: float | None = None,
                          reference: float | None = None) -> go.Figure:
    """:func:`history_figure`, built once per history for the whole server and handed to every visitor showing it.

    A class following one shared run shows the same history in every session, live and at the end; building the
    Plotly figure (its subplots and validators) took about a fifth of the interpreter while twenty visitors did
    it each (py-spy on ``bench/classroom_load.py``), time the run and the other pages wait for. The figure is read,
    never changed, by ``st.plotly_chart`` (it copies it to a dict), so one object serves every session.
    """
    digest = hashlib.sha256(pd.util.hash_pandas_object(history, index=True).to_numpy().tobytes()
                            + str(list(history.columns)).encode()).hexdigest()
    return _history_figure_once(digest, history, None if chance is None else float(chance),
                                None if reference is None else float(reference))


@st.cache_resource(show_spinner=False, max_entries=64)
def _history_figure_once(digest: str, _history: pd.DataFrame, chance: float | None,
                         reference: float | None) -> go.Figure:
    return history_figure(_history, chance=chance, reference=reference)


def history_figure(history: pd.DataFrame, chance: float | None = None, reference: float | None = None) -> go.Figure:
    """Test loss, test metric and epsilon spent against the epoch, one panel each.

    ``reference``: the non-private model's final score on the same metric, drawn across the metric's panel as a
    dashed line, so the cost of privacy is read off the headline chart itself. The ε panel is left out when no epoch
    has a finite ε (a network trained without privacy): an empty chart says nothing; the page states that budget in
    words.
    """
    classification = "accuracy" in history
    metric = "accuracy" if classification else "mse"
    eps = history["epsilon"].replace([np.inf, -np.inf], np.nan) if "epsilon" in history else pd.Series(dtype=float)
    with_eps = bool(eps.notna().any())
    # short panel titles (the axis titles carry the detail): long ones run into each other on a phone
    titles = ["Test loss", "Test accuracy" if classification else "Test MSE"] + (["ε spent"] if with_eps else [])
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.09)
    x = history["epoch"]
    fig.add_trace(go.Scatter(x=x, y=history["loss"], mode="lines+markers", name="loss",
                             **palette.line_and_marker(0)), 1, 1)
    fig.add_trace(go.Scatter(x=x, y=history[metric], mode="lines+markers", name=metric,
                             **palette.line_and_marker(2)), 1, 2)
    if with_eps:
        fig.add_trace(go.Scatter(x=x, y=eps, mode="lines+markers", name="ε", **palette.line_and_marker(1)), 1, 3)
        fig.update_yaxes(title_text="ε", rangemode="tozero", row=1, col=3)
    if reference is not None:
        fig.add_hline(y=reference, line=dict(color=palette.BLACK, dash="dash"), row=1, col=2,
                      annotation_text=f"non-private {reference:.3g}", annotation_position="top left")
    if classification and chance is not None:
        fig.add_hline(y=chance, line=dict(color=palette.GREY, dash="dot"), row=1, col=2,
                      annotation_text=f"chance {chance:.2f}", annotation_position="bottom right")
    for c in range(1, len(titles) + 1):
        fig.update_xaxes(title_text="epoch", row=1, col=c)
    fig.update_yaxes(title_text="cross-entropy" if classification else "MSE, labels scaled to [0, 1]", row=1, col=1)
    fig.update_yaxes(title_text="accuracy (fraction)" if classification else "MSE (label units²)", row=1, col=2)
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
