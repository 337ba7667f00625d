"""HOG features: equal to scikit-image's reference, per-sample, deterministic, validated; wired through the presets."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.datasets import load_dataset, train_test_split
from dpcore.exceptions import DPValueError
from dpcore.learners import run_learner
from dpcore.training import FEATURES, PRESETS, hog_features, preset_for
from dpcore.training.learners import _features


@pytest.fixture(scope="module")
def mnist_rows():
    ds = load_dataset("mnist5k")
    return np.asarray(ds.X[:60], dtype=float) / 255.0


@pytest.mark.parametrize("cell,block,norm,orient", [(7, 2, "L2-Hys", 9), (4, 3, "L1", 9), (4, 2, "L1-sqrt", 6),
                                                    (14, 1, "L2", 9)])
def test_hog_matches_skimage_on_mnist(mnist_rows, cell, block, norm, orient):
    from skimage.feature import hog

    ref = np.stack([hog(x.reshape(28, 28), orientations=orient, pixels_per_cell=(cell, cell),
                        cells_per_block=(block, block), block_norm=norm) for x in mnist_rows])
    ours = hog_features(mnist_rows, (28, 28), cell_size=cell, block_size=block, orientations=orient,
                        block_norm=norm, unit_norm=False)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, atol=1e-5)


def test_hog_centres_the_crop_when_cells_do_not_tile(mnist_rows):
    """28 is not a multiple of 6: our cells tile the centred 24x24, skimage's the top-left one."""
    from skimage.feature import hog

    crop = mnist_rows.reshape(-1, 28, 28)[:, 2:26, 2:26]
    ref = np.stack([hog(x, pixels_per_cell=(6, 6), cells_per_block=(2, 2)) for x in crop])
    ours = hog_features(mnist_rows, (28, 28), cell_size=6, block_size=2, unit_norm=False)
    np.testing.assert_allclose(ours, ref, atol=1e-5)
    unit = hog_features(mnist_rows, (28, 28), cell_size=6, block_size=2)
    np.testing.assert_allclose(unit, ref / np.linalg.norm(ref, axis=1, keepdims=True), atol=1e-5)


def test_hog_shape_and_unit_norm(mnist_rows):
    f = hog_features(mnist_rows, (28, 28), cell_size=6, block_size=2, orientations=9)
    assert f.shape == (len(mnist_rows), 3 * 3 * 2 * 2 * 9) and f.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(f, axis=1), 1.0, atol=1e-5)
    blank = hog_features(np.zeros((2, 64)), (8, 8), cell_size=2, block_size=2)
    assert blank.shape == (2, 3 * 3 * 4 * 9) and np.all(blank == 0)  # no gradient: zeros, not NaN


def test_hog_is_per_sample(mnist_rows):
    """A row's features do not change when the other rows change, are removed or are reordered."""
    rng = np.random.default_rng(0)
    full = hog_features(mnist_rows, (28, 28))
    other = mnist_rows.copy()
    other[1:] = rng.random(other[1:].shape)
    np.testing.assert_array_equal(hog_features(other, (28, 28))[0], full[0])
    np.testing.assert_array_equal(hog_features(mnist_rows[:1], (28, 28))[0], full[0])
    perm = rng.permutation(len(mnist_rows))
    np.testing.assert_array_equal(hog_features(mnist_rows[perm], (28, 28)), full[perm])


def test_hog_is_deterministic_and_invariant_to_intensity_scale(mnist_rows):
    a = hog_features(mnist_rows, (28, 28))
    b = hog_features(mnist_rows.copy(), (28, 28))  # same content, new array: same (cached or recomputed) answer
    np.testing.assert_array_equal(a, b)
    b[0, 0] = 99.0  # callers get a copy: mutating it cannot poison the cache
    np.testing.assert_array_equal(hog_features(mnist_rows, (28, 28)), a)
    # the learners feed pixels mapped to [-1, 1]; block normalisation removes the affine rescaling
    np.testing.assert_allclose(hog_features(2 * mnist_rows - 1, (28, 28)), a, atol=1e-4)


def test_hog_bins_exact_diagonals_above_the_edge():
    """With 8 bins of 22.5 degrees, 45 and 135 degrees are bin edges: they go to bins 2 and 6."""
    diag = np.eye(8)
    anti = diag[:, ::-1].copy()
    f = hog_features(np.stack([diag.ravel(), anti.ravel()]), (8, 8), cell_size=8, block_size=1, orientations=8,
                     block_norm="L1", unit_norm=False)
    assert set(np.flatnonzero(f[0] > 1e-6)) <= {0, 4, 6} and f[0, 6] == f[0].max()  # gradient across "\\"
    assert set(np.flatnonzero(f[1] > 1e-6)) <= {0, 2, 4} and f[1, 2] == f[1].max()  # gradient across "/"


def test_hog_responds_to_orientation():
    bar_v = np.zeros((8, 8))
    bar_v[:, 3] = 1.0
    bar_h = bar_v.T.copy()
    fv, fh = hog_features(np.stack([bar_v.ravel(), bar_h.ravel()]), (8, 8), cell_size=8, block_size=1)
    # a vertical bar has horizontal gradients (0 degrees), a horizontal bar vertical ones (90 degrees)
    assert fv.argmax() == 0 and fh.argmax() == 4


@pytest.mark.parametrize("kwargs,match", [
    (dict(cell_size=0), "cell_size"),
    (dict(cell_size=5, block_size=2), "cell_size=5 with block_size=2"),
    (dict(block_size=0), "block_size"),
    (dict(orientations=0), "orientations"),
    (dict(block_norm="L3"), "block_norm"),
])
def test_hog_bad_parameters(kwargs, match):
    with pytest.raises(DPValueError, match=match):
        hog_features(np.zeros((1, 64)), (8, 8), **kwargs)


def test_hog_bad_input():
    with pytest.raises(DPValueError, match="needs 64 columns"):
        hog_features(np.zeros((1, 63)), (8, 8))
    with pytest.raises(DPValueError, match="NaN or infinite"):
        hog_features(np.full((1, 64), np.nan), (8, 8), cell_size=2)
    with pytest.raises(ValueError):
        hog_features(np.zeros(64), (8, 8))


def test_presets_use_public_feature_choices():
    assert "hog" in FEATURES
    pre = preset_for("mnist5k")
    assert pre.features == "hog" and pre.hog_cell * pre.hog_block <= 28
    assert preset_for("digits").accountant in ("rdp", "pld")
    for p in PRESETS.values():
        assert p.features in FEATURES and p.accountant in ("rdp", "pld")


def test_learner_features_follow_the_preset_and_params():
    split = train_test_split("mnist5k", seed=0)
    X_tr, X_te, shape = _features(split, {})
    assert shape is None and X_tr.shape == (split.X_train.shape[0], 324) and X_te.shape[1] == 324
    X_tr7, _, _ = _features(split, {"hog_cell": 7, "hog_block": 1})
    assert X_tr7.shape[1] == 4 * 4 * 9
    with pytest.raises(DPValueError, match="hog_cell"):
        _features(split, {"hog_cell": 0})
    with pytest.raises(DPValueError, match="hog_cell=10 with hog_block=3 needs images of at least 30x30"):
        _features(split, {"hog_cell": 10, "hog_block": 3})
    with pytest.raises(ValueError, match="features='hog' needs image data"):
        run_learner("dpsgd", "iris", params={"features": "hog", "epochs": 1})
    with pytest.raises(ValueError, match="model='cnn' works on pixels"):
        run_learner("dpsgd", "digits", params={"features": "hog", "model": "cnn", "epochs": 1})


def test_dpsgd_on_hog_digits_runs_and_learns():
    res = run_learner("dpsgd", "digits", epsilon=4.0, delta=1e-5, seed=0,
                      params={"features": "hog", "hog_cell": 2, "epochs": 5, "learning_rate": 8.0,
                              "accountant": "rdp"})
    assert res.epsilon <= 4.0 + 1e-9
    assert res.metrics["accuracy"] > 0.6  # chance is 0.1; 0.78 with this seed
