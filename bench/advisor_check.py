"""Does the ε advisor's answer hold on rows it never saw? Prints recommendation vs held-out result.

For a few realistic tables made here (symmetric and skewed columns, balanced and imbalanced labels, 200 to 20,000
rows), a quarter of the rows is set aside. The advisor (:func:`dpcore.decision.advisor.advise`) sees the other three
quarters as an upload would (bounds declared from how the columns are generated, not read from the rows) and recommends
an ε. The recommended learner is then trained at that ε on all those rows, five times with fresh noise, and scored on
the held-out rows, beside the non-private counterpart trained the same way. The advisor promises that a fresh run meets
the need in 90 % of cases; the "held-out" columns say how many of the five did.

With ``--defaults [DATASET ...]`` it checks the page's default need (:func:`dpcore.decision.advisor.default_need`)
the same way on the registry's classification sets (three quarters of each set's rows for the advisor, at its
defaults; the quarter held out for the check), beside what the same sweep answers to a need of 2 points.

Usage: python bench/advisor_check.py [--quick | --defaults [DATASET ...]]   (timings are not the point here)
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import sys
import time
import warnings

sys.path.insert(0, ".")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpcore.datasets import Split, dataset_names, load_csv, load_dataset  # noqa: E402
from dpcore.decision.advisor import Need, advice_config, advise, default_need, judge, parse_need  # noqa: E402
from dpcore.learners import run_learner  # noqa: E402
from dpcore.sweep import SweepConfig, run_sweep  # noqa: E402


def _table(kind: str, n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, str, str, str]:
    """(frame, label column, task, declared bounds) of one synthetic table."""
    if kind == "symmetric-balanced":
        X = rng.normal(0, 1, size=(n, 5))
        y = (X @ np.array([1.0, -0.8, 0.6, 0, 0]) + rng.normal(0, 0.8, n) > 0).astype(int)
        return pd.DataFrame(X, columns=[f"m{i}" for i in range(5)]).assign(label=y), "label", "classification", \
            "*=-4:4"
    if kind == "skewed-imbalanced":
        income = rng.lognormal(10.5, 0.6, n)
        calls = rng.poisson(3, n).astype(float)
        tenure = rng.integers(0, 120, n).astype(float)
        age = rng.integers(18, 90, n).astype(float)
        logit = -2.4 + 0.9 * (calls - 3) - 0.05 * (tenure - 60) - 1.0 * (np.log(income) - 10.5)
        y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
        frame = pd.DataFrame({"income": income.round(), "support_calls": calls, "tenure_months": tenure, "age": age,
                              "churned": y})
        return frame, "churned", "classification", \
            "income=0:500000,support_calls=0:20,tenure_months=0:120,age=18:100"
    if kind == "regression":
        X = rng.normal(0, 1, size=(n, 4))
        y = np.clip(X @ np.array([2.0, -1.0, 0.5, 0.0]) + rng.normal(0, 1.0, n), -10, 10)
        return pd.DataFrame(X, columns=[f"x{i}" for i in range(4)]).assign(target=y), "target", "regression", \
            "*=-4:4,target=-10:10"
    raise ValueError(kind)


CASES = [  # (table, rows, need, learners or None for the page's default)
    ("symmetric-balanced", 200, "accuracy>=0.7", None),
    ("skewed-imbalanced", 2000, "within 3 points", None),
    ("regression", 1000, "r2>=0.6", None),
    ("skewed-imbalanced", 20000, "within 2 points", ["erm-objective"]),
]


def _load(frame: pd.DataFrame, label: str, task: str, bounds: str, name: str):
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_csv(buf.getvalue(), label_column=label, task=task, name=name, bounds=bounds)


def _held_out_check(advice, need, owner, test, task: str) -> dict:
    """The advice's columns: the recommended learner trained at its ε on all of ``owner`` five times with fresh noise
    and scored on ``test`` (rows the advisor never saw), beside its non-private counterpart and the trivial answer."""
    r = advice.recommended
    if r is None:
        return {"advice": "none in range", "held-out": advice.instead[0][:110] + "…"}
    cfg = SweepConfig(dataset=owner, learners=(r["learner"],), values=(r["epsilon"],))
    base = cfg.baseline_for(r["learner"])
    split = Split(dataset=owner, X_train=owner.X, y_train=owner.y, X_test=test.X, y_test=test.y, seed=0)
    metric = need.metric
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        private = [run_learner(r["learner"], split, epsilon=r["epsilon"], delta=1e-5, seed=100 + s)
                   .metrics[metric] for s in range(5)]
        reference = run_learner(base, split, seed=100).metrics[metric] if base else float("nan")
        trivial = run_learner("majority" if task == "classification" else "mean", split, seed=100).metrics[metric]
    target = need.target(reference) if need.kind == "within" else need.amount
    ok = sum(need.meets(v, target) for v in private)
    return {
        "advice": f"ε={r['epsilon']:.3g} {r['learner']}: mean {r['mean']:.3f}, bound {r['bound']:.3f} "
                  f"(target {r['target']:.3f})",
        "held-out": f"{metric} {np.mean(private):.3f} (min {min(private):.3f}) vs target {target:.3f} "
                    f"[non-private {reference:.3f}, trivial {trivial:.3f}]: {ok}/5 meet",
    }


def _defaults(names: list[str]) -> int:
    """The page's default need on each registry set the advisor offers, on three quarters of its rows (the advisor's
    own sweep at its defaults: ε 0.1-10, 7 values, 5 seeds, the Trade-off explorer's learners), checked on the held-out
    quarter; beside it, what the same sweep answers to the earlier default, within 2 points."""
    rows = []
    for name in names:
        t0 = time.perf_counter()
        ds = load_dataset(name)
        held = np.random.default_rng(20261129).random(ds.n_samples) < 0.25
        # the set's own name, so its tuned DP-SGD preset applies as on the page; not the registry's object, so nothing
        # of it is cached
        owner = dataclasses.replace(ds, X=ds.X[~held], y=ds.y[~held])
        test = dataclasses.replace(ds, X=ds.X[held], y=ds.y[held])
        need = default_need(ds.task, owner.y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_sweep(advice_config(owner), n_jobs=2, use_cache=False)
            advice = judge(result, need)
            tighter = judge(result, Need("within", need.metric, 0.02))
        line = {"dataset": f"{name} ({int((~held).sum())} rows)", "default need": need.describe()}
        line.update(_held_out_check(advice, need, owner, test, ds.task))
        line["within 2 points"] = (f"ε={tighter.recommended['epsilon']:.3g} {tighter.recommended['learner']}"
                                   if tighter.recommended is not None else "none in range")
        line["seconds"] = f"{time.perf_counter() - t0:.0f}"
        rows.append(line)
        print(" | ".join(str(v) for v in line.values()), flush=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False))
    met = sum(r["advice"] != "none in range" for r in rows)
    tight = sum(r["within 2 points"] != "none in range" for r in rows)
    print(f"\nthe default need answered on {met} of {len(rows)} sets; within 2 points on {tight} of {len(rows)}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the first two tables only")
    ap.add_argument("--defaults", nargs="*", metavar="DATASET",
                    help="instead: the page's default need on registry sets (all the classification sets if none "
                         "named), on three quarters of their rows, checked on the held-out quarter")
    args = ap.parse_args()
    if args.defaults is not None:
        return _defaults(args.defaults or dataset_names("classification"))
    rng = np.random.default_rng(20261129)
    rows = []
    for kind, n, need_text, learners in CASES[:2] if args.quick else CASES:
        t0 = time.perf_counter()
        frame, label, task, bounds = _table(kind, n, rng)
        held = rng.random(n) < 0.25
        owner = _load(frame[~held], label, task, bounds, f"{kind}-{n}")
        test = _load(frame[held], label, task, bounds, f"{kind}-{n}-heldout")
        need = parse_need(need_text, task)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            advice = advise(owner, need, epsilon_range=(0.1, 10), points=5, seeds=3, learners=learners,
                            attack=False, n_jobs=2)
        line = {"table": f"{kind}, {n} rows", "need": need.describe(), "advice": "none in range", "held-out": ""}
        line.update(_held_out_check(advice, need, owner, test, task))
        line["seconds"] = f"{time.perf_counter() - t0:.0f}"
        rows.append(line)
        print(" | ".join(str(v) for v in line.values()), flush=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
