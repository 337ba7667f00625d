"""Lower bounds on the epsilon of DP-SGD's mechanism, computed here without dp_accounting or dpcore.

The mechanism: T steps, each a Poisson-subsampled Gaussian (rate q, noise multiplier sigma), add/remove
neighbours; what dp_accounting's accountants bound from above. Any reported epsilon below one of these is
a privacy claim that is false.

* :func:`threshold_lower_bound` (any q): the test "some step's output exceeds c". With the record present,
  each step exceeds c with probability at least ``q Phi_bar((c - 1) / sigma)``; without it, with probability
  ``Phi_bar(c / sigma)``. So ``P(E) >= 1 - (1 - q Phi_bar((c-1)/sigma))^T`` and ``Q(E) <= T Phi_bar(c/sigma)``,
  and (epsilon, delta)-DP needs ``P(E) <= e^epsilon Q(E) + delta``: epsilon >= log((P(E) - delta) / Q(E)).
  At tiny sigma this is beyond any double (the answer must be infinity).
* :func:`composed_gaussian_epsilon` (q = 1): exact. T Gaussians of noise sigma are one Gaussian of noise
  sigma / sqrt(T), whose epsilon at delta solves Balle & Wang (2018, Theorem 8)
  ``Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) = delta`` with ``mu = sqrt(T) / sigma``.
"""
from __future__ import annotations

import math

from scipy import optimize, stats

#: Relative and absolute slack for the rounding of these formulas (a lower bound must stay below the truth).
_REL, _ABS = 1e-7, 1e-9


def threshold_lower_bound(*, sigma: float, q: float, steps: int, delta: float) -> float:
    """max over thresholds c of log((P(E_c) - delta) / Q(E_c)) (0 if no threshold says anything)."""
    best = 0.0
    ks = (-3, -2, -1, 0, 1, 2, 3, 4, 5)
    cands = {0.5, 1.0} | {1.0 + k * sigma for k in ks} | {0.5 + k * sigma for k in ks} | {k * sigma for k in ks if k}
    for c in cands:
        p_one = q * math.exp(float(stats.norm.logsf((c - 1.0) / sigma)))
        p = 1.0 if p_one >= 1.0 else -math.expm1(steps * math.log1p(-p_one))
        if not p > 2.0 * delta:
            continue
        log_q = min(0.0, math.log(steps) + float(stats.norm.logsf(c / sigma)))
        best = max(best, math.log(p - delta) - log_q)
    return best if math.isinf(best) else max(0.0, best * (1 - _REL) - _ABS)


def composed_gaussian_epsilon(*, sigma: float, steps: int, delta: float) -> float | None:
    """Exact epsilon of ``steps`` Gaussians of noise ``sigma`` (sensitivity 1), or None where mu = sqrt(T)/sigma is
    outside [1e-3, 40] (the threshold bound covers large mu; small mu gives epsilon near 0)."""
    mu = math.sqrt(steps) / sigma
    if not 1e-3 <= mu <= 40:
        return None

    def excess(eps: float) -> float:
        second = math.exp(eps + float(stats.norm.logcdf(-mu / 2 - eps / mu)))
        return float(stats.norm.cdf(mu / 2 - eps / mu)) - second - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    return max(0.0, optimize.brentq(excess, 0.0, hi, xtol=1e-12) * (1 - _REL) - _ABS)


def dpsgd_lower_bound(*, sigma: float, q: float, steps: int, delta: float) -> float:
    """The larger of the bounds that apply."""
    best = threshold_lower_bound(sigma=sigma, q=q, steps=steps, delta=delta)
    if q == 1.0 and not math.isinf(best):
        exact = composed_gaussian_epsilon(sigma=sigma, steps=steps, delta=delta)
        if exact is not None:
            best = max(best, exact)
    return best
