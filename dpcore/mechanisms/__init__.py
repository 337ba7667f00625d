"""Noise mechanisms, each reporting its dp_accounting event.

``MECHANISMS`` maps registry names to classes; ``create_mechanism(name, **kw)``
builds one (the pages' select boxes and the tests' parametrize lists use it).
Every privacy noise draw in dpcore goes through one of these classes, so the
sampler can be changed in one place. :class:`NoiseMultiplierGaussian` (Gaussian
noise stated by its noise multiplier rather than a target epsilon) is exported
but not registered, as are :class:`SecureLaplace` and :class:`SecureGaussian` (exact discrete noise on a grid
from the operating system's randomness: one query per call, no seed).
"""
from __future__ import annotations

from typing import Any

from ..exceptions import DPValueError
from .base import Mechanism
from .exponential import Exponential
from .gaussian import (
    Gaussian,
    analytic_gaussian_delta,
    analytic_gaussian_epsilon,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
)
from .gaussian_multiplier import NoiseMultiplierGaussian
from .l2_laplace import L2LaplaceVector
from .laplace import Laplace
from .randomized_response import RandomizedResponse
from .secure import SecureGaussian, SecureLaplace

MECHANISMS: dict[str, type[Mechanism]] = {
    "laplace": Laplace,
    "gaussian": Gaussian,
    "randomized_response": RandomizedResponse,
    "exponential": Exponential,
    "l2_laplace_vector": L2LaplaceVector,
}


def create_mechanism(name: str, **kwargs: Any) -> Mechanism:
    """Build the mechanism registered as ``name`` with keyword parameters."""
    try:
        cls = MECHANISMS[name]
    except KeyError:
        raise DPValueError(f"unknown mechanism {name!r}; choose one of {sorted(MECHANISMS)}") from None
    return cls(**kwargs)


__all__ = [
    "MECHANISMS",
    "Mechanism",
    "Laplace",
    "Gaussian",
    "RandomizedResponse",
    "Exponential",
    "L2LaplaceVector",
    "NoiseMultiplierGaussian",
    "SecureGaussian",
    "SecureLaplace",
    "create_mechanism",
    "classic_gaussian_sigma",
    "analytic_gaussian_sigma",
    "analytic_gaussian_delta",
    "analytic_gaussian_epsilon",
]
