"""Do the learners' defaults hold on every dataset they support? Validation rows, epsilon = 1.

Every private learner of the registry runs with its declared defaults on every registry dataset of a
task it handles, fitted on three quarters of the seed-0 training rows and scored on the remaining
quarter (the test rows are never read), beside the trivial predictor on the same rows: the majority class, or
the mean, or for a clustering centres drawn at random (the reference the Clustering page and the sweeps use; its score
averaged over five draws). A row says whether the learner beats it and whether it answered one class for every
row; "(said)" marks a run that warned, itself, that it is no better than its trivial reference.

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
from dpcore.learners import learners, run_learner, trivial_learner  # noqa: E402

TRIVIAL_DRAWS = 5


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
                reference = trivial_learner(info.task, spec.family)
                t = sum(run_learner(reference, split, seed=k).score for k in range(TRIVIAL_DRAWS)) / TRIVIAL_DRAWS
            classification = info.task == "classification"
            s = r.score
            better = s > t if classification else s < t
            said = " (said)" if r.extras.get("no_better_than_trivial") else ""  # the run's own warning
            verdict = ("ONE CLASS (said)" if "single_class" in r.extras else
                       ("beats trivial" + said if better else "NOT BETTER" + said))
            print(f"{name:22s} {ds:14s} {s:7.3f} {t:7.3f}  {verdict:18s} {time.time() - t0:6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
