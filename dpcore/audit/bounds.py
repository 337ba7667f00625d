"""An epsilon lower bound from an attack's counts, with Clopper-Pearson confidence.

For any membership test against an (eps, delta)-DP mechanism (Kairouz, Oh, Viswanath
2015, the hypothesis-testing region of DP):

    (1)  TPR     <= e^eps FPR       + delta    =>  eps >= log((TPR - delta) / FPR)
    (2)  1 - FPR <= e^eps (1 - TPR) + delta    =>  eps >= log((1 - FPR - delta) / (1 - TPR))

The true rates are unknown; an attack only gives counts TP of P members and FP of N
non-members. Both right-hand sides grow with TPR and shrink with FPR, so a lower
bound that holds with probability >= 1 - a plugs in the pessimistic ends of one-sided
Clopper-Pearson intervals, each at level a / 2 (a union bound over the two):

    TPR_lo = BetaInv(a/2; TP, P - TP + 1)          (0 when TP = 0)
    FPR_hi = BetaInv(1 - a/2; FP + 1, N - FP)      (1 when FP = N)
    eps_lb = max(0, log((TPR_lo - delta) / FPR_hi), log((1 - FPR_hi - delta) / (1 - TPR_lo)))

This holds only for a threshold fixed before the counts are seen.
:func:`epsilon_lower_bound_from_scores` chooses it on one part of the scores and
counts on the other, or makes the limits hold for every threshold at once. For the
latter, note that whatever the threshold t, TPR(t) < TPR_lo(TP(t)) can only happen
through one of the P values TP = k = 1..P, and for TP(t) = k it implies the same event
at the k-th largest member score, whose true TPR is (at least) a Beta(k, P - k + 1)
variable: probability <= the level, by the definition of the Clopper-Pearson limit.
Likewise for the N values FP = 0..N-1. So levels a / (2P) for the TPR limits and
a / (2N) for the FPR limits make all of them hold simultaneously with probability
>= 1 - a (a Bonferroni correction over the possible counts), and the best threshold may
then be picked after looking.

References
----------
Kairouz, Oh, Viswanath. The composition theorem for differential privacy. ICML 2015.
Jagielski, Ullman, Oprea. Auditing differentially private machine learning: how
private is private SGD? NeurIPS 2020 (Clopper-Pearson epsilon lower bounds).
Nasr, Song, Thakurta, Papernot, Carlini. Adversary instantiation: lower bounds for
differentially private machine learning. IEEE S&P 2021.
Clopper, Pearson. The use of confidence or fiducial limits illustrated in the case of
the binomial. Biometrika 1934.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..exceptions import DPValueError
from ..rng import as_generator
from ..types import ArrayLike, RngLike
from ..validation import check_delta, check_int, check_probability, check_real
from .roc import check_scores, counts_at_thresholds

__all__ = [
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "EpsilonBound",
    "epsilon_lower_bound_from_scores",
    "THRESHOLD_SELECTIONS",
]

#: How :func:`epsilon_lower_bound_from_scores` keeps its bound valid.
THRESHOLD_SELECTIONS = ("bonferroni", "split")


def check_confidence(confidence) -> float:
    """Return ``confidence`` after checking ``0 < confidence < 1``."""
    c = check_real(confidence, "confidence")
    if not 0.0 < c < 1.0:  # one message for 0, 1 and beyond (a probability check would say "in [0, 1]" for 1.5)
        raise DPValueError(f"confidence must be strictly between 0 and 1, got {c!r}; 0.95 is usual")
    if 1.0 - c == 1.0:  # the significance reads 1: every epsilon is rejected, and the bound's search ran into inf
        raise DPValueError(f"confidence={c!r} is so small that 1 - confidence is 1 in double precision: a bound "
                           "at that confidence says nothing; 0.95 is usual")
    return c


def _check_counts(successes, trials):
    k = np.asarray(successes)
    n = np.asarray(trials)
    if not (np.issubdtype(k.dtype, np.integer) and np.issubdtype(n.dtype, np.integer)):
        if not (np.all(np.mod(k, 1) == 0) and np.all(np.mod(n, 1) == 0)):
            raise DPValueError("successes and trials must be whole counts")
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise DPValueError(f"counts must satisfy 0 <= successes <= trials and trials >= 1, got {k} of {n}")
    return k.astype(float), n.astype(float)


def clopper_pearson_lower(successes: ArrayLike, trials: ArrayLike, *, significance: float) -> float | np.ndarray:
    """One-sided lower limit: P[true rate < limit] <= ``significance``.

    BetaInv(significance; k, n - k + 1), and 0 when k = 0.

    >>> round(float(clopper_pearson_lower(10, 10, significance=0.05)), 4)
    0.7411
    """
    k, n = _check_counts(successes, trials)
    with np.errstate(invalid="ignore"):
        out = np.where(k > 0, stats.beta.ppf(significance, np.maximum(k, 1), n - k + 1), 0.0)
    return out if out.ndim else float(out)


def clopper_pearson_upper(successes: ArrayLike, trials: ArrayLike, *, significance: float) -> float | np.ndarray:
    """One-sided upper limit: P[true rate > limit] <= ``significance``.

    BetaInv(1 - significance; k + 1, n - k), and 1 when k = n.

    >>> round(float(clopper_pearson_upper(0, 10, significance=0.05)), 4)
    0.2589
    """
    k, n = _check_counts(successes, trials)
    with np.errstate(invalid="ignore"):
        out = np.where(k < n, stats.beta.isf(significance, k + 1, np.maximum(n - k, 1)), 1.0)
    return out if out.ndim else float(out)


def _epsilon_from_counts(tp, fn, fp, tn, *, delta: float, tpr_level: float, fpr_level: float) -> np.ndarray:
    """Vectorised eps_lb of the module docstring with one-sided levels for the two limits."""
    tpr_lo = clopper_pearson_lower(tp, np.asarray(tp) + fn, significance=tpr_level)
    fpr_hi = clopper_pearson_upper(fp, np.asarray(fp) + tn, significance=fpr_level)
    with np.errstate(divide="ignore", invalid="ignore"):
        forward = np.log(np.maximum(tpr_lo - delta, 0.0)) - np.log(fpr_hi)  # inequality (1)
        backward = np.log(np.maximum(1.0 - fpr_hi - delta, 0.0)) - np.log(1.0 - tpr_lo)  # inequality (2)
    return np.maximum(np.maximum(forward, backward), 0.0)


def epsilon_lower_bound(*, tp: int, fn: int, fp: int, tn: int, delta: float = 0.0, confidence: float = 0.95) -> float:
    """An eps that the mechanism's true epsilon exceeds with probability >= ``confidence``.

    Valid when the threshold producing the counts was fixed independently of them.

    Parameters
    ----------
    tp, fn : int
        Members flagged and missed (tp + fn >= 1).
    fp, tn : int
        Non-members flagged and passed (fp + tn >= 1).
    delta : float
        The delta of the (eps, delta) claim being tested.
    confidence : float
        1 - a; a is split equally between the TPR and FPR limits.

    References
    ----------
    Jagielski, Ullman, Oprea. Auditing differentially private machine learning. NeurIPS 2020.
    Kairouz, Oh, Viswanath. The composition theorem for differential privacy. ICML 2015.

    Examples
    --------
    A perfect attack on 1000 members and 1000 non-members certifies about 5.6 at 95%:

    >>> round(epsilon_lower_bound(tp=1000, fn=0, fp=0, tn=1000), 2)
    5.6
    """
    counts = {"tp": tp, "fn": fn, "fp": fp, "tn": tn}
    for name, value in counts.items():
        counts[name] = check_int(value, name, minimum=0)
    if counts["tp"] + counts["fn"] < 1 or counts["fp"] + counts["tn"] < 1:
        raise DPValueError("the counts need at least one member (tp + fn >= 1) and one non-member (fp + tn >= 1)")
    delta = check_delta(delta)
    half = (1.0 - check_confidence(confidence)) / 2
    return float(_epsilon_from_counts(**counts, delta=delta, tpr_level=half, fpr_level=half))


@dataclass(frozen=True)
class EpsilonBound:
    """An epsilon lower bound with the threshold and the counts behind it.

    ``tp``/``fn``/``fp``/``tn`` are the counts the bound was computed from (the
    evaluation part under ``method="split"``); ``tpr_level`` and ``fpr_level`` the
    one-sided significance levels of the two Clopper-Pearson limits.
    """

    epsilon: float
    threshold: float
    tp: int
    fn: int
    fp: int
    tn: int
    delta: float
    confidence: float
    method: str
    tpr_level: float
    fpr_level: float


def _candidate_thresholds(members: np.ndarray, nonmembers: np.ndarray) -> np.ndarray:
    """+inf (flag nobody) and every distinct score, decreasing."""
    return np.concatenate([[np.inf], np.unique(np.concatenate([members, nonmembers]))[::-1]])


def _best_threshold(members, nonmembers, *, delta: float, tpr_level: float, fpr_level: float) -> float:
    thresholds = _candidate_thresholds(members, nonmembers)
    tp, fp = counts_at_thresholds(members, nonmembers, thresholds)
    eps = _epsilon_from_counts(tp, members.size - tp, fp, nonmembers.size - fp,
                               delta=delta, tpr_level=tpr_level, fpr_level=fpr_level)
    return float(thresholds[int(np.argmax(eps))])


def _bound_at(members, nonmembers, threshold, *, delta, confidence, method, tpr_level, fpr_level) -> EpsilonBound:
    tp, fp = counts_at_thresholds(members, nonmembers, np.array([threshold]))
    tp, fp = int(tp[0]), int(fp[0])
    fn, tn = members.size - tp, nonmembers.size - fp
    eps = float(_epsilon_from_counts(tp, fn, fp, tn, delta=delta, tpr_level=tpr_level, fpr_level=fpr_level))
    return EpsilonBound(eps, threshold, tp, fn, fp, tn, delta, confidence, method, tpr_level, fpr_level)


def epsilon_lower_bound_from_scores(
    member_scores: ArrayLike,
    nonmember_scores: ArrayLike,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    method: str = "bonferroni",
    selection_fraction: float = 0.5,
    rng: RngLike = None,
) -> EpsilonBound:
    """A valid epsilon lower bound from attack scores, choosing the threshold honestly.

    Parameters
    ----------
    member_scores, nonmember_scores : array_like
        Attack scores (higher = member).
    delta, confidence : float
        As in :func:`epsilon_lower_bound`.
    method : {"bonferroni", "split"}
        ``"bonferroni"`` (default): limits that hold for every threshold at once
        (levels a / (2P) and a / (2N), see the module docstring), and the threshold with
        the largest bound; deterministic, and it uses every record. ``"split"``: a random
        ``selection_fraction`` of the members and of the non-members picks the threshold
        with the largest bound; the bound is then computed on the remaining records only,
        so the threshold is independent of the counts (no correction, half the data).
    selection_fraction : float
        Share of each group used to choose the threshold under ``"split"``.
    rng : int, numpy Generator or None
        Randomness of the split (unused by ``"bonferroni"``).

    References
    ----------
    Jagielski, Ullman, Oprea. Auditing differentially private machine learning. NeurIPS 2020.
    Nasr et al. Adversary instantiation: lower bounds for differentially private machine
    learning. IEEE S&P 2021.

    Examples
    --------
    >>> members, nonmembers = np.arange(100.0) + 60, np.arange(100.0)
    >>> b = epsilon_lower_bound_from_scores(members, nonmembers)
    >>> round(b.epsilon, 2), b.threshold, round(b.tpr_level, 6)
    (1.67, 100.0, 0.00025)
    """
    members = check_scores(member_scores, "member_scores")
    nonmembers = check_scores(nonmember_scores, "nonmember_scores")
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    significance = 1.0 - confidence
    if method == "bonferroni":
        levels = dict(tpr_level=significance / (2 * members.size), fpr_level=significance / (2 * nonmembers.size))
        best = _best_threshold(members, nonmembers, delta=delta, **levels)
        return _bound_at(members, nonmembers, best, delta=delta, confidence=confidence, method=method, **levels)
    if method != "split":
        raise DPValueError(f"method must be one of {THRESHOLD_SELECTIONS}, got {method!r}")
    fraction = check_probability(selection_fraction, "selection_fraction")
    if members.size < 2 or nonmembers.size < 2:
        raise DPValueError("method='split' needs at least 2 members and 2 non-members; use method='bonferroni'")
    gen = as_generator(rng)
    sel_m, eval_m = _split(members, fraction, gen, "selection_fraction")
    sel_n, eval_n = _split(nonmembers, fraction, gen, "selection_fraction")
    levels = dict(tpr_level=significance / 2, fpr_level=significance / 2)
    best = _best_threshold(sel_m, sel_n, delta=delta, **levels)
    return _bound_at(eval_m, eval_n, best, delta=delta, confidence=confidence, method=method, **levels)


def _split(scores: np.ndarray, fraction: float, gen: np.random.Generator, name: str):
    n_select = int(round(fraction * scores.size))
    if not 1 <= n_select <= scores.size - 1:
        raise DPValueError(f"{name}={fraction} leaves an empty part of {scores.size} scores; use a value near 0.5")
    perm = gen.permutation(scores.size)
    return scores[perm[:n_select]], scores[perm[n_select:]]
