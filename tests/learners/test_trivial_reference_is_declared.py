"""The trivial references (the most common class, the training mean) are named once, in their declarations: the
pages' chance level, the sweep's trivial row and train's reference score ask :func:`trivial_learner`."""
from __future__ import annotations

import pytest

from dpcore.exceptions import DPValueError
from dpcore.learners import learners, trivial_learner
from dpcore.sweep.choices import sweepable


def test_each_task_has_one_declared_trivial_reference_and_clusterings_their_own():
    declared = sorted(s.name for s in learners().values() if s.trivial)
    assert declared == ["majority", "mean", "random-centres"]
    assert (trivial_learner("classification"), trivial_learner("regression")) == ("majority", "mean")
    # a clustering is measured against centres that never looked at the data, not one cluster for every row
    assert trivial_learner("classification", family="clustering") == "random-centres"
    assert trivial_learner("regression", family="clustering") == "mean"  # no clustering of its own: the task's
    with pytest.raises(DPValueError, match="clustering"):
        trivial_learner("clustering")


def test_a_clustering_sweeps_trivial_line_is_random_centres_scored_as_the_page_scores_them():
    from dpcore.datasets import train_test_split
    from dpcore.models.kmeans import random_centres_reference
    from dpcore.sweep.config import SweepConfig
    from dpcore.sweep.engine import run_sweep

    cfg = SweepConfig(dataset="iris", learners=["dplloyd"], values=[1.0], seeds=2)
    assert cfg.baselines() == ("lloyd", "random-centres")
    table = run_sweep(cfg, n_jobs=1, use_cache=False).table
    rows = [row for _, row in table[table.role == "trivial"].iterrows()]
    for row in rows:  # independently: 20 draws of 3 centres in iris's declared bounds, on that seed's test rows
        split = train_test_split("iris", seed=int(row["seed"]))
        ref = random_centres_reference(split.X_test, split.y_test, 3, bounds=split.dataset.bounds)
        assert row["learner"] == "random-centres" and row["accuracy"] == pytest.approx(ref.accuracy)
        assert row["epsilon"] == 0.0  # it reads no training row
    assert len(rows) == 2
    mixed = SweepConfig(dataset="iris", learners=["dplloyd", "erm-objective"], values=[1.0], seeds=1)
    assert mixed.baselines()[-1] == "majority"  # a sweep of several families keeps the task's line


def test_a_trivial_reference_is_not_offered_as_a_learner_to_sweep():
    offered = sweepable("classification", False, "epsilon") + sweepable("regression", False, "train_fraction")
    assert "majority" not in offered and "mean" not in offered and "logreg" not in offered  # epsilon: private only
    assert "logreg" in sweepable("classification", False, "train_fraction")
