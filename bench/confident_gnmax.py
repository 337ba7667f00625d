"""Confident-GNMax's threshold and check noise on every classification dataset, on validation rows (never the test
rows), beside GNMax with the same data-independent guarantee.

For each dataset of the registry, a quarter of the training rows of the seed-0 split is held out as validation rows
(``--splits`` different quarters); PATE runs with the app's defaults on the other rows, once with GNMax and once
with Confident-GNMax (Papernot et al. 2018, Algorithm 1) for each threshold T and check noise sigma1 (both as
shares of the teachers), all calibrated to the same epsilon. It prints the student's validation accuracy, how many
queries were answered, the share of their labels that are right, and the data-dependent epsilon released with
smooth sensitivity (Papernot et al. 2018, Section 4.2), beside the majority class.

Usage: python bench/confident_gnmax.py [--epsilon 2] [--splits 2] [--datasets digits,adult]
"""
from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, ".")
sys.path.insert(0, "bench")
from erm_regularization import validation_splits  # noqa: E402

from dpcore.datasets.registry import REGISTRY  # noqa: E402
from dpcore.exceptions import DPValueError  # noqa: E402
from dpcore.learners import run_learner  # noqa: E402

#: (threshold, check noise), as shares of the teachers; (0.8, 0.6) is the paper's MNIST setting (200, 150 of 250).
CANDIDATES = ((0.8, 0.6), (0.6, 0.6), (0.5, 0.5), (0.5, 0.3))


def one(split, eps: float, params: dict) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = run_learner("pate", split, epsilon=eps, seed=split.seed, params={"data_dependent": True, **params})
        except DPValueError as e:
            return {"accuracy": np.nan, "refused": str(e)[:60]}
    return {"accuracy": r.metrics["accuracy"], "label_accuracy": r.metrics["label_accuracy"],
            "answered": r.extras["answered"], "queries": r.extras["queries"],
            "released_epsilon": r.extras["epsilon_data_dependent_released"], "refused": ""}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epsilon", type=float, default=2.0)
    ap.add_argument("--splits", type=int, default=2)
    ap.add_argument("--datasets", default=",".join(n for n, d in REGISTRY.items() if d.task == "classification"))
    a = ap.parse_args()
    rows = []
    for name in a.datasets.split(","):
        for sp in validation_splits(name, a.splits):
            majority = float(np.mean(sp.y_test == np.bincount(sp.y_train).argmax()))
            rows.append({"dataset": name, "aggregator": "GNMax", "majority": majority,
                         **one(sp, a.epsilon, {"aggregator": "gnmax"})})
            for t, s1 in CANDIDATES:
                rows.append({"dataset": name, "aggregator": f"Confident T={t:g} σ1={s1:g}", "majority": majority,
                             **one(sp, a.epsilon, {"aggregator": "confident", "threshold": t,
                                                   "threshold_noise": s1})})
        print(f"  {name} done", file=sys.stderr, flush=True)
    t = pd.DataFrame(rows).groupby(["dataset", "aggregator"], sort=False).mean(numeric_only=True).reset_index()
    pd.set_option("display.width", 200)
    print(f"validation rows, epsilon = {a.epsilon:g} (data-independent guarantee for both aggregators)")
    print(t.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
