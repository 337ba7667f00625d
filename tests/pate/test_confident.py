"""Confident-GNMax (Papernot et al. 2018, Algorithm 1) and the smooth-sensitivity release of its data-dependent
epsilon: the accounting against independent computations, the local sensitivity bounds against brute force."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from dpcore.datasets import train_test_split
from dpcore.exceptions import DPValueError
from dpcore.pate import PateConfig, run_pate
from dpcore.pate.analysis import calibrate_noise_scale, gnmax_data_dependent_rdp, gnmax_log_q, pate_epsilon
from dpcore.pate.confident import (
    ConfidentGNMax,
    ReleaseParameters,
    check_data_dependent_rdp,
    check_local_sensitivity_bounds,
    gnmax_local_sensitivity_bounds,
    gnmax_rdp_at,
    gnss_rdp,
    release_data_dependent_epsilon,
    release_parameters,
    smooth_sensitivity,
    smooth_sensitivity_conditions_hold,
)
from tests.pate.conftest import exact_gaussian_epsilon


def test_the_guarantee_is_every_check_and_every_answer_as_one_gaussian():
    """m checks (sensitivity 1, std sigma1) and m answers (L2 sensitivity sqrt 2, std sigma2) stacked are one
    Gaussian whose noise over sensitivity is 1 / sqrt(m / sigma1^2 + 2 m / sigma2^2): PLD meets its exact epsilon,
    RDP bounds it from above."""
    s1, s2, m = 30.0, 25.0, 40
    exact = exact_gaussian_epsilon(1.0 / math.sqrt(m / s1**2 + 2 * m / s2**2), 1e-5)
    pld = pate_epsilon(aggregator="confident", noise_scale=s2, queries=m, delta=1e-5, accountant="pld",
                       threshold_noise=s1)
    rdp = pate_epsilon(aggregator="confident", noise_scale=s2, queries=m, delta=1e-5, threshold_noise=s1)
    assert pld == pytest.approx(exact, rel=0.01)
    assert exact <= rdp < 1.5 * exact


def test_the_guarantee_matches_opacus_rdp_analysis():
    """Opacus's RDP of the sampled Gaussian at sampling rate 1 is alpha / (2 z^2) per step; checks have z = sigma1,
    answers z = sigma2 / sqrt 2."""
    rdp_mod = pytest.importorskip("opacus.accountants.analysis.rdp")
    s1, s2, m = 40.0, 20.0, 60
    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    rdp = (rdp_mod.compute_rdp(q=1.0, noise_multiplier=s1, steps=m, orders=orders)
           + rdp_mod.compute_rdp(q=1.0, noise_multiplier=s2 / math.sqrt(2), steps=m, orders=orders))
    theirs, _ = rdp_mod.get_privacy_spent(orders=orders, rdp=rdp, delta=1e-5)
    ours = pate_epsilon(aggregator="confident", noise_scale=s2, queries=m, delta=1e-5, threshold_noise=s1)
    assert ours == pytest.approx(theirs, rel=0.02)


def test_calibration_meets_the_target_and_refuses_when_the_checks_alone_exceed_it():
    s2 = calibrate_noise_scale(aggregator="confident", target_epsilon=2.0, delta=1e-5, queries=50,
                               threshold_noise=100.0)
    assert pate_epsilon(aggregator="confident", noise_scale=s2, queries=50, delta=1e-5,
                        threshold_noise=100.0) == pytest.approx(2.0, abs=1e-3)
    with pytest.raises(DPValueError, match="threshold_noise"):
        calibrate_noise_scale(aggregator="confident", target_epsilon=1.0, delta=1e-5, queries=500, threshold_noise=5.0)


def test_the_check_answers_with_the_probability_of_its_gaussian():
    agg = ConfidentGNMax(threshold=30.0, sigma1=10.0, sigma2=5.0)
    votes = np.tile([35, 10, 5], (20_000, 1))
    share = agg.answered(votes, rng=0).mean()
    assert share == pytest.approx(stats.norm.sf(30 - 35, scale=10.0), abs=0.01)
    labels = agg.aggregate(votes, rng=1)
    assert set(np.unique(labels)) <= {-1, 0, 1, 2} and (labels == -1).mean() == pytest.approx(1 - share, abs=0.02)


def test_the_checks_data_dependent_cost_is_small_when_the_outcome_is_nearly_certain():
    sigma1, orders = 50.0, np.array([2.0, 8.0, 32.0])
    independent = orders / (2 * sigma1**2)
    sure = check_data_dependent_rdp(stats.norm.logsf(200 - 400, scale=sigma1), sigma1=sigma1, orders=orders)
    never = check_data_dependent_rdp(stats.norm.logsf(200 - 10, scale=sigma1), sigma1=sigma1, orders=orders)
    coin = check_data_dependent_rdp(stats.norm.logsf(0.0, scale=sigma1), sigma1=sigma1, orders=orders)
    assert np.all(sure < 0.1 * independent) and np.all(never < 0.1 * independent)
    assert np.allclose(coin, independent)


def test_the_one_order_bound_is_the_same_as_the_bound_over_all_orders():
    for sigma in (3.0, 18.5, 40.0):
        for order in (2.0, 10.0, 24.0):
            for log_q in np.linspace(-150.0, -0.05, 40):
                expected = gnmax_data_dependent_rdp(log_q, sigma=sigma, orders=[order])[0]
                assert gnmax_rdp_at(sigma, log_q, order) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def _histograms(teachers: int, classes: int):
    for cut in itertools.combinations(range(teachers + classes - 1), classes - 1):
        edges = (-1, *cut, teachers + classes - 1)
        yield tuple(edges[i + 1] - edges[i] - 1 for i in range(classes))


def _one_vote_moves(h):
    for i, j in itertools.permutations(range(len(h)), 2):
        if h[i] > 0:
            g = list(h)
            g[i] -= 1
            g[j] += 1
            yield tuple(g)


def _worst_shortfall(teachers, classes, f, bounds_of) -> float:
    """Brute force over every vote histogram: the largest amount by which ``bounds_of(h)[d]`` falls short of the true
    largest local sensitivity of ``f`` over all histograms within d vote moves of h."""
    hs = list(_histograms(teachers, classes))
    value = {h: f(h) for h in hs}
    local = {h: max(abs(value[g] - value[h]) for g in _one_vote_moves(h)) for h in hs}
    worst = 0.0
    for h in hs:
        bounds = bounds_of(h)
        seen, frontier = {h}, [h]
        for d in range(teachers):
            worst = max(worst, max(local[g] for g in seen) - bounds[d])
            frontier = {k for g in frontier for k in _one_vote_moves(g)} - seen
            seen.update(frontier)
    return worst


@pytest.mark.parametrize("teachers,classes,sigma,order", [(12, 3, 2.0, 2.0), (14, 3, 3.0, 2.0), (12, 4, 2.0, 2.0),
                                                          (20, 2, 3.0, 3.0), (18, 3, 2.5, 1.5)])
def test_gnmax_local_sensitivity_bounds_hold_at_every_distance_where_the_conditions_hold(teachers, classes, sigma,
                                                                                          order):
    """Algorithms 3-5 against brute force over every histogram of a small ensemble."""
    assert smooth_sensitivity_conditions_hold(sigma, classes, order)

    def f(h):
        return gnmax_rdp_at(sigma, gnmax_log_q(np.array(h, float), sigma=sigma), order)

    def bounds(h):
        return gnmax_local_sensitivity_bounds(np.array(h), teachers=teachers, sigma=sigma, order=order)

    assert _worst_shortfall(teachers, classes, f, bounds) <= 1e-9


def test_brute_force_catches_a_bound_that_forgets_the_distance_and_a_configuration_the_conditions_refuse():
    teachers, classes, sigma, order = 12, 3, 2.0, 2.0

    def f(h):
        return gnmax_rdp_at(sigma, gnmax_log_q(np.array(h, float), sigma=sigma), order)

    def local_only(h):  # broken: the local sensitivity at distance 0 used for every distance
        b = gnmax_local_sensitivity_bounds(np.array(h), teachers=teachers, sigma=sigma, order=order)
        return np.full(teachers, b[0])

    assert _worst_shortfall(teachers, classes, f, local_only) > 0.01
    # sigma = 1 at order 2: Theorem 6's bound jumps at q0, Algorithm 3's plateau is wrong, and the check says so
    assert not smooth_sensitivity_conditions_hold(1.0, 3, 2.0)

    def f1(h):
        return gnmax_rdp_at(1.0, gnmax_log_q(np.array(h, float), sigma=1.0), 2.0)

    def b1(h):
        return gnmax_local_sensitivity_bounds(np.array(h), teachers=8, sigma=1.0, order=2.0)

    assert _worst_shortfall(8, 3, f1, b1) > 0.01


def test_the_checks_local_sensitivity_bounds_are_exact_against_brute_force():
    teachers, threshold, sigma1, order = 10, 7.0, 2.0, 3.0

    def f(h):
        p = stats.norm.logsf(threshold - max(h), scale=sigma1)
        return float(check_data_dependent_rdp(p, sigma1=sigma1, orders=[order])[0])

    def bounds(h):
        return check_local_sensitivity_bounds(np.array(h), teachers=teachers, threshold=threshold, sigma1=sigma1,
                                              order=order)

    assert _worst_shortfall(teachers, 3, f, bounds) <= 1e-12


def test_smooth_sensitivity_discounts_distance_and_gnss_is_the_gaussian_when_beta_is_zero():
    assert smooth_sensitivity(0.5, [1.0, 3.0, 3.0]) == pytest.approx(max(1.0, 3.0 * math.exp(-0.5)))
    assert gnss_rdp(beta=0.0, sigma_ss=2.0, order=5.0) == pytest.approx(5.0 / 4.0)
    assert gnss_rdp(beta=0.01, sigma_ss=2.0, order=5.0) > 5.0 / 4.0
    with pytest.raises(DPValueError, match="order"):
        gnss_rdp(beta=0.1, sigma_ss=2.0, order=6.0)


def test_the_release_is_cheap_when_teachers_agree_and_carries_its_noise_and_cost():
    teachers, sigma2 = 250, 40.0
    agree = np.tile([240, 5, 5] + [0] * 7, (300, 1))
    split = np.tile([90, 80, 80] + [0] * 7, (300, 1))
    answered = np.ones(300, bool)
    guarantee = pate_epsilon(aggregator="gnmax", noise_scale=sigma2, queries=300, delta=1e-5)
    params = release_parameters(1e-5, sigma2=sigma2, classes=10)
    strong = release_data_dependent_epsilon(agree, answered, teachers=teachers, sigma2=sigma2, delta=1e-5, rng=0)
    weak = release_data_dependent_epsilon(split, answered, teachers=teachers, sigma2=sigma2, delta=1e-5, rng=0)
    p = strong.params
    floor = p.cost + math.log(1e5) / (p.order - 1)
    assert floor <= strong.epsilon < 0.5 * guarantee < weak.epsilon
    few = split[:5]  # the released value's spread is its noise, SS * sigma_ss (far from the clip at 0 here)
    draws = [release_data_dependent_epsilon(few, answered[:5], teachers=teachers, sigma2=sigma2, delta=1e-5, rng=s,
                                            params=params).epsilon for s in range(100)]
    one = release_data_dependent_epsilon(few, answered[:5], teachers=teachers, sigma2=sigma2, delta=1e-5, rng=0,
                                         params=params)
    assert one.noise_std > 0 and np.std(draws) == pytest.approx(one.noise_std, rel=0.2)  # 100 draws: ~7% spread


def test_the_released_rdp_becomes_an_epsilon_by_the_ledgers_conversion_at_the_release_order():
    # nothing answered and no check: the released RDP is 0 and carries no noise, so the epsilon is the release's own
    # cost converted at its order; the ledger's conversion (Canonne, Kamath & Steinke 2020, Proposition 12) written
    # out here, below Mironov's ln(1/delta) / (order - 1) that Papernot et al. used
    votes = np.tile([240, 5, 5] + [0] * 7, (20, 1))
    r = release_data_dependent_epsilon(votes, np.zeros(20, bool), teachers=250, sigma2=40.0, delta=1e-5, rng=0)
    a, cost = r.params.order, r.params.cost
    assert r.noise_std == 0
    assert r.epsilon == pytest.approx(cost + math.log1p(-1 / a) - math.log(1e-5 * a) / (a - 1), rel=1e-12)
    assert r.epsilon < cost + math.log(1e5) / (a - 1)


def test_the_release_order_falls_back_where_the_conditions_fail_and_is_refused_with_a_reason():
    assert release_parameters(1e-5, sigma2=40.0, classes=10).order == pytest.approx(release_parameters(1e-5).order)
    assert release_parameters(1e-5, sigma2=18.5, classes=10).order < 24.0  # C6 fails at 24 for this sigma
    at_two = ReleaseParameters(order=2.0, beta=0.1, sigma_ss=10.0)  # sigma2 = 1 at order 2: C5 fails (see above)
    with pytest.raises(DPValueError, match="C5-C6"):
        release_data_dependent_epsilon(np.array([[8, 0, 0]]), [True], teachers=8, sigma2=1.0, delta=1e-5, rng=0,
                                       params=at_two)


def test_a_confident_run_answers_some_queries_and_the_student_learns_only_those():
    split = train_test_split("digits", seed=0)
    cfg = PateConfig(aggregator="confident", teachers=20, queries=30, target_epsilon=5.0, threshold=0.7,
                     threshold_noise=0.5, data_dependent=True, baseline=False, seed=0)
    r = run_pate(split, cfg)
    assert 0 < r.answered_count < 30
    assert np.all((r.noisy_labels >= 0) == r.answered)
    # the checks, the answers and the released data-dependent epsilon share the target
    assert r.epsilon_answers < r.epsilon <= 5.0 and r.epsilon == pytest.approx(5.0, abs=1e-3)
    assert "answered" in r.history and r.history.answered.iloc[-1] == r.answered_count
    checks_and_answers, release = r.dp_event.events
    assert [e.event.noise_multiplier for e in checks_and_answers.events] == pytest.approx([10.0,
                                                                                           r.noise_scale / 2**0.5])
    assert release == r.released.params.dp_event
    with pytest.raises(DPValueError, match="threshold"):
        PateConfig(aggregator="confident", threshold=1.5)


def test_the_command_line_reports_the_answered_queries_and_the_released_epsilon_but_not_the_exact_one(capsys):
    from dpcore.cli import main

    code = main(["train", "--algorithm", "pate", "--dataset", "digits", "--epsilon", "5", "--aggregator", "confident",
                 "--threshold", "0.5", "--data-dependent", "true", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and isinstance(out["answered"], int) and 0 < out["answered"] <= 20
    assert out["epsilon_data_dependent_released"] > 0 and out["epsilon_data_dependent_released_std"] >= 0
    assert "epsilon_data_dependent" not in out
