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
from ..rng import as_generator, wants_secure
from ..validation import check_epsilon, check_positive
from .base import Mechanism, PureEpsilonMechanism, as_float_array

#: grid steps per unit of sensitivity by default (the grid is then rounded down to a power of two)
DEFAULT_STEPS_PER_SENSITIVITY = 1024
#: answers are refused beyond this many grid steps from zero (grid points stay exact doubles below 2**53)
MAX_GRID_STEPS = 2**52


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
    from ..rng import SECURE, SecureRandom

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
        """Variance of the discrete Laplace noise: 2 q / (1 - q)^2 grid steps squared, q = exp(-1/scale)."""
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
        return dp_accounting.LaplaceDpEvent(noise_multiplier=float(self.grid_scale) / self.grid_sensitivity)


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


def discrete_gaussian_delta(sigma: float, epsilon: float, sensitivity: int) -> float:
    """The exact δ of the discrete Gaussian N_Z(0, σ²) at ε for integer L2 sensitivity Δ (one coordinate).

    Canonne et al. (2020, Theorem 7): δ = P[X > εσ²/Δ - Δ/2] - e^ε P[X > εσ²/Δ + Δ/2] for X ~ N_Z(0, σ²),
    the tails summed over the integers.
    """
    reach = int(math.ceil(sigma * 40 + epsilon * sigma**2 / sensitivity + sensitivity))
    z = np.arange(-reach, reach + 1, dtype=float)
    w = np.exp(-(z**2) / (2.0 * sigma**2))
    w /= w.sum()
    cut = epsilon * sigma**2 / sensitivity
    return float(max(0.0, w[z > cut - sensitivity / 2].sum() - math.exp(epsilon) * w[z > cut + sensitivity / 2].sum()))


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
        from ..validation import check_delta
        from .gaussian import analytic_gaussian_sigma

        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta, allow_zero=False))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "granularity", _grid(self.sensitivity, self.granularity))
        steps = analytic_gaussian_sigma(epsilon=self.epsilon, delta=self.delta, sensitivity=self.grid_sensitivity)
        # the continuous calibration, then checked on the integers (Theorem 7): widened by 0.1 % steps if the
        # discrete Gaussian's exact δ at this σ were above the δ asked for
        for _ in range(1000):
            if discrete_gaussian_delta(steps, self.epsilon, self.grid_sensitivity) <= self.delta:
                break
            steps *= 1.001
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
        """The discrete Gaussian's exact δ at this ε (Canonne et al. 2020, Theorem 7): at most :attr:`delta`."""
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
        """The Gaussian of the grid's σ and sensitivity. The discrete Gaussian meets the same zero-concentrated
        bound, Δ²/(2σ²) (Canonne et al. 2020), so RDP composition of this event is valid for it; a single use is
        covered exactly by :attr:`delta_exact`."""
        return dp_accounting.GaussianDpEvent(noise_multiplier=float(self.sigma_steps) / self.grid_sensitivity)


# --------------------------------------------------------------------------------------------------------------
# Secure mode for every additive mechanism: the same grid idea, vectorised, with continuous secure noise.

#: the grid is never finer than 2**-24 noise scales, far coarser than the spacing of the sampler's doubles, so
#: rounding the noise to the grid leaves no reachable-or-not pattern for Mironov's attack to read
GRID_PER_SCALE = 2.0**-24


@dataclass(frozen=True)
class SecureGrid:
    """Where a secure release lands and what that costs.

    ``granularity`` is the grid spacing (a power of two). Rounding the true answer to it moves two neighbouring
    answers at most ``granularity`` further apart per differing coordinate, so the noise scale is multiplied by
    ``scale_increase = (Δ + granularity · m) / Δ`` (m = coordinates for an L1 sensitivity, √coordinates for L2):
    ε and δ stay exactly as claimed and the accountant needs no change.
    """

    granularity: float
    scale_increase: float


def secure_grid(*, sensitivity: float, scale: float, coordinates: int, norm: int) -> SecureGrid:
    """The grid of a secure release of ``coordinates`` values with L``norm`` ``sensitivity`` and noise ``scale``.

    The spacing is the power of two nearest below Δ / (1024 m), so rounding costs at most 0.1% more noise, unless
    that is finer than 2**-24 noise scales (a very long vector at a large ε); then the floor holds and the larger
    increase is stated in ``scale_increase``.

    >>> g = secure_grid(sensitivity=1.0, scale=1.0, coordinates=1, norm=1)
    >>> g.granularity, round(g.scale_increase, 5)
    (0.0009765625, 1.00098)
    """
    if norm not in (1, 2):
        raise DPValueError(f"norm must be 1 or 2, got {norm!r}")
    m = max(int(coordinates), 1) if norm == 1 else math.sqrt(max(int(coordinates), 1))
    fine = 2.0 ** math.floor(math.log2(sensitivity / (DEFAULT_STEPS_PER_SENSITIVITY * m)))
    floor = 2.0 ** math.ceil(math.log2(scale * GRID_PER_SCALE))
    g = max(fine, floor)
    return SecureGrid(granularity=g, scale_increase=(sensitivity + g * m) / sensitivity)


def gaussian_noise(source, scale: float, shape):
    """N(0, scale²) draws from a :class:`~dpcore.rng.SecureRandom`, as a float64 torch tensor of ``shape``: the
    ``draw`` of a secure Gaussian release."""
    return source._standard_normal(int(np.prod(shape, dtype=np.int64)), scale).reshape(shape)


def laplace_noise(source, scale: float, shape):
    """Laplace(scale) draws from a :class:`~dpcore.rng.SecureRandom`, as a float64 torch tensor of ``shape``: the
    ``draw`` of a secure Laplace release."""
    return source._laplace(int(np.prod(shape, dtype=np.int64)), scale).reshape(shape)


def secure_additive(values, *, draw, scale: float, sensitivity: float, norm: int, coordinates: int | None = None):
    """Release ``values`` + noise with secure randomness on a grid: what every additive mechanism does in secure mode.

    ``draw(source, scale, shape)`` returns continuous noise of the given scale (in grid steps) from a
    :class:`~dpcore.rng.SecureRandom` (:func:`gaussian_noise`, :func:`laplace_noise`). The answer is rounded to the
    :func:`secure_grid` (Mironov 2012's snapping idea), noise of ``scale · scale_increase`` is added and the sum
    rounded to the grid again. Rounding the noisy grid answer is post-processing of the continuous mechanism on the
    rounded answer, whose sensitivity the increase covers, so the privacy claim is unchanged. The grid is at least
    2**-24 noise scales while the sampler's doubles are far denser (uniforms with 52 random bits, refined below
    2**-12 down every binade), so every grid point near the answer is reachable from every neighbouring answer and
    the probabilities differ from the ideal rounded law only by floating-point rounding, not by the gaps Mironov's
    attack reads. The sampler's range ends near 745 noise scales (|log U| ≤ 745), an event of probability below
    1e-300. For one query answered exactly, with integer arithmetic only, use :class:`SecureLaplace` or
    :class:`SecureGaussian`.
    """
    import torch

    from ..rng import SecureRandom

    tensor = isinstance(values, torch.Tensor)  # a torch tensor (DP-SGD's gradient sum) comes back as one, float64
    if tensor:
        steps, scalar = values.detach().to(device="cpu", dtype=torch.float64, copy=True), False
    else:
        arr, scalar = as_float_array(values)
        steps = torch.from_numpy(np.array(arr, dtype=np.float64, copy=True))
    shape = tuple(steps.shape)
    grid = secure_grid(sensitivity=sensitivity, scale=scale, norm=norm,
                       coordinates=steps.numel() if coordinates is None else coordinates)
    g = grid.granularity
    steps.div_(g)  # exact: g is a power of two
    if steps.numel() and not bool(steps.abs().max() < MAX_GRID_STEPS):  # NaN and ±inf fail this too
        raise DPValueError(f"values must be finite and within ±{MAX_GRID_STEPS * g:g} for a secure release "
                           f"(2**52 grid steps of {g:g}); clip the query's answer first")
    # the noise is drawn in grid steps (its scale divided by g), a numpy array or a torch tensor
    noise = torch.as_tensor(draw(SecureRandom(), scale * grid.scale_increase / g, shape or (1,)), dtype=torch.float64)
    out = _add_on_grid(steps, noise.reshape(shape).round_(), g)
    if tensor:
        return out
    return float(out) if scalar else out.numpy()



def add_noise(values, *, kind: str, scale: float, sensitivity: float, rng=None, per_coordinate: bool = False):
    """``values`` plus independent noise of ``scale`` on every coordinate: Laplace (``kind="laplace"``, calibrated to
    an L1 ``sensitivity``) or Gaussian (``"gaussian"``, L2). ``rng="secure"`` (or secure mode) gives secure noise
    (:func:`secure_additive`); otherwise numpy's generator from ``rng``. A scalar in gives a float out.

    ``per_coordinate=False``: ``values`` is one query whose whole vector moves by at most ``sensitivity``, so the
    secure grid covers the rounding of every coordinate together. ``True``: every coordinate is a query of its own
    with that sensitivity (a vector of answers), so the grid covers one coordinate's rounding and the secure noise
    is the asked scale within 0.1% however long the vector; the noise is the same in the seeded mode.

    >>> abs(add_noise(1.0, kind="laplace", scale=1e-6, sensitivity=1.0, rng=0) - 1.0) < 1e-4
    True
    """
    norm, draw = {"laplace": (1, laplace_noise), "gaussian": (2, gaussian_noise)}[kind]
    if wants_secure(rng):
        return secure_additive(values, draw=draw, scale=scale, sensitivity=sensitivity, norm=norm,
                               coordinates=1 if per_coordinate else None)
    arr, scalar = as_float_array(values)
    g = as_generator(rng)
    out = arr + (g.laplace(0.0, scale, size=arr.shape) if norm == 1 else g.normal(0.0, scale, size=arr.shape))
    return float(out) if scalar else out


def _add_on_grid(steps, noise_steps, g: float):
    """``(round(steps) + noise_steps) · g``: round half to even, as numpy's rint; the sum of two grid counts below
    2**53 is exact, and so is the product by a power of two."""
    return steps.round_().add_(noise_steps).mul_(g)


class SecureGaussianStream:
    """Secure Gaussian releases of many vectors of one size, one after another (DP-SGD's noisy sums).

    Each :meth:`release` is :func:`secure_additive` with :func:`gaussian_noise` of standard deviation ``sigma`` for
    L2 ``sensitivity``; the noise, i.i.d. across coordinates and releases, is drawn in blocks of about 2**17 values
    and used one vector at a time, which spares a short vector most of the per-draw cost. ``grid`` states the cost.

    >>> import torch
    >>> s = SecureGaussianStream(sigma=2.0, sensitivity=1.0, size=3)
    >>> out = s.release(torch.zeros(3, dtype=torch.float64))
    >>> bool(torch.equal(out / s.grid.granularity, (out / s.grid.granularity).round()))
    True
    """

    def __init__(self, *, sigma: float, sensitivity: float, size: int, block_values: int = 2**17) -> None:
        self.size = int(size)
        self.grid = secure_grid(sensitivity=sensitivity, scale=sigma, coordinates=self.size, norm=2)
        self._steps_scale = sigma * self.grid.scale_increase / self.grid.granularity
        self._per_block = max(1, int(block_values) // max(self.size, 1))
        self._pool, self._next = None, 0

    def release(self, values):
        """``values`` (a torch tensor of ``size`` entries) + N(0, (sigma · scale_increase)²), on the grid, float64."""
        import torch

        from ..rng import SecureRandom

        if self._pool is None or self._next == self._per_block:
            self._pool = gaussian_noise(SecureRandom(), self._steps_scale, (self._per_block, self.size)).round_()
            self._next = 0
        noise = self._pool[self._next]
        self._next += 1
        g = self.grid.granularity
        steps = values.detach().to(device="cpu", dtype=torch.float64, copy=True).reshape(-1).div_(g)
        if steps.numel() != self.size:
            raise DPValueError(f"this stream releases vectors of {self.size} values, got {steps.numel()}")
        if steps.numel() and not bool(steps.abs().max() < MAX_GRID_STEPS):  # NaN and ±inf fail this too
            raise DPValueError(f"values must be finite and within ±{MAX_GRID_STEPS * g:g} for a secure release "
                               f"(2**52 grid steps of {g:g}); clip the query's answer first")
        return _add_on_grid(steps, noise, g).reshape(values.shape)
