"""Noise you could ship: exact discrete samplers fed by the operating system's cryptographic source.

The seeded mechanisms (:class:`~dpcore.mechanisms.Laplace` and the rest) draw floating-point noise from numpy's
generator: right for teaching, where the same inputs must draw the same picture, but unsafe for a real release.
Anyone who knows the seed reproduces the noise, and even without it the floating-point sampler leaks: the doubles
that ``x + Laplace`` can output depend on ``x``, so an observer can tell neighbouring databases apart from a single
release far beyond what e^ε allows (Mironov 2012; :mod:`dpcore.audit.floating_point` carries out the attack).

:class:`SecureLaplace` avoids both (and :class:`SecureGaussian` likewise, for (ε, δ) with discrete Gaussian
noise). The true answer is rounded to a grid of spacing ``granularity`` (a power of
two, so grid points are exact doubles), integer noise from the discrete Laplace distribution is added on that grid
by the exact rejection sampler of Canonne, Kamath & Steinke (2020, Algorithms 1 and 2), using only integer and
rational arithmetic, and every random bit comes from :mod:`secrets` (the OS CSPRNG). The output is a grid point, so
every grid point can come from every input and no floating-point artefact exists.

What it costs: rounding can move two neighbouring answers apart by up to ``floor(Δ/g) + 1`` grid steps instead of
``Δ/g``, so the noise scale is ``(floor(Δ/g) + 1)·g / ε`` rather than ``Δ/ε`` (with the default grid of
``Δ/1024``, rounded down to a power of two, at most 0.2% more). :attr:`SecureLaplace.scale_increase` states it and
the privacy guarantee is exactly ``ε``: P[Z = z] ∝ exp(-|z|·ε/Δ_grid) is ε-DP for integer sensitivity Δ_grid.
A seed is refused: reproducible noise is what this mode exists to prevent.

References
----------
Mironov. On significance of the least significant bits for differential privacy. CCS 2012.
Canonne, Kamath, Steinke. The discrete Gaussian for differential privacy. NeurIPS 2020 (Algorithms 1-3,
Theorem 7).
Balle, Wang. Improving the Gaussian mechanism for differential privacy. ICML 2018.
"""
from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from fractions import Fraction

import dp_accounting
import numpy as np

from ..exceptions import DPValueError
from ..rng import SECURE, SecureRandom
from ..validation import check_delta, check_epsilon, check_positive, warn_large_delta
from .additive import DEFAULT_STEPS_PER_SENSITIVITY, MAX_GRID_STEPS
from .base import Mechanism, PureEpsilonMechanism, as_float_array, check_noise_scale, round_up
from .gaussian import _ROUNDING_UNITS, analytic_gaussian_sigma


def _bernoulli(p: Fraction) -> bool:
    """True with probability exactly ``p`` (0 <= p <= 1), from the OS's cryptographic source."""
    return secrets.randbelow(p.denominator) < p.numerator


def _bernoulli_exp_small(gamma: Fraction) -> bool:
    """True with probability exp(-gamma) for 0 <= gamma <= 1 (Canonne et al. 2020, Algorithm 1, first case)."""
    k = 1
    while _bernoulli(gamma / k):
        k += 1
    return k % 2 == 1


def bernoulli_exp(gamma: Fraction) -> bool:
    """True with probability exactly exp(-gamma), gamma >= 0 rational (Canonne et al. 2020, Algorithm 1)."""
    gamma = Fraction(gamma)
    if gamma < 0:
        raise DPValueError(f"gamma must be >= 0, got {gamma}")
    for _ in range(math.floor(gamma)):
        if not _bernoulli_exp_small(Fraction(1)):
            return False
    return _bernoulli_exp_small(gamma - math.floor(gamma))


def discrete_laplace(scale: Fraction) -> int:
    """One draw with P[Z = z] ∝ exp(-|z| / scale), scale = t/s > 0 rational (Canonne et al. 2020, Algorithm 2)."""
    scale = Fraction(scale)
    if scale <= 0:
        raise DPValueError(f"scale must be > 0, got {scale}")
    t, s = scale.numerator, scale.denominator
    while True:
        u = secrets.randbelow(t)
        if not bernoulli_exp(Fraction(u, t)):
            continue
        v = 0
        while bernoulli_exp(Fraction(1)):
            v += 1
        y = (u + t * v) // s
        negative = secrets.randbits(1) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


#: The widest discrete Laplace noise, in grid steps: a draw 60 scales out (probability e^-60, about 1e-26) still lies
#: within the 2**52 steps of the exact grid (:data:`~dpcore.mechanisms.additive.MAX_GRID_STEPS`).
MAX_NOISE_STEPS = MAX_GRID_STEPS / 64


def default_granularity(sensitivity: float) -> float:
    """The largest power of two at most ``sensitivity / 1024``: the grid the answer is rounded to."""
    return 2.0 ** math.floor(math.log2(sensitivity / DEFAULT_STEPS_PER_SENSITIVITY))


def _grid(sensitivity: float, granularity: float | None) -> float:
    """The output grid's spacing: ``granularity`` if given (it must be a power of two), else the default."""
    g = default_granularity(sensitivity) if granularity is None else check_positive(granularity, "granularity")
    if math.frexp(g)[0] != 0.5:
        raise DPValueError(f"granularity must be a power of two (such as {default_granularity(sensitivity)}) so "
                           f"every grid point is an exact double, got {g!r}")
    return g


def _noisy_on_grid(values, granularity: float, draw, *, rng, seeded: str):
    """Round ``values`` to the grid and add one integer ``draw()`` per value; a seed (``rng``) is refused."""
    if rng is not None and not isinstance(rng, SecureRandom) and not (isinstance(rng, str) and rng == SECURE):
        raise DPValueError("secure noise takes no seed or generator (rng): its bits come from the operating "
                           "system's cryptographic source so nobody can reproduce them; drop the seed, or use "
                           f"the seeded {seeded} mechanism for a reproducible classroom demo")
    arr, scalar = as_float_array(values)
    steps = arr / granularity
    if not np.all(np.isfinite(steps)) or np.any(np.abs(steps) >= MAX_GRID_STEPS):
        raise DPValueError(f"values must be finite and within ±{MAX_GRID_STEPS * granularity:g} "
                           f"(2**52 grid steps of {granularity:g}); clip the query's answer first")
    noise = np.fromiter((draw() for _ in range(steps.size)), dtype=np.int64, count=steps.size).reshape(steps.shape)
    out = (np.rint(steps).astype(np.int64) + noise) * granularity
    return float(out) if scalar else out


@dataclass(frozen=True)
class SecureLaplace(PureEpsilonMechanism):
    """ε-DP for a query of L1 sensitivity ``sensitivity``: grid rounding plus exact discrete Laplace noise.

    Parameters
    ----------
    epsilon : float
        Privacy budget of one application, > 0.
    sensitivity : float
        L1 sensitivity of the query.
    granularity : float or None
        Spacing of the output grid, a power of two (default: :func:`default_granularity`).

    Examples
    --------
    >>> m = SecureLaplace(epsilon=1.0, sensitivity=1.0)
    >>> m.granularity, m.grid_sensitivity
    (0.0009765625, 1025)
    >>> float(m.randomise(10.0) / m.granularity).is_integer()
    True
    """

    granularity: float | None = field(default=None, kw_only=True)
    name = "secure_laplace"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "granularity", _grid(self.sensitivity, self.granularity))
        if self.grid_scale > MAX_NOISE_STEPS:
            raise DPValueError(
                f"epsilon={self.epsilon:g} with sensitivity {self.sensitivity:g} asks for discrete Laplace noise of "
                f"scale {round_up(self.grid_scale):.3g} grid steps of {self.granularity:g}: beyond "
                f"{MAX_NOISE_STEPS:.3g} grid steps its draws leave the grid that doubles hold exactly (2**52 steps); "
                "use a larger epsilon, or a coarser granularity")

    @property
    def grid_sensitivity(self) -> int:
        """How many grid steps two neighbouring answers can be apart after rounding: floor(Δ/g) + 1."""
        return math.floor(self.sensitivity / self.granularity) + 1

    @property
    def grid_scale(self) -> Fraction:
        """Discrete Laplace scale in grid steps, exactly grid_sensitivity / epsilon."""
        return Fraction(self.grid_sensitivity) / Fraction(self.epsilon)

    @property
    def scale(self) -> float:
        """The noise scale in the answer's units: grid_sensitivity · granularity / epsilon."""
        return float(self.grid_scale) * self.granularity

    @property
    def scale_increase(self) -> float:
        """What rounding to the grid costs: this scale over the continuous Laplace's Δ/ε (just above 1)."""
        return self.grid_sensitivity * self.granularity / self.sensitivity

    def variance(self) -> float:
        """Variance of the discrete Laplace noise in the answer's units squared: 2 q / (1 - q)^2 grid steps squared,
        q = exp(-1/grid_scale), times the granularity squared (about 2 scale^2, the continuous Laplace's).

        >>> m = SecureLaplace(epsilon=0.5, sensitivity=1.0)
        >>> round(m.variance(), 3), round(2 * m.scale**2, 3)
        (8.016, 8.016)
        """
        q = math.exp(-1.0 / float(self.grid_scale))
        return 2.0 * q / (1.0 - q) ** 2 * self.granularity**2

    def randomise(self, values, *, rng=None):
        scale = self.grid_scale
        return _noisy_on_grid(values, self.granularity, lambda: discrete_laplace(scale), rng=rng, seeded="Laplace")

    def pmf(self, k) -> np.ndarray:
        """P[noise = k grid steps] (the exact discrete Laplace law the sampler draws from)."""
        q = math.exp(-1.0 / float(self.grid_scale))
        return (1.0 - q) / (1.0 + q) * q ** np.abs(np.asarray(k, dtype=float))

    @property
    def dp_event(self):
        """The discrete Laplace of parameter 1 / grid_scale (rounded up: less noise stated, never more) on answers
        grid_sensitivity steps apart: ε-DP at delta 0; a PLD ledger composes its own distribution, whose delta at a
        smaller epsilon is above the continuous Laplace's on a coarse grid (20 uses at ε 2 on a grid of 1: ε 39.99
        at delta 1e-5 where the continuous Laplace gives 39.11)."""
        return dp_accounting.dp_event.DiscreteLaplaceDpEvent(noise_parameter=round_up(1 / self.grid_scale),
                                                    sensitivity=self.grid_sensitivity)


def discrete_gaussian(sigma2: Fraction) -> int:
    """One draw with P[Z = z] ∝ exp(-z² / (2σ²)), σ² > 0 rational (Canonne et al. 2020, Algorithm 3).

    Rejection from the discrete Laplace of scale t = floor(σ) + 1: accept y with probability
    exp(-(|y| - σ²/t)² / (2σ²)), evaluated exactly by :func:`bernoulli_exp`.
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise DPValueError(f"sigma² must be > 0, got {sigma2}")
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1
    while True:
        y = discrete_laplace(Fraction(t))
        gamma = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
        if bernoulli_exp(gamma):
            return y


#: Above this σ (in grid steps) :func:`discrete_gaussian_delta` bounds the tails instead of summing them term by term:
#: the sums hold about 80 σ terms (at ε 0.01, δ 1e-5 on the default grid: 2e7 of them, 0.6 GB of arrays; at ε 1e-6 a
#: few billion, more memory than a server has).
EXACT_SUM_SIGMA = 2e4


def discrete_gaussian_delta(sigma: float, epsilon: float, sensitivity: int) -> float:
    """The δ of the discrete Gaussian N_Z(0, σ²) at ε for integer L2 sensitivity Δ (one coordinate).

    Canonne et al. (2020, Theorem 7): δ = P[X > εσ²/Δ - Δ/2] - e^ε P[X > εσ²/Δ + Δ/2] for X ~ N_Z(0, σ²),
    the tails summed over the integers: exactly up to :data:`EXACT_SUM_SIGMA`, above it an upper bound
    (:func:`_discrete_gaussian_delta_bound`) in constant memory, never below the exact value.
    """
    if sigma > EXACT_SUM_SIGMA:
        return _discrete_gaussian_delta_bound(sigma, epsilon, sensitivity)
    reach = int(math.ceil(sigma * 40 + epsilon * sigma**2 / sensitivity + sensitivity))
    z = np.arange(-reach, reach + 1, dtype=float)
    exponent = z**2 / (2.0 * sigma**2)
    w = np.exp(-exponent)
    w /= w.sum()
    low, high = _first_integers_above(sigma, epsilon, sensitivity)
    first, second = w[z >= low].sum(), math.exp(epsilon) * w[z >= high].sum()
    # the two tails nearly cancel at a small delta, and each carries the rounding of numpy's pairwise sums (about
    # log2(n) units of 2**-53 relative) and of its exp, whose argument z^2 / 2 sigma^2 is rounded by a unit of
    # itself, a relative error of that many units in the term (z 52 at sigma 1.5: 600 units): that bound is added, as
    # analytic_gaussian_delta adds its own, so the value is never below the exact delta (summed as it stands it fell
    # up to 5e-13 relative below it; with the sums' rounding alone, 1.3e-3 below it at delta 7.6e-273)
    units = w * (exponent + math.log2(z.size) + 4.0)
    error = _ROUNDING_UNITS * 2.0**-53 * (units[z >= low].sum() + math.exp(epsilon) * units[z >= high].sum())
    return float(min(1.0, max(0.0, first - second) + error))


def _first_integers_above(sigma: float, epsilon: float, sensitivity: int) -> tuple[int, int]:
    """The least integers above εσ²/Δ - Δ/2 and above εσ²/Δ + Δ/2, the two tails' thresholds in Theorem 7 (Canonne
    et al. 2020), from the exact rationals: computed in floating point, εσ²/Δ - Δ/2 rounded onto an integer m from
    just below it (σ 1.5, Δ 3, ε 59.33333333333333: 42.9999999999999964 read as 43), and the first tail lost its
    largest term P[X = m], a δ of 2.8105879e-188 where the exact one is 2.8105924e-188 (below it by 1.6e-6 of
    itself, and by more the larger ε / Δ)."""
    cut = Fraction(epsilon) * Fraction(sigma) ** 2 / sensitivity
    return math.floor(cut - Fraction(sensitivity, 2)) + 1, math.floor(cut + Fraction(sensitivity, 2)) + 1


def _discrete_gaussian_delta_bound(sigma: float, epsilon: float, sensitivity: int) -> float:
    """An upper bound on the δ of :func:`discrete_gaussian_delta` from integrals, for a large σ.

    With f(z) = exp(-z² / 2σ²) and I(x) = σ √(π/2) erfc(x / (σ √2)) its integral from x on, the tail
    S(m) = Σ_{z ≥ m} f(z) for an integer m ≥ 0 is, where f is convex from m - 1/2 on (m - 1/2 ≥ σ), in
    [I(m) + f(m)/2, I(m - 1/2)] (Hermite-Hadamard: the trapezoid rule over- and the midpoint rule underestimates a
    convex function's integral). Otherwise S(m) = I(m) + f(m)/2 + Σ_{z ≥ m} f''(ξ_z)/12 (the trapezoid rule's error on
    each [z, z + 1]), where f'' = (z²/σ² - 1) f / σ² is negative on [0, σ), at least -1/σ², and positive beyond, with
    ∫_σ^∞ f'' = e^(-1/2)/σ and a maximum 2 e^(-3/2)/σ²: the error lies between -(σ - m + 2) / (12 σ²) and
    (e^(-1/2)/σ + 8 e^(-3/2)/σ²) / 12, a few 1e-11 of N at σ = 2e4 (the bound f(m) + I(m) of a decreasing f was off by
    up to f(m), a whole share 1/(σ √(2π)), which at a sensitivity of one or two grid steps and a small ε doubled δ).
    For m < 0, S(m) = N - S(1 - m) by symmetry. The normaliser
    N = Σ_z f(z) is σ √(2π) Σ_k exp(-2π²σ²k²) (Poisson summation), between σ √(2π) and σ √(2π) (1 + 3 exp(-2π²σ²))
    for σ ≥ 1. δ is bounded by the upper bound of the first probability less e^ε times
    the lower bound of the second.
    """
    root2 = sigma * math.sqrt(2.0)
    n_lo = sigma * math.sqrt(2.0 * math.pi)
    n_hi = n_lo * (1.0 + 3.0 * math.exp(-2.0 * math.pi**2 * sigma**2))

    def integral(x: float) -> float:
        return sigma * math.sqrt(math.pi / 2.0) * math.erfc(x / root2)

    # the trapezoid rule's error over [m, inf), where f is concave on [0, σ): at most what the convex part adds,
    # the sum of the largest f'' on each unit interval, at most (∫_σ^∞ f'' + 4 max f'') / 12 for the unimodal
    # f'' > 0 (each interval but the three around its peak is below the integral over its neighbour nearer it)
    convex_excess = (math.exp(-0.5) / sigma + 8.0 * math.exp(-1.5) / sigma**2) / 12.0

    def tail(m: int) -> tuple[float, float]:  # (lower, upper) bounds of S(m)
        f = math.exp(-(m * m) / (2.0 * sigma**2))
        if m - 0.5 >= sigma:  # f convex from m - 1/2 on: the trapezoid rule over- and the midpoint rule underestimates
            return integral(m) + f / 2.0, integral(m - 0.5)
        if m >= 0:  # the trapezoid rule from m on, its error Σ f''(ξ)/12 bounded by the sign of f'' (see above)
            base = integral(m) + f / 2.0
            return base - (max(0.0, sigma - m) + 2.0) / (12.0 * sigma**2), base + convex_excess
        low, high = tail(1 - m)
        return max(n_lo - high, 0.0), n_hi - low

    low, high = _first_integers_above(sigma, epsilon, sensitivity)
    first = tail(low)[1] / n_lo  # P[X > cut - Δ/2], from above
    second = tail(high)[0] / n_hi  # P[X > cut + Δ/2], from below
    # each term carries the rounding of erfc, exp and a few products and quotients (a few units of 2^-53 each):
    # widened by 1e-13 of itself, far above that, so the difference of two close terms never falls below the
    # exact one in floating point (the bound's own slack above is larger, but is the mathematics', not the floats')
    return float(min(1.0, max(0.0, first * (1.0 + 1e-13) - math.exp(epsilon) * second * (1.0 - 1e-13))))


#: The largest ε a :class:`SecureGaussian` accounts: e^ε in its exact δ (Theorem 7) overflows double precision above
#: about 709.8.
MAX_GAUSSIAN_EPSILON = 700.0


@dataclass(frozen=True)
class SecureGaussian(Mechanism):
    """(ε, δ)-DP for a scalar query of sensitivity ``sensitivity``: grid rounding plus exact discrete Gaussian noise.

    The answer is rounded to a power-of-two grid (as :class:`SecureLaplace`), σ in grid steps is the analytic
    Gaussian calibration (Balle & Wang 2018) for the rounded sensitivity ``floor(Δ/g) + 1``, and integer noise is
    drawn from the discrete Gaussian with that σ by Canonne, Kamath & Steinke's exact sampler (2020, Algorithm 3)
    from the OS's cryptographic source. Their Theorem 7 gives the discrete Gaussian's exact δ, which
    :attr:`delta_exact` reports: it never exceeds the δ asked for (the discrete Gaussian is at least as private
    as the continuous one at the same σ, up to the sampling of the tails checked here). A seed is refused.

    Examples
    --------
    >>> m = SecureGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    >>> m.delta_exact <= 1e-5
    True
    """

    epsilon: float = field(kw_only=True)  # type: ignore[misc]
    delta: float = field(kw_only=True)  # type: ignore[misc]
    sensitivity: float = field(default=1.0, kw_only=True)
    granularity: float | None = field(default=None, kw_only=True)
    name = "secure_gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.epsilon > MAX_GAUSSIAN_EPSILON:  # e^ε in Theorem 7's δ overflows double precision
            raise DPValueError(f"SecureGaussian: epsilon={self.epsilon:g} is beyond what its exact δ can be computed "
                               f"for (e^ε overflows double precision above about 709); use epsilon <= "
                               f"{MAX_GAUSSIAN_EPSILON:g}")
        object.__setattr__(self, "delta", warn_large_delta(check_delta(self.delta, allow_zero=False)))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "granularity", _grid(self.sensitivity, self.granularity))
        steps = analytic_gaussian_sigma(epsilon=self.epsilon, delta=self.delta, sensitivity=self.grid_sensitivity)
        if steps > MAX_NOISE_STEPS:  # a draw 60 σ out would leave the exact grid, as for SecureLaplace
            raise DPValueError(
                f"epsilon={self.epsilon:g} (delta={self.delta:g}) with sensitivity {self.sensitivity:g} asks for "
                f"discrete Gaussian noise of σ = {steps:.3g} grid steps of {self.granularity:g}: beyond "
                f"{MAX_NOISE_STEPS:.3g} grid steps its draws leave the grid that doubles hold exactly (2**52 steps); "
                "use a larger epsilon, or a coarser granularity")
        # the continuous calibration, then checked on the integers (Theorem 7): widened by 0.1 % steps if the
        # discrete Gaussian's exact δ at this σ were above the δ asked for
        for _ in range(1000):
            if discrete_gaussian_delta(steps, self.epsilon, self.grid_sensitivity) <= self.delta:
                break
            steps *= 1.001
        else:  # fail closed: never a mechanism whose δ is above the one asked for
            raise DPValueError(
                f"the discrete Gaussian for epsilon={self.epsilon:g}, delta={self.delta:g} on a grid of "
                f"{self.granularity:g} was widened to σ = {steps:.4g} grid steps and its delta was still not met; "
                "use a finer granularity or a larger delta")
        check_noise_scale(steps * self.granularity, f"epsilon={self.epsilon:g} at delta={self.delta:g} with "
                                                    f"sensitivity {self.sensitivity:g} asks for Gaussian noise of "
                                                    "standard deviation")
        object.__setattr__(self, "_sigma_steps", steps)

    grid_sensitivity = SecureLaplace.grid_sensitivity
    scale_increase = SecureLaplace.scale_increase

    @property
    def sigma_steps(self) -> Fraction:
        """σ in grid steps, as the exact rational the sampler uses (rounded up to a multiple of 2**-20)."""
        return Fraction(math.ceil(self._sigma_steps * 2**20), 2**20)

    @property
    def sigma(self) -> float:
        """σ in the answer's units: sigma_steps · granularity."""
        return float(self.sigma_steps) * self.granularity

    @property
    def delta_exact(self) -> float:
        """The discrete Gaussian's exact δ at this ε (Canonne et al. 2020, Theorem 7), or above
        :data:`EXACT_SUM_SIGMA` grid steps an upper bound within a fraction of a percent of it: at most
        :attr:`delta`."""
        return discrete_gaussian_delta(float(self.sigma_steps), self.epsilon, self.grid_sensitivity)

    def variance(self) -> float:
        return self.sigma**2  # an upper bound: the discrete Gaussian's variance is below σ² (Canonne et al. 2020)

    def randomise(self, values, *, rng=None):
        s2 = self.sigma_steps**2
        return _noisy_on_grid(values, self.granularity, lambda: discrete_gaussian(s2), rng=rng, seeded="Gaussian")

    def pmf(self, k) -> np.ndarray:
        """P[noise = k grid steps] (the discrete Gaussian law the sampler draws from)."""
        s = float(self.sigma_steps)
        reach = int(math.ceil(40 * s)) + 1
        norm = np.exp(-(np.arange(-reach, reach + 1, dtype=float) ** 2) / (2 * s * s)).sum()
        return np.exp(-np.asarray(k, dtype=float) ** 2 / (2 * s * s)) / norm

    @property
    def dp_event(self):
        """The discrete Gaussian of the grid's σ and sensitivity (:class:`~dpcore.accounting.events.
        DiscreteGaussianDpEvent`): to RDP the continuous Gaussian's curve, which bounds it (Canonne et al. 2020,
        Theorem 4); to a PLD ledger its own privacy loss distribution, whose δ is above the continuous one's on a
        coarse grid. A single use is covered exactly by :attr:`delta_exact`."""
        from ..accounting.events import DiscreteGaussianDpEvent

        return DiscreteGaussianDpEvent.of(sigma=float(self.sigma_steps), sensitivity=self.grid_sensitivity)
