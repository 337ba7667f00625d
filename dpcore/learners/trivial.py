"""Trivial baselines: the majority class and the mean predictor (no data beyond labels, non-private)."""
from __future__ import annotations

import numpy as np

from .base import LearnerSpec, RunResult, TestOutputs
from .metrics import score


def _majority(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    classes, counts = np.unique(split.y_train, return_counts=True)
    pred = np.full(split.y_test.shape, classes[np.argmax(counts)])
    return RunResult("majority", split.dataset.name, split.task, score(split, pred), float("inf"), 0.0,
                     test_outputs=TestOutputs.from_labels(pred, split.n_classes))


def _mean(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    pred = np.full(split.y_test.shape, float(np.mean(split.y_train)))
    return RunResult("mean", split.dataset.name, split.task, score(split, pred), float("inf"), 0.0,
                     test_outputs=TestOutputs(pred, "value"))


def _register() -> None:
    from . import register

    register(LearnerSpec("majority", "Majority class (trivial)", ("classification",), False, _majority,
                         uses_delta=False, trivial=True,
                         description="Always predicts the most frequent training class."))
    register(LearnerSpec("mean", "Mean predictor (trivial)", ("regression",), False, _mean,
                         uses_delta=False, trivial=True, description="Always predicts the mean training label."))


_register()
