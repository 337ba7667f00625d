"""Composition theorems, kept as comparison lines (the accountant is dp_accounting).

These are the bounds a person would use without a moments accountant; the
Accountant page draws them beside RDP and PLD to show how much tighter those are
(Abadi et al. 2016, figure 2).
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..exceptions import DPValueError
from ..mechanisms.base import log_up, round_down, round_up, sqrt_up
from ..mechanisms.gaussian import analytic_gaussian_epsilon
from ..validation import check_delta, check_fraction, check_int, check_nonnegative, check_positive
from .events import added_up


def naive_composition(*, epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """k-fold composition of (epsilon, delta): (k epsilon, k delta)."""
    epsilon = check_nonnegative(epsilon, "epsilon")
    delta = check_delta(delta)
    k = check_int(k, "k", minimum=0)
    # the exact products rounded UP: to nearest, k * epsilon lay half an ulp below k epsilon about half the time
    return added_up(0.0, k, epsilon), min(1.0, added_up(0.0, k, delta))


def advanced_composition(*, epsilon: float, delta: float, k: int, delta_slack: float) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum, Vadhan 2010).

    k-fold (eps, delta) is (sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1), k delta + delta').
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    delta = check_delta(delta)
    k = check_int(k, "k", minimum=0)
    delta_slack = check_delta(delta_slack, "delta_slack", allow_zero=False)
    try:  # e^eps - 1 beyond the largest double (eps > 709.78): the bound is no finite number
        growth = math.expm1(epsilon)
    except OverflowError:
        growth = math.inf
    spent = min(1.0, added_up(delta_slack, k, delta))  # k delta + delta', rounded up
    if not k or not epsilon:
        return 0.0, spent
    if not (math.isfinite(epsilon) and math.isfinite(growth)):
        return math.inf, spent
    # rounded UP (the logarithm, the root, e^eps - 1 and the sum exactly): to nearest, the root of a non-square lay
    # half an ulp below the exact one about half the time, and the epsilon stated a hair below the theorem's
    root = Fraction(sqrt_up(2 * k * Fraction(log_up(round_up(1 / Fraction(delta_slack))))))
    eps = round_up(root * Fraction(epsilon) + k * Fraction(epsilon) * Fraction(math.nextafter(growth, math.inf)))
    return eps, spent


def gaussian_epsilon(*, noise_multiplier: float, delta: float) -> float:
    """Smallest epsilon at which the Gaussian mechanism with ``noise_multiplier`` is (eps, delta)-DP.

    Exact (analytic Gaussian, Balle & Wang 2018): :func:`~dpcore.mechanisms.gaussian.analytic_gaussian_epsilon`
    at sensitivity 1.
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    return analytic_gaussian_epsilon(sigma=sigma, delta=check_delta(delta, allow_zero=False))


def amplified_epsilon(*, epsilon: float, sample_rate: float) -> float:
    """Privacy amplification by Poisson subsampling: ln(1 + q (e^eps - 1)).

    Beyond eps = 700, where e^eps overflows a double, the same value as eps + ln(q + (1 - q) e^-eps).

    >>> 0 <= amplified_epsilon(epsilon=1000.0, sample_rate=0.5) - (1000.0 + math.log(0.5)) < 1e-12
    True
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    q = check_fraction(sample_rate, "sample_rate")
    # every operation rounded UP by an ulp (each is within one of its exact value, and both functions increase): to
    # nearest, the amplified epsilon lay an ulp below the exact one for some (q, epsilon)
    if epsilon > 700.0:
        return _up(epsilon + _up(math.log(_up(q + _up((1.0 - q) * _up(math.exp(-epsilon)))))))
    return _up(math.log1p(_up(q * _up(math.expm1(epsilon)))))


def _up(x: float) -> float:
    """One ulp above ``x``: a bound above a value computed to within an ulp of the exact one."""
    return math.nextafter(x, math.inf)


def dpsgd_composition_bound(
    *, noise_multiplier: float, sample_rate: float, steps: int, delta: float, method: str
) -> float:
    """Epsilon of DP-SGD by a composition theorem instead of an accountant.

    Each step is the Gaussian mechanism at a per-step delta0, amplified by
    subsampling to (ln(1 + q(e^eps0 - 1)), q delta0). ``"naive"`` composes with
    T q delta0 = delta; ``"advanced"`` spends half of delta on the slack delta'
    and half on T q delta0. A step whose epsilon is infinite (a noise too small for any finite epsilon at delta0)
    makes the bound infinite.
    """
    steps = check_int(steps, "steps", minimum=0)
    if steps == 0:
        return 0.0
    q = check_fraction(sample_rate, "sample_rate")
    delta = check_delta(delta, allow_zero=False)
    # each step's delta0 rounded DOWN, so that the steps together spend at most delta
    if method == "naive":
        delta0 = round_down(Fraction(delta) / (steps * Fraction(q)))
        eps_one = gaussian_epsilon(noise_multiplier=noise_multiplier, delta=min(delta0, 0.5))
        if not math.isfinite(eps_one):
            return math.inf
        eps_step = amplified_epsilon(epsilon=eps_one, sample_rate=q)
        return naive_composition(epsilon=eps_step, delta=0.0, k=steps)[0]
    if method == "advanced":
        delta0 = round_down(Fraction(delta) / (2 * steps * Fraction(q)))
        eps_one = gaussian_epsilon(noise_multiplier=noise_multiplier, delta=min(delta0, 0.5))
        if not math.isfinite(eps_one):
            return math.inf
        eps_step = amplified_epsilon(epsilon=eps_one, sample_rate=q)
        return advanced_composition(epsilon=eps_step, delta=0.0, k=steps, delta_slack=delta / 2)[0]
    raise DPValueError(f"method must be 'naive' or 'advanced', got {method!r}")
