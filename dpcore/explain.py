"""The "what epsilon means" explainer behind the home page (seed 003's neighbouring databases).

Two databases D and D' differ in one person's record; a count query answered
through Laplace or Gaussian noise has output densities p_D and p_D' whose ratio
(the privacy loss) stays within e^epsilon (Laplace), or exceeds it on a set S
where Pr_D[S] - e^epsilon Pr_D'[S] <= delta (Gaussian).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .exceptions import DPValueError
from .mechanisms import Gaussian, Laplace
from .rng import as_generator
from .validation import check_delta, check_epsilon, check_positive

_PEOPLE = ["Ross", "Monica", "Joey", "Phoebe", "Chandler"]


def neighbouring_databases() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 003's example: D and D' differ only in Chandler's diabetes status."""
    d = pd.DataFrame({"Name": _PEOPLE, "Has diabetes": [1, 1, 0, 0, 1]})
    d2 = d.copy()
    d2.loc[d2.Name == "Chandler", "Has diabetes"] = 0
    return d, d2


def _mechanism(mechanism: str, *, epsilon: float, delta: float, sensitivity: float):
    if mechanism == "laplace":
        return Laplace(epsilon=epsilon, sensitivity=sensitivity)
    if mechanism == "gaussian":
        return Gaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    raise DPValueError(f"mechanism must be 'laplace' or 'gaussian', got {mechanism!r}")


def count_query_densities(
    *, mechanism: str, epsilon: float, delta: float = 1e-5, sensitivity: float = 1.0,
    count_d: float = 3.0, count_d2: float = 2.0, points: int = 801,
) -> tuple[pd.DataFrame, dict]:
    """Densities of the noisy count on D and D', and the privacy-loss ratio between them.

    Returns a DataFrame (``x, density_D, density_D2, log_ratio``) and a summary
    dict: ``noise_scale`` (Laplace b or Gaussian sigma), ``max_abs_log_ratio``
    on the plotted range, ``e_epsilon``, ``mass_above`` = Pr_D[S] for the set S of
    outputs where the loss exceeds epsilon (0 for Laplace), and ``delta_actual`` =
    Pr_D[S] - e^epsilon Pr_D'[S], the hockey-stick divergence, which is what
    (epsilon, delta)-DP bounds by delta (Balle & Wang 2018).
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if mechanism == "gaussian":
        delta = check_delta(delta, allow_zero=False)
    if abs(count_d - count_d2) > sensitivity + 1e-12:
        raise DPValueError(
            f"the two counts differ by {abs(count_d - count_d2)}, more than the sensitivity {sensitivity}: "
            "the guarantee only covers neighbours within the sensitivity"
        )
    mech = _mechanism(mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    scale = mech.scale if mechanism == "laplace" else mech.sigma
    lo, hi = min(count_d, count_d2) - 6 * scale, max(count_d, count_d2) + 6 * scale
    x = np.linspace(lo, hi, points)
    p1, p2 = mech.density(x, count_d), mech.density(x, count_d2)
    if mechanism == "laplace":
        log_ratio = (np.abs(x - count_d2) - np.abs(x - count_d)) / scale
        mass_above = delta_actual = 0.0
    else:
        log_ratio = ((x - count_d2) ** 2 - (x - count_d) ** 2) / (2 * scale**2)
        # loss > eps  <=>  x beyond a threshold on the side of count_d
        diff = count_d - count_d2
        if diff == 0:
            mass_above = delta_actual = 0.0
        else:
            from scipy.stats import norm

            # log ratio is linear in x: (diff/s^2)(x - mid); solve for x where it equals epsilon
            mid = (count_d + count_d2) / 2
            t = mid + epsilon * scale**2 / diff
            if diff > 0:
                mass_above, mass_above_2 = float(norm.sf(t, count_d, scale)), float(norm.sf(t, count_d2, scale))
            else:
                mass_above, mass_above_2 = float(norm.cdf(t, count_d, scale)), float(norm.cdf(t, count_d2, scale))
            delta_actual = max(0.0, mass_above - math.exp(epsilon) * mass_above_2)
    df = pd.DataFrame({"x": x, "density_D": p1, "density_D2": p2, "log_ratio": log_ratio})
    summary = {
        "noise_scale": float(scale),
        "max_abs_log_ratio": float(np.max(np.abs(log_ratio))),
        "epsilon": epsilon,
        "e_epsilon": math.exp(epsilon),
        "mass_above": mass_above,
        "delta_actual": delta_actual,
    }
    return df, summary


def noisy_count(*, mechanism: str, epsilon: float, delta: float = 1e-5, sensitivity: float = 1.0,
                true_count: float, seed=None) -> float:
    """One noisy answer to the count query (seeded for demonstration)."""
    mech = _mechanism(mechanism, epsilon=check_epsilon(epsilon), delta=delta, sensitivity=sensitivity)
    return float(mech.randomise(true_count, rng=as_generator(seed)))
