"""A network trained by train() that answers one class for every evaluation row says so: its accuracy is that class's
share, not skill (the registry's learners say it by the class's name, once)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch import nn

import dpcore
from dpcore.exceptions import SingleClassWarning
from dpcore.training import TrainConfig


def _rows(n=600, seed=0):
    g = np.random.default_rng(seed)
    X = g.uniform(-1, 1, (n, 2)).astype(np.float32)
    y = (X[:, 0] > 0.4).astype(np.int64)  # 30 % of class 1, learnable from the first feature
    return X, y


def _stuck(bias: float) -> nn.Module:
    net = nn.Linear(2, 2)
    with torch.no_grad():
        net.weight.zero_()
        net.bias.copy_(torch.tensor([bias, 0.0]))
    return net


def test_a_model_answering_one_class_for_every_evaluation_row_warns_and_keeps_the_warning():
    X, y = _rows()
    config = TrainConfig(epochs=1, target_epsilon=3.0, learning_rate=1e-6)  # too small a step to leave class 0
    with pytest.warns(SingleClassWarning, match=r"answers class 0 for every evaluation row: its accuracy 0\.\d+ is"):
        result = dpcore.train(X[:400], y[:400], config, X_test=X[400:], y_test=y[400:], model=_stuck(50.0))
    assert any("answers class 0 for every evaluation row" in w for w in result.warnings)


def test_a_model_that_answers_both_classes_is_not_warned_about():
    X, y = _rows()
    config = TrainConfig(epochs=5, target_epsilon=8.0, learning_rate=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SingleClassWarning)
        result = dpcore.train(X[:400], y[:400], config, X_test=X[400:], y_test=y[400:], model=_stuck(0.0))
    assert result.history["accuracy"].iloc[-1] > 0.8


def test_the_registry_learner_says_it_once_by_its_own_words():
    from dpcore.learners import run_learner

    X, y = _rows(n=400)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        run_learner("dpsgd", dpcore.as_dataset(X, y, name="stuck", bounds=(-1.0, 1.0)), epsilon=1.0, seed=0,
                    params={"epochs": 1, "learning_rate": 1e-9})
    assert not any(issubclass(w.category, SingleClassWarning) for w in said)
