"""``sweep`` prints its means in balanced accuracy where one class is most rows, as the Trade-off explorer draws
them: in accuracy, DP-SGD answering by declared class shares printed 0.74 below the majority class's 0.87 while it
found the rare classes."""
from __future__ import annotations

import numpy as np
import pandas as pd


def _table(tmp_path, rare: float) -> str:
    rng = np.random.default_rng(4)
    n = 600
    y = rng.random(n) < rare
    X = rng.normal(size=(n, 2)) + 1.5 * y[:, None]
    path = tmp_path / "t.csv"
    pd.DataFrame(X, columns=["a", "b"]).assign(flag=np.where(y, "yes", "no")).to_csv(path, index=False)
    return str(path)


def test_on_a_90_10_label_the_means_are_of_balanced_accuracy_and_say_so(cli, tmp_path):
    out = tmp_path / "runs.csv"
    done = cli("sweep", "--data", _table(tmp_path, 0.1), "--label", "flag", "--bounds", "*=-5:7", "--class-shares",
               "no=0.9,yes=0.1", "--algorithms", "dpsgd", "--values", "1", "--seeds", "1", "--seed", "0",
               "--jobs", "1", "--no-cache", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "the means below are of balanced accuracy" in done.stderr
    runs = pd.read_csv(out)
    trivial = [line for line in done.stdout.splitlines() if line.split()[:2] == ["majority", "trivial"]]
    assert trivial and float(trivial[0].split()[3]) == 0.5  # one class answered: 1/k, not its share
    private = runs[runs.role == "swept"].iloc[0]
    assert f"{private.balanced_accuracy:.4f}".rstrip("0") in done.stdout


def test_on_a_balanced_label_the_means_stay_in_accuracy(cli, tmp_path):
    done = cli("sweep", "--data", _table(tmp_path, 0.5), "--label", "flag", "--bounds", "*=-5:7",
               "--algorithms", "dpsgd", "--values", "1", "--seeds", "1", "--seed", "0", "--jobs", "1", "--no-cache",
               "--out", tmp_path / "runs.csv")
    assert done.returncode == 0, done.stderr
    assert "balanced accuracy" not in done.stderr
