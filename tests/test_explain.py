"""The home page's explainer: the privacy-loss ratio really is bounded by e^epsilon (or spends at most delta)."""
from __future__ import annotations

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
