"""Noise mechanisms, each reporting its dp_accounting event.

``MECHANISMS`` maps registry names to classes; ``create_mechanism(name, **kw)``
builds one (the pages' select boxes and the tests' parametrize lists use it).
"""
from __future__ import annotations

from ..exceptions import DPValueError
from .base import Mechanism
from .exponential import Exponential
from .gaussian import Gaussian, analytic_gaussian_delta, analytic_gaussian_sigma, classic_gaussian_sigma
from .laplace import Laplace
from .randomized_response import RandomizedResponse

MECHANISMS: dict[str, type[Mechanism]] = {
    "laplace": Laplace,
    "gaussian": Gaussian,
    "randomized_response": RandomizedResponse,
    "exponential": Exponential,
}


def create_mechanism(name: str, **kwargs) -> Mechanism:
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
    "create_mechanism",
    "classic_gaussian_sigma",
    "analytic_gaussian_sigma",
    "analytic_gaussian_delta",
]
