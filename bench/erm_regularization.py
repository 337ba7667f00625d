"""How DP-ERM's regularisation Lambda should follow n, d and epsilon, measured on validation rows.

For every classification dataset of the registry, the training rows of the seed's split are split
again (a quarter held out for validation, ``--splits`` times); output and objective perturbation
(Chaudhuri, Monteleoni & Sarwate 2011, Algorithms 1 and 2, logistic loss, linear kernel) are fitted
on the rest over a grid of Lambda at several epsilon, and scored on the validation quarter. The test
rows are never read. It prints the best Lambda per cell and the validation accuracy of each candidate
rule for ``regularization="auto"`` beside the best of the grid and the majority share, so a rule
chosen on one dataset is seen on all of them.

Usage: python bench/erm_regularization.py [--splits 3] [--epsilons 0.5,1,2,5] [--datasets iris,adult]
       [--jobs 2] [--out table.csv]
       python bench/erm_regularization.py --nonprivate   # the non-private model's Λ, beside the former 1e-3
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

sys.path.insert(0, ".")

from dpcore.datasets import Split, train_test_split  # noqa: E402
from dpcore.datasets.registry import REGISTRY  # noqa: E402
from dpcore.learners import run_learner  # noqa: E402
from dpcore.models.erm import NONPRIVATE_AUTO_LAMBDA, auto_regularization  # noqa: E402

GRID = [10.0 ** e for e in np.arange(-5.0, 1.01, 0.5)]
LEARNERS = {"objective": "erm-objective", "output": "erm-output"}


def validation_splits(name: str, splits: int, seed: int = 0) -> list[Split]:
    """``splits`` fit/validation splits of the training rows of ``name``'s seed-``seed`` split."""
    split = train_test_split(name, seed=seed)
    out = []
    for s in range(splits):
        rng = np.random.default_rng(1000 + s)
        idx = rng.permutation(split.X_train.shape[0])
        n_val = max(1, split.X_train.shape[0] // 4)
        val, fit = idx[:n_val], idx[n_val:]
        out.append(Split(dataset=split.dataset, X_train=split.X_train[fit], y_train=split.y_train[fit],
                         X_test=split.X_train[val], y_test=split.y_train[val], seed=s, test_size=0.25))
    return out


def one(perturbation: str, split: Split, eps: float, lam: float) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_learner(LEARNERS[perturbation], split, epsilon=eps, seed=split.seed,
                        params={"regularization": float(lam)})
    return {"dataset": split.dataset.name, "perturbation": perturbation, "epsilon": eps, "lam": lam,
            "split": split.seed, "accuracy": r.metrics["accuracy"],
            "single_class": "single_class" in r.extras}


def shape_of(split: Split) -> tuple[int, int, int]:
    """n rows fitted, d features seen by the model (with the intercept), and the number of binary models."""
    k = int(np.unique(split.y_train).size)
    return split.X_train.shape[0], split.X_train.shape[1] + 1, (1 if k == 2 else k)


NONPRIVATE_GRID = (1e-3, 1e-4, 1e-5, 1e-6)


def nonprivate_table(datasets: list[str], splits: int) -> pd.DataFrame:
    """Validation accuracy of the non-private logistic regression (same features and loss as DP-ERM) for each
    Lambda of :data:`NONPRIVATE_GRID`, mean over ``splits`` validation quarters of each dataset's training rows."""
    rows = []
    for name in datasets:
        sps = validation_splits(name, splits)
        row = {"dataset": name, "n": sps[0].X_train.shape[0]}
        for lam in NONPRIVATE_GRID:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row[f"{lam:g}"] = float(np.mean([
                    run_learner("logreg", sp, epsilon=1.0, seed=sp.seed, params={"regularization": lam}
                                ).metrics["accuracy"] for sp in sps]))
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--epsilons", default="0.5,1,2,5")
    ap.add_argument("--datasets", default=",".join(n for n, i in REGISTRY.items() if i.task == "classification"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=None, help="CSV of every run")
    ap.add_argument("--from-csv", default=None, help="re-read the runs of an earlier --out instead of running")
    ap.add_argument("--nonprivate", action="store_true",
                    help="only the non-private model's Lambda (its 'auto' default, NONPRIVATE_AUTO_LAMBDA)")
    a = ap.parse_args()
    if a.nonprivate:
        table = nonprivate_table(a.datasets.split(","), a.splits)
        print(f"# non-private logistic regression, validation accuracy ({a.splits} splits); the default is "
              f"Lambda = {NONPRIVATE_AUTO_LAMBDA:g}, formerly 1e-3")
        print(table.round(3).to_string(index=False))
        print("mean  " + "  ".join(f"{c}={table[c].mean():.3f}" for c in table.columns[2:]))
        return 0
    eps_list = [float(e) for e in a.epsilons.split(",")]
    t0 = time.time()
    tasks, shapes = [], {}
    for name in a.datasets.split(","):
        for sp in validation_splits(name, a.splits):
            shapes[name] = shape_of(sp)
            tasks += [(p, sp, e, lam) for p in LEARNERS for e in eps_list for lam in GRID]
    if a.from_csv:
        df = pd.read_csv(a.from_csv)
    else:
        df = pd.DataFrame(Parallel(n_jobs=a.jobs, verbose=0)(delayed(one)(*t) for t in tasks))
    if a.out:
        df.to_csv(a.out, index=False)
    cell = df.groupby(["dataset", "perturbation", "epsilon", "lam"], as_index=False)["accuracy"].mean()
    best = cell.loc[cell.groupby(["dataset", "perturbation", "epsilon"])["accuracy"].idxmax()]
    print(f"# best Lambda per cell ({a.splits} validation splits each; {time.time() - t0:.0f} s)")
    for _, r in best.iterrows():
        n, d, m = shapes[r.dataset]
        print(f"{r.dataset:14s} {r.perturbation:9s} eps={r.epsilon:<4g} n={n:<6d} d={d:<4d} models={m:<2d} "
              f"best Lambda={r.lam:.1e} acc={r.accuracy:.3f}  n*eps_model*Lambda/d={n * r.epsilon / m * r.lam / d:.3g}")
    # each rule's Lambda, snapped to the nearest grid point (half a decade apart), scored on the same cells
    grid = np.array(GRID)
    rules = {"best of the grid (hindsight)": None,
             "auto: C sqrt(d)/(n eps)": lambda p, n, d, e: auto_regularization(p, n=n, d=d, epsilon=e),
             "former: 0.03/eps, 0.2/eps": lambda p, n, d, e: (0.03 if p == "objective" else 0.2) / e}
    rows = []
    for (ds, p, e), g in cell.groupby(["dataset", "perturbation", "epsilon"]):
        n, d, m = shapes[ds]
        row = {"dataset": ds, "perturbation": p}
        for label, rule in rules.items():
            if rule is None:
                row[label] = g["accuracy"].max()
                continue
            lam = grid[np.argmin(np.abs(np.log(grid) - np.log(rule(p, n, d, e / m))))]
            row[label] = float(g.loc[np.isclose(g["lam"], lam), "accuracy"].iloc[0])
        rows.append(row)
    table = pd.DataFrame(rows).groupby(["perturbation", "dataset"]).mean()
    print("\n# mean validation accuracy over epsilon, per rule")
    print(table.round(3).to_string())
    print(pd.DataFrame(rows).groupby("perturbation").mean(numeric_only=True).round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
