"""LNMax's accounting covers what one changed teacher really does to the histogram (Papernot et al. 2017).

One private record changes one teacher's vote: one count goes down by 1 and another up by 1, each under its own
Laplace noise of scale b = 1/gamma. The privacy loss of one answer is therefore that of TWO unit-shift Laplace
mechanisms composed. LNMax is accounted as ONE Laplace of L1 sensitivity 2 (``LaplaceDpEvent(b / 2)``, a shift of 2
in one coordinate, the vertex of the L1 ball). These tests check, against references that do not go through that
event, that the vertex dominates the real two-bin shift at every Renyi order and at every delta the run reports, and
that an accounting which forgot the factor 2 (``LaplaceDpEvent(b)``: one bin moving by 1) would be caught.
"""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution

from dpcore.pate import pate_epsilon
from dpcore.pate.aggregation import LNMax
from dpcore.pate.analysis import RDP_ORDERS


def laplace_rdp(alpha: float, b: float) -> float:
    """Renyi divergence of order alpha between Lap(0, b) and Lap(1, b) (Mironov 2017, Table II), in closed form:
    ``1/(alpha-1) log(alpha/(2 alpha-1) e^((alpha-1)/b) + (alpha-1)/(2 alpha-1) e^(-alpha/b))``."""
    log_terms = np.logaddexp(math.log(alpha / (2 * alpha - 1)) + (alpha - 1) / b,
                             math.log((alpha - 1) / (2 * alpha - 1)) - alpha / b)
    return float(log_terms / (alpha - 1))


def two_bin_rdp(orders, b: float, queries: int) -> np.ndarray:
    """RDP of ``queries`` answers when one vote moves: 2 unit shifts per answer, each a Laplace of scale b."""
    return np.array([2 * queries * laplace_rdp(a, b) for a in orders])


def accounted_rdp(event: dp_accounting.DpEvent, orders) -> np.ndarray:
    acc = dp_accounting.rdp.RdpAccountant(orders=list(orders))
    acc.compose(event)
    return np.asarray(acc._rdp)  # the accountant's composed curve, order by order


def two_bin_pld_epsilon(b: float, queries: int, delta: float) -> float:
    """Epsilon at delta of 2 * queries unit-shift Laplace mechanisms of scale b (dp_accounting's pessimistic PLD,
    built from the one-bin shift, not from the event LNMax is accounted with)."""
    one_bin = privacy_loss_distribution.from_laplace_mechanism(b, sensitivity=1.0,
                                                               value_discretization_interval=1e-4)
    return one_bin.self_compose(2 * queries).get_epsilon_for_delta(delta)


ORDERS = [o for o in RDP_ORDERS if o <= 256]


@pytest.mark.parametrize("b,queries", [(1.0, 1), (5.0, 10), (20.0, 100)])
def test_the_accounted_event_dominates_the_two_bin_shift_at_every_renyi_order(b, queries):
    lnmax = LNMax(gamma=1.0 / b)
    accounted = accounted_rdp(dp_accounting.SelfComposedDpEvent(lnmax.dp_event, queries), ORDERS)
    real = two_bin_rdp(ORDERS, b, queries)
    assert np.all(accounted >= real * (1 - 1e-9))
    # and the closed form is the accountant's own Laplace curve (the reference is read right): one unit shift
    assert accounted_rdp(dp_accounting.LaplaceDpEvent(b), ORDERS) == pytest.approx(
        two_bin_rdp(ORDERS, b, 1) / 2, rel=1e-6)


@pytest.mark.parametrize("b,queries", [(1.0, 1), (5.0, 10), (20.0, 100)])
def test_an_accounting_that_forgot_the_second_bin_is_caught(b, queries):
    forgot = accounted_rdp(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(b), queries), ORDERS)
    real = two_bin_rdp(ORDERS, b, queries)
    assert np.all(forgot < real)  # one bin moving by 1 states half the real cost at every order


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
@pytest.mark.parametrize("b,queries,delta", [(1.0, 1, 1e-5), (5.0, 10, 1e-5), (20.0, 100, 1e-5), (20.0, 100, 1e-3)])
def test_the_reported_epsilon_is_at_least_that_of_the_two_bin_shift(accountant, b, queries, delta):
    reported = pate_epsilon(aggregator="lnmax", noise_scale=b, queries=queries, delta=delta, accountant=accountant)
    real = two_bin_pld_epsilon(b, queries, delta)
    # the reference's own pessimistic grid may sit one step (1e-4 per composed bin) above the exact value
    assert reported >= real - 2 * queries * 1e-4
    assert reported <= 2 * queries / b + 1e-12  # and never above basic composition, 2 gamma per answer
    forgot = dp_accounting.pld.PLDAccountant().compose(
        dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(b), queries)).get_epsilon(delta)
    assert forgot < real - 2 * queries * 1e-4  # the broken accounting would state less than the real cost
