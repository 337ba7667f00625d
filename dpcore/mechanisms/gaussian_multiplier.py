"""The Gaussian mechanism stated by its noise multiplier (noise std / L2 sensitivity)."""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import dp_accounting

from ..validation import check_positive
from .additive import add_noise
from .base import Mechanism, round_up
from .gaussian import analytic_gaussian_epsilon


@dataclass(frozen=True)
class NoiseMultiplierGaussian(Mechanism):
    """Add N(0, (noise_multiplier * sensitivity)^2) to every coordinate.

    The same noise as :class:`~dpcore.mechanisms.Gaussian`, but stated the way DP-SGD,
    sufficient-statistics perturbation and PATE's GNMax state it: by the noise
    multiplier ``z`` (standard deviation over L2 sensitivity), which is what
    dp_accounting composes (``GaussianDpEvent(z)``). One release is (epsilon,
    delta)-DP for every pair on the curve of Balle & Wang (2018, Theorem 8), read by
    :meth:`epsilon_at`. Not in the ``MECHANISMS`` registry, whose entries are built from
    a target epsilon.

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / sensitivity``.
    sensitivity : float
        L2 sensitivity of the query.

    References
    ----------
    Dwork & Roth. The Algorithmic Foundations of Differential Privacy, 2014 (the Gaussian mechanism).
    Balle & Wang. Improving the Gaussian mechanism for differential privacy. ICML 2018.
    Abadi et al. Deep learning with differential privacy. CCS 2016 (the noise multiplier).

    Examples
    --------
    >>> g = NoiseMultiplierGaussian(noise_multiplier=2.0, sensitivity=1.5)
    >>> g.sigma, g.dp_event.noise_multiplier
    (3.0, 2.0)
    """

    noise_multiplier: float = field(kw_only=True)
    sensitivity: float = field(default=1.0, kw_only=True)
    name = "gaussian_noise_multiplier"

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", check_positive(self.noise_multiplier, "noise_multiplier"))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))

    @property
    def sigma(self) -> float:
        """Standard deviation of the added noise: noise_multiplier * sensitivity rounded UP (to nearest, it lay below
        the product for some multipliers, and the noise drawn was a hair smaller than the event's multiplier says:
        GNMax's sigma / sqrt(2) at sensitivity sqrt(2) for about one sigma in fifty)."""
        return round_up(Fraction(self.noise_multiplier) * Fraction(self.sensitivity))

    def variance(self) -> float:
        return self.sigma**2

    def randomise(self, values, *, rng=None):
        """``values`` plus noise; ``rng="secure"`` (or secure mode) gives secure noise (:func:`secure_additive`)."""
        return add_noise(values, kind="gaussian", scale=self.sigma, sensitivity=self.sensitivity, rng=rng)

    def epsilon_at(self, delta: float) -> float:
        """The smallest epsilon for which one release is (epsilon, ``delta``)-DP (Balle & Wang 2018)."""
        return analytic_gaussian_epsilon(sigma=self.noise_multiplier, delta=delta)

    def privacy(self, delta: float | None = None) -> tuple[float, float]:
        """(epsilon, delta) of one application at the given ``delta`` (a Gaussian has no pure epsilon)."""
        if delta is None:
            raise TypeError("the Gaussian mechanism's epsilon depends on delta: call privacy(delta=...)")
        return self.epsilon_at(delta), float(delta)

    @property
    def dp_event(self):
        return dp_accounting.GaussianDpEvent(noise_multiplier=self.noise_multiplier)
