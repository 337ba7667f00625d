"""A noisy-input run releases every training image with Laplace noise of the scale its reported per-image epsilon
calls for (Dwork et al. 2006; local DP for the person in the image: any two images of the size are neighbours).

Digits are 8 x 8 grey images with pixels in [0, 16]: two images differ by at most 64 * 16 in L1, so an image released
at epsilon carries Lap(64 * 16 / epsilon) on every pixel, whether epsilon was asked for the image or came from a
per-pixel budget (then the run reports 64 times it). The noise drawn (captured from every Laplace release, before the
release is clipped to the pixel range) over the K pixels of the training set gives sum |noise| / b ~ Gamma(K, 1); it
must lie in the central 1 - 1e-7 interval of that law (scipy's quantiles; under 1 % either way for K = 86,208), while
noise drawn for twice the epsilon is half as large.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from dpcore.learners import run_learner
from dpcore.mechanisms import Laplace

FALSE_ALARM = 1e-7


@pytest.mark.parametrize("budget, epsilon", [("image", 50.0), ("pixel", 0.5)])
def test_every_training_image_carries_laplace_noise_for_the_reported_per_image_epsilon(budget, epsilon, monkeypatch):
    noise: list[np.ndarray] = []
    randomise = Laplace.randomise

    def captured(self, values, **kw):
        out = randomise(self, values, **kw)
        noise.append(np.asarray(out, dtype=float) - np.asarray(values, dtype=float))
        return out

    monkeypatch.setattr(Laplace, "randomise", captured)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the labels in the clear are warned about where that is tested
        res = run_learner("noisy-input", "digits", epsilon=epsilon, seed=0,
                          params={"budget": budget, "baseline": False, "max_iter": 20})
    assert res.epsilon == pytest.approx(epsilon * (64 if budget == "pixel" else 1))
    drawn = np.concatenate([z.ravel() for z in noise])
    assert len(noise) == 1347 and drawn.size == 1347 * 64  # one release per training image, every pixel
    b = 64 * 16 / res.epsilon
    law = stats.gamma(drawn.size)
    total = float(np.abs(drawn).sum() / b)
    lo, hi = law.ppf(FALSE_ALARM / 2), law.isf(FALSE_ALARM / 2)
    assert lo <= total <= hi, (f"mean |noise| is {total / drawn.size:.4f} b for b = 64 * 16 / {res.epsilon:g}, "
                               f"outside [{lo / drawn.size:.4f}, {hi / drawn.size:.4f}]")
