"""What an audit reports: one frozen, picklable result and its JSON form."""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..exceptions import DPTypeError
from ..types import ArrayLike, RngLike
from ..validation import check_delta, check_epsilon
from .bounds import check_confidence, clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound_from_scores
from .roc import DEFAULT_FPRS, chance_tpr_interval, roc_curve

__all__ = ["AuditResult", "audit_from_scores"]


def _json_number(value: float) -> float | str | None:
    """JSON has no infinity: a non-private run's epsilon is written "inf", as ``train``, ``cluster`` and ``sweep``
    write it (dpcore.learners.base); not a number is null."""
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return None if math.isnan(value) else value


@dataclass(frozen=True, eq=False)
class AuditResult:
    """An attack on a trained model and the epsilon it certifies.

    Plain Python values and two read-only numpy arrays, so ``pickle`` (and hence
    ``st.cache_data``) handles it.

    Attributes
    ----------
    attack : str
        e.g. ``"loss-threshold"``, ``"lira-online"``, ``"one-run"``.
    epsilon, delta : float
        The privacy claim audited (``inf`` for a non-private model).
    epsilon_lower_bound : float
        The true epsilon exceeds this with probability >= ``confidence``.
    confidence : float
    auc, advantage : float
        ROC area and max TPR - FPR.
    tpr_at_fpr : dict
        Best TPR with FPR <= the key, keys ``"0.001"``, ``"0.01"``.
    n_members, n_nonmembers : int
    fpr, tpr : ndarray
        The ROC curve.
    seconds : float
        Wall time of the attack and the audit.
    bound_method : str
        How the bound was drawn: ``"split"`` or ``"bonferroni"`` (a threshold chosen on held-out scores or over
        all of them), or ``"one-run-coins"`` (Steinke, Nasr & Jagielski 2023's bound on membership decided by fair
        coins; every membership attack uses it, not only the one-run canary audit).

    Examples
    --------
    >>> r = audit_from_scores([3.0, 2.0, 1.5], [1.0, 0.0], attack="demo", epsilon=1.0, delta=1e-5)
    >>> d = r.to_json_dict()
    >>> d["auc"], d["tpr_at_fpr"], d["n_members"], d["epsilon_lower_bound"]
    (1.0, {'0.001': None, '0.01': None}, 3, 0.0)
    """

    attack: str
    epsilon: float
    delta: float
    epsilon_lower_bound: float
    confidence: float
    auc: float
    tpr_at_fpr: dict[str, float]
    advantage: float
    n_members: int
    n_nonmembers: int
    fpr: np.ndarray = field(repr=False)
    tpr: np.ndarray = field(repr=False)
    seconds: float
    bound_method: str = "bonferroni"
    #: why ``epsilon`` is infinite for a private run: its guarantee is about other neighbours than the audit's (one
    #: record added or removed), e.g. a record replaced or its label only (:func:`dpcore.audit.membership_claim`)
    claim_note: str = ""

    def __post_init__(self) -> None:
        for name in ("fpr", "tpr"):
            arr = np.array(getattr(self, name), dtype=float)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "tpr_at_fpr", {str(k): float(v) for k, v in self.tpr_at_fpr.items()})

    @property
    def refutes_claim(self) -> bool:
        """Whether the attack proves more than the claim: ``epsilon_lower_bound > epsilon`` (with ``confidence``),
        so the model does not meet (epsilon, delta), or the members and non-members were not chosen at random
        before training, which the bound assumes."""
        return bool(self.epsilon_lower_bound > self.epsilon)

    def tpr_measured(self, fpr: str) -> float | None:
        """The true positive rate at false positive rate ``fpr`` ("0.01"), or None when there are too few
        non-members to measure that rate: fewer than 1 / fpr, so one false alarm is already more than it allows
        and the number would be the rate at zero false alarms, the same for every smaller fpr."""
        if self.n_nonmembers * float(fpr) < 1.0:
            return None
        return float(self.tpr_at_fpr[fpr])

    def tpr_interval(self, fpr: str, confidence: float | None = None) -> tuple[float, float] | None:
        """Two-sided Clopper-Pearson interval of the true positive rate at ``fpr`` (None where it is not measured):
        members caught out of ``n_members``, so a difference within the interval is a tie, never a finding. At the
        audit's own ``confidence`` unless another is given: the interval and the proven epsilon beside it are read at
        one level."""
        confidence = self.confidence if confidence is None else confidence
        rate = self.tpr_measured(fpr)
        if rate is None or self.n_members < 1:
            return None
        caught = int(round(rate * self.n_members))
        a = (1.0 - confidence) / 2
        return (float(clopper_pearson_lower(caught, self.n_members, significance=a)),
                float(clopper_pearson_upper(caught, self.n_members, significance=a)))

    def within_chance(self, fpr: str, confidence: float | None = None) -> bool | None:
        """Whether the rate of members caught at ``fpr`` is within the range a guessing attack reaches
        (:func:`~dpcore.audit.roc.chance_tpr_interval`: members and non-members in a random order, the threshold
        moving with the non-members' scores), at the audit's ``confidence`` unless another is given; None where the
        rate is not measured."""
        confidence = self.confidence if confidence is None else confidence
        rate = self.tpr_measured(fpr)
        if rate is None:
            return None
        lo, hi = chance_tpr_interval(self.n_members, self.n_nonmembers, float(fpr), confidence=confidence)
        return bool(lo <= rate <= hi)

    def most_provable(self) -> float:
        """The largest ε this audit could prove, at its numbers of members and non-members, its δ and confidence: its
        own procedure's bound for an attack that tells every member from every non-member. However much a model
        leaks, a finite audit proves no more than this (a model without any privacy reads at most this, not ∞)."""
        return _most_provable(self.bound_method, int(self.n_members), int(self.n_nonmembers), float(self.delta),
                              float(self.confidence))

    def to_json_dict(self) -> dict:
        """The result as JSON-ready values (the ROC arrays are left out; an infinite epsilon is "inf"; a TPR the
        non-members are too few to measure is null, :meth:`tpr_measured`)."""
        return {
            "attack": self.attack,
            "epsilon": _json_number(self.epsilon),
            "delta": float(self.delta),
            "epsilon_lower_bound": float(self.epsilon_lower_bound),
            "confidence": float(self.confidence),
            "auc": float(self.auc),
            "tpr_at_fpr": {k: self.tpr_measured(k) for k in self.tpr_at_fpr},
            "tpr_at_fpr_interval": {k: (None if (iv := self.tpr_interval(k)) is None else list(iv))
                                    for k in self.tpr_at_fpr},
            "advantage": float(self.advantage),
            "n_members": int(self.n_members),
            "n_nonmembers": int(self.n_nonmembers),
            "claim_note": self.claim_note,
            "seconds": float(self.seconds),
            "bound_method": self.bound_method,
            "most_provable": float(self.most_provable()),
        }


@functools.lru_cache(maxsize=256)
def _most_provable(method: str, n_members: int, n_nonmembers: int, delta: float, confidence: float) -> float:
    """:meth:`AuditResult.most_provable`: the bound of a perfect attack (members scored 1, non-members 0), by the
    procedure named ``method``."""
    if n_members < 1 or n_nonmembers < 1:
        return 0.0
    members, nonmembers = np.ones(n_members), np.zeros(n_nonmembers)
    if method == "one-run-coins":  # Steinke et al. 2023: membership by fair coins, one training run
        from ..exceptions import DPValueError
        from .one_run import one_run_audit

        included = np.arange(n_members + n_nonmembers) < n_members
        try:
            return float(one_run_audit(np.concatenate([members, nonmembers]), included, delta=delta,
                                       confidence=confidence).epsilon_lower_bound)
        except DPValueError:  # too few canaries for any guess to prove anything: the most provable is 0
            return 0.0
    # a perfect attack's bound does not depend on which records a split draws
    return float(epsilon_lower_bound_from_scores(members, nonmembers, delta=delta, confidence=confidence,
                                                 method=method, rng=0).epsilon)


def audit_from_scores(
    member_scores: ArrayLike,
    nonmember_scores: ArrayLike,
    *,
    attack: str,
    epsilon: float,
    delta: float,
    confidence: float = 0.95,
    method: str = "bonferroni",
    fprs: Sequence[float] = DEFAULT_FPRS,
    rng: RngLike = None,
    seconds: float = 0.0,
) -> AuditResult:
    """ROC summary and a valid Clopper-Pearson epsilon lower bound from attack scores.

    Parameters
    ----------
    member_scores, nonmember_scores : array_like
        Attack scores, higher = member.
    attack : str
        Name recorded in the result.
    epsilon, delta : float
        The privacy claim of the attacked model (``float("inf")`` if non-private).
    confidence, method, rng
        Passed to :func:`dpcore.audit.bounds.epsilon_lower_bound_from_scores`.
    fprs : sequence of float
        FPRs to report the TPR at.
    seconds : float
        Time already spent producing the scores (e.g. training shadows); the audit's own
        time is added.

    References
    ----------
    Carlini et al. Membership inference attacks from first principles. IEEE S&P 2022.
    Jagielski, Ullman, Oprea. Auditing differentially private machine learning. NeurIPS 2020.
    """
    start = time.perf_counter()
    epsilon = check_epsilon(epsilon, allow_inf=True)
    if not isinstance(attack, str) or not attack:
        raise DPTypeError(f"attack must be a non-empty name such as 'loss-threshold', got {attack!r}")
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    roc = roc_curve(member_scores, nonmember_scores)
    bound = epsilon_lower_bound_from_scores(
        member_scores, nonmember_scores, delta=delta, confidence=confidence, method=method, rng=rng
    )
    return AuditResult(
        attack=attack,
        epsilon=float(epsilon),
        delta=delta,
        epsilon_lower_bound=bound.epsilon,
        confidence=confidence,
        auc=roc.auc,
        tpr_at_fpr=roc.tpr_at_fprs(fprs),
        advantage=roc.advantage,
        n_members=roc.n_members,
        n_nonmembers=roc.n_nonmembers,
        fpr=roc.fpr,
        tpr=roc.tpr,
        seconds=float(seconds) + time.perf_counter() - start,
        bound_method=bound.method,
    )
