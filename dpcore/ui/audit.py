"""Streamlit side of the "Attack the model" page: cached audits, the ROC figure, the exposed records."""
from __future__ import annotations

import math
import warnings
from typing import Any, Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ..audit import max_tpr_at_fpr, pld_max_tpr_at_fpr, run_audit
from ..audit.bounds import clopper_pearson_lower
from ..audit.run import epsilon_ladder
from ..decision.advisor import COMMON_CLASS
from ..learners import get_learner, learners
from ..rng import noise_mode
from ..runtime.thread_warnings import caught as caught_warnings
from ..teaching.verdict import round_epsilon
from .common import (
    DASH,
    format_epsilon,
    majority_accuracy,
    remembered,
    run_guarded,
    shared_call,
    show_table,
    shown_difference,
)
from .live import BAR_SECONDS, Every
from .uploads import data_arg, data_key, is_upload

#: How each attack is offered on the page, and what it assumes and knows.
ATTACK_LABELS = {
    "canaries": "Mislabelled canaries in the full training set (black-box)",
    "loss": "Loss threshold on half a pool (black-box)",
    "lira": "LiRA with shadow models (black-box)",
    "one-run": "Canaries in one training run (audit)",
}
ATTACK_NOTES = {
    "canaries": "**What the attacker does:** before training, some held-out records were given a wrong "
                "label, a *canary*, and a coin decided for each whether it joins the full training set. Both models "
                "train on everything, canaries included; then the attacker asks each model about every canary: a "
                "model that gives a canary its wrong label has memorised it, since nothing else in the data teaches "
                "that label (Carlini et al. 2019; Jagielski, Ullman & Oprea 2020). The non-private model is a wide "
                "network fit to its training rows, as one is trained without privacy; the private one is the Train "
                "page's, the canaries among its rows (so its accuracy may differ from the Train page's by about a "
                "point). "
                "Because coins chose the canaries, the guesses bound ε from this one run (Steinke, Nasr & "
                "Jagielski 2023).",
    "loss": "**What the attacker has:** the released model, which it can query on any record, and each record's "
            "label. **What it does:** it calls a record a member when the model fits it better than usual (its "
            "loss is low): models fit their training data better than fresh data (Yeom et al. 2018). No shadow "
            "models, no knowledge of the training algorithm.",
    "lira": "**What the attacker has:** the released model (queries only), each record's label, data from the same "
            "distribution, and the training recipe (learner, knobs, ε). **What it does:** it trains shadow models "
            "the same way on random halves of the data, learns how each record's confidence is distributed when "
            "the record is in and when it is out, and asks which of the two the target's confidence fits better "
            "(the likelihood-ratio attack, Carlini et al. 2022), among the strongest black-box membership attacks "
            "known.",
    "one-run": "**What the auditor does:** it plants canaries, each by a fair coin, and trains once. For DP-SGD the "
               "canaries are gradients written into coordinates no real record uses, and the auditor reads every "
               "noisy step (white-box: the adversary DP-SGD's guarantee is written for). For other learners they are "
               "mislabelled records, and the auditor only queries the final model (black-box). How many canaries "
               "it places correctly bounds ε from below (Steinke, Nasr & Jagielski 2023).",
}
#: The model behind the network learners on this page: a flexible one shows leakage, the preset is tuned for DP.
NETWORK_CHOICES = {"preset": "The dataset's preset (as on the Train page)", "mlp": "MLP, 256 units"}


def private_learners(task: str, is_image: bool) -> list[str]:
    """The private learners that can be attacked on a dataset of this task (images-only ones on images)."""
    return [n for n, s in learners().items() if s.private and task in s.tasks and (is_image or not s.images_only)]


#: the ε a learner trained without privacy is audited with (it reads none): the page's non-private twin was trained
#: again for every ε asked, its result the same each time, two thirds of a new ε's work on MNIST 5k
UNUSED_EPSILON = 1.0


def cached_audit(learner: str, dataset, *, epsilon: float, delta: float, attack: str, params: tuple,
                 shadows: int, canaries: int, pool_size: int | None, seed: int | None, progress=None,
                 quiet: bool = False):
    """:func:`dpcore.audit.run_audit` on ``dataset`` (a registry name, or a visitor's uploaded Dataset), memoised in
    the session on every input; ``quiet``: no caption when the result comes from the server's store (the page's
    second model: said once for both).

    The seed fixes the noise, so equal inputs give equal results. Not ``st.cache_data``: the run
    moves a progress bar created outside it, which a cache replay could not redraw. An upload's run is this
    session's alone (:func:`dpcore.ui.shared_call`). The run's warnings are kept with it and raised again on every
    call, so the page (and its report) says them also when the result comes from the session's memo.
    """
    if not get_learner(learner).private:  # trained without noise, it ignores ε: one run for every ε a class tries
        epsilon = UNUSED_EPSILON
    key = (learner, data_key(dataset), epsilon, delta, attack, params, shadows, canaries, pool_size, seed)
    def run(on_progress):
        with noise_mode(seed is None):  # seed None: the trained models' noise from the operating system
            return run_audit(learner, dataset, epsilon=epsilon, delta=delta, attack=attack, params=dict(params),
                             shadows=shadows, canaries=canaries, pool_size=pool_size, seed=seed or 0,
                             on_progress=on_progress)

    def computed():
        with caught_warnings() as caught:
            value = shared_call(("audit", *key), run, on_progress=progress, quiet=quiet)
        return value, [(w.category, str(w.message)) for w in caught]

    # one run for every visitor asking the same (dpcore.runtime.serving), memoised in the session too
    value, said = remembered("audit.results", key, computed)
    for category, message in said:
        warnings.warn(message, category, stacklevel=2)
    return value


@st.cache_data(show_spinner=False, max_entries=64)
def cached_theory(epsilon: float, delta: float, _event, event_key: str,
                  fpr: tuple) -> tuple[np.ndarray, np.ndarray | None]:
    """The best TPR any attack can reach at each FPR: from the (ε, δ) claim, and from the run's composed event."""
    f = np.asarray(fpr)
    region = max_tpr_at_fpr(f, epsilon=epsilon, delta=delta) if math.isfinite(epsilon) else np.ones_like(f)
    exact = None
    if _event is not None and math.isfinite(epsilon):
        try:
            exact = np.asarray(pld_max_tpr_at_fpr(_event, f), dtype=float)
        except Exception:  # the event has no PLD (pure-epsilon parts dp_accounting cannot model): region only
            exact = None
    return region, exact


class AuditProgress:
    """A progress bar that the audit's ``on_progress`` moves (target, then each shadow or epoch), in ``container``
    (the page by default; presenting, the Attack page passes the stage's chart column, where the ROC chart comes:
    below the stage's long form the bar ran off a 720-pixel projector and the stage sat blank while the models
    trained)."""

    def __init__(self, label: str, container=None) -> None:
        self.label = label
        self.bar = (st if container is None else container).progress(0.0, text=f"{label}: starting …")
        self._due = Every(BAR_SECONDS)  # spaced more widely while a class follows runs (dpcore.ui.live)

    def __call__(self, info: Mapping[str, Any]) -> None:
        done, total = int(float(info["done"])), max(int(info["total"]), 1)
        if not self._due(last=done >= total):
            return
        what = {"target": "target model trained", "shadow": "shadow models trained",
                "training": "epochs", "rung": "claims audited"}.get(info["stage"], info["stage"])
        self.bar.progress(min(float(info["done"]) / total, 1.0), text=f"{self.label}: {done} of {total} {what}")

    def done(self) -> None:
        self.bar.empty()


def roc_figure(curves: Mapping[str, Any], *, epsilon: float, delta: float, region, exact, fpr) -> go.Figure:
    """Measured ROC curves on log-log axes over the shaded region that bounds every attack's true rates under the
    claimed ε (a curve measured on a few hundred records can cross it by chance at the smallest rates)."""
    fig = go.Figure()
    f = np.asarray(fpr)
    if region is not None and math.isfinite(epsilon):
        fig.add_trace(go.Scatter(x=f, y=np.clip(region, 1e-4, 1), mode="lines", line=dict(width=0),
                                 fill="tozeroy", fillcolor="rgba(0,114,178,0.12)",
                                 name=f"Allowed by (ε = {format_epsilon(epsilon)}, δ = {delta:g})"))
    if exact is not None:
        fig.add_trace(go.Scatter(x=f, y=np.clip(exact, 1e-4, 1), mode="lines",
                                 line=dict(color="#0072B2", dash="dot", width=2),
                                 name="Best possible for this run's exact noise"))
    fig.add_trace(go.Scatter(x=f, y=f, mode="lines", line=dict(color="#888888", dash="dash"),
                             name="Guessing (diagonal)"))
    styles = [("#D55E00", "solid", "circle"), ("#009E73", "dashdot", "diamond")]
    for (label, result), (color, dash, _marker) in zip(curves.items(), styles):
        x, y = np.maximum(result.fpr, 1e-4), np.maximum(result.tpr, 1e-4)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", line=dict(color=color, dash=dash, width=3),
                                 name=f"{label} (AUC {result.auc:.3f})"))
    lo = max(1e-3, 0.5 / max(min(r.n_nonmembers for r in curves.values()), 1))
    ticks = [t for t in (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0) if t >= lo * 0.99]
    labels = [f"{t:g}" for t in ticks]
    fig.update_xaxes(type="log", range=[math.log10(lo), 0], tickvals=ticks, ticktext=labels,
                     title="False alarms (FPR)")
    fig.update_yaxes(type="log", range=[math.log10(lo), 0], tickvals=ticks, ticktext=labels,
                     title="Members caught (TPR)")
    fig.update_layout(height=480, margin=dict(l=10, r=10, t=30, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.18, x=0))
    return fig


@st.cache_data(show_spinner=False, max_entries=64)
def _guessing_range(n_members: int, n_nonmembers: int, fpr: float, confidence: float) -> tuple[float, float]:
    from ..audit.roc import chance_tpr_interval

    return chance_tpr_interval(n_members, n_nonmembers, fpr, confidence=confidence)


#: the rate of members an attack catches while wrongly accusing 1 in 100 non-members, in the words the page's text and
#: ROC axes use ("false alarms", "members caught"), for the headline metric and the tables' column alike
CAUGHT_AT_1 = "Caught at 1% false alarms"


def level(confidence: float) -> str:
    """A confidence as the pages write it beside a proven ε or an interval: 0.95 is "95%", 0.999 "99.9%"."""
    return f"{100 * confidence:.4g}%"


def guessing_reach(result, fpr: str = "0.01") -> str | None:
    """"guessing: ≤ 3.3%": the most a guessing attack catches at ``fpr`` on these records (at the audit's confidence,
    :func:`dpcore.audit.roc.chance_tpr_interval`), for under the rate measured; None where that rate is not
    measurable. Guessing's 1 % alone misread a private model's 3.3 % (8 of 246 members, at 1 % false alarms among 254
    non-members) as three times chance: with so few non-members the threshold itself moves, and guessing reaches
    3.3 % there. Short, to fit under a metric in a fifth of the page."""
    if result.tpr_measured(fpr) is None:
        return None
    reach = _guessing_range(int(result.n_members), int(result.n_nonmembers), float(fpr), float(result.confidence))[1]
    return f"guessing: ≤ {reach:.1%}"


def rate_with_interval(result, fpr: str) -> tuple[str, str]:
    """The rate of members caught at ``fpr`` as a percentage, and its Clopper-Pearson interval at the audit's
    confidence (dashes where the non-members are too few to measure it)."""
    rate, interval = result.tpr_measured(fpr), result.tpr_interval(fpr)
    if rate is None or interval is None:
        return DASH, DASH
    return f"{rate:.1%}", f"{interval[0]:.1%} – {interval[1]:.1%}"


#: the claim shown for a private run whose ε is about other neighbours than the attack's question (not "not private")
NO_CLAIM = "∞ (no claim)"


def results_table(rows: Mapping[str, Any]) -> pd.DataFrame:
    """The numbers behind the chart, one row per attacked model, every measured rate with its interval at the
    audit's confidence (so a difference within it reads as a tie); a rate the records are too few to measure is a
    dash."""
    out = []
    for label, (audit, accuracy) in rows.items():
        r = audit.result
        caught, interval = rate_with_interval(r, "0.01")
        out.append({"Model": label, "ε claimed": NO_CLAIM if r.claim_note else format_epsilon(r.epsilon),
                    f"ε proven ({level(r.confidence)})": round_epsilon(r.epsilon_lower_bound, lower_bound=True),
                    "AUC": round(r.auc, 3),
                    # percentages, as the headline metric of the same name shows the same rate
                    CAUGHT_AT_1: caught, f"{level(r.confidence)} interval": interval,
                    "Accuracy": None if accuracy is None else round(accuracy, 3)})
    return pd.DataFrame(out)


#: the exposed canaries' column of each model's answer, in words ("P(taught label)" before)
TAUGHT_PROBABILITY = "probability of the taught label"


def exposed_canaries(leaky, private, k: int = 8, class_names=()) -> tuple[np.ndarray, pd.DataFrame]:
    """The k inserted canaries ``leaky`` gives away most surely: their records, and a table of the label each was
    taught, its true label and what each model answers for the taught label (its probability, where the model
    gives probabilities; otherwise the attack's score). ``class_names``: the label's classes in index order, so the
    labels read as the data writes them ("fraud", not 0)."""
    idx = leaky.most_exposed(k)
    prob = _is_log_probability(leaky) and _is_log_probability(private)
    name = TAUGHT_PROBABILITY if prob else "Attack score"

    def shown(audit):
        v = audit.scores[idx]
        return [float(f"{x:.3g}") for x in (np.exp(v) if prob else v)]

    names = [str(n) for n in class_names]

    def label(values) -> list:
        return [names[i] if 0 <= i < len(names) else i for i in np.asarray(values).astype(int).tolist()]

    table = pd.DataFrame({"Canary": idx, "Taught label": label(leaky.taught[idx])})
    if leaky.true_labels is not None:
        table["True label"] = label(leaky.true_labels[idx])
    table[f"Non-private: {name}"] = shown(leaky)
    table[f"Private: {name}"] = shown(private)
    return leaky.records[idx], table


def _is_log_probability(audit) -> bool:
    """Whether the audit's scores are log-probabilities of the taught label (the models answer probabilities)."""
    return bool(np.all(np.asarray(audit.scores) <= 1e-9))


def cached_ladder(learner: str, dataset, *, delta: float, seed: int | None, progress=None):
    """:func:`dpcore.audit.run.epsilon_ladder` on ``dataset``, shared by every visitor asking the same (an upload's:
    this session's alone)."""
    key = ("ladder", learner, data_key(dataset), delta, seed)

    def run(on_progress):
        with noise_mode(seed is None):
            return epsilon_ladder(learner, dataset, delta=delta, seed=seed or 0, on_progress=on_progress)

    return remembered("audit.ladders", key, lambda: shared_call(key, run, on_progress=progress))


def ladder_table(rungs) -> pd.DataFrame:
    """One row per claimed ε: the proven ε, the share of members caught at 1 % false alarms with its interval (both
    at the audit's confidence), and the accuracy."""
    rows = []
    for eps, audit in rungs:
        r = audit.result
        caught, interval = rate_with_interval(r, "0.01")
        rows.append({"ε claimed": _rung(eps),
                     f"ε proven ({level(r.confidence)})": round_epsilon(r.epsilon_lower_bound, lower_bound=True),
                     CAUGHT_AT_1: caught, f"{level(r.confidence)} interval": interval, "AUC": round(r.auc, 3),
                     "Accuracy": None if audit.accuracy is None else round(audit.accuracy, 3)})
    return pd.DataFrame(rows)


def ladder_figure(rungs) -> go.Figure:
    """Proven ε against claimed ε: the bars must stay under the claim (the staircase); ∞ is the last step."""
    # the run without noise says "no guarantee" under its tick: written inside its narrow bar, a 390 px phone stood it
    # upright across the proven ε above the orange bar (or, kept level, shrank it to an unreadable 5 px)
    labels = [_rung(e) if math.isfinite(e) else f"{_rung(e)}<br>no guarantee" for e, _ in rungs]
    proven = [a.result.epsilon_lower_bound for _, a in rungs]
    finite = [e for e, _ in rungs if math.isfinite(e)]
    top = max(proven + finite + [1.0])
    # the run without noise claims nothing: its bar runs off the top of the chart, above the axis's end, where drawn
    # to the largest finite claim it stood as tall as the ε = 8 rung's, a claim of 8
    shown = top * 1.2
    claims = [e if math.isfinite(e) else shown * 2 for e, _ in rungs]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=claims, name="ε claimed (the guarantee)", marker_color="rgba(0,114,178,0.18)"))
    fig.add_trace(go.Bar(x=labels, y=proven, name=f"ε proven by the attack ({level(rungs[0][1].result.confidence)})"
                         if rungs else "ε proven by the attack", marker_color="#D55E00",
                         text=[format_epsilon(p, lower_bound=True) for p in proven], textposition="outside"))
    fig.update_layout(barmode="overlay", height=340, margin=dict(l=10, r=10, t=30, b=10),
                      xaxis=dict(title="ε claimed", type="category"), yaxis=dict(title="ε", range=[0, shown]),
                      # under the axis title, which the ∞ rung's two-line tick pushes down
                      legend=dict(orientation="h", y=-0.42, yanchor="top", x=0))
    return fig


def _rung(epsilon: float) -> str:
    """A rung's claim as the ladder labels it: "∞ (no noise)" for the run without noise."""
    return f"{epsilon:g}" if math.isfinite(epsilon) else "∞ (no noise)"


def exposed_records(audit, k: int = 8) -> tuple[np.ndarray, pd.DataFrame]:
    """The k members the attack is most sure of: their pool rows and a table (label, score)."""
    idx = audit.most_exposed(k)
    labels = audit.y_pool[idx]
    if np.all(np.mod(labels, 1) == 0):
        labels = labels.astype(int)
    table = pd.DataFrame({"Pool record": idx, "Label": labels,
                          "Attack score": [float(f"{v:.3g}") for v in audit.scores[idx]]})
    return audit.X_pool[idx], table


def ceiling_text(result) -> str:
    """"ε ≥ 3.95": the most any attack can prove on ``result``'s records (:meth:`AuditResult.most_provable`), rounded
    up as a ceiling is; "ε ≥ 4.53, which this run reached" where the run's own reading is that ceiling, written as the
    reading is (rounded down): the ladder's run without noise, right about every canary, read 4.53 in its bar and
    table while the line under them put the most any attack can prove at 4.54, the same number rounded the other way.
    """
    ceiling = float(result.most_provable())
    reached = float(result.epsilon_lower_bound)
    if ceiling > 0 and reached >= ceiling * (1 - 1e-9):
        return f"ε ≥ {format_epsilon(reached, lower_bound=True)}, which this run reached"
    return f"ε ≥ {format_epsilon(ceiling)}"


def twin_reading(audits: Mapping[str, Any], private_label: str) -> str:
    """" Without privacy, the same attack proves ε ≥ x and catches y % ...": the contrast in one sentence ("" without
    a twin)."""
    others = [(k, a) for k, a in audits.items() if k != private_label]
    if not others:
        return ""
    label, twin = others[0]
    r = twin.result
    caught, interval = rate_with_interval(r, "0.01")
    rate = "" if caught == DASH else f" and catches {caught} of its members at 1 % false alarms ({interval})"
    proven = format_epsilon(r.epsilon_lower_bound, lower_bound=True)  # a lower bound rounds down
    said = f" Against **{label}** the same attack proves ε ≥ {proven}{rate}."
    if r.epsilon_lower_bound > 0:  # a finite audit has a ceiling: "why not ∞ without privacy?"
        said += (f" On these {r.n_members + r.n_nonmembers:,} records the most any attack can prove is "
                 f"{ceiling_text(r)} (its reading were it right about every one): a model that gives every record "
                 "away reads that at most, not ∞.")
    if r.epsilon_lower_bound <= 0:  # breast cancer's 60-odd canaries: nothing shows, with privacy or without
        said += (f" **The attack is too weak here to show a leak even without privacy** (on "
                 f"{r.n_members + r.n_nonmembers:,} records), so the private model's reading says nothing about its "
                 "ε either; a larger dataset (MNIST 5k, the lesson's) gives the attack enough records.")
    return said


def proven_beside_chart(audits: Mapping[str, Any], private_label: str) -> str:
    """The proven ε of each attacked model in one line, for under the ROC chart when presenting: on the stage the
    metrics sit below the form that fills the left column, a screen or two down, while the lesson's Attack stop points
    at "the proven ε lower bound below the claimed ε" on the first screen (``dpcore.teaching.lesson``). One line,
    so that it stays on a 720-pixel projector's first screen."""
    main = audits[private_label].result
    proven = format_epsilon(main.epsilon_lower_bound, lower_bound=True)  # down, and the claim up: never shown crossed
    said = f"**Proven ({level(main.confidence)}):** ε ≥ {proven} for the private model (claimed " \
           f"{format_epsilon(main.epsilon)})"
    others = [a for k, a in audits.items() if k != private_label]  # the twin: the same learner without privacy
    if others:
        twin = others[0].result.epsilon_lower_bound
        said += f", ε ≥ {format_epsilon(twin, lower_bound=True)} without privacy"
    return said + "."


def chance_accuracy(ds) -> float | None:
    """Test accuracy of always answering the most common class on ``ds`` (seed 0's split); None for regression."""
    return majority_accuracy(data_arg(ds), 0) if ds.task == "classification" else None


def shares_reading(audits: Mapping[str, Any], ds) -> tuple[dict[str, float | None], float] | None:
    """Where the data declares class shares, each audited model's balanced accuracy on its unseen rows and what
    always answering one class scores in it (1/k); None elsewhere, or where an audit has no balanced accuracy
    (membership audits).

    Answering by the shares trades accuracy on the common class for the rare ones: on a 3,000-row 88/7/5 upload the
    page read "Model accuracy 0.71, -0.16 vs chance: the model learnt nothing" of a model finding the rare classes.
    """
    if not getattr(ds, "class_shares", ()) or getattr(ds, "task", None) != "classification":
        return None
    balanced = {k: getattr(a, "balanced_accuracy", None) for k, a in audits.items()}
    if any(v is None for v in balanced.values()):
        return None
    return balanced, 1.0 / len(ds.class_shares)


def balanced_accuracy_metric(col, balanced: Mapping[str, float | None], private_label: str, *,
                             chance: float) -> str:
    """:func:`model_accuracy_metric` in balanced accuracy (:func:`shares_reading`): the tile, and the sentence that
    puts the attack's reading beside it."""
    acc = balanced[private_label]
    others = [(k, a) for k, a in balanced.items() if k != private_label and a is not None]
    col.metric("Balanced accuracy", f"{acc:.3f}", delta=f"{shown_difference(acc, chance):+.3f} vs one class",
               delta_color="off",
               help="The attacked private model's balanced accuracy on records it did not train on: each class's "
                    "share of records found right, averaged (its answers follow the declared class shares)"
                    + "".join(f"; {k}: {a:.3f}" for k, a in others)
                    + f"; always answering one class: {chance:.3f}.")
    beside = "".join(f", against {a:.3f} for {k}" for k, a in others)
    if acc <= chance:
        return (f"**But the model learnt nothing:** answering by the declared class shares, its balanced accuracy "
                f"on the records it never saw is {acc:.3f}{beside}, no better than always answering one class "
                f"({chance:.3f}). A model that learnt nothing has nothing to leak; raise ε to see what privacy costs "
                "and what it protects.")
    return (f"Answering by the declared class shares, the private model's balanced accuracy on the records it never "
            f"saw is {acc:.3f}{beside}; always answering one class scores {chance:.3f}.")


def model_accuracy_metric(col, accuracy: Mapping[str, float | None], private_label: str, *,
                          chance: float | None, unseen: int | None = None) -> str:
    """Show the attacked private model's accuracy in ``col``; return the sentence that puts the attack's reading
    beside it ("" when there is no accuracy to show). A model no better than the most common class learnt
    nothing, so an attack finding nothing there says nothing about what ε protects: the sentence says so.

    ``unseen``: how many records the accuracy was measured on (a pool's non-members: about a hundred on a small
    pool). Then "no better" is judged with the accuracy's 95 % Clopper-Pearson interval, not its point: 12 % right
    on 100 records is not evidence of having learnt more than a 10 % chance level."""
    acc = accuracy.get(private_label)
    if acc is None:
        return ""
    others = [(k, a) for k, a in accuracy.items() if k != private_label and a is not None]
    # where one class is most of the data (95/5), its share is a high accuracy that needs nothing learnt: said under
    # the number, not only in its help
    common = chance is not None and chance >= COMMON_CLASS
    # a fraction, as on the Train and Trade-off pages and in the table under the chart (the glossary: "between 0
    # and 1 on every page"); the sentence below says it as a share of records
    col.metric("Model accuracy", f"{acc:.3f}",
               delta=f"{shown_difference(acc, chance):+.3f} vs chance" if common else None,
               delta_color="off",  # grey: a model answering one class scores about chance, measured on
               # other test rows than the attack's, and a green arrow would read as skill
               help="The attacked private model's accuracy (the fraction of records predicted correctly) on records "
                    "it did not train on" + "".join(f"; {k}: {a:.3f}" for k, a in others)
                    + ("" if chance is None else f"; always answering the most common class: {chance:.3f}") + ".")
    beside = "".join(f", against {a:.1%} for {k}" for k, a in others)
    if chance is not None and unseen:  # the accuracy's lower 95 % bound, from the count of right answers
        low = float(clopper_pearson_lower(round(acc * unseen), unseen, significance=0.05))
        if acc > chance >= low:
            return (f"**The model may have learnt nothing:** it is right on {acc:.1%} of the {unseen:,} records it "
                    f"never saw{beside}, within chance of always answering the most common class ({chance:.1%}; "
                    f"95 % interval from {low:.1%}). A model that learnt nothing has nothing to leak; raise ε, or "
                    "attack a larger pool, to tell.")
    if chance is not None and acc <= chance:
        return (f"**But the model learnt nothing:** it is right on {acc:.1%} of the records it never saw{beside}, "
                f"no better than always answering the most common class ({chance:.1%}). A model that learnt "
                "nothing has nothing to leak; raise ε to see what privacy costs and what it protects.")
    return (f"The private model is right on {acc:.1%} of the records it never saw{beside}."
            + (f" Always answering the most common class (chance) scores {chance:.1%} here, so accuracy says little "
               "of what the model learnt." if common else ""))


#: Each exposed record's picture, in pixels: eight and their gaps (8 x 86 + 7 x 16 = 800) fit the main column at
#: 1280 px with the sidebar open (820 px; at 96 px the eighth went to a row of its own), three on a phone.
PICTURE_WIDTH = 86


def _pictures(X, image_shape, captions) -> None:
    """Records as one strip of small pictures that wraps (3 a row on a phone), each scaled to its own range, each
    with its caption as alt text for a screen reader."""
    row = st.container(horizontal=True, wrap=True, gap="small")
    for img, cap in zip(X, captions):
        pic = np.clip((np.asarray(img).reshape(image_shape) - np.min(img)) / max(np.ptp(img), 1e-9), 0, 1)
        row.container(width=PICTURE_WIDTH, gap=None).image(pic, caption=cap, alt=f"An exposed record: {cap}",
                                                           width=PICTURE_WIDTH)


def show_exposed(audits: Mapping[str, Any], private_label: str, *, attack: str, image_shape,
                 class_names=()) -> None:
    """The records the leakiest model gives away: for the canary attack the canaries the twin answers with the label
    it was taught, beside the private model's answers for the same; for a pool attack the members most surely named."""
    leaky_label = list(audits)[-1]
    leaky, main = audits[leaky_label], audits[private_label]
    if attack == "canaries" and len(audits) == 2 and getattr(leaky, "records", None) is not None:
        st.header("Exposed records")
        X, table = exposed_canaries(leaky, main, class_names=class_names)
        leaky_says, private_says = table.columns[-2], table.columns[-1]
        sure = private_says.endswith(TAUGHT_PROBABILITY)  # the models answer probabilities: under each picture
        st.markdown(f"The canaries **{leaky_label}** gives away most surely: each was taught a wrong label and "
                    f"answers it, which only memorising can do. Beside it, what **{private_label}** answers for the "
                    "same records" + (": under each picture, how sure each model is of the wrong label it was "
                                      "taught (its probability, from 0 to 1, as in the table), the non-private "
                                      "model first, then the private one." if sure else "."))
        if image_shape is not None:  # under each picture the table's own numbers
            _pictures(X, image_shape, (f"{true} taught as {t}" + (f", {a:g} / {b:g}" if sure else "")
                                       for t, true, a, b in zip(table["Taught label"], table["True label"],
                                                                table[leaky_says], table[private_says])))
        show_table(table, key="audit.exposed")
    elif hasattr(main, "pool_index"):
        st.header("The records most exposed")
        st.markdown(f"The members the attack was most sure of in **{leaky_label}**, with their attack scores: the "
                    "records a real release would leak first.")
        X, table = exposed_records(leaky)
        if image_shape is not None:
            _pictures(X, image_shape, (f"label {lab}" for lab in table["Label"]))
        show_table(table, key="audit.exposed")


def audit_release(audit):
    """What an audit's trained model released, for the session's total (:func:`dpcore.ui.ledger.record_release`):
    a membership audit's target run itself; a canary audit's event, claimed (ε, δ), relation and unit. The model
    attacked is trained on the data for real, a release about the same people as every other run on it; a model
    trained without privacy gives no event, and is left out as every non-private baseline is. (LiRA's shadow models
    stand for what an attacker trains on data of its own; only the attacked model is counted.)"""
    if (target := getattr(audit, "target", None)) is not None:
        return target
    own = getattr(audit, "run_epsilon", None)  # the run's ε where the audit's claim is ∞ (other neighbours)
    own_delta = getattr(audit, "run_delta", None)  # its δ, where the bound is read at the δ asked for
    return {"event": audit.event, "epsilon": audit.result.epsilon if own is None else own,
            "delta": audit.result.delta if own_delta is None else own_delta,
            "neighbouring": getattr(audit, "neighbouring", None), "unit": getattr(audit, "unit", "records")}


def show_ladder(learner: str, dataset, *, delta: float, seed: int | None, same_attack_above: bool = False
                ) -> list | None:
    """The ε ladder, on a click (six audited runs), then kept for this learner, data, δ and seed; returns its rungs
    ``[(claimed ε, audit), ...]`` once shown (None before the click). ``same_attack_above``: the page's own attack is
    the ladder's (the one-run audit with gradient canaries), so the ladder is not said to be the stronger one."""
    st.header("The ε ladder")
    # in words a class follows (the lesson's Attack stop sends it here): "white-box" and "gradient canaries" alone
    # were jargon, and the ladder's ε = 1 rung proving more than the attack above (0.0462 against 0 on MNIST 5k), at an
    # accuracy a point off the Train page's, went unexplained
    gradient = get_learner(learner).canary_kind == "gradient"
    st.markdown("The same training at growing ε, each run audited by the strongest attacker this page has"
                + (" (white-box: it sees every noisy step of the training, not only the finished model, and slips "
                   "made-up gradients, canaries, into some of the steps; DP-SGD's guarantee is written for this "
                   "adversary)" if gradient else " (mislabelled canaries)")
                + ", and ∞ the same run without noise. The proven ε climbs with the claim and stays below it (a "
                  "correct training passes it only by the chance the bound's confidence leaves); two rates whose "
                  "intervals overlap are a tie."
                + (" A stronger attacker than the one above, it may prove a little more at the same ε." if gradient
                   and not same_attack_above else "")
                + (" Each rung is a training of its own, its model widened by the canaries' extra weights, so its "
                   "accuracy can sit a point off the Train page's." if gradient else ""))
    asked = (learner, data_key(dataset), delta, seed)
    if st.button("Climb the ladder (six audited runs)", key="audit.ladder"):
        st.session_state["audit.ladder_shown"] = asked
    if st.session_state.get("audit.ladder_shown") != asked:
        return None
    progress = AuditProgress("ε ladder")
    rungs = run_guarded(cached_ladder, learner, dataset, delta=delta, seed=seed, progress=progress,
                        hide_warnings=("noise_multiplier=0",))  # the ∞ rung is the run without noise on purpose
    progress.done()
    if rungs:
        st.plotly_chart(ladder_figure(rungs), key="audit.ladder_chart")
        if none := next((a.result for e, a in rungs if not math.isfinite(e)), None):  # the run without noise
            st.caption(f"The run without noise reads a finite ε: with its {none.n_members + none.n_nonmembers:,} "
                       f"canaries, the most any attack can prove is {ceiling_text(none)} (the reading of one right "
                       "about every canary). More canaries raise that ceiling.")
        if note := next((a.result.claim_note for _, a in rungs if a.result.claim_note), ""):
            st.markdown(f"**Not a claim about this question:** {note}. The bars show each run's own ε beside what "
                        "the attack proves about membership.")
        show_table(ladder_table(rungs), key="audit.ladder_table")
    return rungs


def attack_question(*, learner: str, attack: str, epsilon: float, delta: float, pool: int | None, shadows: int,
                    canaries: int, network: str) -> dict:
    """What the page asked, in words (the report's first table)."""
    out = {"model attacked": f"{learners()[learner].title}, trained for real on your settings",
           "attack": ATTACK_LABELS.get(attack, attack), "ε asked": f"{epsilon:g}", "δ": f"{delta:g}",
           "network": NETWORK_CHOICES.get(network, network)}
    if attack in ("loss", "lira"):
        out["records in the attacker's pool"] = pool
    if attack == "lira":
        out["shadow models"] = shadows
    if attack in ("one-run", "canaries"):
        out["canaries"] = canaries
    return out


def attack_report_button(audits: Mapping[str, Any], dataset, *, question: dict, accuracy: Mapping[str, Any],
                         seed: int | None, said) -> None:
    """"Download the report": the attack's report (:func:`dpcore.decision.report.attack_report_html`), built in
    memory and handed to the browser: for an uploaded file nothing of it is written to disk, and it holds no
    record or cell value of the file."""
    from ..decision.report import attack_report_html
    from .advisor import load_warnings_of

    noise = ("secure: the trained models' noise from the operating system's cryptographic source (Mironov 2012's "
             "grid); the attacker's own choices seeded" if seed is None else
             f"seeded (seed {seed}): reproducible for teaching, not for a release")
    html = attack_report_html(audits, dataset=dataset, question=question, accuracy=accuracy, noise=noise,
                              warnings=load_warnings_of(said))
    st.download_button("Download the report", html.encode("utf-8"), file_name=f"dp_attack_{dataset.name}.html",
                       mime="text/html", key="audit.report", on_click="ignore",
                       help="One HTML file that opens offline: the question, the data's shape, the attack's result, "
                            "the verdict band, every warning and each ε's dp_accounting event; no record or value of "
                            "the data." + (" Built in memory: nothing of your file is written to disk."
                                           if is_upload(dataset) else ""))
