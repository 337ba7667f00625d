"""Noise added to values, the one way every additive mechanism releases: seeded from numpy's generator, or in
secure mode on a grid with continuous noise from the operating system's source.

:func:`add_noise` is what Laplace and Gaussian mechanisms call; :func:`secure_additive` the secure release (the grid
idea of :class:`~dpcore.mechanisms.secure.SecureLaplace`, vectorised, with continuous secure noise); and
:class:`SecureGaussianStream` the same for many vectors drawn in blocks (DP-SGD's noisy sums). The exact discrete
mechanisms (:mod:`dpcore.mechanisms.secure`) and the Gaussian's calibration (:mod:`dpcore.mechanisms.gaussian`)
sit above this module, which imports neither.

References
----------
Mironov. On significance of the least significant bits for differential privacy. CCS 2012.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..exceptions import DPValueError
from ..rng import SecureRandom, as_generator, wants_secure
from .base import MAX_NOISE_SCALE, as_float_array, finite_answer, round_up, sqrt_up

#: grid steps per unit of sensitivity by default (the grid is then rounded down to a power of two)
DEFAULT_STEPS_PER_SENSITIVITY = 1024
#: answers are refused beyond this many grid steps from zero (grid points stay exact doubles below 2**53)
MAX_GRID_STEPS = 2**52


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

    def steps_scale(self, scale: float) -> float:
        """The noise scale to draw, ``scale · scale_increase``, in grid steps, rounded UP (never less noise than the
        rounded answer's sensitivity needs)."""
        return round_up(Fraction(scale) * Fraction(self.scale_increase) / Fraction(self.granularity))


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
    # m and the increase rounded UP: sqrt(coordinates) to nearest lay below the exact root for most counts, and the
    # noise drawn a hair under what the rounded answer's sensitivity Δ + g m needs
    m = max(int(coordinates), 1) if norm == 1 else sqrt_up(max(int(coordinates), 1))
    fine = 2.0 ** math.floor(math.log2(sensitivity / (DEFAULT_STEPS_PER_SENSITIVITY * m)))
    floor = 2.0 ** math.ceil(math.log2(scale * GRID_PER_SCALE))
    g = max(fine, floor)
    grid = SecureGrid(granularity=g, scale_increase=round_up((Fraction(sensitivity) + Fraction(g) * Fraction(m))
                                                             / Fraction(sensitivity)))
    # the floor makes the rounding cost grow with the scale: at a tiny epsilon the noise actually drawn is the asked
    # scale times an increase that can be 1e57 (epsilon 1e-60), whose squares overflow double precision (nan
    # centres, a singular solve): the seeded mechanisms' limit holds for the noise actually drawn
    if not scale * grid.scale_increase <= MAX_NOISE_SCALE:
        raise DPValueError(
            f"secure noise of scale {scale:g} over {int(coordinates)} coordinate(s) of sensitivity {sensitivity:g} "
            f"lands on a grid of {g:g} (the sampler's resolution, 2**-24 noise scales), whose rounding multiplies "
            f"the noise by {grid.scale_increase:.3g} to {scale * grid.scale_increase:.3g}, beyond "
            f"{MAX_NOISE_SCALE:g}: sums and squares of such noise overflow double precision; use a larger epsilon "
            "(a smaller noise scale)")
    return grid


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
    noise = torch.as_tensor(draw(SecureRandom(), grid.steps_scale(scale), shape or (1,)), dtype=torch.float64)
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
    finite_answer(arr)
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
        self._steps_scale = self.grid.steps_scale(sigma)
        self._per_block = max(1, int(block_values) // max(self.size, 1))
        self._pool, self._next = None, 0

    def release(self, values):
        """``values`` (a torch tensor of ``size`` entries) + N(0, (sigma · scale_increase)²), on the grid, float64."""
        import torch

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
