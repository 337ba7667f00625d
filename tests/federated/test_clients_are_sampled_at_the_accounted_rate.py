"""DP-FedAvg's clients take part at the rate its user-level epsilon is accounted at.

Each round is accounted as ``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))`` (McMahan et al. 2018, Algorithm 1:
every client joins a round with probability q, independently). If more clients trained in a round than that rate
draws, each client's update would be in more released sums than the accountant assumed and the reported epsilon
would be too small. This counts the clients whose local training actually ran, round by round, and compares the
total with ``Binomial(rounds * clients, q)``: the exact two-sided interval of probability 1 - 1e-7 (scipy's
quantiles), so a correct sampler fails with probability below 1e-7, while twice the rate lands about 20 standard
deviations away.
"""
from __future__ import annotations

import pytest
from scipy import stats

import dpcore.federated.fedavg as fedavg
from dpcore.datasets import train_test_split
from dpcore.federated import FedAvgConfig, train_fedavg_split

FALSE_ALARM = 1e-7


def test_the_clients_that_train_each_round_are_a_poisson_sample_at_the_accounted_rate(monkeypatch):
    trained: list[int] = []
    local_sgd = fedavg.local_sgd

    def counted(model, theta, Xt, yt, shards, **kw):
        trained.append(len(shards))
        return local_sgd(model, theta, Xt, yt, shards, **kw)

    monkeypatch.setattr(fedavg, "local_sgd", counted)
    clients, rounds, q = 200, 20, 0.1
    res = train_fedavg_split(train_test_split("digits", seed=0),
                             FedAvgConfig(clients=clients, rounds=rounds, client_fraction=q, clip_norm=1.0,
                                          noise_multiplier=1.0, local_epochs=1, seed=0))
    # the rounds that trained are the rounds the published schedule says someone took part in, with as many clients
    per_round = res.participation.sum(axis=1)
    assert trained == [int(k) for k in per_round if k > 0]
    lo = stats.binom.ppf(FALSE_ALARM / 2, rounds * clients, q)
    hi = stats.binom.isf(FALSE_ALARM / 2, rounds * clients, q)
    assert lo <= sum(trained) <= hi, f"{sum(trained)} client updates in {rounds} rounds, outside [{lo:.0f}, {hi:.0f}]"
    # and the epsilon reported is the one of that rate (dp_accounting's event, as the accountant composed it)
    assert res.dp_event.event.sampling_probability == pytest.approx(q) and res.dp_event.count == rounds


@pytest.mark.parametrize("q", [0.1, 0.3, 1e-17])
def test_a_client_joins_a_round_with_probability_at_most_the_accounted_rate(monkeypatch, q):
    """A uniform draw lies on a grid of 2**-53 (2**-52 in secure mode), so ``random() < q`` held with probability q
    rounded UP to it: the draw at the grid point just below q took the client in, one point too many."""
    from fractions import Fraction

    import numpy as np

    grid = 2.0**-53
    top = int(Fraction(q) / Fraction(grid))  # the grid point at or just below q

    class Fixed:
        def random(self, size=None):
            return np.full(size, top * grid)

    monkeypatch.setattr(fedavg, "noise_generator", lambda rng: Fixed())
    cfg = FedAvgConfig(clients=3, rounds=2, client_fraction=q, mode="central", noise_multiplier=1.0)
    joined = bool(fedavg._fixed_schedule(cfg, None).any())
    # the grid points that take a client in are 0 .. top - 1, and top too if it joined: at most q / grid of them
    assert Fraction(top + joined) * Fraction(grid) <= Fraction(q)
