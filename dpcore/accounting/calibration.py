"""One calibration for every private learner: the noise that spends at most a target epsilon."""
from __future__ import annotations

import logging
import math
import warnings
from typing import Callable

import dp_accounting

from ..exceptions import DPCoreWarning, DPTypeError, DPValueError, user_stacklevel
from ..teaching.verdict import epsilon_text
from ..validation import check_delta, check_epsilon, check_fraction, check_int, check_positive
from .accountants import PLD_DISCRETIZATION, RDP_ORDERS, check_accountant, pld_discretization_for
from .events import dpsgd_event, shuffled_dpsgd_event
from .ledger import PLD_SMALLEST_DELTA, epsilon_of_event, reasons_unsaid
from .neighbouring import Neighbouring
from .trusted import RDP_STEP_ROUNDING, rdp_epsilon

__all__ = ["NOISE_SEARCH_RANGE", "calibrate", "calibrate_noise_multiplier", "dpsgd_noise_multiplier"]

#: Where :func:`calibrate` looks for a noise parameter unless told otherwise: below 1e-3 a noise multiplier gives
#: epsilons in the millions (no guarantee worth the name), above 1e7 the epsilon is 0 in double precision.
NOISE_SEARCH_RANGE = (1e-3, 1e7)
#: The PLD grid of the search (the answer is then checked on the finer grid of reported epsilons).
_SEARCH_DISCRETIZATION = 1e-3
_MAX_NUDGES = 200
#: A coarse-grid answer spending within this share of the target on the fine grid is kept (relative).
_NEAR = 0.005
#: How far below the target the answer's epsilon may land (relative): the search stops within it
_RTOL = 1e-6


def calibrate(
    make_event: Callable[[float], dp_accounting.DpEvent],
    *,
    target_epsilon: float,
    delta: float,
    accountant: str = "rdp",
    neighbouring: "Neighbouring | str" = Neighbouring.ADD_REMOVE,
    guess: float = 1.0,
    lower: float = NOISE_SEARCH_RANGE[0],
    upper: float = NOISE_SEARCH_RANGE[1],
    name: str = "noise_multiplier",
    pld_discretization: float = PLD_DISCRETIZATION,
) -> float:
    """Smallest noise parameter whose event spends at most ``target_epsilon`` at ``delta``.

    ``make_event(x)`` describes the mechanism run with noise parameter ``x`` (a noise
    multiplier, a Laplace scale ...); epsilon must fall as ``x`` grows. The search solves
    log epsilon = log target in log x (nearly linear for noise parameters: 4-6 evaluations of
    :func:`~dpcore.accounting.epsilon_of_event`, each mechanism's RDP curve computed once per
    trial x), bracketed from ``guess``. With ``accountant="pld"`` the RDP answer (PLD is
    tighter, so its x is at most that) seeds a search on a grid ten times coarser than ``pld_discretization``,
    whose answer seeds a search on that grid itself (the coarse grid's pessimism grows with the number of
    compositions, so its answer alone can be several times the noise needed). The answer is then
    checked at the grid of reported epsilons and nudged up by 0.1 % steps until it does not
    exceed the target: the one place dpcore enforces "never above target".

    Parameters
    ----------
    make_event : callable
        ``x -> DpEvent``.
    target_epsilon, delta : float
        ``delta = 0`` works for pure epsilon-DP events (basic composition).
    accountant : {"rdp", "pld"}
    neighbouring : Neighbouring or str
    guess, lower, upper : float
        Where the search starts, and the range it may search.
    name : str
        The parameter's name in error messages.
    pld_discretization : float
        The PLD grid the answer is checked on: the grid the run's epsilon will be reported on
        (:func:`~dpcore.accounting.accountants.pld_discretization_for`); the search runs on a grid ten times
        coarser.

    Raises
    ------
    DPValueError
        When no x up to ``upper`` meets the target (e.g. a Gaussian at delta = 0).

    References
    ----------
    Dowell and Jarratt, BIT 11, 1971 (the Illinois method); dp_accounting's
    ``calibrate_dp_mechanism`` (Brent's method on x itself), specialised here to noise parameters.

    Examples
    --------
    >>> import dp_accounting
    >>> b = calibrate(lambda b: dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(b), 10),
    ...               target_epsilon=1.0, delta=0.0)
    >>> 10.0 <= b < 10.01
    True
    """
    if not callable(make_event):
        raise DPTypeError("make_event must be a function x -> DpEvent of the noise parameter (e.g. lambda s: "
                          f"dpsgd_event(noise_multiplier=s, ...)), got {type(make_event).__name__}")
    target = check_epsilon(target_epsilon, "target_epsilon")
    delta = check_delta(delta)
    check_accountant(accountant)
    rel = Neighbouring.of(neighbouring)
    lower, upper = check_positive(lower, "lower"), check_positive(upper, "upper")
    guess = min(max(check_positive(guess, "guess"), lower), upper)

    def spent(x: float, acct: str, grid: float) -> float:
        event = make_event(x)
        if not isinstance(event, dp_accounting.DpEvent):
            raise DPTypeError(f"make_event({float(x)!r}) gave a {type(event).__name__}, not a dp_accounting DpEvent")
        return epsilon_of_event(event, delta=delta, accountant=acct, neighbouring=rel, pld_discretization=grid)

    def solve(acct: str, grid: float, start: float, width: float = 1e-7) -> float:
        return _solve(lambda x: spent(x, acct, grid), target, start, lower, upper, width=width,
                      what=f"{name} for epsilon={target:g}, delta={delta:g}",
                      hint=" (the Gaussian mechanism needs delta > 0; use Laplace for pure epsilon-DP)"
                      if delta == 0 else "")

    grid = check_positive(pld_discretization, "pld_discretization")
    with reasons_unsaid():  # why a trial's epsilon is infinity or RDP's: said below for the answer alone
        rdp_answer = None
        # below the least epsilon RDP's conversion states at this delta, where RDP answers (a PLD does not resolve so
        # small a delta), no noise reaches the target unless basic composition does (pure events): said at once, not
        # after a search to the top noise that said "even 1e+07 does not reach it", as if a larger noise would
        floor = _rdp_floor(delta)
        rdp_answers = accountant == "rdp" or delta < PLD_SMALLEST_DELTA
        if rdp_answers and target < floor and not spent(upper, accountant, grid) <= target:
            why = ("" if accountant == "rdp" else f"the PLD accountant cannot resolve a delta below "
                   f"{PLD_SMALLEST_DELTA:g} in double precision, and ")
            raise DPValueError(f"could not find a {name} for epsilon={target:g}, delta={delta:g}: {why}the RDP "
                               "accountant's conversion to (epsilon, delta) states no epsilon below "
                               f"{epsilon_text(floor, digits=4)} at that delta, however large the noise (its largest "
                               f"Rényi order is {RDP_ORDERS[-1]:g}); use a larger epsilon or delta"
                               + (", or accountant='pld'" if accountant == "rdp" else ""))
        if accountant == "pld":
            try:  # RDP first: cheap at any x; a tiny x would make PLD allocate huge arrays
                guess = rdp_answer = solve("rdp", grid, guess, width=0.05)  # a start for PLD: within 5 % is plenty
            except DPValueError:  # RDP cannot compose this event (or never reaches the target): search PLD alone
                pass
            coarse = solve("pld", _SEARCH_DISCRETIZATION * grid / PLD_DISCRETIZATION, guess)
            # The coarse grid is the more pessimistic, and over thousands of compositions far more: its answer can be
            # several times the noise needed (at epsilon 0.05 over 5,613 steps, 2,666 where 783 does). It is safe on
            # the fine grid; unless it spends there within _NEAR of the target (the usual case, and x then within
            # about as much of the fine answer), it starts a search on the fine grid, to 0.1 % of x.
            fine = spent(coarse, "pld", grid)
            x = coarse if not fine <= target * (1 - _NEAR) else min(coarse, solve("pld", grid, coarse, width=1e-3))
        else:
            x = solve("rdp", grid, guess)
    for _ in range(_MAX_NUDGES):
        with reasons_unsaid():
            eps = spent(x, accountant, grid)
        if eps <= target:
            spent(x, accountant, grid)  # again, from the caches: says why the answer's epsilon is what it is
            if x <= lower:
                _warn_at_bound(name, target, delta, lower, eps)
            return x
        x *= 1.001
    # PLD did not settle: its search grid resolves the target but the run's own grid would need more points than it
    # may hold, and hands the answer to RDP, whose bound can sit far above (a floor of ln(1/delta) over the largest
    # order: 0.0035 for a target of 0.0001). RDP's own answer, if the run's accountant confirms it, is one: more noise
    # than PLD needs, never a reported epsilon above the target
    if rdp_answer is not None:
        with reasons_unsaid():
            eps = spent(rdp_answer, accountant, grid)
        if eps <= target:
            spent(rdp_answer, accountant, grid)
            return rdp_answer
    raise DPValueError(f"could not find a {name} for epsilon={target:g}, delta={delta:g}: the search did not settle"
                       + (" (the PLD accountant cannot resolve so small an epsilon on its grid; use accountant='rdp' "
                          "or a larger epsilon)" if accountant == "pld" else ""))


def _rdp_floor(delta: float) -> float:
    """The least epsilon the RDP accountant states at ``delta`` for any mechanism run at least once: the conversion
    (dp_accounting's ``compute_epsilon``, Balle et al. 2020, Proposition 12) of the least RDP curve it composes, each
    step's rounding (:data:`~.trusted.RDP_STEP_ROUNDING`) at every order. Above 0 once delta is below about 1e-7."""
    return rdp_epsilon(RDP_ORDERS, [RDP_STEP_ROUNDING] * len(RDP_ORDERS), delta)[0] if delta > 0 else 0.0


def _warn_at_bound(name: str, target: float, delta: float, lower: float, spent: float) -> None:
    """Say that a calibration stopped at the bottom of its search range, what was asked and what is spent."""
    warnings.warn(f"{name}: epsilon={target:g} (delta={delta:g}) is met even by the least noise searched, "
                  f"{name}={lower:g}, which spends epsilon={epsilon_text(spent, digits=4)}; that noise is used, and "
                  "the epsilon it spends is what is reported (ask for a smaller epsilon to get a tighter calibration)",
                  DPCoreWarning, stacklevel=user_stacklevel())


def _solve(epsilon_at: Callable[[float], float], target: float, guess: float, lower: float, upper: float, *,
           what: str, hint: str = "", width: float = 1e-7) -> float:
    """Smallest x in [lower, upper] with epsilon_at(x) <= target, its epsilon within _RTOL of the target, or
    known to ``width`` (relative) where epsilon jumps past the target."""

    def gap(t: float) -> float:  # log eps - log target at x = e^t: nearly linear in t for noise parameters
        eps = epsilon_at(math.exp(t))
        return math.log(eps / target) if 0 < eps < math.inf else (math.inf if eps > 0 else -math.inf)

    floor, ceil, step = math.log(lower), math.log(upper), math.log(1.5)
    t0 = math.log(guess)
    g0 = gap(t0)
    if g0 > 0:  # more noise needed (+inf: no finite epsilon yet); epsilon falls roughly like 1/x
        lo, g_lo, hi = t0, g0, min(ceil, t0 + (max(step, g0) if math.isfinite(g0) else math.log(2.0)))
        while (g_hi := gap(hi)) > 0:
            if hi >= ceil:
                raise DPValueError(f"could not find a {what}: even {math.exp(ceil):g} does not reach it{hint}")
            lo, g_lo, hi = hi, g_hi, min(ceil, hi + step)
    elif -_RTOL <= g0:  # the guess is already the answer
        return guess
    else:
        # epsilon 0 at the guess (all of the event's loss fits in delta): step down, not straight to the floor. Just
        # under the target, step down as far as epsilon ~ 1/x says is enough, and half as far again
        down = (max(-step, 1.5 * g0) if g0 > -step else g0) if math.isfinite(g0) else -math.log(2.0)
        hi, g_hi, lo = t0, g0, max(floor, t0 + down)
        while (g_lo := gap(lo)) <= 0:
            if lo <= floor:
                return lower  # even the least noise allowed meets the target
            hi, g_hi, lo = lo, g_lo, max(floor, lo - step)
    return math.exp(_root_in_bracket(gap, lo, g_lo, hi, g_hi, width=width))


def _root_in_bracket(gap: Callable[[float], float], lo: float, g_lo: float, hi: float, g_hi: float, *,
                     width: float = 1e-7) -> float:
    """A t in [lo, hi] with -_RTOL <= gap(t) <= 0, given gap(lo) > 0 >= gap(hi) and gap decreasing.

    Aims at -_RTOL / 2, so that landing within _RTOL / 2 of the aim is on the safe side. Each step
    is inverse quadratic interpolation through the last three points (gap is nearly linear
    here, so 2-4 steps after the bracket usually do it), or regula falsi on the bracket with
    the Illinois modification (Dowell and Jarratt 1971) when interpolation leaves the bracket
    or two steps in a row land on the same side: the bracket always shrinks.
    """
    aim = -_RTOL / 2
    f_lo, f_hi = g_lo - aim, g_hi - aim
    points, same_side, side = [(lo, f_lo), (hi, f_hi)], 0, 0
    for _ in range(100):
        t = _inverse_quadratic(points[-3:]) if len(points) >= 3 and same_side < 2 else None
        if t is None or not lo < t < hi:
            finite = math.isfinite(f_lo) and math.isfinite(f_hi)
            t = lo + f_lo * (hi - lo) / (f_lo - f_hi) if finite else 0.5 * (lo + hi)
            if not lo < t < hi:
                t = 0.5 * (lo + hi)
        f = gap(t) - aim
        if abs(f) <= _RTOL / 2:
            return t
        new_side = 1 if f > 0 else -1
        same_side = same_side + 1 if new_side == side else 0
        if f > 0:
            lo, f_lo = t, f
            f_hi = f_hi / 2 if same_side else f_hi  # Illinois: the stale end counts half
        else:
            hi, f_hi = t, f
            f_lo = f_lo / 2 if same_side else f_lo
        side = new_side
        points.append((t, f))
        if hi - lo < width:  # x known to ``width`` (relative): epsilon jumps here (e.g. to 0); hi is safe
            break
    return hi


def _inverse_quadratic(points: list[tuple[float, float]]) -> float | None:
    """t where the parabola t(f) through three (t, f) points meets f = 0 (None if two f coincide)."""
    (a, fa), (b, fb), (c, fc) = points
    if not all(map(math.isfinite, (fa, fb, fc))) or fa == fb or fb == fc or fa == fc:
        return None
    return (a * fb * fc / ((fa - fb) * (fa - fc)) + b * fa * fc / ((fb - fa) * (fb - fc))
            + c * fa * fb / ((fc - fa) * (fc - fb)))


def calibrate_noise_multiplier(
    *,
    target_epsilon: float,
    delta: float,
    sample_rate: float,
    steps: int,
    accountant: str = "rdp",
    pld_discretization: float = PLD_DISCRETIZATION,
) -> float:
    """Smallest DP-SGD noise multiplier whose epsilon after ``steps`` is <= ``target_epsilon``.

    :func:`calibrate` on :func:`~dpcore.accounting.dpsgd_event` (add/remove neighbours); ``pld_discretization``
    is the PLD grid the run's epsilon will be reported on. ``sample_rate`` and ``steps`` are as in
    :func:`~dpcore.accounting.dpsgd_epsilon`: from a batch size and epochs over n records, ``q = batch_size / n``
    and ``steps = ceil(epochs / q)``.

    Examples
    --------
    >>> from dpcore.accounting import dpsgd_epsilon
    >>> s = calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5, sample_rate=0.01, steps=1000)
    >>> 0.99 < dpsgd_epsilon(noise_multiplier=s, sample_rate=0.01, steps=1000, delta=1e-5) <= 1.0
    True
    """
    delta = check_delta(delta, allow_zero=False)
    q = check_fraction(sample_rate, "sample_rate")
    steps = check_int(steps, "steps", minimum=1)
    return calibrate(lambda s: dpsgd_event(noise_multiplier=s, sample_rate=q, steps=steps),
                     target_epsilon=target_epsilon, delta=delta, accountant=accountant,
                     pld_discretization=pld_discretization)


def dpsgd_noise_multiplier(target_epsilon: float, delta: float, sample_rate: float, steps: int,
                           accountant: str = "rdp") -> float:
    """The noise multiplier a DP-SGD run calibrated to ``target_epsilon`` trains with:
    :func:`calibrate_noise_multiplier` on the PLD grid its epsilon is reported on
    (:func:`~dpcore.accounting.accountants.pld_discretization_for`).

    dp_accounting logs convergence chatter for large sample rates at fractional orders while the search runs; it
    excludes those orders (a valid, slightly looser bound), so the messages are noise to a user and are silenced.
    """
    absl_logger = logging.getLogger("absl")
    level = absl_logger.level
    absl_logger.setLevel(logging.ERROR)
    try:
        return calibrate_noise_multiplier(target_epsilon=target_epsilon, delta=delta, sample_rate=sample_rate,
                                          steps=steps, accountant=accountant,
                                          pld_discretization=pld_discretization_for(target_epsilon))
    finally:
        absl_logger.setLevel(level)


def shuffled_dpsgd_noise_multiplier(target_epsilon: float, delta: float, epochs: int, accountant: str = "rdp") -> float:
    """The noise multiplier a DP-SGD run on shuffled batches calibrated to ``target_epsilon`` over ``epochs`` trains
    with: :func:`calibrate` on :func:`~dpcore.accounting.shuffled_dpsgd_event` (no amplification; replace-one
    neighbours), on the PLD grid its epsilon is reported on.

    Examples
    --------
    >>> from dpcore.accounting import epsilon_of_event, shuffled_dpsgd_event
    >>> s = shuffled_dpsgd_noise_multiplier(1.0, 1e-5, 10)
    >>> 0.99 < epsilon_of_event(shuffled_dpsgd_event(noise_multiplier=s, epochs=10), delta=1e-5) <= 1.0
    True
    """
    delta = check_delta(delta, allow_zero=False)
    epochs = check_int(epochs, "epochs", minimum=1)
    return calibrate(lambda s: shuffled_dpsgd_event(noise_multiplier=s, epochs=epochs), target_epsilon=target_epsilon,
                     delta=delta, accountant=accountant, guess=2.0 * math.sqrt(epochs),
                     pld_discretization=pld_discretization_for(target_epsilon))
