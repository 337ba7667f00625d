"""The one Gaussian for sums: seeded draws equal torch's own on the values' device, secure mode releases on a grid."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from dpcore.exceptions import DPValueError
from dpcore.mechanisms.additive import secure_grid
from dpcore.mechanisms.gaussian_sum import GaussianSum, gaussian_like
from dpcore.rng import secure_noise, torch_generator


def test_a_seeded_release_adds_exactly_torchs_normal_draw_of_the_values_dtype():
    values = torch.arange(20, dtype=torch.float32)
    out = GaussianSum(std=1.5, sensitivity=1.0, generator=torch_generator(4)).release(values)
    expected = values + torch.normal(0.0, 1.5, size=(20,), generator=torch_generator(4), dtype=torch.float32)
    assert torch.equal(out, expected) and out.dtype == torch.float32


def test_a_numpy_release_draws_from_the_seeded_generator():
    out = GaussianSum(std=2.0, sensitivity=1.0, rng=5).release(np.zeros(1000))
    np.testing.assert_array_equal(out, np.random.default_rng(5).normal(0.0, 2.0, size=1000))


def test_a_generator_of_another_device_is_refused():
    """Noise for a tensor is drawn on its device by that device's generator (no CUDA here: the meta device)."""
    with pytest.raises(DPValueError, match="generator is on cpu but the values are on meta"):
        gaussian_like(torch.zeros(3, device="meta"), 1.0, generator=torch_generator(0))


def test_a_seeded_draw_is_refused_in_secure_mode():
    with secure_noise(), pytest.raises(DPValueError, match="secure mode"):
        gaussian_like(torch.zeros(3), 1.0, generator=torch_generator(0))


def test_in_secure_mode_each_row_is_its_own_release_on_the_grid_of_its_length():
    with secure_noise():
        noise = GaussianSum(std=2.0, sensitivity=1.0, generator=torch_generator(0))
    assert noise.secure
    out = noise.release(torch.zeros(300, 30, dtype=torch.float64))
    grid = secure_grid(sensitivity=1.0, scale=2.0, coordinates=30, norm=2)
    z = out.numpy().ravel()
    assert np.array_equal(z / grid.granularity, np.rint(z / grid.granularity))
    assert stats.kstest(z, stats.norm(scale=2.0 * grid.scale_increase).cdf).pvalue > 1e-6
    assert abs(np.corrcoef(out[:-1].ravel(), out[1:].ravel())[0, 1]) < 5.5 / math.sqrt(z.size)


def test_zero_std_releases_the_sum_unchanged():
    values = torch.ones(4)
    assert GaussianSum(std=0.0, sensitivity=1.0, generator=torch_generator(0)).release(values) is values
