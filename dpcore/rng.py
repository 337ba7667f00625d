"""One way to turn a seed into a random generator.

Seeded noise exists for reproducible demonstrations. A real release should use
unseeded, cryptographically secure randomness (and a floating-point-safe
sampler, Mironov 2012).
"""
from __future__ import annotations

import numbers

import numpy as np

from .exceptions import DPTypeError


def as_generator(seed: "int | np.random.Generator | None" = None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` from a seed, a generator or ``None``.

    >>> bool(as_generator(0).integers(10) == as_generator(0).integers(10))
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, (numbers.Integral, np.integer)) and not isinstance(seed, bool):
        if int(seed) < 0:
            raise DPTypeError(f"seed must be a non-negative integer, got {seed}")
        return np.random.default_rng(int(seed))
    raise DPTypeError(f"seed must be an int, a numpy Generator or None, got {type(seed).__name__}")


def child_seed(rng: np.random.Generator) -> int:
    """Draw an integer seed (for torch or a sub-computation) from ``rng``."""
    return int(rng.integers(0, 2**31 - 1))
