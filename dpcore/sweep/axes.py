"""The axes a sweep can run along, and how their values are checked and spaced.

The five named axes are the ones the papers behind the project plot: accuracy against
epsilon (Zhang 2021, Hansen 2023, Abadi et al. 2016), against the clipping norm, the noise level and the
learning rate (Ma et al. 2021), and against the training-set size. Any
other numeric knob a learner lists in :attr:`~dpcore.learners.LearnerSpec.params`
(``epochs``, ``teachers``...) can be swept too; its values are only checked to be
finite numbers, and integral values are passed as ``int``.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..exceptions import DPTypeError, DPValueError
from ..runtime.workload import Work, check_work
from ..validation import check_epsilon, check_fraction, check_int, check_positive


@dataclass(frozen=True)
class Axis:
    """A named sweep axis.

    Attributes
    ----------
    name : str
        ``"epsilon"``, ``"train_fraction"`` or a learner parameter name.
    label : str
        Axis title for charts, with its unit.
    log : bool
        Whether values are naturally log-spaced (and the x-axis drawn on a log scale).
    check : callable
        ``check(value, name) -> float`` raising a clear error for a bad value.
    symbol : str
        The axis's letter where space is short (``"σ"``); empty: the name in words.
    integer : bool
        Values are passed to learners as ``int``.
    """

    name: str
    label: str
    log: bool
    check: Callable[[object, str], float]
    integer: bool = False
    symbol: str = ""


def _finite(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise DPTypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise DPValueError(f"{name} must be a finite number, got {v!r}")
    return v


def _epsilon(value, name: str) -> float:
    return check_epsilon(value, name)


def _positive(value, name: str) -> float:
    return check_positive(value, name)


def _fraction(value, name: str) -> float:
    return check_fraction(value, name)


AXES: dict[str, Axis] = {
    "epsilon": Axis("epsilon", "ε (privacy budget)", True, _epsilon, symbol="ε"),
    "clip_norm": Axis("clip_norm", "Clipping norm C (L2)", True, _positive, symbol="C"),
    "noise_multiplier": Axis("noise_multiplier", "Noise multiplier σ (noise std / C)", False, _positive, symbol="σ"),
    "learning_rate": Axis("learning_rate", "Learning rate η", True, _positive, symbol="η"),
    "train_fraction": Axis("train_fraction", "Share of the training set used", False, _fraction),
}

#: Default (min, max, points) of each named axis: the Trade-off explorer's range boxes and ``sweep`` without
#: ``--values`` start from them.
DEFAULT_RANGES: dict[str, tuple[float, float, int]] = {
    "epsilon": (0.1, 10.0, 5),
    "clip_norm": (0.1, 10.0, 5),
    "noise_multiplier": (0.5, 4.0, 5),
    "learning_rate": (0.01, 1.0, 5),
    "train_fraction": (0.1, 1.0, 5),
}

#: Axes every learner accepts without listing them in ``LearnerSpec.params``
#: (``run_learner`` handles them itself).
BUILTIN_AXES = ("epsilon", "train_fraction")


def get_axis(name: str) -> Axis:
    """The :class:`Axis` for ``name``; unknown names become a generic numeric learner knob."""
    if not isinstance(name, str) or not name.strip():
        raise DPTypeError(f"axis must be a non-empty string such as 'epsilon', got {name!r}")
    if name in AXES:
        return AXES[name]
    return Axis(name, name.replace("_", " "), False, _finite, integer=False)


def normalise_value(value: float) -> float:
    """Round to 12 significant digits so log-spaced values from the page and the CLI agree.

    >>> normalise_value(0.30000000000000004)
    0.3
    """
    return float(f"{float(value):.12g}")


def _as_shown(values: tuple[float, ...]) -> tuple[float, ...]:
    """The values between the two ends with the fewest significant figures (at least 3) that keep them all distinct:
    the values a page, a report and the command line show are then the values the runs use. Rounded to 12 figures, a
    log-spaced ε of 10^0.5 was 3.16227766017: the advisor wrote "ε = 3.16", while the ε its runs spent, rounded up as
    a spent ε is, read 3.17 on the same line. The ends are kept as given.

    >>> _as_shown((0.1, 0.316227766017, 1.0, 3.16227766017, 10.0))
    (0.1, 0.316, 1.0, 3.16, 10.0)
    >>> _as_shown((1.0, 1.0025, 1.005, 1.0075, 1.01))
    (1.0, 1.002, 1.005, 1.008, 1.01)
    """
    if len(values) < 3:
        return values
    for digits in range(3, 13):
        out = (values[0], *(float(f"{v:.{digits}g}") for v in values[1:-1]), values[-1])
        if all(a < b for a, b in zip(out, out[1:])):
            return out
    return values


def value_range(axis: str, low: float, high: float, points: int, *, log: bool | None = None,
                points_name: str = "points") -> tuple[float, ...]:
    """``points`` values from ``low`` to ``high`` (both included), log-spaced for epsilon by default.

    Parameters
    ----------
    axis : str
        The axis name (decides the default spacing and the value checks).
    low, high : float
        The ends of the range, ``low <= high``.
    points : int
        How many values (>= 1; with 1 the range is just ``low``).
    log : bool, optional
        Force log (True) or linear (False) spacing; default: the axis's own.
    points_name : str
        How the caller's input for ``points`` is named in a refusal (the command line's ``--range N``).

    >>> value_range("epsilon", 0.1, 10, 3)
    (0.1, 1.0, 10.0)
    """
    ax = get_axis(axis)
    points = check_int(points, points_name, minimum=1)
    check_work(Work(runs=points, drivers={"runs": (points_name, points)}))  # before a billion values are allocated
    lo = ax.check(low, f"{axis} minimum")
    hi = ax.check(high, f"{axis} maximum")
    if lo > hi:
        raise DPValueError(f"the {axis} range is empty: minimum {lo:g} is above maximum {hi:g}; swap them")
    use_log = ax.log if log is None else bool(log)
    if use_log and lo <= 0:
        raise DPValueError(f"a log-spaced {axis} range needs a minimum > 0, got {lo:g}; use linear spacing")
    if points == 1:
        vals = np.array([lo])
    elif use_log:
        vals = np.geomspace(lo, hi, points)
    else:
        vals = np.linspace(lo, hi, points)
    out = _as_shown(tuple(dict.fromkeys(normalise_value(v) for v in vals)))
    if ax.integer:
        out = tuple(dict.fromkeys(float(round(v)) for v in out))
    return out


def default_values(axis: str) -> tuple[float, ...]:
    """The values of :data:`DEFAULT_RANGES` for ``axis`` (spaced as the axis is); a learner's own knob has none.

    >>> default_values("epsilon")
    (0.1, 0.316, 1.0, 3.16, 10.0)
    """
    if axis not in DEFAULT_RANGES:
        raise DPValueError(f"the axis {axis!r} has no default range: give its values (e.g. --values 0.5,1,2)")
    return value_range(axis, *DEFAULT_RANGES[axis])


__all__ = ["AXES", "Axis", "BUILTIN_AXES", "DEFAULT_RANGES", "default_values", "get_axis", "normalise_value",
           "value_range"]
