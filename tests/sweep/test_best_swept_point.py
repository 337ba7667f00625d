"""The Trade-off explorer's "Best swept" point, chosen in the core (dpcore.sweep.summary.best_swept), not the page."""
from __future__ import annotations

import pandas as pd
import pytest

from dpcore.sweep.summary import best_swept, summarize


def _summary(rows):
    return pd.DataFrame([{"role": "swept", "std": 0.0, **r} for r in rows])


def test_a_point_that_spent_far_more_than_its_axis_epsilon_is_passed_over_and_counted():
    # output perturbation at ε = 10 on the axis spent 4,500 (450 answers): the highest mean, and no best at ε = 10
    summ = _summary([{"learner": "dpsgd", "value": 1.0, "mean": 0.91, "epsilon_spent": 1.0},
                     {"learner": "dpsgd", "value": 10.0, "mean": 0.93, "epsilon_spent": 10.0},
                     {"learner": "op", "value": 1.0, "mean": 0.20, "epsilon_spent": 450.0},
                     {"learner": "op", "value": 10.0, "mean": 0.96, "epsilon_spent": 4500.0}])
    found = best_swept(summ, axis="epsilon", metric="accuracy")
    assert (found.point.learner, found.point.value) == ("dpsgd", 10.0)
    assert found.spent is None and found.left_out == 2


def test_when_every_point_overspends_the_best_is_kept_and_says_what_it_spent():
    summ = _summary([{"learner": "op", "value": 1.0, "mean": 0.20, "epsilon_spent": 450.0},
                     {"learner": "op", "value": 10.0, "mean": 0.96, "epsilon_spent": 4500.0}])
    found = best_swept(summ, axis="epsilon", metric="accuracy")
    assert found.point.value == 10.0 and found.spent == 4500.0 and found.left_out == 0


def test_a_calibration_just_under_its_target_or_a_float_above_it_is_not_overspending():
    summ = _summary([{"learner": "dpsgd", "value": 1.0, "mean": 0.95, "epsilon_spent": 1.0 + 1e-12},
                     {"learner": "dpsgd", "value": 2.0, "mean": 0.90, "epsilon_spent": 1.9999}])
    found = best_swept(summ, axis="epsilon", metric="accuracy")
    assert found.point.value == 1.0 and found.spent is None and found.left_out == 0


def test_a_point_that_spent_half_a_percent_more_than_its_epsilon_is_not_named_best_at_that_epsilon():
    # runs drawn at ε = 1 that spent 1.005 were named "Best swept: ε = 1", below what they spent
    summ = _summary([{"learner": "dpsgd", "value": 1.0, "mean": 0.95, "epsilon_spent": 1.005},
                     {"learner": "dpsgd", "value": 2.0, "mean": 0.90, "epsilon_spent": 1.9999}])
    found = best_swept(summ, axis="epsilon", metric="accuracy")
    assert found.point.value == 2.0 and found.spent is None and found.left_out == 1


def test_off_the_epsilon_axis_no_point_is_left_out_for_the_epsilon_it_spent():
    # a clip-norm sweep at ε 4: every point spends 4, far above its x (a clip norm of 0.1); that is no overspending
    summ = _summary([{"learner": "dpsgd", "value": 0.1, "mean": 0.80, "epsilon_spent": 4.0},
                     {"learner": "dpsgd", "value": 1.0, "mean": 0.90, "epsilon_spent": 4.0}])
    found = best_swept(summ, axis="clip_norm", metric="accuracy")
    assert found.point.value == 1.0 and found.spent is None and found.left_out == 0


def test_for_mse_the_lowest_mean_is_the_best_and_baselines_never_are():
    summ = pd.concat([_summary([{"learner": "fm", "value": 0.1, "mean": 9.0, "epsilon_spent": 0.1},
                                {"learner": "fm", "value": 1.0, "mean": 3.0, "epsilon_spent": 1.0}]),
                      pd.DataFrame([{"learner": "ols", "role": "baseline", "value": float("nan"), "mean": 1.0,
                                     "std": 0.0, "epsilon_spent": float("inf")}])], ignore_index=True)
    found = best_swept(summ, axis="epsilon", metric="mse")
    assert (found.point.learner, found.point.value) == ("fm", 1.0)


def test_points_within_the_seeds_spread_are_its_ties_and_equal_means_keep_the_first():
    table = pd.DataFrame({"learner": "dpsgd", "role": "swept", "value": [1.0, 1.0, 3.16, 3.16, 10.0, 10.0],
                          "seed": [0, 1] * 3, "accuracy": [0.90, 0.92, 0.905, 0.925, 0.70, 0.72],
                          "epsilon": [1.0, 1.0, 3.16, 3.16, 10.0, 10.0]})
    found = best_swept(summarize(table, "accuracy"), axis="epsilon", metric="accuracy")
    assert found.point.value == 3.16 and found.point["mean"] == pytest.approx(0.915)
    assert [r.value for r in found.ties] == [1.0]  # 0.91 is within the spread; 0.71 is not


def test_no_swept_point_with_a_mean_gives_no_best():
    summ = _summary([{"learner": "dpsgd", "value": 1.0, "mean": float("nan"), "epsilon_spent": 1.0}])
    assert best_swept(summ, axis="epsilon", metric="accuracy") is None
    assert best_swept(summ.iloc[:0], axis="epsilon", metric="accuracy") is None
