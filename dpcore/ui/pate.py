"""Streamlit side of the PATE page: cached runs with live progress, and the page's charts."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..datasets import train_test_split
from ..learners import get_learner
from ..pate import PateConfig, PateResult, run_pate
from ..pate.analysis import PATE_NEIGHBOURING
from ..pate.learners import pate_config
from ..pate.pipeline import epsilon_sweep, teachers_sweep
from . import palette
from .common import (
    format_epsilon,
    format_noise,
    readable_log_ticks,
    readable_table,
    shared_call,
    shown_difference,
)
from .common import remembered as _remembered
from .live import BAR_SECONDS, Every
from .uploads import data_arg, data_key

PRIVACY_MODES = ("target ε", "noise scale")
#: The learner whose knobs the page draws.
PATE_SPEC = get_learner("pate")
#: Knobs the page sets itself rather than in "More settings": the noise box (drawn in its privacy mode) and the
#: non-private reference the page always shows.
PAGE_DRAWN = ("aggregator", "teachers", "query_mode", "queries", "noise_multiplier", "public_fraction", "features",
              "teacher_model", "student_model", "baseline")

#: The dataset the page opens on.
START_DATASET = "digits"
#: Where the noise box starts when privacy is set by noise: about the default budget for the default queries.
NOISE_START = 10.0


def page_defaults(dataset: str = START_DATASET) -> dict:
    """PATE's defaults on ``dataset``: the ``pate`` learner's declared knobs and budget (how they were chosen is in
    :mod:`dpcore.pate.learners`; the command line uses the same), and where the noise box starts."""
    out = PATE_SPEC.defaults(train_test_split(dataset, seed=0))
    return {**out, "epsilon": PATE_SPEC.default_epsilon, "noise_scale": NOISE_START}


def page_config(dataset: str, *, epsilon: float, delta: float, seed: int, params: dict, secure: bool) -> PateConfig:
    """The run the page's boxes ask for: the learner's own :func:`~dpcore.pate.learners.pate_config` (as on the
    command line), with the non-private reference always on."""
    return pate_config(train_test_split(dataset, seed=0), epsilon=epsilon, delta=delta, seed=seed, secure=secure,
                       params={**params, "baseline": True})

def sweep_point_releases(points: pd.DataFrame, config: PateConfig, by: str) -> list:
    """Each point of one of the page's sweeps (``by``: ``"epsilon"`` or ``"teachers"``) as a release for the session's
    total (:func:`dpcore.ui.ledger.record_releases`): every point drew its own noisy answers and trained its own
    student, at most its ``epsilon`` (the target its noise was calibrated to, or the guarantee of its full run) at
    the page's δ, for one private record added or removed. The rows keep no event, so each point composes as the
    (ε, δ) it states (basic composition: looser than the run's own RDP curve, never smaller)."""
    return [((by, float(v)), {"event": None, "epsilon": float(e), "delta": float(config.delta),
                              "neighbouring": PATE_NEIGHBOURING, "unit": "records"})
            for v, e in zip(points[by], points["epsilon"])]


_STORE = "pate.runs"
_MAX_KEPT = 12


def remembered(key: tuple, compute: Callable[[], object]):
    """Memoise ``compute()`` in this session under the hashable ``key`` (see :func:`dpcore.ui.common.remembered`)."""
    return _remembered(_STORE, key, compute, max_kept=_MAX_KEPT)


def cached_pate(dataset: str, config: PateConfig, on_epoch: Callable | None = None) -> PateResult:
    """One PATE run on ``dataset`` (a registry name, or a visitor's uploaded Dataset: then this session's alone, see
    :func:`dpcore.ui.shared_call`), split seeded by ``config.seed``, memoised per session."""
    key = data_key(dataset)
    return remembered(("run", key, config), lambda: shared_call(  # one run for every visitor asking the same
        ("pate", key, config), lambda progress: run_pate(train_test_split(dataset, seed=config.seed), config,
                                                         on_epoch=progress), on_progress=on_epoch))


def cached_epsilon_sweep(dataset: str, config: PateConfig, epsilons: tuple[float, ...],
                         on_point: Callable | None = None) -> pd.DataFrame:
    return remembered(("eps", data_key(dataset), config, tuple(epsilons)), lambda: epsilon_sweep(
        train_test_split(dataset, seed=config.seed), config, epsilons=epsilons, on_point=on_point))


def cached_teachers_sweep(dataset: str, config: PateConfig, counts: tuple[int, ...],
                          on_point: Callable | None = None) -> pd.DataFrame:
    return remembered(("teachers", data_key(dataset), config, tuple(counts)), lambda: teachers_sweep(
        train_test_split(dataset, seed=config.seed), config, teacher_counts=counts, on_point=on_point))


def progress_callback(bar, total_teachers: int) -> Callable:
    """An ``on_epoch`` hook that moves a ``st.progress`` bar through teachers, queries and the student."""

    bar_due = Every(BAR_SECONDS)  # spaced more widely while a class follows runs (dpcore.ui.live)

    def cb(info) -> None:
        if info["stage"] != "student" and not bar_due(last=info["epoch"] >= info["epochs"]):
            return
        if info["stage"] == "teachers":
            bar.progress(0.8 * info["epoch"] / total_teachers, text=f"Teacher {info['epoch']} / {total_teachers} "
                                                                     f"trained (test accuracy {info['accuracy']:.2f})")
        elif info["stage"] == "queries":
            bar.progress(0.8 + 0.15 * info["epoch"] / info["epochs"],
                         text=f"{info['epoch']} queries answered, ε = {format_epsilon(info['epsilon'])}")
        else:
            bar.progress(1.0, text="Student trained")

    return cb


def noise_name(aggregator: str) -> str:
    """How the page names the noise on the vote counts: GNMax's σ, Confident-GNMax's σ₂ (its answers), LNMax's 1/γ."""
    return {"gnmax": "σ", "confident": "σ₂", "lnmax": "1/γ"}[aggregator]


def noise_std(result: PateResult) -> float:
    """Standard deviation of the noise on each vote count (Laplace's is √2 times its scale)."""
    return result.noise_scale * (np.sqrt(2.0) if result.config.aggregator == "lnmax" else 1.0)


def student_beside_chart(result: PateResult) -> str:
    """The run's result in one line, for the presentation stage under the ε chart: the metrics are a screen below
    it there, and the page's point is what the student learns from the noisy answers against the model trained on
    the private data without privacy (the Train page's :func:`~dpcore.ui.training.result_beside_chart` for PATE)."""
    from .training import points_apart

    answered = result.answered_count
    apart = points_apart(shown_difference(result.student_accuracy, result.nonprivate_accuracy))
    return (f"**Student accuracy {result.student_accuracy:.3f}**, against {result.nonprivate_accuracy:.3f} without "
            f"privacy ({apart}), learnt from "
            f"{answered} noisy answer{'' if answered == 1 else 's'}; ε spent: {format_epsilon(result.epsilon)}.")


def confident_caption(result: PateResult) -> str:
    """What Confident-GNMax did: how many queries passed the consensus check and what that bought."""
    cfg = result.config
    hint = ("" if cfg.data_dependent else " Switch on the data-dependent ε under “More settings” to see what "
                                              "agreeing teachers actually cost.")
    return (f"Confident-GNMax answered **{result.answered_count} of {cfg.queries}** queries: those whose largest vote "
            f"count plus noise (σ₁ = {cfg.sigma1:.3g}) reached the threshold T = {cfg.threshold_votes:.3g} votes "
            f"({cfg.threshold:g} of {cfg.teachers} teachers). The student learns the answered ones only. The ε above "
            "is the guarantee whatever the votes: every check, and every query answered"
            + (", plus the release of the data-dependent ε." if result.released is not None else ".") + hint)


def released_epsilon_text(result: PateResult) -> str:
    """The privately released data-dependent ε, its noise and its costs, in words."""
    r = result.released
    p = r.params
    conversion = np.log(1.0 / r.delta) / (p.order - 1.0)
    better = ("smaller than" if r.epsilon < result.epsilon else "no better than")
    return (f"Data-dependent ε, released privately: **{format_epsilon(r.epsilon)}** (δ = {r.delta:g}; noise std ± "
            f"{format_noise(r.noise_std, 2)}), {better} the data-independent guarantee of the same answers and this "
            f"release, {format_epsilon(result.epsilon)}. Papernot et al. 2018 (Section 4.2): the cost of these answers "
            f"given the actual votes, at Rényi order {p.order:.3g}, plus Gaussian noise scaled by its smooth "
            f"sensitivity (β = {p.beta:.3g}, σ = {format_noise(p.sigma_ss)}); the value includes that release's own "
            f"Rényi cost at that order ({format_epsilon(p.cost)}) and the conversion to (ε, δ) "
            f"({format_epsilon(conversion)}). It is small when the teachers agree, and may be published.")


def release_cost_caption(result: PateResult) -> str | None:
    """What releasing the data-dependent ε added to the ε spent (None when nothing was released)."""
    if result.released is None:
        return None
    return (f"Includes releasing the data-dependent ε: the answers alone cost ε = "
            f"{format_epsilon(result.epsilon_answers)}, the release adds "
            f"{format_epsilon(result.epsilon - result.epsilon_answers)} (Papernot et al. 2018, Theorem 23, or the "
            "exact Rényi divergence of two neighbours' releases where the theorem falls below it; composed at each "
            "Rényi order)." + (" The total is the RDP accountant's: a PLD cannot hold the release's Rényi "
                                       "bound." if result.config.accountant == "pld" else ""))


def release_withheld_text(result: PateResult) -> str | None:
    """Why the data-dependent ε asked for was not released (None when it was, or was not asked)."""
    if result.released is not None or result.epsilon_data_dependent is None:
        return None
    if result.release_withheld is not None:
        alone, target = format_epsilon(result.release_withheld), result.config.target_epsilon
        return (f"The data-dependent ε is not released: releasing it alone would cost ε = {alone}, not less than the "
                f"target {target:g}, so the answers spend the whole target. Raise ε above {alone} to release it.")
    return ("The data-dependent ε cannot be released privately for this noise: the smooth-sensitivity conditions "
            "of Papernot et al. 2018 do not hold. Try a larger noise.")


def lnmax_caption(result: PateResult) -> str:
    """What LNMax's ε adds up from: each answer's pure ε 2γ (rounded up, as every ε shown), then basic composition."""
    return (f"LNMax: each answer is (2γ = {format_epsilon(2 / result.noise_scale)})-DP, so basic composition gives "
            f"ε = {format_epsilon(result.epsilon_pure)} at δ = 0; with δ > 0 the accountant's bound is used if "
            "smaller.")


def noise_used_caption(result: PateResult) -> str:
    """Which noise the run used and the ε it cost, whichever of the two the visitor set."""
    cfg = result.config
    name = noise_name(cfg.aggregator)
    answers = result.epsilon if result.epsilon_answers is None else result.epsilon_answers  # the release apart
    spent = (f"{cfg.queries} {'query costs' if cfg.queries == 1 else 'queries cost'} "
             f"ε = {format_epsilon(answers)}")
    if cfg.aggregator == "confident":
        spent = (f"{cfg.queries} examined {'query' if cfg.queries == 1 else 'queries'}, each checked (σ₁ = "
                 f"{cfg.sigma1:.3g}) and in the worst case answered, cost ε = {format_epsilon(answers)}")
    if cfg.noise_scale is None and result.released is not None:  # the release shares the target with the answers
        return (f"Used: {name} = {format_noise(result.noise_scale)}, calibrated so that {spent} and releasing the "
                f"data-dependent ε costs the rest: ε = {format_epsilon(result.epsilon)} together, within the target "
                f"{cfg.target_epsilon:g} (δ = {result.delta:g}).")
    if cfg.noise_scale is None:
        return (f"Used: {name} = {format_noise(result.noise_scale)}, calibrated so that {spent} "
                f"(target {cfg.target_epsilon:g}, δ = {result.delta:g}).")
    return f"Used: {name} = {format_noise(result.noise_scale)} as set; {spent} (δ = {result.delta:g})."


def pate_warnings(result: PateResult, *, n_classes: int, chance: float) -> list[str]:
    """Plain-language warnings when the teachers have too little data to learn anything."""
    out = []
    per = float(np.mean(result.partition_sizes))
    if per < n_classes:
        out.append(f"Too few examples per teacher: {result.config.teachers} teachers share "
                   f"{int(np.sum(result.partition_sizes))} private examples, about {per:.3g} each for {n_classes} "
                   "classes. A teacher that never saw a class can never vote for it; use fewer teachers or more "
                   "data (the default keeps about two examples per class for each teacher).")
    # the vote, not one teacher: hundreds of teachers each barely above chance can still vote well together
    # (Adult: one teacher 0.756, the noiseless vote 0.83, against 0.751 for the most common class)
    if result.ensemble_accuracy < chance + 0.1 * (1.0 - chance):
        out.append(f"The teachers' vote is barely better than guessing the most common class (the noiseless vote's "
                   f"test accuracy {result.ensemble_accuracy:.3f} vs {chance:.3f}; one teacher's "
                   f"{result.teacher_mean_accuracy:.3f}): their votes carry little information, so neither the "
                   "noisy labels nor the student can be good.")
    elif result.student_accuracy <= chance:  # good teachers, but the noise drowned their answers
        out.append(f"The student is no better than always answering the most common class (test accuracy "
                   f"{result.student_accuracy:.3f} vs {chance:.3f}), although the teachers' noiseless vote gets "
                   f"{result.ensemble_accuracy:.3f}: at this ε the noise drowned their answers (only "
                   f"{result.label_accuracy:.1%} of the noisy labels are right). Raise ε, or answer fewer queries "
                   "so each gets less noise.")
    return out


def history_display(history: pd.DataFrame) -> pd.DataFrame:
    """The per-query history as shown (``epoch`` duplicates ``queries``)."""
    return readable_table(history, drop=("epoch",), labels={
        "queries": "queries answered", "epsilon": "ε (data-independent)",
        "label_accuracy": "noisy-label accuracy so far",
        "answered": "queries answered (passed the check)",
        "epsilon_data_dependent": "ε data-dependent (NOT private, do not publish)"})


def sweep_display(df: pd.DataFrame) -> pd.DataFrame:
    """A sweep table with readable headers, 3 significant figures."""
    return readable_table(df, digits=3, labels={
        "noise_scale": "noise scale", "teacher_accuracy": "mean teacher accuracy",
        "ensemble_accuracy": "noiseless vote accuracy", "label_accuracy": "noisy-label accuracy",
        "student_accuracy": "student accuracy", "nonprivate_accuracy": "non-private model accuracy",
        # a mean over teachers (53.9 with 20 teachers): each teacher holds a whole number of examples
        "examples_per_teacher": "examples per teacher (mean)", "mean_vote_gap": "mean vote gap"})


def split_table(result: PateResult) -> pd.DataFrame:
    sizes = result.split_sizes
    parts = result.partition_sizes
    size = f"{parts.min()}" if parts.min() == parts.max() else f"{parts.min()}–{parts.max()}"
    public = (f"{len(result.votes)} k-means clusters, one noisy vote each; every input takes its cluster's label"
              if result.cluster_of_public_row is not None
              else f"unlabelled inputs; {result.config.queries} of them labelled by the noisy vote")
    return pd.DataFrame([
        {"part": "private (teachers)", "examples": sizes["private (teachers)"],
         "used for": f"{len(parts)} disjoint partitions of {size} labelled examples, one per teacher"},
        {"part": "public (student)", "examples": sizes["public (student, unlabelled)"],
         "used for": public},
        {"part": "test", "examples": sizes["test"], "used for": "accuracy of teachers, student and baseline"},
    ])


#: pixels above the data split's bar for its legend: two rows of Plotly's legend (about 24 px each)
SPLIT_LEGEND_ROOM = 60


def split_figure(result: PateResult) -> go.Figure:
    t = split_table(result)
    fig = go.Figure()
    for (_, r), c in zip(t.iterrows(), [palette.VERMILLION, palette.BLUE, palette.GREY]):
        fig.add_bar(y=["data"], x=[r.examples], name=f"{r.part}: {r.examples}", orientation="h", marker_color=c)
    # the legend in the bar's order, above it, in a top margin that holds it in two rows: on a 390 px phone its three
    # entries take two, and in a 140 px figure with a 10 px margin its opaque box covered the bar's top but for a grey
    # stub at the bar's end (see-through now, so an overlap could never hide the data)
    fig.update_layout(barmode="stack", height=190, margin=dict(t=SPLIT_LEGEND_ROOM, b=30, l=10, r=10),
                      xaxis_title="examples", yaxis_visible=False,
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0, traceorder="normal", maxheight=1,
                                  bgcolor="rgba(0,0,0,0)"))
    return fig


def vote_table(result: PateResult, i: int, class_names: tuple[str, ...]) -> pd.DataFrame:
    """The numbers behind :func:`votes_figure`: votes, votes plus noise, and the noisy winner."""
    v, nv = result.votes[i], result.noisy_votes[i]
    names = [class_names[j] if j < len(class_names) else str(j) for j in range(v.size)]
    return readable_table(pd.DataFrame({
        "class": names, "votes": v, "noisy": nv,
        "winner": ["✔" if j == int(result.noisy_labels[i]) else "" for j in range(v.size)]}),
        digits=3, labels={"votes": "teacher votes", "noisy": "votes + noise", "winner": "noisy winner"})


def votes_figure(result: PateResult, i: int, class_names: tuple[str, ...]) -> go.Figure:
    """Teacher votes for query ``i`` (bars), the votes plus noise (markers), the noisy winner highlighted."""
    v, nv = result.votes[i], result.noisy_votes[i]
    win, truth = int(result.noisy_labels[i]), int(result.true_public_labels[i])
    names = [class_names[j] if j < len(class_names) else str(j) for j in range(v.size)]
    fig = go.Figure()
    # the legend in the table's words ("teacher votes", "votes + noise"), not the paper's n_j and argmax; the winner's
    # bar is dark blue and hatched, the others pale blue; the noisy counts are vermillion diamonds
    # with a black rim (Okabe-Ito colours that stay apart under colour-vision deficiencies, told apart by shape too)
    fig.add_bar(x=names, y=v, name="teacher votes (hatched: the noisy winner)",
                marker=dict(color=[palette.BLUE if j == win else palette.SKY_BLUE for j in range(v.size)],
                            pattern=dict(shape=["/" if j == win else "" for j in range(v.size)])))
    fig.add_scatter(x=names, y=nv, mode="markers",
                    marker=dict(symbol="diamond", size=13, color=palette.VERMILLION,
                                line=dict(color="black", width=1.5)),
                    name="votes + noise (the largest wins)")
    if win >= 0:
        fig.add_annotation(x=names[win], y=max(v[win], nv[win]), text="noisy winner", showarrow=True, arrowhead=2,
                           ay=-35)
    else:  # Confident-GNMax: the check failed, nothing was released for this query
        top = int(np.argmax(v))
        fig.add_annotation(x=names[top], y=max(v[top], nv[top]), showarrow=True, arrowhead=2, ay=-35,
                           text="not answered: the consensus check failed (no label released)")
    if float(np.min(nv)) < 0:  # say why the axis goes below zero, in the legend (a label on the line hid diamonds)
        fig.add_hline(y=0, line=dict(color=palette.BLACK, width=1))
        fig.add_scatter(x=[None], y=[None], mode="lines", line=dict(color=palette.BLACK, width=1),
                        name="zero votes (below it: noise only, no teacher votes)")
    truth_of = ("most common true label in this cluster" if result.config.query_mode == "clusters"
                else "true label of this example")
    # the legend under the axis title, not above the plot: on a phone its three lines reached down into the plot,
    # where the "noisy winner" label printed over them
    fig.update_layout(xaxis_title=f"class ({truth_of}: {names[truth]})", xaxis_type="category",
                      yaxis_title="number of teachers (votes)", height=460, margin=dict(t=40, b=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.22))
    return fig


def epsilon_queries_figure(history: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    fig.add_scatter(x=history.queries, y=history.epsilon, mode="lines+markers", name="data-independent (dp_accounting)",
                    **palette.line_and_marker(0))
    if "epsilon_data_dependent" in history:
        fig.add_scatter(x=history.queries, y=history.epsilon_data_dependent, mode="lines+markers",
                        name="data-dependent (Papernot 2018 Thm 6): NOT a guarantee, do not publish",
                        **palette.line_and_marker(1))
    fig.update_layout(xaxis_title="queries answered", yaxis_title="ε spent (δ fixed)", height=340,
                      margin=dict(t=30, b=40), legend=dict(orientation="h", y=1.15),
                      yaxis_rangemode="nonnegative")  # an ε of exactly 0 (a tiny target) drew from -1 to 1
    return fig


_ACC_LINES = [("teacher_accuracy", "mean teacher", palette.line_and_marker(4)),
              ("ensemble_accuracy", "noiseless teacher vote", palette.line_and_marker(2)),
              ("label_accuracy", "noisy labels (vs true public labels)", palette.line_and_marker(3)),
              ("student_accuracy", "student", palette.line_and_marker(0, width=3))]


def _chance_line(fig: go.Figure, x, chance: float | None) -> None:
    if chance is not None and len(x):
        fig.add_scatter(x=[min(x), max(x)], y=[chance] * 2, mode="lines", line=dict(color=palette.GREY, dash="dot"),
                        name=f"chance: always the most common class ({chance:.2f})")


def epsilon_sweep_figure(df: pd.DataFrame, chance: float | None = None) -> go.Figure:
    fig = go.Figure()
    for col, name, style in _ACC_LINES:
        fig.add_scatter(x=df.epsilon, y=df[col], mode="lines+markers", name=name, **style)
    if len(df):
        fig.add_scatter(x=[df.epsilon.min(), df.epsilon.max()], y=[df.nonprivate_accuracy.iloc[0]] * 2, mode="lines",
                        name="non-private model on all private data", line=dict(color=palette.BLACK, dash="longdash"))
    _chance_line(fig, list(df.epsilon), chance)
    palette.epsilon_bands(fig, list(df.epsilon))
    fig.update_layout(xaxis_title="ε for the answered queries — log scale", xaxis_type="log",
                      yaxis_title="accuracy (fraction correct)", yaxis_range=[0, 1], height=420,
                      margin=dict(t=30, b=40), legend=dict(orientation="h", y=-0.25))
    return readable_log_ticks(fig, "x")


def teachers_sweep_figure(df: pd.DataFrame, chance: float | None = None) -> go.Figure:
    fig = go.Figure()
    for col, name, style in _ACC_LINES:
        fig.add_scatter(x=df.teachers, y=df[col], mode="lines+markers", name=name, **style)
    _chance_line(fig, list(df.teachers), chance)
    fig.update_layout(xaxis_title="number of teachers (each gets 1/teachers of the private data) — log scale",
                      xaxis_type="log", yaxis_title="accuracy (fraction correct)", yaxis_range=[0, 1], height=420,
                      margin=dict(t=30, b=40), legend=dict(orientation="h", y=-0.25))
    return readable_log_ticks(fig, "x")


def sweep_progress(bar, total: int, what: str) -> Callable:
    def cb(i, value, row) -> None:
        bar.progress((i + 1) / total, text=f"{what} {value:g}: student accuracy {row['student_accuracy']:.3f}")

    return cb


def example_image(dataset, result: PateResult, i: int, seed: int) -> np.ndarray | None:
    """The public example behind query ``i`` as a grey image in [0, 1] (image datasets only)."""
    if dataset.image_shape is None:
        return None
    from ..pate import pate_split

    d = pate_split(train_test_split(data_arg(dataset), seed=seed), public_fraction=result.config.public_fraction,
                   seed=seed)
    return d.X_public[result.query_index[i]].reshape(dataset.image_shape)
