"""Test-set metrics shared by every learner."""
from __future__ import annotations

import numpy as np


def score(split, y_pred) -> dict:
    """``{"accuracy"}`` for classification, ``{"mse", "r2"}`` for regression, on ``split``'s test rows."""
    y_pred = np.asarray(y_pred)
    y = np.asarray(split.y_test)
    if split.task == "classification":
        return {"accuracy": float(np.mean(y_pred == y))}
    resid = y - y_pred.astype(float)
    mse = float(np.mean(resid**2))
    var = float(np.var(y))
    return {"mse": mse, "r2": float(1.0 - mse / var) if var > 0 else 0.0}


def confusion_matrix(y_true, y_pred, n_classes: int) -> np.ndarray:
    """Counts with true classes as rows and predictions as columns."""
    cm = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(cm, (np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)), 1)
    return cm
