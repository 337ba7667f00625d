"""The Laplace mechanism."""
from __future__ import annotations

from dataclasses import dataclass

import dp_accounting
import numpy as np

from .additive import add_noise
from .base import PureEpsilonMechanism


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
        between neighbouring datasets).

    References
    ----------
    Dwork, McSherry, Nissim, Smith. Calibrating noise to sensitivity in private
    data analysis. TCC 2006.

    Examples
    --------
    >>> Laplace(epsilon=1.0, sensitivity=2.0).scale
    2.0
    """

    name = "laplace"

    @property
    def scale(self) -> float:
        """The Laplace scale b = sensitivity / epsilon."""
        return self.sensitivity / self.epsilon

    def variance(self) -> float:
        return 2.0 * self.scale**2

    def randomise(self, values, *, rng=None):
        """``values`` plus noise; ``rng="secure"`` (or secure mode) gives secure noise (:func:`secure_additive`)."""
        return add_noise(values, kind="laplace", scale=self.scale, sensitivity=self.sensitivity, rng=rng)

    def density(self, x, center: float = 0.0):
        """Density of the output at ``x`` when the true answer is ``center``."""
        x = np.asarray(x, dtype=float)
        return np.exp(-np.abs(x - center) / self.scale) / (2.0 * self.scale)

    @property
    def dp_event(self):
        # dp_accounting's noise multiplier is the scale relative to the sensitivity.
        return dp_accounting.LaplaceDpEvent(noise_multiplier=self.scale / self.sensitivity)
