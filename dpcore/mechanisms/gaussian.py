"""The Gaussian mechanism: classic and analytic calibration."""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from fractions import Fraction

import dp_accounting
import numpy as np
from scipy import optimize, special

from ..exceptions import DPValueError
from ..validation import check_delta, check_epsilon, check_positive, warn_large_delta
from .additive import add_noise
from .base import Mechanism, check_noise_scale, log_up, round_down, round_up, sqrt_up


def classic_gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """sigma = Delta_2 sqrt(2 ln(1.25/delta)) / epsilon, valid only for epsilon < 1.

    References
    ----------
    Dwork & Roth. The Algorithmic Foundations of Differential Privacy, Theorem A.1 (2014).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if epsilon >= 1:
        raise DPValueError(
            f"the classic Gaussian calibration is only valid for epsilon < 1, got epsilon={epsilon}; "
            "use the analytic Gaussian mechanism (valid for every epsilon)"
        )
    # rounded UP at every step (the quotient, the logarithm, the root, the product): rounded to nearest, the root of a
    # non-square lay half an ulp below the exact one about half the time, and the noise drawn was a hair too small
    return round_up(Fraction(sensitivity) * Fraction(sqrt_up(2 * Fraction(log_up(round_up(Fraction(1.25)
                                                                                          / Fraction(delta))))))
                    / Fraction(epsilon))


def _log_phi(x: float) -> float:
    return float(special.log_ndtr(x))


#: Relative error, in units of the double's rounding 2**-53, allowed for each rounded operation of
#: :func:`analytic_gaussian_delta` (ndtr, log_ndtr and exp are accurate to a few units; 16 is a margin).
_ROUNDING_UNITS = 16.0


def analytic_gaussian_delta(*, sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The delta of the Gaussian mechanism with noise ``sigma`` at ``epsilon``, never below the exact one.

    delta = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)  (Balle & Wang 2018, Thm 8). The two terms nearly
    cancel at small epsilon and small delta (delta 1e-20 from two terms of 5e-10), and each carries a rounding
    error of about ``2**-53 x^2`` relative at an argument x (Phi's slope in log space is |x|): computed as it
    stands, the difference fell up to 18 % below the exact delta (epsilon 1e-9, delta 1e-300), so a noise
    calibrated on it was too small. The bound on those errors is added, so the value is an upper bound (fail
    closed), equal to the exact delta to about 1e-14 relative wherever the terms do not cancel.
    """
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = float(special.ndtr(a - b))
    # below the least normal double ndtr answers 0 (Phi(-37.78) = 1.2e-312 read as 0, so the difference was 0 and a
    # delta of 5e-324 was met by a noise whose exact delta is 8e-316); from its logarithm it keeps what a double holds
    subnormal = first < sys.float_info.min
    if subnormal:
        first = math.exp(_log_phi(a - b))
    # e^eps Phi(-a-b) computed in log space so large epsilon does not overflow
    log_second = epsilon + _log_phi(-a - b)
    # the rounding of a, b and a -+ b moves Phi's argument by ~2**-53 (a + b), its log by that times |x| <= a + b
    spread = min((a + b) ** 2, 1e300) + 1.0 if a + b < 1e150 else 1e300  # (a + b)^2 overflows from 1e154
    # log_second is epsilon less about (a + b)^2 / 2, both huge where epsilon is (a = b at epsilon 5.6e18): their
    # difference, exactly -(a - b)^2 / 2 - ..., is known only to about 2**-53 (a + b)^2, which passes 700 from
    # epsilon ~1e17. Read as certain, a value that rounded above 700 answered delta 0 where the exact one was 0.54
    # Exactly, e^eps Phi(-a-b) <= Phi(a-b) <= 1, so log_second is at most 0: one above 700 is rounding alone, and
    # says nothing of the difference (nothing is known: delta 1)
    if log_second > 700.0:
        return 1.0
    second = math.exp(log_second)
    error = _ROUNDING_UNITS * 2.0**-53 * ((spread * first if first else 0.0)
                                          + ((spread + abs(log_second)) * second if second else 0.0))
    if subnormal and first > 0:  # e^x below the least normal double is rounded to a multiple of the least one
        error += 2 * math.ulp(0.0)
    # never 0: the Gaussian mechanism is (eps, delta)-DP for no delta = 0 (both terms underflowing, at eps 1e308, left
    # a difference of 0 where the exact delta is positive): the least positive double is above such a delta
    return float(min(1.0, max(max(first - second, 0.0) + error, math.ulp(0.0))))


def analytic_gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest sigma giving (epsilon, delta)-DP, for any epsilon > 0.

    References
    ----------
    Balle & Wang. Improving the Gaussian mechanism for differential privacy:
    analytical calibration and optimal denoising. ICML 2018.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    sensitivity = check_positive(sensitivity, "sensitivity")
    # delta(sigma) decreases in sigma: bracket then bisect on log sigma.
    def f(log_s):
        return analytic_gaussian_delta(sigma=math.exp(log_s), epsilon=epsilon, sensitivity=sensitivity) - delta

    lo, hi = math.log(sensitivity) - 10.0, math.log(sensitivity) + 2.0
    if math.exp(lo) == 0.0 or hi > math.log(sys.float_info.max):  # a subnormal sensitivity, or one near 1.8e308
        raise DPValueError(
            f"sensitivity={sensitivity:g} is too {'small' if sensitivity < 1 else 'large'} for the Gaussian "
            "mechanism's noise (a multiple of it) to be computed in double precision: state the query in units where "
            "its sensitivity lies between 1e-300 and 1e300")
    while f(hi) > 0:
        hi += 2.0
        if hi > math.log(sys.float_info.max):  # the noise needed is beyond the largest double
            raise DPValueError(
                f"epsilon={epsilon:g} at delta={delta:g} with sensitivity={sensitivity:g} asks for Gaussian noise of "
                "a standard deviation beyond the largest double (1.8e308): use a larger epsilon or delta (or state "
                "the query in units where its sensitivity is smaller)")
    while f(lo) < 0:
        lo -= 2.0
        if math.exp(lo) < 1e-300:  # the noise needed is below what a double holds with any precision
            raise DPValueError(
                f"epsilon={epsilon:g} at delta={delta:g} with sensitivity={sensitivity:g} asks for Gaussian noise of "
                "a standard deviation below 1e-300, which double precision cannot hold: use a smaller epsilon "
                "(or state the query in units where its sensitivity is larger)")
    log_s = optimize.brentq(f, lo, hi, xtol=1e-12, rtol=1e-12)
    sigma = math.exp(log_s)
    # brentq may land a hair on the wrong side; step up until the guarantee holds
    while analytic_gaussian_delta(sigma=sigma, epsilon=epsilon, sensitivity=sensitivity) > delta:
        sigma *= 1.0 + 1e-10
    return sigma


def analytic_gaussian_epsilon(*, sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest epsilon at which the Gaussian mechanism with noise ``sigma`` is (epsilon, ``delta``)-DP.

    Exact (Balle & Wang 2018, Theorem 8): solves ``analytic_gaussian_delta(epsilon) = delta``; the inverse of
    :func:`analytic_gaussian_sigma`, and the one place dpcore solves the Gaussian's epsilon from its noise (the
    accountant's comparison lines, :class:`~dpcore.mechanisms.NoiseMultiplierGaussian`, the images' whole-image
    epsilon). Fails closed: infinity where no epsilon below 1e300 reaches ``delta`` (a noise far below the
    sensitivity), and never a value whose delta is above ``delta``.

    >>> eps = analytic_gaussian_epsilon(sigma=analytic_gaussian_sigma(epsilon=1.0, delta=1e-5), delta=1e-5)
    >>> abs(eps - 1.0) < 1e-6
    True
    >>> analytic_gaussian_epsilon(sigma=1e-160, delta=1e-5)
    inf

    References
    ----------
    Balle & Wang. Improving the Gaussian mechanism for differential privacy: analytical calibration and
    optimal denoising. ICML 2018.
    """
    sigma = check_positive(sigma, "sigma")
    delta = check_delta(delta, allow_zero=False)
    sensitivity = check_positive(sensitivity, "sensitivity")

    def f(e):
        return analytic_gaussian_delta(sigma=sigma, epsilon=e, sensitivity=sensitivity) - delta

    if f(0.0) <= 0:
        return 0.0
    hi = 1.0
    while f(hi) > 0:
        hi *= 2.0
        if hi > 1e300:  # delta stays above the target at every epsilon double precision holds
            return math.inf
    eps = float(optimize.brentq(f, 0.0, hi, xtol=1e-12))
    while f(eps) > 0:  # brentq may land a hair below the root: the answer must not claim more privacy
        eps = eps * (1.0 + 1e-12) + 1e-15
    return eps


@dataclass(frozen=True)
class Gaussian(Mechanism):
    """Add N(0, sigma^2) noise to every coordinate for (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee of one application; ``delta`` must be > 0.
    sensitivity : float
        L2 sensitivity of the query.
    calibration : {"analytic", "classic"}
        ``"analytic"`` (Balle & Wang 2018; any epsilon, never more noise) or
        ``"classic"`` (Dwork & Roth; requires epsilon < 1).

    Examples
    --------
    >>> g = Gaussian(epsilon=0.5, delta=1e-5, calibration="classic")
    >>> round(g.sigma, 3)
    9.69
    >>> Gaussian(epsilon=0.5, delta=1e-5).sigma < g.sigma
    True
    """

    epsilon: float = field(kw_only=True)  # type: ignore[misc]
    delta: float = field(kw_only=True)  # type: ignore[misc]
    sensitivity: float = field(default=1.0, kw_only=True)
    calibration: str = field(default="analytic", kw_only=True)
    name = "gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", warn_large_delta(check_delta(self.delta, allow_zero=False)))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        if self.calibration not in ("analytic", "classic"):
            raise DPValueError(f"calibration must be 'analytic' or 'classic', got {self.calibration!r}")
        if self.calibration == "classic" and self.epsilon >= 1:
            raise DPValueError(
                f"the classic Gaussian calibration is only valid for epsilon < 1, got epsilon={self.epsilon}; "
                "use calibration='analytic'"
            )
        # Solved once here (the analytic calibration is a root search), not on every access. A plain
        # attribute, not a field: equality, hashing, repr and dataclasses.replace see only the parameters
        # (replace re-runs __post_init__), and pickling carries the solved value along.
        fn = analytic_gaussian_sigma if self.calibration == "analytic" else classic_gaussian_sigma
        object.__setattr__(self, "_sigma", fn(epsilon=self.epsilon, delta=self.delta, sensitivity=self.sensitivity))
        check_noise_scale(self._sigma, f"epsilon={self.epsilon:g} at delta={self.delta:g} with sensitivity "
                                       f"{self.sensitivity:g} asks for Gaussian noise of standard deviation")

    @property
    def sigma(self) -> float:
        """Standard deviation of the added noise (calibrated once, when the mechanism is made)."""
        return self._sigma

    def variance(self) -> float:
        return self.sigma**2

    def randomise(self, values, *, rng=None):
        """``values`` plus noise; ``rng="secure"`` (or secure mode) gives secure noise (:func:`secure_additive`)."""
        return add_noise(values, kind="gaussian", scale=self.sigma, sensitivity=self.sensitivity, rng=rng)

    def density(self, x, center: float = 0.0):
        x = np.asarray(x, dtype=float)
        s = self.sigma
        return np.exp(-0.5 * ((x - center) / s) ** 2) / (s * math.sqrt(2 * math.pi))

    @property
    def dp_event(self):
        # sigma / sensitivity rounded DOWN: to nearest, the event's multiplier was a hair above the noise drawn for
        # about half of all quotients
        multiplier = round_down(Fraction(self.sigma) / Fraction(self.sensitivity))
        return dp_accounting.GaussianDpEvent(noise_multiplier=multiplier)
