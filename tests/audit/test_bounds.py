"""Clopper-Pearson epsilon lower bounds: limits against scipy's exact binomial intervals,
coverage on a known epsilon-DP mechanism, and a deliberately broken mechanism caught."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.audit import bounds
from dpcore.exceptions import DPCoreError

RR_CASES = [(0, 10), (3, 10), (10, 10), (0, 1), (1, 1), (17, 250), (249, 250), (500, 1000)]


@pytest.mark.parametrize("k, n", RR_CASES)
@pytest.mark.parametrize("significance", [0.025, 0.05, 0.001])
def test_clopper_pearson_limits_match_scipy_exact_interval(k, n, significance):
    # a two-sided exact interval at level 1 - 2s has one-sided tails s on each side
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=1 - 2 * significance, method="exact")
    assert bounds.clopper_pearson_lower(k, n, significance=significance) == pytest.approx(ci.low, abs=1e-12)
    assert bounds.clopper_pearson_upper(k, n, significance=significance) == pytest.approx(ci.high, abs=1e-12)


def test_clopper_pearson_is_vectorised():
    k = np.array([c[0] for c in RR_CASES])
    n = np.array([c[1] for c in RR_CASES])
    lows = bounds.clopper_pearson_lower(k, n, significance=0.05)
    assert lows.shape == k.shape
    assert lows.tolist() == [bounds.clopper_pearson_lower(int(a), int(b), significance=0.05) for a, b in zip(k, n)]


def _independent_bound(tp, fn, fp, tn, delta, confidence):
    """Kairouz et al.'s two inequalities with scipy's exact interval at level `confidence` (tails a/2)."""
    tpr = stats.binomtest(tp, tp + fn).proportion_ci(confidence_level=confidence, method="exact")
    fpr = stats.binomtest(fp, fp + tn).proportion_ci(confidence_level=confidence, method="exact")
    candidates = [0.0]
    if tpr.low - delta > 0:
        candidates.append(math.log((tpr.low - delta) / fpr.high))
    if 1 - fpr.high - delta > 0:
        candidates.append(math.log((1 - fpr.high - delta) / (1 - tpr.low)))
    return max(candidates)


@pytest.mark.parametrize(
    "counts",
    [(900, 100, 50, 950), (1000, 0, 0, 1000), (1000, 0, 500, 500), (30, 70, 1, 99), (5, 5, 5, 5), (0, 10, 0, 10)],
)
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.05])
def test_bound_matches_the_formula_with_scipy_limits(counts, delta):
    tp, fn, fp, tn = counts
    got = bounds.epsilon_lower_bound(tp=tp, fn=fn, fp=fp, tn=tn, delta=delta)
    assert got == pytest.approx(_independent_bound(tp, fn, fp, tn, delta, 0.95), abs=1e-10)


def test_perfect_attack_on_a_thousand_pairs_certifies_about_5_6():
    # TPR_lo = 0.025^(1/1000), FPR_hi = 1 - 0.025^(1/1000): the most 2000 records can show at 95%
    lo = 0.025 ** (1 / 1000)
    assert bounds.epsilon_lower_bound(tp=1000, fn=0, fp=0, tn=1000) == pytest.approx(math.log(lo / (1 - lo)))
    assert round(math.log(lo / (1 - lo)), 1) == 5.6


def test_the_mirrored_inequality_is_used_when_it_is_stronger():
    # every member flagged, half the non-members too: TPR / FPR is only ~2 but
    # (1 - FPR) / (1 - TPR) is large
    tp, fn, fp, tn = 1000, 0, 500, 500
    lo = bounds.clopper_pearson_lower(tp, 1000, significance=0.025)
    hi = bounds.clopper_pearson_upper(fp, 1000, significance=0.025)
    got = bounds.epsilon_lower_bound(tp=tp, fn=fn, fp=fp, tn=tn)
    assert got == pytest.approx(math.log((1 - hi) / (1 - lo)))
    assert got > math.log(lo / hi) + 3


def test_delta_and_confidence_make_the_bound_smaller():
    kw = dict(tp=800, fn=200, fp=20, tn=980)
    base = bounds.epsilon_lower_bound(**kw)
    assert bounds.epsilon_lower_bound(**kw, delta=0.1) < base
    assert bounds.epsilon_lower_bound(**kw, confidence=0.999) < base < bounds.epsilon_lower_bound(**kw, confidence=0.5)
    assert bounds.epsilon_lower_bound(tp=800, fn=200, fp=20, tn=980, delta=0.9) == 0.0


def _rr_counts(rng, epsilon, n, trials):
    """Randomized response on membership: a member answers 1 w.p. e^eps / (1 + e^eps),
    a non-member w.p. 1 / (1 + e^eps); flag the 1s. Exactly eps-DP and TPR / FPR = e^eps."""
    q = math.exp(epsilon) / (1 + math.exp(epsilon))
    return rng.binomial(n, q, trials), rng.binomial(n, 1 - q, trials)


def test_coverage_on_randomized_response_is_at_least_the_confidence():
    rng = np.random.default_rng(0)
    trials, n = 400, 500
    tp, fp = _rr_counts(rng, 1.0, n, trials)
    eps = np.array([
        bounds.epsilon_lower_bound(tp=int(a), fn=n - int(a), fp=int(b), tn=n - int(b)) for a, b in zip(tp, fp)
    ])
    # at most 5% may exceed the true epsilon; allow 2.5 binomial standard deviations
    assert np.mean(eps > 1.0) <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / trials)
    # the same check catches a "bound" without confidence: point estimates exceed half the time
    point = np.log((tp / n) / (fp / n))
    assert np.mean(point > 1.0) > 0.3
    # and the bound is not vacuous
    assert np.median(eps) > 0.7


def test_a_mechanism_claimed_at_eps_1_but_run_at_eps_4_is_caught():
    rng = np.random.default_rng(1)
    tp, fp = _rr_counts(rng, 4.0, 1000, 50)
    eps = [bounds.epsilon_lower_bound(tp=int(a), fn=1000 - int(a), fp=int(b), tn=1000 - int(b)) for a, b in zip(tp, fp)]
    assert min(eps) > 1.0
    assert np.median(eps) > 3.0


def _laplace_scores(rng, epsilon, n):
    """Scores of a Laplace mechanism on a count that one record moves by 1: exactly eps-DP."""
    return rng.laplace(1.0, 1.0 / epsilon, n), rng.laplace(0.0, 1.0 / epsilon, n)


@pytest.mark.parametrize("method", bounds.THRESHOLD_SELECTIONS)
def test_threshold_selection_keeps_coverage(method):
    rng = np.random.default_rng(2)
    trials = 100
    eps = np.array([
        bounds.epsilon_lower_bound_from_scores(*_laplace_scores(rng, 1.0, 1000), method=method, rng=rng).epsilon
        for _ in range(trials)
    ])
    assert np.mean(eps > 1.0) <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / trials)
    assert np.median(eps) > 0.4


@pytest.mark.parametrize("method", bounds.THRESHOLD_SELECTIONS)
def test_threshold_selection_catches_a_broken_laplace_mechanism(method):
    rng = np.random.default_rng(3)
    members, nonmembers = _laplace_scores(rng, 4.0, 1000)  # claimed eps = 1
    result = bounds.epsilon_lower_bound_from_scores(members, nonmembers, method=method, rng=rng)
    assert result.epsilon > 1.0
    # the counts and levels reported are those the bound used
    tpr_lo = bounds.clopper_pearson_lower(result.tp, result.tp + result.fn, significance=result.tpr_level)
    fpr_hi = bounds.clopper_pearson_upper(result.fp, result.fp + result.tn, significance=result.fpr_level)
    assert result.epsilon == pytest.approx(max(math.log(tpr_lo / fpr_hi), math.log((1 - fpr_hi) / (1 - tpr_lo))))


def test_split_counts_only_the_evaluation_half_and_is_reproducible():
    rng = np.random.default_rng(4)
    members, nonmembers = _laplace_scores(rng, 2.0, 301)
    a = bounds.epsilon_lower_bound_from_scores(members, nonmembers, method="split", rng=7)
    b = bounds.epsilon_lower_bound_from_scores(members, nonmembers, method="split", rng=7)
    assert a == b
    assert a.tp + a.fn == 151 and a.fp + a.tn == 151  # the other 150 chose the threshold
    assert a.tpr_level == a.fpr_level == pytest.approx(0.025)


def test_bonferroni_splits_the_level_over_the_possible_counts():
    members, nonmembers = np.array([3.0, 2.0, 2.0]), np.array([1.0, 2.0])
    result = bounds.epsilon_lower_bound_from_scores(members, nonmembers, method="bonferroni", confidence=0.9)
    assert result.tpr_level == pytest.approx(0.1 / 6) and result.fpr_level == pytest.approx(0.1 / 4)
    assert result.tp + result.fn == 3 and result.fp + result.tn == 2


def test_bonferroni_limits_hold_at_every_threshold_simultaneously():
    # the guarantee behind picking the best threshold after looking: over many draws the
    # true TPR and FPR curves leave the limits at some threshold in at most a of the draws
    rng = np.random.default_rng(5)
    a, n, trials, failures = 0.2, 40, 400, 0
    grid = np.linspace(-4, 5, 400)  # thresholds between the data points too
    true_tpr, true_fpr = stats.norm.sf(grid, 1.0), stats.norm.sf(grid, 0.0)
    for _ in range(trials):
        members, nonmembers = rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n)
        tp = (members[:, None] >= grid).sum(0)
        fp = (nonmembers[:, None] >= grid).sum(0)
        lo = bounds.clopper_pearson_lower(tp, np.full_like(tp, n), significance=a / (2 * n))
        hi = bounds.clopper_pearson_upper(fp, np.full_like(fp, n), significance=a / (2 * n))
        failures += bool(np.any(true_tpr < lo) or np.any(true_fpr > hi))
    assert failures / trials <= a
    # a per-threshold level without the correction fails far more often
    naive = 0
    for _ in range(100):
        members = rng.normal(1.0, 1.0, n)
        tp = (members[:, None] >= grid).sum(0)
        naive += bool(np.any(true_tpr < bounds.clopper_pearson_lower(tp, np.full_like(tp, n), significance=a / 2)))
    assert naive / 100 > a


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(tp=-1, fn=1, fp=1, tn=1), "tp"),
        (dict(tp=1.5, fn=1, fp=1, tn=1), "tp"),
        (dict(tp=0, fn=0, fp=1, tn=1), "member"),
        (dict(tp=1, fn=1, fp=1, tn=1, delta=1.0), "delta"),
        (dict(tp=1, fn=1, fp=1, tn=1, confidence=1.0), "confidence"),
    ],
)
def test_bad_counts_name_the_parameter(kwargs, match):
    with pytest.raises(DPCoreError, match=match):
        bounds.epsilon_lower_bound(**kwargs)


def test_bad_selection_arguments_name_the_parameter():
    with pytest.raises(DPCoreError, match="method"):
        bounds.epsilon_lower_bound_from_scores([1.0, 2.0], [0.0, 1.0], method="best")
    with pytest.raises(DPCoreError, match="selection_fraction"):
        bounds.epsilon_lower_bound_from_scores([1.0, 2.0], [0.0, 1.0], method="split", selection_fraction=0.0)
    with pytest.raises(DPCoreError, match="bonferroni"):
        bounds.epsilon_lower_bound_from_scores([1.0], [0.0, 1.0], method="split")
