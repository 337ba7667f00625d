"""DPLloyd's knobs (Su et al. 2016) are its estimator's parameters: each reaches DPLloydKMeans under its own name,
shows the estimator's own default, and says what that default does."""
from __future__ import annotations

import inspect
import warnings

import numpy as np

from dpcore.learners import get_learner, run_learner
from dpcore.learners.knobs import Knob
from dpcore.models import learners as model_learners
from dpcore.models.kmeans import DPLloydKMeans

BOUNDS = (np.zeros(2), np.ones(2))


def test_every_dplloyd_knob_but_k_is_an_estimator_parameter_with_the_estimators_default():
    estimator = inspect.signature(DPLloydKMeans).parameters
    for knob in get_learner("dplloyd").knobs:
        if knob.name == "k":
            continue
        assert knob.name in estimator, knob.name
        if knob.default is not None:  # a knob without one leaves the estimator's own in force
            assert knob.default == estimator[knob.name].default, knob.name


def test_each_knob_given_reaches_the_estimator():
    given = {"iterations": 4, "init": "uniform", "count_fraction": 0.3, "l1_norm": 1.5, "init_fraction": 0.2,
             "neighbouring": "replace-one"}
    est = model_learners.kmeans_estimator("dplloyd", 3, epsilon=1.0, bounds=BOUNDS, seed=0, params=given)
    assert {key: getattr(est, key) for key in given} == given


def test_a_knob_added_to_dplloyd_reaches_the_estimator_with_no_other_edit(monkeypatch):
    # grid_size is a parameter of the estimator that no knob declares: declaring one is the only edit needed
    grid = Knob("grid_size", "int", default=3, low=1, high=20, privacy=True, label="Grid cells per dimension")
    monkeypatch.setattr(model_learners, "DPLLOYD_KNOBS", (*model_learners.DPLLOYD_KNOBS, grid))
    est = model_learners.kmeans_estimator("dplloyd", 3, epsilon=1.0, bounds=BOUNDS, seed=0,
                                          params={"grid_size": 5})
    assert est.grid_size == 5


def test_the_row_l1_bound_says_the_default_the_estimator_uses():
    knob = get_learner("dplloyd").knob("l1_norm")
    assert "default: half the number of features" in knob.help  # it said "default: none"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # iris's few rows: the run's own warning is not the point
        default = run_learner("dplloyd", "iris", epsilon=1.0, seed=0)
        half = run_learner("dplloyd", "iris", epsilon=1.0, seed=0, params={"l1_norm": 4 / 2})  # iris: 4 features
    assert default.extras["rows_clipped"] > 0  # the default clips rows: there is a bound
    np.testing.assert_array_equal(default.extras["centers"], half.extras["centers"])
    assert default.extras["rows_clipped"] == half.extras["rows_clipped"]



def test_the_rounds_knob_and_the_cluster_command_say_the_rounds_a_run_takes():
    from dpcore.cli import build_parser

    knob = get_learner("dplloyd").knob("iterations")
    assert "1 round after the noisy-grid start" in knob.help and "else 3 after" in knob.help  # it said "1 in 2-D"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = run_learner("dplloyd", "iris", epsilon=1.0, seed=0)  # 4 features: a grid start, though not 2-D
        blind = run_learner("dplloyd", "iris", epsilon=1.0, seed=0, params={"init": "uniform"})
    assert (grid.extras["init"], grid.extras["rounds"]) == ("grid", 1)
    assert blind.extras["rounds"] == 3
    cluster = next(a for a in build_parser("cluster")._actions if a.dest == "command").choices["cluster"]
    assert next(a.help for a in cluster._actions if a.dest == "iterations").endswith(knob.help)
