"""Diabetes R^2 at eps = 1: the functional mechanism, the ways around it, and Gaussian SSP, side by side.

Issue 4 asks for test R^2 >= 0.3 at eps = 1 on diabetes (332 training rows, 10 features).
This script runs, on the same splits, the non-private least squares (all features, and
the best two and one), the functional mechanism as shipped, and three routes tried to
close the gap: a stronger post-processing ridge, private feature selection (exponential
mechanism, then the functional mechanism on the chosen features; also with scores clipped at documented
sd, the best of 64 such settings, chosen with hindsight), and a tighter box
built from the dataset's documented standardisation (each column centred, sum of squares
1, so sd = 1/sqrt(442); a public box of +-k sd clips the tails). An "oracle" row gives
the functional mechanism the two best features for free: no private method that first
has to find them can beat it (for a pure-eps, Laplace route). The last rows are Gaussian
sufficient-statistics perturbation (SSP, Wang 2018; ``dpcore.models.SSPRegressor``), with its
fixed noise-sized ridge (the app's) and with AdaSSP's adaptive ridge: (eps, delta = 1e-5)-DP for a
record added or removed, a weaker guarantee than the pure-eps rows, and L2 sensitivities instead
of L1. Mean test R^2 (and its 10th percentile) over ``--splits`` splits x ``--draws`` noise draws.

    python bench/diabetes_regression_options.py [--splits 20] [--draws 2]
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0, 5.0, 10.0)
BEST_TWO, BEST_ONE = [2, 8], [2]  # bmi, s5: the first variables LARS picks (Efron et al. 2004); hindsight, not private
SD = 1.0 / np.sqrt(442.0)  # documented: every column has sum of squares 1 over the 442 rows


def _unit(split):
    from dpcore.models._utils import box_to_unit

    lo, hi = split.dataset.bounds
    ylo, yhi = split.dataset.label_range
    Xu = box_to_unit(np.clip(split.X_train, lo, hi), lo, hi)
    yu = box_to_unit(split.y_train.reshape(-1, 1), np.array([ylo]), np.array([yhi])).ravel()
    return Xu, yu


def private_top_k(split, k: int, eps_select: float, eps_centre: float, rng, clip: tuple[float, float] | None = None
                  ) -> list[int]:
    """k features by the exponential mechanism (peeling, eps_select / k each) on |sum (y - c_y) x_j|.

    c_y is a private mean of y (Laplace, sensitivity 2 in [-1, 1]); with it fixed, one record's term
    (y - c_y) x_j lies in +-(1 + |c_y|), so each score moves by at most 2 (1 + |c_y|) under replace-one;
    scores are divided by that, giving sensitivity 1.

    ``clip = (tx, ty)`` scores tighter clipped terms instead: x_j clipped to +-tx documented sd (centred at
    the documented mean 0) and y - c_y to +-ty times the label range, each then scaled to [-1, 1], so one
    record's term lies in [-1, 1] and a score moves by at most 2 (again divided out). The clip costs a
    little signal in the tails and makes the scores about 3x less noisy than in the unit box.
    """
    Xu, yu = _unit(split)
    n = yu.size
    c_y = float(np.clip((yu.sum() + rng.laplace(0.0, 2.0 / eps_centre)) / n, -1.0, 1.0))
    if clip is None:
        score = np.abs(((yu - c_y)[:, None] * Xu).sum(0)) / (2.0 * (1.0 + abs(c_y)))
    else:
        tx, ty = clip
        xs = np.clip(split.X_train / (tx * SD), -1.0, 1.0)
        ys = np.clip((yu - c_y) / (2.0 * ty), -1.0, 1.0)  # yu spans the range in 2 units
        score = np.abs((ys[:, None] * xs).sum(0)) / 2.0
    chosen: list[int] = []
    for _ in range(k):
        u = np.where(np.isin(np.arange(score.size), chosen), -np.inf, score)
        chosen.append(int(np.argmax(eps_select / k * u / 2.0 + rng.gumbel(size=u.size))))  # Gumbel-max = exp. mech.
    return chosen


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--draws", type=int, default=2)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    from sklearn.linear_model import LinearRegression

    from dpcore.datasets import train_test_split
    from dpcore.models import FunctionalMechanismRegressor, SSPRegressor

    def ssp(split, eps, seed, **kw):
        est = SSPRegressor(epsilon=eps, delta=1e-5, bounds_X=split.dataset.bounds,
                           bounds_y=split.dataset.label_range, random_state=seed, **kw)
        return est.fit(split.X_train, split.y_train).score(split.X_test, split.y_test)

    def fm(split, eps, seed, cols=None, bounds=None, **kw):
        cols = list(range(split.X_train.shape[1])) if cols is None else cols
        lo, hi = bounds if bounds is not None else split.dataset.bounds
        est = FunctionalMechanismRegressor(epsilon=eps, bounds_X=(lo[cols], hi[cols]),
                                           bounds_y=split.dataset.label_range, random_state=seed, **kw)
        return est.fit(split.X_train[:, cols], split.y_train).score(split.X_test[:, cols], split.y_test)

    def selected(split, eps, seed, k):
        rng = np.random.default_rng(10_000 + seed)
        eps_select, eps_centre = 0.2 * eps, 0.1 * eps  # the rest goes to the functional mechanism
        cols = private_top_k(split, k, eps_select, eps_centre, rng)
        return fm(split, eps - eps_select - eps_centre, seed, cols=cols)

    def selected_tight(split, eps, seed):
        # the best of 64 settings tried on these splits at eps = 1 (k in {1, 2}, selection share {0.2, 0.3},
        # score clips, FM box +-2 or 3 sd, L1 bound on/off): chosen with hindsight, so an optimistic row
        rng = np.random.default_rng(10_000 + seed)
        eps_select, eps_centre = 0.3 * eps, 0.05 * eps
        cols = private_top_k(split, 1, eps_select, eps_centre, rng, clip=(1.5, 0.25))
        return fm(split, eps - eps_select - eps_centre, seed, cols=cols, bounds=box2)

    box = (np.full(10, -1.5 * SD), np.full(10, 1.5 * SD))
    box2 = (np.full(10, -2.0 * SD), np.full(10, 2.0 * SD))
    rows = {
        "functional mechanism (shipped)": lambda sp, e, s: fm(sp, e, s),
        "  noise_ridge 2 (more shrinkage)": lambda sp, e, s: fm(sp, e, s, noise_ridge=2.0),
        "  box +-1.5 documented sd": lambda sp, e, s: fm(sp, e, s, bounds=box),
        "  private top-1 feature, then FM": lambda sp, e, s: selected(sp, e, s, 1),
        "  private top-2 features, then FM": lambda sp, e, s: selected(sp, e, s, 2),
        "  top-1, clipped scores, FM box +-2 sd": lambda sp, e, s: selected_tight(sp, e, s),
        "  ORACLE: FM on bmi+s5 (not private)": lambda sp, e, s: fm(sp, e, s, cols=BEST_TWO),
        "Gaussian SSP, delta 1e-5 (shipped)": lambda sp, e, s: ssp(sp, e, s),
        "  AdaSSP adaptive ridge, delta 1e-5": lambda sp, e, s: ssp(sp, e, s, adaptive=True),
    }
    t0 = time.perf_counter()
    res: dict[tuple[str, float], list[float]] = {}
    ref: dict[str, list[float]] = {}
    for split_seed in range(a.splits):
        sp = train_test_split("diabetes", seed=split_seed)
        for name, cols in (("all 10 features", None), ("bmi + s5", BEST_TWO), ("bmi", BEST_ONE)):
            c = list(range(10)) if cols is None else cols
            ref.setdefault(name, []).append(
                LinearRegression().fit(sp.X_train[:, c], sp.y_train).score(sp.X_test[:, c], sp.y_test))
        for draw in range(a.draws):
            seed = split_seed * a.draws + draw
            for name, run in rows.items():
                for eps in EPSILONS:
                    res.setdefault((name, eps), []).append(run(sp, eps, seed))
    print(f"diabetes, test R^2: mean (10th percentile) over {a.splits} splits x {a.draws} noise draws; "
          f"{time.perf_counter() - t0:.0f} s\n")
    print("non-private least squares, same splits: " + ", ".join(f"{k} {np.mean(v):.3f}" for k, v in ref.items()))
    head = f"{'':<40}" + "".join(f"{'eps=' + format(e, 'g'):>16}" for e in EPSILONS)
    print(head + "\n" + "-" * len(head))
    for name in rows:
        cells = "".join(f"{np.mean(res[(name, e)]):>8.3f} ({np.percentile(res[(name, e)], 10):>5.2f})"
                        for e in EPSILONS)
        print(f"{name:<40}{cells}")
    print("\nTarget of issue 4: R^2 >= 0.3 at eps = 1. The oracle row bounds any pure-eps route that must first "
          "find the features privately; the SSP rows spend (eps, 1e-5) on a record added or removed.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
