"""Image mechanisms: noise scale against the formula, DP-Pix cell means and sensitivity, clipping, errors."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpcore.exceptions import DPCoreWarning, DPValueError
from dpcore.images import (
    IMAGE_MECHANISMS,
    DPPix,
    PixelGaussian,
    PixelLaplace,
    cell_means,
    make_image_mechanism,
    pixelate,
)

R_RANGES = [(0.0, 255.0), (0.0, 16.0), (0.0, 1.0)]


def _flat(shape, pixel_range):
    lo, hi = pixel_range
    return np.full(shape, (lo + hi) / 2.0)


# ---------------------------------------------------------------- Laplace


@pytest.mark.parametrize("pixel_range", R_RANGES)
@pytest.mark.parametrize("shape", [(100, 100), (60, 60, 3)])
def test_laplace_per_pixel_scale_matches_formula(pixel_range, shape):
    R = pixel_range[1] - pixel_range[0]
    C = shape[2] if len(shape) == 3 else 1
    eps = 200.0  # noise scale R*C/200 << R/2: clipping never bites, so the empirical scale is the mechanism's
    mech = PixelLaplace(epsilon=eps, pixel_range=pixel_range, budget="pixel")
    expected_b = C * R / eps  # Lap(Delta_1/eps), Delta_1 = C R for one pixel of C channels
    assert mech.scale(shape) == pytest.approx(expected_b)
    img = _flat(shape, pixel_range)
    noise = mech.privatise(img, rng=0) - img
    # MLE of a Laplace scale is mean |x|; its relative sd is 1/sqrt(n) (<= 1.2% here): 5% is ~4 sd
    assert np.mean(np.abs(noise)) == pytest.approx(expected_b, rel=0.05)
    # and the shape of the distribution is Laplace, not Gaussian
    assert stats.kstest(noise.ravel() / expected_b, "laplace").pvalue > 1e-3


@pytest.mark.parametrize("shape", [(8, 8), (25, 25), (10, 12, 3)])
def test_laplace_per_image_splits_epsilon_across_all_values(shape):
    pixel_range = (0.0, 16.0)
    n_values = int(np.prod(shape))
    eps = 100.0 * n_values  # keeps the per-value budget at 100 so nothing is clipped
    mech = PixelLaplace(epsilon=eps, pixel_range=pixel_range, budget="image")
    # L1 distance between any two images is at most n_values * R
    assert mech.sensitivity(shape) == pytest.approx(n_values * 16.0)
    assert mech.scale(shape) == pytest.approx(16.0 / 100.0)
    per_pixel = PixelLaplace(epsilon=1.0, pixel_range=pixel_range, budget="pixel")
    per_image = PixelLaplace(epsilon=1.0, pixel_range=pixel_range, budget="image")
    C = shape[2] if len(shape) == 3 else 1
    assert per_image.noise_std(shape) / per_pixel.noise_std(shape) == pytest.approx(shape[0] * shape[1])
    rng = np.random.default_rng(1)
    imgs = np.full((400,) + shape, 8.0)
    noise = mech.privatise_many(imgs, rng=rng) - imgs
    assert np.std(noise) == pytest.approx(math.sqrt(2) * 16.0 / 100.0, rel=0.05)
    assert C in (1, 3)


# ---------------------------------------------------------------- Gaussian


def _balle_wang_delta(sigma, eps, sens):
    a, b = sens / (2 * sigma), eps * sigma / sens
    return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b)


@pytest.mark.parametrize("budget", ["pixel", "image"])
def test_gaussian_sigma_is_analytic_calibration_of_the_stated_l2_sensitivity(budget):
    shape, pixel_range, eps, delta = (25, 25), (0.0, 1.0), 2.0, 1e-5
    mech = PixelGaussian(epsilon=eps, delta=delta, pixel_range=pixel_range, budget=budget)
    sens = 1.0 if budget == "pixel" else math.sqrt(625)  # R sqrt(1) vs R sqrt(h w)
    assert mech.sensitivity(shape) == pytest.approx(sens)
    sigma = mech.noise_std(shape)
    # an independent Balle & Wang check: delta(sigma) hits the target, and a 1% smaller sigma breaks it
    assert _balle_wang_delta(sigma, eps, sens) <= delta * (1 + 1e-6)
    assert _balle_wang_delta(0.99 * sigma, eps, sens) > delta


def test_gaussian_empirical_std_matches_sigma():
    shape, pixel_range = (80, 80, 3), (0.0, 255.0)
    mech = PixelGaussian(epsilon=300.0, delta=1e-5, pixel_range=pixel_range, budget="pixel")
    img = _flat(shape, pixel_range)
    noise = mech.privatise(img, rng=3) - img
    sigma = mech.noise_std(shape)
    assert sigma < 255 / 8  # so clipping is negligible
    # relative sd of the sample std is 1/sqrt(2n) ~ 0.5%
    assert np.std(noise) == pytest.approx(sigma, rel=0.03)
    assert stats.kstest(noise.ravel() / sigma, "norm").pvalue > 1e-3


# ---------------------------------------------------------------- DP-Pix


def test_cell_means_match_a_loop():
    rng = np.random.default_rng(0)
    img = rng.uniform(0, 255, size=(11, 13))
    b = 4
    means, counts = cell_means(img, b)
    assert means.shape == (3, 4) and counts.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            block = img[i * b:(i + 1) * b, j * b:(j + 1) * b]
            assert means[i, j] == pytest.approx(block.mean())
            assert counts[i, j] == block.size
    pix = pixelate(img, b)
    assert pix.shape == img.shape
    assert pix[0, 0] == pytest.approx(img[:4, :4].mean()) and pix[10, 12] == pytest.approx(img[8:, 12:].mean())
    rgb = rng.uniform(0, 1, size=(8, 8, 3))
    m3, _ = cell_means(rgb, 2)
    assert m3.shape == (4, 4, 3) and m3[1, 2, 1] == pytest.approx(rgb[2:4, 4:6, 1].mean())


@pytest.mark.parametrize("b,m", [(2, 1), (4, 1), (4, 5), (7, 3)])
def test_dppix_sensitivity_bounds_cell_means_of_m_pixel_neighbours(b, m):
    """Brute force: images differing in m pixels have cell means within R m / b^2 in L1, and it is attained."""
    R = 255.0
    mech = DPPix(epsilon=1.0, pixel_range=(0, R), cell=b, m=m)
    shape = (b * 4, b * 3)
    assert mech.sensitivity(shape) == pytest.approx(R * m / b**2)  # Fan 2018 with 255 -> R
    assert mech.scale(shape) == pytest.approx(R * m / b**2)
    rng = np.random.default_rng(b * 10 + m)
    worst = 0.0
    for _ in range(300):
        x = rng.uniform(0, R, size=shape)
        y = x.copy()
        idx = rng.choice(x.size, size=m, replace=False)
        y.flat[idx] = rng.choice([0.0, R], size=m)
        worst = max(worst, np.abs(cell_means(x, b)[0] - cell_means(y, b)[0]).sum())
    assert worst <= R * m / b**2 + 1e-9
    x = np.zeros(shape)
    y = x.copy()
    y.flat[rng.choice(x.size, size=m, replace=False)] = R
    assert np.abs(cell_means(x, b)[0] - cell_means(y, b)[0]).sum() == pytest.approx(R * m / b**2)


def test_dppix_noise_on_cell_means_has_fans_scale():
    b, m, eps, R = 4, 2, 400.0, 255.0
    mech = DPPix(epsilon=eps, pixel_range=(0, R), cell=b, m=m)
    img = np.full((200, 200), 127.5)
    out = mech.privatise(img, rng=5)
    means, _ = cell_means(out, b)
    noise = means - 127.5
    # every pixel of a cell carries the same noisy mean
    assert np.allclose(out, pixelate(out, b))
    expected = R * m / (b**2 * eps)
    assert np.mean(np.abs(noise)) == pytest.approx(expected, rel=0.06)  # 2500 cells: sd of estimate 2%
    assert stats.kstest(noise.ravel() / expected, "laplace").pvalue > 1e-3


def test_dppix_edge_cells_get_noise_for_their_size():
    """When b does not divide the side, a cell of n_c pixels gets Lap(R m / (n_c eps)): each pixel still costs eps/m."""
    b, eps, R = 4, 400.0, 1.0
    mech = DPPix(epsilon=eps, pixel_range=(0, R), cell=b, m=1)
    imgs = np.full((300, 9, 9), 0.5)  # cells: 4x4, 4x4, 4x1 / ... / 1x1 corner
    out = mech.privatise_many(imgs, rng=7)
    corner = out[:, 8, 8] - 0.5  # a 1-pixel cell
    full = out[:, 0, 0] - 0.5
    edge = out[:, 0, 8] - 0.5  # a 4 x 1 cell
    assert np.mean(np.abs(corner)) == pytest.approx(R / eps, rel=0.2)
    assert np.mean(np.abs(full)) == pytest.approx(R / (16 * eps), rel=0.2)
    assert np.mean(np.abs(edge)) == pytest.approx(R / (4 * eps), rel=0.2)


def test_dppix_rgb_counts_every_channel_of_a_pixel():
    mech = DPPix(epsilon=1.0, pixel_range=(0, 255), cell=4, m=1)
    assert mech.sensitivity((8, 8, 3)) == pytest.approx(3 * 255 / 16)
    assert mech.sensitivity((8, 8)) == pytest.approx(255 / 16)


# ---------------------------------------------------------------- contract


@pytest.mark.parametrize("kind", list(IMAGE_MECHANISMS))
@pytest.mark.parametrize("shape", [(8, 8), (12, 10, 3)])
def test_output_is_float64_same_shape_inside_the_range(kind, shape):
    pixel_range = (0.0, 16.0)
    mech = make_image_mechanism(kind, epsilon=0.5, pixel_range=pixel_range, cell=2)
    img = np.random.default_rng(0).integers(0, 17, size=shape)  # integer input is accepted
    out = mech.privatise(img, rng=0)
    assert out.dtype == np.float64 and out.shape == shape
    assert out.min() >= 0.0 and out.max() <= 16.0
    # at epsilon 0.5 the noise is large: clipping to the range really happened
    assert np.mean((out == 0.0) | (out == 16.0)) > 0.1 or kind == "dppix"
    stack = mech.privatise_many(np.stack([img, img]), rng=1)
    assert stack.shape == (2,) + shape and stack.dtype == np.float64


@pytest.mark.parametrize("kind", list(IMAGE_MECHANISMS))
def test_same_seed_same_picture(kind):
    mech = make_image_mechanism(kind, epsilon=1.0, pixel_range=(0, 1), cell=2)
    img = np.random.default_rng(0).uniform(size=(10, 10))
    assert np.array_equal(mech.privatise(img, rng=42), mech.privatise(img, rng=42))
    assert not np.array_equal(mech.privatise(img, rng=42), mech.privatise(img, rng=43))


@pytest.mark.parametrize("kind", list(IMAGE_MECHANISMS))
@pytest.mark.parametrize("eps", [0, -1.0])
def test_epsilon_must_be_positive(kind, eps):
    with pytest.raises(DPValueError, match="epsilon must be > 0"):
        make_image_mechanism(kind, epsilon=eps)


def test_cell_larger_than_image_is_a_clear_error():
    mech = DPPix(epsilon=1.0, pixel_range=(0, 16), cell=9)
    with pytest.raises(DPValueError, match=r"cell size b=9 is larger than the image \(8 x 8\); choose b <= 8"):
        mech.privatise(np.zeros((8, 8)))
    with pytest.raises(DPValueError, match="m=65 is more than the 64 pixels"):
        DPPix(epsilon=1.0, pixel_range=(0, 16), cell=2, m=65).privatise(np.zeros((8, 8)))
    with pytest.raises(DPValueError, match="cell must be >= 1"):
        DPPix(epsilon=1.0, cell=0)


def test_other_bad_parameters():
    with pytest.raises(DPValueError, match="budget must be 'pixel'"):
        PixelLaplace(epsilon=1.0, budget="row")
    with pytest.raises(DPValueError, match="needs delta > 0|must be > 0 here"):
        PixelGaussian(epsilon=1.0, delta=0.0)
    with pytest.raises(DPValueError, match="pixel_range must satisfy lo < hi"):
        PixelLaplace(epsilon=1.0, pixel_range=(5, 5))
    with pytest.raises(DPValueError, match=r"shape \(h, w\) or \(h, w, 3\)"):
        PixelLaplace(epsilon=1.0).privatise(np.zeros((4, 4, 2)))
    with pytest.raises(DPValueError, match="unknown image mechanism"):
        make_image_mechanism("blur", epsilon=1.0)


def test_input_outside_the_range_is_clipped_with_a_warning():
    mech = PixelLaplace(epsilon=1e6, pixel_range=(0, 1), budget="pixel")
    with pytest.warns(DPCoreWarning, match="outside the declared bounds"):
        out = mech.privatise(np.array([[2.0, 0.5], [0.5, -1.0]]), rng=0)
    assert out[0, 0] == pytest.approx(1.0, abs=1e-4) and out[1, 1] == pytest.approx(0.0, abs=1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech.privatise(np.full((2, 2), 0.5), rng=0)  # in range: no warning


def test_privacy_units_are_stated():
    units = {k: make_image_mechanism(k, epsilon=1.0, m=3).privacy_unit for k in IMAGE_MECHANISMS}
    assert "one pixel" in units["laplace-pixel"] and "whole image" in units["laplace-image"]
    assert "one pixel" in units["gaussian-pixel"] and "whole image" in units["gaussian-image"]
    assert "at most m = 3 pixels" in units["dppix"]


def test_whole_image_epsilon():
    shape = (8, 8)
    lap = PixelLaplace(epsilon=0.5, pixel_range=(0, 16), budget="pixel")
    assert lap.image_epsilon(shape) == pytest.approx(32.0)  # 64 pixels x 0.5
    assert PixelLaplace(epsilon=0.5, budget="image").image_epsilon(shape) == 0.5
    assert DPPix(epsilon=0.5, cell=2, m=4).image_epsilon(shape) == pytest.approx(0.5 * 64 / 4)
    g = PixelGaussian(epsilon=1.0, delta=1e-5, pixel_range=(0, 16), budget="pixel")
    e = g.image_epsilon(shape)
    # the same sigma against the whole-image L2 sensitivity 16*8 gives exactly delta at e (independent check)
    assert _balle_wang_delta(g.noise_std(shape), e, 16.0 * 8) == pytest.approx(1e-5, rel=1e-4)
    assert 1.0 < e < 64.0  # better than basic composition over 64 pixels, far worse than 1
    assert PixelGaussian(epsilon=1.0, budget="image").image_epsilon(shape) == 1.0


@pytest.mark.parametrize("shape,b,m", [((8, 8), 2, 1), ((9, 11), 4, 3), ((25, 25), 4, 1)])
def test_dppix_privacy_loss_of_m_pixel_neighbours_is_at_most_epsilon(shape, b, m):
    """The log-likelihood ratio of DP-Pix's output under two m-pixel neighbours, from the Laplace
    densities of the cell means, never exceeds epsilon — also with the smaller edge cells."""
    eps, R = 0.7, 1.0
    mech = DPPix(epsilon=eps, pixel_range=(0, R), cell=b, m=m)
    rng = np.random.default_rng(11)
    _, counts = cell_means(np.zeros(shape), b)
    scales = R * m / (counts * eps)  # per-cell Laplace scale (Fan's R m / (b^2 eps) for full cells)
    # the empirical per-cell noise of the implementation matches these scales
    out = mech.privatise_many(np.full((4000,) + shape, 0.5), rng=1)
    emp = np.mean(np.abs(np.stack([cell_means(o, b)[0] for o in out[:, :, :]]) - 0.5), axis=0)
    ok = scales < 0.1  # cells whose noise is rarely clipped at [0, 1]
    np.testing.assert_allclose(emp[ok], scales[ok], rtol=0.12)
    worst = 0.0
    for _ in range(200):
        x = rng.uniform(0, R, size=shape)
        y = x.copy()
        y.flat[rng.choice(x.size, size=m, replace=False)] = rng.choice([0.0, R], size=m)
        # |log p(z|x) - log p(z|y)| <= sum_c |mu_c(x) - mu_c(y)| / s_c for Laplace densities
        loss = np.sum(np.abs(cell_means(x, b)[0] - cell_means(y, b)[0]) / scales)
        worst = max(worst, loss)
    assert worst <= eps + 1e-9
    # put all m changes in the smallest cell with a full 0 -> R swing: the bound is attained
    x = np.zeros(shape)
    corner = np.zeros(shape, dtype=bool)
    r0 = (shape[0] // b) * b if shape[0] % b else shape[0] - b
    c0 = (shape[1] // b) * b if shape[1] % b else shape[1] - b
    corner[r0:, c0:] = True
    idx = np.flatnonzero(corner.ravel())[:m]
    y = x.copy()
    y.flat[idx] = R
    loss = np.sum(np.abs(cell_means(x, b)[0] - cell_means(y, b)[0]) / scales)
    assert loss == pytest.approx(eps * len(idx) / m)


@pytest.mark.parametrize("shape", [(1, 1), (1, 1, 3)])
def test_one_pixel_image_spends_the_per_pixel_epsilon(shape):
    # a 1 x 1 image is its only pixel: the whole-image guarantee is the per-pixel one
    assert PixelGaussian(epsilon=0.7, delta=1e-5, budget="pixel").image_epsilon(shape) == 0.7
    assert PixelLaplace(epsilon=0.7, budget="pixel").image_epsilon(shape) == pytest.approx(0.7)


@pytest.mark.parametrize("kind", ["laplace-pixel", "laplace-image", "gaussian-pixel", "gaussian-image", "dppix"])
@pytest.mark.parametrize("pixel_range", [(-0.3, 3.3), (-0.0564610247, 0.9182944109)])
def test_an_image_mechanisms_sensitivity_is_never_below_the_exact_one_of_its_pixel_range(kind, pixel_range):
    """R = hi - lo from the exact rationals, and the sensitivity built on it (C R, C R h w, R sqrt(h w C),
    C R m / b^2) rounded up: in floating point hi - lo lay below the exact width for these ranges, and the noise
    was a hair short of its epsilon."""
    from fractions import Fraction

    mech = make_image_mechanism(kind, epsilon=1.0, pixel_range=pixel_range, delta=1e-5, cell=2, m=4)
    lo, hi = (Fraction(v) for v in pixel_range)
    assert Fraction(mech.width) >= hi - lo
    h, w = 6, 6
    exact = {"laplace-pixel": hi - lo, "laplace-image": (hi - lo) * h * w, "dppix": (hi - lo) * 4 / 4}
    if kind in exact:
        assert Fraction(mech.sensitivity((h, w))) >= exact[kind]
    else:  # an L2 sensitivity R sqrt(n): its square at least R^2 n
        n = 1 if kind == "gaussian-pixel" else h * w
        assert Fraction(mech.sensitivity((h, w))) ** 2 >= (hi - lo) ** 2 * n
