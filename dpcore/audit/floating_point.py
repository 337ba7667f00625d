"""Mironov's floating-point attack (2012) on the textbook Laplace mechanism, and the same attack on secure noise.

The textbook sampler releases ``y = x + b·log(2U)`` (or ``x - b·log(2 - 2U)``) computed in doubles, with U one of
the 2^53 values ``k / 2^53`` numpy's generator produces. Only about 2^53 of the doubles near ``x`` can come out,
and which ones depends on ``x``: the attacker, who knows the sampler but not the seed, checks whether the release
``y`` could have been produced from the neighbouring answer ``x'`` at all. When it could not, the attacker is
certain the database was the one answering ``x``, an event of probability 0 under ``x'`` that ε-DP allows only
with probability 0 under ``x`` too. The check inverts the sampler exactly: its output is monotone in k on each
half of the uniform range, so a binary search over k finds the only candidates, and recomputing them with the same
double arithmetic (numpy's ``random_laplace`` calls the C library's ``log``, as Python's :func:`math.log` does)
tells whether ``y`` is reachable.

The secure mechanism (:class:`~dpcore.mechanisms.secure.SecureLaplace`) releases grid points, every one reachable
from every input, so the same question ("could ``x'`` have produced this?") never has the answer "no".

:func:`floating_point_attack` plays the game: n releases from each of the two neighbouring answers, the attacker
says "x" exactly when ``y`` is unreachable from ``x'``, and the counts give a Clopper–Pearson lower bound on ε
(:func:`dpcore.audit.bounds.epsilon_lower_bound`), to be compared with the ε the mechanism claims.

References
----------
Mironov. On significance of the least significant bits for differential privacy. CCS 2012.
Canonne, Kamath, Steinke. The discrete Gaussian for differential privacy. NeurIPS 2020.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..exceptions import DPValueError
from ..mechanisms import Laplace
from ..mechanisms.additive import secure_grid
from ..mechanisms.secure import SecureLaplace
from ..rng import SECURE
from ..validation import check_int
from .bounds import epsilon_lower_bound

_HALF = 2**52  # k / 2^53 < 1/2 exactly when k < 2^52
_TOP = 2**53


def _textbook_output(k: int, loc: float, scale: float) -> float:
    """What ``loc + Generator.laplace(0, scale)`` releases when the generator's uniform is k / 2^53."""
    u = k / _TOP
    noise = 0.0 - scale * math.log(2.0 - u - u) if u >= 0.5 else 0.0 + scale * math.log(u + u)
    return loc + noise


def _first_at_least(y: float, lo: int, hi: int, loc: float, scale: float) -> int:
    """Smallest k in [lo, hi) whose output is >= y (hi if none): the outputs are non-decreasing in k."""
    while lo < hi:
        mid = (lo + hi) // 2
        if _textbook_output(mid, loc, scale) < y:
            lo = mid + 1
        else:
            hi = mid
    return lo


def reachable_by_textbook_laplace(y: float, loc: float, scale: float) -> bool:
    """Whether the seeded :class:`~dpcore.mechanisms.Laplace` can release exactly ``y`` for the true answer ``loc``.

    >>> m = Laplace(epsilon=1.0)
    >>> y = m.randomise(0.0, rng=3)
    >>> reachable_by_textbook_laplace(y, 0.0, m.scale)
    True
    """
    for lo, hi in ((1, _HALF), (_HALF, _TOP)):  # U = 0 is rejected by the sampler
        k = _first_at_least(y, lo, hi, loc, scale)
        if k < hi and _textbook_output(k, loc, scale) == y:
            return True
    return False


def _reachable(mechanism, y: float, answer: float, *, secure: bool = False) -> bool:
    if isinstance(mechanism, SecureLaplace):  # every grid point has positive probability from every answer
        return float(y / mechanism.granularity).is_integer()
    if secure and isinstance(mechanism, Laplace):  # the secure mode's grid: every grid point within 745 scales
        g = secure_grid(sensitivity=mechanism.sensitivity, scale=mechanism.scale, coordinates=1, norm=1)
        return float(y / g.granularity).is_integer() and abs(y - answer) < 700 * mechanism.scale
    if isinstance(mechanism, Laplace):
        return reachable_by_textbook_laplace(y, answer, mechanism.scale)
    raise DPValueError(f"the floating-point attack knows Laplace and SecureLaplace, not {type(mechanism).__name__}")


@dataclass(frozen=True)
class FloatingPointAttack:
    """One play of the game: how often the attacker was certain, in each world, and what that proves."""

    mechanism: str
    epsilon: float
    releases: int
    certain_when_x: int  # releases from x that x' cannot produce (the attacker is right and certain)
    certain_when_x_prime: int  # releases from x' that x' cannot produce (always 0: a check of the check)
    epsilon_lower_bound: float  # 95% Clopper-Pearson bound from the counts

    @property
    def certain_rate(self) -> float:
        return self.certain_when_x / self.releases

    @property
    def breaks_claim(self) -> bool:
        """The counts prove, at 95%, a privacy loss above the ε the mechanism claims."""
        return self.epsilon_lower_bound > self.epsilon


def floating_point_attack(mechanism, *, releases: int = 2000, x: float = 0.0, x_prime: float = 1.0,
                          seed: int | None = 0, secure: bool = False) -> FloatingPointAttack:
    """Release the count ``x`` and its neighbour ``x_prime`` ``releases`` times each and attack every release.

    ``seed`` seeds the textbook mechanism's draws (a demonstration that the attack does not need it: the attacker
    never sees it); the secure mechanism refuses seeds, so it is ignored there. ``secure=True`` attacks
    :class:`~dpcore.mechanisms.Laplace` in secure mode (``rng="secure"``), one release per query.
    """
    n = check_int(releases, "releases", minimum=1)
    if abs(x - x_prime) > getattr(mechanism, "sensitivity", 1.0):
        raise DPValueError("x and x_prime must be neighbouring answers: |x - x_prime| <= the mechanism's sensitivity")
    if secure and isinstance(mechanism, Laplace):  # each release is its own query on its own grid
        from_x = np.array([mechanism.randomise(float(x), rng=SECURE) for _ in range(n)])
        from_x_prime = np.array([mechanism.randomise(float(x_prime), rng=SECURE) for _ in range(n)])
    else:
        gen = None if isinstance(mechanism, SecureLaplace) else np.random.default_rng(seed)
        from_x = np.atleast_1d(mechanism.randomise(np.full(n, float(x)), rng=gen))
        from_x_prime = np.atleast_1d(mechanism.randomise(np.full(n, float(x_prime)), rng=gen))
    tp = sum(not _reachable(mechanism, float(y), x_prime, secure=secure) for y in from_x)
    fp = sum(not _reachable(mechanism, float(y), x_prime, secure=secure) for y in from_x_prime)
    bound = epsilon_lower_bound(tp=tp, fn=n - tp, fp=fp, tn=n - fp)
    return FloatingPointAttack(mechanism=type(mechanism).__name__, epsilon=float(mechanism.epsilon), releases=n,
                               certain_when_x=int(tp), certain_when_x_prime=int(fp), epsilon_lower_bound=bound)
