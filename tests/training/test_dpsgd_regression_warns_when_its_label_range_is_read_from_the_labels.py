"""DP-SGD on a regression label trains on the labels scaled into [0, 1] by their range and scales every prediction
back by it. With a declared range that costs nothing; without one the range is the private labels' own minimum and
maximum, which the predictions then carry (a prediction of the scaled model's 0 or 1 is a private label), and which
no epsilon covers: the run warns it as a leak, as label DP's Laplace labels and the regression learners do."""
from __future__ import annotations

import dataclasses
import warnings

import pytest

from dpcore.datasets import train_test_split
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.training.learners import run_dpsgd

PARAMS = {"epochs": 2}


def test_a_dpsgd_regression_on_labels_of_no_declared_range_warns_it_as_a_leak():
    split = train_test_split("diabetes", seed=0)
    undeclared = dataclasses.replace(split, dataset=dataclasses.replace(split.dataset, label_range=None))
    with pytest.warns(PrivacyLeakWarning, match="label range is not declared"):
        run_dpsgd(undeclared, epsilon=1.0, delta=1e-5, seed=0, params=PARAMS)


def test_a_dpsgd_regression_on_a_declared_label_range_reads_no_label_for_it():
    split = train_test_split("diabetes", seed=0)
    assert split.dataset.label_range is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        run_dpsgd(split, epsilon=1.0, delta=1e-5, seed=0, params=PARAMS)
