"""Which private feature scaling suits each dataset, judged on validation rows (never the test rows).

The DP-ERM learners scale features by their declared public bounds, either linearly
(``preprocess="bounds"``) or on a log scale (``"log-bounds"``, which spreads positive,
skewed features such as sizes and areas). Neither uses a statistic of the rows, so both
are private; which is better depends on the data. This script scores both on a
held-out fifth of the TRAINING rows of several splits, through the registered learners
(the code path of the page and the CLI), and prints the mean validation accuracy per
dataset; :data:`dpcore.models.learners.PREPROCESS_BY_DATASET` records where the linear map wins.

    python bench/erm_preprocess_validation.py [--splits 5] [--epsilons 0.5 1 2 5]
"""
from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def validation_split(name: str, seed: int):
    """The training rows of split ``seed`` cut into four fifths (train) and a fixed random fifth (validation)."""
    from dpcore.datasets import Split, train_test_split

    sp = train_test_split(name, seed=seed)
    n = sp.X_train.shape[0]
    perm = np.random.default_rng(1000 + seed).permutation(n)
    n_val = int(math.ceil(n / 5))
    va, tr = perm[:n_val], perm[n_val:]
    return Split(sp.dataset, sp.X_train[tr], sp.y_train[tr], sp.X_train[va], sp.y_train[va], seed=seed)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 5.0])
    ap.add_argument("--datasets", nargs="+", default=["iris", "wine", "breast_cancer"])
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    from dpcore.learners import run_learner

    rows = []
    for name in a.datasets:
        for s in range(a.splits):
            split = validation_split(name, s)
            for pre in ("bounds", "log-bounds"):
                for learner in ("erm-objective", "erm-output"):
                    for eps in a.epsilons:
                        res = run_learner(learner, split, epsilon=eps, seed=s, params={"preprocess": pre})
                        rows.append({"dataset": name, "preprocess": pre, "learner": learner, "epsilon": eps,
                                     "split": s, "accuracy": res.metrics["accuracy"]})
                res = run_learner("logreg", split, seed=s, params={"preprocess": pre})
                rows.append({"dataset": name, "preprocess": pre, "learner": "logreg (non-private)", "epsilon": math.inf,
                             "split": s, "accuracy": res.metrics["accuracy"]})
    df = pd.DataFrame(rows)
    table = df.pivot_table(index=["dataset", "preprocess"], columns=["learner", "epsilon"], values="accuracy")
    private = df[df.learner != "logreg (non-private)"].groupby(["dataset", "preprocess"]).accuracy.mean()
    table[("private mean", "")] = private
    print(f"validation accuracy (held-out fifth of the training rows of {a.splits} splits; test rows unused)\n")
    with pd.option_context("display.width", 200, "display.float_format", "{:.3f}".format):
        print(table.to_string())
    print("\nbest private scaling per dataset:")
    for name, g in private.groupby(level=0):
        print(f"  {name}: {g.idxmax()[1]}  ({' vs '.join(f'{p} {v:.3f}' for (_, p), v in g.items())})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
