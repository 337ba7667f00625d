"""Classical private models beside IBM diffprivlib 0.6.6, same splits, same epsilons, mean of 5 seeds.

    python bench/classical_utility.py [--seeds 5]

diffprivlib 0.6.6 does not import with scikit-learn >= 1.6, so this script
creates its own virtual environment under ``bench/.diffprivlib-env/`` (git-ignored)
with ``pip install diffprivlib==0.6.6 'scikit-learn<1.6' numpy`` on first use and
runs diffprivlib there in a subprocess; data go through .npz files in a temp dir.

Settings (identical for both libraries):
* breast_cancer, logistic regression, two pipelines, rows clipped to norm 1 in both:
  - "private": the app's default ``preprocess="log-bounds"`` (each feature log-scaled between
    the dataset's public bounds; no statistic of the private rows), the end-to-end eps-DP
    pipeline;
  - "standardised": features standardised with the training rows' mean/std (LEAKS, for both;
    the usual reference setting in published comparisons, kept for comparison with their numbers).
  dpcore = objective perturbation (Chaudhuri Alg. 2, Lambda = 3 sqrt(d) / (n eps), the "auto" default,
  constant feature 0.3); diffprivlib = LogisticRegression(epsilon, data_norm=1) (also objective
  perturbation) on the very same feature matrices.
* iris, k-means: the dataset's declared bounds; test accuracy after Hungarian matching.
  dpcore = DPLloyd (Su et al. hybrid, records bounded in L1 by d/2); diffprivlib = KMeans(epsilon, bounds).
* diabetes, linear regression: declared feature bounds and label range; test R^2.
  dpcore = functional mechanism; diffprivlib = LinearRegression(epsilon, bounds_X, bounds_y).
  One more dpcore row, "dpcore SSP": Gaussian sufficient-statistics perturbation (Wang 2018) at the
  same epsilon with delta = 1e-5 and add/remove-one neighbours, a weaker guarantee than the pure-eps
  rows above it (labelled as such in the table).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENV = ROOT / "bench" / ".diffprivlib-env"
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)

_DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from diffprivlib.models import LogisticRegression, KMeans, LinearRegression
from scipy.optimize import linear_sum_assignment
def hung(y, p):
    cl, yc = np.unique(p), np.unique(y)
    t = np.zeros((cl.size, yc.size))
    for a, b in zip(np.searchsorted(cl, p), np.searchsorted(yc, y)): t[a, b] += 1
    r, c = linear_sum_assignment(t, maximize=True)
    return t[r, c].sum() / len(y)
out = []
for path in sys.argv[1:]:
    d = np.load(path)
    kind, eps, seed = str(d["kind"]), float(d["eps"]), int(d["seed"])
    if kind.startswith("logreg"):
        m = LogisticRegression(epsilon=eps, data_norm=1.0, random_state=seed).fit(d["Xtr"], d["ytr"])
        val = float(np.mean(m.predict(d["Xte"]) == d["yte"]))
    elif kind == "kmeans":
        b = (d["lo"], d["hi"])
        m = KMeans(n_clusters=int(d["k"]), epsilon=eps, bounds=b, random_state=seed).fit(d["Xtr"])
        val = float(hung(d["yte"], m.predict(d["Xte"])))
    else:
        m = LinearRegression(epsilon=eps, bounds_X=(d["lo"], d["hi"]), bounds_y=(float(d["ylo"]), float(d["yhi"])),
                             random_state=seed).fit(d["Xtr"], d["ytr"])
        r = d["yte"] - m.predict(d["Xte"])
        val = float(1 - np.mean(r ** 2) / np.var(d["yte"]))
    out.append({"kind": kind, "eps": eps, "seed": seed, "value": val})
print(json.dumps(out))
"""


def ensure_env() -> pathlib.Path:
    py = ENV / "bin" / "python"
    if py.exists() and subprocess.run([str(py), "-c", "import diffprivlib"], capture_output=True).returncode == 0:
        return py
    print(f"creating {ENV} with diffprivlib==0.6.6 (first run only) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "diffprivlib==0.6.6", "scikit-learn<1.6", "numpy"],
                   check=True)
    return py


def run_diffprivlib(py: pathlib.Path, files: list[str], tmp: str) -> list[dict] | None:
    """Run diffprivlib on the .npz tasks ``files`` with the venv's interpreter ``py``; its rows, or None (stderr
    printed) when it failed."""
    script = os.path.join(tmp, "run_dpl.py")
    pathlib.Path(script).write_text(_DPL_SCRIPT)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    proc = subprocess.run([str(py), script, *files], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        print(proc.stderr[-4000:], file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _standardise(split):
    mu, sd = split.X_train.mean(0), split.X_train.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    return (split.X_train - mu) / sd, (split.X_test - mu) / sd


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    from dpcore.datasets import train_test_split
    from dpcore.models import (
        DPLloydKMeans,
        FunctionalMechanismRegressor,
        PrivateERMClassifier,
        SSPRegressor,
        hungarian_accuracy,
    )
    from dpcore.models.learners import erm_features

    py = ensure_env()
    ours: dict[tuple[str, float], list[float]] = {}
    files = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            bc = train_test_split("breast_cancer", seed=seed)
            Xtr, Xte = _standardise(bc)
            Ptr, Pte, _ = erm_features(bc, "log-bounds")
            ir = train_test_split("iris", seed=seed)
            di = train_test_split("diabetes", seed=seed)
            for eps in EPSILONS:
                m = PrivateERMClassifier(epsilon=eps, data_norm=1.0, classes=(0, 1), random_state=seed)
                ours.setdefault(("logreg", eps), []).append(m.fit(Xtr, bc.y_train).score(Xte, bc.y_test))
                m = PrivateERMClassifier(epsilon=eps, data_norm=1.0, classes=(0, 1), random_state=seed)
                ours.setdefault(("logreg-private", eps), []).append(m.fit(Ptr, bc.y_train).score(Pte, bc.y_test))
                km = DPLloydKMeans(3, epsilon=eps, bounds=ir.dataset.bounds, random_state=seed).fit(ir.X_train)
                ours.setdefault(("kmeans", eps), []).append(hungarian_accuracy(ir.y_test, km.predict(ir.X_test)))
                fm = FunctionalMechanismRegressor(epsilon=eps, bounds_X=di.dataset.bounds,
                                                  bounds_y=di.dataset.label_range, random_state=seed)
                ours.setdefault(("linreg", eps), []).append(fm.fit(di.X_train, di.y_train).score(di.X_test, di.y_test))
                ssp = SSPRegressor(epsilon=eps, delta=1e-5, bounds_X=di.dataset.bounds,
                                   bounds_y=di.dataset.label_range, random_state=seed)
                ours.setdefault(("linreg-ssp", eps), []).append(
                    ssp.fit(di.X_train, di.y_train).score(di.X_test, di.y_test))
                for kind, payload in (
                    ("logreg", dict(Xtr=Xtr, ytr=bc.y_train, Xte=Xte, yte=bc.y_test)),
                    ("logreg-private", dict(Xtr=Ptr, ytr=bc.y_train, Xte=Pte, yte=bc.y_test)),
                    ("kmeans", dict(Xtr=ir.X_train, Xte=ir.X_test, yte=ir.y_test, lo=ir.dataset.bounds[0],
                                    hi=ir.dataset.bounds[1], k=3)),
                    ("linreg", dict(Xtr=di.X_train, ytr=di.y_train, Xte=di.X_test, yte=di.y_test,
                                    lo=di.dataset.bounds[0], hi=di.dataset.bounds[1],
                                    ylo=di.dataset.label_range[0], yhi=di.dataset.label_range[1])),
                ):
                    f = os.path.join(tmp, f"{kind}_{eps}_{seed}.npz")
                    np.savez(f, kind=kind, eps=eps, seed=seed, **payload)
                    files.append(f)
        rows = run_diffprivlib(py, files, tmp)
        if rows is None:
            return 1
        theirs: dict[tuple[str, float], list[float]] = {}
        for row in rows:
            theirs.setdefault((row["kind"], row["eps"]), []).append(row["value"])

    labels = {"logreg-private": "breast_cancer logreg, private", "logreg": "breast_cancer logreg, std (leaks)",
              "kmeans": "iris k-means acc", "linreg": "diabetes linreg R^2"}
    head = f"{'task':<34}{'library':<13}" + "".join(f"{'eps=' + format(e, 'g'):>12}" for e in EPSILONS)
    print(f"mean of {args.seeds} seeds, same splits and epsilons")
    print(head)
    print("-" * len(head))
    labels["linreg-ssp"] = labels["linreg"]
    for kind in ("logreg-private", "logreg", "kmeans", "linreg", "linreg-ssp"):
        libs = (("dpcore SSP", ours),) if kind == "linreg-ssp" else (("dpcore", ours), ("diffprivlib", theirs))
        for lib, res in libs:
            vals = "".join(f"{np.mean(res[(kind, e)]):>12.3f}" if abs(np.mean(res[(kind, e)])) < 1e5
                           else f"{np.mean(res[(kind, e)]):>12.3g}" for e in EPSILONS)
            print(f"{labels[kind]:<34}{lib:<13}{vals}")
    print("dpcore SSP: (eps, delta = 1e-5)-DP, a record added or removed; every other row is pure eps-DP.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
