"""DP-ERM released with the solver's distance to the exact minimiser covered, beside the bare release, one run.

    python bench/erm_solver_bound.py [--datasets iris,adult] [--seeds 3] [--splits 2]

Chaudhuri et al. (2011)'s guarantees are for the exact minimiser of each objective. dpcore's private fits run the
solver until the gradient norm is certified at most ``SOLVER_GRADIENT_BOUND`` and cover the distance that leaves
(Iyengar et al. 2019, approximate minima perturbation, with pure-epsilon noise): output perturbation adds
2 gamma / Lambda to its sensitivity; objective perturbation spends ``SOLVER_EPSILON_SHARE`` of epsilon on an output
noise of sensitivity 2 gamma / (Lambda + Delta). The reference is the bare release the theorems do not cover: the
same seeds, Algorithm 1 or 2 at the whole epsilon on whatever point L-BFGS stops at.

For every classification dataset of the registry, objective (logistic and Huber SVM) and output perturbation at
epsilon 0.5, 1 and 2, it prints the mean accuracy on validation rows (a quarter of the training rows, never the test
rows) over the splits and seeds for both, their difference, the largest certified gradient norm of the covered fits,
and the seconds each took.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, ".")
sys.path.insert(0, "bench")

from erm_regularization import validation_splits  # noqa: E402

import dpcore.models.erm as erm  # noqa: E402
from dpcore.datasets.registry import REGISTRY  # noqa: E402
from dpcore.learners import run_learner  # noqa: E402
from dpcore.mechanisms import L2LaplaceVector  # noqa: E402

CASES = [("erm-objective", "logreg"), ("erm-objective", "svm"), ("erm-output", "logreg")]
EPSILONS = (0.5, 1.0, 2.0)


def _bare_fit_binary(self, Z, y, eps, rng, out_rng):
    """Chaudhuri et al.'s Algorithms 1 and 2 on the point L-BFGS stops at, nothing covering its distance to the
    minimiser: the release before the bound (the reference column)."""
    n, d = Z.shape
    lam = self._lambda(eps, n, d)
    if self.perturbation == "output":
        f, _ = erm._solve(Z, y, model=self.model_, huber_h=self.huber_h, lam=lam)
        return L2LaplaceVector(epsilon=eps, sensitivity=2.0 / (n * lam)).randomise(f, rng=rng), {}
    c = erm.loss_curvature(self.model_, self.huber_h)
    eps_p, extra = erm.objective_perturbation_params(n=n, regularization=lam, epsilon=eps, c=c)
    b = L2LaplaceVector(epsilon=eps_p, sensitivity=2.0).noise((d,), rng=rng)
    f, _ = erm._solve(Z, y, model=self.model_, huber_h=self.huber_h, lam=lam, b=b, extra=extra)
    return f, {"epsilon_prime": eps_p, "extra": extra}


def _cell(learner, model, splits, eps, seeds) -> tuple[float, float, float]:
    """Mean validation accuracy, the largest certified gradient norm and the seconds of one cell."""
    accs, norms, t0 = [], [], time.perf_counter()
    for split in splits:
        for seed in range(seeds):
            r = run_learner(learner, split, epsilon=eps, seed=seed, params={"model": model})
            accs.append(r.metrics["accuracy"])
            norms.extend(np.atleast_1d(r.extras.get("solver_gradient_norms", [np.nan])))
    return float(np.mean(accs)), float(np.nanmax(norms)) if np.isfinite(norms).any() else np.nan, \
        time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [n for n, info in REGISTRY.items() if info.task == "classification"]
    ap.add_argument("--datasets", default=",".join(names))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--splits", type=int, default=2)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"gamma = {erm.SOLVER_GRADIENT_BOUND:g}, objective perturbation's share for it = "
          f"{erm.SOLVER_EPSILON_SHARE:g}; validation rows, {a.splits} splits x {a.seeds} seeds per cell\n")
    print(f"{'dataset':14s} {'learner':14s} {'model':6s} {'eps':>4s} {'bare':>7s} {'covered':>8s} {'diff':>7s} "
          f"{'max |grad|':>10s} {'s bare':>7s} {'s cov.':>7s}")
    diffs = []
    real = erm.PrivateERMClassifier._fit_binary
    for ds in a.datasets.split(","):
        splits = validation_splits(ds, a.splits)
        for learner, model in CASES:
            for eps in EPSILONS:
                erm.PrivateERMClassifier._fit_binary = _bare_fit_binary
                try:
                    bare, _, s_bare = _cell(learner, model, splits, eps, a.seeds)
                finally:
                    erm.PrivateERMClassifier._fit_binary = real
                covered, grad, s_cov = _cell(learner, model, splits, eps, a.seeds)
                diffs.append(covered - bare)
                print(f"{ds:14s} {learner:14s} {model:6s} {eps:4g} {bare:7.4f} {covered:8.4f} {covered - bare:+7.4f} "
                      f"{grad:10.2e} {s_bare:7.2f} {s_cov:7.2f}", flush=True)
    print(f"\n{len(diffs)} cells: mean difference {np.mean(diffs):+.4f}, largest {max(diffs, key=abs):+.4f}, "
          f"{sum(abs(x) < 1e-12 for x in diffs)} identical")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
