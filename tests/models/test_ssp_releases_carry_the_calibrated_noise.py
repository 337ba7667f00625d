"""Every release of an SSP / AdaSSP fit carries the Gaussian noise whose composition is its (epsilon, delta)
(Wang 2018, Algorithms 1-2; Balle & Wang 2018, Theorem 8; Dong, Roth & Su 2019, Corollary 3.3).

The noise of each release (the count, the sums, X^T X's upper triangle, X^T y and AdaSSP's smallest eigenvalue) is
measured where it is drawn and must be N(0, std_k^2) for the std the fit records: sum (noise / std_k)^2 lies in the
central 1 - 1e-7 interval of chi-square(K) (scipy's quantiles; six checks, so below 1e-6 together). Those stds, over
the add/remove L2 sensitivities derived by hand for rows in [-1, 1]^d centred and clipped to norm r and labels in
[-1, 1] (count 1, sum x sqrt(d), sum y 1, X^T X and its smallest eigenvalue r^2, X^T y r), are Gaussian mechanisms of
multipliers m_k; together they are mu-GDP with mu^2 = sum m_k^-2, whose exact delta at epsilon
Phi(-eps / mu + mu / 2) - e^eps Phi(-eps / mu - mu / 2) must be the fit's delta.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.mechanisms import NoiseMultiplierGaussian
from dpcore.models import SSPRegressor

FALSE_ALARM = 1e-7
ORDER = ("n", "sum_x", "sum_y", "xtx", "xty", "lambda_min")  # the order the fit releases them in


def test_every_ssp_release_carries_noise_whose_composition_is_the_fits_epsilon_and_delta(monkeypatch):
    drawn: list[np.ndarray] = []
    randomise = NoiseMultiplierGaussian.randomise

    def captured(self, values, **kw):
        out = randomise(self, values, **kw)
        drawn.append(np.atleast_1d(np.asarray(out, dtype=float) - np.asarray(values, dtype=float)))
        return out

    monkeypatch.setattr(NoiseMultiplierGaussian, "randomise", captured)
    rng = np.random.default_rng(0)
    d, r, eps, delta, fits = 3, 1.5, 1.0, 1e-5, 150
    X = rng.uniform(-1.0, 1.0, size=(80, d))
    y = np.clip(X @ np.array([0.5, -0.3, 0.2]) + 0.1 * rng.normal(size=80), -1.0, 1.0)
    models = [SSPRegressor(epsilon=eps, delta=delta, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), data_norm=r,
                           adaptive=True, random_state=s).fit(X, y) for s in range(fits)]
    assert len(drawn) == len(ORDER) * fits
    std = models[0].noise_stds_
    assert all(m.noise_stds_ == std for m in models) and set(std) == set(ORDER)
    for i, key in enumerate(ORDER):
        noise = np.concatenate(drawn[i::len(ORDER)])
        law = stats.chi2(noise.size)
        total = float(np.square(noise / std[key]).sum())
        assert law.ppf(FALSE_ALARM / 2) <= total <= law.isf(FALSE_ALARM / 2), \
            f"{key}: noise variance {total / noise.size:.3f} std^2"
    sensitivity = {"n": 1.0, "sum_x": math.sqrt(d), "sum_y": 1.0, "xtx": r * r, "xty": r, "lambda_min": r * r}
    mu = math.sqrt(sum((sensitivity[k] / std[k]) ** 2 for k in ORDER))
    exact = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    assert exact == pytest.approx(delta, rel=1e-4) and exact <= delta * (1 + 1e-6)
