"""Independent references shared by the PATE tests."""
from __future__ import annotations

import math

from scipy import optimize, stats


def exact_gaussian_epsilon(s: float, delta: float) -> float:
    """Exact epsilon of a unit-sensitivity Gaussian with standard deviation s (Balle & Wang 2018, Theorem 8), by
    root finding: the smallest eps with Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s) <= delta."""
    def d(eps):
        return stats.norm.cdf(1 / (2 * s) - eps * s) - math.exp(eps) * stats.norm.cdf(-1 / (2 * s) - eps * s) - delta
    return optimize.brentq(d, 0.0, 500.0)
