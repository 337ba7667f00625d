"""An output-perturbation run releases each test query's softmax vector with Laplace noise of scale 2 / epsilon_q,
the epsilon_q it reports and accounts per query (Dwork et al. 2006: the simplex has L1 diameter 2).

The noise of the released vectors (what the run hands an attacker, ``test_outputs``) is measured against the clean
softmax vectors the run computed (captured on their way into the mechanism). For m released coordinates of
Lap(b), sum |noise| / b is Gamma(m, 1): it must lie in the central 1 - 1e-7 interval of that law (scipy's quantiles),
about +-8 % on digits' 450 x 10 coordinates, while noise for twice the epsilon is half as large.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import dpcore.training.learners as network_learners
from dpcore.learners import run_learner

FALSE_ALARM = 1e-7


@pytest.mark.parametrize("budget", ["per-query", "total"])
def test_the_released_softmax_vectors_carry_laplace_noise_of_scale_two_over_the_accounted_epsilon(budget,
                                                                                                    monkeypatch):
    clean: list[np.ndarray] = []
    perturb = network_learners.softmax_output_perturbation

    def captured(proba, **kw):
        clean.append(np.asarray(proba, dtype=float).copy())
        return perturb(proba, **kw)

    monkeypatch.setattr(network_learners, "softmax_output_perturbation", captured)
    epsilon = 1.0 if budget == "per-query" else 450.0
    res = run_learner("output-perturbation", "digits", epsilon=epsilon, seed=0, params={"epochs": 1, "budget": budget})
    (proba,) = clean
    m = res.extras["queries"]
    eps_q = epsilon if budget == "per-query" else epsilon / m
    assert m == proba.shape[0] == 450 and res.extras["epsilon_per_query"] == pytest.approx(eps_q)
    assert res.epsilon == pytest.approx(eps_q * m)
    noise = res.test_outputs.values - proba
    b = 2.0 / eps_q
    total = float(np.abs(noise).sum() / b)
    law = stats.gamma(noise.size)
    lo, hi = law.ppf(FALSE_ALARM / 2), law.isf(FALSE_ALARM / 2)
    assert lo <= total <= hi, (f"mean |noise| is {total / noise.size:.4f} b for b = 2 / {eps_q:g}, outside "
                               f"[{lo / noise.size:.4f}, {hi / noise.size:.4f}]")
