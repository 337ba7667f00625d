"""Does the Attack page's default run tell the story it is for? Each number beside its target (issue 46, item 1).

At the page's defaults (MNIST 5k, ε = 1, δ = 1e-5, mislabelled canaries inserted into the full training set): the
private learner (DP-SGD with the Train page's preset) and its non-private twin (a wide network fit to its training
rows), attacked on the same canaries; mean of the seeds. Then the Train page's own run at the same ε (the accuracy
the private model must match), the page's ε ladder (white-box gradient canaries, seed 0), and the former default
(the loss attack on models trained on half a pool of 1,000) for comparison.

Targets: non-private proven ε (95 %) >= 2 and >= 20 % of the inserted canaries caught at 1 % false alarms; private
proven ε <= 1, caught at 1 % false alarms within the range of a guessing attack (the mean of the seeds against
the range of a guess's mean: the threshold moves with the non-members' scores, so it is wider than a binomial
interval), test accuracy within 3 points of the Train
page's; the default run (both models and their attacks) within 30 s; the ladder's proven ε never above its claim and
growing with it. Timings depend on the machine's load: say whether it was shared.

Run: python bench/attack_story.py [--seeds 3] [--no-ladder] [--no-before]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore.audit.roc import chance_tpr_interval  # noqa: E402
from dpcore.audit.run import LADDER_EPSILONS, epsilon_ladder, run_audit  # noqa: E402
from dpcore.defaults import DELTA, EPSILON  # noqa: E402
from dpcore.learners import run_learner  # noqa: E402
from dpcore.runtime.serving import default_run_threads, default_workers, run_threads  # noqa: E402

DATASET = "mnist5k"


def _row(name: str, value: str, target: str, ok: bool | None) -> None:
    mark = "" if ok is None else ("ok" if ok else "MISSED")
    print(f"  {name:<58} {value:>22}   {target:<14} {mark}")


def story(seeds: int) -> None:
    print(f"1. The default run: {DATASET}, ε = {EPSILON:g}, δ = {DELTA:g}, mislabelled canaries in the full training "
          f"set, {seeds} seed(s)")
    runs = []
    for seed in range(seeds):
        t0 = time.perf_counter()
        private = run_audit("dpsgd", DATASET, epsilon=EPSILON, delta=DELTA, seed=seed)
        leaky = run_audit("non-private", DATASET, epsilon=EPSILON, delta=DELTA, seed=seed)
        seconds = time.perf_counter() - t0
        train_page = run_learner("dpsgd", DATASET, epsilon=EPSILON, delta=DELTA, seed=seed).metrics["accuracy"]
        runs.append((private, leaky, seconds, train_page))
        p, q = private.result, leaky.result
        print(f"   seed {seed}: private ε proven {p.epsilon_lower_bound:.2f}, caught {p.tpr_at_fpr['0.01']:.1%} "
              f"{_interval(p)}, acc {private.accuracy:.3f} (Train page {train_page:.3f}); non-private ε proven "
              f"{q.epsilon_lower_bound:.2f}, caught {q.tpr_at_fpr['0.01']:.1%} {_interval(q)}, acc "
              f"{leaky.accuracy:.3f}, AUC {q.auc:.3f}; {p.n_members + p.n_nonmembers} canaries; {seconds:.1f} s")
    mean = lambda f: float(np.mean([f(r) for r in runs]))  # noqa: E731
    print(f"\n  {'quantity (mean of the seeds)':<58} {'ours':>22}   {'target':<14}")
    v = mean(lambda r: r[1].result.epsilon_lower_bound)
    _row("non-private: ε proven (95%)", f"{v:.2f}", ">= 2.0", v >= 2.0)
    v = mean(lambda r: r[1].result.tpr_at_fpr["0.01"])
    _row("non-private: canaries caught at 1% false alarms", f"{v:.1%}", ">= 20%", v >= 0.20)
    v = mean(lambda r: r[0].result.epsilon_lower_bound)
    worst = max(r[0].result.epsilon_lower_bound for r in runs)
    _row("private (ε = 1): ε proven (95%), worst seed", f"{v:.2f} (worst {worst:.2f})", "<= 1", worst <= 1.0)
    v = mean(lambda r: r[0].result.tpr_at_fpr["0.01"])
    first = runs[0][0].result
    lo, hi = chance_tpr_interval(first.n_members, first.n_nonmembers, 0.01, repeats=len(runs))
    alone = sum(bool(r[0].result.within_chance("0.01")) for r in runs)
    _row(f"private: caught at 1% false alarms; a guess's mean over {len(runs)} runs", f"{v:.1%}",
         f"{lo:.1%} - {hi:.1%}", lo <= v <= hi)
    _row("  seeds within a guess's range for one run (95%)", f"{alone} of {len(runs)}", "", None)
    _row("  the most ε = 1 allows at 1% false alarms: e * 1% + δ", f"{math.e * 0.01 + DELTA:.1%}", "", None)
    ours, page = mean(lambda r: r[0].accuracy), mean(lambda r: r[3])
    _row("private: test accuracy (750 test rows) / the Train page's", f"{ours:.3f} / {page:.3f}", "within 0.03",
         abs(ours - page) <= 0.03)
    v = mean(lambda r: r[1].accuracy)
    _row("non-private network: test accuracy", f"{v:.3f}", "", None)
    v = mean(lambda r: r[2])
    _row("default run, both models and their attacks: seconds", f"{v:.1f}", "<= 30", v <= 30)


def _interval(result) -> str:
    iv = result.tpr_interval("0.01")
    return "" if iv is None else f"[{iv[0]:.1%}, {iv[1]:.1%}]"


def ladder() -> None:
    print(f"\n2. The ε ladder (DP-SGD, white-box gradient canaries, seed 0): {', '.join(map(str, LADDER_EPSILONS))}")
    t0 = time.perf_counter()
    rungs = epsilon_ladder("dpsgd", DATASET, delta=DELTA, seed=0)
    print(f"  {'ε claimed':>10} {'ε proven':>9} {'caught at 1% FPR':>17} {'95% interval':>18} {'AUC':>6} {'acc':>6}")
    proven = []
    for eps, a in rungs:
        r = a.result
        iv = r.tpr_interval("0.01")
        proven.append(r.epsilon_lower_bound)
        print(f"  {eps:>10g} {r.epsilon_lower_bound:>9.2f} {r.tpr_at_fpr['0.01']:>17.1%} "
              f"{'' if iv is None else f'{iv[0]:.1%} - {iv[1]:.1%}':>18} {r.auc:>6.3f} {a.accuracy or math.nan:>6.3f}")
    below = all(p <= e for (e, _), p in zip(rungs, proven) if math.isfinite(e))
    rises = all(b >= a - 0.1 for a, b in zip(proven, proven[1:]))
    print(f"  never above its claim: {'ok' if below else 'MISSED'}; grows with the claim (within 0.1): "
          f"{'ok' if rises else 'MISSED'}; {time.perf_counter() - t0:.1f} s")


def before() -> None:
    print("\n3. Before: the former default (loss attack on models trained on half a pool of 1,000), seed 0")
    for name in ("dpsgd", "non-private"):
        a = run_audit(name, DATASET, epsilon=EPSILON, delta=DELTA, attack="loss", pool_size=1000, seed=0)
        r = a.result
        print(f"  {name:<12} ε proven {r.epsilon_lower_bound:.3f}, AUC {r.auc:.3f}, caught at 1% FPR "
              f"{r.tpr_at_fpr['0.01']:.1%}, accuracy on unseen records {a.target_accuracy:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--no-ladder", action="store_true")
    parser.add_argument("--no-before", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    # the threads a run gets on the app's server (and the command line): the page's numbers and timings
    with run_threads(default_run_threads(default_workers())) as threads:
        print(f"(torch and BLAS threads per run: {threads}, as the server's workers)")
        story(args.seeds)
        if not args.no_ladder:
            ladder()
        if not args.no_before:
            before()


if __name__ == "__main__":
    main()
