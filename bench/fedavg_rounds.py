"""DP-FedAvg's rounds against the budget, on validation rows of every classification dataset.

Every round of DP-FedAvg spends budget: at a fixed user-level epsilon, more rounds mean more noise in each. For
each dataset (a quarter of the seed-0 training rows held out as validation rows, 2 different quarters), each
epsilon and each number of rounds, the learner runs with its other defaults; the table shows validation accuracy,
the rule's choice (``dpcore.federated.learners.default_rounds``: 25 per unit of epsilon, 20 to 100; 100 below
100 clients) and what it
gets beside the best number of rounds of the grid.

With ``--knob NAME --values a,b,c`` the grid is over that knob instead (rounds from the rule), to see whether
its best value moves with epsilon (clip_norm, client_fraction, server_learning_rate, learning_rate).

Usage: python bench/fedavg_rounds.py [--datasets mnist5k,digits] [--epsilons 0.5,1,2,4] [--rounds 20,50,100]
       python bench/fedavg_rounds.py --knob clip_norm --values 0.3,1,3
"""
from __future__ import annotations

import argparse
import sys
import warnings

import pandas as pd

sys.path.insert(0, ".")
sys.path.insert(0, "bench")
from erm_regularization import validation_splits  # noqa: E402

from dpcore.datasets.registry import REGISTRY  # noqa: E402
from dpcore.federated.learners import default_clients, default_rounds  # noqa: E402
from dpcore.learners import run_learner  # noqa: E402


def knob_grid(datasets: list[str], eps_list: list[float], knob: str, values: list[float], splits: int) -> int:
    """Validation accuracy of DP-FedAvg for each value of ``knob`` at each epsilon (other knobs at their defaults)."""
    rows = []
    for name in datasets:
        for sp in validation_splits(name, splits):
            for eps in eps_list:
                for v in values:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = run_learner("dp-fedavg", sp, epsilon=eps, seed=sp.seed, params={knob: v})
                    rows.append({"dataset": name, "epsilon": eps, knob: v, "accuracy": r.metrics["accuracy"]})
        print(f"  {name} done", file=sys.stderr, flush=True)
    t = pd.DataFrame(rows).pivot_table(index=["dataset", "epsilon"], columns=knob, values="accuracy", sort=False)
    t["best"] = t.idxmax(axis=1)
    pd.set_option("display.width", 220)
    print(f"# DP-FedAvg validation accuracy by {knob} (columns) and epsilon; rounds from the rule")
    print(t.round(3).to_string())
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=",".join(n for n, d in REGISTRY.items() if d.task == "classification"))
    ap.add_argument("--epsilons", default="0.5,1,2,4")
    ap.add_argument("--rounds", default="20,50,100")
    ap.add_argument("--splits", type=int, default=2)
    ap.add_argument("--knob", default=None, help="grid over this knob instead of the rounds")
    ap.add_argument("--values", default=None, help="the knob's values, comma-separated")
    a = ap.parse_args()
    eps_list = [float(e) for e in a.epsilons.split(",")]
    if a.knob:
        return knob_grid(a.datasets.split(","), eps_list, a.knob, [float(v) for v in a.values.split(",")], a.splits)
    rows = []
    for name in a.datasets.split(","):
        for sp in validation_splits(name, a.splits):
            for eps in eps_list:
                rule = default_rounds(eps, default_clients(sp))
                for rounds in sorted({int(r) for r in a.rounds.split(",")} | {rule}):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = run_learner("dp-fedavg", sp, epsilon=eps, seed=sp.seed, params={"rounds": rounds})
                    rows.append({"dataset": name, "epsilon": eps, "rounds": rounds, "rule": rule,
                                 "accuracy": r.metrics["accuracy"]})
        print(f"  {name} done", file=sys.stderr, flush=True)
    t = pd.DataFrame(rows).groupby(["dataset", "epsilon", "rounds"], sort=False).agg(
        accuracy=("accuracy", "mean"), rule=("rule", "first")).reset_index()
    out = []
    for (name, eps), g in t.groupby(["dataset", "epsilon"], sort=False):
        best = g.loc[g.accuracy.idxmax()]
        rule = int(g["rule"].iloc[0])
        rule_acc = g[g.rounds == rule].accuracy.item()
        out.append({"dataset": name, "epsilon": eps,
                    **{f"{int(r)} rounds": v for r, v in zip(g.rounds, g.accuracy)},
                    "rule": rule, "rule accuracy": rule_acc, "best rounds": int(best.rounds),
                    "best accuracy": best.accuracy})
    pd.set_option("display.width", 220)
    print(pd.DataFrame(out).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
