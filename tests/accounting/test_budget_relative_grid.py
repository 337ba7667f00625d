"""A DP-SGD run is calibrated and reported on a PLD grid scaled to its budget: a tiny ε is met closely instead
of overshooting the noise, a large ε is followed epoch by epoch without gigabytes, and the reported ε never
exceeds the target."""
from __future__ import annotations

import pytest

from dpcore.accounting import calibrate_noise_multiplier, epsilon_curve
from dpcore.accounting.accountants import pld_discretization_for

Q, STEPS, DELTA = 0.5, 120, 1e-5  # Digits' DP-SGD defaults: Poisson rate 0.5, 60 epochs


def _agrees_with_opacus(sigma: float, reported: float, target: float) -> None:
    """Opacus's PRV accountant (Gopi et al. 2021), an independent numerical method, brackets the true epsilon
    to within 1 % of the target; ours must sit in that bracket, next to its estimate."""
    import warnings

    from opacus.accountants import PRVAccountant

    acct = PRVAccountant()
    acct.history = [(sigma, Q, STEPS)]
    err = target / 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        low, estimate, high = acct._get_dprv(eps_error=err, delta_error=1e-8).compute_epsilon(DELTA, 1e-8, err)
    assert low <= reported <= high and abs(reported - estimate) <= 1e-3 * target, (low, estimate, reported, high)


def test_the_grid_is_the_default_for_usual_budgets_and_scales_outside_them():
    assert pld_discretization_for(1.0) == pld_discretization_for(10.0) == pld_discretization_for(None) == 1e-4
    assert pld_discretization_for(0.01) == pytest.approx(1e-6) and pld_discretization_for(100.0) == pytest.approx(1e-3)
    assert pld_discretization_for(1e-300) == pytest.approx(1e-8)  # floored: no grid finer than 1e-4 x 1e-4
    assert pld_discretization_for(1e9) == pytest.approx(0.1)  # capped: a grid of 1e4 overflowed dp_accounting


def test_dp_sgd_at_an_absurd_epsilon_runs_instead_of_overflowing():
    from dpcore.learners import run_learner

    res = run_learner("dpsgd", "iris", epsilon=1e9, seed=0, params={"epochs": 1})
    assert 0 < res.epsilon <= 1e9  # the least noise allowed (noise multiplier 1e-3) spends less than asked


def _calibrated_and_reported(target: float, q: float = Q, steps: int = STEPS) -> tuple[float, float]:
    """The PLD noise for ``target`` and the epsilon it reports, both on the grid for that budget."""
    grid = pld_discretization_for(target)
    sigma = calibrate_noise_multiplier(target_epsilon=target, delta=DELTA, sample_rate=q, steps=steps,
                                       accountant="pld", pld_discretization=grid)
    return sigma, epsilon_curve(noise_multiplier=sigma, sample_rate=q, delta=DELTA, steps=[steps], accountant="pld",
                                pld_discretization=grid)[-1]


def test_a_tiny_budget_is_met_closely_and_the_true_epsilon_is_below_it():
    target = 0.01  # the default 1e-4 grid reported 0.0043 here, at twice the noise needed
    sigma, reported = _calibrated_and_reported(target)
    assert 0.99 * target <= reported <= target
    _agrees_with_opacus(sigma, reported, target)


def test_a_large_budget_is_reported_epoch_by_epoch_below_its_target():
    grid = pld_discretization_for(100.0)
    sigma = calibrate_noise_multiplier(target_epsilon=100.0, delta=DELTA, sample_rate=Q, steps=STEPS,
                                       accountant="pld", pld_discretization=grid)
    curve = epsilon_curve(noise_multiplier=sigma, sample_rate=Q, delta=DELTA, steps=list(range(2, STEPS + 1, 2)),
                          accountant="pld", pld_discretization=grid)
    assert 99.0 <= curve[-1] <= 100.0 and (curve[1:] >= curve[:-1]).all()
    _agrees_with_opacus(sigma, curve[-1], 100.0)
    # the default grid agrees to within its own pessimism (it took 2 GB and 30 s for this curve)
    fine = epsilon_curve(noise_multiplier=sigma, sample_rate=Q, delta=DELTA, steps=[STEPS], accountant="pld")[-1]
    assert fine <= curve[-1] <= fine + 0.01


def test_dp_sgd_at_epsilon_100_and_0_001_trains_and_spends_its_budget():
    from dpcore.learners import run_learner

    for target in (100.0, 0.001):
        res = run_learner("dpsgd", "digits", epsilon=target, seed=0, params={"accountant": "pld", "epochs": 4})
        # at 0.001 the default grid spent 0.0002, five times the noise needed
        assert 0.99 * target <= res.epsilon <= target, (target, res.epsilon)



def test_a_budget_over_fifty_thousand_steps_is_met_within_half_a_percent():
    # the search's coarse grid is more pessimistic with every composition: its answer alone spent 1.963 of 2
    target, q, steps = 2.0, 0.02, 50_000
    sigma, reported = _calibrated_and_reported(target, q, steps)
    assert 0.995 * target <= reported <= target
    assert sigma < calibrate_noise_multiplier(target_epsilon=target, delta=DELTA, sample_rate=q, steps=steps)


def test_a_target_finer_than_the_pld_grid_can_follow_gets_rdps_noise_confirmed_by_pld_not_an_error():
    """At epsilon 0.0001 PLD's search grid finds a noise, but the run's own grid (1e-8) would need more points than it
    may hold and hands the epsilon to RDP, whose bound at that noise is far above the target (0.0035: ln(1/delta)
    over the largest order): the calibration took 200 nudges and gave up. RDP's own answer, which the run's
    accountant confirms, is used instead: more noise, never an epsilon above the target."""
    import warnings

    from dpcore.accounting import calibrate, dpsgd_event, epsilon_of_event
    from dpcore.accounting.accountants import pld_discretization_for

    grid = pld_discretization_for(1e-4)

    def event(s):
        return dpsgd_event(noise_multiplier=s, sample_rate=1.0, steps=30)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = calibrate(event, target_epsilon=1e-4, delta=1e-5, accountant="pld", pld_discretization=grid)
        rdp_x = calibrate(event, target_epsilon=1e-4, delta=1e-5, accountant="rdp")
        assert epsilon_of_event(event(x), delta=1e-5, accountant="pld", pld_discretization=grid) <= 1e-4
        assert epsilon_of_event(event(x), delta=1e-5, accountant="rdp") <= 1e-4
    assert x == pytest.approx(rdp_x, rel=0.06)
