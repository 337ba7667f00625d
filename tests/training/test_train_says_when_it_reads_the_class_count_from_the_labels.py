"""train() with a built-in model and no n_outputs sizes the model by the labels' largest class + 1: a private run
says so (a record of the last class changes the released model's width), and stays silent where the width is the
caller's (n_outputs given, or a model of its own) or the run is not private."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch import nn

import dpcore
from dpcore.exceptions import PrivacyLeakWarning

RNG = np.random.default_rng(0)
X = RNG.normal(size=(60, 4)).astype(np.float32)
y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 1).astype(int)  # classes 0, 1, 2
CONFIG = dpcore.TrainConfig(model="linear", epochs=1, batch_size=20, noise_multiplier=1.0, delta=1e-5)


def _leaks(**kwargs) -> list:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        dpcore.train(X, y, kwargs.pop("config", CONFIG), **kwargs)
    return [w for w in seen if issubclass(w.category, PrivacyLeakWarning)]


def test_a_private_run_sized_by_its_labels_says_so():
    said = _leaks()
    assert len(said) == 1 and "n_outputs" in str(said[0].message) and "(3)" in str(said[0].message)


@pytest.mark.parametrize("kwargs", [
    {"n_outputs": 4},  # the classes the label can hold, declared
    {"model": nn.Linear(4, 3)},  # the caller's own width
    {"config": CONFIG.replace(private=False, noise_multiplier=None, target_epsilon=None)},
])
def test_no_warning_where_the_width_is_the_callers_or_nothing_is_private(kwargs):
    assert _leaks(**kwargs) == []
