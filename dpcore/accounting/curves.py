"""Epsilon-vs-epochs curves for the Accountant page (Abadi et al. 2016, figure 2)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..exceptions import DPValueError
from ..validation import check_delta, check_fraction, check_positive
from .composition import dpsgd_composition_bound
from .core import epsilon_curve

METHOD_LABELS = {
    "naive": "Naive composition",
    "advanced": "Advanced composition",
    "rdp": "Moments accountant (RDP)",
    "pld": "Privacy loss distribution (PLD)",
}


def composition_comparison(
    *,
    noise_multiplier: float,
    sample_rate: float,
    delta: float,
    epochs: Sequence[float],
    methods: Sequence[str] = ("naive", "advanced", "rdp", "pld"),
) -> pd.DataFrame:
    """Epsilon of DP-SGD after each number of ``epochs`` under each method.

    One epoch is ``1/q`` steps. Returns a tidy DataFrame with columns
    ``epochs, steps, method, epsilon``. RDP and PLD come from dp_accounting;
    naive and advanced composition treat each step as a subsampled Gaussian
    mechanism with a per-step delta (see :func:`dpsgd_composition_bound`).

    Examples
    --------
    >>> df = composition_comparison(noise_multiplier=4, sample_rate=0.01, delta=1e-5, epochs=[10], methods=["rdp"])
    >>> float(df.epsilon.iloc[0]) < 1
    True
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    q = check_fraction(sample_rate, "sample_rate")
    delta = check_delta(delta, allow_zero=False)
    ep = np.asarray(sorted(set(float(e) for e in epochs)), dtype=float)
    if ep.size == 0 or np.any(ep < 0):
        raise DPValueError("epochs must be a non-empty list of numbers >= 0")
    # as training counts them (a part of an epoch begun is run): rounded to the nearest, 1 epoch at q = 0.3 was 3 steps
    # where a run of 1 epoch takes 4, so the curve's epsilon was one step short of what that run spends
    steps = np.maximum(0, np.ceil(ep / q - 1e-9)).astype(int)
    rows = []
    for m in methods:
        if m in ("rdp", "pld"):
            # a 1e-3 PLD grid: seconds instead of minutes (and gigabytes) at small sigma, still an upper bound
            eps = epsilon_curve(noise_multiplier=sigma, sample_rate=q, delta=delta, steps=steps.tolist(), accountant=m,
                                pld_discretization=1e-3)
        elif m in ("naive", "advanced"):
            eps = [
                dpsgd_composition_bound(noise_multiplier=sigma, sample_rate=q, steps=int(s), delta=delta, method=m)
                for s in steps
            ]
        else:
            raise DPValueError(f"unknown method {m!r}; choose from {list(METHOD_LABELS)}")
        for e_, s_, v in zip(ep, steps, eps):
            rows.append({"epochs": e_, "steps": int(s_), "method": METHOD_LABELS[m], "epsilon": float(v)})
    return pd.DataFrame(rows)
