"""The functional mechanism draws its noise at the scales its sensitivities and budget split call for (Zhang et al.
2012, Algorithm 1, with the sensitivities derived in ``fm_sensitivities``' docstring).

In the [-1, 1]^d box, replacing one record moves the upper triangle of sum x~ x~^T (less its public corner n) by at
most d (d + 2) in L1 and sum y x~ by at most 2 (d + 1): the quadratic coefficients get Lap(d (d + 2) / eps_q) and the
linear ones Lap(2 (d + 1) / eps_l). The test's independent reference is that closed form; the noise is measured
where it is drawn (every Laplace release of a fit, told apart by its length). Over K draws of Lap(b), sum |noise| / b
is Gamma(K, 1): it must lie in the central 1 - 1e-7 interval (scipy's quantiles), while noise drawn for twice the
epsilon is half as large.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.mechanisms import Laplace
from dpcore.models import FunctionalMechanismRegressor

FALSE_ALARM = 1e-7


def test_functional_mechanism_noise_has_the_scales_of_its_sensitivities_and_split(monkeypatch):
    drawn: dict[int, list[np.ndarray]] = {}
    randomise = Laplace.randomise

    def captured(self, values, **kw):
        out = randomise(self, values, **kw)
        noise = np.asarray(out, dtype=float) - np.asarray(values, dtype=float)
        drawn.setdefault(noise.size, []).append(noise)
        return out

    monkeypatch.setattr(Laplace, "randomise", captured)
    d, eps, frac = 8, 4.0, 0.6
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(300, d))
    y = np.clip(X @ rng.normal(size=d) / d, -1.0, 1.0)
    for seed in range(60):
        FunctionalMechanismRegressor(epsilon=eps, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), quadratic_fraction=frac,
                                     intercept_fraction=0.0, l1_norm=None, random_state=seed).fit(X, y)
    quadratic_size, linear_size = (d + 1) * (d + 2) // 2 - 1, d + 1
    assert sorted(drawn) == [linear_size, quadratic_size]
    for size, b in ((quadratic_size, d * (d + 2) / (frac * eps)), (linear_size, 2 * (d + 1) / ((1 - frac) * eps))):
        noise = np.concatenate(drawn[size])
        assert noise.size == 60 * size
        law = stats.gamma(noise.size)
        total = float(np.abs(noise).sum() / b)
        lo, hi = law.ppf(FALSE_ALARM / 2), law.isf(FALSE_ALARM / 2)
        assert lo <= total <= hi, (f"{size} coefficients: mean |noise| {total / noise.size:.4f} b for b = {b:g}, "
                                   f"outside [{lo / noise.size:.4f}, {hi / noise.size:.4f}]")


@pytest.mark.parametrize("fraction", [0.25])
def test_the_intercept_share_draws_the_sum_of_labels_at_sensitivity_two(fraction, monkeypatch):
    """With an intercept share f0, v_0 = sum y (L1 sensitivity 2) gets Lap(2 / (f0 eps)) of its own."""
    drawn: list[float] = []
    randomise = Laplace.randomise

    def captured(self, values, **kw):
        out = randomise(self, values, **kw)
        if np.ndim(values) == 0:
            drawn.append(float(out) - float(values))
        return out

    monkeypatch.setattr(Laplace, "randomise", captured)
    rng = np.random.default_rng(1)
    X = rng.uniform(-1.0, 1.0, size=(100, 2))
    y = np.clip(X.sum(1) / 2, -1.0, 1.0)
    for seed in range(400):
        FunctionalMechanismRegressor(epsilon=2.0, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), quadratic_fraction=0.5,
                                     intercept_fraction=fraction, l1_norm=None, random_state=seed).fit(X, y)
    assert len(drawn) == 400
    b = 2.0 / (fraction * 2.0)
    law = stats.gamma(len(drawn))
    total = float(np.abs(drawn).sum() / b)
    assert law.ppf(FALSE_ALARM / 2) <= total <= law.isf(FALSE_ALARM / 2)
