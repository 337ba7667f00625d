"""The picture grid and quality curves: shapes, seeding, monotone quality in epsilon."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.exceptions import DPValueError
from dpcore.images import IMAGE_MECHANISMS, ColumnSpec, load_image_set, noisy_grid, quality_curve


@pytest.fixture(scope="module")
def digits():
    return load_image_set("digits", n_images=3)


def test_grid_shapes_and_table(digits):
    cols = [ColumnSpec(k, 1.0, cell=2) for k in IMAGE_MECHANISMS]
    g = noisy_grid(digits, cols, seed=0)
    assert g.noisy.shape == (3, 5, 8, 8) and g.noisy.dtype == np.float64
    assert g.noisy.min() >= 0 and g.noisy.max() <= 16
    assert len(g.quality) == 15 and set(g.quality.kind) == set(IMAGE_MECHANISMS)
    assert g.columns[0] == "Laplace / pixel, ε=1" and set(g.privacy_units) == set(g.columns)
    assert np.array_equal(g.originals, digits.images)


def test_same_settings_same_pictures_whatever_the_other_columns(digits):
    a = noisy_grid(digits, [ColumnSpec("laplace-pixel", 1.0), ColumnSpec("dppix", 1.0, cell=2)], seed=3)
    b = noisy_grid(digits, [ColumnSpec("dppix", 1.0, cell=2)], seed=3)
    c = noisy_grid(digits, [ColumnSpec("dppix", 1.0, cell=2)], seed=4)
    assert np.array_equal(a.noisy[:, 1], b.noisy[:, 0])
    assert not np.array_equal(b.noisy, c.noisy)


def test_grid_errors(digits):
    with pytest.raises(DPValueError, match="at least one"):
        noisy_grid(digits, [], seed=0)
    with pytest.raises(DPValueError, match="cell size b=10 is larger than the image"):
        noisy_grid(digits, [ColumnSpec("dppix", 1.0, cell=10)], seed=0)
    with pytest.raises(DPValueError, match="epsilon must be > 0"):
        noisy_grid(digits, [ColumnSpec("laplace-image", 0.0)], seed=0)
    with pytest.raises(DPValueError, match="unknown image mechanism"):
        ColumnSpec("sepia", 1.0)


def test_quality_improves_with_epsilon():
    faces = load_image_set("faces", n_images=4)
    df = quality_curve(faces, ["laplace-pixel", "gaussian-image"], [0.1, 10.0, 1e5], seed=0)
    assert len(df) == 6
    for kind, part in df.groupby("kind"):
        part = part.sort_values("epsilon")
        assert part.psnr_db.is_monotonic_increasing, kind
        assert part.noise_std.is_monotonic_decreasing
    top = df[df.epsilon == 1e5].set_index("kind")
    assert top.loc["laplace-pixel", "ssim"] > 0.99
    # the same epsilon protecting the whole image leaves a much worse picture
    assert top.loc["gaussian-image", "psnr_db"] < top.loc["laplace-pixel", "psnr_db"] - 20
