"""Common interface of the noise mechanisms."""
from __future__ import annotations

import abc
import math
import sys
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import dp_accounting
import numpy as np

from ..exceptions import DPValueError
from ..validation import check_epsilon, check_positive


class Mechanism(abc.ABC):
    """A randomised algorithm with a stated privacy guarantee.

    Subclasses are frozen dataclasses with keyword-only fields validated in
    ``__post_init__``. ``randomise`` is vectorised over arrays.
    """

    #: registry name, also shown in the pages' select boxes
    name: str = ""
    #: the neighbouring relation the guarantee refers to, in words
    neighbouring: str = "add/remove or replace-one (sensitivity defines it)"
    #: the relation the guarantee holds for whatever the inputs ("replace-one": a record's value changed), or None
    #: where the caller's sensitivity defines it (what :meth:`PrivacyLedger.spend` checks)
    fixed_relation: str | None = None

    @abc.abstractmethod
    def randomise(self, values, *, rng=None) -> Any:
        """Return a privatised copy of ``values``."""

    #: every mechanism has an ``epsilon`` field (one application's budget)
    epsilon: float

    def privacy(self) -> tuple[float, float]:
        """(epsilon, delta) of one application."""
        return float(self.epsilon), float(getattr(self, "delta", 0.0))

    @property
    @abc.abstractmethod
    def dp_event(self):
        """The dp_accounting event describing one application."""

    def variance(self) -> float:  # pragma: no cover - overridden where defined
        """Variance of the added noise per coordinate."""
        raise NotImplementedError(f"{type(self).__name__} has no additive noise variance")


@dataclass(frozen=True)
class PureEpsilonMechanism(Mechanism):
    """A pure epsilon-DP mechanism calibrated to a ``sensitivity`` (delta = 0): the fields and checks the
    Laplace, L2-Laplace, exponential and secure Laplace mechanisms share."""

    epsilon: float = field(kw_only=True)  # type: ignore[misc]
    sensitivity: float = field(default=1.0, kw_only=True)

    @property
    def delta(self) -> float:
        """Pure epsilon-DP: delta is 0."""
        return 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        check_noise_scale(self.sensitivity / self.epsilon,
                          f"epsilon={self.epsilon:g} (what this one release spends) with sensitivity "
                          f"{self.sensitivity:g} asks for noise of scale sensitivity / epsilon")


#: The largest noise scale (sensitivity / epsilon, or a Gaussian's sigma) a mechanism adds: squares of larger noise
#: overflow.
MAX_NOISE_SCALE = 1e100


def check_noise_scale(scale: float, asked: str) -> None:
    """Refuse a noise ``scale`` beyond :data:`MAX_NOISE_SCALE` (or NaN); ``asked`` says what asked for it."""
    if not scale <= MAX_NOISE_SCALE:
        raise DPValueError(
            f"{asked} = {scale:g}, beyond {MAX_NOISE_SCALE:g}: sums and squares of such noise overflow double "
            "precision (the output would be inf or nan); use a larger epsilon (or a smaller sensitivity)")


def _nearest(x: Fraction) -> float:
    """``float(x)``, infinity of ``x``'s sign beyond the largest double (where float() raises OverflowError)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def round_up(x: Fraction) -> float:
    """The least double at or above the exact rational ``x`` (float() rounds to nearest, below it half the time);
    infinity above the largest double.

    >>> third = Fraction(1, 3)
    >>> Fraction(round_up(third)) >= third, round_up(Fraction(10**400)), round_up(1 / Fraction(10**400))
    (True, inf, 5e-324)
    """
    out = _nearest(x)
    if math.isinf(out):
        return out if out > 0 else -sys.float_info.max
    return out if Fraction(out) >= x else math.nextafter(out, math.inf)


def round_down(x: Fraction) -> float:
    """The greatest double at or below the exact rational ``x``; the largest double above it.

    >>> third = Fraction(1, 3)
    >>> Fraction(round_down(third)) <= third, round_down(Fraction(10**400)), round_down(1 / Fraction(10**400))
    (True, 1.7976931348623157e+308, 0.0)
    """
    out = _nearest(x)
    if math.isinf(out):
        return out if out < 0 else sys.float_info.max
    return out if Fraction(out) <= x else math.nextafter(out, -math.inf)


def _root_near(x: Fraction) -> float:
    """A double near the square root of the rational ``x`` > 0 (within a few units in the last place), where the
    double nearest ``x`` is 0 or infinite too."""
    near = _nearest(x)
    if 0.0 < near < math.inf:
        return math.sqrt(near)
    try:
        return math.exp(0.5 * (math.log(x.numerator) - math.log(x.denominator)))
    except OverflowError:
        return math.inf


def _radicand(x: Fraction | float | int) -> Fraction:
    """``x`` as an exact rational, refused by name below 0."""
    x = Fraction(x)
    if x < 0:
        raise DPValueError(f"a square root needs a number >= 0, got {float(x)!r}")
    return x


def sqrt_up(x: Fraction | float | int) -> float:
    """The least double whose square is at or above the exact ``x`` >= 0: the square root rounded UP (``math.sqrt``
    rounds to nearest, half an ulp below the root of a non-square about half the time, so an L2 sensitivity
    ``sqrt(d)`` of d coordinates in [-1, 1] stated that way lay below the exact one); infinity above the largest
    double.

    >>> sqrt_up(4), Fraction(sqrt_up(2)) ** 2 >= 2, Fraction(math.nextafter(sqrt_up(2), 0)) ** 2 < 2
    (2.0, True, True)
    """
    x = _radicand(x)
    if x == 0:
        return 0.0
    root = _root_near(x)
    if math.isinf(root):
        return root
    while Fraction(root) ** 2 < x:
        root = math.nextafter(root, math.inf)
        if math.isinf(root):
            return root
    while root > 0 and Fraction(math.nextafter(root, 0.0)) ** 2 >= x:
        root = math.nextafter(root, 0.0)
    return root


def sqrt_down(x: Fraction | float | int) -> float:
    """The greatest double whose square is at or below the exact ``x`` >= 0: the square root rounded DOWN, for a
    noise multiplier or a scale a root divides (where an overestimate states less privacy loss than the noise gives);
    the largest double above its square.

    >>> sqrt_down(4), Fraction(sqrt_down(2)) ** 2 <= 2, Fraction(math.nextafter(sqrt_down(2), 3)) ** 2 > 2
    (2.0, True, True)
    """
    x = _radicand(x)
    if x == 0:
        return 0.0
    root = min(_root_near(x), sys.float_info.max)
    while root > 0 and Fraction(root) ** 2 > x:
        root = math.nextafter(root, 0.0)
    while root < sys.float_info.max and Fraction(math.nextafter(root, math.inf)) ** 2 <= x:
        root = math.nextafter(root, math.inf)
    return root


def log_up(x: float) -> float:
    """``ln x`` for a double ``x`` > 0, rounded UP: one ulp above ``math.log``, which is within an ulp of the exact
    logarithm (faithfully rounded by the C library).

    >>> log_up(1.0) > 0.0, Fraction(log_up(math.e)) >= 1
    (True, True)
    """
    return math.nextafter(math.log(x), math.inf)


def noise_scale(sensitivity: float, epsilon: float) -> float:
    """``sensitivity / epsilon`` rounded UP to a double: the Laplace scale of an ``epsilon``-DP release (Dwork et al.
    2006). Rounded to nearest, half of all quotients land below the exact one, and noise of that scale is
    ``epsilon (1 + 1e-16)``-DP, a hair more than the ``epsilon`` stated for it.

    >>> noise_scale(1.0, 3.0) >= Fraction(1, 3), noise_scale(2.0, 1.0)
    (True, 2.0)
    """
    return round_up(Fraction(sensitivity) / Fraction(epsilon))


def laplace_event(scale: float, sensitivity: float = 1.0) -> "dp_accounting.LaplaceDpEvent":
    """dp_accounting's event of Laplace noise of ``scale`` on a query of L1 ``sensitivity``: its noise multiplier
    ``scale / sensitivity`` rounded DOWN to a double, so that an accountant reading it (epsilon = 1 / multiplier)
    never states less than the noise gives.

    >>> laplace_event(1.0, 3.0).noise_multiplier <= Fraction(1, 3)
    True
    """
    return dp_accounting.LaplaceDpEvent(noise_multiplier=round_down(Fraction(scale) / Fraction(sensitivity)))


def pure_laplace_event(epsilon: float) -> "dp_accounting.LaplaceDpEvent":
    """The event of an ``epsilon``-DP Laplace release (noise of scale sensitivity / epsilon): noise multiplier
    ``1 / epsilon`` rounded DOWN (rounded to nearest, ``LaplaceDpEvent(1 / 3)`` stated epsilon 3 less an ulp for
    about half of all epsilons).

    >>> pure_laplace_event(3.0).noise_multiplier <= Fraction(1, 3)
    True
    """
    if math.isinf(epsilon):  # a whole image at an epsilon beyond the largest double: no noise to speak of
        return dp_accounting.LaplaceDpEvent(noise_multiplier=0.0)
    return dp_accounting.LaplaceDpEvent(noise_multiplier=round_down(1 / Fraction(epsilon)))


def as_float_array(values) -> tuple[np.ndarray, bool]:
    """Return ``values`` as float array and whether the input was a scalar; values that are not numbers (a word, a
    ragged list) are refused naming them, not with numpy's conversion error."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DPValueError(f"values must be numbers (a number or an array of them) to add noise to, got "
                           f"{values!r:.60}: {exc}") from None
    return arr, arr.ndim == 0


def finite_answer(arr: np.ndarray) -> np.ndarray:
    """``arr``, refused if it holds a NaN or an infinity: noise added to one comes out as the value itself, so the
    release would tell that the data made the query's answer NaN or infinite, which no epsilon covers (as the
    secure releases refuse it)."""
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise DPValueError(f"values hold {bad} NaN or infinite value(s): noise cannot hide them (NaN plus noise is "
                           "NaN, which tells that the data made the answer NaN); compute the query on finite, clipped "
                           "values first (fill or remove the missing ones)")
    return arr


def pure_epsilon_event(epsilon: float):
    """A dp_accounting event that bounds every pure ``epsilon``-DP mechanism: binary randomized response.

    Its privacy-loss distribution dominates that of every pure epsilon-DP mechanism
    (Kairouz, Oh & Viswanath, The composition theorem for differential privacy, ICML
    2015), so accountants composing it bound such a mechanism correctly. dp_accounting
    0.6 has no generic pure-epsilon event; this one is read under replace-one neighbours. Beyond epsilon 700 no
    such event holds the epsilon in double precision (its answer-at-random probability is below 2e-304): the event
    is then randomized response that never answers at random, epsilon infinity (an event of epsilon 700 for an
    epsilon of 800 stated less than the mechanism spends).
    """
    if not epsilon <= _LARGEST_RR_EPSILON:
        return dp_accounting.RandomizedResponseDpEvent(noise_parameter=0.0, num_buckets=2)
    with localcontext() as ctx:  # 2 / (e^eps + 1) rounded DOWN to a double: rounded up, it states a smaller epsilon
        # (at epsilon 0.01 the event read 0.009999999999999785). 50 digits beyond epsilon's own: e^eps is 1 + eps, and
        # with 50 digits in all, every epsilon below 1e-49 read as e^eps = 1, an event of epsilon 0
        ctx.prec = 50 + max(0, -Decimal(float(epsilon)).adjusted())
        exact = 2 / (Decimal(float(epsilon)).exp() + 1)
    p = float(exact)
    p = p if Decimal(p) <= exact else math.nextafter(p, 0.0)
    return dp_accounting.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=2)


#: The largest epsilon :func:`pure_epsilon_event` states exactly (e^700 is 1e304, near the largest double).
_LARGEST_RR_EPSILON = 700.0
