"""Label DP's mechanisms and the networks behind every learner take the number of classes k from the dataset's
declared classes, never from the private labels (which would make k, and with it the mechanism, depend on them: a
class held by one record appears or vanishes with it).

k-ary randomized response keeps a label with probability e^eps / (e^eps + k - 1) and else answers one of the k - 1
other classes (Ghazi, Golowich, Kumar, Manurangsi & Zhang 2021, RR_eps); Laplace label DP noises the k coordinates of
the one-hot label (Dwork et al. 2006; L1 sensitivity 2). Here the training rows of iris hold only two of its three
declared classes: k must still be 3 for both mechanisms, the noisy labels may be the absent class, and every
network answers with 3 scores."""
from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

from dpcore.datasets import train_test_split
from dpcore.exceptions import DPCoreWarning
from dpcore.training.learners import laplace_labels, run_dpsgd, run_label_dp_laplace, run_label_dp_rr


def _split_without_its_last_class():
    split = train_test_split("iris", seed=0)
    seen = split.y_train != 2
    out = dataclasses.replace(split, X_train=split.X_train[seen], y_train=split.y_train[seen])
    assert out.n_classes == 3 and set(np.unique(out.y_train)) == {0, 1}
    return out


def test_randomized_response_on_labels_keeps_each_with_the_probability_of_the_declared_classes():
    split = _split_without_its_last_class()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        res = run_label_dp_rr(split, epsilon=1.0, delta=0.0, seed=0, params={"epochs": 1})
    assert res.extras["p_keep"] == pytest.approx(math.e / (math.e + 2))  # k = 3, not the 2 classes seen
    assert res.test_outputs.values.shape[1] == 3


def test_laplace_label_dp_noises_one_coordinate_per_declared_class():
    split = _split_without_its_last_class()
    noisy = laplace_labels(split, epsilon=1.0, rng=0)
    # the absent class's coordinate is noised too and wins for some rows (about a fifth at epsilon 1)
    assert 0 < np.count_nonzero(noisy == 2) < noisy.size


@pytest.mark.parametrize("runner", [run_dpsgd, run_label_dp_laplace])
def test_every_network_answers_with_one_score_per_declared_class(runner):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        res = runner(_split_without_its_last_class(), epsilon=1.0, delta=1e-5, seed=0, params={"epochs": 1})
    assert res.test_outputs.values.shape[1] == 3
