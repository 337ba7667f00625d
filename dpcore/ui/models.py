"""Cached wrappers for the Clustering and Classical-models pages (numpy/pandas out, so st.cache_data can pickle)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from ..datasets import load_dataset, train_test_split
from ..learners import run_learner
from ..models.metrics import match_clusters

CLUSTER_METHODS = ("lloyd", "dplloyd", "input-perturbation")
CLUSTER_LABELS = {"lloyd": "Lloyd (non-private)", "dplloyd": "DPLloyd", "input-perturbation": "Input perturbation"}


@st.cache_data(show_spinner=False, max_entries=64)
def cluster_demo(dataset: str, k: int, epsilon: float, iterations: int | None, seed: int) -> dict:
    """The three methods at one epsilon: metrics, and a 2-D PCA view of the test rows with each method's centres.

    The PCA is computed on the (already released) public display only; it plays no part in the clustering.
    """
    split = train_test_split(dataset, seed=seed)
    rows, centres = [], []
    labels = {}
    for m in CLUSTER_METHODS:
        params = {"k": k}
        if m == "dplloyd" and iterations:
            params["iterations"] = iterations
        res = run_learner(m, split, epsilon=epsilon, seed=seed, params=params)
        rows.append({"method": CLUSTER_LABELS[m], "accuracy": res.metrics["accuracy"],
                     "intra_cluster_variance": res.metrics["intra_cluster_variance"],
                     "epsilon": res.epsilon})
        centres.append(res.extras["centers_unit"])
        labels[CLUSTER_LABELS[m]] = res.extras["labels_test"]
    lo, hi = split.dataset.bounds
    Z = (2 * np.clip(split.X_test, lo, hi) - (hi + lo)) / (hi - lo)
    mu = Z.mean(0)
    _, _, Vt = np.linalg.svd(Z - mu, full_matrices=False)
    P = Vt[:2].T if Vt.shape[0] >= 2 else np.eye(Z.shape[1])[:, :2]
    pts = pd.DataFrame((Z - mu) @ P, columns=["PC1", "PC2"])
    names = split.dataset.target_names

    def cname(c: int) -> str:
        return "unmatched" if c < 0 else (str(names[c]) if names else str(c))

    pts["class"] = [cname(int(c)) for c in split.y_test]
    matches = {}
    for name, lab in labels.items():
        # colour each cluster by the class the Hungarian matching assigns it to
        matches[name] = match_clusters(split.y_test, lab)
        pts[name] = [cname(matches[name][int(c)]) for c in lab]
    lo_v = pts[["PC1", "PC2"]].min().to_numpy() - 0.3
    hi_v = pts[["PC1", "PC2"]].max().to_numpy() + 0.3
    cen = []
    for m, c in zip(CLUSTER_METHODS, centres):
        pc = (c - mu) @ P
        for j, xy in enumerate(pc):
            inside = bool(np.all((xy >= lo_v) & (xy <= hi_v)))
            a, b = np.clip(xy, lo_v, hi_v)
            cen.append({"method": CLUSTER_LABELS[m], "cluster": j,
                        "matched_class": cname(matches[CLUSTER_LABELS[m]].get(j, -1)),
                        "PC1": a, "PC2": b, "in_view": inside})
    return {"metrics": pd.DataFrame(rows), "points": pts, "centres": pd.DataFrame(cen)}


@st.cache_data(show_spinner=False, max_entries=32)
def cluster_sweep(dataset: str, k: int, iterations: int | None, epsilons: tuple[float, ...], seeds: int,
                  seed: int) -> pd.DataFrame:
    """Accuracy and intra-cluster variance vs epsilon for the three methods, mean and sd over ``seeds`` runs."""
    rows = []
    for s in range(seed, seed + seeds):
        split = train_test_split(dataset, seed=s)
        for m in CLUSTER_METHODS:
            for eps in (epsilons if m != "lloyd" else epsilons):
                params = {"k": k}
                if m == "dplloyd" and iterations:
                    params["iterations"] = iterations
                res = run_learner(m, split, epsilon=eps, seed=s, params=params)
                rows.append({"method": CLUSTER_LABELS[m], "epsilon": eps, "seed": s, **res.metrics})
    df = pd.DataFrame(rows)
    return (df.groupby(["method", "epsilon"], as_index=False)
            .agg(accuracy=("accuracy", "mean"), accuracy_sd=("accuracy", "std"),
                 intra_cluster_variance=("intra_cluster_variance", "mean")))


def _classical_params(learner: str, model: str, kernel: str, regularization: float | str,
                      preprocess: str = "log-bounds") -> dict:
    """Learner params; ``regularization="tune"`` runs Chaudhuri et al.'s private Algorithm 4 for the private ERMs."""
    if learner in ("erm-output", "erm-objective", "logreg"):
        base = {"model": model, "kernel": kernel, "preprocess": preprocess}
        if regularization == "tune":
            return base if learner == "logreg" else {**base, "tune": True}
        return {**base, "regularization": regularization}
    return {}


#: Short names for legends and tables (the registry ids stay in the CLI and sweeps).
METHOD_NAMES = {
    "erm-output": "Output perturbation (Alg. 1)", "erm-objective": "Objective perturbation (Alg. 2)",
    "functional-mechanism": "Functional mechanism", "logreg": "Non-private model (same loss)",
    "linreg": "Non-private linear regression", "majority": "Majority class (trivial)",
    "mean": "Mean predictor (trivial)",
}


@st.cache_data(show_spinner=False, max_entries=32)
def classical_sweep(dataset: str, learners: tuple[str, ...], model: str, kernel: str, regularization: float | str,
                    epsilons: tuple[float, ...], seeds: int, seed: int, preprocess: str = "log-bounds") -> pd.DataFrame:
    """Test metric vs epsilon for each private learner, plus the non-private model and the trivial predictor."""
    ds = load_dataset(dataset)
    metric = "accuracy" if ds.task == "classification" else "r2"
    base = "logreg" if ds.task == "classification" else "linreg"
    trivial = "majority" if ds.task == "classification" else "mean"
    rows = []
    for s in range(seed, seed + seeds):
        split = train_test_split(ds, seed=s)
        for name in learners:
            for eps in epsilons:
                res = run_learner(name, split, epsilon=eps, seed=s,
                                  params=_classical_params(name, model, kernel, regularization, preprocess))
                rows.append({"method": METHOD_NAMES.get(name, name), "private": True, "epsilon": eps, "seed": s,
                             "value": res.metrics[metric]})
        for name in (base, trivial):
            res = run_learner(name, split, seed=s, params=_classical_params(name, model, kernel, regularization, preprocess))
            for eps in epsilons:
                rows.append({"method": METHOD_NAMES.get(name, name), "private": False, "epsilon": eps, "seed": s,
                             "value": res.metrics[metric]})
    df = pd.DataFrame(rows)
    out = df.groupby(["method", "private", "epsilon"], as_index=False, sort=False).agg(
        value=("value", "mean"), sd=("value", "std"))
    out.attrs["metric"] = metric
    return out.rename(columns={"value": metric})


@st.cache_data(show_spinner=False, max_entries=32)
def size_sweep(dataset: str, learner: str, model: str, kernel: str, regularization: float | str, epsilon: float,
               fractions: tuple[float, ...], seed: int, preprocess: str = "log-bounds") -> pd.DataFrame:
    """Test metric vs training-set size (fraction of the training rows) at a fixed epsilon."""
    ds = load_dataset(dataset)
    metric = "accuracy" if ds.task == "classification" else "r2"
    split = train_test_split(ds, seed=seed)
    rows = []
    for f in fractions:
        res = run_learner(learner, split, epsilon=epsilon, seed=seed, train_fraction=f,
                          params=_classical_params(learner, model, kernel, regularization, preprocess))
        rows.append({"train_fraction": f, "n_train": int(round(f * split.X_train.shape[0])), metric: res.metrics[metric]})
    return pd.DataFrame(rows)
