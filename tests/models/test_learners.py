import json
import subprocess
import sys

import pytest

from dpcore.learners import get_learner, run_learner
from dpcore.exceptions import DPValueError

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


def test_cluster_cli_json():
    out = subprocess.run([sys.executable, "-m", "dpcore", "cluster", "--dataset", "iris", "--algorithm", "dplloyd",
                          "--k", "3", "--epsilon", "1", "--seed", "0", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"accuracy", "epsilon", "delta", "seconds", "intra_cluster_variance"} <= set(d)
    bad = subprocess.run([sys.executable, "-m", "dpcore", "cluster", "--dataset", "iris", "--algorithm", "lloyd",
                          "--k", "1000"], capture_output=True, text=True)
    assert bad.returncode == 2 and "n_clusters" in bad.stderr and "Traceback" not in bad.stderr


def test_train_cli_erm_svm_rff():
    out = subprocess.run([sys.executable, "-m", "dpcore", "train", "--algorithm", "erm-objective", "--model", "svm",
                          "--kernel", "rff", "--dataset", "breast_cancer", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "accuracy" in json.loads(out.stdout.strip().splitlines()[-1])
