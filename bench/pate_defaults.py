"""PATE's defaults (and the candidates they were chosen from) on every classification dataset, on validation
rows (never the test rows).

For each dataset of the registry, a quarter of the training rows of the seed-0 split is held out as validation
rows (3 different quarters); PATE runs on the other rows with each candidate configuration at each epsilon and is
scored on the held-out quarter, beside the majority class. The candidates differ in what one query labels (one
public example, Papernot et al. 2017; or one k-means cluster of the public pool, each teacher casting one vote per
cluster), the teacher model, the features and the numbers of teachers and queries.

With ``--ceiling`` it prints instead the noiseless teacher vote's accuracy on the validation rows (no noise, no
student: the most any student of these teachers could learn) for several teacher families, numbers of teachers and
vote thresholds (a row is labelled positive when at least that share of the teachers says so; binary datasets).

Usage: python bench/pate_defaults.py [--splits 3] [--epsilons 1,2,5] [--datasets iris,adult] [--configs a,b]
       python bench/pate_defaults.py --ceiling [--datasets adult] [--splits 1]
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, ".")
sys.path.insert(0, "bench")
from erm_regularization import validation_splits  # noqa: E402

from dpcore.datasets.registry import REGISTRY  # noqa: E402
from dpcore.learners import get_learner  # noqa: E402
from dpcore.pate import PateConfig, run_pate  # noqa: E402
from dpcore.pate.learners import PUBLIC_FRACTION  # noqa: E402


def _sizes(split) -> tuple[int, int, int]:
    n = split.X_train.shape[0]
    n_pub = int(round(PUBLIC_FRACTION * n))
    return n - n_pub, n_pub, int(np.unique(split.y_train).size)


def _default(split) -> dict:
    """The ``pate`` learner's declared defaults on ``split``."""
    d = get_learner("pate").defaults(split)
    return {k: d[k] for k in ("teachers", "queries", "query_mode", "teacher_model", "student_model", "features")
            if k in d}


def _former_default(split) -> dict:
    """The defaults before cluster queries: at most 50 teachers of about 20 rows, 50 queries, logistic regression."""
    n_priv, n_pub, _ = _sizes(split)
    return {"teachers": max(1, min(50, n_priv // 20)), "queries": max(1, min(50, n_pub)), "query_mode": "points",
            "teacher_model": "logreg", "student_model": "logreg"}


def _clusters(rows_per_class: int, clusters_per_class: int, max_teachers: int = 250, max_clusters: int = 100,
              rows_per_cluster: int = 20):
    """Teachers of ``rows_per_class`` x classes private rows each (at most ``max_teachers``); one query per
    k-means cluster of about ``rows_per_cluster`` public rows, at least ``clusters_per_class`` x classes, at most
    ``max_clusters``."""
    def config(split) -> dict:
        n_priv, n_pub, k = _sizes(split)
        clusters = max(clusters_per_class * k, min(max_clusters, n_pub // rows_per_cluster))
        return {"query_mode": "clusters", "teacher_model": "knn", "student_model": "logreg",
                "teachers": max(1, min(max_teachers, n_priv // (rows_per_class * k))),
                "queries": max(1, min(n_pub, clusters))}
    return config


#: name -> configuration of one split (features "hog" on image datasets unless --no-hog)
CANDIDATES = {
    "default": _default,
    "former default (points, logreg, pixels)": lambda sp: {**_former_default(sp), "features": "pixels"},
    "points, knn, 12 rows/teacher": lambda sp: {**_former_default(sp), "teacher_model": "knn",
                                                "teachers": max(1, min(250, _sizes(sp)[0] // 12))},
    "clusters, 2 rows/class/teacher, >=2 clusters/class": _clusters(2, 2),
    "clusters, knn, pixels": lambda sp: {**_clusters(2, 2)(sp), "features": "pixels"},
    "clusters, logreg teachers, pixels": lambda sp: {**_clusters(2, 2)(sp), "features": "pixels",
                                                     "teacher_model": "logreg"},
    "clusters, logreg teachers (8 rows/class)": lambda sp: {**_clusters(8, 2)(sp), "teacher_model": "logreg"},
    "points, logreg, hog": lambda sp: {**_former_default(sp), "features": "hog"},
    "clusters, 4 rows/class/teacher, >=2 clusters/class": _clusters(4, 2),
    "clusters, 8 rows/class/teacher, >=2 clusters/class": _clusters(8, 2),
    "clusters, 2 rows/class/teacher, >=4 clusters/class": _clusters(2, 4),
    "clusters, 4 rows/class/teacher, >=4 clusters/class": _clusters(4, 4),
    "clusters, at most 200": _clusters(2, 2, max_clusters=200),
    "clusters, at most 400, 10 rows each": _clusters(2, 2, max_clusters=400, rows_per_cluster=10),
    "clusters, logreg teachers": lambda sp: {**_clusters(2, 2)(sp), "teacher_model": "logreg"},
    "clusters, up to 1,000 teachers": _clusters(1, 2, max_teachers=1000),
    "points, 1,000 queries": lambda sp: {**_default(sp), "query_mode": "points", "queries": min(1000, _sizes(sp)[1])},
}


def run(datasets, epsilons, splits, configs, hog: bool) -> pd.DataFrame:
    rows = []
    for name in datasets:
        for sp in validation_splits(name, splits):
            majority = float(np.mean(sp.y_test == np.bincount(sp.y_train).argmax()))
            for label in configs:
                kw = CANDIDATES[label](sp)
                feats = kw.pop("features", "hog" if hog and sp.dataset.is_image else "pixels")
                for eps in epsilons:
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = run_pate(sp, PateConfig(target_epsilon=eps, baseline=False, seed=sp.seed, features=feats,
                                                    **kw))
                    rows.append({"dataset": name, "config": label, "features": feats, "epsilon": eps,
                                 "split": sp.seed, "teachers": kw["teachers"], "queries": kw["queries"],
                                 "accuracy": r.student_accuracy, "label_accuracy": r.label_accuracy,
                                 "majority": majority, "seconds": time.perf_counter() - t0})
            print(f"  {name} split {sp.seed} done", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def _ceiling_families() -> dict:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import BernoulliNB
    from sklearn.tree import DecisionTreeClassifier

    from dpcore.pate.teachers import NearestNeighbour
    return {"nearest neighbour": NearestNeighbour,
            "logistic regression": lambda: LogisticRegression(max_iter=300),
            "logistic regression, balanced classes": lambda: LogisticRegression(C=10, max_iter=300,
                                                                                class_weight="balanced"),
            "tree of depth 3": lambda: DecisionTreeClassifier(max_depth=3, random_state=0),
            "random forest, 25 trees of depth 5": lambda: RandomForestClassifier(25, max_depth=5, random_state=0),
            "naive Bayes (Bernoulli)": lambda: BernoulliNB(binarize=0.5)}


def ceiling(datasets, splits: int, teachers=(50, 100, 250), thresholds=(0.3, 0.4, 0.5, 0.6, 0.7)) -> pd.DataFrame:
    """The noiseless vote's validation accuracy for each teacher family, number of teachers and vote threshold."""
    from dpcore.pate.pipeline import pate_split
    from dpcore.pate.teachers import partition_indices

    rows = []
    for name in datasets:
        for sp in validation_splits(name, splits):
            if np.unique(sp.y_train).size != 2:
                print(f"  {name}: not binary, skipped", file=sys.stderr)
                break
            d = pate_split(sp, public_fraction=PUBLIC_FRACTION, seed=sp.seed)
            for t in teachers:
                parts = partition_indices(d.y_private.size, t, rng=np.random.default_rng(sp.seed))
                for family, make in _ceiling_families().items():
                    votes = []
                    for idx in parts:
                        y = d.y_private[idx]
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            votes.append(np.full(d.y_test.size, y[0]) if np.unique(y).size < 2
                                         else make().fit(d.X_private[idx], y).predict(d.X_test))
                    share = np.mean(votes, axis=0)
                    rows += [{"dataset": name, "split": sp.seed, "private rows": d.y_private.size, "teachers": t,
                              "family": family, "threshold": th, "accuracy": float(np.mean((share >= th) == d.y_test))}
                             for th in thresholds]
            print(f"  {name} split {sp.seed} done", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--epsilons", default="1,2,5")
    ap.add_argument("--datasets", default=",".join(n for n, d in REGISTRY.items() if d.task == "classification"))
    ap.add_argument("--configs", default=None, help="comma-separated indices into the candidates (default all)")
    ap.add_argument("--no-hog", action="store_true", help="pixels on image datasets too")
    ap.add_argument("--out", default=None)
    ap.add_argument("--ceiling", action="store_true", help="the noiseless teacher vote's accuracy instead")
    a = ap.parse_args()
    pd.set_option("display.width", 200)
    if a.ceiling:
        table = ceiling(a.datasets.split(","), a.splits)
        wide = table.pivot_table(index=["dataset", "teachers", "family"], columns="threshold", values="accuracy",
                                 sort=False)
        wide.columns = [f"vote share >= {c:g}" for c in wide.columns]
        print(wide.round(3).to_string())
        return 0
    labels = list(CANDIDATES)
    if a.configs:
        labels = [labels[int(i)] for i in a.configs.split(",")]
    table = run(a.datasets.split(","), [float(e) for e in a.epsilons.split(",")], a.splits, labels, not a.no_hog)
    if a.out:
        table.to_csv(a.out, index=False)
    summary = table.groupby(["dataset", "config", "epsilon"], sort=False).agg(
        accuracy=("accuracy", "mean"), worst=("accuracy", "min"), labels=("label_accuracy", "mean"),
        majority=("majority", "mean"), teachers=("teachers", "first"), queries=("queries", "first"),
        seconds=("seconds", "mean")).reset_index()
    pd.set_option("display.width", 200)
    print(summary.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
