"""ROC curve, AUC, TPR at low FPR and membership advantage of a membership attack.

An attack gives every candidate record a score; higher means "member". Flagging every
record whose score is at least a threshold ``t`` gives one point of the ROC curve:

    TPR(t) = #{members with score >= t} / n_members
    FPR(t) = #{non-members with score >= t} / n_nonmembers

Sweeping ``t`` over every distinct score (and ``+inf``, which flags nobody) gives the
whole curve, exactly as :func:`sklearn.metrics.roc_curve` with
``drop_intermediate=False``.

References
----------
Carlini, Chien, Nasr, Song, Terzis, Tramèr. Membership inference attacks from first
principles. IEEE S&P 2022 (report the TPR at a low FPR, not only the AUC).
Yeom, Giacomelli, Fredrikson, Jha. Privacy risk in machine learning: analyzing the
connection to overfitting. IEEE CSF 2018 (membership advantage).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..exceptions import DPValueError
from ..types import ArrayLike
from ..validation import check_array

__all__ = [
    "DEFAULT_FPRS",
    "chance_tpr_interval",
    "RocCurve",
    "roc_curve",
    "roc_auc",
    "tpr_at_fpr",
    "membership_advantage",
    "fpr_key",
]

#: The low false-positive rates Carlini et al. (2022) report the TPR at.
DEFAULT_FPRS: tuple[float, ...] = (0.001, 0.01)

# FP / N is computed in floating point; a target like 0.29 with N = 100 must still
# admit the point with 29 false positives.
_FPR_TOLERANCE = 1e-12


def check_scores(scores, name: str) -> np.ndarray:
    """Return ``scores`` as a finite 1-D float array with at least one value."""
    return check_array(scores, name, ndim=1)


def fpr_key(fpr: float) -> str:
    """The JSON key of a false-positive rate: ``"0.001"``, ``"0.01"``.

    >>> fpr_key(0.001), fpr_key(0.01), fpr_key(1e-7), fpr_key(1)
    ('0.001', '0.01', '0.0000001', '1')
    """
    return np.format_float_positional(float(fpr), trim="-")


@dataclass(frozen=True, eq=False)
class RocCurve:
    """Every operating point of a threshold attack.

    Attributes
    ----------
    thresholds : ndarray
        Decreasing; ``thresholds[0] = +inf`` flags nobody, ``thresholds[-1]`` (the
        smallest score) flags everybody.
    tp, fp : ndarray of int
        Members and non-members with score ``>= threshold``.
    n_members, n_nonmembers : int

    Examples
    --------
    >>> roc = roc_curve([3.0, 2.0, 0.5], [1.0, 0.0])
    >>> roc.fpr.tolist(), np.round(roc.tpr, 3).tolist()
    ([0.0, 0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.333, 0.667, 0.667, 1.0, 1.0])
    >>> round(roc.auc, 4), round(roc.advantage, 4)
    (0.8333, 0.6667)
    """

    thresholds: np.ndarray = field(repr=False)
    tp: np.ndarray = field(repr=False)
    fp: np.ndarray = field(repr=False)
    n_members: int
    n_nonmembers: int

    @property
    def tpr(self) -> np.ndarray:
        """True-positive rate at each threshold."""
        return self.tp / self.n_members

    @property
    def fpr(self) -> np.ndarray:
        """False-positive rate at each threshold."""
        return self.fp / self.n_nonmembers

    @property
    def auc(self) -> float:
        """Area under the curve (trapezoids; a tie between a member and a non-member counts 1/2)."""
        return float(np.trapezoid(self.tpr, self.fpr))

    @property
    def advantage(self) -> float:
        """Membership advantage max_t TPR(t) - FPR(t) (Yeom et al. 2018), in [0, 1]."""
        return float(np.max(self.tpr - self.fpr))

    def tpr_at(self, fpr: float) -> float:
        """The best TPR among thresholds whose FPR is at most ``fpr``, without interpolation.

        This is how Carlini et al. (2022) report TPR at low FPR. When ``fpr`` is below
        ``1 / n_nonmembers`` only thresholds with no false positive qualify.
        """
        target = _check_fpr(fpr)
        return float(np.max(self.tpr[self.fpr <= target + _FPR_TOLERANCE]))

    def tpr_at_fprs(self, fprs: Sequence[float] = DEFAULT_FPRS) -> dict[str, float]:
        """``{fpr_key(f): tpr_at(f)}`` for each target, e.g. ``{"0.001": ..., "0.01": ...}``."""
        return {fpr_key(f): self.tpr_at(f) for f in fprs}


def _check_fpr(fpr) -> float:
    try:
        value = float(fpr)
    except (TypeError, ValueError):
        raise DPValueError(f"fpr must be a number in [0, 1], got {fpr!r}") from None
    if not 0.0 <= value <= 1.0:
        raise DPValueError(f"fpr must be in [0, 1], got {value!r}; low-FPR targets such as 0.001 or 0.01 are usual")
    return value


def counts_at_thresholds(
    member_scores: np.ndarray, nonmember_scores: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Members and non-members with score ``>= t`` for each threshold ``t`` (vectorised)."""
    members = np.sort(member_scores)
    nonmembers = np.sort(nonmember_scores)
    tp = members.size - np.searchsorted(members, thresholds, side="left")
    fp = nonmembers.size - np.searchsorted(nonmembers, thresholds, side="left")
    return tp, fp


def roc_curve(member_scores: ArrayLike, nonmember_scores: ArrayLike) -> RocCurve:
    """The ROC curve of the attack "member if score >= t" over all thresholds.

    Parameters
    ----------
    member_scores, nonmember_scores : array_like
        Attack scores of records in and out of the training set (higher = member).

    Returns
    -------
    RocCurve

    References
    ----------
    Carlini et al. Membership inference attacks from first principles. IEEE S&P 2022.
    """
    members = check_scores(member_scores, "member_scores")
    nonmembers = check_scores(nonmember_scores, "nonmember_scores")
    thresholds = np.concatenate([[np.inf], np.unique(np.concatenate([members, nonmembers]))[::-1]])
    tp, fp = counts_at_thresholds(members, nonmembers, thresholds)
    return RocCurve(thresholds=thresholds, tp=tp, fp=fp, n_members=members.size, n_nonmembers=nonmembers.size)


def roc_auc(member_scores: ArrayLike, nonmember_scores: ArrayLike) -> float:
    """Area under the ROC curve: P[member score > non-member score] + P[tie] / 2.

    >>> roc_auc([2.0, 1.0], [1.0, 0.0])
    0.875
    """
    return roc_curve(member_scores, nonmember_scores).auc


def tpr_at_fpr(member_scores: ArrayLike, nonmember_scores: ArrayLike,
               fpr: float | Sequence[float] = DEFAULT_FPRS) -> float | dict[str, float]:
    """Best TPR with FPR <= ``fpr`` (Carlini et al. 2022); a dict keyed by :func:`fpr_key` for a list.

    >>> tpr_at_fpr([5.0, 4.0, 0.0], [3.0, 2.0, 1.0, 0.5], 0.25)
    0.6666666666666666
    """
    roc = roc_curve(member_scores, nonmember_scores)
    if np.ndim(fpr) == 0:
        return roc.tpr_at(fpr)  # type: ignore[arg-type]
    return roc.tpr_at_fprs(fpr)  # type: ignore[arg-type]


def membership_advantage(member_scores: ArrayLike, nonmember_scores: ArrayLike) -> float:
    """max over thresholds of TPR - FPR, Yeom et al.'s (2018) membership advantage.

    >>> membership_advantage([2.0, 1.0], [1.0, 0.0])
    0.5
    """
    return roc_curve(member_scores, nonmember_scores).advantage


def chance_tpr_interval(n_members: int, n_nonmembers: int, fpr: float, *, confidence: float = 0.95,
                        repeats: int = 1, draws: int = 4000, seed: int = 0) -> tuple[float, float]:
    """The range a guessing attack's TPR at ``fpr`` falls in, with probability ``confidence``.

    A guess ranks members and non-members in a uniformly random order; its TPR at FPR <= ``fpr`` (as
    :meth:`RocCurve.tpr_at` reads it) is the share of members ranked above the (k+1)-th non-member, k =
    floor(fpr * n_nonmembers). The threshold moves with the non-members' scores, so this spreads wider than a
    binomial interval around ``fpr``: the interval to judge a measured rate against ("within chance"). ``repeats``:
    the range of the mean of that many independent runs (a bench's mean over seeds). Simulated, seeded.

    >>> lo, hi = chance_tpr_interval(250, 250, 0.01)
    >>> lo <= 0.01 <= hi
    True
    """
    n_in, n_out = int(n_members), int(n_nonmembers)
    if n_in < 1 or n_out < 1:
        raise DPValueError(f"chance needs members and non-members, got {n_in} and {n_out}")
    k = int(math.floor(_check_fpr(fpr) * n_out + _FPR_TOLERANCE))
    rng = np.random.default_rng(seed)
    rates = np.zeros(draws)
    for _ in range(int(repeats)):
        order = rng.random((draws, n_in + n_out)).argsort(axis=1) < n_in  # True: a member at that rank
        outs = np.cumsum(~order, axis=1)
        # members ranked above the (k+1)-th non-member (all members if there are only k non-members)
        stop = np.where(outs[:, -1] > k, np.argmax(outs > k, axis=1), n_in + n_out)
        rates += (stop - np.minimum(outs[np.arange(draws), np.minimum(stop, n_in + n_out - 1)], k)) / n_in
    rates /= int(repeats)
    a = (1.0 - confidence) / 2
    return float(np.quantile(rates, a)), float(np.quantile(rates, 1 - a))
