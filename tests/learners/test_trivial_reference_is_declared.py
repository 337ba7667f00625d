"""The trivial references (the most common class, the training mean) are named once, in their declarations: the
pages' chance level, the sweep's trivial row and train's reference score ask :func:`trivial_learner`."""
from __future__ import annotations

import pytest

from dpcore.exceptions import DPValueError
from dpcore.learners import learners, trivial_learner
from dpcore.sweep.choices import sweepable


def test_each_task_has_one_declared_trivial_reference():
    declared = sorted(s.name for s in learners().values() if s.trivial)
    assert declared == ["majority", "mean"]
    assert (trivial_learner("classification"), trivial_learner("regression")) == ("majority", "mean")
    with pytest.raises(DPValueError, match="clustering"):
        trivial_learner("clustering")


def test_a_trivial_reference_is_not_offered_as_a_learner_to_sweep():
    offered = sweepable("classification", False, "epsilon") + sweepable("regression", False, "train_fraction")
    assert "majority" not in offered and "mean" not in offered and "logreg" not in offered  # epsilon: private only
    assert "logreg" in sweepable("classification", False, "train_fraction")
