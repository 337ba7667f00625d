"""Streamlit side of the Federated page: memoised runs drawn live, client-data and per-round charts, sweeps."""
from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..datasets import train_test_split
from ..federated import FedAvgConfig, FedAvgResult, train_fedavg_split
from ..federated.learners import SMALL_FEDERATION, fedavg_config
from ..learners import get_learner
from . import palette
from .common import (
    format_epsilon,
    format_noise,
    readable_table,
    shared_call,
)
from .common import remembered as _remembered
from .live import BAR_SECONDS, CHART_SECONDS, Every
from .sweep import ROLE_LABELS
from .uploads import data_key

MODE_LABELS = {
    "central": "DP-FedAvg: clip, noise added by the server (McMahan et al. 2018)",
    "local": "Local DP: each client noises its own update",
    "none": "FedAvg, non-private (McMahan et al. 2017)",
}
LEARNER_OF_MODE = {"central": "dp-fedavg", "local": "fedavg-local-dp", "none": "fedavg"}
PRIVACY_MODES = ("target ε", "noise multiplier")

#: The learner whose knobs the page draws (DP-FedAvg's: the other variants take a subset).
FED_SPEC = get_learner("dp-fedavg")
#: Knobs the page places itself (rounds: an empty box means "from ε"); the rest go under "More settings".
PAGE_DRAWN = ("clients", "rounds", "client_fraction", "non_iid", "clip_norm", "noise_multiplier", "local_epochs",
              "learning_rate", "model")

#: Where the σ box starts when privacy is set by σ (otherwise σ is calibrated from ε): about the same ε as the
#: default budget on MNIST 5k.
SIGMA_START = 2.0


#: The dataset the page opens on.
START_DATASET = "mnist5k"


def page_defaults(dataset: str = START_DATASET) -> dict:
    """The federation's defaults on ``dataset``: the ``dp-fedavg`` learner's declared knobs and budget (how they
    were chosen is in :mod:`dpcore.federated.learners`; the command line uses the same)."""
    return {**FED_SPEC.defaults(train_test_split(dataset, seed=0)), "epsilon": FED_SPEC.default_epsilon}


def page_config(dataset: str, mode: str, *, epsilon: float, delta: float, seed: int, params: dict,
                secure: bool) -> FedAvgConfig:
    """The run the page's boxes ask for, built by the learner's own
    :func:`~dpcore.federated.learners.fedavg_config` (as on the command line)."""
    return fedavg_config(train_test_split(dataset, seed=0), mode, epsilon=epsilon, delta=delta, seed=seed,
                         params=params, secure=secure)


def rounds_caption(config: FedAvgConfig, *, calibrated: bool) -> str:
    """How many rounds the budget's rule gave, and why (the rounds box was left empty)."""
    if not calibrated:
        return f"{config.rounds} rounds (the default without a target ε)."
    if config.clients < SMALL_FEDERATION:
        return f"{config.rounds} rounds (the default below {SMALL_FEDERATION} clients)."
    return f"{config.rounds} rounds, from the rule (25 per unit of ε, 20 to 100)."


#: Per-round statistics of the private run itself: shown apart, labelled as not covered by ε. The number of clients
#: who took part is one: DP-FedAvg's accounting amplifies by sampling, which holds only while who joined a round (and
#: so how many did: Binomial(N, q) or one more) stays secret (McMahan et al. 2018, fixed-denominator estimator).
DIAGNOSTIC_COLUMNS = ("clients", "clipped_fraction", "max_sent_norm")
HISTORY_LABELS = {"accuracy": "test accuracy", "balanced_accuracy": "test balanced accuracy", "loss": "test loss",
                  "epsilon": "ε so far (user level)",
                  "clients": "clients this round", "server_step_norm": "server step size (L2 norm)",
                  "clipped_fraction": "share of updates clipped", "max_sent_norm": "largest update norm sent"}
#: At most this many clients are drawn in the "who holds what" heatmap.
HEATMAP_CLIENTS = 50
_STORE = "fed.runs"
_MAX_KEPT = 12


def remembered(key: tuple, compute: Callable[[], object]):
    """Memoise ``compute()`` in this session under the hashable ``key`` (see :func:`dpcore.ui.common.remembered`)."""
    return _remembered(_STORE, key, compute, max_kept=_MAX_KEPT)


def cached_fedavg(dataset: str, config: FedAvgConfig, on_epoch: Callable | None = None) -> FedAvgResult:
    """One federated run on ``dataset`` (a registry name, or a visitor's uploaded Dataset: then this session's alone,
    see :func:`dpcore.ui.shared_call`), split seeded by ``config.seed``, memoised per session."""
    def run(progress):
        return train_fedavg_split(train_test_split(dataset, seed=config.seed), config, on_epoch=progress)

    # one run for every visitor asking the same, followed live by each
    key = data_key(dataset)
    return remembered(("run", key, config), lambda: shared_call(("fedavg", key, config), run, on_progress=on_epoch))


def non_private_twin(config: FedAvgConfig) -> FedAvgConfig:
    """The same federation, sampling and local training with no clipping and no noise."""
    return dataclasses.replace(config, mode="none", noise_multiplier=None, target_epsilon=None)


def federation_warnings(config: FedAvgConfig) -> list[str]:
    """Plain-language warnings when there are too few clients for user-level DP to leave any signal."""
    out = []
    qn = config.client_fraction * config.clients
    if config.mode != "none" and qn < 10:
        sigma = config.noise_multiplier
        ratio = "" if sigma is None else (
            f" With σ = {format_noise(sigma)} the noise on the averaged update has std "
            f"{format_noise(sigma / (qn if config.mode == 'central' else qn ** 0.5))}·S per coordinate, against an "
            "averaged "
            "update of norm at most S.")
        out.append(f"Few clients: about qN = {qn:.3g} client(s) per round. User-level DP must hide a whole client, "
                   f"so the noise is sized to one client's update and averaged over only {qn:.3g}.{ratio} "
                   "Accuracy near chance is expected: DP-FedAvg is meant for thousands of clients "
                   "(McMahan et al. 2018).")
    return out


def chance_warning(config: FedAvgConfig, accuracy: float, chance: float | None) -> str | None:
    """A warning when a private run's model is barely better than always answering the most common class (within a
    tenth of the way from chance to perfect), with what to change for its mode; None otherwise."""
    if chance is None or config.mode == "none" or not accuracy < chance + 0.1 * (1.0 - chance):
        return None
    how = "no better than" if accuracy <= chance else "barely better than"
    return (f"The model is {how} always answering the most common class (test accuracy {accuracy:.3f} "
            f"vs {chance:.3f}): the noise drowned the clients' updates. " + _remedy(config))


def _remedy(config: FedAvgConfig) -> str:
    """What to change when the noise drowned the clients' updates, for the run's mode."""
    return ("Local DP noises every client's update before the server sees it, far more noise than the server adds "
            "in the central mode: compare with the central mode at this ε, or raise ε a lot." if config.mode == "local"
            else "Raise ε, sample more clients per round (the server's noise is divided by the qN clients "
                 "averaged), or run fewer rounds.")


def balanced_by_shares(dataset, config: FedAvgConfig, result: FedAvgResult,
                   reference: FedAvgResult | None) -> tuple[float, float | None, float] | None:
    """Where the run answers by declared class shares (``config.class_shares``): the private and the non-private
    model's balanced accuracy on the test rows (by the shares, from their released probabilities) and what
    answering one class scores in it (1/k); None elsewhere.

    Answering by the shares trades accuracy on the common class for the rare ones: on the 90/10 readmissions upload
    the page said "no better than always answering the most common class (test accuracy 0.641 vs 0.899)" of a model
    whose non-private twin scored 0.691 the same way.
    """
    from ..learners.decision import balanced_decision
    from ..learners.metrics import balanced_accuracy

    shares = tuple(config.class_shares or ())
    if not shares or result.test_proba is None:
        return None
    y = np.asarray(train_test_split(dataset, seed=config.seed).y_test)

    def of(run: FedAvgResult | None) -> float | None:
        if run is None or run.test_proba is None or len(run.test_proba) != y.size:
            return None
        return balanced_accuracy(y, balanced_decision(run.test_proba, shares))

    private = of(result)
    return None if private is None else (private, of(reference), 1.0 / len(shares))


def shares_warning(config: FedAvgConfig, balanced: float, one_class: float) -> str | None:
    """:func:`chance_warning` in balanced accuracy (:func:`balanced_by_shares`): a private model that finds each class
    barely better than answering one class."""
    if config.mode == "none" or not balanced < one_class + 0.1 * (1.0 - one_class):
        return None
    how = "no better than" if balanced <= one_class else "barely better than"
    return (f"Answering by the declared class shares, the model finds each class {how} answering one class "
            f"(balanced accuracy {balanced:.3f} vs {one_class:.3f}): the noise drowned the clients' updates. "
            + _remedy(config))


def sigma_used_caption(result: FedAvgResult) -> str:
    """Which noise multiplier the run used and the ε it cost, whichever of the two the visitor set."""
    cfg = result.config
    if not cfg.private:
        return "Non-private FedAvg: no clipping and no noise, so the clip norm, σ, ε and δ are not used."
    spent = (f"{cfg.rounds} {'round costs' if cfg.rounds == 1 else 'rounds cost'} ε = {format_epsilon(result.epsilon)} "
             "per client")
    if cfg.noise_multiplier is None:
        return (f"Used: σ = {format_noise(result.noise_multiplier)}, calibrated so that {spent} "
                f"(target {cfg.target_epsilon:g}, δ = {result.delta:g}).")
    return f"Used: σ = {format_noise(result.noise_multiplier)} as set; {spent} (δ = {result.delta:g})."


def noise_on_average(config: FedAvgConfig, noise_multiplier: float, n_params: int) -> tuple[float, float]:
    """(std per coordinate, expected L2 norm) of the noise in the averaged update the server applies.

    DP-FedAvg: the server adds N(0, (σS)²) per coordinate to the sum and divides by qN, so the std is
    σS/(qN). Local DP: each of the ~qN sampled clients adds N(0, (σS)²) itself, so the sum has std
    σS·√(qN) and the average σS/√(qN). A Gaussian vector over d coordinates has norm ≈ std·√d.

    >>> from dpcore.federated import FedAvgConfig
    >>> std, norm = noise_on_average(FedAvgConfig(clients=100, client_fraction=0.5, clip_norm=2.0,
    ...                              noise_multiplier=1.0), 1.0, 100)
    >>> round(std, 6), round(norm, 6)
    (0.04, 0.4)
    """
    qn = config.client_fraction * config.clients
    scale = noise_multiplier * config.clip_norm
    std = scale / qn if config.mode == "central" else scale / qn ** 0.5
    return std, std * n_params ** 0.5


def step_caption(config: FedAvgConfig, noise_multiplier: float | None, n_params: int) -> str:
    """What the "server step size" column measures, and how much of it the noise is expected to be."""
    head = (f"Server step size: how far the server moves the model in a round, the length (L2 norm) of the change "
            f"it makes to the model's d = {n_params:,} parameters")
    if config.mode == "none" or noise_multiplier is None:
        return head + ": the weighted average of the clients' updates (no clipping, no noise)."
    head += " (computed from the noisy models, so covered by ε)."
    std, norm = noise_on_average(config, noise_multiplier, n_params)
    qn = config.client_fraction * config.clients
    sigma = format_noise(noise_multiplier)  # rounded up, as the σ tile: never less noise than the server adds
    per = (f"σS/(qN) = {sigma}·{config.clip_norm:g}/{qn:.3g}" if config.mode == "central" else
           f"σS/√(qN) = {sigma}·{config.clip_norm:g}/√{qn:.3g}")
    return (head + f" It is the average of the clipped updates (norm at most S = {config.clip_norm:g}) plus the noise, "
            f"whose standard deviation in each parameter is {per} = {format_noise(std)}: a noise vector of length "
            f"(norm) about that × √d = {format_noise(norm)}.")


def gap_caption(config: FedAvgConfig, noise_multiplier: float | None, n_params: int, *, private_accuracy: float,
                nonprivate_accuracy: float | None, threshold: float = 0.05) -> str | None:
    """One line on why the private model is far below the non-private one (None when it is not)."""
    if (config.mode == "none" or noise_multiplier is None or nonprivate_accuracy is None
            or nonprivate_accuracy - private_accuracy < threshold):
        return None
    _, norm = noise_on_average(config, noise_multiplier, n_params)
    who = "the server's" if config.mode == "central" else "the clients' own"
    more = ("more clients per round (the noise is divided by qN)" if config.mode == "central" else
            "more clients per round (the noise only shrinks as √(qN))")
    return (f"Why the gap ({private_accuracy:.3f} vs {nonprivate_accuracy:.3f} without privacy): each round {who} "
            f"noise has norm about {norm:.3g}, {norm / config.clip_norm:.3g} times the largest possible averaged "
            f"update (S = {config.clip_norm:g}), so a step is mostly noise and only averaging over rounds recovers "
            f"the signal. {more[0].upper() + more[1:]}, a smaller model (fewer coordinates) or a larger ε narrow it.")


def sweep_display(table: pd.DataFrame, axis: str) -> pd.DataFrame:
    """A sweep's every-run table with readable headers and learner names, 3 significant figures."""
    from ..learners import get_learner

    out = table[["learner", "role", "value", "accuracy", "epsilon", "noise_multiplier"]].copy()
    out["learner"] = out.learner.map(lambda n: get_learner(n).title)
    out["role"] = out.role.map(lambda r: ROLE_LABELS.get(r, r))
    return readable_table(out, digits=3, labels={"learner": "model", "role": "kind", "value": axis.replace("_", " ")})


#: Room on the right for the last round's label: with none, Plotly dropped the "100" centred on the plot's edge.
ROUNDS_MARGIN = dict(t=30, b=40, r=24)


def round_ticks(rounds: int, most: int = 6) -> list[int]:
    """Round numbers for a per-round chart's x-axis: round 1, then multiples of a step of 1, 2 or 5 times a power of
    ten, at most ``most`` in all. Plotly's own choice for a narrow chart of 80 rounds (a column of presentation mode
    at 1280 x 720, or a phone) was a step of 50 from 0, which left the single tick "50" in the range [0.5, 80.5]."""
    step = 1
    while rounds // step + (step > 1) > most:  # 1, 2, 5, 10, 20, 50 ...
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2
    return [1, *range(step, rounds + 1, step)] if step > 1 else list(range(1, rounds + 1))


#: The per-round chart's metric: accuracy, or balanced accuracy where the data declares class shares (the tiles').
ROUND_METRICS = {"accuracy": "test accuracy (fraction correct)",
                 "balanced_accuracy": "test balanced accuracy (each class's share found, averaged)"}


def rounds_figures(history: pd.DataFrame, *, rounds: int, reference: pd.DataFrame | None = None,
                   private: bool = True, chance: float | None = None,
                   metric: str = "accuracy") -> tuple[go.Figure, go.Figure]:
    """The per-round charts: ``metric`` (:data:`ROUND_METRICS`) against its non-private reference and ``chance`` (in
    that metric: the most common class's share, or 1/k in balanced accuracy), and the ε spent."""
    acc = go.Figure()
    acc.add_scatter(x=history["round"], y=history[metric], mode="lines+markers", name="this run",
                    line=dict(width=3, color=palette.BLUE), marker=dict(symbol="circle"))
    if reference is not None:
        acc.add_scatter(x=reference["round"], y=reference[metric], mode="lines", name="non-private FedAvg",
                        line=dict(dash="dash", color=palette.BLACK))
    if chance is not None:
        acc.add_scatter(x=[0.5, rounds + 0.5], y=[chance, chance], mode="lines",
                        line=dict(dash="dot", color=palette.GREY), name=f"chance: most common class ({chance:.2f})")
    acc.update_layout(xaxis_title="round", yaxis_title=ROUND_METRICS[metric], yaxis_range=[0, 1],
                      xaxis_range=[0.5, rounds + 0.5], xaxis_tickvals=round_ticks(rounds), height=360,
                      margin=ROUNDS_MARGIN,
                      # anchored by its foot above the plot, so rows wrapped on a narrow column grow upwards: its top
                      # at 1.15 let three rows (presentation mode, 1280×720) lie over the curves near accuracy 0.9
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0, xanchor="left"))
    eps = go.Figure()
    if private:
        eps.add_scatter(x=history["round"], y=history.epsilon, mode="lines+markers", name="ε spent",
                        line=dict(width=3, color=palette.VERMILLION))
    else:
        eps.add_annotation(x=rounds / 2, y=0.5, text="non-private: ε = ∞", showarrow=False, font=dict(size=18))
    eps.update_layout(xaxis_title="round", yaxis_title="ε spent so far (user level, δ fixed)",
                      xaxis_range=[0.5, rounds + 0.5], xaxis_tickvals=round_ticks(rounds), height=360,
                      margin=ROUNDS_MARGIN, showlegend=False,
                      yaxis_rangemode="nonnegative")  # an ε of exactly 0 (a tiny target) drew from -1 to 1
    return acc, eps


_NO_ROUNDS = pd.DataFrame({"round": [], "accuracy": [], "balanced_accuracy": [], "epsilon": []})


def draw_reference(acc_slot, reference: pd.DataFrame, *, rounds: int, chance: float | None,
                   metric: str = "accuracy") -> None:
    """The non-private reference's curve alone, drawn while the private run starts (its noise is calibrated first,
    a second or so without a round to draw)."""
    a, _ = rounds_figures(_NO_ROUNDS, rounds=rounds, reference=reference, private=True, chance=chance, metric=metric)
    acc_slot.plotly_chart(a, width="stretch", key="fed.reference.acc")


def live_callback(bar, acc_slot, eps_slot, *, rounds: int, reference: pd.DataFrame | None, private: bool,
                  chance: float | None = None, of_reference: bool = False, metric: str = "accuracy"):
    """An ``on_epoch`` hook that moves the progress bar and redraws both per-round charts.

    ``of_reference``: the run is the non-private reference the private run is drawn against (it runs first): its
    curve grows on the accuracy chart from its first round, so the page shows progress at once, and the ε chart
    waits for the private run."""
    rows: list[dict] = []
    # the bar too: a round takes about 20 ms, and a redraw per round kept every browser following the run busy
    bar_due, chart_due = Every(BAR_SECONDS), Every(CHART_SECONDS)  # spaced more widely for a class (dpcore.ui.live)

    def cb(info) -> None:
        rows.append({"round": info["round"], "accuracy": info["accuracy"],
                     "balanced_accuracy": info.get("balanced_accuracy", math.nan), "epsilon": info["epsilon"]})
        last = info["round"] >= rounds
        if bar_due(last=last):
            bar.progress(info["round"] / rounds, text=(
                f"Non-private FedAvg, the reference: round {info['round']} / {rounds}, accuracy "
                f"{info['accuracy']:.3f}" if of_reference else
                f"round {info['round']} / {rounds}: accuracy {info['accuracy']:.3f}, "
                f"ε {format_epsilon(info['epsilon'])}"))
        if not chart_due(last=last):
            return
        history = pd.DataFrame(rows)
        a, e = rounds_figures(_NO_ROUNDS if of_reference else history, rounds=rounds,
                              reference=history if of_reference else reference, private=private, chance=chance,
                              metric=metric)
        which = "ref" if of_reference else "run"
        acc_slot.plotly_chart(a, width="stretch", key=f"fed.live.{which}.acc.{info['round']}")
        if not of_reference:
            eps_slot.plotly_chart(e, width="stretch", key=f"fed.live.eps.{info['round']}")

    return cb


def clients_figure(counts: np.ndarray, class_names: tuple[str, ...], max_clients: int = HEATMAP_CLIENTS) -> go.Figure:
    """Class counts of the first ``max_clients`` clients (a row per client; more would be an unreadable smear)."""
    counts = counts[:max_clients]
    names = [class_names[j] if j < len(class_names) else str(j) for j in range(counts.shape[1])]
    fig = go.Figure(go.Heatmap(z=counts, x=names, y=[f"client {i + 1}" for i in range(counts.shape[0])],
                               colorscale="Blues", colorbar=dict(title="examples")))
    fig.update_layout(xaxis_title="class", xaxis_type="category", yaxis_title="client",
                      height=max(260, 16 * counts.shape[0] + 80),
                      margin=dict(t=20, b=40), yaxis_autorange="reversed")
    return fig


def sweep_config(dataset: str, config: FedAvgConfig, params: dict, *, axis: str, values: tuple[float, ...],
                 epsilon: float, noise_multiplier: float | None):
    """A :class:`dpcore.sweep.SweepConfig` for Ma et al.'s (2021) figures: accuracy vs clip norm / noise level, the
    page's other knobs (``params``) and the run's rounds held fixed."""
    from ..sweep import SweepConfig

    params = {k: v for k, v in params.items() if v is not None and k not in ("clip_norm", "noise_multiplier")}
    params["rounds"] = config.rounds
    if axis == "clip_norm" and noise_multiplier is not None:
        params["noise_multiplier"] = noise_multiplier
    if axis == "noise_multiplier":
        params["clip_norm"] = config.clip_norm
    return SweepConfig(dataset=dataset, learners=(LEARNER_OF_MODE[config.mode],), axis=axis, values=values, seeds=1,
                       base_seed=config.seed, epsilon=epsilon, delta=config.delta, params=params)
