"""The home page's explainer: the privacy-loss ratio really is bounded by e^epsilon (or spends at most delta)."""
from __future__ import annotations

import json
import math

import pytest

from dpcore.exceptions import DPCoreError
from dpcore.teaching.explain import count_query_densities, neighbouring_databases, noisy_count


def test_neighbouring_databases_differ_in_one_record():
    d, d2 = neighbouring_databases()
    assert (d != d2).any(axis=1).sum() == 1
    assert d["Has diabetes"].sum() - d2["Has diabetes"].sum() == 1


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_laplace_ratio_within_e_eps(eps):
    df, s = count_query_densities(mechanism="laplace", epsilon=eps, sensitivity=1.0)
    assert s["max_abs_log_ratio"] == pytest.approx(eps, abs=1e-9)
    ratio = df.density_D / df.density_D2
    assert ratio.max() <= math.exp(eps) * (1 + 1e-9)
    assert s["mass_above"] == 0.0


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-5), (2.0, 1e-3)])
def test_gaussian_spends_exactly_delta(eps, delta):
    df, s = count_query_densities(mechanism="gaussian", epsilon=eps, delta=delta, sensitivity=1.0)
    assert s["max_abs_log_ratio"] > eps  # the ratio leaves the band in the tails...
    assert s["delta_actual"] <= delta * (1 + 1e-6)  # ...but the hockey-stick divergence stays within delta
    assert s["delta_actual"] >= delta * 0.99  # and the analytic calibration is tight


def test_bad_inputs():
    with pytest.raises(DPCoreError, match="epsilon"):
        count_query_densities(mechanism="laplace", epsilon=0)
    with pytest.raises(DPCoreError, match="delta"):
        count_query_densities(mechanism="gaussian", epsilon=1, delta=0)
    with pytest.raises(DPCoreError, match="more than the sensitivity"):
        count_query_densities(mechanism="laplace", epsilon=1, sensitivity=1, count_d=5, count_d2=2)
    assert noisy_count(mechanism="laplace", epsilon=1, true_count=3, seed=1) == noisy_count(
        mechanism="laplace", epsilon=1, true_count=3, seed=1)


@pytest.mark.parametrize("epsilon,prior", [(1.0, 0.5), (0.3, 0.2), (2.0, 0.9)])
def test_the_posterior_legend_states_a_range_that_holds_the_bayes_bounds(epsilon, prior):
    """The legend's "belief between a% and b%" gives the ends of the range ε-DP allows (Kasiviswanathan & Smith
    2014): rounded to the nearest percent, ε = 1 from 50 % read "27% and 73%", an upper bound below the 73.1 % an
    attacker can reach. Rounded outwards, the stated range holds the computed one."""
    import re

    from dpcore.teaching.explain import posterior_bound
    from dpcore.ui.explain import posterior_figure

    low, high = (float(v) for v in posterior_bound(prior, epsilon=epsilon))
    legend = json.dumps(posterior_figure(epsilon=epsilon, prior=prior).to_dict())
    shown = re.search(r"belief between ([0-9.]+)% and ([0-9.]+)%", legend)
    assert shown, legend[:300]
    assert float(shown[1]) / 100 <= low and high <= float(shown[2]) / 100
