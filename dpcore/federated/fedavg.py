"""Federated averaging: non-private, DP-FedAvg (server noise) and local DP (client noise).

One round (McMahan et al. 2018, Algorithm 1, with the fixed-denominator estimator):

1. every client joins independently with probability q (``client_fraction``);
2. each sampled client k runs ``local_epochs`` of minibatch SGD from the global
   model and computes its update Delta_k = theta_k - theta;
3. private modes clip it: Delta_k * min(1, S / ||Delta_k||_2);
4. ``mode="central"`` (DP-FedAvg): the server adds N(0, sigma^2 S^2 I) to the sum of
   the clipped updates; ``mode="local"``: each client adds N(0, sigma^2 S^2 I) to its
   own clipped update before sending; either way the sum is divided by the
   expected number of clients qN;
   ``mode="none"`` (FedAvg, McMahan et al. 2017): the sampled clients' updates are
   averaged with weights proportional to their data sizes, no clipping, no noise;
5. theta <- theta + server_learning_rate * average.

References
----------
McMahan, Moore, Ramage, Hampson, Agüera y Arcas. "Communication-Efficient Learning
of Deep Networks from Decentralized Data." AISTATS 2017 (FedAvg).
McMahan, Ramage, Talwar, Zhang. "Learning Differentially Private Recurrent Language
Models." ICLR 2018 (DP-FedAvg, user-level DP).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import dp_accounting
import numpy as np
import pandas as pd
import torch

from ..accounting import calibrate
from ..datasets import Split
from ..datasets.transforms import scale_to_unit_interval
from ..exceptions import DPValueError
from ..mechanisms.gaussian_sum import GaussianSum
from ..rng import as_generator, bernoulli_threshold, child_seed, noise_generator, noise_mode, torch_generator
from ..runtime.workload import TORCH_THROUGHPUT, MemoryGuard, Work, check_work
from ..training.clipping import clip_factors
from ..training.engine import shares_shift
from ..types import ArrayLike
from ..validation import check_array, check_device, check_positive
from .accounting import (
    DP_FEDAVG_NEIGHBOURING,
    FEDERATED_UNIT,
    LOCAL_DP_NEIGHBOURING,
    dp_fedavg_epsilons,
    dp_fedavg_event,
    local_dp_epsilon,
    local_dp_event,
)
from .clients import label_counts, partition_clients
from .config import MODES, FedAvgConfig  # noqa: F401 (fedavg's names before config.py)
from .models import FlatModel, evaluate, local_sgd

EpochCallback = Callable[[Mapping[str, Any]], None]


def clip_updates(updates: torch.Tensor, *, clip_norm: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Scale every row of ``updates`` to L2 norm at most ``clip_norm``.

    Row i is multiplied by :func:`~dpcore.training.clipping.clip_factors`'s
    ``min(1, S / (||Delta_i|| + 1e-6))``, the rule the DP-SGD engine uses.
    Returns the clipped updates and the norms before clipping.

    A row whose norm is not finite (local SGD overflowed: inf or nan in the update, or entries whose norm overflows)
    is sent as a zero row: its factor C / (inf + 1e-6) is 0, and 0 * inf is nan, which no noise hides (the release
    would say with certainty that such a client took part). A zero row is within the clip norm and depends on that
    client's own data only, so the sensitivity, and the epsilon, stay as accounted.

    The updates are float32, and a row scaled by that factor has an exact norm up to a few units of 2**-24 above S
    (up to 2.7e-7 relative, on about half of the rows clipped: the norm, the factor and each product are rounded), above
    the sensitivity S the accounting's Gaussian is calibrated to. Every row is measured again in float64 and a row
    still above S is scaled a second time, to a margin inside the sphere that float32's rounding cannot cross.

    >>> u, n = clip_updates(torch.tensor([[3.0, 4.0], [0.3, 0.4], [float("inf"), 0.0]]), clip_norm=1.0)
    >>> [round(float(x), 6) for x in u.norm(dim=1)]
    [1.0, 0.5, 0.0]
    """
    clip_norm = check_positive(clip_norm, "clip_norm")
    norms = updates.norm(dim=1)
    clipped = updates * clip_factors(norms, clip_norm)[:, None]
    clipped = torch.where(torch.isfinite(norms)[:, None], clipped, torch.zeros_like(clipped))
    # measured in float64 (on the CPU: not every device has it), whose own error, about d units of 2**-53, is far
    # inside the margin; the second scaling is done in float64 and rounded to float32 once, each entry then within
    # 2**-24 of its value, so the row's norm is at most S (1 - 2**-20)(1 + 2**-24) < S
    sent = clipped.detach().to("cpu", torch.float64).norm(dim=1)
    over = sent > clip_norm
    if bool(over.any()):
        rows = torch.nonzero(over).flatten().to(clipped.device)
        shrink = (clip_norm / sent[over] * (1.0 - 2.0**-20)).to(clipped.device)
        clipped = clipped.clone()
        clipped[rows] = (clipped[rows].to(torch.float64) * shrink[:, None]).to(clipped.dtype)
    return clipped, norms


def noisy_server_average(
    clipped_sum: torch.Tensor,
    *,
    clip_norm: float,
    noise_multiplier: float,
    expected_clients: float,
    generator: torch.Generator,
) -> torch.Tensor:
    """DP-FedAvg's server step: ``(sum + N(0, sigma^2 S^2 I)) / (q N)``.

    The noise standard deviation on each coordinate of the returned average is
    ``noise_multiplier * clip_norm / expected_clients``.
    """
    std = check_positive(noise_multiplier, "noise_multiplier") * check_positive(clip_norm, "clip_norm")
    noisy = GaussianSum(std=std, sensitivity=clip_norm, generator=generator).release(clipped_sum)
    return noisy / check_positive(expected_clients, "expected_clients")


@dataclass(frozen=True, eq=False)
class FedAvgResult:
    """What a federated run gives back (numpy/pandas only).

    ``history`` has one row per round: ``round`` (and ``epoch``, the same),
    ``accuracy`` and ``loss`` on the test set, ``epsilon`` spent so far, ``clients``
    sampled, ``clipped_fraction`` and ``max_sent_norm`` (the largest update norm
    after clipping, before noise). The last two are diagnostics for the
    demonstration, computed from the private updates: a real deployment would
    not publish them.

    ``neighbouring`` (a property) says what ``epsilon`` protects: a client added or removed for DP-FedAvg, a client
    replaced for local DP (each report's Gaussian, sensitivity 2S), None without noise; a
    :class:`~dpcore.accounting.PrivacyLedger` given this result checks it against its own. ``unit`` is what of the
    data it protects: ``"clients"``, a client's whole data (which only a ledger of clients composes).
    """

    config: FedAvgConfig
    history: pd.DataFrame
    accuracy: float
    epsilon: float
    delta: float
    noise_multiplier: float | None
    client_sizes: np.ndarray
    client_label_counts: np.ndarray
    participation: np.ndarray  # (rounds, clients) bool
    dp_event: dp_accounting.DpEvent  # NonPrivateDpEvent() without clipping and noise
    params: np.ndarray
    seconds: float
    seconds_per_round: float
    test_proba: np.ndarray | None = None  # the global model's class probabilities on X_test
    #: which rows were dealt out to the clients, when known (:func:`train_fedavg_split`: the data set and its split)
    rows_from: str | None = None

    @property
    def neighbouring(self):
        """What ``epsilon`` protects, by the mode; None when the run is not private."""
        return {"central": DP_FEDAVG_NEIGHBOURING, "local": LOCAL_DP_NEIGHBOURING}.get(self.config.mode)

    @property
    def unit(self) -> str:
        """What of the data ``epsilon`` protects: a client's whole data, all of its records at once (user-level DP)."""
        return FEDERATED_UNIT

    @property
    def federation(self) -> str:
        """Which simulated federation ``epsilon`` protects a client of (:func:`federation_of`): runs of another one
        dealt the records out to other clients, so a client of one is no client of the other."""
        return federation_of(self.config, int(np.sum(self.client_sizes)), rows_from=self.rows_from)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """The released global model's class probabilities for rows already scaled as its training rows were."""
        X = check_array(X, "X", ndim=2)
        model = FlatModel(self.config.model, X.shape[1], int(self.test_proba.shape[1]), self.config.hidden)
        if model.n_params != self.params.size:
            raise DPValueError(f"X has {X.shape[1]} features, which the global model was not trained on")
        return _probabilities(model, torch.as_tensor(self.params), torch.as_tensor(X, dtype=torch.float32))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class indices (0..k-1) predicted by the released global model."""
        return self.predict_proba(X).argmax(1)


def federation_of(config: FedAvgConfig, rows: int, *, rows_from: str | None = None) -> str:
    """The simulated federation a run's clients belong to, in words: how many clients, how the records were dealt
    out to them (:func:`~dpcore.federated.clients.partition_clients`: IID or label shards, drawn from ``seed``) and
    from how many training rows, and ``rows_from`` which rows those are when it is known (a data set's split: another
    split of the same size deals other records out). Two runs of the same federation protect the same clients, and
    their client-level guarantees compose; two of different federations protect different groups of records (a client
    of one holds records of several clients of the other), which no one guarantee covers.

    Only public facts name the rows (the data set's name, the split's seed and test share), never a digest of them:
    that would tell one data set from its neighbour.

    >>> federation_of(FedAvgConfig(clients=10, seed=3, noise_multiplier=1.0), 1347)
    '10 clients (IID), the 1347 training rows dealt out with seed 3'
    >>> federation_of(FedAvgConfig(clients=10, seed=3, noise_multiplier=1.0), 1347, rows_from="'digits' split 0")
    "10 clients (IID), the 1347 training rows of 'digits' split 0 dealt out with seed 3"
    """
    how = f"non-IID, {config.shards_per_client} label shards each" if config.non_iid else "IID"
    of = f" of {rows_from}" if rows_from else ""
    return f"{config.clients} clients ({how}), the {rows} training rows{of} dealt out with seed {config.seed}"


@contextlib.contextmanager
def _one_torch_thread():
    """The per-round tensors are small: one thread avoids oversubscribing shared cores (restored after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _fixed_schedule(cfg: FedAvgConfig, rng: np.random.Generator) -> np.ndarray:
    """Poisson participation of every client in every round, drawn before (and independent of) the data."""
    # secret in secure mode; the rate rounded down to the draws' grid, so that a client joins at most as often as q
    return noise_generator(rng).random((cfg.rounds, cfg.clients)) < bernoulli_threshold(cfg.client_fraction)


def train_fedavg(
    X: ArrayLike,
    y: ArrayLike,
    config: FedAvgConfig,
    *,
    X_test: ArrayLike,
    y_test: ArrayLike,
    n_classes: int | None = None,
    on_epoch: EpochCallback | None = None,
    device: "str | torch.device" = "cpu",
) -> FedAvgResult:
    """Train a global model by (private) federated averaging over simulated clients.

    Parameters
    ----------
    X, y : arrays
        Training rows (already scaled, e.g. by :func:`train_fedavg_split`) and labels,
        to be spread over ``config.clients`` disjoint shards.
    config : FedAvgConfig
    X_test, y_test : arrays
        Evaluation set (the accuracy curve).
    n_classes : int, optional
    on_epoch : callable, optional
        Called after each round with ``{"epoch", "epochs", "round", "accuracy", "loss", "epsilon"}``.
    device : str or torch.device
        Where the global model, the clients' local models, their rows and the noise generator live
        (``"cuda"`` where present; one this machine lacks is refused with the reason); the result is brought back
        to the CPU.

    Returns
    -------
    FedAvgResult

    References
    ----------
    McMahan et al. 2017 (FedAvg) and 2018 (DP-FedAvg, Algorithm 1).
    """
    with _one_torch_thread(), noise_mode(config.secure):  # secure: every draw from the operating system
        return _train_fedavg(X, y, config, X_test=X_test, y_test=y_test, n_classes=n_classes, on_epoch=on_epoch,
                             device=check_device(device))


def fedavg_work(config: FedAvgConfig, n: int, n_features: int, n_classes: int) -> Work:
    """The work of one federated run, estimated before anything is allocated.

    Every round trains the expected ``q N`` sampled clients side by side (a ``(q N, parameters)`` block of
    local models and their batches) for ``local_epochs`` passes over their rows; the participation
    schedule holds ``rounds x N`` flags.
    """
    d, k, h = int(n_features), int(n_classes), int(config.hidden)
    params = d * k + k if config.model == "softmax" else d * h + h + h * k + k
    macs = params
    m = config.client_fraction * config.clients
    m = m + 3.0 * math.sqrt(m)  # Poisson participation: a busy round, not the average one
    rows = math.ceil(n / config.clients)
    batch = min(config.batch_size, max(rows, 1))
    local_steps = config.local_epochs * math.ceil(2 * rows / batch)
    acts = d + (0 if config.model == "softmax" else h) + k
    memory = 4.0 * (6 * m * params + 2 * m * batch * acts) + config.rounds * config.clients
    operations = 3.0 * config.rounds * config.local_epochs * config.client_fraction * n * macs \
        + 4.0 * config.rounds * m * params
    return Work(steps=config.rounds * local_steps, operations=operations, memory_bytes=memory, parameters=params,
                step_seconds=LOCAL_STEP_SECONDS, throughput=TORCH_THROUGHPUT,
                drivers={"seconds": [("rounds", config.rounds), ("local_epochs", config.local_epochs)],
                         "memory_bytes": ("hidden", h) if config.model == "mlp" else ("clients", config.clients)},
                resize=lambda name, v: fedavg_work(dataclasses.replace(config, **{name: v}), n, n_features, n_classes))


#: The fixed cost of one local SGD step of the sampled clients side by side (measured: Adult, 1000 clients, 100
#: local epochs, about 2 ms a step on this project's 2-core machine: 461 rounds of 200 steps in 180 s): with torch's
#: arithmetic, the time model of :func:`fedavg_work`.
LOCAL_STEP_SECONDS = 2e-3


def _privacy_plan(cfg, schedule: np.ndarray) -> tuple[float | None, np.ndarray, dp_accounting.DpEvent]:
    """The noise multiplier (calibrated to the target when not given), epsilon after each round and the run's event;
    they depend on the configuration and the public participation schedule only."""
    q = cfg.client_fraction
    sigma = cfg.noise_multiplier
    if cfg.mode == "central":
        if sigma is None:
            sigma = calibrate(lambda s: dp_fedavg_event(noise_multiplier=s, sample_rate=q, rounds=cfg.rounds),
                              target_epsilon=cfg.target_epsilon, delta=cfg.delta, accountant=cfg.accountant)
        eps_curve = dp_fedavg_epsilons(noise_multiplier=sigma, sample_rate=q, rounds=cfg.rounds, delta=cfg.delta,
                                       accountant=cfg.accountant)
        event = dp_fedavg_event(noise_multiplier=sigma, sample_rate=q, rounds=cfg.rounds)
    elif cfg.mode == "local":
        most = np.maximum.accumulate(np.cumsum(schedule, axis=0).max(axis=1))  # max participations so far
        if sigma is None:
            busiest = max(1, int(most[-1]))
            sigma = calibrate(lambda s: local_dp_event(noise_multiplier=s, participations=busiest),
                              target_epsilon=cfg.target_epsilon, delta=cfg.delta, accountant=cfg.accountant,
                              neighbouring=LOCAL_DP_NEIGHBOURING)
        cache: dict[int, float] = {}
        eps_curve = np.array([cache.setdefault(int(m), local_dp_epsilon(
            noise_multiplier=sigma, participations=int(m), delta=cfg.delta, accountant=cfg.accountant)) for m in most])
        event = local_dp_event(noise_multiplier=sigma, participations=int(most[-1]))
    else:
        eps_curve = np.full(cfg.rounds, math.inf)
        event = dp_accounting.NonPrivateDpEvent()
    return sigma, eps_curve, event


def _round_average(cfg, model, theta, Xt, yt, shards, sizes, sampled, sigma, *, rng, gen):
    """One round's released average update (None when nothing is released), the share of sampled clients whose
    update was clipped, and the largest update norm a client sent. Each sampled client runs local SGD; DP-FedAvg
    clips every update to S and the server adds N(0, sigma^2 S^2) to their sum (McMahan et al. 2018), local DP has
    each client add its own noise, and plain FedAvg weights the updates by client size."""
    q, N, S = cfg.client_fraction, cfg.clients, cfg.clip_norm
    if not sampled.size:
        if cfg.mode == "central":  # nobody sampled: the server still adds its noise
            return noisy_server_average(torch.zeros_like(theta), clip_norm=S, noise_multiplier=sigma,
                                        expected_clients=q * N, generator=gen), 0.0, 0.0
        return None, 0.0, 0.0
    local = local_sgd(model, theta, Xt, yt, [shards[i] for i in sampled], epochs=cfg.local_epochs,
                      batch_size=cfg.batch_size, learning_rate=cfg.learning_rate, rng=rng)
    updates = local - theta[None, :]
    if cfg.mode == "none":
        w = torch.as_tensor(sizes[sampled] / sizes[sampled].sum(), dtype=updates.dtype, device=updates.device)
        return (w[:, None] * updates).sum(dim=0), 0.0, float(updates.norm(dim=1).max())
    clipped, norms = clip_updates(updates, clip_norm=S)
    clipped_frac = float((norms > S).to(torch.float64).mean())
    max_sent = float(clipped.norm(dim=1).max())
    if cfg.mode == "local":
        # each client's update (a row) its own release of sensitivity S: in secure mode, on its own grid
        clipped = GaussianSum(std=sigma * S, sensitivity=S, generator=gen).release(clipped)
        return clipped.sum(dim=0) / (q * N), clipped_frac, max_sent
    return noisy_server_average(clipped.sum(dim=0), clip_norm=S, noise_multiplier=sigma, expected_clients=q * N,
                                generator=gen), clipped_frac, max_sent


def _train_fedavg(X, y, config, *, X_test, y_test, n_classes, on_epoch,
                  device: torch.device = torch.device("cpu")) -> FedAvgResult:
    t0 = time.perf_counter()
    cfg = config
    X = check_array(X, "X", ndim=2)
    y = np.asarray(y, dtype=np.int64)
    X_test = check_array(X_test, "X_test", ndim=2)
    y_test = np.asarray(y_test, dtype=np.int64)
    if y.shape[0] != X.shape[0]:
        raise DPValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}")
    k = int(n_classes or max(int(y.max()), int(y_test.max())) + 1)
    check_work(fedavg_work(cfg, X.shape[0], X.shape[1], k))  # before the schedule or a model exists
    guard = MemoryGuard(what="this federated run")
    rng = as_generator(cfg.seed)
    gen = torch_generator(child_seed(rng), device=device)
    shards = partition_clients(y, clients=cfg.clients, non_iid=cfg.non_iid, shards_per_client=cfg.shards_per_client,
                               rng=rng)
    schedule = _fixed_schedule(cfg, rng)
    sigma, eps_curve, event = _privacy_plan(cfg, schedule)  # all data-independent

    model = FlatModel(cfg.model, X.shape[1], k, cfg.hidden)
    Xt, yt = torch.tensor(X, dtype=torch.float32, device=device), torch.tensor(y, device=device)
    Xv, yv = torch.tensor(X_test, dtype=torch.float32, device=device), torch.tensor(y_test, device=device)
    theta = model.init(gen)
    sizes = np.array([s.size for s in shards])
    rows = []
    shift = shares_shift(cfg.class_shares, k, device)  # declared class shares: each round answers by them
    t_rounds = time.perf_counter()
    for r in range(cfg.rounds):
        sampled = np.flatnonzero(schedule[r])
        avg, clipped_frac, max_sent = _round_average(cfg, model, theta, Xt, yt, shards, sizes, sampled, sigma,
                                                     rng=rng, gen=gen)
        step_norm = 0.0
        if avg is not None:
            theta = theta + cfg.server_learning_rate * avg
            step_norm = float(avg.norm()) * cfg.server_learning_rate
        acc, loss, balanced = evaluate(model, theta, Xv, yv, shift=shift)
        row = {"round": r + 1, "epoch": r + 1, "accuracy": acc, "balanced_accuracy": balanced, "loss": loss,
               "epsilon": float(eps_curve[r]),
               "clients": int(sampled.size), "clipped_fraction": clipped_frac, "max_sent_norm": max_sent,
               "server_step_norm": step_norm}
        rows.append(row)
        guard.check()
        if on_epoch is not None:
            on_epoch({"epoch": r + 1, "epochs": cfg.rounds, "round": r + 1, "accuracy": acc, "loss": loss,
                      "epsilon": float(eps_curve[r])})
    per_round = (time.perf_counter() - t_rounds) / cfg.rounds
    hist = pd.DataFrame(rows)
    return FedAvgResult(
        config=cfg,
        history=hist,
        accuracy=float(hist.accuracy.iloc[-1]),
        epsilon=float(eps_curve[-1]),
        delta=cfg.delta if cfg.private else 0.0,
        noise_multiplier=None if sigma is None else float(sigma),
        client_sizes=sizes,
        client_label_counts=label_counts(y, shards, k),
        participation=schedule,
        dp_event=event,
        params=theta.cpu().numpy().copy(),
        seconds=time.perf_counter() - t0,
        seconds_per_round=per_round,
        test_proba=_probabilities(model, theta, Xv),
    )


def _probabilities(model, theta: torch.Tensor, X: torch.Tensor) -> np.ndarray:
    with torch.no_grad():
        return torch.softmax(model.logits(theta[None, :], X[None])[0], dim=1).cpu().numpy()


def train_fedavg_split(split: Split, config: FedAvgConfig, *, on_epoch: EpochCallback | None = None,
                       device: "str | torch.device" = "cpu") -> FedAvgResult:
    """:func:`train_fedavg` on a registry split, features scaled to [0, 1] by the dataset's public bounds, on
    ``device``."""
    if split.task != "classification":
        raise DPValueError(f"federated averaging here trains classifiers; {split.dataset.name!r} is {split.task}")
    bounds = split.dataset.bounds
    if bounds is None:
        raise DPValueError(f"dataset {split.dataset.name!r} has no declared feature bounds; declare them to train")
    X = scale_to_unit_interval(split.X_train, bounds)
    Xv = scale_to_unit_interval(split.X_test, bounds)
    result = train_fedavg(X, split.y_train, config, X_test=Xv, y_test=split.y_test,
                          n_classes=max(split.n_classes, 2), on_epoch=on_epoch, device=device)
    # which rows were dealt out: another split of the same size holds other records (its federation is another)
    rows_from = f"{split.dataset.name!r} split with seed {split.seed} and test share {split.test_size}"
    return dataclasses.replace(result, rows_from=rows_from)

