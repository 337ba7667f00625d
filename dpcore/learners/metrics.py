"""Test-set metrics shared by every learner."""
from __future__ import annotations

import numpy as np


def score(split, y_pred) -> dict:
    """``{"accuracy", "balanced_accuracy", "rare_class_recall"}`` for classification, ``{"mse", "r2"}`` for
    regression, on ``split``'s test rows."""
    y_pred = np.asarray(y_pred)
    y = np.asarray(split.y_test)
    if split.task == "classification":
        return {"accuracy": float(np.mean(y_pred == y)), "balanced_accuracy": balanced_accuracy(y, y_pred),
                "rare_class_recall": rare_class_recall(y, y_pred)}
    resid = y - y_pred.astype(float)
    mse = float(np.mean(resid**2))
    var = float(np.var(y))
    return {"mse": mse, "r2": float(1.0 - mse / var) if var > 0 else 0.0}


def balanced_accuracy(y_true, y_pred) -> float:
    """The mean over the classes of the test rows of the share of each class's rows predicted right (its recall;
    Brodersen et al. 2010). Each class counts equally, so on data where one class is 95 % of the rows always
    answering it scores 1/k (0.5 for two classes), not 0.95.

    >>> balanced_accuracy([0, 0, 0, 1], [0, 0, 0, 0])
    0.5
    >>> balanced_accuracy([0, 1, 1], [0, 1, 0])
    0.75
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.size == 0:
        return float("nan")
    classes = np.unique(y_true)
    return float(np.mean([np.mean(y_pred[y_true == c] == c) for c in classes]))


def rare_class_recall(y_true, y_pred) -> float:
    """The share of the rarest class's test rows predicted right (its recall; the class with the fewest test rows,
    the smallest label on a tie). On a 95/5 label it says how many of the 5 % a model finds, which accuracy (0.95 for
    finding none) and even balanced accuracy (the mean with the common class) blur.

    >>> rare_class_recall([0, 0, 0, 1, 1], [0, 0, 0, 1, 0])
    0.5
    >>> rare_class_recall([0, 0, 0, 1], [0, 0, 0, 0])
    0.0
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.size == 0:
        return float("nan")
    classes, counts = np.unique(y_true, return_counts=True)
    rare = classes[np.argmin(counts)]
    return float(np.mean(y_pred[y_true == rare] == rare))


def confusion_matrix(y_true, y_pred, n_classes: int) -> np.ndarray:
    """Counts with true classes as rows and predictions as columns."""
    cm = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(cm, (np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)), 1)
    return cm
