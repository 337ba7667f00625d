"""The Laplace mechanism."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .additive import add_noise
from .base import PureEpsilonMechanism, laplace_event, noise_scale


@dataclass(frozen=True)
class Laplace(PureEpsilonMechanism):
    """Add Laplace noise of scale ``sensitivity / epsilon`` to every coordinate.

    Gives epsilon-DP for a query whose L1 sensitivity is ``sensitivity``.

    Parameters
    ----------
    epsilon : float
        Privacy budget of one application, > 0.
    sensitivity : float
        L1 sensitivity of the query (how much its output can move, in L1 norm,
        between neighbouring datasets: those of the ledger that composes it, add/remove by default).
        A histogram moves by 1 when a record is added or removed (by 2 when one is replaced). A mean of
        values clipped to ``[lo, hi]`` moves by ``(hi - lo) / n`` when one is replaced, but the count ``n``
        is itself private when records are added or removed: there, release a noisy sum (sensitivity
        ``max(|lo|, |hi|)``) and a noisy count (sensitivity 1), each with half the budget, and divide.

    References
    ----------
    Dwork, McSherry, Nissim, Smith. Calibrating noise to sensitivity in private
    data analysis. TCC 2006.

    Examples
    --------
    >>> Laplace(epsilon=1.0, sensitivity=2.0).scale
    2.0

    A mean of ages in [18, 90] under add/remove neighbours (epsilon 1 in all, by basic composition):

    >>> ages = np.clip(np.array([23.0, 35.0, 51.0, 64.0] * 250), 18, 90)
    >>> total = Laplace(epsilon=0.5, sensitivity=90.0).randomise(ages.sum(), rng=0)
    >>> count = Laplace(epsilon=0.5, sensitivity=1.0).randomise(float(len(ages)), rng=1)
    >>> 30 < total / max(count, 1.0) < 55
    True
    """

    name = "laplace"

    @property
    def scale(self) -> float:
        """The Laplace scale b = sensitivity / epsilon (rounded up: :func:`~dpcore.mechanisms.base.noise_scale`)."""
        return noise_scale(self.sensitivity, self.epsilon)

    def variance(self) -> float:
        return 2.0 * self.scale**2

    def randomise(self, values, *, rng=None, per_coordinate: bool = False):
        """``values`` plus Laplace noise of scale ``sensitivity / epsilon`` on every coordinate.

        ``rng="secure"`` (or secure mode) gives secure noise on a grid (:func:`secure_additive`). By default
        ``values`` is ONE query whose whole vector moves by at most ``sensitivity`` in L1 norm (a histogram, one
        record's one-hot row): the secure grid then covers the rounding of all m coordinates at once, which costs
        up to ``m * granularity / sensitivity`` more noise (about 1.2% for 100,000 coordinates).
        ``per_coordinate=True`` says each coordinate is a query of its own with that sensitivity (a vector of
        answers, each epsilon-DP; together m * epsilon by basic composition): the grid then covers one coordinate
        and the secure noise is the asked scale within 0.1%. Seeded noise is the same either way.
        """
        return add_noise(values, kind="laplace", scale=self.scale, sensitivity=self.sensitivity, rng=rng,
                         per_coordinate=per_coordinate)

    def density(self, x, center: float = 0.0):
        """Density of the output at ``x`` when the true answer is ``center``."""
        x = np.asarray(x, dtype=float)
        return np.exp(-np.abs(x - center) / self.scale) / (2.0 * self.scale)

    @property
    def dp_event(self):
        # dp_accounting's noise multiplier is the scale relative to the sensitivity (rounded down)
        return laplace_event(self.scale, self.sensitivity)
