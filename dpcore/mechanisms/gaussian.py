"""The Gaussian mechanism: classic and analytic calibration."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import dp_accounting
import numpy as np
from scipy import optimize, special

from ..exceptions import DPValueError
from ..validation import check_delta, check_epsilon, check_positive
from .additive import add_noise
from .base import Mechanism


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
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def _log_phi(x: float) -> float:
    return float(special.log_ndtr(x))


def analytic_gaussian_delta(*, sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The exact delta of the Gaussian mechanism with noise ``sigma`` at ``epsilon``.

    delta = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)  (Balle & Wang 2018, Thm 8).
    """
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = special.ndtr(a - b)
    # e^eps Phi(-a-b) computed in log space so large epsilon does not overflow
    second = math.exp(epsilon + _log_phi(-a - b)) if (-a - b) > -40 else 0.0
    return float(max(first - second, 0.0))


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
    while f(hi) > 0:
        hi += 2.0
    while f(lo) < 0:
        lo -= 2.0
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
        object.__setattr__(self, "delta", check_delta(self.delta, allow_zero=False))
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
        return dp_accounting.GaussianDpEvent(noise_multiplier=self.sigma / self.sensitivity)
