"""A label-DP run by the Laplace mechanism trains on labels noised at the epsilon it reports.

Each one-hot label gets Lap(2 / epsilon) on every coordinate (L1 sensitivity 2 when one label changes; Dwork et al.
2006; label DP as in Ghazi et al. 2021) and is decoded by argmax. A label survives when its own coordinate, 1 + X_0,
beats the k - 1 others: P = integral of f(x) F(x + 1)^(k - 1) dx for the Laplace density f and distribution F of
scale 2 / epsilon, computed here by quadrature (scipy), independently of dpcore. The run's share of surviving labels
over its n training labels is a mean of n independent Bernoulli(P) (the noise is independent per record): it must lie
within 5.33 standard deviations of P (a normal tail of 1e-7; n = 1347 and P near 0.26 put the Bernoulli sum's
skew far below what moves that tail), while labels noised at twice the epsilon survive with probability 0.50,
more than 15 standard deviations away.
"""
from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.datasets import train_test_split
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.learners import run_learner
from dpcore.training.learners import laplace_labels
from tests.mechanism_spy import sensitivities_made


def _survival(k: int, epsilon: float) -> float:
    lap = stats.laplace(scale=2.0 / epsilon)
    def f(x):
        return lap.pdf(x) * lap.cdf(x + 1.0) ** (k - 1)

    # split where the integrand has kinks (x = -1, 0), the tails on their own
    parts = [integrate.quad(f, a, c, limit=200) for a, c in ((-np.inf, -1.0), (-1.0, 0.0), (0.0, np.inf))]
    assert all(err < 1e-6 for _, err in parts)
    return sum(v for v, _ in parts)


@pytest.mark.parametrize("epsilon", [2.0])
def test_a_label_dp_laplace_run_keeps_each_label_with_the_probability_its_epsilon_gives(epsilon):
    res = run_learner("label-dp-laplace", "digits", epsilon=epsilon, seed=0, params={"epochs": 1})
    assert res.epsilon == epsilon and res.extras["sensitivity_l1"] == 2.0
    split = train_test_split("digits", seed=0)  # the run's split (its seed)
    n, k = split.y_train.size, split.n_classes
    p = _survival(k, epsilon)
    assert 0.2 < p < 0.3 and _survival(k, 2 * epsilon) > 0.45  # the power: twice the epsilon is far away
    sd = math.sqrt(p * (1 - p) / n)
    z = stats.norm.isf(1e-7 / 2)
    got = res.extras["label_agreement"]
    assert abs(got - p) <= z * sd, f"{got:.4f} of the labels survived; epsilon {epsilon} keeps {p:.4f} +- {z * sd:.4f}"


@pytest.mark.parametrize("label_range", [(-0.05646102470229935, 0.9182944108799691), (-0.1, 0.7), (-0.3, 3.3)])
def test_regression_labels_are_noised_for_their_whole_range_rounded_up(monkeypatch, label_range):
    """A real label clipped to [lo, hi] moves by at most hi - lo: the noise's L1 sensitivity is that exact difference
    rounded up (computed in floating point it lay below it for these ranges, a hair less noise than epsilon needs)."""
    from fractions import Fraction
    from types import SimpleNamespace

    import dpcore.training.learners as learners

    made = sensitivities_made(monkeypatch, learners, "Laplace")
    lo, hi = label_range
    split = SimpleNamespace(task="regression", y_train=np.linspace(lo, hi, 7),
                            dataset=SimpleNamespace(label_range=label_range))
    learners.laplace_labels(split, epsilon=1.0, rng=0)
    assert made and Fraction(made[0]) >= Fraction(hi) - Fraction(lo)


def test_regression_labels_whose_range_is_not_declared_are_warned_as_a_leak():
    """Label DP on regression labels (Ghazi et al. 2021): Lap((b - a) / epsilon) is epsilon-DP for a declared range
    [a, b]; read from the private labels, the range (and so the noise) depends on them."""
    split = train_test_split("diabetes", seed=0)
    undeclared = dataclasses.replace(split, dataset=dataclasses.replace(split.dataset, label_range=None))
    with pytest.warns(PrivacyLeakWarning, match="label range is not declared"):
        laplace_labels(undeclared, epsilon=1.0, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # a declared range reads no label
        laplace_labels(split, epsilon=1.0, rng=0)
