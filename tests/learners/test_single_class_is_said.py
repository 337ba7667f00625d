"""A model no better than the trivial predictor says so; it never passes for a model that learnt."""
from __future__ import annotations

import warnings

import pytest

from dpcore.exceptions import DPCoreWarning
from dpcore.learners import run_learner


def test_objective_perturbation_collapsed_on_adult_says_which_class():
    # Chaudhuri et al. 2011's objective perturbation at epsilon = 1 with Lambda = 0.03 (its default before the
    # rule in n and d) on UCI Adult: every test row gets '<=50K', whose share (0.751) is then the accuracy
    with pytest.warns(DPCoreWarning, match=r"predicts the single class '<=50K' for every test row: its accuracy "
                                           r"is that class's share of the test rows, not skill"):
        result = run_learner("erm-objective", "adult", epsilon=1.0, seed=0, params={"regularization": 0.03})
    assert result.extras["single_class"] == "<=50K"
    assert result.to_json_dict()["single_class"] == "<=50K"
    assert result.metrics["accuracy"] == pytest.approx(0.751, abs=1e-3)


def test_objective_perturbations_default_regularisation_tells_adults_incomes_apart():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        warnings.simplefilter("ignore", UserWarning)  # the privacy-leak notes of inferred bounds are not the point
        result = run_learner("erm-objective", "adult", epsilon=1.0, seed=0)
    assert "single_class" not in result.extras
    assert result.metrics["accuracy"] > 0.77


@pytest.mark.parametrize("learner", ["logreg", "majority"])
def test_a_model_that_tells_classes_apart_and_the_majority_baseline_stay_quiet(learner):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        result = run_learner(learner, "iris", seed=0)
    assert "single_class" not in result.extras
    assert "single_class" not in result.to_json_dict()


def test_a_regressor_worse_than_the_training_mean_says_so():
    # DP-SGD at epsilon = 0.1 for 2 steps on the 331 diabetes training rows: the fit has barely left its start
    with pytest.warns(DPCoreWarning, match="no smaller than predicting the mean of the training labels"):
        result = run_learner("dpsgd", "diabetes", epsilon=0.1, seed=0, params={"epochs": 2})
    assert result.extras["no_better_than_trivial"] is True
    assert result.to_json_dict()["no_better_than_trivial"] is True
    trivial = run_learner("mean", "diabetes", seed=0)
    assert result.metrics["mse"] >= trivial.metrics["mse"]


def test_dp_sgd_regression_defaults_beat_the_training_mean_at_epsilon_1():
    # the regression preset (a tight clip for squared-loss gradients, 100 full-batch steps); the classification
    # default it replaced scored R² -0.46 on validation rows, worse than the mean
    result = run_learner("dpsgd", "diabetes", epsilon=1.0, seed=0)
    assert "no_better_than_trivial" not in result.extras
    assert result.metrics["r2"] > 0.2


def test_clusters_no_better_than_random_centres_say_so():
    # DPLloyd at epsilon = 1 on breast cancer: its matched accuracy is within the spread of centres drawn at random
    # inside the declared bounds, which use no data (a clustering's trivial reference, not the most common class)
    with pytest.warns(DPCoreWarning, match=r"no more accurate on the test rows than centres drawn at random inside "
                                           r"the declared bounds, which use no data \(within their spread\)"):
        result = run_learner("dplloyd", "breast_cancer", epsilon=1.0, seed=0)
    assert result.extras["no_better_than_trivial"] is True
    reference = result.extras["random_centres"]
    assert result.metrics["accuracy"] <= reference.accuracy + reference.accuracy_sd
    clear = run_learner("lloyd", "breast_cancer", seed=0)  # the non-private clustering stands above them
    assert "no_better_than_trivial" not in clear.extras


def test_the_warning_names_the_method_as_a_reader_knows_it_and_its_advice_reads_as_a_sentence():
    with pytest.warns(DPCoreWarning) as caught:
        run_learner("dplloyd", "breast_cancer", epsilon=1.0, seed=0)
    message = next(str(w.message) for w in caught if "no more accurate" in str(w.message))
    assert message.startswith("k-means, DPLloyd (Su et al.) is no more accurate")  # its title, not "dplloyd"
    # its own reason (the noise on each of 30 coordinate sums, beside 427 training rows), not the general "other
    # settings" advice
    assert "each of its 30 coordinate sums" in message and "with 427 training rows shared" in message
    assert message.endswith("Try a larger epsilon, more rows, or fewer features.")
    assert "epochs" not in message  # DPLloyd has rounds, not epochs: no advice about knobs it does not have


def test_on_balanced_classes_the_warning_names_no_class_so_a_sweep_says_it_once():
    # iris's training rows are 38/38/38: which class "leads" changes with the split, and naming it made a sweep over
    # seeds show one box per class
    with pytest.warns(DPCoreWarning) as caught:
        run_learner("input-perturbation", "iris", epsilon=0.01, seed=0)
    message = next(str(w.message) for w in caught if "no more accurate" in str(w.message))
    assert "than centres drawn at random inside the declared bounds" in message
    assert not any(name in message for name in ("setosa", "versicolor", "virginica"))



def test_a_tiny_share_of_a_small_file_still_holds_two_classes_to_train_on():
    import warnings as _w

    from dpcore.datasets import load_csv, train_test_split
    from dpcore.learners import subsample_train

    rows = "\n".join(f"{i},{i % 7},{int(i % 10 == 0)}" for i in range(40))  # 4 positives in 40 rows
    with _w.catch_warnings():
        _w.simplefilter("ignore")
        ds = load_csv("a,b,y\n" + rows, label_column="y", bounds="*=0:40")
    split = train_test_split(ds, seed=0)
    for seed in range(30):
        sub = subsample_train(split, 0.1, seed)  # 3 of 30 training rows
        assert len(sub.y_train) == 3 and len(set(sub.y_train)) == 2


def test_a_dp_erm_model_no_better_than_the_most_common_class_names_the_feature_scaling_as_a_lever():
    linear = r'linear scaling \(Feature scaling "Linear scale \.\.\.", --set preprocess=bounds\)'
    with pytest.warns(DPCoreWarning, match=linear):
        result = run_learner("erm-objective", "breast_cancer", epsilon=0.01, seed=0)  # log scale by default here
    assert result.extras["no_better_than_trivial"] is True and "when_trivial" not in result.extras
    # with the linear scaling (iris's default) the advice points the other way, at the log scale
    log = r'the log scale \(Feature scaling "Log scale \.\.\.", --set preprocess=log-bounds\)'
    with pytest.warns(DPCoreWarning, match=log):
        run_learner("erm-objective", "breast_cancer", epsilon=0.01, seed=0, params={"preprocess": "bounds"})


def test_a_dp_erm_model_on_features_that_all_can_be_negative_is_not_sent_to_the_linear_scaling_it_already_uses():
    """The log scale maps a feature whose declared range reaches below 0 linearly: where every feature does, the
    advice to try the linear scaling would give the same model again."""
    import numpy as np

    from dpcore.datasets import load_csv

    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    rows = "\n".join(f"{a:.3f},{b:.3f},{c:.3f},{int(a + b > 2)}" for a, b, c in X)  # 1 row in 13 positive
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        signed = load_csv("dt,z,pl,y\n" + rows, label_column="y", bounds="*=-4:4")
        mixed = load_csv("dt,z,pl,y\n" + rows, label_column="y", bounds="dt=-4:4,*=0:4")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_learner("erm-objective", signed, epsilon=0.1, seed=0)
    said = " ".join(str(w.message) for w in caught if issubclass(w.category, DPCoreWarning))
    assert result.extras.get("no_better_than_trivial") or result.extras.get("single_class")
    assert "every feature here can be negative, so each is already scaled linearly" in said
    assert "can do better than the log scale" not in said
    # one feature that cannot be negative is log-scaled: the advice to try the linear scaling stands
    with pytest.warns(DPCoreWarning, match="can do better than the log scale used here"):
        run_learner("erm-objective", mixed, epsilon=0.1, seed=0)


def test_a_private_regressor_no_better_than_the_mean_points_to_a_narrower_label_range_which_helps():
    """A few extreme labels (1 % of rows, 50 to 200 away) stretch a label range read from the rows; the noise
    follows that range, so the advice names the label's range, and a declared narrower one beats the mean."""
    import numpy as np

    from dpcore.datasets import load_csv

    rng = np.random.default_rng(6)
    X = rng.normal(size=(3000, 4))
    y = 3 * X[:, 0] - 2 * X[:, 1] + X[:, 2] + rng.normal(size=3000)
    far = rng.choice(3000, 30, replace=False)
    y[far] += rng.choice([-1, 1], 30) * rng.uniform(50, 200, 30)
    text = "a,b,c,d,target\n" + "".join(f"{r[0]:.3f},{r[1]:.3f},{r[2]:.3f},{r[3]:.3f},{t:.3f}\n" for r, t in zip(X, y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stretched = load_csv(text, label_column="target", bounds="*=-4:4")  # the label's range read from the rows
        narrow = load_csv(text, label_column="target", bounds="*=-4:4,target=-15:15")
    with pytest.warns(DPCoreWarning, match="declare a narrower one for the label"):
        result = run_learner("functional-mechanism", stretched, epsilon=1.0, seed=0)
    assert result.extras["no_better_than_trivial"] is True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        better = run_learner("functional-mechanism", narrow, epsilon=1.0, seed=0)
    assert "no_better_than_trivial" not in better.extras and better.metrics["r2"] > 0.3
    assert not [w for w in caught if "narrower one for the label" in str(w.message)]
