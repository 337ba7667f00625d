"""One entry point for every audit, as the command line and the page call it.

The default audit (``attack="canaries"``) is the one the Attack page opens on: mislabelled canaries, each by a fair
coin, inserted into the FULL training set, so the rest of the data still trains the model the Train page trains; the
attacker queries the final model on every canary and scores it by the loss of the label it was taught (Yeom et al.
2018). A model can only get a mislabelled record right by memorising it (Carlini et al. 2019, "The Secret Sharer";
Jagielski, Ullman & Oprea 2020), and because the coins were tossed before training the guesses bound epsilon from one
run (Steinke, Nasr & Jagielski 2023). Its non-private twin is a network trained as one is without privacy: wide, and
fit to its training rows (:func:`leaky_network_params`).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ..datasets import as_dataset
from ..defaults import DELTA
from ..exceptions import DPValueError
from ..learners import get_learner
from ..types import DataLike
from .canaries import (
    DEFAULT_CANARIES,
    MIN_CANARIES,
    MIN_CANARY_ROWS,
    CanaryAudit,
    gradient_canary_audit,
    input_canary_audit,
    input_canary_capacity,
)
from .membership import (
    DEFAULT_SHADOWS,
    MIN_POOL_ROWS,
    MIN_POOL_SIZE,
    MembershipAudit,
    ProgressCallback,
    membership_audit,
    pool_capacity,
)

__all__ = ["AUDIT_KINDS", "DEFAULT_ATTACK", "DEFAULT_CONFIDENCE", "DEFAULT_SHADOWS", "LADDER_EPSILONS",
           "STORY_CANARIES", "contrast_learner", "epsilon_ladder", "leaky_network_params", "run_audit",
           "story_canaries", "too_few_rows"]

#: ``attack`` values of :func:`run_audit`: mislabelled canaries in the full training set (the default), two
#: membership attacks on models trained on half a pool, and the one-run canary audit.
AUDIT_KINDS = ("canaries", "loss", "lira", "lira-offline", "one-run")
#: The attack the Attack page and ``python -m dpcore audit`` start from.
DEFAULT_ATTACK = "canaries"
#: The confidence of an audit's lower bound on ε unless told otherwise: the Attack page's and ``audit --confidence``.
DEFAULT_CONFIDENCE = 0.95
#: Mislabelled canaries of the default attack: at most 40 % of the test rows they are made from, so the rest
#: (750 of MNIST 5k's 1,250) still measure the model's accuracy; about half of them are inserted.
STORY_CANARIES = 500
#: How the non-private network is trained when it is the twin a private learner is attacked beside: as a network
#: is trained without privacy, wide and until it fits its training rows (Adam, no averaging, 40 epochs). On MNIST 5k
#: (seed 0, 500 canaries) it is right on 95.2 % of the held-out rows and gives its canaries away: AUC 0.980, 54.5 %
#: caught at 1 % false alarms, ε proven 3.32 (the Attack page's defaults, 2026-12-01). When it was chosen, 256 units
#: for 40 epochs cost a quarter of 512 units for 80 for about the same leak, and 512 units for 40 epochs at a rate of
#: 0.001 memorised too little. bench/attack_story.py.
LEAKY_NETWORK = {"model": "mlp", "hidden": 256, "activation": "relu", "learning_rate": 0.003, "epochs": 40}
LEAKY_BATCH = 128


def leaky_network_params(n_train: int) -> dict:
    """:data:`LEAKY_NETWORK` with a batch that fits ``n_train`` training rows."""
    return {**LEAKY_NETWORK, "batch_size": max(1, min(LEAKY_BATCH, int(n_train)))}


def contrast_learner(name: str) -> str | None:
    """The non-private counterpart attacked alongside ``name`` (None when it has none for the same task)."""
    from ..learners import learners

    spec = get_learner(name)
    if not spec.private:  # a non-private learner is its own contrast
        return None
    base = spec.baseline or "non-private"
    tasks = get_learner(base).tasks if base in learners() else ()
    return base if any(t in tasks for t in spec.tasks) else None


def story_canaries(data, seed: int = 0) -> int:
    """Canaries of the default attack on ``data``: :data:`STORY_CANARIES`, at most 40 % of its test rows."""
    return max(MIN_CANARIES, min(STORY_CANARIES, int(0.4 * input_canary_capacity(data, seed))))


def too_few_rows(data, *, attack: str, gradient_canaries: bool = False) -> str | None:
    """Why ``data`` has too few rows for ``attack``, in words that name no setting (None when it has enough):
    mislabelled canaries are made from the held-out rows, the membership attacks' pool from the training rows;
    gradient canaries (``attack="one-run"`` with ``gradient_canaries``) take no rows.

    >>> too_few_rows("iris", attack="canaries") is None
    True
    """
    if attack == "canaries" or (attack == "one-run" and not gradient_canaries):
        held_out = input_canary_capacity(data)
        if held_out < MIN_CANARIES:
            return (f"it holds out {held_out} test row{'s' if held_out != 1 else ''}, and this attack makes each of "
                    "its canaries from one of them "
                    f"(a held-out row with a wrong label): it needs at least {MIN_CANARIES}, so data with at least "
                    f"{MIN_CANARY_ROWS} rows")
    elif attack in ("loss", "lira", "lira-offline") and (train := pool_capacity(data)) < MIN_POOL_SIZE:
        return (f"it has {train} training rows, and the attacker's pool needs at least {MIN_POOL_SIZE} of them, so "
                f"data with at least {MIN_POOL_ROWS} rows")
    return None


def run_audit(
    learner: str,
    data: DataLike,
    *,
    epsilon: float,
    delta: float = DELTA,
    attack: str = DEFAULT_ATTACK,
    params: Mapping[str, Any] | None = None,
    shadows: int = DEFAULT_SHADOWS,
    canaries: int | None = None,
    canary_kind: str | None = None,
    pool_size: int | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    on_progress: ProgressCallback | None = None,
    label: Any = None,
    bounds: Any = None,
    task: str | None = None,
    categories: Any = None,
) -> "MembershipAudit | CanaryAudit":
    """Run the audit ``attack`` against ``learner`` on ``data``.

    ``"canaries"`` (the default) inserts mislabelled canaries into the full training set (see the module
    docstring); ``canaries`` defaults to :func:`story_canaries`, and the non-private network learner, given no
    ``params``, is trained as :func:`leaky_network_params` says.

    ``data`` is a registry name, a Dataset, or your own DataFrame (label column ``label``) or arrays ``(X, y)``
    with declared ``bounds`` and ``categories`` (:func:`dpcore.datasets.as_dataset`). To audit a model you trained
    yourself, see :func:`dpcore.audit.audit`.

    ``"loss"``, ``"lira"`` (online) and ``"lira-offline"`` attack a model trained on a
    random half of a pool (:func:`~dpcore.audit.membership_audit`); ``"one-run"`` inserts
    canaries: gradient canaries for DP-SGD by default, mislabelled input canaries for any
    other learner (``canary_kind`` "gradient" or "input"); ``canaries`` defaults to
    :data:`~dpcore.audit.canaries.DEFAULT_CANARIES`, for input canaries at most the test rows they are drawn from.
    """
    spec = get_learner(learner)
    data = as_dataset(data, label, task=task, bounds=bounds, categories=categories)
    if attack not in AUDIT_KINDS:
        raise DPValueError(f"attack must be one of {', '.join(AUDIT_KINDS)}, got {attack!r}")
    if attack == "canaries":
        if spec.family == "network" and not spec.private and not params:  # the network trained without privacy
            from .canaries import _split

            params = leaky_network_params(_split(data, seed).y_train.size)
        m = story_canaries(data, seed) if canaries is None else canaries
        return input_canary_audit(spec.name, data, epsilon=epsilon, delta=delta, canaries=m, params=params,
                                  confidence=confidence, seed=seed, on_progress=on_progress)
    if attack != "one-run":
        name = {"loss": "loss", "lira": "lira-online", "lira-offline": "lira-offline"}[attack]
        return membership_audit(spec.name, data, epsilon=epsilon, delta=delta, params=params, attack=name,
                                shadows=shadows, pool_size=pool_size, confidence=confidence, seed=seed,
                                on_progress=on_progress)
    kind = canary_kind or spec.canary_kind  # the learner's declaration: gradient for DP-SGD, input for the others
    if kind == "gradient":
        if spec.canary_kind != "gradient":
            raise DPValueError(f"gradient canaries are written into DP-SGD's noisy gradients; learner "
                               f"{spec.name!r} has none: use input canaries (canary_kind='input'; "
                               "--canary-kind input on the command line)")
        return gradient_canary_audit(data, epsilon=epsilon, delta=delta,
                                     canaries=DEFAULT_CANARIES if canaries is None else canaries, params=params,
                                     confidence=confidence, seed=seed, on_progress=on_progress)
    if kind != "input":
        raise DPValueError(f"canary_kind must be 'gradient' or 'input', got {kind!r}")
    if canaries is None:  # the default, capped at the test rows the mislabelled canaries are drawn from
        canaries = min(DEFAULT_CANARIES, input_canary_capacity(data, seed))
    return input_canary_audit(spec.name, data, epsilon=epsilon, delta=delta, canaries=canaries, params=params,
                              confidence=confidence, seed=seed, on_progress=on_progress)


#: The claims of the Attack page's ladder: the same run at growing ε, then without noise.
LADDER_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0, math.inf)


def epsilon_ladder(
    learner: str,
    data,
    *,
    epsilons=LADDER_EPSILONS,
    delta: float = DELTA,
    canaries: int | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    on_progress: ProgressCallback | None = None,
) -> tuple[tuple[float, "CanaryAudit"], ...]:
    """The strongest audit this library has, run at each claimed ε of ``epsilons``: (ε, audit) pairs.

    DP-SGD is audited with white-box gradient canaries (Steinke, Nasr & Jagielski 2023; Nasr et al. 2021), the
    adversary its guarantee is written for; an infinite ε is the same run with no noise (σ = 0). Any other learner
    is audited with the default mislabelled canaries, and an infinite ε is its non-private twin. A correct learner's
    proven ε grows with the claim and stays below it, except with the 5 % chance the confidence allows.
    """
    spec = get_learner(learner)
    rungs = []
    for i, eps in enumerate(epsilons):
        eps = float(eps)

        def step(info, i=i):
            if on_progress is not None:
                on_progress({"stage": "rung", "done": i + min(info["done"] / max(info["total"], 1), 0.99),
                             "total": len(epsilons)})

        if spec.canary_kind == "gradient":  # white-box, DP-SGD's engine; infinite ε: the same run with no noise
            params = {"noise_multiplier": 0.0} if math.isinf(eps) else None
            audit = gradient_canary_audit(data, epsilon=1.0 if math.isinf(eps) else eps, delta=delta,
                                          canaries=DEFAULT_CANARIES if canaries is None else canaries, params=params,
                                          confidence=confidence, seed=seed, on_progress=step)
        else:
            name = contrast_learner(spec.name) if math.isinf(eps) else spec.name
            if name is None:
                continue
            audit = run_audit(name, data, epsilon=1.0 if math.isinf(eps) else eps, delta=delta, attack="canaries",
                              canaries=canaries, confidence=confidence, seed=seed, on_progress=step)
        rungs.append((eps, audit))
        if on_progress is not None:
            on_progress({"stage": "rung", "done": i + 1, "total": len(epsilons)})
    return tuple(rungs)
