"""Registers ``dp-fedavg``, ``fedavg-local-dp`` and ``fedavg`` with the shared learner registry.

``params`` (all optional): ``clients``, ``rounds``, ``client_fraction``, ``local_epochs``,
``batch_size``, ``learning_rate``, ``server_learning_rate``, ``model`` ("softmax" | "mlp"),
``hidden``, ``non_iid``, ``shards_per_client``; private variants also ``clip_norm``,
``noise_multiplier`` (without it, sigma is calibrated so the run costs ``epsilon``) and
``accountant``. Epsilon is user-level (a client's whole data is the unit of privacy).
"""
from __future__ import annotations

import functools
import math

from ..datasets.transforms import scale_to_unit_interval
from ..learners import register
from ..learners.base import LearnerSpec, ReleasedModel, RunResult, TestOutputs, class_labels
from ..learners.knobs import ACCOUNTANT_LABELS, ACCOUNTANT_PAGE_HELP, Knob, Wording, config_defaults
from .config import FedAvgConfig

#: FedAvgConfig's defaults: the knobs declare the same (one source for the library, the command line and the pages)
_CONFIG = config_defaults(FedAvgConfig)


def default_clients(split) -> int:
    """About 3 examples per client, at most 1 000 clients (user-level DP needs many clients per round)."""
    return max(2, min(1000, split.X_train.shape[0] // 3))


#: Rounds by budget: ROUNDS_PER_EPSILON per unit of epsilon, from MIN_ROUNDS to MAX_ROUNDS, in federations of at
#: least SMALL_FEDERATION clients, MAX_ROUNDS in smaller ones; NONPRIVATE_ROUNDS without privacy.
ROUNDS_PER_EPSILON, MIN_ROUNDS, MAX_ROUNDS, NONPRIVATE_ROUNDS, SMALL_FEDERATION = 25, 20, 100, 50, 100


def default_rounds(epsilon: float | None, clients: int | None = None) -> int:
    """Communication rounds for a user-level budget ``epsilon`` over ``clients`` clients.

    Every round spends budget, so a small epsilon buys few rounds with little noise each and a large one many:
    ``25 epsilon`` rounds, from 20 to 100. Below 100 clients (about 20 per round) the model learns too little per
    round to stop early: 100 rounds, whatever the budget. 50 without privacy. Chosen on validation rows of every
    classification dataset (``python bench/fedavg_rounds.py``, against 20, 50 and 100 rounds): on MNIST 5k 20
    rounds beat 50 and 100 at epsilon 0.5 (0.69 / 0.62 / 0.55), 50 was best at 2 and 100 at 4 (0.87 / 0.86);
    digits and breast cancer gain as well and Adult is flat within 0.01; on iris, wine and faces (about 30 to 40
    clients) 100 rounds were best at almost every epsilon.

    >>> [default_rounds(e, 1000) for e in (0.5, 1, 2, 4, 8)], default_rounds(0.5, 40), default_rounds(None)
    ([20, 25, 50, 100, 100], 100, 50)
    """
    if epsilon is None or not math.isfinite(float(epsilon)):
        return NONPRIVATE_ROUNDS
    if clients is not None and clients < SMALL_FEDERATION:
        return MAX_ROUNDS
    return int(min(MAX_ROUNDS, max(MIN_ROUNDS, round(ROUNDS_PER_EPSILON * float(epsilon)))))


def _rounds_for(epsilon: float | None, split) -> int:
    return default_rounds(epsilon, None if split is None else default_clients(split))


#: The federation's knobs. The defaults were chosen on a validation fifth of MNIST 5k's TRAINING rows (3 seeds),
#: never the test rows: clients N in 20-3000, q in 0.2-1, clip S in 0.3-3, client learning rate 0.5-2, 30 or 50
#: rounds, at epsilon 2 and 4. User-level DP hides one whole client, so the noise on the average falls only as qN
#: grows: 20 clients (qN = 10) gave ~0.5 validation accuracy whatever else was tuned; 1 000 clients of ~4 examples
#: each, q = 0.2 (qN = 200) gave ~0.86 at epsilon 4 against ~0.87 without privacy.
COMMON_KNOBS = (
    Knob("clients", "int", low=1, high=100_000, shared=True, label="Clients N", default_from=default_clients,
         help="number of clients the training rows are split across (default: ~3 examples each, at most 1000)"),
    Knob("rounds", "int", low=1, high=10_000, shared=True, label="Rounds", by_epsilon=_rounds_for,
         help="communication rounds (default: 25 per unit of ε, from 20 to 100; 100 below 100 clients; 50 "
              "without privacy)"),
    Knob("client_fraction", "float", default=_CONFIG["client_fraction"], low=0.0, low_open=True, high=1.0, shared=True,
         label="Client fraction q (Poisson sampling rate)",
         help="expected share of clients sampled per round (Poisson)"),
    Knob("local_epochs", "int", default=_CONFIG["local_epochs"], low=1, high=100, shared=True, advanced=True,
         label="Local epochs",
         help="passes over its own data each sampled client makes"),
    Knob("batch_size", "int", default=_CONFIG["batch_size"], low=1, high=100_000, shared=True, advanced=True,
         label="Client batch size", help="minibatch size of the clients' local SGD"),
    Knob("learning_rate", "float", default=_CONFIG["learning_rate"], low=0.0, low_open=True, high=100.0, log=True,
         shared=True,
         label="Client learning rate", help="step size of the clients' local SGD"),
    Knob("server_learning_rate", "float", default=_CONFIG["server_learning_rate"], low=0.0, low_open=True,
         high=100.0, shared=True,
         advanced=True, label="Server learning rate", help="step size of the server's averaged update"),
    Knob("model", "choice", default=_CONFIG["model"], choices=("softmax", "mlp"), shared=True, label="Model",
         choice_labels={"softmax": "Softmax regression", "mlp": "Small neural network"},
         help="softmax regression or an MLP"),
    Knob("hidden", "int", default=_CONFIG["hidden"], low=1, high=4096, shared=True, advanced=True, label="Hidden width",
         when={"model": ("mlp",)},
         help="hidden units of the MLP"),
    Knob("non_iid", "bool", default=_CONFIG["non_iid"], shared=True, label="Label-skewed (non-IID) clients",
         help="give each client only a few classes (shards) instead of an IID share"),
    Knob("shards_per_client", "int", default=_CONFIG["shards_per_client"], low=1, high=100, shared=True, advanced=True,
         label="Shards per client", when={"non_iid": (True,)}, help="classes per client when non_iid",
         page_help="How many label-sorted shards (about one class each) every client holds when clients are "
                   "label-skewed."),
)
PRIVATE_KNOBS = COMMON_KNOBS + (
    Knob("clip_norm", "float", default=_CONFIG["clip_norm"], low=0.0, low_open=True, high=1e6, log=True, privacy=True,
         label="Clip norm S of each client update", help="each client update is clipped to this L2 norm"),
    Knob("noise_multiplier", "float", low=0.0, low_open=True, high=1e4, log=True, privacy=True,
         label="Noise multiplier σ, noise std = σ·S", help="noise std = σ·S; omitted: calibrated from epsilon"),
    Knob("accountant", "choice", default=_CONFIG["accountant"], choices=("rdp", "pld"), privacy=True, advanced=True,
         label="Accountant", help="rdp or pld", choice_labels=ACCOUNTANT_LABELS, page_help=ACCOUNTANT_PAGE_HELP),
)


def fedavg_config(split, mode: str, *, epsilon, delta, seed, params, secure: bool = False) -> FedAvgConfig:
    """The :class:`FedAvgConfig` for ``params`` (knob values; a missing or None one takes the knob's default on
    ``split``, the rounds from the budget by :func:`default_rounds`). ``mode`` is "central" (DP-FedAvg), "local"
    or "none". With ``noise_multiplier`` set the noise is fixed and ``epsilon`` is not used; without it sigma is
    calibrated to ``epsilon``. The command line, sweeps and the Federated page all build their runs here."""
    kw = {k: v for k, v in dict(params).items() if v is not None}
    if mode == "none":  # no clipping, no noise: the privacy knobs do not apply
        kw = {k: v for k, v in kw.items() if k not in ("clip_norm", "noise_multiplier", "accountant")}
    calibrated = mode != "none" and kw.get("noise_multiplier") is None
    kw.setdefault("clients", default_clients(split))
    kw.setdefault("rounds", default_rounds(epsilon if calibrated else None, kw["clients"]))
    if calibrated:
        kw["target_epsilon"] = epsilon
    if split.task == "classification":  # declared class shares: each round's evaluation answers as the final one
        kw["class_shares"] = tuple(getattr(split.dataset, "class_shares", ()) or ())
    return FedAvgConfig(mode=mode, delta=delta, seed=seed, secure=secure, **kw)


def _runner(name: str, mode: str):
    def run(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
        from .fedavg import train_fedavg_split  # with torch: listing the learners does not load it

        cfg = fedavg_config(split, mode, epsilon=epsilon, delta=delta, seed=seed, params=params)
        r = train_fedavg_split(split, cfg, on_epoch=on_epoch)
        extras = {"client_sizes": r.client_sizes, "client_label_counts": r.client_label_counts,
                  "seconds_per_round": r.seconds_per_round}
        event = None if mode == "none" else r.dp_event
        # the global model: its inputs scaled to [0, 1] by the declared bounds, as train_fedavg_split scales them
        model = ReleasedModel(r, tuple(str(c) for c in split.dataset.feature_names),
                              functools.partial(scale_to_unit_interval, bounds=split.dataset.bounds, warn=False),
                              class_labels(split), dp_event=event)
        return RunResult(name, split.dataset.name, split.task, {"accuracy": r.accuracy}, r.epsilon, r.delta,
                         noise_multiplier=r.noise_multiplier, seconds=r.seconds, history=r.history, extras=extras,
                         event=event, neighbouring=r.neighbouring, unit=r.unit, federation=r.federation,
                         test_outputs=TestOutputs(r.test_proba, "probability"), model=model)

    return run


#: The private federated learners' default ε (the Federated page and ``train`` open on it): a client's whole data is
#: protected at once (user-level DP), which costs more noise than a record's at the same ε.
FEDERATED_EPSILON = 4.0
#: Federated learning protects a client (user-level DP), all of its records at once.
_USER_LEVEL = Wording(protects="each client's whole data, all of its records at once (user-level DP)")
register(LearnerSpec(
    "dp-fedavg", "DP-FedAvg (server noise, user-level DP)", ("classification",), True, _runner("dp-fedavg", "central"),
    knobs=PRIVATE_KNOBS, config=FedAvgConfig, baseline="fedavg", default_epsilon=FEDERATED_EPSILON,
    wording=_USER_LEVEL,
    description="Federated averaging with Poisson client sampling, per-client update clipping and Gaussian noise "
                "at the server (McMahan et al. 2018); user-level DP accounted by dp_accounting."))
register(LearnerSpec(
    "fedavg-local-dp", "FedAvg with local DP (client noise)", ("classification",), True,
    _runner("fedavg-local-dp", "local"), knobs=PRIVATE_KNOBS, config=FedAvgConfig, baseline="fedavg",
    default_epsilon=FEDERATED_EPSILON, wording=_USER_LEVEL,
    description="Each client clips and noises its own update before sending: private even from the server, "
                "at a much larger noise cost."))
register(LearnerSpec(
    "fedavg", "FedAvg (non-private)", ("classification",), False, _runner("fedavg", "none"),
    knobs=COMMON_KNOBS, config=FedAvgConfig, uses_delta=False,
    description="Federated averaging (McMahan et al. 2017) with no clipping and no noise."))
