"""The consensus check's data-dependent RDP (Papernot et al. 2018, Theorem 6 applied to Confident-GNMax's check) is
at least the exact Renyi divergence of its two outcomes against either neighbour's.

The check answers with ``p = Pr[max count + N(0, sigma1^2) >= T]``; one changed vote moves the largest count by 1,
so the neighbour's check is Bernoulli(p') with the count one higher or lower. Their Renyi divergence is a two-term
sum, exact: an independent reference for the bound. Far above the threshold ``1 - p`` is below 1e-308 and ``ln p``
rounds to 0: the bound once read that as a certain outcome and stated 0 at every order, where the exact divergence
at order 192 is 3.8, the data-independent cost.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.pate.analysis import RDP_ORDERS
from dpcore.pate.confident import check_data_dependent_rdp, log_pr_answered, log_pr_not_answered

ORDERS = np.array([o for o in RDP_ORDERS if o <= 200])


def bernoulli_renyi(order, count: float, other: float, threshold: float, sigma1: float):
    """D_order(check at the largest count ``count`` || check at ``other``), from both tails in logs (``order`` a
    number or an array of orders)."""
    lp, lnp = stats.norm.logsf(threshold - count, scale=sigma1), stats.norm.logcdf(threshold - count, scale=sigma1)
    lq, lnq = stats.norm.logsf(threshold - other, scale=sigma1), stats.norm.logcdf(threshold - other, scale=sigma1)
    order = np.asarray(order, dtype=float)
    return np.logaddexp(order * lp + (1 - order) * lq, order * lnp + (1 - order) * lnq) / (order - 1)


def bound(count: float, threshold: float, sigma1: float) -> np.ndarray:
    votes = np.array([[count, 0.0]])  # the largest count is ``count``
    log_p = log_pr_answered(votes, threshold=threshold, sigma1=sigma1)[0]
    log_not_p = log_pr_not_answered(votes, threshold=threshold, sigma1=sigma1)[0]
    return check_data_dependent_rdp(log_p, sigma1=sigma1, orders=ORDERS, log_not_p=log_not_p)


@pytest.mark.parametrize("sigma1,threshold", [(5.0, 50.0), (20.0, 150.0), (50.0, 200.0), (100.0, 150.0)])
def test_the_bound_is_at_least_the_exact_divergence_to_either_neighbour(sigma1, threshold):
    for count in range(1, 250, 3):
        b = bound(count, threshold, sigma1)
        for other in (count - 1, count + 1):
            exact = bernoulli_renyi(ORDERS, count, other, threshold, sigma1)
            assert np.all(b >= exact - 1e-9), (count, other, ORDERS[np.argmax(exact - b)])


def test_a_check_so_sure_that_its_probability_rounds_to_one_is_not_read_as_certain():
    sigma1, threshold, count = 5.0, 50.0, 240.0
    log_p = log_pr_answered(np.array([[count, 10.0]]), threshold=threshold, sigma1=sigma1)[0]
    assert log_p == 0.0  # 1 - p is about 1e-316: lost in ln p
    exact = float(bernoulli_renyi(192.0, count, count + 1, threshold, sigma1))
    assert exact > 3.0
    # with ln p alone the complement is unknown: the data-independent cost, never less than the exact one
    alone = check_data_dependent_rdp(log_p, sigma1=sigma1, orders=[192.0])[0]
    assert alone == pytest.approx(192.0 / (2 * sigma1**2), rel=1e-9) and alone >= exact
    assert bound(count, threshold, sigma1)[list(ORDERS).index(192.0)] >= exact
    assert math.isfinite(alone)
