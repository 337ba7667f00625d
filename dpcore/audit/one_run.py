"""Privacy auditing with one training run (Steinke, Nasr & Jagielski, NeurIPS 2023).

The game: m canaries, each included in the training set independently with probability
1/2 (S_i = +1 in, -1 out). After one training run the auditor scores every canary,
guesses T_i = +1 for its k+ highest scores, T_i = -1 for its k- lowest and abstains on
the rest: r = k+ + k- guesses, of which v are right (T_i = S_i).

Their Theorem 5.2: if the training algorithm is (eps, delta)-DP with respect to each
canary, then for every v

    P[V >= v] <= beta(eps) + 2 m delta alpha(eps),
    beta(eps)  = P[Binomial(r, q) >= v],                  q = e^eps / (1 + e^eps),
    alpha(eps) = max_{i = 1..v} P[v - i <= Binomial(r, q) < v] / i.

The right-hand side is the p-value of the claim "(eps, delta)-DP" (their Algorithm 2,
"compute epsilon lower bound"); the lower bound at confidence 1 - a is the largest eps
whose p-value is still below a. With delta = 0 this is a binomial test, and the bound
has a closed form: logit of the one-sided Clopper-Pearson lower limit of v / r.

The guess rule (k+, k-) must be fixed before looking at which canaries were included.
The paper's experiments report the best bound over several numbers of guesses; that
maximum is an a-level bound only after a multiple-testing correction, which
:func:`one_run_audit` applies (Bonferroni over the candidates tried) unless asked not
to (``correction="none"`` reproduces the uncorrected statistic, labelled as such).

References
----------
Steinke, Nasr, Jagielski. Privacy auditing with one (1) training run. NeurIPS 2023
(Algorithm 1 the auditor; Algorithm 2 and Theorem 5.2 the bound).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import special, stats

from ..exceptions import DPTypeError, DPValueError
from ..rng import as_generator
from ..teaching.verdict import confidence_text
from ..types import ArrayLike, RngLike
from ..validation import check_delta, check_int, check_nonnegative
from .bounds import check_confidence
from .roc import check_scores

__all__ = [
    "one_run_p_value",
    "one_run_epsilon_lower_bound",
    "one_run_guesses",
    "default_guess_counts",
    "OneRunAudit",
    "one_run_audit",
    "CORRECTIONS",
]

#: ``"bonferroni"``: a valid bound over several guess counts; ``"none"``: the paper's reported maximum.
CORRECTIONS = ("bonferroni", "none")

_GRID_POINTS = 33
_REFINEMENTS = 5  # bracket width upper / 32^5, about 3e-8 upper
_EXACT_WINDOW = 2048  # alpha's maximum is exact over the first 2048 window lengths


def _check_game(m, r, v) -> tuple[int, int, int]:
    m = check_int(m, "m", minimum=1)
    r = check_int(r, "r", minimum=0, maximum=m)
    v = check_int(v, "v", minimum=0, maximum=r)
    return m, r, v


def _window(r: int, v: int, q: np.ndarray, i: np.ndarray) -> np.ndarray:
    """P[v - i <= Binomial(r, q) < v] for rows q and columns i, as a difference of the two
    tails on v's side of the mode (small numbers, so the difference does not cancel)."""
    q, lower = q[:, None], (v - 1 - i)[None, :]
    above_mode = (v - 1) >= r * q
    upper_tail = stats.binom.sf(lower, r, q) - stats.binom.sf(v - 1, r, q)
    lower_tail = stats.binom.cdf(v - 1, r, q) - stats.binom.cdf(lower, r, q)
    return np.maximum(np.where(above_mode, upper_tail, lower_tail), 0.0)


def _alpha(r: int, v: int, q: np.ndarray) -> np.ndarray:
    """alpha = max_{i = 1..v} P[v - i <= Binomial(r, q) < v] / i for each q.

    Exact (a cumulative sum of the pmf) for i <= _EXACT_WINDOW. Beyond, i runs over a
    geometric grid i_0 < i_1 < ... with ratio 1.01 and each gap contributes
    window(i_{k+1}) / i_k >= window(i) / i for every i in [i_k, i_{k+1}] (the window grows
    with i): an upper bound within 1% of alpha, so the p-value stays valid.
    """
    exact_i = np.arange(1, min(v, _EXACT_WINDOW) + 1)
    pmf = stats.binom.pmf(v - exact_i, r, q[:, None])
    alpha = np.max(np.cumsum(pmf, axis=1) / exact_i, axis=1)
    if v > _EXACT_WINDOW:
        grid = np.unique(np.r_[np.geomspace(_EXACT_WINDOW, v, _geometric_points(v)).astype(np.int64), v])
        window = _window(r, v, q, grid)
        alpha = np.maximum(alpha, np.max(window[:, 1:] / grid[:-1], axis=1))
    return alpha


def _geometric_points(v: int) -> int:
    return int(np.ceil(np.log(v / _EXACT_WINDOW) / np.log(1.01))) + 2


def _p_values(m: int, r: int, v: int, epsilons: np.ndarray, delta: float) -> np.ndarray:
    """Theorem 5.2's bound on P[V >= v], vectorised over ``epsilons``."""
    q = special.expit(epsilons)
    beta = stats.binom.sf(v - 1, r, q)  # P[Binomial(r, q) >= v]
    if delta == 0.0 or v == 0:
        return np.minimum(beta, 1.0)
    return np.minimum(beta + 2.0 * m * delta * _alpha(r, v, q), 1.0)


def one_run_p_value(*, m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """P[at least v of r guesses right] under (eps, delta)-DP, by Theorem 5.2.

    Parameters
    ----------
    m : int
        Number of canaries (the delta term grows with all of them, guessed or not).
    r, v : int
        Guesses made and guesses right, 0 <= v <= r <= m.
    epsilon : float
        eps >= 0 of the claim tested.
    delta : float
        delta of the claim.

    References
    ----------
    Steinke, Nasr, Jagielski. Privacy auditing with one (1) training run, Theorem 5.2. NeurIPS 2023.

    Examples
    --------
    Under eps = 0 each guess is a fair coin: 9 of 10 right has probability 11/1024.

    >>> one_run_p_value(m=10, r=10, v=9, epsilon=0.0) == 11 / 1024
    True
    """
    m, r, v = _check_game(m, r, v)
    epsilon = check_nonnegative(epsilon, "epsilon")
    delta = check_delta(delta)
    return float(_p_values(m, r, v, np.array([epsilon]), delta)[0])


def _pure_bound(r: int, v: int, significance: float) -> float:
    """delta = 0: P[Bin(r, q) >= v] < a  <=>  q < BetaInv(a; v, r - v + 1); eps = logit(q)."""
    if v == 0:
        return 0.0
    q_star = float(stats.beta.ppf(significance, v, r - v + 1))
    return max(0.0, float(special.logit(q_star))) if q_star > 0.5 else 0.0


def _bound(m: int, r: int, v: int, delta: float, significance: float) -> float:
    upper = _pure_bound(r, v, significance)
    if delta == 0.0 or upper == 0.0:
        return upper
    # With delta > 0 the p-value is at least the delta = 0 one, so every rejected eps lies
    # in [0, upper). Report the largest rejected eps found (an (eps, delta)-DP algorithm is
    # also (eps', delta)-DP for every eps' > eps, so the supremum of the rejected set is a
    # valid bound even where the p-value is not monotone). Each round narrows the bracket
    # [last rejected, next not rejected] 32-fold.
    best, lo, hi = 0.0, 0.0, upper
    for _ in range(_REFINEMENTS):
        grid = np.linspace(lo, hi, _GRID_POINTS)
        rejected = np.flatnonzero(_p_values(m, r, v, grid, delta) < significance)
        if rejected.size == 0:
            break
        i = int(rejected[-1])
        best = float(grid[i])
        if i == grid.size - 1:
            break
        lo, hi = grid[i], grid[i + 1]
    return best


def one_run_epsilon_lower_bound(*, m: int, r: int, v: int, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The largest eps whose (eps, delta) claim the one-run game rejects at ``confidence``.

    sup{eps >= 0 : p(eps) < 1 - confidence} with p from :func:`one_run_p_value`; 0 when
    even eps = 0 is not rejected.

    References
    ----------
    Steinke, Nasr, Jagielski. Privacy auditing with one (1) training run, Algorithm 2. NeurIPS 2023.

    Examples
    --------
    >>> round(one_run_epsilon_lower_bound(m=1000, r=1000, v=731), 3)
    0.881
    >>> round(one_run_epsilon_lower_bound(m=1000, r=1000, v=731, delta=1e-5), 3)
    0.88
    """
    m, r, v = _check_game(m, r, v)
    delta = check_delta(delta)
    significance = 1.0 - check_confidence(confidence)
    return _bound(m, r, v, delta, significance)


def one_run_guesses(scores: ArrayLike, *, k_pos: int, k_neg: int) -> np.ndarray:
    """The auditor's guesses: +1 on the ``k_pos`` highest scores, -1 on the ``k_neg`` lowest, else 0.

    Ties are broken by position (stable sort): valid only where the positions do not depend on
    the canaries' membership; :func:`one_run_audit` shuffles the canaries first for that reason.

    References
    ----------
    Steinke, Nasr, Jagielski. Privacy auditing with one (1) training run, Algorithm 1. NeurIPS 2023.

    Examples
    --------
    >>> one_run_guesses([0.3, 2.0, -1.0, 0.5], k_pos=1, k_neg=1).tolist()
    [0, 1, -1, 0]
    """
    values = check_scores(scores, "scores")
    k_pos = check_int(k_pos, "k_pos", minimum=0)
    k_neg = check_int(k_neg, "k_neg", minimum=0)
    if k_pos + k_neg > values.size:
        raise DPValueError(f"k_pos + k_neg = {k_pos + k_neg} is more guesses than canaries ({values.size})")
    order = np.argsort(-values, kind="stable")
    guesses = np.zeros(values.size, dtype=np.int8)
    guesses[order[:k_pos]] = 1
    guesses[order[values.size - k_neg:]] = -1
    return guesses


def default_guess_counts(m: int, *, n_candidates: int = 8, min_guesses: int = 10) -> tuple[tuple[int, int], ...]:
    """(k+, k-) pairs to try: r = m, m/2, m/4, ... (at least ``min_guesses``), split evenly.

    >>> default_guess_counts(1000, n_candidates=4)
    ((500, 500), (250, 250), (125, 125), (62, 63))
    """
    m = check_int(m, "m", minimum=1)
    counts, r = [], m
    while len(counts) < n_candidates and r >= min(min_guesses, m):
        pair = (r // 2, r - r // 2)
        if pair not in counts:
            counts.append(pair)
        r //= 2
    return tuple(counts)


@dataclass(frozen=True)
class OneRunAudit:
    """The outcome of :func:`one_run_audit` for the best guess rule tried.

    ``guesses`` is r and ``correct`` v for that rule; ``n_candidates`` the number of
    rules tried; the bound is at ``confidence`` after ``correction``.
    """

    epsilon_lower_bound: float
    k_pos: int
    k_neg: int
    guesses: int
    correct: int
    m: int
    delta: float
    confidence: float
    n_candidates: int
    correction: str


def _check_rules(guess_counts, m: int) -> tuple[tuple[int, int], ...]:
    """``guess_counts`` as (k_pos, k_neg) pairs of whole counts, default :func:`default_guess_counts`."""
    if guess_counts is None:
        return default_guess_counts(m)
    rules = []
    for rule in guess_counts:
        if isinstance(rule, (str, bytes)) or not hasattr(rule, "__len__") or len(rule) != 2:
            raise DPValueError(f"guess_counts must hold (k_pos, k_neg) pairs, e.g. [(100, 100), (50, 50)]; got "
                               f"{rule!r} among them")
        rules.append((check_int(rule[0], "k_pos", minimum=0), check_int(rule[1], "k_neg", minimum=0)))
    if not rules:
        raise DPValueError("guess_counts is empty; give at least one (k_pos, k_neg) pair")
    return tuple(rules)


def _nothing_provable(rules, m: int, level: float, confidence: float) -> str:
    """Why no rule of ``rules`` can reject even eps = 0: r guesses all right have probability 2^-r under eps = 0,
    which must fall below the rule's significance ``level``."""
    most = max(k_pos + k_neg for k_pos, k_neg in rules)
    need = max(1, math.ceil(math.log2(1.0 / level) + 1e-9))  # the fewest guesses whose all being right is rare enough
    if most == 0:
        what = "every guess rule in guess_counts abstains on every canary (k_pos + k_neg = 0)"
    else:
        what = (f"the most guesses any rule makes is {most}, and even all of them right would happen with "
                f"probability 2^-{most} under eps = 0, not below the significance {level:.3g} each of the "
                f"{len(rules)} rule(s) is tested at ({confidence_text(confidence)} confidence)")
    fix = (f"use at least {need} canaries (there are {m}) and guess on them" if need > m else
           f"give guess_counts with at least {need} guesses (k_pos + k_neg) in a rule")
    return f"this one-run audit cannot prove any eps > 0: {what}; {fix} (Steinke, Nasr & Jagielski 2023, Theorem 5.2)"


def _check_included(included, m: int) -> np.ndarray:
    arr = np.asarray(included)
    if arr.shape != (m,):
        raise DPValueError(f"included must have one entry per canary ({m}), got shape {arr.shape}")
    if arr.dtype != bool:
        if not np.all(np.isin(arr, (0, 1))):
            raise DPTypeError("included must be boolean (True = the canary was in the training set)")
        arr = arr.astype(bool)
    return arr


def one_run_audit(
    scores: ArrayLike,
    included: ArrayLike,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    guess_counts: Sequence[tuple[int, int]] | None = None,
    correction: str = "bonferroni",
    rng: RngLike = 0,
) -> OneRunAudit:
    """Steinke et al.'s one-run epsilon lower bound from canary scores.

    Parameters
    ----------
    scores : array_like, shape (m,)
        The auditor's score of each canary (higher = "was in the training set").
    included : array_like of bool, shape (m,)
        Whether each canary was included; it must have been drawn independently with
        probability 1/2 per canary, before training.
    delta, confidence : float
        The (eps, delta) claim is rejected at confidence ``confidence``.
    guess_counts : sequence of (k_pos, k_neg), optional
        Guess rules to try; default :func:`default_guess_counts`.
    correction : {"bonferroni", "none"}
        ``"bonferroni"`` tests each rule at significance a / (number of rules), so the
        best bound is valid at ``confidence``. ``"none"`` takes the best of the rules at
        significance a each, as the paper's experiments report it: not a valid bound at
        ``confidence`` when more than one rule is tried.
    rng : int, numpy Generator or None
        Breaks ties among equal scores: the canaries are put in a random order drawn from it before the highest
        and lowest are taken, never in the order given (scores listed members first, as a caller naturally lists
        them, would otherwise have every tie settled in the members' favour: a constant score, an attack that
        knows nothing, "proved" eps >= 5.3 on 1000 canaries). Seeded by default, so an audit repeats exactly.

    Raises
    ------
    DPValueError
        Among others, where no rule could prove any eps > 0 even with all its guesses right (every rule abstains,
        or guesses too few: r right of r has probability 2^-r at eps = 0), and where ``included`` has every canary
        in or every one out (not fair coins).

    References
    ----------
    Steinke, Nasr, Jagielski. Privacy auditing with one (1) training run. NeurIPS 2023.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> included = rng.random(2000) < 0.5
    >>> scores = np.where(rng.random(2000) < 0.88, included, ~included).astype(float)  # RR, eps = 2
    >>> audit = one_run_audit(scores, included, guess_counts=[(1000, 1000)])
    >>> round(audit.epsilon_lower_bound, 2), audit.guesses
    (1.98, 2000)
    """
    values = check_scores(scores, "scores")
    member = _check_included(included, values.size)
    delta = check_delta(delta)
    significance = 1.0 - check_confidence(confidence)
    if correction not in CORRECTIONS:
        raise DPValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    rules = _check_rules(guess_counts, values.size)
    if member.all() or not member.any():  # fair coins leave every canary on one side with probability 2^(1 - m)
        side = "in" if member.all() else "out"
        raise DPValueError(f"included has every canary {side} ({values.size} of {values.size}): the bound needs each "
                           "canary included by its own fair coin before training, which leaves some in and some out; "
                           "draw included = rng.random(m) < 0.5 and train on the canaries it marks")
    level = significance / len(rules) if correction == "bonferroni" else significance
    if all(_pure_bound(k_pos + k_neg, k_pos + k_neg, level) == 0.0 for k_pos, k_neg in rules):
        raise DPValueError(_nothing_provable(rules, values.size, level, 1.0 - significance))
    # the guesses must depend on the scores alone (and on randomness independent of the coins), not on where the
    # caller put each canary: ties are broken in a random order (Steinke, Nasr & Jagielski 2023, Algorithm 1)
    order = as_generator(rng).permutation(values.size)
    values, truth = values[order], np.where(member, 1, -1)[order]
    best = None
    for k_pos, k_neg in rules:
        guesses = one_run_guesses(values, k_pos=k_pos, k_neg=k_neg)
        r = int(np.count_nonzero(guesses))
        v = int(np.count_nonzero(guesses == truth))
        if best is not None and _pure_bound(r, v, level) <= best[0]:
            continue  # the delta = 0 bound is an upper limit on the delta > 0 one
        eps = _bound(values.size, r, v, delta, level)
        if best is None or eps > best[0]:
            best = (eps, int(k_pos), int(k_neg), r, v)
    eps, k_pos, k_neg, r, v = best
    return OneRunAudit(eps, k_pos, k_neg, r, v, values.size, delta, 1.0 - significance, len(rules), correction)
