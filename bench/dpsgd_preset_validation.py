"""Validation accuracy of DP-SGD presets on a held-out fifth of the TRAINING rows (never the test rows).

The protocol of :mod:`dpcore.training.presets`: take the seed-0 split's
training rows, hold out a fixed random fifth (``numpy.random.default_rng(123)``)
as the validation set, train on the other four fifths through the registered
``dpsgd`` learner (the same code path as the CLI and the Train page) and score on
the held-out fifth. Each DP-SGD seed draws its own noise and batches; the data
split stays fixed, so the spread is the training noise alone.

    python bench/dpsgd_preset_validation.py [--seeds 8] [--epsilons 1 2] [--datasets digits mnist5k] [--workers 2]

``--previous`` also runs the presets this commit replaced, for comparison.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

#: The presets before the HOG / PLD search, as parameter overrides of the learner.
PREVIOUS = {
    "digits": dict(model="linear", batch_size=None, sample_rate=0.24, epochs=30, learning_rate=1.0, ema=0.9,
                   features="dct", dct_size=6, accountant="rdp"),
    "mnist5k": dict(model="linear", batch_size=None, sample_rate=0.25, epochs=60, learning_rate=0.75, ema=0.9,
                    features="dct", dct_size=12, accountant="rdp"),
}


def validation_split(name):
    """The seed-0 training rows split into four fifths (train) and a fixed random fifth (validation); ``name``: a
    registry name or a Dataset."""
    from dpcore.datasets import Split, train_test_split

    sp = train_test_split(name, seed=0)
    n = sp.X_train.shape[0]
    perm = np.random.default_rng(123).permutation(n)
    n_val = int(math.ceil(n / 5))
    va, tr = perm[:n_val], perm[n_val:]
    return Split(sp.dataset, sp.X_train[tr], sp.y_train[tr], sp.X_train[va], sp.y_train[va], seed=0)


def _job(args):
    import torch

    torch.set_num_threads(1)
    from dpcore.learners import run_learner

    which, name, eps, seed = args
    split = validation_split(name)
    params = {}
    if which == "previous":
        params = {k: v for k, v in PREVIOUS[name].items() if k not in ("batch_size", "sample_rate")}
        params["batch_size"] = max(1, int(round(PREVIOUS[name]["sample_rate"] * split.X_train.shape[0])))
    t = time.perf_counter()
    res = run_learner("dpsgd", split, epsilon=eps, delta=1e-5, seed=seed, params=params)
    return {"preset": which, "dataset": name, "epsilon": eps, "seed": seed, "accuracy": res.metrics["accuracy"],
            "seconds": time.perf_counter() - t}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--datasets", nargs="+", default=["digits", "mnist5k"])
    ap.add_argument("--previous", action="store_true", help="also run the presets this search replaced")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    which = ("current", "previous") if a.previous else ("current",)
    jobs = [(w, d, e, s) for w in which for d in a.datasets for e in a.epsilons for s in range(a.seeds)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=a.workers) as ex:
        df = pd.DataFrame(list(ex.map(_job, jobs)))
    g = df.groupby(["dataset", "preset", "epsilon"]).agg(accuracy=("accuracy", "mean"), std=("accuracy", "std"),
                                                        seeds=("seed", "size"), seconds=("seconds", "mean"))
    print(f"validation accuracy (held-out fifth of the seed-0 training rows), delta = 1e-5; "
          f"{time.perf_counter() - t0:.0f} s with {a.workers} workers\n")
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print(g.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
