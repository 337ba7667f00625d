import json

import numpy as np
import pytest

from dpcore.exceptions import DPValueError
from dpcore.learners import get_learner, run_learner

NAMES = ["erm-output", "erm-objective", "logreg", "functional-mechanism", "linreg", "dplloyd",
         "input-perturbation", "lloyd"]


@pytest.mark.parametrize("name", NAMES)
def test_registered(name):
    assert get_learner(name).name == name


@pytest.mark.filterwarnings("ignore")
def test_runs_and_metrics():
    r = run_learner("dplloyd", "iris", epsilon=1.0, seed=0, params={"k": 3})
    assert 0 <= r.metrics["accuracy"] <= 1 and "intra_cluster_variance" in r.metrics
    assert r.epsilon == pytest.approx(1.0)
    r = run_learner("erm-objective", "breast_cancer", epsilon=1.0, seed=0, params={"model": "svm", "kernel": "rff"})
    assert r.metrics["accuracy"] > 0.5
    r = run_learner("functional-mechanism", "diabetes", epsilon=1.0, seed=0)
    assert "r2" in r.metrics
    assert run_learner("linreg", "diabetes", seed=0).metrics["r2"] > 0.3
    with pytest.raises(DPValueError):
        run_learner("dplloyd", "iris", epsilon=0.0)


def test_cluster_cli_json(cli):
    out = cli("cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--k", "3", "--epsilon", "1", "--seed", "0",
              "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"accuracy", "epsilon", "delta", "seconds", "intra_cluster_variance"} <= set(d)
    bad = cli("cluster", "--dataset", "iris", "--algorithm", "lloyd", "--k", "1000")
    assert bad.returncode == 2 and "n_clusters" in bad.stderr and "Traceback" not in bad.stderr
    zero = cli("cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--k", "0")
    assert zero.returncode == 2 and zero.stderr.strip() == "error: k must be a whole number from 1 to 1000, got 0"


def test_train_cli_erm_svm_rff(cli):
    out = cli("train", "--algorithm", "erm-objective", "--model", "svm", "--kernel", "rff", "--dataset",
              "breast_cancer", "--json")
    assert out.returncode == 0, out.stderr
    assert "accuracy" in json.loads(out.stdout.strip().splitlines()[-1])


def test_log_bounds_map_is_public_and_rowwise():
    import numpy as np

    from dpcore.models._utils import log_box_to_unit

    lo, hi = np.array([0.0, 1.0]), np.array([10.0, 5.0])
    X = np.array([[0.0, 1.0], [10.0, 5.0], [1.0, 2.0], [3.0, 4.0]])
    Z = log_box_to_unit(X, lo, hi, offset=0.1)
    assert np.allclose(Z[0], -1) and np.allclose(Z[1], 1)
    # independent formula: log(x - lo + s) affinely mapped, s = 0.1 (hi - lo)
    s = 0.1 * (hi - lo)
    t = np.log(X[2] - lo + s)
    assert np.allclose(Z[2], -1 + 2 * (t - np.log(s)) / (np.log(hi - lo + s) - np.log(s)))
    # row-wise: a row's image does not depend on the other rows (no statistic of the data)
    assert np.allclose(log_box_to_unit(X[2:3], lo, hi), Z[2:3])
    # monotone, and a large offset approaches the linear map of the box
    assert np.all(np.diff(log_box_to_unit(np.linspace(0, 10, 50)[:, None], lo[:1], hi[:1])[:, 0]) > 0)
    lin = (2 * X - (hi + lo)) / (hi - lo)
    assert np.allclose(log_box_to_unit(X, lo, hi, offset=1e6), lin, atol=1e-4)


def test_a_feature_that_can_be_negative_is_scaled_linearly_by_the_default_log_map():
    import warnings

    import numpy as np
    import pandas as pd

    from dpcore.learners import run_learner
    from dpcore.models._utils import box_to_unit, log_box_to_unit

    lo, hi = np.array([-5.0, 0.0]), np.array([7.0, 10.0])
    X = np.array([[-5.0, 0.0], [7.0, 10.0], [0.0, 1.0], [1.5, 4.0]])
    Z = log_box_to_unit(X, lo, hi)
    assert np.allclose(Z[:, 0], box_to_unit(X, lo, hi)[:, 0])  # declared range below 0: linear
    assert np.allclose(Z[:, 1], log_box_to_unit(X[:, 1:], lo[1:], hi[1:])[:, 0])  # a size: log, as before
    assert not np.allclose(Z[:, 1], box_to_unit(X, lo, hi)[:, 1])
    # four symmetric features and a 90/10 label: under the log map objective perturbation answered the common class
    # for every row at ε = 10; scaled linearly it finds most of the rare class
    rng = np.random.default_rng(3)
    y = (rng.random(3000) < 0.1).astype(int)
    data = pd.DataFrame(rng.normal(size=(3000, 4)) + 1.5 * y[:, None], columns=list("abcd")).assign(label=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_learner("erm-objective", data, "label", bounds={"*": (-5, 7)}, epsilon=10.0, seed=0)
    assert res.metrics["rare_class_recall"] > 0.5 and res.metrics["balanced_accuracy"] > 0.75
    assert "single_class" not in res.extras


def test_erm_default_pipeline_is_private_and_standardize_warns():
    import warnings

    from dpcore.datasets import train_test_split
    from dpcore.exceptions import PrivacyLeakWarning
    from dpcore.models.learners import DEFAULT_PREPROCESS, erm_features

    assert DEFAULT_PREPROCESS == "log-bounds"
    split = train_test_split("breast_cancer", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        r = run_learner("erm-objective", split, epsilon=1.0, seed=0)
        Xtr, _, norm = erm_features(split, "log-bounds")
    assert r.epsilon == pytest.approx(1.0) and r.metrics["accuracy"] > 0.8
    assert norm == 1.0 and Xtr.min() >= -1 and Xtr.max() <= 1
    with pytest.warns(PrivacyLeakWarning, match="standardize"):
        run_learner("erm-objective", split, epsilon=1.0, seed=0, params={"preprocess": "standardize"})
    with pytest.raises(DPValueError, match="preprocess"):
        run_learner("erm-objective", split, epsilon=1.0, seed=0, params={"preprocess": "nope"})


def test_log_bounds_warns_and_clips_training_rows_outside_the_declared_bounds():
    import dataclasses

    import numpy as np

    from dpcore.datasets import train_test_split
    from dpcore.exceptions import DPCoreWarning
    from dpcore.models.learners import erm_features

    split = train_test_split("breast_cancer", seed=0)
    X = np.array(split.X_train, dtype=float)
    X[0, 3] = 10 * split.dataset.bounds[1][3]  # far above the declared upper bound of 'mean area'
    bad = dataclasses.replace(split, X_train=X)
    with pytest.warns(DPCoreWarning, match="outside the declared bounds"):
        Xtr, _, _ = erm_features(bad, "log-bounds")
    assert Xtr[0, 3] == 1.0


def test_iris_defaults_to_the_linear_bounds_map_chosen_on_validation_rows():
    from dpcore.datasets import train_test_split
    from dpcore.models.learners import default_preprocess

    assert default_preprocess("iris") == "bounds" and default_preprocess("wine") == "log-bounds"
    split = train_test_split("iris", seed=0)
    default = run_learner("erm-objective", split, epsilon=2.0, seed=0)
    linear = run_learner("erm-objective", split, epsilon=2.0, seed=0, params={"preprocess": "bounds"})
    log = run_learner("erm-objective", split, epsilon=2.0, seed=0, params={"preprocess": "log-bounds"})
    assert np.array_equal(default.extras["y_pred"], linear.extras["y_pred"])
    assert default.metrics == linear.metrics and default.metrics != log.metrics


def test_true_false_parameters_reject_other_strings():
    from dpcore.datasets import train_test_split

    split = train_test_split("breast_cancer", seed=0)
    on = run_learner("erm-objective", split, epsilon=0.2, seed=0, params={"fit_intercept": True})
    off = run_learner("erm-objective", split, epsilon=0.2, seed=0, params={"fit_intercept": "no"})
    assert not np.array_equal(on.extras["y_pred"], off.extras["y_pred"])  # "no" really turns it off
    same = run_learner("erm-objective", split, epsilon=0.2, seed=0, params={"fit_intercept": False})
    assert np.array_equal(same.extras["y_pred"], off.extras["y_pred"])
    with pytest.raises(DPValueError, match="fit_intercept must be true or false, got 'maybe'"):
        run_learner("erm-objective", split, epsilon=1.0, seed=0, params={"fit_intercept": "maybe"})
    with pytest.raises(DPValueError, match="tune must be true or false"):
        run_learner("erm-output", split, epsilon=1.0, seed=0, params={"tune": 2})
