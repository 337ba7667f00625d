"""dp_accounting's answers, checked before anyone reads them: an epsilon that cannot be trusted is infinity.

dp_accounting computes in double precision. At extreme inputs its numbers stop meaning what they say:

* the RDP of a Poisson-subsampled Gaussian with a noise multiplier below about 1e-154 overflows: the
  integer orders sum ``inf - inf`` and give ``nan``, and ``compute_epsilon`` then picks the ``nan`` order and
  answers ``max(0, nan) = 0`` (a run with no noise reported as perfectly private);
* below about 1e-154 ``sigma ** 2`` is 0 and the RDP formulas divide by it (``ZeroDivisionError``);
* at very large noise the log-space sums round a true RDP of about 1e-20 to about -1e-16, and
  ``compute_epsilon`` answers 0 for any negative order whatever its size.

Here every RDP curve is read fail closed (Mironov 2017: RDP is never negative, and an order at which
nothing is known is an order with RDP infinity): ``nan`` and values below ``-RDP_ROUNDING`` become
infinity (that order says nothing); values in ``[-RDP_ROUNDING, 0)`` are rounding of a true value at
most ``RDP_ROUNDING`` and become ``RDP_ROUNDING``. An epsilon that comes back ``nan`` or negative is
infinity. Every call into dp_accounting runs under :func:`quiet`, so its arithmetic at these extremes
does not flood a terminal with numpy warnings (hundreds of thousands of lines for one command).

References
----------
Mironov. Rényi differential privacy. CSF 2017 (RDP is non-negative; the conversion to (epsilon, delta)).
"""
from __future__ import annotations

import contextlib
import math
from typing import Iterator, Sequence

import numpy as np
from dp_accounting import rdp

__all__ = ["ARITHMETIC_ERRORS", "RDP_ROUNDING", "RDP_STEP_ROUNDING", "quiet", "rdp_epsilon", "trusted_delta",
           "trusted_epsilon", "trusted_rdp", "trusted_step_rdp"]

#: How far below 0 dp_accounting's rounding can bring an RDP value (its log-space sums are exact to about 1e-16).
RDP_ROUNDING = 1e-12
#: How far below the exact value dp_accounting's RDP of one application of a mechanism may lie, absolute: its
#: log-space sums lose a few units of 2**-52 whatever the value's size (a Poisson-subsampled Gaussian at integer
#: orders, checked against 40-digit sums: up to 3.7 units below at q = 0.5, noise 1e3-1e7, order 37), so where the
#: value is tiny (noise 1e4-1e7) it is off by up to 2 % relative, and composed over 1e12 steps the total falls below
#: the exact one by as much. 64 units, plus 16 units relative, cover it with a wide margin.
RDP_STEP_ROUNDING = 64 * 2.0**-52
#: What dp_accounting raises when a noise is too small to square (sigma ** 2 == 0) or a value overflows a float.
ARITHMETIC_ERRORS = (ZeroDivisionError, OverflowError, FloatingPointError)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """numpy's floating-point warnings off around a dp_accounting call (the answer is checked afterwards)."""
    with np.errstate(all="ignore"):
        yield


def trusted_rdp(curve: Sequence[float]) -> np.ndarray:
    """An RDP curve as an upper bound: ``nan`` and clearly negative orders become infinity, rounding below 0
    becomes :data:`RDP_ROUNDING`.

    >>> trusted_rdp([0.5, float("nan"), -1e-16, -3.0]).tolist()
    [0.5, inf, 1e-12, inf]
    """
    out = np.array(curve, dtype=float)
    out[np.isnan(out) | (out < -RDP_ROUNDING)] = math.inf
    out[(out < 0) & (out >= -RDP_ROUNDING)] = RDP_ROUNDING
    return out


def trusted_step_rdp(curve: Sequence[float], steps: int = 1) -> np.ndarray:
    """dp_accounting's RDP curve of ``steps`` applications of a mechanism (one, by default) as an upper bound:
    :func:`trusted_rdp`, then every finite order raised by the rounding of each step (:data:`RDP_STEP_ROUNDING`, and
    16 units of 2**-52 relative), so that a composition of many steps (``count * curve``) is never below the exact
    one. (dp_accounting gave the subsampled Gaussian at q = 0.001, noise 1e4, order 2, 9.99955e-15 where the exact
    value is 1.0000000005e-14; over 1e12 steps epsilon 0.3752858 where the exact curve gives 0.3752912.)

    >>> trusted_step_rdp([0.0, float("inf")]).tolist() == [RDP_STEP_ROUNDING, float("inf")]
    True
    """
    out = trusted_rdp(curve)
    finite = np.isfinite(out)
    out[finite] = out[finite] * (1.0 + 16 * 2.0**-52) + steps * RDP_STEP_ROUNDING
    return out


def trusted_epsilon(epsilon: float) -> float:
    """An epsilon from dp_accounting, ``nan`` or negative read as infinity (no guarantee)."""
    epsilon = float(epsilon)
    return epsilon if epsilon >= 0 else math.inf  # nan >= 0 is False


def trusted_delta(delta) -> np.ndarray:
    """Deltas from dp_accounting (a privacy profile), read fail closed: ``nan`` is 1 (no guarantee), and every value
    is clipped into [0, 1] (a hockey-stick divergence lies there; rounding can step outside).

    >>> trusted_delta([0.2, float("nan"), -1e-17, 1.0000001]).tolist()
    [0.2, 1.0, 0.0, 1.0]
    """
    out = np.array(delta, dtype=float)
    out[np.isnan(out)] = 1.0
    return np.clip(out, 0.0, 1.0)


def rdp_epsilon(orders: Sequence[float], curve: Sequence[float], delta: float) -> tuple[float, float]:
    """(epsilon, order) of an RDP curve at ``delta`` by dp_accounting's conversion (``compute_epsilon``), read
    fail closed: the one RDP-to-DP conversion of dpcore (the ledger's, and PATE's data-dependent analysis).

    >>> import numpy as np
    >>> orders = np.array([2.0, 8.0, 32.0])
    >>> rdp_epsilon(orders, [float("nan")] * 3, 1e-5)[0]
    inf
    """
    with quiet():
        eps, order = rdp.compute_epsilon(np.asarray(orders, dtype=float), trusted_rdp(curve), delta)
    return trusted_epsilon(eps), float(order)
