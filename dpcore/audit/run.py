"""One entry point for every audit, as the command line and the page call it."""
from __future__ import annotations

from typing import Any, Mapping

from ..datasets import as_dataset
from ..defaults import DELTA
from ..exceptions import DPValueError
from ..learners import get_learner
from ..types import DataLike
from .canaries import DEFAULT_CANARIES, CanaryAudit, gradient_canary_audit, input_canary_audit, input_canary_capacity
from .membership import MembershipAudit, ProgressCallback, membership_audit

__all__ = ["AUDIT_KINDS", "run_audit"]

#: ``attack`` values of :func:`run_audit`: two membership attacks and the one-run canary audit.
AUDIT_KINDS = ("loss", "lira", "lira-offline", "one-run")


def run_audit(
    learner: str,
    data: DataLike,
    *,
    epsilon: float,
    delta: float = DELTA,
    attack: str = "loss",
    params: Mapping[str, Any] | None = None,
    shadows: int = 16,
    canaries: int | None = None,
    canary_kind: str | None = None,
    pool_size: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    on_progress: ProgressCallback | None = None,
    label: Any = None,
    bounds: Any = None,
    task: str | None = None,
) -> "MembershipAudit | CanaryAudit":
    """Run the audit ``attack`` against ``learner`` on ``data``.

    ``data`` is a registry name, a Dataset, or your own DataFrame (label column ``label``) or arrays ``(X, y)``
    with declared ``bounds`` (:func:`dpcore.datasets.as_dataset`). To audit a model you trained yourself, see
    :func:`dpcore.audit.audit`.

    ``"loss"``, ``"lira"`` (online) and ``"lira-offline"`` attack a model trained on a
    random half of a pool (:func:`~dpcore.audit.membership_audit`); ``"one-run"`` inserts
    canaries: gradient canaries for DP-SGD by default, mislabelled input canaries for any
    other learner (``canary_kind`` "gradient" or "input"); ``canaries`` defaults to
    :data:`~dpcore.audit.canaries.DEFAULT_CANARIES`, for input canaries at most the test rows they are drawn from.
    """
    spec = get_learner(learner)
    data = as_dataset(data, label, task=task, bounds=bounds)
    if attack not in AUDIT_KINDS:
        raise DPValueError(f"attack must be one of {', '.join(AUDIT_KINDS)}, got {attack!r}")
    if attack != "one-run":
        name = {"loss": "loss", "lira": "lira-online", "lira-offline": "lira-offline"}[attack]
        return membership_audit(spec.name, data, epsilon=epsilon, delta=delta, params=params, attack=name,
                                shadows=shadows, pool_size=pool_size, confidence=confidence, seed=seed,
                                on_progress=on_progress)
    kind = canary_kind or ("gradient" if spec.name == "dpsgd" else "input")
    if kind == "gradient":
        if spec.name != "dpsgd":
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
