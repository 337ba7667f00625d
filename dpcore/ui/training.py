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
import warnings
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ..datasets import Dataset, train_test_split
from ..exceptions import DPValueError, PrivacyLeakWarning
from ..learners import get_learner, learner_names, run_learner, trivial_learner
from ..runtime.thread_warnings import caught as caught_warnings
from ..teaching.verdict import round_epsilon
from . import palette, vega
from .common import format_epsilon, format_noise, show_plain_table, shown_difference, verdict_line
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
    """An ``on_epoch`` callback that moves a progress bar and redraws the charts epoch by epoch.

    ``container``: where the bar and the live chart go, the page by default. Presenting, the page passes the stage's
    chart column (:func:`dpcore.ui.present.headline_area`): below the stage they ran a screen under a 720-pixel
    projector, where the lesson's Train stop points at the ε spent growing epoch by epoch. There the bar is cleared
    when done, as the finished chart takes the column (a "done" bar above it pushed the chart's foot off the screen).
    """

    def __init__(self, label: str, container=None, *, shared: bool = True) -> None:
        where = st if container is None else container
        self.shared = shared  # False on a visitor's file: its charts are built in this session, kept by no cache
        self._stage = where is not st
        self.bar = where.progress(0.0, text=label)
        self.chart = where.empty()
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
                                         f"{format_epsilon(eps, 4)}")
        # the last epoch's chart is not drawn: the finished run's history chart replaces the live one moments later
        # (done(), then the page's chart), and drawing it would cost the server a figure for each visitor following
        # the run, and each of their browsers a chart, at the moment they are all finishing the page
        if not last and self._chart_due():
            vega.show(shared_history_figure(pd.DataFrame(self.rows), shared=self.shared), self.chart,
                      key=f"train.live.{len(self.rows)}", alt_text=HISTORY_ALT)

    def done(self) -> None:
        if self._stage:
            self.bar.empty()
        else:
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
    with caught_warnings() as caught:  # this run's own (a server runs others in other threads), said again below
        res = run_learner(algorithm, split, epsilon=spec.epsilon_to_aim_at(epsilon, params), delta=delta,
                          seed=None if secure else seed, secure=secure, params=params, on_epoch=on_epoch)
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    # a run that leaked besides its ε (bounds or classes read from an upload's rows, features standardised with the
    # private rows' statistics) has no guarantee: the session's total counts it as none (dpcore.ui.ledger.release_of)
    leaks = spec.private and (bool(getattr(dataset, "inferred_bounds", ())) or bool(getattr(
        dataset, "inferred_classes", ())) or any(
        isinstance(w.category, type) and issubclass(w.category, PrivacyLeakWarning) for w in caught))
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
        "unit": res.unit,  # what of each record its ε protects: the whole record, or its label only
        "leaks_privacy": leaks,
        "secure": secure,
        # the ε the history's last panel climbs to (its line "budget ε = 1"), where the run was held to one
        "budget": held_budget(epsilon if spec.private and not spec.sets_noise_directly(params) else None,
                              res.epsilon),
    }
    if split.task == "classification":
        names = list(dataset.target_names) or [str(i) for i in range(split.n_classes)]
        out["confusion"] = pd.DataFrame(res.extras["confusion_matrix"], index=names, columns=names)
        out["n_classes"] = int(split.n_classes)
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
        # rounded up (3 figures), as `python -m dpcore noise` writes a sigma: set directly with "Set σ directly", the
        # shown value never adds less noise than this run did (1.2345 reads 1.24; :.2f wrote 1.23)
        return ("Noise multiplier σ", format_noise(sigma),
                "The Gaussian noise added to each summed batch gradient, as a multiple of the clip norm.")
    if "noise_scale" in ex:
        return ("Laplace scale per answer", format_noise(ex["noise_scale"]),
                f"Each released probability vector gets Laplace noise of scale 2 / ε per answer (its L1 sensitivity "
                f"is 2), here with ε = {format_epsilon(ex['epsilon_per_query'])} per answer. The network itself has "
                "no noise.")
    if "label_noise_scale" in ex:
        return ("Laplace scale on each label", format_noise(ex["label_noise_scale"]),
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
        line = imbalance_line(out)
        key = headline_metric(out)
        name = "Balanced accuracy" if key == "balanced_accuracy" else "Test accuracy"
        priv, base = out["metrics"][key], out["baseline"][key]
        cols[0].metric(f"{name} (private)", f"{priv:.3f}", f"{shown_difference(priv, base):+.3f} vs non-private")
        cols[1].metric(f"{name} (non-private)", f"{base:.3f}")
        cols[2].metric(wording.epsilon_label, format_epsilon(eps, 4), help=eps_help)
        cols[3].metric(noise_label, noise_text, help=noise_help)
        if out.get("chance") is not None:
            st.markdown(chance_line(out))
        measure = ""
        if line:
            st.markdown(line)
            measure = " (balanced accuracy)"
            # "within a point of the model trained without privacy" is then read in balanced accuracy: a model that
            # answers the common class for every row is within a point in accuracy and learnt nothing
            priv, base = out["metrics"]["balanced_accuracy"], out["baseline"].get("balanced_accuracy", math.inf)
        nothing = learnt_nothing_note(out) or twin_learnt_nothing_note(out)
        if nothing:
            st.caption(nothing)
        elif (wording.near_baseline and eps is not None and math.isfinite(float(eps))
                and 0 <= -shown_difference(priv, base) <= CLOSE_GAP):
            gap = -100 * shown_difference(priv, base)  # the points the tiles above show
            st.caption((f"Within {gap:.1f} points{measure} of the model trained without privacy: at this ε the noise "
                        "costs "
                        f"little here, so a larger ε buys little more. {wording.near_baseline}") if gap >= 0.05 else
                       "As accurate as the model trained without privacy: at this ε the noise costs nothing "
                       "measurable on these test rows.")
        _epsilon_verdict(eps, wording.epsilon_label, wording.subject, out.get("delta", 0.0))
        return
    priv, base, triv = out["metrics"], out["baseline"], out["trivial"]
    r2_help = ("R² = 1 − MSE / variance of the test labels: 1 is a perfect fit, 0 is predicting the test rows' "
               "mean, below 0 is worse than that.")
    mean_help = ("Predicts the training rows' mean label for every test row. A non-private reference: it reads the "
                 "training labels without noise. A model that does not beat it has learned nothing useful.")
    top, bottom = st.columns(4), st.columns(4)
    shown = {k: float(f"{m['mse']:.4g}") for k, m in (("priv", priv), ("base", base))}  # as the two tiles read
    top[0].metric("Test MSE (private)", f"{priv['mse']:.4g}", f"{shown['priv'] - shown['base']:+.4g} vs non-private",
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
    _epsilon_verdict(eps, wording.epsilon_label, wording.subject, out.get("delta", 0.0))


def headline_metric(out: dict) -> str:
    """The metric a classification run's tiles and history chart read: ``"balanced_accuracy"`` where one class is
    most test rows (:func:`imbalance_line` speaks) and both models have it, else ``"accuracy"``.

    Answering the common class for every row scores its share in accuracy, and with declared class shares a private
    model answering the rare classes less often than its non-private twin scored +0.16 above it in accuracy while
    finding fewer of them: the tiles, the chart's panel and its lines must all be read in one metric.
    """
    if imbalance_line(out) and "balanced_accuracy" in out.get("baseline", {}):
        return "balanced_accuracy"
    return "accuracy"


def learnt_nothing_note(out: dict) -> str | None:
    """Where the tiles read balanced accuracy and the private model's is no better than answering one class (1/k),
    what to say instead of "within 2.6 points of the model trained without privacy: a larger ε buys little more"
    (which sat under a warning that said "try a larger epsilon", both models near 0.5 on a 90/10 label); with no
    class shares declared, where to declare them. None elsewhere.

    >>> out = {"chance": 0.9, "n_classes": 2, "extras": {}, "metrics": {"balanced_accuracy": 0.5,
    ...        "rare_class_recall": 0.0}, "baseline": {"balanced_accuracy": 0.526}}
    >>> learnt_nothing_note(out)[:58]
    'The private model finds each class no better than answerin'
    >>> learnt_nothing_note({**out, "metrics": {"balanced_accuracy": 0.6, "rare_class_recall": 0.3}}) is None
    True
    """
    k = out.get("n_classes")
    if headline_metric(out) != "balanced_accuracy" or not k or out["metrics"]["balanced_accuracy"] > 1 / k + 1e-9:
        return None
    said = (f"The private model finds each class no better than answering one class (balanced accuracy "
            f"{out['metrics']['balanced_accuracy']:.3f}, against {1 / k:.3f}), so how close it comes to the model "
            "trained without privacy says nothing about what ε costs.")
    if out.get("extras", {}).get("decision_rule"):  # shares declared (followed, or said why not)
        return said
    return said + (" On a label where one class is most rows, a model that gives class probabilities (DP-SGD) "
                   "often answers that class for every row: declare each class's share from a published rate in "
                   "the *Declared class shares* box under the upload, and it answers the class most likely "
                   "relative to its share, at no privacy cost.")


def twin_learnt_nothing_note(out: dict) -> str | None:
    """Where the model trained without privacy is itself no better than always answering the most common class (in
    the metric the tiles read), what to say instead of "within 1.0 points of the model trained without privacy: a
    larger ε buys little more", which stood under the warnings that both models are no better than that, the private
    one's saying "try a larger epsilon"; None elsewhere.

    >>> out = {"chance": 0.51, "n_classes": 2, "metrics": {"accuracy": 0.47}, "baseline": {"accuracy": 0.48}}
    >>> twin_learnt_nothing_note(out)[:62]
    'The model trained without privacy does no better than always a'
    >>> twin_learnt_nothing_note({**out, "baseline": {"accuracy": 0.9}}) is None
    True
    """
    key = headline_metric(out)
    chance = (1 / int(out["n_classes"]) if key == "balanced_accuracy" and out.get("n_classes")
              else out.get("chance"))
    base = out.get("baseline", {}).get(key)
    if chance is None or base is None or base > chance + 1e-9:
        return None
    return (f"The model trained without privacy does no better than always answering the most common class either "
            f"({base:.3f} against {chance:.3f}): it learnt nothing from these features that the noise could cost, so "
            "how close the private model comes to it says nothing about what ε costs. Try other features or "
            "settings, or more rows, before judging ε.")


def chance_line(out: dict) -> str:
    """The chance level under the tiles, in the metric they read (:func:`headline_metric`).

    >>> chance_line({"chance": 0.9, "n_classes": 3, "metrics": {"balanced_accuracy": 0.5, "rare_class_recall": 0.2},
    ...              "baseline": {"balanced_accuracy": 0.7}})[57:114]
    ': **0.333** in balanced accuracy (1/3), 0.900 in accuracy'
    """
    chance = out["chance"]
    if headline_metric(out) == "balanced_accuracy" and out.get("n_classes"):
        k = int(out["n_classes"])
        return (f"**Chance level** (always answering the most common class): **{1 / k:.3f}** in balanced accuracy "
                f"(1/{k}), {chance:.3f} in accuracy. Accuracy is the fraction of test rows predicted correctly, on "
                "every page; here the tiles and the history chart read balanced accuracy.")
    return (f"**Chance level** (always answering the most common class): **{chance:.3f}**. "
            "Accuracy is the fraction of test rows predicted correctly, on every page.")


def imbalance_line(out: dict) -> str | None:
    """Where always answering the most common class scores at least :data:`~dpcore.decision.advisor.COMMON_CLASS`
    (a 95/5 label), what accuracy hides: the private and the non-private model's balanced accuracy and the share of the
    rarest class's test rows each finds; None elsewhere, or when the run has no such metrics.

    >>> imbalance_line({"chance": 0.9, "metrics": {"balanced_accuracy": 0.55, "rare_class_recall": 0.1},
    ...                 "baseline": {"balanced_accuracy": 0.8, "rare_class_recall": 0.62}})[-68:]
    'Rarest class:** 10 % of its test rows found (without privacy: 62 %).'
    """
    from ..decision.advisor import COMMON_CLASS

    chance, priv, base = out.get("chance"), out.get("metrics", {}), out.get("baseline", {})
    if chance is None or chance < COMMON_CLASS or "balanced_accuracy" not in priv or "rare_class_recall" not in priv:
        return None
    against = (f" against {base['balanced_accuracy']:.3f} without privacy" if "balanced_accuracy" in base else "")
    found = (f" (without privacy: {100 * base['rare_class_recall']:.0f} %)" if "rare_class_recall" in base else "")
    return (f"One class is {100 * chance:.0f} % of the test rows, so accuracy hides how the others are found. "
            f"**Balanced accuracy** (each class's share found right, averaged; answering one class scores 1/k): "
            f"**{priv['balanced_accuracy']:.3f}** private{against}. **Rarest class:** "
            f"{100 * priv['rare_class_recall']:.0f} % of its test rows found{found}.")


def result_beside_chart(out: dict, algorithm: str) -> str:
    """The run's result in one line, for under the Train button when presenting: on the stage the metrics come a
    screen below the history chart, and its accuracy panel, drawn from chance to 1, puts a private 0.910 and a
    non-private 0.962 a few pixels apart, while the lesson's Train stop asks what those few points bought."""
    eps = format_epsilon(out["epsilon"], 4)
    spent = get_learner(algorithm).wording.epsilon_label
    if out["task"] == "classification":
        priv, base = out["metrics"]["accuracy"], out["baseline"]["accuracy"]
        return (f"**Test accuracy {priv:.3f}** private, against {base:.3f} without privacy "
                f"({points_apart(shown_difference(priv, base))}); {spent}: {eps}.")
    priv, base = out["metrics"]["mse"], out["baseline"]["mse"]
    return (f"**Test MSE {priv:.4g}** private, against {base:.4g} without privacy (lower is better); {spent}: "
            f"{eps}.")


def points_apart(difference: float) -> str:
    """An accuracy difference (fractions) in the words the lesson's room uses, percentage points: the Train stop asks
    what "a few points" of accuracy bought, and the page wrote them as -0.051. Callers pass the difference of the
    numbers shown beside it (:func:`~dpcore.ui.common.shown_difference`): 0.910 against 0.962 is 5.2 points.

    >>> points_apart(-0.052), points_apart(0.003), points_apart(-0.0004)
    ('5.2 points lower', '0.3 points higher', 'level to 0.1 point')
    """
    points = round(100 * difference, 1)
    if points == 0:
        return "level to 0.1 point"
    return f"{abs(points):.1f} points {'lower' if points < 0 else 'higher'}"


def _epsilon_verdict(eps, label: str, subject: str | None = None, delta: float = 0.0) -> None:
    """The verdict band of the ε this run spent (nothing to judge when it was trained without privacy); ``subject``:
    what it protects when not a whole record; ``delta``: the run's δ (0 for a pure ε guarantee), which the odds
    bound then carries as an additive δ."""
    if eps is not None and math.isfinite(float(eps)):
        verdict_line(float(eps), what=label, subject=subject, delta=float(delta or 0.0))
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
    values = {**out["extras"], "epsilon": out["epsilon"]}
    # the ε it writes (``:g``, 6 figures) rounded up first, as every ε spent is shown
    values = {k: round_epsilon(v, 6) if "epsilon" in k and isinstance(v, float) else v for k, v in values.items()}
    return text.format(**values) if text else ""


def history_labels(task: str) -> dict:
    """Table headers that say the units of each column."""
    if task == "classification":
        return {"loss": "Test loss (cross-entropy)", "balanced_accuracy": "Test balanced accuracy"}
    return {"loss": "Test loss (MSE, labels scaled to [0, 1])", "mse": "Test MSE (label units²)"}


def history_caption(task: str) -> str | None:
    """What the history table's columns measure, where a header alone does not say it."""
    if task == "classification":  # the header "Test balanced accuracy" was left for a student to guess
        return ("Test balanced accuracy: for each class, the share of its test rows predicted right, averaged over "
                "the classes. It equals the test accuracy when every class is equally common, and falls below it "
                "when the model neglects a rare class.")
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
            show_plain_table(diagnostics, labels={"train_loss": spec["column"]})


def reference_of(out: dict) -> float | None:
    """The non-private model's final score on the metric the history chart's second panel draws (test accuracy or
    balanced accuracy, :func:`headline_metric`; test MSE for regression): the line the private run is read
    against."""
    metric = headline_metric(out) if out.get("task") == "classification" else "mse"
    value = out.get("baseline", {}).get(metric)
    return None if value is None or not math.isfinite(float(value)) else float(value)


#: what a screen reader announces for the history chart
HISTORY_ALT = "Training history: the test loss, the test score and the ε spent, epoch by epoch, one panel each."
#: what a screen reader announces for the confusion matrix
CONFUSION_ALT = "Confusion matrix: how many test rows of each true class the private model assigned to each class."
#: the height of each panel of the history chart, in pixels (three panels one above the other, about 330 in all)
PANEL_HEIGHT = 90
#: the panels' y axes' minimum width in pixels, so that their plots line up under one another
_Y_AXIS_PX = 52


def held_budget(asked: float | None, spent: float) -> float | None:
    """The ε budget a finished run was held to, for the line its ε panel climbs to: the ε asked for, when the whole
    run spent no more than it (DP-SGD calibrates its noise to it; label DP spends it once). None when no ε was asked
    (σ set directly, a non-private learner), or when the run spent more than the ε asked for, which was then one
    part's (output perturbation's ε per released answer: m answers spend m·ε), not the run's.

    >>> held_budget(1.0, 0.9999999), held_budget(1.0, 250.0), held_budget(None, 0.7)
    (1.0, None, None)
    """
    if asked is None or not math.isfinite(asked) or not math.isfinite(spent):
        return None
    return float(asked) if spent <= asked * (1 + 1e-6) else None


def shared_history_figure(history: pd.DataFrame, chance: float | None = None,
                          reference: float | None = None, budget: float | None = None,
                          balanced: bool = False, final: float | None = None, *, shared: bool = True) -> dict:
    """:func:`history_figure`'s Vega-Lite spec, built once per history for the whole server and handed to every
    visitor showing it; ``shared=False`` (a run on a visitor's file): built here, kept by no cache of the server,
    which would hold the file's results after its session has ended.

    A class following one shared run shows the same history in every session, live and at the end; building a
    figure (the chart and the validation of its spec) took about a fifth of the interpreter while twenty visitors did
    it each (py-spy on ``bench/classroom_load.py``, with Plotly), time the run and the other pages wait for. The spec
    is read, never changed, by :func:`dpcore.ui.vega.show` (it draws a copy with the page's text sizes; Streamlit
    copies it again before moving its data out), so one object serves every session.
    """
    if not shared:
        return vega.spec(history_figure(history, chance=chance, reference=reference, budget=budget, balanced=balanced,
                                        final=final))
    return _history_figure_once(_frame_digest(history), history, None if chance is None else float(chance),
                                None if reference is None else float(reference),
                                None if budget is None else float(budget), bool(balanced),
                                None if final is None else float(final))


def _frame_digest(frame: pd.DataFrame) -> str:
    """A key for a figure of ``frame``: its values, index and column names. Only a session holding an equal frame (the
    same run, or one that scored exactly the same) draws the spec built under it."""
    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes()
                          + str(list(frame.columns)).encode()).hexdigest()


@st.cache_resource(show_spinner=False, max_entries=64)
def _history_figure_once(digest: str, _history: pd.DataFrame, chance: float | None,
                         reference: float | None, budget: float | None, balanced: bool = False,
                         final: float | None = None) -> dict:
    return vega.spec(history_figure(_history, chance=chance, reference=reference, budget=budget, balanced=balanced,
                                    final=final))


def show_history_chart(out: dict, container=None, *, shared: bool = True) -> None:
    """The finished run's history chart (the server's one spec for it; ``shared=False`` on a visitor's file: this
    session's own), in ``container`` (the page by default), in the metric the tiles read (:func:`headline_metric`): in
    balanced accuracy its chance line is 1/k."""
    balanced = headline_metric(out) == "balanced_accuracy" and "balanced_accuracy" in out["history"]
    if balanced:  # answering one class for every row scores 1/k in balanced accuracy
        chance = 1 / out["n_classes"] if out.get("n_classes") else None
    else:
        chance = out.get("chance")
    # the private model's score as its tile writes it, named at the curve's end beside the non-private line's name
    final = out.get("metrics", {}).get(headline_metric(out)) if out.get("task") == "classification" else None
    final = float(final) if final is not None and math.isfinite(float(final)) else None
    vega.show(shared_history_figure(out["history"], chance=chance, reference=reference_of(out),
                                    budget=out.get("budget"), balanced=balanced, final=final, shared=shared),
              container, key="train.history_chart", alt_text=HISTORY_ALT)
    if "accuracy_without_noise" in out.get("extras", {}) and final is not None:
        # output perturbation's curve is its network before the noise on its answers (0.96 beside a tile of 0.17)
        (container or st).caption(
            f"These curves are the network before any noise: it trains without privacy and is never released. What "
            f"is released is each of its answers with Laplace noise added (Dwork et al. 2006), and those answers "
            f"score **{final:.3f}**, the private tile above; the dashed line is a network trained without privacy.")


def show_confusion_chart(cm: pd.DataFrame, *, shared: bool = True) -> None:
    """The private model's confusion matrix on the test rows, its spec built once per matrix for the whole server
    (as the history chart's): building and validating it was half of each rerun of the finished Train page (35 of 70
    ms, py-spy), which every session following a shared run pays as the run ends. ``shared=False`` (a run on a
    visitor's file, whose classes are values of the data): built here, kept by no cache of the server."""
    spec = _confusion_figure_once(_frame_digest(cm), cm) if shared else vega.spec(confusion_figure(cm))
    vega.show(spec, key="train.confusion_chart", alt_text=CONFUSION_ALT)


@st.cache_resource(show_spinner=False, max_entries=64)
def _confusion_figure_once(digest: str, _cm: pd.DataFrame) -> dict:
    return vega.spec(confusion_figure(_cm))


def _history_panel(data: pd.DataFrame, column: str, *, title: str, axis_title: str, style: int, last: bool,
                   zero: bool = False, extra: tuple = (), domain: tuple[float, float] | None = None
                   ) -> alt.LayerChart:
    """One panel of the history chart: ``column`` against the epoch, a line with markers in the ``style``-th series'
    colour, dash and marker (:func:`dpcore.ui.palette.series_style`), the epoch named under the ``last`` panel only
    (they share it), with ``extra`` layers (reference lines) on top; ``domain``: its y axis's, where it is set."""
    look = palette.series_style(style)
    # the panels share the epoch axis: its numbers under the last panel only (under every panel they cost the stack
    # two rows of numbers, and presenting, the ε panel's axis fell below a 720-pixel projector)
    x = alt.X("epoch:Q", title="epoch" if last else None, scale=alt.Scale(nice=False, zero=False),
              axis=alt.Axis(tickMinStep=1, format="d", labels=last))
    value = alt.Tooltip(f"{column}:Q", title=title, format=".4g")
    if f"{column}_shown" in data:  # the ε spent as the pages write it: rounded up (a privacy number fails closed)
        value = alt.Tooltip(f"{column}_shown:N", title=title)
    line = alt.Chart(data).mark_line(
        color=look["color"], strokeDash=vega.DASHES[look["dash"]], strokeWidth=2.5,
        point=alt.OverlayMarkDef(filled=True, color=look["color"], shape=vega.SHAPES[look["symbol"]], size=50),
    ).encode(x=x, y=alt.Y(f"{column}:Q", title=axis_title,
                          scale=alt.Scale(zero=zero) if domain is None else alt.Scale(domain=list(domain), nice=False),
                          axis=alt.Axis(minExtent=_Y_AXIS_PX, tickCount=4)),
             tooltip=[alt.Tooltip("epoch:Q", title="epoch"), value])
    return alt.layer(line, *extra).properties(title=alt.TitleParams(title, anchor="start"), height=PANEL_HEIGHT)


#: a run ends near chance when its last score is within this share of the panel's range above the chance line
_NEAR_CHANCE = 0.25
#: the room under the chance line for its name, as a share of the panel's range: a 15-pixel label (presenting) and its
#: offset in the 90-pixel panel
_ROOM_UNDER_CHANCE = 0.3


def _ends_near_chance(scores: pd.Series, chance: float, reference: float | None) -> bool:
    """Whether the metric's last score lies within :data:`_NEAR_CHANCE` of the panel's range above ``chance`` (the
    name of the chance line, at its right end above it, would cover the curve's last points).

    >>> s = pd.Series([0.52, 0.91])
    >>> _ends_near_chance(s, 0.1, 0.962), _ends_near_chance(pd.Series([0.2, 0.28]), 0.1, 0.962)
    (False, True)
    """
    scores = scores.dropna()
    if scores.empty:
        return False
    seen = [*scores, chance, *([reference] if reference is not None else [])]
    span = max(max(seen), 1.0) - min(seen)
    return span > 0 and float(scores.iloc[-1]) - chance < _NEAR_CHANCE * span


def history_figure(history: pd.DataFrame, chance: float | None = None,
                   reference: float | None = None, budget: float | None = None,
                   balanced: bool = False, final: float | None = None) -> alt.VConcatChart:
    """Test loss, test metric and epsilon spent against the epoch, one panel each, one above the other (Vega-Lite:
    Streamlit stretches the panels of a vertical stack to the page's width; side by side they would keep a fixed
    width and overflow a phone).

    ``reference``: the non-private model's final score on the same metric, drawn across the metric's panel as a
    dashed line, so the cost of privacy is read off the headline chart itself. The ε panel is left out when no epoch
    has a finite ε (a network trained without privacy): an empty chart says nothing; the page states that budget in
    words. ``budget``: the ε the run was held to (:func:`held_budget`), drawn across the ε panel as a dotted line
    named "budget ε = 1", so the ε spent is seen climbing to it (the axis reaches it too: its numbers stopped at 0.8
    under a run that ends at 1). ``balanced``: the metric panel draws the history's ``balanced_accuracy`` (the Train
    page's tiles read it where one class is most rows), so ``chance`` and ``reference`` are given in it too.
    ``final``: the private model's score as the page's tile writes it, named at the curve's last point ("private
    0.910") where that point reads the same: the curve had no name, and at the lesson's ε it ran a few pixels under
    the named non-private line.
    """
    classification = "accuracy" in history
    balanced = balanced and classification and "balanced_accuracy" in history
    metric = "balanced_accuracy" if balanced else "accuracy" if classification else "mse"
    eps = history["epsilon"].replace([np.inf, -np.inf], np.nan) if "epsilon" in history else pd.Series(dtype=float)
    with_eps = bool(eps.notna().any())
    data = pd.DataFrame({"epoch": history["epoch"], "loss": history["loss"], metric: history[metric]})
    if with_eps:
        data["epsilon"] = eps
        data["epsilon_shown"] = eps.map(lambda e: format_epsilon(e, 4))  # its hover text, rounded up
    lines = []
    if reference is not None:
        lines.append(vega.marked_line(reference, f"non-private {reference:.3g}", palette.BLACK, "dash", below=False,
                                      left=True))
    domain = None
    if classification and chance is not None:
        # named above its line at its right end (under it, the name met the epoch axis's numbers), unless the run
        # ends near chance (a small ε): there the name sat on the curve's last points, so it goes under the line, in
        # room the axis leaves below it
        below = _ends_near_chance(data[metric], chance, reference)
        if below:
            seen = [*data[metric].dropna(), chance, *([reference] if reference is not None else [])]
            low, high = min(seen), max(max(seen), 1.0)
            domain = (low - _ROOM_UNDER_CHANCE * (high - low), high)
        lines.append(vega.marked_line(chance, f"chance {chance:.2f}", palette.GREY, "dot", below=below))
    last = float(data[metric].iloc[-1]) if len(data) else math.nan
    # only where the curve is the private model's: output perturbation's curve is its network before the noise on
    # its answers, which scored 0.96 where its released answers scored 0.17
    if classification and final is not None and f"{last:.3f}" == f"{final:.3f}":
        # under the curve's end, where it runs below the non-private line; above it where the run ends near chance
        # (the chance line and its name are under it there)
        above = chance is not None and _ends_near_chance(data[metric], chance, reference)
        end = pd.DataFrame({"at_epoch": [data["epoch"].iloc[-1]], "y": [data[metric].iloc[-1]],
                            "text": [f"private {final:.3f}"]})
        lines.append(alt.Chart(end).mark_text(align="right", baseline="bottom" if above else "top",
                                              dy=-6 if above else 6, color=vega.TEXT)
                     .encode(x="at_epoch:Q", y="y:Q", text="text:N"))
    # short panel titles (the axis titles carry the detail)
    panels = [_history_panel(data, "loss", title="Test loss", style=0, last=False,
                             axis_title="cross-entropy" if classification else "MSE, labels scaled to [0, 1]"),
              _history_panel(data, metric, title=("Test balanced accuracy" if balanced else "Test accuracy")
                             if classification else "Test MSE", style=2, last=not with_eps, extra=tuple(lines),
                             domain=domain,
                             # short: the panel is 90 pixels tall ("balanced accuracy" was cut to "balanced accura")
                             axis_title=("balanced acc." if balanced else "accuracy (fraction)")
                             if classification else "MSE (label units²)")]
    if with_eps:
        # named under its line at the left, where the ε spent is still low
        cap = (vega.marked_line(budget, f"budget ε = {budget:g}", palette.BLACK, "dot", below=True, left=True),) \
            if budget is not None and math.isfinite(budget) else ()
        panels.append(_history_panel(data.dropna(subset=["epsilon"]), "epsilon", title="ε spent", axis_title="ε",
                                     style=1, last=True, zero=True, extra=cap))
    return alt.vconcat(*panels, spacing=10).resolve_scale(x="shared")


#: the confusion matrix's counts: half the cell's width (a three-digit count fits), between 9 and 15 px
COUNT_FONT_SIZE = "clamp(bandwidth('x') / 2, 9, 15)"


def confusion_figure(cm: pd.DataFrame) -> alt.LayerChart:
    """The confusion matrix as a heat map (Vega-Lite): true classes down, predicted classes across, in the data's
    class order, each cell's count written on it (white on the dark cells) and shown on hover."""
    names_true, names_pred = [str(i) for i in cm.index], [str(c) for c in cm.columns]
    cells = pd.DataFrame([{"true": t, "predicted": p, "rows": int(v)}
                          for t, row in zip(names_true, cm.values) for p, v in zip(names_pred, row)])
    dark = max(1, int(cells["rows"].max())) / 2
    base = alt.Chart(cells).encode(
        x=alt.X("predicted:N", title="predicted class", sort=names_pred, axis=alt.Axis(labelAngle=0, labelLimit=90)),
        y=alt.Y("true:N", title="true class", sort=names_true),
        tooltip=[alt.Tooltip("true:N", title="true class"), alt.Tooltip("predicted:N", title="predicted class"),
                 alt.Tooltip("rows:Q", title="test rows")])
    heat = base.mark_rect().encode(color=alt.Color("rows:Q", title="test rows", scale=alt.Scale(scheme="blues"),
                                                   legend=alt.Legend(orient="right", gradientLength=200)))
    # each count as large as its cell allows: 15 px on a projector's 90 px cells (12 px was small from the back of a
    # room), smaller on a phone's 21 px cells, where a fixed 12 px "119" ran over its neighbours
    counts = base.mark_text(fontSize=alt.expr(COUNT_FONT_SIZE)).encode(
        text="rows:Q", color=alt.condition(alt.datum.rows > dark, alt.value("white"), alt.value(vega.TEXT)))
    return alt.layer(heat, counts).properties(height=380)
