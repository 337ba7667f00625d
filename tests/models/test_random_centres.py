"""The clustering reference of random centres: drawn from the public bounds alone, scored as the k-means runs are."""
from itertools import permutations

import numpy as np
import pytest

from dpcore.datasets import train_test_split
from dpcore.exceptions import DPValueError
from dpcore.learners import run_learner
from dpcore.models.kmeans import random_centres_reference

BOUNDS = ([0.0, 0.0], [4.0, 2.0])


def test_random_centres_are_drawn_from_the_bounds_alone_whatever_the_rows():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 40)
    one = random_centres_reference(rng.uniform(0, [4, 2], (40, 2)), y, 3, bounds=BOUNDS, draws=5)
    other = random_centres_reference(np.full((40, 2), 1.0), y, 3, bounds=BOUNDS, draws=5)
    np.testing.assert_array_equal(one.centres_unit, other.centres_unit)
    assert one.centres_unit.shape == (5, 3, 2) and np.abs(one.centres_unit).max() <= 1.0
    # rows of every dataset with these bounds are scored against the same centres: only the scores differ
    assert one.accuracy != other.accuracy or one.intra_cluster_variance != other.intra_cluster_variance


def test_random_centres_score_as_an_independent_nearest_centre_and_best_matching_count_does():
    rng = np.random.default_rng(2)
    X, y = rng.uniform(0, [4, 2], (30, 2)), rng.integers(0, 3, 30)
    ref = random_centres_reference(X, y, 3, bounds=BOUNDS, draws=4, seed=7)
    lo, hi = np.array(BOUNDS[0]), np.array(BOUNDS[1])
    Z = (X - lo) / (hi - lo) * 2 - 1
    accs, ratios = [], []
    for C in ref.centres_unit:  # by hand: distances to each centre, the best of every cluster -> class permutation
        lab = np.array([np.argmin([np.sum((z - c) ** 2) for c in C]) for z in Z])
        accs.append(max(np.mean(np.array([p[c] for c in lab]) == y) for p in permutations(range(3))))
        ratios.append(sum(np.sum((z - C[c]) ** 2) for z, c in zip(Z, lab)) / np.sum((Z - Z.mean(0)) ** 2))
    assert ref.accuracy == pytest.approx(np.mean(accs)) and ref.accuracy_sd == pytest.approx(np.std(accs, ddof=1))
    assert ref.intra_cluster_variance == pytest.approx(np.mean(ratios))
    assert ref.intra_cluster_variance_sd == pytest.approx(np.std(ratios, ddof=1))


def test_random_centres_on_iris_score_well_above_one_class_in_three():
    split = train_test_split("iris", seed=0)
    ref = random_centres_reference(split.X_test, split.y_test, 3, bounds=split.dataset.bounds)
    assert ref.draws == 20 and ref.accuracy > 0.55 and ref.accuracy - 1 / 3 > 2 * ref.accuracy_sd


def test_dplloyd_at_the_smallest_epsilon_is_no_better_than_random_centres_and_a_large_one_is():
    res = run_learner("dplloyd", "iris", epsilon=0.001, seed=0, params={"neighbouring": "replace-one"})
    ref = res.extras["random_centres"]
    assert res.metrics["accuracy"] > 1 / 3 and ref.covers(res.metrics["accuracy"])  # 0.611 vs 0.633 ± 0.105
    good = run_learner("dplloyd", "iris", epsilon=10.0, seed=0, params={"neighbouring": "replace-one"})
    assert not good.extras["random_centres"].covers(good.metrics["accuracy"])  # 0.889


@pytest.mark.parametrize("kw, message", [
    (dict(k=0), "k must be"),
    (dict(y=[0, 1]), "y has 2 labels but X has 4 rows"),
    (dict(draws=1), "draws must be"),
    (dict(bounds=([1.0, 1.0], [0.0, 0.0])), "bounds"),
])
def test_random_centres_refuse_bad_input_naming_the_parameter(kw, message):
    args = dict(X=np.zeros((4, 2)), y=[0, 1, 0, 1], k=2, bounds=BOUNDS) | kw
    with pytest.raises(DPValueError, match=message):
        random_centres_reference(args.pop("X"), args.pop("y"), args.pop("k"), **args)
