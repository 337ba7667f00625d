"""The Small CNN's learning rate under DP-SGD, on a held-out fifth of the TRAINING rows (never the test rows).

The presets' other settings (sample rate, epochs, clip norm, averaging) were tuned for a linear model on
handcrafted features; their learning rates (1 on Digits, 10 on MNIST 5k, 2 elsewhere) make the CNN, which reads
raw pixels, diverge. This bench runs the registered ``dpsgd`` learner with ``model=cnn`` at epsilon 1 on every
image dataset of the registry, over a grid of learning rates, with the validation protocol of
:mod:`dpcore.training.presets` (``bench/dpsgd_preset_validation.py``), and prints the mean validation accuracy
beside the preset's current CNN learning rate (``Preset.cnn_learning_rate``) and the linear preset.

    python bench/cnn_learning_rate.py [--seeds 2] [--rates 0.1,0.25,0.5,1,2] [--datasets digits,mnist5k,faces]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd  # noqa: E402


def _job(args):
    import warnings

    import torch

    torch.set_num_threads(1)
    from dpsgd_preset_validation import validation_split

    from dpcore.learners import run_learner

    name, lr, seed = args
    params = {} if lr is None else {"model": "cnn", "learning_rate": lr}
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_learner("dpsgd", validation_split(name), epsilon=1.0, seed=seed, params=params)
    return {"dataset": name, "model": "linear preset" if lr is None else "cnn", "lr": lr, "seed": seed,
            "accuracy": r.metrics["accuracy"], "seconds": time.time() - t0}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--rates", default="0.1,0.25,0.5,1,2")
    ap.add_argument("--datasets", default="digits,mnist5k,faces")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    from dpcore.training.presets import preset_for

    names = [d.strip() for d in a.datasets.split(",") if d.strip()]
    rates = [float(r) for r in a.rates.split(",")]
    jobs = [(n, lr, s) for n in names for lr in [None, *rates] for s in range(a.seeds)]
    with ProcessPoolExecutor(a.workers) as pool:
        rows = list(pool.map(_job, jobs))
    df = pd.DataFrame(rows)
    table = df.groupby(["dataset", "model", "lr"], dropna=False).accuracy.agg(["mean", "std", "count"]).round(3)
    print(f"DP-SGD at epsilon 1, validation accuracy over {a.seeds} seed(s):")
    print(table.to_string())
    for n in names:
        cnn = df[(df.dataset == n) & (df.model == "cnn")].groupby("lr").accuracy.mean()
        print(f"{n}: best CNN learning rate {cnn.idxmax():g} ({cnn.max():.3f}); the preset's "
              f"{preset_for(n).cnn_learning_rate:g} ({cnn.get(preset_for(n).cnn_learning_rate, float('nan')):.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
