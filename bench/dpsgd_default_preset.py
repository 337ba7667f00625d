"""The untuned DP-SGD preset (``PRESETS["default"]``: full-batch noisy gradient descent with averaged iterates) against
longer or faster variants, on validation rows of every registry dataset it applies to and of a generated table.

The default preset is what iris, wine, breast cancer, the faces and every uploaded table under 6,700 rows train
with. It was never tuned; on a table of four symmetric features whose label is 12 % positive it answered the
common class for nearly every row even at ε = 10 (30 full-batch steps at learning rate 2 do not get a linear
model's weights past its bias). Each candidate is scored on the held-out fifth of the seed-0 training rows
(``bench/dpsgd_preset_validation.py``'s protocol; the test rows are never read), by accuracy and by balanced
accuracy, mean of the seeds.

    python bench/dpsgd_default_preset.py [--seeds 3] [--epsilons 0.5 1 2] [--workers 2]
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

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

#: (epochs, learning rate) of each candidate; the first is the preset today
CANDIDATES = [(30, 2.0), (60, 2.0), (30, 4.0), (60, 4.0), (120, 4.0), (60, 8.0), (120, 8.0)]
REGISTRY_SETS = ["iris", "wine", "breast_cancer", "faces"]
GENERATED = "generated (4 symmetric features, 12 % positive, 3000 rows)"


def _generated():
    """A data owner's table: four features around 0 (declared -5 to 7), a 12 % label shifting each by 1.5."""
    from dpcore.datasets import as_dataset

    rng = np.random.default_rng(3)
    y = (rng.random(3000) < 0.1).astype(int)
    X = rng.normal(size=(3000, 4)) + 1.5 * y[:, None]
    return as_dataset((X, y), bounds=(np.full(4, -5.0), np.full(4, 7.0)), task="classification", name="generated")


#: registry sets as an upload of them would train (the default preset, raw features): the sizes between 1,000 and
#: 6,700 rows that no registry set on the default preset has
AS_UPLOAD = {"digits as an upload": ("digits", None), "Adult, 5,000 rows as an upload": ("adult", 5000),
             "MNIST 5k as an upload": ("mnist5k", None)}


def _as_upload(name: str):
    from dpcore.datasets import as_dataset, load_dataset

    registry, rows = AS_UPLOAD[name]
    ds = load_dataset(registry)
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    if rows is not None:
        keep = np.random.default_rng(7).permutation(len(y))[:rows]
        X, y = X[keep], y[keep]
    return as_dataset((X, y), bounds=ds.bounds, task="classification", name=registry + "-upload")


def _split(name: str):
    from dpsgd_preset_validation import validation_split

    return validation_split(_generated() if name == GENERATED else _as_upload(name) if name in AS_UPLOAD else name)


def _job(args):
    import warnings

    import torch

    torch.set_num_threads(1)
    from dpcore.learners import run_learner

    (epochs, lr), name, eps, seed = args
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_learner("dpsgd", _split(name), epsilon=eps, delta=1e-5, seed=seed,
                          params={"epochs": epochs, "learning_rate": lr})
    return {"candidate": f"{epochs} steps, lr {lr:g}", "dataset": name, "epsilon": eps, "seed": seed,
            "accuracy": res.metrics["accuracy"], "balanced": res.metrics["balanced_accuracy"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--uploads", action="store_true", help="also digits, Adult (5,000 rows) and MNIST 5k as uploads")
    ap.add_argument("--candidates", default=None, help="steps:lr pairs, e.g. 30:2,60:2 (default: all)")
    ap.add_argument("--only-uploads", action="store_true", help="the generated table and the uploads alone")
    a = ap.parse_args(argv)
    sets = ([] if a.only_uploads else REGISTRY_SETS) + [GENERATED] + (list(AS_UPLOAD) if a.uploads or a.only_uploads
                                                                       else [])
    candidates = CANDIDATES if a.candidates is None else [
        (int(c.split(":")[0]), float(c.split(":")[1])) for c in a.candidates.split(",")]
    jobs = [(c, d, e, s) for c in candidates for d in sets for e in a.epsilons for s in range(a.seeds)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=a.workers) as ex:
        df = pd.DataFrame(list(ex.map(_job, jobs)))
    order = {f"{e} steps, lr {lr:g}": i for i, (e, lr) in enumerate(candidates)}
    print(f"validation rows (a held-out fifth of the seed-0 training rows), δ = 1e-5, mean of {a.seeds} seeds; "
          f"{time.perf_counter() - t0:.0f} s with {a.workers} workers; the first candidate is the preset today\n")
    for metric in ("accuracy", "balanced"):
        t = df.pivot_table(index="candidate", columns=["dataset", "epsilon"], values=metric, aggfunc="mean")
        t = t.loc[sorted(t.index, key=order.get)]
        if df.dataset.isin(REGISTRY_SETS).any():
            t[("registry mean", "")] = df[df.dataset.isin(REGISTRY_SETS)].groupby("candidate")[metric].mean()
        sd = df.groupby(["candidate", "dataset", "epsilon"])[metric].std().groupby("candidate").mean()
        t[("mean sd over seeds", "")] = sd
        print(f"## {metric}")
        with pd.option_context("display.width", 250, "display.max_columns", 40, "display.float_format",
                               "{:.3f}".format):
            print(t.to_string())
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
