"""Declared class shares on an imbalanced label: balanced accuracy and the rarest class's recall, before and after.

The table (dpcore.datasets.shares.example_rare_class_table): 3,000 rows, five N(0, 1) features, a label
'status' drawn from a multinomial logistic model (ok 88.5 %, fraud 7.0 %, review 4.6 %), bounds '*=-5:5' declared.
Each learner runs on seeds 0-2 at each epsilon, once answering argmax p(y|x) and once argmax p(y|x) / share with
the shares declared as a published rate would give them ('fraud=0.07,review=0.05,ok=0.88'; Elkan 2001; Saerens,
Latinne & Decaestecker 2002). The rule is post-processing: the runs (their epsilon, noise and models) are the same.

    python bench/class_shares.py [--epsilons 1,10] [--seeds 3] [--learners dpsgd,non-private,label-dp-rr]
"""
from __future__ import annotations

import argparse
import sys
import warnings

sys.path.insert(0, ".")

import numpy as np  # noqa: E402

from dpcore.datasets import as_dataset  # noqa: E402
from dpcore.datasets.shares import EXAMPLE_SHARES as SHARES  # noqa: E402
from dpcore.datasets.shares import example_rare_class_table as imbalanced_table  # noqa: E402
from dpcore.learners import get_learner, run_learner  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epsilons", default="1,10")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--learners", default="dpsgd,non-private")
    ap.add_argument("--shares", default=SHARES)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    plain = as_dataset(imbalanced_table(), "status", bounds="*=-5:5")
    declared = plain.with_class_shares(a.shares)
    print(f"{'learner':<14}{'eps':>6}  {'balanced acc: argmax -> shares':>32}  {'rare recall: argmax -> shares':>31}")
    for name in a.learners.split(","):
        private = get_learner(name).private
        for eps in [float(e) for e in a.epsilons.split(",")] if private else [float("inf")]:
            cells = []
            for ds in (plain, declared):
                runs = [run_learner(name, ds, epsilon=eps if private else None, seed=s) for s in range(a.seeds)]
                cells.append((np.mean([r.metrics["balanced_accuracy"] for r in runs]),
                              np.mean([r.metrics["rare_class_recall"] for r in runs])))
            (b0, r0), (b1, r1) = cells
            print(f"{name:<14}{eps:>6g}  {b0:>20.3f} -> {b1:.3f}  {r0:>20.3f} -> {r1:.3f}")


if __name__ == "__main__":
    main()
