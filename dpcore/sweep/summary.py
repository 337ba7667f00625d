"""Across-seed summaries of a sweep table: what the chart draws and the CLI prints."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..exceptions import DPValueError


def summarize(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean, std, min, max and count of ``metric`` across seeds, per (learner, role, value).

    Also the mean epsilon actually spent and, when the table has the
    ``leaks_privacy`` column, whether any run of the group leaked (its epsilon is then
    not a guarantee). Baseline rows (``value`` NaN) give one
    row per baseline learner. ``std`` is the sample standard deviation (0 for one seed).

    >>> t = pd.DataFrame({"learner": ["a", "a"], "role": ["swept"] * 2, "value": [1.0, 1.0],
    ...                   "seed": [0, 1], "accuracy": [0.5, 0.7], "epsilon": [1.0, 1.0]})
    >>> summarize(t, "accuracy")[["mean", "min", "max", "n"]].round(3).to_dict("records")
    [{'mean': 0.6, 'min': 0.5, 'max': 0.7, 'n': 2}]
    """
    if metric not in table.columns:
        raise DPValueError(f"metric {metric!r} is not a column of the sweep table; it has {list(table.columns)}")
    cols = ["learner", "role", "value", "mean", "std", "min", "max", "n", "epsilon_spent"]
    leaks = "leaks_privacy" in table.columns
    if leaks:
        cols.append("leaks_privacy")
    if table.empty:
        return pd.DataFrame(columns=cols)
    t = table.copy()
    if not leaks:
        t["leaks_privacy"] = False
    t["_v"] = t["value"].fillna(-np.inf)  # groupby drops NaN keys; baselines have value NaN
    g = t.groupby(["learner", "role", "_v"], sort=False)
    out = g.agg(
        value=("value", "first"),
        mean=(metric, "mean"),
        std=(metric, "std"),
        min=(metric, "min"),
        max=(metric, "max"),
        n=(metric, "count"),
        epsilon_spent=("epsilon", "mean"),
        leaks_privacy=("leaks_privacy", "any"),
    ).reset_index()
    out["std"] = out["std"].fillna(0.0)
    out["n"] = out["n"].astype(int)
    return out[cols].sort_values(["role", "learner", "value"], kind="stable").reset_index(drop=True)


__all__ = ["summarize"]
