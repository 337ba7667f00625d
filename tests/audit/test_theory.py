"""Limits on any attack: the (eps, delta) hypothesis-testing region against hand computations,
and the PLD trade-off curve against the closed-form Gaussian (mu-GDP) curve."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld
from scipy import stats

from dpcore.accounting import EpsilonDeltaDpEvent, PrivacyLedger, epsilon_of_event
from dpcore.audit import theory
from dpcore.exceptions import DPCoreError


@pytest.mark.parametrize(
    "fpr, epsilon, delta, expected",
    [
        (0.1, math.log(3), 0.0, 0.3),  # 3 * 0.1
        (0.25, math.log(3), 0.0, 0.75),  # the knee 1 / (e^eps + 1)
        (0.4, math.log(3), 0.0, 0.8),  # 1 - 0.6 / 3
        (0.0, math.log(2), 0.1, 0.1),  # delta alone
        (0.2, math.log(2), 0.1, 0.5),  # 2 * 0.2 + 0.1
        (0.5, math.log(2), 0.1, 0.8),  # 1 - (1 - 0.1 - 0.5) / 2
        (0.9, 5.0, 0.0, 1 - 0.1 * math.exp(-5.0)),
        (0.3, 1e-9, 0.0, 0.3),  # eps -> 0: no test beats chance
    ],
)
def test_max_tpr_matches_hand_computations(fpr, epsilon, delta, expected):
    assert theory.max_tpr_at_fpr(fpr, epsilon=epsilon, delta=delta) == pytest.approx(expected, abs=1e-8)


def test_max_tpr_is_the_boundary_of_all_four_inequalities():
    rng = np.random.default_rng(0)
    for _ in range(200):
        eps, delta, a = rng.uniform(0, 4), rng.uniform(0, 0.2), rng.uniform(0, 1)
        b = theory.max_tpr_at_fpr(a, epsilon=eps, delta=delta)
        e = math.exp(eps)

        def inside(tpr):
            return (tpr <= e * a + delta + 1e-12 and 1 - a <= e * (1 - tpr) + delta + 1e-12
                    and a <= e * tpr + delta + 1e-12 and 1 - tpr <= e * (1 - a) + delta + 1e-12 and tpr <= 1)

        assert inside(b)
        assert not inside(b + 1e-6)


def test_max_tpr_of_a_non_private_claim_is_one():
    assert theory.max_tpr_at_fpr([0.0, 0.5], epsilon=float("inf")).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("epsilon, delta", [(math.log(3), 0.0), (1.0, 1e-5), (0.2, 0.05), (6.0, 1e-3)])
def test_max_advantage_is_the_largest_gap_of_the_region(epsilon, delta):
    grid = np.linspace(0, 1, 200_001)
    gap = np.max(theory.max_tpr_at_fpr(grid, epsilon=epsilon, delta=delta) - grid)
    assert theory.max_advantage(epsilon=epsilon, delta=delta) == pytest.approx(gap, abs=1e-5)
    assert theory.max_advantage(epsilon=epsilon, delta=delta) == pytest.approx(
        (math.exp(epsilon) - 1 + 2 * delta) / (math.exp(epsilon) + 1)
    )


FPRS = np.r_[0.0, np.logspace(-6, 0, 121)]


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_pld_curve_of_one_gaussian_is_the_gdp_curve(sigma):
    got = theory.pld_max_tpr_at_fpr(dp_accounting.GaussianDpEvent(sigma), FPRS)
    exact = stats.norm.cdf(stats.norm.ppf(FPRS) + 1.0 / sigma)
    # pessimistic discretisation: never below the exact curve, and within 1e-4 of it
    assert np.all(got >= exact - 1e-9)
    np.testing.assert_allclose(got, exact, atol=1e-4)


def test_pld_curve_of_composed_gaussians_is_gdp_with_sqrt_t_over_sigma():
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(3.0), 16)
    got = theory.pld_max_tpr_at_fpr(event, FPRS)
    np.testing.assert_allclose(got, theory.gaussian_tradeoff_tpr(FPRS, mu=4 / 3), atol=1e-4)


def test_pld_curve_of_randomized_response_is_the_pure_dp_region():
    # binary randomized response is the extremal eps-DP mechanism (Kairouz et al. 2015):
    # its curve is exactly the (eps, 0) region; p = 0.5 gives eps = ln 3
    event = dp_accounting.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=2)
    got = theory.pld_max_tpr_at_fpr(event, FPRS, neighbouring="replace_one")
    np.testing.assert_allclose(got, theory.max_tpr_at_fpr(FPRS, epsilon=math.log(3)), atol=2e-3)


def test_pld_curve_is_inside_the_region_of_the_accounted_epsilon():
    # DP-SGD with sigma = 1.5, q = 0.04, 2250 steps: PLD epsilon ~6.8 at delta = 1e-5
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.04, dp_accounting.GaussianDpEvent(1.5)), 2250
    )
    accountant = pld.PLDAccountant(value_discretization_interval=1e-3)
    accountant.compose(event)
    eps = accountant.get_epsilon(1e-5)
    assert 6.7 < eps < 6.9
    exact = theory.pld_max_tpr_at_fpr(event, FPRS)
    region = theory.max_tpr_at_fpr(FPRS, epsilon=eps, delta=1e-5)
    assert np.all(exact <= region + 1e-9)
    # and much tighter at low FPR: the (eps, delta) claim alone overstates what an attack can do
    at_1e3 = np.argmin(np.abs(FPRS - 1e-3))
    assert exact[at_1e3] < 0.1 * region[at_1e3]


def test_a_non_private_event_allows_a_perfect_attack():
    assert theory.pld_max_tpr_at_fpr(dp_accounting.NonPrivateDpEvent(), [0.0, 0.1]).tolist() == [1.0, 1.0]


def test_randomized_response_is_read_for_a_replaced_value_whatever_relation_is_named():
    # as the ledger reads it (dpcore.accounting.ledger._relation_for): randomized response is defined for one
    # value replaced, so naming add/remove gives the same curve, not a refusal or another analysis
    event = dp_accounting.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=2)
    np.testing.assert_array_equal(theory.pld_max_tpr_at_fpr(event, FPRS),
                                  theory.pld_max_tpr_at_fpr(event, FPRS, neighbouring="replace_one"))


@pytest.mark.parametrize("event, neighbouring", [
    (dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.04, dp_accounting.GaussianDpEvent(1.5)), 2250), "add_remove"),
    (dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 300), "replace_one"),
    (dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(2.0), dp_accounting.LaplaceDpEvent(3.0)]),
     "add_remove"),
    (dp_accounting.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=10), "replace_one"),
])
def test_the_audit_theory_reads_the_epsilon_the_ledger_reports(event, neighbouring):
    # one composition: the trade-off curve's epsilon range is the ledger's PLD epsilon of the same event, and the
    # profile's delta at that epsilon is the delta it was read at
    profile, e_max = theory._privacy_profile(event, neighbouring, 1e-3)
    ledger = PrivacyLedger(delta=1e-12, accountant="pld", neighbouring=neighbouring, pld_discretization=1e-3)
    assert e_max == ledger.spend(event)
    assert e_max == epsilon_of_event(event, delta=1e-12, accountant="pld", neighbouring=neighbouring,
                                     pld_discretization=1e-3)
    for delta in (1e-5, 1e-3):
        eps = epsilon_of_event(event, delta=delta, accountant="pld", neighbouring=neighbouring,
                               pld_discretization=1e-3)
        assert profile.epsilon(delta) == eps
        if not isinstance(event, dp_accounting.RandomizedResponseDpEvent):
            assert profile.delta([eps])[0] <= delta * (1 + 1e-6)
        # (randomized response's epsilon is its pure ln 11, basic composition capping the PLD's answer; the
        # pessimistic grid puts its delta(ln 11) a little above 0: the curve errs on the safe side)


def test_a_profile_the_ledger_cannot_hold_as_one_pld_is_refused_with_the_reason():
    # a theorem's (epsilon, delta) has no privacy loss distribution: the page then draws the claim's region only
    with pytest.raises(DPCoreError, match="known only by its"):
        theory.pld_max_tpr_at_fpr(EpsilonDeltaDpEvent(1.0, 1e-6), 0.1)


def test_bad_events_and_rates_name_the_problem():
    with pytest.raises(TypeError, match="DpEvent"):
        theory.pld_max_tpr_at_fpr("gaussian", 0.1)
    with pytest.raises(DPCoreError, match="neighbouring"):
        theory.pld_max_tpr_at_fpr(dp_accounting.GaussianDpEvent(1.0), 0.1, neighbouring="swap")
    with pytest.raises(DPCoreError, match="fpr"):
        theory.max_tpr_at_fpr(1.5, epsilon=1.0)
    with pytest.raises(DPCoreError, match="epsilon"):
        theory.max_tpr_at_fpr(0.5, epsilon=-1.0)
    with pytest.raises(DPCoreError, match="mu"):
        theory.gaussian_tradeoff_tpr(0.5, mu=0.0)


def test_the_claims_largest_tpr_is_not_capped_at_e_to_the_700():
    """At FPR a the claim (eps, delta) allows a TPR up to min(1, e^eps a + delta, ...) (Kairouz et al. 2015); e^eps
    was capped at e^700, so for eps = 1000 at FPR 1e-305 the bound read 0.1 where the claim allows 1."""
    assert theory.max_tpr_at_fpr([1e-305, 1e-320], epsilon=1000.0).tolist() == [1.0, 1.0]
    assert theory.max_tpr_at_fpr(0.0, epsilon=1000.0) == 0.0
    assert theory.max_tpr_at_fpr(1e-300, epsilon=600.0) == pytest.approx(math.exp(600.0) * 1e-300, rel=1e-12)
