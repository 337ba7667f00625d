"""The noisy-input learner and the train-on-what-you-see comparison."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.datasets import load_dataset
from dpcore.exceptions import DPValueError
from dpcore.images.learners import noisy_input_mechanism, train_on_what_you_see
from dpcore.learners import get_learner, learner_names, run_learner


def test_registered():
    assert "noisy-input" in learner_names("classification")
    spec = get_learner("noisy-input")
    assert spec.private and spec.images_only and "budget" in spec.params


def test_mechanism_is_the_per_image_split_budget_by_default():
    mech = noisy_input_mechanism(load_dataset("digits"), epsilon=2.0, delta=1e-5)
    assert mech.kind == "laplace" and mech.budget == "image"
    assert mech.scale((8, 8)) == pytest.approx(64 * 16 / 2.0)


def test_noisy_input_accuracy_between_chance_and_clean():
    tiny = run_learner("noisy-input", "faces", epsilon=0.01, seed=0)
    huge = run_learner("noisy-input", "faces", epsilon=1e6, seed=0)
    clean = huge.extras["clean_accuracy"]
    assert clean > 0.9
    assert huge.score == pytest.approx(clean, abs=0.03)
    assert tiny.score < 0.75  # two balanced classes: near chance
    assert tiny.epsilon == 0.01 and tiny.delta == 0.0
    assert "per-image local DP" in tiny.extras["privacy_unit"]
    assert "NOT protected" in tiny.extras["privacy_unit"] and not tiny.extras["labels_protected"]
    assert tiny.extras["released_examples"].shape == (8, 25, 25)
    again = run_learner("noisy-input", "faces", epsilon=0.01, seed=0)
    assert np.array_equal(again.extras["predictions"], tiny.extras["predictions"])


@pytest.mark.parametrize("eps", [1.0, 0.3])
def test_pixel_budget_reports_the_per_image_epsilon(eps):
    # eps per pixel on an 8x8 image is only (8*8*eps)-DP for the image (basic composition)
    r = run_learner("noisy-input", "digits", epsilon=eps, seed=0, params={"budget": "pixel", "baseline": False})
    h, w = load_dataset("digits").image_shape
    assert (h, w) == (8, 8)
    assert r.epsilon == pytest.approx(h * w * eps)
    assert r.history.epsilon.iloc[-1] == pytest.approx(h * w * eps)
    assert r.extras["epsilon_requested"] == eps
    assert "per-image local DP" not in r.extras["privacy_unit"]
    assert "per-pixel DP only" in r.extras["privacy_unit"] and f"{h * w * eps:.4g}" in r.extras["privacy_unit"]
    # DP-Pix: each pixel costs eps/m, the h*w pixels h*w*eps/m; the label share adds by basic composition
    d = run_learner("noisy-input", "digits", epsilon=2.0, seed=0,
                    params={"mechanism": "dppix", "m": 4, "label_share": 0.25, "baseline": False})
    assert d.epsilon == pytest.approx(64 * 1.5 / 4 + 0.5)
    assert d.extras["labels_protected"]


def test_gaussian_pixel_budget_matches_an_accountant_for_the_whole_image():
    import dp_accounting

    r = run_learner("noisy-input", "digits", epsilon=1.0, delta=1e-5, seed=0,
                    params={"mechanism": "gaussian", "budget": "pixel", "baseline": False})
    mech = noisy_input_mechanism(load_dataset("digits"), epsilon=1.0, delta=1e-5, mechanism="gaussian", budget="pixel")
    # the same noise std against the whole image's L2 sensitivity R*sqrt(64), composed by an independent accountant
    z = mech.noise_std((8, 8)) / (mech.width * 8.0)
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=z))
    assert r.epsilon == pytest.approx(acc.get_epsilon(1e-5), rel=0.01)
    assert 1.0 < r.epsilon < 64.0


def test_noisy_input_params_and_errors():
    r = run_learner("noisy-input", "faces", epsilon=5.0, seed=1,
                    params={"mechanism": "gaussian", "budget": "pixel", "label_share": 0.2, "baseline": False})
    assert r.delta == 1e-5 and "randomized response with ε = 1" in r.extras["privacy_unit"]
    with pytest.raises(DPValueError, match="does not take parameter"):
        run_learner("noisy-input", "faces", epsilon=1.0, params={"blur": 1})
    with pytest.raises(DPValueError, match="needs image data"):
        run_learner("noisy-input", "iris", epsilon=1.0)
    with pytest.raises(DPValueError, match="epsilon must be > 0"):
        run_learner("noisy-input", "faces", epsilon=0.0)
    with pytest.raises(DPValueError, match="budget must be 'image'"):
        run_learner("noisy-input", "faces", epsilon=1.0, params={"budget": "row"})
    with pytest.raises(DPValueError, match="mechanism must be one of 'laplace', 'gaussian', 'dppix'"):
        run_learner("noisy-input", "faces", epsilon=1.0, params={"mechanism": "blur"})
    with pytest.raises(DPValueError, match="label_share must be a number from 0 to 0.99"):
        run_learner("noisy-input", "faces", epsilon=1.0, params={"label_share": 1.0})


def test_train_on_what_you_see_table():
    table, info = train_on_what_you_see("faces", epsilon=1.0, seed=0, dpsgd_params={"epochs": 1, "unknown": 3})
    assert table.model.iloc[0].startswith("Logistic regression on clean")
    assert table.epsilon.iloc[1] == 1.0
    assert list(table.labels_protected) == [False, False] + [True] * (len(table) - 2)
    assert info["released_examples"].shape[1:] == (25, 25)
    if info["dpsgd_available"]:
        assert len(table) == 3 or info["dpsgd_error"]
        if len(table) == 3:
            assert table.epsilon.iloc[2] <= 1.0 + 1e-6 and 0 <= table.accuracy.iloc[2] <= 1
    else:
        assert len(table) == 2


def test_train_on_what_you_see_at_delta_zero_says_dp_sgd_needs_delta_rather_than_that_it_failed():
    # δ = 0 on the Noisy images page: the DP-SGD column was replaced by "DP-SGD failed: DP-SGD needs delta > 0"
    table, info = train_on_what_you_see("faces", epsilon=1.0, delta=0.0, seed=0)
    assert len(table) == 2 and table.epsilon.iloc[1] == 1.0  # the noisy-input classifier is pure ε-DP: it trains
    if info["dpsgd_available"]:
        assert "failed" not in info["dpsgd_error"]
        assert "needs δ > 0" in info["dpsgd_error"] and "Set δ above 0" in info["dpsgd_error"]


def test_a_ledger_of_whole_records_refuses_noisy_images_whose_labels_were_used_in_the_clear():
    # with label_share 0 the labels are not protected: the run's epsilon covers each image alone, which says nothing
    # of a whole record (image and label); a replace-one ledger of records composed it as if it did
    from dpcore.accounting import PrivacyLedger

    bare = run_learner("noisy-input", "digits", epsilon=1.0, seed=0, params={"label_share": 0.0, "baseline": False})
    both = run_learner("noisy-input", "digits", epsilon=1.0, seed=0, params={"label_share": 0.2, "baseline": False})
    assert (bare.unit, both.unit) == ("images", "records")
    records = PrivacyLedger(delta=1e-5, neighbouring="replace-one")
    with pytest.raises(DPValueError, match="protects each record's image, and this ledger counts each record"):
        records.spend(bare)
    assert records.spend(both) == pytest.approx(both.epsilon)
    assert PrivacyLedger(delta=1e-5, neighbouring="replace-one", unit="images").spend(bare) == pytest.approx(
        bare.epsilon)


def test_noisy_input_reports_at_least_the_exact_sum_of_image_and_label_epsilons():
    """Each image and its label are released once: the epsilon reported is at or above the exact sum of the whole
    image's and the label's (basic composition). Added in floating point, epsilon 0.5 with a label share of 0.1
    reported a unit in the last place below it."""
    from fractions import Fraction

    for eps, share in [(0.5, 0.1), (1.0, 0.2)]:
        r = run_learner("noisy-input", "faces", epsilon=eps, params={"label_share": share, "budget": "image"}, seed=0)
        assert Fraction(r.epsilon) >= Fraction(r.extras["epsilon_image"]) + Fraction(eps * share)
        assert r.epsilon == pytest.approx(eps, rel=1e-12)
