"""Do the learners' defaults hold on every dataset they support? Validation rows, epsilon = 1.

Every private learner of the registry runs with its declared defaults on every registry dataset of a
task it handles, fitted on three quarters of the seed-0 training rows and scored on the remaining
quarter (the test rows are never read), beside the trivial predictor (majority class, or the mean) on
the same rows. A row says whether the learner beats it and whether it answered one class for every
row (the learner then says so itself).

With ``--secure`` every private run draws secure noise (``run_learner(secure=True)``): the defaults must hold
there too, since the grid only widens the noise by about 0.1 %.

Usage: python bench/defaults_everywhere.py [--epsilon 1] [--learners dpsgd,pate] [--datasets iris,adult] [--secure]
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings

sys.path.insert(0, ".")
sys.path.insert(0, "bench")

from erm_regularization import validation_splits  # noqa: E402

from dpcore.datasets.registry import REGISTRY  # noqa: E402
from dpcore.learners import learners, run_learner  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--learners", default=",".join(sorted(n for n, s in learners().items() if s.private)))
    ap.add_argument("--datasets", default=",".join(REGISTRY))
    ap.add_argument("--secure", action="store_true", help="secure noise in every private run")
    a = ap.parse_args()
    noise = {"seed": None, "secure": True} if a.secure else {"seed": 0}
    print(f"{'learner':22s} {'dataset':14s} {'score':>7s} {'trivial':>7s}  verdict            seconds")
    for name in a.learners.split(","):
        spec = learners()[name]
        for ds in a.datasets.split(","):
            info = REGISTRY[ds]
            is_image = getattr(info, "image_shape", None) is not None
            if info.task not in spec.tasks or (spec.images_only and not is_image):
                continue
            split = validation_splits(ds, 1)[0]
            t0 = time.time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    r = run_learner(name, split, epsilon=a.epsilon, **noise)
                except Exception as exc:  # noqa: BLE001 - a refusal is a result here
                    print(f"{name:22s} {ds:14s} refused: {str(exc)[:90]}")
                    continue
                trivial = run_learner("majority" if info.task == "classification" else "mean", split, seed=0)
            classification = info.task == "classification"
            s, t = r.score, trivial.score
            better = s > t if classification else s < t
            verdict = ("ONE CLASS (said)" if "single_class" in r.extras else
                       ("beats trivial" if better else "NOT BETTER"))
            print(f"{name:22s} {ds:14s} {s:7.3f} {t:7.3f}  {verdict:18s} {time.time() - t0:6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
