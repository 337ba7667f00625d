"""Clustering metrics: accuracy after Hungarian matching, normalised intra-cluster variance."""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..types import ArrayLike

__all__ = ["hungarian_accuracy", "match_clusters", "intra_cluster_variance"]


def match_clusters(labels_true, labels_pred) -> dict[int, int]:
    """Best one-to-one map cluster -> class (Hungarian algorithm on the contingency table).

    Clusters left without a class (k larger than the number of classes) map to -1.

    >>> match_clusters([0, 0, 1, 1], [1, 1, 0, 0])
    {0: 1, 1: 0}
    """
    yt = np.asarray(labels_true)
    yp = np.asarray(labels_pred)
    classes = np.unique(yt)
    clusters = np.unique(yp)
    table = np.zeros((clusters.size, classes.size), dtype=np.int64)
    ci = np.searchsorted(clusters, yp)
    ki = np.searchsorted(classes, yt)
    np.add.at(table, (ci, ki), 1)
    rows, cols = linear_sum_assignment(table, maximize=True)
    mapping = {int(c): -1 for c in clusters}
    for r, c in zip(rows, cols):
        mapping[int(clusters[r])] = int(classes[c])
    return mapping


def hungarian_accuracy(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Fraction of points whose cluster maps to their class under the best matching.

    The clustering accuracy of J. Zhang's 2021 course report on DPLloyd and input perturbation.

    >>> hungarian_accuracy([0, 0, 1, 1, 2], [2, 2, 0, 0, 1])
    1.0
    """
    yt = np.asarray(labels_true)
    yp = np.asarray(labels_pred)
    if yt.size == 0:
        return float("nan")
    m = match_clusters(yt, yp)
    mapped = np.array([m[int(c)] for c in yp])
    return float(np.mean(mapped == yt))


def intra_cluster_variance(X: ArrayLike, labels: ArrayLike, centers: ArrayLike) -> float:
    """Within-cluster sum of squares divided by the total sum of squares around the mean (0 best, ~1 useless).

    >>> intra_cluster_variance([[0.0], [2.0]], [0, 1], [[0.0], [2.0]])
    0.0
    """
    X = np.asarray(X, dtype=float)
    centers = np.asarray(centers, dtype=float)
    labels = np.asarray(labels, dtype=np.int64)
    within = float(np.sum((X - centers[labels]) ** 2))
    total = float(np.sum((X - X.mean(axis=0)) ** 2))
    return within / total if total > 0 else 0.0
