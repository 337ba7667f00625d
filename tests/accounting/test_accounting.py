"""Accounting: golden values, Opacus cross-check, calibration, curves, composition theorems."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest

from dpcore.accounting import (
    PrivacyLedger,
    advanced_composition,
    amplified_epsilon,
    calibrate,
    calibrate_noise_multiplier,
    composition_comparison,
    dpsgd_epsilon,
    dpsgd_event,
    epsilon_curve,
    gaussian_epsilon,
    make_accountant,
    naive_composition,
    steps_for,
)
from dpcore.accounting.composition import dpsgd_composition_bound
from dpcore.accounting.ledger import pld_delta_slack
from dpcore.exceptions import BudgetExceededError, DPCoreError, DPTypeError


def test_golden_rdp_and_pld():
    kw = dict(noise_multiplier=1.5, sample_rate=0.04, steps=2250, delta=1e-5)
    assert dpsgd_epsilon(**kw, accountant="rdp") == pytest.approx(7.33, abs=0.01)
    assert dpsgd_epsilon(**kw, accountant="pld") == pytest.approx(6.77, abs=0.01)


@pytest.mark.parametrize(
    "sigma,q,steps",
    [(s, q, t) for s in (0.8, 1.1, 2.0, 4.0) for q in (0.001, 0.01, 0.05) for t in (100, 5000)
     if not (s < 1 and q > 0.02 and t > 1000)] + [(1.5, 0.04, 2250)],
)
def test_rdp_matches_opacus_accountant(sigma, q, steps):
    """Opacus's own RDP analysis (an independent implementation) on the same grid of orders.

    The grid stays where epsilon is below ~60; far beyond, the two libraries' RDP-to-(eps, delta)
    conversions legitimately differ (both are valid upper bounds).
    """
    from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent

    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64))
    orders += [64, 80, 96, 128, 160, 192, 256, 384, 512, 1024]
    rdp = compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=orders)
    eps_opacus, _ = get_privacy_spent(orders=orders, rdp=rdp, delta=1e-5)
    ours = dpsgd_epsilon(noise_multiplier=sigma, sample_rate=q, steps=steps, delta=1e-5)
    assert ours == pytest.approx(eps_opacus, rel=0.01)


def test_pld_is_tighter_than_rdp():
    kw = dict(noise_multiplier=1.0, sample_rate=0.01, steps=1000, delta=1e-5)
    assert dpsgd_epsilon(**kw, accountant="pld") < dpsgd_epsilon(**kw, accountant="rdp")


@pytest.mark.parametrize("accountant,target", [("rdp", 0.5), ("rdp", 2.0), ("rdp", 8.0), ("pld", 1.0)])
def test_calibration_meets_target_tightly(accountant, target):
    q, steps = 0.02, 500
    s = calibrate_noise_multiplier(target_epsilon=target, delta=1e-5, sample_rate=q, steps=steps, accountant=accountant)
    eps = dpsgd_epsilon(noise_multiplier=s, sample_rate=q, steps=steps, delta=1e-5, accountant=accountant)
    assert eps <= target
    assert eps >= target * 0.98  # not wastefully noisy


@pytest.mark.parametrize("sigma,q,steps", [(1.5, 0.04, 2250), (0.7, 0.25, 240), (15.8, 0.25, 240), (0.5, 1.0, 3)])
def test_rdp_fast_path_is_a_fresh_accountant_plus_its_rounding(sigma, q, steps):
    """dpsgd_epsilon / epsilon_curve scale one step's RDP curve; a fresh dp_accounting accountant agrees, but for the
    allowance for its rounding the ledger adds at every step (trusted_step_rdp): never below, above by next to
    nothing."""
    from dpcore.accounting import ledger

    ledger._rdp_curve.cache_clear()
    acc = make_accountant("rdp")
    acc.compose(dpsgd_event(noise_multiplier=sigma, sample_rate=q, steps=steps))
    fresh = acc.get_epsilon(1e-5)
    eps = dpsgd_epsilon(noise_multiplier=sigma, sample_rate=q, steps=steps, delta=1e-5)
    assert fresh <= eps <= fresh * (1 + 1e-12) + steps * 1e-13
    curve = epsilon_curve(noise_multiplier=sigma, sample_rate=q, delta=1e-5, steps=[1, steps // 2 + 1, steps])
    assert curve[-1] == pytest.approx(eps, rel=1e-12)
    info = ledger._rdp_curve.cache_info()
    assert info.misses == 1 and info.hits >= 1  # the fast path ran (one curve, reused)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_fallback_without_dp_accounting_internals(monkeypatch, accountant):
    """If dp_accounting's internal layout changes, fresh accountants give the same numbers (slower)."""
    from dpcore.accounting import ledger

    kw = dict(noise_multiplier=1.1, sample_rate=0.05, steps=400, delta=1e-5, accountant=accountant)
    fast = dpsgd_epsilon(**kw)
    fast_sigma = calibrate_noise_multiplier(target_epsilon=2.0, delta=1e-5, sample_rate=0.05, steps=400,
                                            accountant=accountant)
    monkeypatch.setattr(ledger, "_rdp_curve_noted", lambda atom, rel: (None, None))
    monkeypatch.setattr(ledger, "_pld_of", lambda atom, count, rel, disc: None)
    assert dpsgd_epsilon(**kw) == pytest.approx(fast, rel=1e-9)
    slow_sigma = calibrate_noise_multiplier(target_epsilon=2.0, delta=1e-5, sample_rate=0.05, steps=400,
                                            accountant=accountant)
    assert slow_sigma == pytest.approx(fast_sigma, rel=2e-3)


@pytest.mark.parametrize("target,q,steps", [(1.0, 0.25, 240), (0.1, 0.25, 240), (10.0, 0.25, 240),
                                            (8.0, 0.01, 1000), (50.0, 0.5, 10)])
def test_rdp_calibration_agrees_with_dp_accounting_calibrate(target, q, steps):
    """The log-space Brent search lands where dp_accounting.calibrate_dp_mechanism does, on the safe side."""
    ours = calibrate_noise_multiplier(target_epsilon=target, delta=1e-5, sample_rate=q, steps=steps)
    ref = dp_accounting.calibrate_dp_mechanism(
        lambda: make_accountant("rdp"), lambda s: dpsgd_event(noise_multiplier=s, sample_rate=q, steps=steps),
        target, 1e-5, bracket_interval=dp_accounting.LowerEndpointAndGuess(1e-3, 1.0), tol=1e-6)
    assert ours == pytest.approx(ref, rel=5e-4)
    assert dpsgd_epsilon(noise_multiplier=ours, sample_rate=q, steps=steps, delta=1e-5) <= target
    assert dpsgd_epsilon(noise_multiplier=ours * 0.995, sample_rate=q, steps=steps, delta=1e-5) > target


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_ledger_as_odometer_equals_an_accountant_fed_the_same_epochs(accountant):
    """Per-epoch epsilon and the look-ahead equal a dp_accounting accountant composing the same steps."""
    sigma, q, delta, epochs = 1.3, 0.2, 1e-5, [5, 5, 6, 5]
    led = PrivacyLedger(delta=delta, accountant=accountant)
    acc = make_accountant(accountant)
    step = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    for n in epochs:
        ahead = led.epsilon_if(dpsgd_event(noise_multiplier=sigma, sample_rate=q, steps=n))
        acc.compose(step, n)
        # the PLD is read fail closed, at delta less its FFT's rounding (ledger.pld_delta_slack): never below the
        # accountant's own reading, and equal to the accountant's PLD read at that delta
        expected = acc.get_epsilon(delta) if accountant == "rdp" else acc._pld.get_epsilon_for_delta(
            delta - pld_delta_slack(acc._pld))
        spent = led.spend(dpsgd_event(noise_multiplier=sigma, sample_rate=q, steps=n))
        assert spent == pytest.approx(expected, rel=1e-12) and spent >= acc.get_epsilon(delta)
        assert ahead == led.epsilon  # the look-ahead predicts exactly what spending gives
    assert len(led) == len(epochs)
    assert sum(e.count for e in led.events) == sum(epochs)


def test_epsilon_curve_matches_pointwise_and_grows():
    steps = [0, 10, 100, 1000]
    curve = epsilon_curve(noise_multiplier=1.2, sample_rate=0.01, delta=1e-5, steps=steps)
    assert curve[0] == 0.0
    assert np.all(np.diff(curve) > 0)
    for s, e in zip(steps[1:], curve[1:]):
        assert e == pytest.approx(dpsgd_epsilon(noise_multiplier=1.2, sample_rate=0.01, steps=s, delta=1e-5), rel=1e-9)


def test_abadi_figure_moments_accountant_far_below_composition():
    df = composition_comparison(noise_multiplier=4, sample_rate=0.01, delta=1e-5, epochs=[100, 400])
    at400 = df[df.epochs == 400].set_index("method").epsilon
    rdp = at400["Moments accountant (RDP)"]
    assert 1.5 < rdp < 3.0  # Abadi et al.: about 2 after 400 epochs at q=0.01, sigma=4
    assert at400["Advanced composition"] > 10 * rdp
    assert at400["Naive composition"] > at400["Advanced composition"]
    assert at400["Privacy loss distribution (PLD)"] <= rdp


def test_the_comparison_counts_the_steps_of_a_fraction_of_an_epoch_as_training_runs_them():
    """One epoch at q = 0.3 is 4 steps in training (a part of an epoch begun is run); the curves rounded it to 3, and
    their epsilon at one epoch was one step short of what such a run spends (the engine ends epoch e at step
    ceil(e / q))."""
    df = composition_comparison(noise_multiplier=1.0, sample_rate=0.3, delta=1e-5, epochs=[1, 2.5], methods=["rdp"])
    assert df.steps.tolist() == [4, 9]
    assert df.epsilon.iloc[0] == dpsgd_epsilon(noise_multiplier=1.0, sample_rate=0.3, steps=4, delta=1e-5)


def test_composition_formulas():
    assert naive_composition(epsilon=0.1, delta=1e-6, k=10) == pytest.approx((1.0, 1e-5))
    eps, d = advanced_composition(epsilon=0.1, delta=0.0, k=100, delta_slack=1e-5)
    assert eps == pytest.approx(math.sqrt(200 * math.log(1e5)) * 0.1 + 100 * 0.1 * math.expm1(0.1))
    assert d == pytest.approx(1e-5)
    assert amplified_epsilon(epsilon=1.0, sample_rate=0.01) == pytest.approx(math.log1p(0.01 * math.expm1(1.0)))


def test_composition_theorems_answer_infinity_or_the_exact_value_beyond_overflow():
    # e^eps overflows a double from eps = 709.78: the comparison lines raised OverflowError at a noise of 1e-3, and
    # a noise whose Gaussian epsilon is infinite was refused as "epsilon must be a finite number"
    assert advanced_composition(epsilon=800.0, delta=0.0, k=10, delta_slack=1e-5)[0] == math.inf
    assert advanced_composition(epsilon=800.0, delta=0.0, k=0, delta_slack=1e-5)[0] == 0.0
    # ln(1 + q (e^eps - 1)) = eps + ln(q + (1 - q) e^-eps): at 700 both forms agree, beyond only the second is finite
    assert amplified_epsilon(epsilon=700.0, sample_rate=0.5) == pytest.approx(math.log1p(0.5 * math.expm1(700.0)))
    assert amplified_epsilon(epsilon=1000.0, sample_rate=0.5) == pytest.approx(1000.0 + math.log(0.5))
    assert amplified_epsilon(epsilon=800.0, sample_rate=1e-300) == pytest.approx(800.0 + math.log(1e-300))
    naive = dpsgd_composition_bound(noise_multiplier=1e-3, sample_rate=0.01, steps=100, delta=1e-5, method="naive")
    assert math.isfinite(naive) and naive > 100 * gaussian_epsilon(noise_multiplier=1e-3, delta=1e-5) / 2
    assert dpsgd_composition_bound(noise_multiplier=1e-3, sample_rate=0.01, steps=100, delta=1e-5,
                                   method="advanced") == math.inf
    for method in ("naive", "advanced"):
        assert dpsgd_composition_bound(noise_multiplier=1e-200, sample_rate=0.01, steps=100, delta=1e-5,
                                       method=method) == math.inf


def test_gaussian_epsilon_inverts_analytic_calibration():
    from dpcore.mechanisms import analytic_gaussian_sigma

    s = analytic_gaussian_sigma(epsilon=0.8, delta=1e-6)
    assert gaussian_epsilon(noise_multiplier=s, delta=1e-6) == pytest.approx(0.8, rel=1e-6)


def test_composition_bound_naive_scales_linearly():
    a = dpsgd_composition_bound(noise_multiplier=4, sample_rate=0.01, steps=1000, delta=1e-5, method="naive")
    assert a > 0
    with pytest.raises(DPCoreError):
        dpsgd_composition_bound(noise_multiplier=4, sample_rate=0.01, steps=10, delta=1e-5, method="magic")


def _gaussian_epsilon_by_hand(sigma: float, delta: float) -> float:
    """Balle & Wang 2018, Theorem 8, solved here with scipy: the Gaussian mechanism of noise sigma at sensitivity 1
    is (eps, delta)-DP for delta = Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma)."""
    from scipy import optimize, stats

    def gap(eps):
        return stats.norm.cdf(0.5 / sigma - eps * sigma) - math.exp(eps) * stats.norm.cdf(-0.5 / sigma - eps * sigma) \
            - delta

    return optimize.brentq(gap, 0.0, 50.0, xtol=1e-14, rtol=1e-14)


@pytest.mark.parametrize("sigma, q, steps", [(4.0, 0.01, 1000), (1.1, 0.004, 15000)])
def test_composition_bounds_of_dpsgd_follow_their_theorems_with_delta_shared_over_the_steps(sigma, q, steps):
    """Each step: the Gaussian at a per-step delta0 (exact epsilon, Balle & Wang 2018), amplified by Poisson sampling
    to (ln(1 + q (e^eps0 - 1)), q delta0); T steps composed. Naive: T q delta0 = delta, epsilons add. Advanced (Dwork,
    Rothblum & Vadhan 2010): T q delta0 = delta / 2 and the slack delta' = delta / 2, epsilon
    sqrt(2 T ln(1/delta')) e + T e (e^e - 1). Computed here from the formulas, not from dpcore's helpers."""
    delta = 1e-5
    e = math.log1p(q * math.expm1(_gaussian_epsilon_by_hand(sigma, delta / (steps * q))))
    naive = dpsgd_composition_bound(noise_multiplier=sigma, sample_rate=q, steps=steps, delta=delta, method="naive")
    assert naive == pytest.approx(steps * e, rel=1e-6)
    e = math.log1p(q * math.expm1(_gaussian_epsilon_by_hand(sigma, delta / (2 * steps * q))))
    advanced = dpsgd_composition_bound(noise_multiplier=sigma, sample_rate=q, steps=steps, delta=delta,
                                       method="advanced")
    assert advanced == pytest.approx(math.sqrt(2 * steps * math.log(2 / delta)) * e + steps * e * math.expm1(e),
                                     rel=1e-6)


def test_event_and_validation_messages():
    ev = dpsgd_event(noise_multiplier=1.0, sample_rate=0.5, steps=3)
    assert isinstance(ev, dp_accounting.SelfComposedDpEvent) and ev.count == 3
    with pytest.raises(DPCoreError, match="noise_multiplier must be > 0"):
        dpsgd_event(noise_multiplier=0, sample_rate=0.5, steps=3)
    with pytest.raises(DPCoreError, match="sample_rate"):
        dpsgd_event(noise_multiplier=1, sample_rate=1.5, steps=3)
    with pytest.raises(DPCoreError, match="delta"):
        dpsgd_epsilon(noise_multiplier=1, sample_rate=0.1, steps=3, delta=1.0)
    with pytest.raises(DPCoreError, match="accountant"):
        dpsgd_epsilon(noise_multiplier=1, sample_rate=0.1, steps=3, delta=1e-5, accountant="moments")
    assert steps_for(epochs=2, sample_rate=0.01) == 200


def test_ledger_odometer_and_budget():
    step = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0))
    led = PrivacyLedger(delta=1e-5, budget=3.0)
    e1 = led.spend(dp_accounting.SelfComposedDpEvent(step, 100))
    e2 = led.spend(dp_accounting.SelfComposedDpEvent(step, 100))
    assert 0 < e1 < e2 <= 3.0
    assert led.epsilon == pytest.approx(dpsgd_epsilon(noise_multiplier=1.0, sample_rate=0.01, steps=200, delta=1e-5))
    with pytest.raises(BudgetExceededError):
        led.spend(dp_accounting.SelfComposedDpEvent(step, 100_000))
    assert len(led.events) == 2  # the refused event was not recorded
    assert led.epsilon == pytest.approx(e2)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0, 20.0])
def test_an_add_remove_guarantee_restated_for_a_record_replaced_holds_for_the_gaussian(sigma):
    """(eps, delta) under add/remove gives (2 eps, (1 + e^eps) delta) under replace-one (group privacy, Dwork & Roth
    2014): checked against the Gaussian mechanism's exact curves (Dong, Roth & Su 2022), mu = 1/sigma for a record
    added or removed and 2/sigma for one replaced, where a sum of terms of norm at most 1 moves by up to 2."""
    import math

    from scipy.stats import norm

    from dpcore.accounting import replace_one_guarantee

    def delta_of(mu, eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)

    for eps in (0.1, 0.5, 1.0, 2.0, 5.0):
        delta = delta_of(1 / sigma, eps)
        e2, d2 = replace_one_guarantee(eps, delta)
        if (1 + math.exp(eps)) * delta >= 1:  # says nothing for a record replaced
            assert (e2, d2) == (math.inf, 1.0)
        else:
            assert e2 == 2 * eps and delta_of(2 / sigma, e2) <= d2 * (1 + 1e-12)
    assert replace_one_guarantee(2.0, 0.5) == (math.inf, 1.0)  # (1 + e^2) * 0.5 > 1: no bound, never a smaller one
    assert replace_one_guarantee(1e6, 1e-9) == (math.inf, 1.0)  # e^eps overflows
    assert replace_one_guarantee(3.0, 0.0) == (6.0, 0.0)


def test_calibrate_refuses_a_make_event_that_is_not_a_function_of_the_noise_by_name():
    # a number was "'int' object is not callable" from inside the search; a function giving no event was
    # "expected a dp_accounting DpEvent, got float"
    with pytest.raises(DPTypeError, match=r"^make_event must be a function x -> DpEvent .*got int"):
        calibrate(5, target_epsilon=1.0, delta=1e-5)
    with pytest.raises(DPTypeError, match=r"^make_event\(1\.0\) gave a float, not a dp_accounting DpEvent"):
        calibrate(lambda s: s, target_epsilon=1.0, delta=1e-5)


def test_guarantees_released_together_whose_deltas_reach_one_compose_to_no_guarantee():
    """Basic composition adds the deltas; a total delta of 1 or more says nothing, so the total is infinite (it was
    the sum of the epsilons, read at a delta capped at 1), under one relation or both."""
    import math

    from dpcore.accounting import compose_guarantees

    assert compose_guarantees([(1.0, 0.6, "add-remove"), (1.0, 0.5, "add-remove")]) == (math.inf, 1.0, False)
    assert compose_guarantees([(1.0, 0.3, "replace-one"), (1.0, 0.3, "add-remove")]) == (math.inf, 1.0, True)
    eps, delta, replaced = compose_guarantees([(1.0, 1e-6, "replace-one"), (1.0, 1e-6, "add-remove")])
    assert replaced and eps == 3.0 and delta == pytest.approx(1e-6 + (1 + math.e) * 1e-6)


def test_a_mechanism_known_by_its_rdp_curve_is_added_to_the_rdp_accountants_sum_order_by_order():
    """An RdpCurveDpEvent composes as RDP does (Mironov 2017, Proposition 1): its curve plus dp_accounting's, then
    dp_accounting's conversion; a bound at one order holds below it (van Erven & Harremoës 2014, Theorem 3); above
    its last order nothing is known; it survives JSON; and the PLD accountant hands the whole composition to RDP."""
    from dpcore.accounting import RdpCurveDpEvent, epsilon_of_event, event_from_json, event_to_json
    from dpcore.accounting.accountants import RDP_ORDERS
    from dpcore.exceptions import DPCoreWarning, DPValueError

    orders = np.array(RDP_ORDERS)
    gauss = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(4.0), 20)
    extra = np.where(orders < 30, 0.01 * orders, np.inf)
    curve = RdpCurveDpEvent(orders=orders, rdp=extra)
    acc = dp_accounting.rdp.RdpAccountant(orders=list(orders))
    acc.compose(gauss)
    alone = acc.get_epsilon(1e-5)
    expected, _ = dp_accounting.rdp.compute_epsilon(orders, np.asarray(acc._rdp) + extra, 1e-5)
    both = dp_accounting.ComposedDpEvent([gauss, curve])
    assert epsilon_of_event(both, delta=1e-5) == pytest.approx(expected, rel=1e-12) and expected > alone
    assert PrivacyLedger(delta=1e-5).spend(event_from_json(event_to_json(both))) == pytest.approx(expected, rel=1e-12)
    assert RdpCurveDpEvent(orders=(2.0, 4.0), rdp=(0.9, 0.2)).curve_at([2.0, 3.0, 5.0]).tolist() == [0.2, 0.2, math.inf]
    with pytest.warns(DPCoreWarning, match="known only by its RDP curve"):
        assert epsilon_of_event(both, delta=1e-5, accountant="pld") == pytest.approx(expected, rel=1e-12)
    with pytest.raises(DPValueError, match="RDP values >= 0"):
        RdpCurveDpEvent(orders=(2.0,), rdp=(float("nan"),))
    assert epsilon_of_event(curve, delta=0.0) == math.inf  # an RDP curve says nothing at delta = 0


def test_basic_and_advanced_composition_state_their_sums_rounded_up():
    """k epsilon, k delta and k delta + delta' are exact sums of doubles; to nearest they lay half an ulp below them
    for about half of all (k, epsilon): 3 x 0.3 gave 0.8999999999999999 < 3 x 0.3 exactly."""
    from fractions import Fraction

    from dpcore.accounting.composition import advanced_composition, naive_composition

    below = 0
    for k in range(2, 40):
        for eps, delta in ((0.1, 1e-5), (0.3, 3e-7), (0.7, 1e-6), (1.1, 7e-9), (0.01, 1e-7)):
            below += Fraction(k * eps) < k * Fraction(eps)
            e, d = naive_composition(epsilon=eps, delta=delta, k=k)
            assert Fraction(e) >= k * Fraction(eps) and Fraction(d) >= k * Fraction(delta), (k, eps)
            _, d2 = advanced_composition(epsilon=eps, delta=delta, k=k, delta_slack=1e-6)
            assert Fraction(d2) >= k * Fraction(delta) + Fraction(1e-6), (k, delta)
    assert below > 20  # the case the rounding exists for is exercised
    assert naive_composition(epsilon=0.3, delta=0.0, k=3)[0] == 0.9  # not 0.8999999999999999


def test_subsampling_amplification_and_its_per_step_delta_fail_closed(monkeypatch):
    """ln(1 + q (e^eps - 1)) computed to nearest lay below the exact value for 60 of 104 (q, eps); the per-step delta0
    of the composition bounds, delta / (T q), must not round up, or the T steps together spend more than delta."""
    from fractions import Fraction

    import mpmath

    from dpcore.accounting import composition

    mpmath.mp.dps = 60
    for q in (0.001, 0.004, 0.01, 0.03, 0.1, 0.3, 0.5, 0.9):
        for eps in (1e-6, 1e-3, 0.05, 0.3, 0.7, 1.0, 3.7, 20.0, 650.0, 800.0):
            exact = mpmath.log(1 + mpmath.mpf(q) * mpmath.expm1(mpmath.mpf(eps)))
            got = composition.amplified_epsilon(epsilon=eps, sample_rate=q)
            assert exact <= mpmath.mpf(got) <= exact * (1 + 1e-12) + 1e-300, (q, eps)
    seen = []
    real = composition.gaussian_epsilon

    def spy(*, noise_multiplier, delta):
        seen.append(delta)
        return real(noise_multiplier=noise_multiplier, delta=delta)

    monkeypatch.setattr(composition, "gaussian_epsilon", spy)
    for steps, q, delta in ((3, 0.3, 1e-5), (7, 0.01, 1e-6), (1000, 0.004, 1e-5), (33, 0.07, 3e-7)):
        for method, share in (("naive", 1), ("advanced", 2)):
            composition.dpsgd_composition_bound(noise_multiplier=1.1, sample_rate=q, steps=steps, delta=delta,
                                                method=method)
            assert share * steps * Fraction(q) * Fraction(seen[-1]) <= Fraction(delta), (steps, q, method)


def test_the_accountant_counts_the_steps_training_takes_for_whole_epochs_whose_ratio_rounds_above_a_whole_number():
    from dpcore.training import TrainConfig
    from dpcore.training.engine import planned_steps

    for batch, n, epochs in ((10, 100, 3), (2, 98, 1), (3, 147, 4), (64, 640, 9)):
        q, ends = planned_steps(TrainConfig(batch_size=batch, epochs=epochs, noise_multiplier=1.0), n)
        assert ends[-1] == epochs * n // batch  # whole epochs of a batch dividing n: exactly n / batch steps each
        assert steps_for(epochs=epochs, sample_rate=q) == ends[-1]  # 1 / (2 / 98) = 49.00000000000001: 49, not 50


def test_epochs_beyond_any_count_of_steps_are_refused_by_name():
    with pytest.raises(DPCoreError, match="epochs=1e.308 at sample_rate=1e-10 is more steps than can be counted"):
        steps_for(epochs=1e308, sample_rate=1e-10)
