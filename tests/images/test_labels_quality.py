"""Label-noise views (Laplace on one-hot labels, randomized response) and the PSNR/SSIM numbers."""
from __future__ import annotations

import math

import numpy as np
import pytest
from skimage.metrics import structural_similarity

from dpcore.exceptions import DPValueError
from dpcore.images import (
    ONE_HOT_SENSITIVITY,
    decode_argmax,
    decode_clamp_round,
    label_noise_view,
    laplace_one_hot,
    psnr,
    randomized_response_labels,
    ssim,
)


def test_one_hot_sensitivity_is_two():
    eye = np.eye(10)
    assert max(np.abs(eye[i] - eye[j]).sum() for i in range(10) for j in range(10)) == ONE_HOT_SENSITIVITY == 2.0


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_laplace_one_hot_noise_scale(eps):
    y = np.arange(10).repeat(500)
    noisy = laplace_one_hot(y, k=10, epsilon=eps, rng=0)
    noise = noisy - np.eye(10)[y]
    assert noisy.shape == (5000, 10)
    assert np.mean(np.abs(noise)) == pytest.approx(2.0 / eps, rel=0.03)  # Lap(2/eps): mean |x| = b


def test_decoders():
    noisy = np.array([[0.2, 0.9, -0.4], [0.7, 0.6, 1.8], [-1.0, 0.1, 0.3]])
    assert decode_argmax(noisy).tolist() == [1, 2, 2]
    assert decode_clamp_round(noisy).tolist() == [[0, 1, 0], [1, 1, 1], [0, 0, 0]]


def test_randomized_response_keeps_with_the_textbook_probability():
    eps, k = 1.0, 10
    y = np.zeros(20000, dtype=int)
    out = randomized_response_labels(y, k=k, epsilon=eps, rng=1)
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    assert np.mean(out == 0) == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / y.size))
    # the others are uniform over the k-1 wrong labels
    counts = np.bincount(out, minlength=k)[1:]
    assert counts.min() > 0.8 * counts.mean()


def test_label_view_and_bad_labels():
    df = label_noise_view(np.array([0, 1, 2]), ("a", "b", "c"), epsilon=100.0, seed=0)
    assert df["true"].tolist() == ["a", "b", "c"]
    assert df["laplace_argmax"].tolist() == ["a", "b", "c"] and df["randomized_response"].tolist() == ["a", "b", "c"]
    assert df["laplace_valid"].all() and df["laplace_clamp_round"].tolist() == ["{a}", "{b}", "{c}"]
    with pytest.raises(DPValueError, match=r"labels must be integers in \[0, 3\)"):
        laplace_one_hot([0, 3], k=3, epsilon=1.0)
    with pytest.raises(DPValueError, match="epsilon must be > 0"):
        laplace_one_hot([0, 1], k=3, epsilon=0.0)


def test_psnr_against_its_definition():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 16, size=(8, 8))
    b = np.clip(a + rng.normal(0, 2, size=a.shape), 0, 16)
    mse = np.mean((a - b) ** 2)
    assert psnr(a, b, data_range=16.0) == pytest.approx(10 * math.log10(16.0**2 / mse))
    assert psnr(a, a, data_range=16.0) == math.inf
    with pytest.raises(DPValueError, match="same shape"):
        psnr(a, a[:4], data_range=16.0)


def test_ssim():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, size=(25, 25))
    assert ssim(a, a, data_range=1.0) == pytest.approx(1.0)
    b = np.clip(a + rng.normal(0, 0.3, size=a.shape), 0, 1)
    assert ssim(a, b, data_range=1.0) == pytest.approx(structural_similarity(a, b, data_range=1.0))
    assert ssim(a, b, data_range=1.0) < 0.9
    rgb = rng.uniform(0, 255, size=(16, 16, 3))
    assert ssim(rgb, rgb, data_range=255.0) == pytest.approx(1.0)
    assert ssim(a[:5, :5], b[:5, :5], data_range=1.0) <= 1.0  # window shrinks to 5
    assert math.isnan(ssim(a[:2, :2], b[:2, :2], data_range=1.0))


@pytest.mark.parametrize("k, eps", [(10, 1.0), (10, 0.2), (2, 3.0)])
def test_laplace_label_probabilities_match_simulation(k, eps):
    from dpcore.images.labels import decode_argmax, decode_clamp_round, laplace_label_probabilities, laplace_one_hot

    p = laplace_label_probabilities(k=k, epsilon=eps)
    noisy = laplace_one_hot(np.zeros(100_000, dtype=int), k=k, epsilon=eps, rng=7)
    cr = decode_clamp_round(noisy)
    # 100k draws: standard error <= 0.0016, tolerance about 4 of them
    assert p["argmax_correct"] == pytest.approx(np.mean(decode_argmax(noisy) == 0), abs=0.007)
    assert p["clamp_round_valid"] == pytest.approx(np.mean(cr.sum(axis=1) == 1), abs=0.007)
    assert p["clamp_round_correct"] == pytest.approx(np.mean((cr.sum(axis=1) == 1) & (cr[:, 0] == 1)), abs=0.007)
    assert 1.0 / k < p["argmax_correct"] < 1.0
