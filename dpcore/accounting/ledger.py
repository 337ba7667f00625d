"""One ledger: compose dp_accounting events as they are spent, ask epsilon so far or epsilon-if.

:class:`PrivacyLedger` is the odometer of the DP-SGD engine (one event per epoch), of the
epsilon curves, and of a dashboard session's running total; :func:`epsilon_of_event`
is a one-event ledger. The numbers are dp_accounting's: the RDP accountant adds
``count * curve`` for every mechanism it meets and converts the sum with
``compute_epsilon``; the PLD accountant composes ``pld(mechanism).self_compose(count)``.
The ledger does exactly that, but keeps each mechanism's RDP curve or one-step PLD
(computed by dp_accounting, once per mechanism) instead of recomputing it for every
epoch and every trial noise multiplier: that is what makes a per-epoch odometer, a
calibration and a sweep of hundreds of runs cheap. If a future dp_accounting renames
the accountants' internal state, the ledger composes with fresh accountants instead
(same numbers, slower).

Mechanisms the chosen accountant cannot model but whose guarantee is known (pure
epsilon-DP Laplace or randomized response under a relation the accountant refuses,
:class:`~dpcore.accounting.events.EpsilonDeltaDpEvent`) are composed with the rest by
basic composition (Dwork and Roth 2014, Theorem 3.16). A mechanism known by its RDP curve
(:class:`~dpcore.accounting.events.RdpCurveDpEvent`) is added to the RDP accountant's sum like
dp_accounting's curves; the PLD accountant hands a composition holding one to RDP. At delta = 0 the answer is the
basic composition of pure events (both accountants answer infinity there); at delta > 0
it is never above that sum either.

The neighbouring relation names what the guarantee protects. dpcore's events already
divide their noise by the sensitivity under that relation, so dp_accounting reads a plain
Gaussian or Laplace event under its ``ADD_OR_REMOVE_ONE`` convention whatever the
relation; the relation is handed to dp_accounting where it changes the mechanism's
analysis: subsampling (amplification differs) and randomized response (defined for a
replaced value).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import sys
import threading
import warnings
from collections import OrderedDict
from fractions import Fraction
from typing import Iterator

import dp_accounting
import numpy as np
from dp_accounting import pld, rdp

from ..exceptions import BudgetExceededError, DPCoreWarning, DPTypeError, DPValueError, user_stacklevel
from ..teaching.verdict import EPSILON_TOLERANCE, epsilon_text
from ..validation import check_delta, check_epsilon, check_positive, warn_large_delta
from .accountants import PLD_DISCRETIZATION, RDP_ORDERS, check_accountant, make_accountant
from .events import DiscreteGaussianDpEvent, EpsilonDeltaDpEvent, RdpCurveDpEvent, added_up, atom_pure_epsilon, flatten
from .neighbouring import UNIT_SAID, UNITS, Neighbouring, _unit, covers, replace_one_guarantee
from .trusted import (
    ARITHMETIC_ERRORS,
    quiet,
    rdp_epsilon,
    trusted_delta,
    trusted_epsilon,
    trusted_rdp,
    trusted_step_rdp,
)

__all__ = ["PrivacyLedger", "PrivacyProfile", "epsilon_of_event", "privacy_profile", "repeat_and_select_epsilon"]

_ORDERS = np.array(RDP_ORDERS)
_ORDER_TWO = int(np.flatnonzero(_ORDERS == 2.0)[0])
#: a mechanism whose accountant state says "no differential privacy at all" (e.g. noise 0)
_NON_PRIVATE = object()


def _cached(maxsize: int):
    """lru_cache that computes (without caching) when an argument is unhashable (events holding lists)."""
    def wrap(fn):
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def call(*args):
            try:
                return cached(*args)
            except TypeError:  # unhashable event
                return fn(*args)
        call.cache_clear, call.cache_info = cached.cache_clear, cached.cache_info
        return call
    return wrap


@_cached(4096)
def _supports(accountant: str, neighbouring: Neighbouring, atom) -> bool:
    if isinstance(atom, RdpCurveDpEvent):  # the ledger reads its curve itself (_rdp_curve_noted); a PLD cannot
        return accountant == "rdp"
    return make_accountant(accountant, neighbouring=neighbouring).supports(atom)


#: RDP curves another process computed with this code (:func:`_know_rdp_curves`), each taken once by _rdp_curve_noted
_KNOWN_CURVES: dict = {}


def _rdp_curves(event: dp_accounting.DpEvent, neighbouring: Neighbouring = Neighbouring.ADD_REMOVE) -> list:
    """The RDP curve the ledger reads for each mechanism of ``event`` (in :func:`~.events.flatten`'s order), as
    lists of floats, or None where it has none: what a process that calibrated the event hands to one that will
    account it (:func:`_know_rdp_curves`)."""
    out = []
    for atom, _ in flatten(event):
        curve = _rdp_curve(atom, _relation_for(atom, neighbouring))
        out.append(None if curve is None else curve.tolist())
    return out


def _know_rdp_curves(event: dp_accounting.DpEvent, curves: list,
                    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE) -> None:
    """Keep the curves :func:`_rdp_curves` gave for ``event`` in another process (dp_accounting's arithmetic, by this
    same code on the same numbers, read fail closed there), so that the first ledger here to compose one of its
    mechanisms does not compute it again (each takes about 25 ms of pure Python). Only curves read fail closed
    (no ``nan``, nothing below 0) with a finite order are kept: a curve infinite everywhere is computed here, with
    the reason its epsilon is infinity.

    Only the calibrating process of :mod:`dpcore.accounting.ahead` hands curves here, after it has named itself as
    this very module; a curve is still checked against dp_accounting's value at order 2, computed here (65 us), and
    dropped unless equal to the last bit: a curve that belongs to another noise, or was garbled on the way, is never
    read (a curve of zeros would report epsilon 0)."""
    if len(_KNOWN_CURVES) > 512:
        _KNOWN_CURVES.clear()
    for (atom, _), curve in zip(flatten(event), curves):
        if isinstance(atom, RdpCurveDpEvent):
            continue  # its curve is in the event itself
        arr = None if curve is None else np.array(curve, dtype=float)
        if arr is None or arr.shape != _ORDERS.shape or not np.isfinite(arr).any() or np.isnan(arr).any() \
                or not (arr >= 0).all():
            continue
        rel = _relation_for(atom, neighbouring)
        check = rdp.RdpAccountant(orders=[2.0], neighboring_relation=rel.relation)  # dp_accounting, one order
        try:
            with quiet():
                check.compose(atom)
            value = trusted_step_rdp(check._rdp)[0]
        except (*ARITHMETIC_ERRORS, AttributeError):
            continue
        if value != arr[_ORDER_TWO]:
            continue
        arr.flags.writeable = False
        _KNOWN_CURVES[(atom, rel)] = arr


@_cached(1024)
def _rdp_curve_noted(atom, neighbouring: Neighbouring) -> tuple[np.ndarray | None, str | None]:
    """dp_accounting's RDP curve of ONE application of ``atom``, read fail closed (:func:`~.trusted.trusted_rdp`):
    infinity at every order where dp_accounting's arithmetic breaks down (a noise too small to square); None if
    the accountant no longer shows its curve. With it, cached together, the reason its epsilon is then reported as
    infinity (None when there is none): a composition that reads the curve says it to its own caller
    (:meth:`_Composition.note`), whether the curve was computed now or taken from the cache. An
    :class:`~.events.RdpCurveDpEvent` is its own curve, read at the ledger's orders."""
    if isinstance(atom, RdpCurveDpEvent):
        curve = atom.curve_at(_ORDERS)
        curve.flags.writeable = False
        return curve, (None if np.isfinite(curve).any() else _untrusted(
            atom, "its RDP curve is infinite at every order the accountant reads"))
    if (known := _KNOWN_CURVES.pop((atom, neighbouring), None)) is not None:
        return known, None  # finite at some order (_know_rdp_curves keeps no other): nothing to explain
    inner = getattr(atom, "event", atom)
    if isinstance(inner, dp_accounting.GaussianDpEvent) and 0 < inner.noise_multiplier < _SIGMA_OVERFLOWS:
        # 1/(2 sigma^2) overflows: every order is infinite (dp_accounting takes seconds to find that out, order by
        # order, answers nan at the integer ones and divides by zero below 1e-154)
        curve = np.full(_ORDERS.shape, math.inf)
        curve.flags.writeable = False
        return curve, _untrusted(atom, "its Rényi divergence overflows double precision at every order")
    acc = make_accountant("rdp", neighbouring=neighbouring)
    reason = None
    try:
        with quiet():
            acc.compose(atom)
    except ARITHMETIC_ERRORS:  # e.g. sigma ** 2 == 0 for a noise multiplier of 1e-308: no order says anything
        reason = _untrusted(atom, "dp_accounting cannot compute its Rényi divergence in double precision")
        curve = np.full(_ORDERS.shape, math.inf)
    else:
        curve = getattr(acc, "rdp", None)
        if curve is None or np.shape(curve) != _ORDERS.shape:
            return None, None
        if not np.isfinite(trusted_rdp(curve)).any() and not isinstance(atom, dp_accounting.NonPrivateDpEvent):
            reason = _untrusted(atom, "its Rényi divergence is infinite, or overflows double precision, at every order")
        curve = trusted_step_rdp(curve)
    curve.flags.writeable = False
    return curve, reason


def _rdp_curve(atom, neighbouring: Neighbouring) -> np.ndarray | None:
    """The curve of :func:`_rdp_curve_noted` without its reason (for what only estimates or hands the curve on)."""
    return _rdp_curve_noted(atom, neighbouring)[0]


_rdp_curve.cache_clear, _rdp_curve.cache_info = _rdp_curve_noted.cache_clear, _rdp_curve_noted.cache_info

#: Below this noise multiplier 1 / (2 sigma^2) is beyond the largest double.
_SIGMA_OVERFLOWS = math.sqrt(0.5 / sys.float_info.max)


def _untrusted(atom, why: str) -> str:
    """Why the epsilon of ``atom`` is reported as infinity, in words for whoever reads that infinity."""
    return (f"{_noise_of(atom)}: {why}; its epsilon is reported as infinity (no privacy guarantee can be stated; use "
            "a larger noise multiplier)")


@functools.lru_cache(maxsize=64)
def _poisson_gaussian_pld(q: float, sigma: float, neighbouring: Neighbouring, discretization: float):
    """The one-step PLD of a Poisson-subsampled Gaussian, built as dp_accounting's PLDAccountant builds it."""
    with quiet():
        return pld.privacy_loss_distribution.from_gaussian_mechanism(
            standard_deviation=sigma, value_discretization_interval=discretization, sampling_prob=q,
            neighboring_relation=neighbouring.relation)


#: The most grid points a composed PLD may hold (a float array of 40 MB; composing one takes a few seconds).
#: Beyond it the PLD accountant hands the composition to RDP, which gives a valid, looser bound.
PLD_MAX_POINTS = 5e6
#: The most compositions of one mechanism the PLD accountant takes on. dp_accounting composes them by repeated
#: squaring, and the distribution's support grows with them: 10^6 Poisson-subsampled Gaussian steps took 0.2 s,
#: 10^7 took 4-8 s and 10^8 more than 40 s (noise 50-1,000, q 0.01, grid 1e-3), so `noise --accountant pld` over
#: 10^9 steps ran for minutes. Beyond it the composition goes to RDP too (a valid, looser bound), and says so.
PLD_MAX_STEPS = 2_000_000
#: The widest discrete Gaussian (sigma in integer steps) whose PLD the ledger builds: dp_accounting walks its support
#: integer by integer, about 23 sigma of them (0.07 s at sigma 3,824, SecureGaussian's at epsilon 1 on its default
#: grid; 0.9 s at 30,000; 2.7 s at 100,000). Wider ones go to RDP, which bounds them too.
DISCRETE_PLD_MAX_SIGMA = 20_000.0
#: How far dp_accounting's Gaussian PLD reaches, in standard deviations (its tail truncation, with margin).
_PLD_TAIL_SIGMAS = 10.0


def pld_grid_points(atom, count: int, neighbouring: Neighbouring, discretization: float) -> float:
    """About how many points the PLD of ``count`` runs of ``atom`` holds (0 for events it does not estimate).

    For a Gaussian, Poisson-subsampled or not: one step's privacy loss spans about ``1/sigma^2 + 2 z / sigma``
    (the Gaussian's support truncated at z standard deviations); the composition's truncated support reaches
    about the epsilon at delta = 1e-15, which RDP gives cheaply. For a Laplace of scale b, one step spans
    ``2/b`` and the composition ``count/b``; for a discrete Laplace of parameter a on answers D apart, ``2 a D`` and
    ``count`` times that; for an epsilon-DP randomized response, ``2 epsilon`` and ``count`` times that. All are
    divided by the grid's spacing. Replace-one neighbours
    count as a doubled sensitivity. Checked against dp_accounting on sigma 0.5-5, q 0.01-1 and 10-1e5
    steps: from half to three times the real size.
    """
    scale = 2.0 if neighbouring is Neighbouring.REPLACE_ONE else 1.0  # replace-one doubles the sensitivity
    if isinstance(atom, dp_accounting.dp_event.DiscreteLaplaceDpEvent):  # losses on [-a D, a D], adding up
        one = scale * float(atom.noise_parameter) * atom.sensitivity
        return 2.0 * one * (1.0 + count) / discretization
    if isinstance(atom, dp_accounting.RandomizedResponseDpEvent):  # losses on [-eps, eps] (a value replaced)
        return 2.0 * atom_pure_epsilon(atom) * (1.0 + count) / discretization
    inner, q = (atom.event, float(atom.sampling_probability)) if isinstance(
        atom, dp_accounting.PoissonSampledDpEvent) else (atom, 1.0)
    if not isinstance(inner, (dp_accounting.GaussianDpEvent, dp_accounting.LaplaceDpEvent)):
        return 0.0
    noise = float(inner.noise_multiplier) / scale
    if noise < 1e-100:
        return math.inf
    if isinstance(inner, dp_accounting.GaussianDpEvent):
        one, proxy = 1.0 / noise**2 + 2.0 * _PLD_TAIL_SIGMAS / noise, dp_accounting.GaussianDpEvent(noise)
        most = math.inf
    else:
        one, proxy = 2.0 / noise, dp_accounting.LaplaceDpEvent(noise)
        most = count / noise  # pure epsilon composes at most linearly
    curve = _rdp_curve(dp_accounting.PoissonSampledDpEvent(q, proxy) if q < 1 else proxy, Neighbouring.ADD_REMOVE)
    if curve is None:
        return one / discretization
    with quiet():
        reach = min(most, rdp_epsilon(_ORDERS, count * curve, 1e-15)[0])
    return (one + 2.0 * reach) / discretization


def _noise_of(atom) -> str:
    inner = getattr(atom, "event", atom)
    noise = getattr(inner, "noise_multiplier", None)
    return f"noise_multiplier={noise:g}" if noise is not None else str(atom)


def _rdp_instead_reason(atom, count: int, points: float) -> str:
    """Why the PLD accountant handed ``count`` runs of ``atom`` to RDP (its grid would not fit)."""
    need = (f"would need about {points:.2g} grid points" if math.isfinite(points)
            else "cannot hold a grid") + f" for {_noise_of(atom)} over {count} steps (at most {PLD_MAX_POINTS:.0g})"
    return (f"the PLD accountant {need}; this epsilon comes from the RDP accountant instead (a valid upper bound, "
            "looser than PLD's)")


@_cached(256)
def _pld_of(atom, count: int, neighbouring: Neighbouring, discretization: float):
    """PLD of ``count`` applications of ``atom``; ``_NON_PRIVATE``; or None if dp_accounting's internals moved."""
    if isinstance(atom, DiscreteGaussianDpEvent):  # its own PLD: the continuous Gaussian's understates its delta
        with quiet():
            return pld.privacy_loss_distribution.from_discrete_gaussian_mechanism(
                atom.sigma, sensitivity=atom.sensitivity, value_discretization_interval=discretization,
            ).self_compose(count)
    if (isinstance(atom, dp_accounting.RandomizedResponseDpEvent) and atom.num_buckets > 1
            and atom.noise_parameter > 0):
        # its own PLD, composed count times: dp_accounting 0.6's PLDAccountant composes a randomized response ONCE
        # whatever the count it is given, so 1,000 uses at epsilon 1 read epsilon 1.0 (at delta 1e-5; 578 composed)
        with quiet():
            return pld.privacy_loss_distribution.from_randomized_response(
                noise_parameter=atom.noise_parameter, num_buckets=atom.num_buckets,
                value_discretization_interval=discretization, neighboring_relation=neighbouring.relation,
            ).self_compose(count)
    if (isinstance(atom, dp_accounting.PoissonSampledDpEvent) and isinstance(atom.event, dp_accounting.GaussianDpEvent)
            and atom.sampling_probability > 0 and atom.event.noise_multiplier > 0):
        one = _poisson_gaussian_pld(atom.sampling_probability, atom.event.noise_multiplier, neighbouring,
                                    discretization)
        with quiet():
            return one.self_compose(count)
    acc = make_accountant("pld", neighbouring=neighbouring, pld_discretization=discretization)
    with quiet():
        acc.compose(atom, count)
    if getattr(acc, "_contains_non_dp_event", False):
        return _NON_PRIVATE
    return getattr(acc, "_pld", None)


def _sampled_discrete_gaussian(atom) -> bool:
    """``atom`` subsamples a discrete Gaussian: dp_accounting's PLD would read it as a continuous Gaussian."""
    return isinstance(atom, _SAMPLED) and isinstance(atom.event, DiscreteGaussianDpEvent)


#: Events whose meaning depends on the relation: subsampling amplifies differently under add/remove and
#: replace-one. Every other noise event is read under dp_accounting's ADD_OR_REMOVE_ONE convention, "the two
#: output distributions are one unit apart": dpcore's events already divide the noise by the sensitivity
#: under their own relation (replace-one doubles it where it must), and dp_accounting's REPLACE_ONE would
#: double that shift again (its PLD does for a Gaussian; its RDP does not).
_SAMPLED = (dp_accounting.PoissonSampledDpEvent, dp_accounting.SampledWithReplacementDpEvent,
            dp_accounting.SampledWithoutReplacementDpEvent)


def _relation_for(atom, neighbouring: Neighbouring) -> Neighbouring:
    """The relation dp_accounting must compose ``atom`` under, for a guarantee under ``neighbouring``."""
    if isinstance(atom, _SAMPLED):
        return neighbouring
    if isinstance(atom, dp_accounting.RandomizedResponseDpEvent):
        return Neighbouring.REPLACE_ONE  # one value replaced: what randomized response is defined for
    return Neighbouring.ADD_REMOVE


#: The PLDs of the chains composed lately, by chain (every prefix of a chain is one): the 128 most recent.
_PLD_PREFIXES: OrderedDict = OrderedDict()
_PLD_PREFIXES_KEPT = 128
_PLD_PREFIXES_LOCK = threading.Lock()


def _pld_chain(chain: tuple):
    """The PLD of the (atom, count, relation, discretization) steps of ``chain``, composed in order (see
    :func:`_pld_chain_and_slack`)."""
    return _pld_chain_and_slack(chain)[0]


def _pld_chain_and_slack(chain: tuple) -> tuple:
    """The PLD of the (atom, count, relation, discretization) steps of ``chain``, composed in order, and how far a
    delta read from it may lie below the exact one (:func:`pld_delta_slack`, summed over every FFT that made it).

    Every prefix is kept too, so a second run of the same DP-SGD schedule (a shadow model,
    a repeated seed, a sweep) reuses the per-epoch compositions of the first: the odometer's
    numbers are data-independent. Each step must have a PLD (see :func:`_pld_of`). The chain is
    composed step by step from its longest kept prefix, in a loop: composed by recursion, a
    composition of a thousand distinct mechanisms died of Python's recursion limit.

    The rounding is measured on each step's own PLD (a self-composition by FFT) and on each composition, and added
    up: composing drops the tails' negative mass with the rest of the truncated tails, so the composed PLD alone
    hides the rounding of the steps it holds (100,000 steps of a Gaussian of noise 100 held 6.8e-12 of negative mass,
    none once composed into the chain; read at delta 1e-10 less the 1e-12 left, epsilon 24.5558 where the exact
    composed Gaussian needs 24.5697).
    """
    try:
        hash(chain)
    except TypeError:  # an event holding a list: composed without keeping anything
        kept, start = 0, None
    else:
        with _PLD_PREFIXES_LOCK:
            kept = len(chain)
            while kept and chain[:kept] not in _PLD_PREFIXES:
                kept -= 1
            start = _PLD_PREFIXES[chain[:kept]] if kept else None
            if kept:
                _PLD_PREFIXES.move_to_end(chain[:kept])
    # as PLDAccountant starts, so the numbers are its own
    distribution, rounding = start if kept else (
        pld.privacy_loss_distribution.identity(value_discretization_interval=chain[0][3]), 0.0)
    for i in range(kept, len(chain)):
        atom, count, rel, disc = chain[i]
        step = _pld_of(atom, count, rel, disc)
        with quiet():
            distribution = distribution.compose(step)
        rounding += _fft_rounding(step) + _fft_rounding(distribution)
        _keep_prefix(chain[:i + 1], (distribution, rounding))
    return distribution, max(PLD_DELTA_ROUNDING, rounding)


def _keep_prefix(prefix: tuple, kept: tuple) -> None:
    try:
        hash(prefix)
    except TypeError:
        return
    with _PLD_PREFIXES_LOCK:
        _PLD_PREFIXES[prefix] = kept
        _PLD_PREFIXES.move_to_end(prefix)
        while len(_PLD_PREFIXES) > _PLD_PREFIXES_KEPT:
            _PLD_PREFIXES.popitem(last=False)


#: The least absolute error assumed in a delta read from a PLD dp_accounting composed by FFT (its round-off spreads
#: about 1e-17 over every grid point; 1,000 to 10,000 composed Gaussians read 4e-14 to 1.2e-13 below their exact delta).
PLD_DELTA_ROUNDING = 1e-12
#: A PLD answers a delta only from this many times its rounding up; below, the RDP accountant answers.
_PLD_RESOLVES = 10.0
#: The least delta a PLD answers with a fixed rounding (:data:`PLD_DELTA_ROUNDING`); below it the RDP accountant does.
PLD_SMALLEST_DELTA = _PLD_RESOLVES * PLD_DELTA_ROUNDING


def _fft_rounding(distribution) -> float:
    """Ten times the probability the FFT's round-off made negative in ``distribution`` (0 without the PMFs'
    internals): the round-off is as likely up as down, so the mass pushed below zero measures it (dp_accounting's
    own numbers: 3.7e-14 of negative mass where the delta read was 3.7e-14 too low; 2.4e-12 after 100,000 steps of
    DP-SGD at q = 0.01)."""
    negative = 0.0
    for pmf in (getattr(distribution, "_pmf_remove", None), getattr(distribution, "_pmf_add", None)):
        probs = getattr(pmf, "_probs", None)
        if probs is None and isinstance(getattr(pmf, "_loss_probs", None), dict):
            probs = np.fromiter(pmf._loss_probs.values(), dtype=float)
        if probs is not None:
            probs = np.asarray(probs, dtype=float)
            negative = max(negative, -float(probs[probs < 0].sum()))
    return 10.0 * negative


def pld_delta_slack(distribution) -> float:
    """How far a delta read from ``distribution`` may lie below the exact one: :data:`PLD_DELTA_ROUNDING`, or ten
    times the probability its FFT's round-off made negative (:func:`_fft_rounding`), whichever is larger. Without
    the PMFs' internals (a future dp_accounting), :data:`PLD_DELTA_ROUNDING`. A PLD the ledger composed is read with
    the rounding of every FFT that made it (:func:`_pld_chain_and_slack`)."""
    return max(PLD_DELTA_ROUNDING, _fft_rounding(distribution))


@_cached(1024)
def _pld_chain_epsilon(chain: tuple, delta: float) -> float | None:
    """The PLD's epsilon at ``delta``, read fail closed: at ``delta`` less the PLD's rounding
    (:func:`pld_delta_slack`); None where ``delta`` is within :data:`_PLD_RESOLVES` times that rounding (an FFT in
    double precision cannot tell such a delta apart: sigma 3 over 1,000 steps at delta 1e-12 read 128.888 where the
    exact composed Gaussian needs 128.940)."""
    distribution, slack = _pld_chain_and_slack(chain)
    if delta < _PLD_RESOLVES * slack:
        return None
    with quiet():
        return trusted_epsilon(distribution.get_epsilon_for_delta(delta - slack))


def _small_delta_reason(delta: float, *, instead: bool = True) -> str:
    """Why a PLD's epsilon at ``delta`` came from the RDP accountant (the PLD cannot resolve that delta)."""
    why = (f"the PLD accountant cannot resolve delta={delta:g} in double precision (its FFT's rounding is about "
           f"{PLD_DELTA_ROUNDING:g} or more)")
    return f"{why}; this epsilon comes from the RDP accountant instead (a valid upper bound)" if instead else why


#: Set inside :func:`reasons_unsaid`: compositions keep their reasons without saying them.
_UNSAID: contextvars.ContextVar[bool] = contextvars.ContextVar("dpcore_reasons_unsaid", default=False)


#: How the reason of an epsilon read at delta = 0 that is infinity because of Gaussian (or other not pure) noise starts.
PURE_READ = "epsilon is read at delta = 0 (pure epsilon-DP)"


@contextlib.contextmanager
def reasons_unsaid() -> Iterator[None]:
    """Inside the block (this thread or task only), an epsilon computed says no reason for its value (infinity, or
    the RDP accountant's): for numbers nobody is shown, such as a calibration's trial noises, whose search then says
    those of the noise it answers."""
    token = _UNSAID.set(True)
    try:
        yield
    finally:
        _UNSAID.reset(token)


class _Composition:
    """The events composed so far, kept in the form the accountant composes fastest (see the module doc).

    Where a number it gives cannot be dp_accounting's usual one (an epsilon reported as infinity because no order of
    an RDP curve says anything; a PLD grid too large, or a delta too small for a PLD, answered by RDP instead), it
    says why to its caller (:meth:`note`) each time it meets the reason, from a cached curve too, but once per
    composition and the copies made from it (a ledger's previews): every run's odometer, every
    :func:`epsilon_of_event`, explains its own number, and an odometer read after each of a thousand epochs does not
    say it a thousand times. (Said once per process instead, the second visitor of a server shared by a class got
    the same infinity with no reason.)
    """

    def __init__(self, accountant: str, neighbouring: Neighbouring, discretization: float) -> None:
        self.accountant, self.neighbouring, self.discretization = accountant, neighbouring, discretization
        self.basic = 0.0  # basic composition of everything (inf unless all of it is pure)
        self.impure = None  # the first mechanism composed that is not pure epsilon-DP (why basic is inf)
        self.outside_epsilon = self.outside_delta = 0.0  # what the accountant cannot model, basic composition
        self.supported: list[tuple[dp_accounting.DpEvent, int, Neighbouring]] = []  # what it can, in order
        self.rdp: dict | None = {}  # (atom, relation) -> (curve, count); None: compose with fresh accountants
        self.pld_chain: tuple | None = ()  # the PLD steps composed (see _pld_chain); None: fresh accountants
        self.non_private = False
        self.answered_by: str | None = None  # the accountant whose number the last epsilon() gave
        # both shared with the copies (a ledger's previews): what note() was told about the numbers given, in order,
        # and what of it was said to the caller
        self.reasons: dict[str, None] = {}
        self._said: set[str] = set()

    def copy(self) -> "_Composition":
        new = object.__new__(_Composition)
        new.__dict__.update(self.__dict__)
        new.supported = list(self.supported)
        new.rdp = None if self.rdp is None else dict(self.rdp)
        return new  # the PLD chain is a tuple: extending it makes a new one; the reasons are shared on purpose

    def note(self, reason: str | None) -> None:
        """Keep ``reason`` (why a number here is infinity, or another accountant's) with these numbers, and warn it
        to the caller unless this composition or one it was copied from said it already."""
        if reason is None:
            return
        self.reasons.setdefault(reason, None)
        if reason not in self._said and not _UNSAID.get():
            self._said.add(reason)
            warnings.warn(reason, DPCoreWarning, stacklevel=user_stacklevel())

    def add(self, event: dp_accounting.DpEvent) -> None:
        plan = []
        for atom, count in flatten(event):  # check everything before changing anything
            rel = _relation_for(atom, self.neighbouring)
            if isinstance(atom, RdpCurveDpEvent) or (not isinstance(atom, EpsilonDeltaDpEvent)
                                                     and _supports(self.accountant, rel, atom)
                                                     and not self._pure_instead(atom, count, rel)):
                plan.append((rel, atom, count))
            elif isinstance(atom, EpsilonDeltaDpEvent) or math.isfinite(atom_pure_epsilon(atom)):
                plan.append((None, atom, count))
            else:
                raise DPValueError(
                    f"the {self.accountant} accountant cannot compose {atom} under {self.neighbouring.spelling} "
                    "neighbours, and it is not a pure epsilon-DP event; try the other accountant ('rdp' or 'pld') "
                    "or check the neighbouring relation")
        for rel, atom, count in plan:
            pure = atom_pure_epsilon(atom)
            self.basic = added_up(self.basic, count, pure)
            if self.impure is None and not math.isfinite(pure):
                self.impure = atom
            if rel is not None:
                self._add_supported(atom, count, rel)
            elif isinstance(atom, EpsilonDeltaDpEvent):
                self.outside_epsilon = added_up(self.outside_epsilon, count, atom.epsilon)
                self.outside_delta = added_up(self.outside_delta, count, atom.delta)
            else:
                self.outside_epsilon = added_up(self.outside_epsilon, count, atom_pure_epsilon(atom))

    def _pure_instead(self, atom, count: int, rel: Neighbouring) -> bool:
        """A discrete Laplace whose PLD would not fit (a large noise parameter, or many uses): composed by its pure
        epsilon instead (basic composition, a valid upper bound), as RDP composes it. Its PLD spans every integer
        loss up to the composed epsilon: 10^7 uses at parameter 0.5 asked numpy for 298 GB, and 10^9 uses of a
        tiny one took 43 s."""
        if self.accountant != "pld" or not isinstance(atom, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
            return False
        points = pld_grid_points(atom, count, rel, self.discretization)
        if points <= PLD_MAX_POINTS and count <= PLD_MAX_STEPS:
            return False
        why = (f"would need about {points:.2g} grid points for {atom} over {count:,} uses (at most "
               f"{PLD_MAX_POINTS:.0g})" if points > PLD_MAX_POINTS else
               f"composes at most {PLD_MAX_STEPS:,} uses of one mechanism ({count:,} of {atom} would take minutes)")
        self.note(f"the PLD accountant {why}; its epsilon is theirs added up instead (basic composition, a valid upper "
                  "bound)")
        return True

    def _add_supported(self, atom, count: int, rel: Neighbouring) -> None:
        self.supported.append((atom, count, rel))
        if self.accountant == "rdp" and self.rdp is not None:
            curve, reason = _rdp_curve_noted(atom, rel)
            self.note(reason)
            try:
                hash(atom)
                key = (atom, rel)
            except TypeError:  # an event holding a list: its own entry
                key = object()
            if curve is None:
                self.rdp = None
            else:
                self.rdp[key] = (curve, self.rdp.get(key, (None, 0))[1] + count)
        elif self.accountant == "pld" and isinstance(atom, DiscreteGaussianDpEvent) and (
                atom.sigma > DISCRETE_PLD_MAX_SIGMA):
            if not all(_supports("rdp", r, a) for a, _, r in self.supported):
                raise DPValueError(f"the PLD accountant builds a discrete Gaussian's distribution integer by integer, "
                                   f"at most {DISCRETE_PLD_MAX_SIGMA:,.0f} steps of sigma, and the RDP accountant "
                                   "cannot compose the rest; use a coarser grid or the 'rdp' accountant")
            self.note(f"the PLD accountant builds a discrete Gaussian's distribution integer by integer, for at most "
                      f"{DISCRETE_PLD_MAX_SIGMA:,.0f} grid steps of sigma (this one has {atom.sigma:,.0f}); this "
                      "epsilon comes from the RDP accountant instead (a valid upper bound, looser than PLD's)")
            self._switch_to_rdp()
        elif self.accountant == "pld" and _sampled_discrete_gaussian(atom):
            if not all(_supports("rdp", r, a) for a, _, r in self.supported):
                raise DPValueError(f"{atom} is a sampled discrete Gaussian, which the PLD accountant has no "
                                   "distribution for, and the RDP accountant cannot compose the rest; use the 'rdp' "
                                   "accountant")
            self.note("part of this composition is a sampled discrete Gaussian, for which the PLD accountant has only "
                      "the continuous Gaussian's distribution (it understates the discrete one's delta); this epsilon "
                      "comes from the RDP accountant instead (a valid upper bound)")
            self._switch_to_rdp()
        elif self.accountant == "pld" and isinstance(atom, RdpCurveDpEvent):
            if not all(_supports("rdp", r, a) for a, _, r in self.supported):
                raise DPValueError(f"{atom} is known only by its RDP curve, which the PLD accountant cannot hold, and "
                                   "the RDP accountant cannot compose the rest; use the 'rdp' accountant")
            self.note("part of this composition is known only by its RDP curve, which the PLD accountant cannot "
                      "hold; this epsilon comes from the RDP accountant instead (a valid upper bound, looser)")
            self._switch_to_rdp()
        elif self.accountant == "pld" and self.pld_chain is not None:
            total = sum(c for a, c, r in self.supported if a == atom and r == rel)
            points = pld_grid_points(atom, total, rel, self.discretization)
            if (isinstance(atom, dp_accounting.PoissonSampledDpEvent)
                    and 0 < atom.sampling_probability < sys.float_info.min):
                # dp_accounting's PLD fails on a subnormal q (its logarithms overflow: "a must be greater than b")
                if not all(_supports("rdp", r, a) for a, _, r in self.supported):
                    raise DPValueError(
                        f"the PLD accountant cannot hold a sample rate of {atom.sampling_probability:g}, below the "
                        f"least normal double (2.2e-308), and RDP cannot compose it under {rel.spelling} neighbours; "
                        "use a sample rate of at least 2.2e-308")
                self.note(f"the PLD accountant cannot hold a sample rate of {atom.sampling_probability:g}, below the "
                          "least normal double (2.2e-308); this epsilon comes from the RDP accountant instead (a valid "
                          "upper bound, looser than PLD's)")
                self._switch_to_rdp()
                return
            if total > PLD_MAX_STEPS and all(_supports("rdp", r, a) for a, _, r in self.supported):
                self.note(f"the PLD accountant composes at most {PLD_MAX_STEPS:,} steps of one mechanism (composing "
                          f"{total:,} of {_noise_of(atom)} would take minutes); this epsilon comes from the RDP "
                          "accountant instead (a valid upper bound, looser than PLD's)")
                self._switch_to_rdp()
                return
            if points > PLD_MAX_POINTS:
                if not all(_supports("rdp", r, a) for a, _, r in self.supported):
                    raise DPValueError(
                        f"the PLD accountant would need about {points:.2g} grid points for {atom} over {total} "
                        f"steps under {rel.spelling} neighbours, and RDP cannot compose them there; use more noise "
                        "(a larger noise_multiplier) or fewer steps")
                self.note(_rdp_instead_reason(atom, total, points))
                self._switch_to_rdp()
                return
            try:
                p = _pld_of(atom, count, rel, self.discretization)
            except ARITHMETIC_ERRORS:  # a PLD dp_accounting cannot build in double precision: RDP, fail closed
                if not all(_supports("rdp", r, a) for a, _, r in self.supported):
                    raise DPValueError(f"the PLD accountant cannot compose {atom} under {rel.spelling} neighbours in "
                                       "double precision, and RDP cannot compose them there; use more noise") from None
                self.note(_rdp_instead_reason(atom, total, math.inf))
                self._switch_to_rdp()
                return
            if p is _NON_PRIVATE:
                self.non_private = True
            elif p is None:
                self.pld_chain = None
            else:
                self.pld_chain += ((atom, count, rel, self.discretization),)

    def _switch_to_rdp(self) -> None:
        """Compose everything so far, and from now on, with RDP (a PLD grid would not fit in memory)."""
        self.accountant, self.pld_chain, self.rdp = "rdp", None, {}
        supported, self.supported = self.supported, []
        for atom, count, rel in supported:
            self._add_supported(atom, count, rel)

    def epsilon(self, delta: float) -> float:
        self.answered_by = None
        if delta == 0:
            if self.impure is not None and not isinstance(self.impure, dp_accounting.NonPrivateDpEvent):
                self.note(f"{PURE_READ}, where only pure epsilon-DP mechanisms compose (Laplace, randomized "
                          f"response ...; basic composition), and {self.impure} gives no pure epsilon-DP (Gaussian "
                          "noise, or a sampled or (epsilon, delta) guarantee): this epsilon is reported as infinity; "
                          "read it at a delta > 0 (1e-5 is usual; a ledger's epsilon_at(delta), or a ledger made "
                          "with one)")
            return self.basic
        rest = delta - self.outside_delta
        if self.outside_delta and Fraction(rest) > Fraction(delta) - Fraction(self.outside_delta):
            rest = math.nextafter(rest, -math.inf)  # what is left of delta, rounded down: never more than is left
        if self.non_private or rest <= 0:
            if not self.non_private and not math.isfinite(self.basic):
                self.note(f"the (epsilon, delta) guarantees composed here as they are (such as a run under add/remove "
                          f"in a replace-one ledger, at (2 epsilon, (1 + e^epsilon) delta)) spend delta = "
                          f"{self.outside_delta:.3g} together, at least the delta = {delta:g} this epsilon is read "
                          "at, which leaves none for the rest: this epsilon is reported as infinity; read it at a "
                          "larger delta (epsilon_at), or give the ledger one")
            return self.basic
        return min(self.basic, added_up(self.outside_epsilon, 1, self._accountant_epsilon(rest)))

    def _accountant_epsilon(self, delta: float) -> float:
        self.answered_by = self.accountant
        if not self.supported:
            return 0.0
        with quiet():
            if self.accountant == "rdp" and self.rdp is not None:
                total = np.zeros_like(_ORDERS, dtype=np.float64)
                for curve, count in self.rdp.values():
                    total += count * curve  # as RdpAccountant._maybe_compose does
                return rdp_epsilon(_ORDERS, total, delta)[0]
            if self.accountant == "pld" and self.pld_chain is not None:
                if not self.pld_chain:
                    return 0.0
                eps = _pld_chain_epsilon(self.pld_chain, delta)
                return eps if eps is not None else self._rdp_instead(delta)
            return self._fresh_accountants_epsilon(delta)

    def _rdp_instead(self, delta: float) -> float:
        """The RDP accountant's epsilon of everything supported, where a PLD cannot resolve ``delta``; infinity
        where RDP cannot compose a part of it (fail closed)."""
        self.answered_by = "rdp"
        total = np.zeros_like(_ORDERS, dtype=np.float64)
        for atom, count, rel in self.supported:
            curve, reason = _rdp_curve_noted(atom, rel) if _supports("rdp", rel, atom) else (None, None)
            if curve is None:
                self.note(f"{_small_delta_reason(delta, instead=False)}, and the RDP accountant cannot compose "
                          f"{atom}: this epsilon is reported as infinity (no privacy guarantee can be stated; use a "
                          "larger delta)")
                return math.inf
            self.note(reason)
            total += count * curve
        self.note(_small_delta_reason(delta))
        return rdp_epsilon(_ORDERS, total, delta)[0]

    def _fresh_accountants_epsilon(self, delta: float) -> float:
        """Without dp_accounting's internals: one fresh accountant per relation, basic composition between them;
        fail closed as everywhere (an RDP curve read by :func:`~.trusted.rdp_epsilon`)."""
        groups: dict[Neighbouring, dp_accounting.PrivacyAccountant] = {}
        if any(isinstance(atom, RdpCurveDpEvent) for atom, _, _ in self.supported):
            self.note("dp_accounting's accountants no longer show their RDP curves, so a mechanism known only by "
                      "its RDP curve cannot be added to them: this epsilon is reported as infinity")
            return math.inf
        if self.accountant == "pld" and any(isinstance(getattr(a, "event", a), DiscreteGaussianDpEvent)
                                            for a, _, _ in self.supported):
            self.note("dp_accounting's PLD accountant reads a discrete Gaussian as a continuous one, which understates "
                      "its delta, and its PLDs can no longer be composed here: this epsilon is reported as infinity; "
                      "use the 'rdp' accountant")
            return math.inf
        if self.accountant == "pld" and any(isinstance(a, dp_accounting.RandomizedResponseDpEvent) and c > 1
                                            for a, c, _ in self.supported):
            self.note("dp_accounting's PLD accountant composes a randomized response once whatever the number of its "
                      "uses, and its PLDs can no longer be composed here: the PLD accountant states nothing, and this "
                      "epsilon is the sum of the pure epsilons (basic composition), infinity if a part has none; use "
                      "the 'rdp' accountant")
            return math.inf
        try:
            for atom, count, rel in self.supported:
                if rel not in groups:
                    groups[rel] = make_accountant(self.accountant, neighbouring=rel,
                                                  pld_discretization=self.discretization)
                groups[rel].compose(atom, count)
        except ARITHMETIC_ERRORS as exc:
            self.note(f"the {self.accountant.upper()} accountant could not compose {atom} in double precision "
                      f"({type(exc).__name__}): this epsilon is reported as infinity (no privacy guarantee can be "
                      "stated)")
            return math.inf
        share = delta / len(groups)
        if any(not isinstance(acc, rdp.RdpAccountant) for acc in groups.values()) and (
                share < PLD_SMALLEST_DELTA):
            shared = (f" (delta={delta:g} shared between the {len(groups)} neighbouring relations composed)"
                      if len(groups) > 1 else "")
            self.note(f"{_small_delta_reason(share, instead=False)}{shared}: this epsilon is reported as infinity "
                      "(no privacy guarantee can be stated; use a larger delta)")
            return math.inf
        steps = {rel: 0 for rel in groups}
        for _, count, rel in self.supported:
            steps[rel] += count
        # each step's rounding, as trusted_step_rdp allows for it on the curves the ledger composes itself
        return sum(rdp_epsilon(acc.orders, trusted_step_rdp(acc.rdp, steps[rel]), share)[0]
                   if isinstance(acc, rdp.RdpAccountant)
                   else (trusted_epsilon(acc.get_epsilon(share - PLD_DELTA_ROUNDING))
                         if share >= PLD_SMALLEST_DELTA else math.inf)
                   for rel, acc in groups.items())


def _has(obj, *names: str) -> bool:
    return any(hasattr(obj, name) for name in names)


def _first(obj, *names: str):
    """The first of ``names`` that ``obj`` has (a run's result says ``event``, an estimator ``dp_event_``)."""
    return next((getattr(obj, name) for name in names if hasattr(obj, name)), None)


def _ledger_for(unit: str, relation: Neighbouring) -> str:
    """The ledger to build for a guarantee of ``unit`` under ``relation``, as code: what a refusal tells to do.

    >>> _ledger_for("labels", Neighbouring.REPLACE_ONE)
    "PrivacyLedger(unit='labels', neighbouring='replace-one')"
    """
    said = ([f"unit={unit!r}"] if unit != "records" else []) + (
        [f"neighbouring={relation.spelling!r}"] if relation is not Neighbouring.ADD_REMOVE else [])
    return f"PrivacyLedger({', '.join(said)})"


class PrivacyLedger:
    """A privacy odometer: composes dp_accounting events as they are spent.

    Pass one explicitly to whatever spends budget; there is no global ledger
    (a Streamlit server is shared by every visitor).

    Parameters
    ----------
    delta : float
        The delta at which :attr:`epsilon` and the budget are read (0 for pure epsilon-DP).
    accountant : {"rdp", "pld"}
        Both give upper bounds. RDP (the default, as Opacus reports DP-SGD) reads an (epsilon, delta) release above
        the epsilon it was calibrated to: ``Gaussian(epsilon=0.5, delta=1e-7)`` alone spends 0.535 at delta 1e-7
        by RDP and 0.5000 by PLD, so a budget of statistics released by Gaussian noise is best kept with ``"pld"``.
    neighbouring : Neighbouring or str
        The relation every spent event refers to.
    budget : float or None
        If given, :meth:`spend` raises :class:`~dpcore.exceptions.BudgetExceededError`
        rather than go past it (and records nothing).
    unit : {"records", "labels", "images", "clients"}
        What of each record the total protects (:data:`~dpcore.accounting.UNITS`): the whole record, or its label
        (or image) alone, or a client's whole data. A run of label DP (its ``unit`` is ``"labels"``: the features
        were used in the clear) says nothing of a whole record, so a ledger of records refuses it; a ledger of labels
        takes it, and any run of whole records (a label changed is a record replaced). Noisy images with the labels
        in the clear are ``"images"`` the same way. Federated learning protects a client (``"clients"``), which only
        a ledger of clients takes (:func:`~dpcore.accounting.covers`), and only for the clients of one simulated
        federation (the first result spent says which, :attr:`federation`; a run of another is refused).
    pld_discretization : float
        PLD grid (pessimistic: coarser is faster and looser).

    Examples
    --------
    >>> from dpcore.accounting import dpsgd_event
    >>> ledger = PrivacyLedger(delta=1e-5, budget=10.0)
    >>> round(ledger.spend(dpsgd_event(noise_multiplier=1.5, sample_rate=0.04, steps=2250)), 2)
    7.33
    >>> ledger.epsilon_if(dpsgd_event(noise_multiplier=1.5, sample_rate=0.04, steps=2250)) > 10
    True
    >>> len(ledger)
    1

    One Gaussian release, read by each accountant at its own delta:

    >>> from dpcore.mechanisms import Gaussian
    >>> [round(PrivacyLedger(delta=1e-7, accountant=a).spend(Gaussian(epsilon=0.5, delta=1e-7)), 3)
    ...  for a in ("rdp", "pld")]
    [0.535, 0.5]
    """

    def __init__(self, *, delta: float, accountant: str = "rdp",
                 neighbouring: "Neighbouring | str" = Neighbouring.ADD_REMOVE, budget: float | None = None,
                 pld_discretization: float = PLD_DISCRETIZATION, unit: str = "records") -> None:
        self.delta = warn_large_delta(check_delta(delta))
        self.accountant = check_accountant(accountant)
        self.neighbouring = Neighbouring.of(neighbouring)
        self.budget = None if budget is None else check_epsilon(budget, "budget")
        if not isinstance(unit, str) or unit not in UNITS:
            raise DPValueError(f"unit must be 'records' (whole records), 'labels' (each record's label alone), "
                               f"'images' (each record's image alone) or 'clients' (a client's whole data, federated "
                               f"learning), got {unit!r}")
        self.unit = unit
        #: A ledger of clients: the simulated federation its runs' clients belong to (the first spent says it)
        self.federation: str | None = None
        disc = check_positive(pld_discretization, "pld_discretization")
        self._events: list[dp_accounting.DpEvent] = []
        self._state = _Composition(self.accountant, self.neighbouring, disc)
        self._preview: tuple | None = None  # (event, state) of the last epsilon_if: spend reuses it

    @property
    def accountant_used(self) -> str:
        """The accountant whose numbers :attr:`epsilon` reports: :attr:`accountant`, or ``"rdp"`` once a PLD grid
        would not fit in memory (or in double precision) and the PLD accountant handed the composition to RDP, or
        where :attr:`delta` is too small for a PLD to resolve (:data:`PLD_DELTA_ROUNDING`)."""
        self._state.epsilon(self.delta)  # notes which accountant answers at this delta
        return self._state.answered_by or self._state.accountant

    @property
    def caveats(self) -> tuple[str, ...]:
        """Why a number this ledger gave (:attr:`epsilon`, :meth:`epsilon_if`, :meth:`spend` ...) is not
        dp_accounting's usual one, each once, in the order met: an epsilon reported as infinity (no order of a
        mechanism's RDP curve says anything), or one the RDP accountant gave for the PLD accountant (see
        :attr:`accountant_used`). Each was warned (:class:`~dpcore.exceptions.DPCoreWarning`) to the ledger's caller
        when first met; a run keeps them with its result (``TrainResult.warnings``)."""
        return tuple(self._state.reasons)

    @property
    def events(self) -> tuple[dp_accounting.DpEvent, ...]:
        """The events spent so far, in order."""
        return tuple(self._events)

    @property
    def event(self) -> dp_accounting.DpEvent:
        """Everything spent, as one composable event."""
        return dp_accounting.ComposedDpEvent(list(self._events))

    def __len__(self) -> int:
        return len(self._events)

    def __repr__(self) -> str:
        """What was spent and under what: ``PrivacyLedger(epsilon=2.5, delta=0, spent=3, ...)`` (the epsilon as
        :attr:`epsilon` gives it; its reasons, if any, are in :attr:`caveats`, not said again here)."""
        with reasons_unsaid():
            eps = self._state.epsilon(self.delta)
        budget = "" if self.budget is None else f", budget={self.budget:g}"
        unit = "" if self.unit == "records" else f", unit={self.unit!r}"
        return (f"PrivacyLedger(epsilon={eps!r}, delta={self.delta:g}, spent={len(self._events)}{budget}, "
                f"neighbouring={self.neighbouring.value!r}, accountant={self.accountant!r}{unit})")

    def __copy__(self) -> "PrivacyLedger":
        """A ledger that goes on from here on its own: what either spends after the copy is not in the other's
        events (a shallow copy shared the list of events, so one ledger's :attr:`events` held the other's spending
        while its epsilon did not)."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin._events, twin._state, twin._preview = list(self._events), self._state.copy(), None
        return twin

    def epsilon_at(self, delta: float) -> float:
        """Epsilon of everything spent so far, read at ``delta``."""
        return self._state.epsilon(check_delta(delta))

    @property
    def epsilon(self) -> float:
        """Epsilon of everything spent so far, at :attr:`delta`."""
        return self._state.epsilon(self.delta)

    def _event_of(self, spent) -> dp_accounting.DpEvent:
        """``spent`` as an event to compose under this ledger's relation: an event as it is; a run's result
        (:class:`~dpcore.learners.RunResult`, :class:`~dpcore.training.TrainResult`: what ``epsilon`` protects is
        its ``neighbouring``) or a fitted estimator (its ``neighbouring_``) checked against the ledger's relation.

        A result under the ledger's relation gives its event; a result that is not private, dp_accounting's
        non-private event (the total is then infinite). A guarantee for a record replaced says nothing about a
        record added or removed, so such a result is refused by an add/remove ledger; a guarantee (ε, δ) for a
        record added or removed holds as (2ε, (1 + e^ε)δ) for a record replaced
        (:func:`~dpcore.accounting.replace_one_guarantee`), which a replace-one ledger composes. A result whose
        ``unit`` does not cover the ledger's (label DP's ``"labels"`` in a ledger of whole records, federated learning's
        ``"clients"`` in any other) is refused (:func:`~dpcore.accounting.covers`).
        """
        if isinstance(spent, type):  # a class's own attributes (Laplace.neighbouring's words) are no relation
            raise DPTypeError(f"expected what was released, got the class {spent.__name__} itself: spend an instance "
                              f"({spent.__name__}(epsilon=...) for a mechanism), a run's result or an event")
        if isinstance(spent, dp_accounting.DpEvent) or not _has(spent, "neighbouring", "neighbouring_"):
            return spent  # an event, or what flatten() names as not one
        from ..mechanisms.base import Mechanism

        if isinstance(spent, Mechanism):  # one application of a mechanism: its event, as a guarantee for the relation
            # its sensitivity was computed for (the ledger's, as for an event given as it is); randomized response
            # and the exponential mechanism protect a record's value changed, whatever their inputs
            if spent.fixed_relation is not None and Neighbouring.of(spent.fixed_relation) is not self.neighbouring:
                raise DPValueError(
                    f"{type(spent).__name__}'s epsilon protects one record's value changed (a record replaced), and "
                    "this ledger counts one record added or removed, which that guarantee says nothing about: "
                    "compose it in a PrivacyLedger(neighbouring='replace-one')")
            return spent.dp_event
        event = _first(spent, "event", "dp_event", "dp_event_")
        relation = _first(spent, "neighbouring", "neighbouring_")
        if event is None or relation is None or isinstance(event, dp_accounting.NonPrivateDpEvent):
            return dp_accounting.NonPrivateDpEvent()
        what = getattr(spent, "learner", None) or type(spent).__name__
        unit = _unit(getattr(spent, "unit", "records"), f"{what}'s unit")
        relation = Neighbouring.of(relation)
        if not covers(unit, self.unit):
            if self.unit == "clients":
                how = ("a guarantee for a record says nothing of a client's whole data: compose it in a ledger of its "
                       f"own unit, {_ledger_for(unit, relation)}")
            elif unit == "clients":
                how = ("a record added changes its client's data (a client replaced, not added or removed), and the "
                       f"clients were dealt out from these records: compose it in a {_ledger_for(unit, relation)}")
            else:
                how = (f"the rest of the record was used in the clear: compose it in a {_ledger_for(unit, relation)}, "
                       "where runs of whole records count too")
            raise DPValueError(f"{what}'s epsilon protects {UNIT_SAID[unit]}, and this ledger counts "
                               f"{UNIT_SAID[self.unit]}, which that guarantee says nothing about: {how}")
        self._check_federation(spent, unit, what)
        if relation is self.neighbouring:
            return event
        if relation is Neighbouring.REPLACE_ONE:
            one = "client" if self.unit == "clients" else "record"
            raise DPValueError(
                f"{what}'s epsilon protects one {one} replaced, and this ledger counts one {one} added or removed, "
                f"which that guarantee says nothing about: compose it in a {_ledger_for(self.unit, relation)}, "
                "where a run under add/remove counts too (at twice its epsilon)")
        epsilon, delta = replace_one_guarantee(_first(spent, "epsilon", "epsilon_spent_"),
                                               _first(spent, "delta", "delta_") or 0.0)
        if not math.isfinite(epsilon):
            return dp_accounting.NonPrivateDpEvent()
        return EpsilonDeltaDpEvent(epsilon, delta)

    def _check_federation(self, spent, unit: str, what: str) -> None:
        """A run protecting a client composes only with runs of the same federation: a client of one simulated
        federation holds records of several clients of another (the records dealt out with another seed, to another
        number of clients), so their guarantees protect no one group of records together."""
        if unit != "clients":
            return
        federation = getattr(spent, "federation", None)
        if not federation:
            raise DPValueError(f"{what}'s epsilon protects a client, and it does not say of which federation (its "
                               "'federation'): a client of one federation is no client of another, so it cannot be "
                               "composed with other runs; spend its event yourself if it is the only federation")
        if self.federation is not None and federation != self.federation:
            raise DPValueError(f"{what}'s epsilon protects a client of another federation ({federation}) than the "
                               f"runs already spent ({self.federation}): its clients hold other groups of records, "
                               "which no one guarantee covers together; compose each federation in a ledger of its "
                               "own")

    def _with(self, event: dp_accounting.DpEvent) -> _Composition:
        if self._preview is not None and (self._preview[0] is event or self._preview[0] == event):
            return self._preview[1]
        state = self._state.copy()
        state.add(event)
        self._preview = (event, state)
        return state

    def epsilon_if(self, event) -> float:
        """Epsilon the ledger would report after also spending ``event`` (an event or a run's result, as for
        :meth:`spend`; nothing is recorded)."""
        return self._with(self._event_of(event)).epsilon(self.delta)

    def spend(self, event) -> float:
        """Record ``event`` and return the new epsilon; refuse it if it would pass the budget.

        ``event``: a dp_accounting event, composed as a guarantee under this ledger's relation, or a run's result
        (``run_learner``'s, ``train()``'s), whose relation is checked first (:meth:`_event_of`)."""
        spent, event = event, self._event_of(event)
        state = self._with(event)
        eps = state.epsilon(self.delta)
        # within EPSILON_TOLERANCE of the budget is the budget, as every ε is shown (round_epsilon): the accountants'
        # own rounding up put randomized response drawn at ε = 1 at 1.0000000000000004, "1, over the budget 1"
        if self.budget is not None and eps > self.budget * (1 + EPSILON_TOLERANCE):
            raise BudgetExceededError(f"spending {event} would bring epsilon to {epsilon_text(eps, digits=4)}, over "
                                      f"the budget {self.budget:g}; nothing was spent")
        self._state, self._preview = state, None
        self._events.append(event)
        if self.federation is None and getattr(spent, "unit", None) == "clients":
            self.federation = getattr(spent, "federation", None)
        return eps


def epsilon_of_event(
    event: dp_accounting.DpEvent,
    *,
    delta: float,
    accountant: str = "rdp",
    neighbouring: "Neighbouring | str" = Neighbouring.ADD_REMOVE,
    pld_discretization: float = PLD_DISCRETIZATION,
) -> float:
    """Epsilon of ``event`` at ``delta`` under the chosen accountant and neighbouring relation.

    At ``delta = 0`` the basic composition of its pure parts (infinity if any part
    is not pure epsilon-DP); at ``delta > 0`` dp_accounting's answer, never above
    that basic composition (see :class:`PrivacyLedger`).

    Examples
    --------
    >>> import dp_accounting, math
    >>> rr = dp_accounting.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=10)
    >>> abs(epsilon_of_event(rr, delta=0.0, neighbouring="replace-one") - math.log(11)) < 1e-12
    True
    >>> epsilon_of_event(dp_accounting.LaplaceDpEvent(2.0), delta=0.0)
    0.5
    """
    delta = check_delta(delta)
    state = _Composition(check_accountant(accountant), Neighbouring.of(neighbouring),
                         check_positive(pld_discretization, "pld_discretization"))
    state.add(event)
    return state.epsilon(delta)


class PrivacyProfile:
    """delta(epsilon) of one event for every epsilon, and its epsilon at a delta: both read from the PLD the ledger's
    PLD accountant composes for it (the same grid, the same relation per mechanism, the same caches), so a reader
    of the whole profile (the audit's trade-off curve) and :func:`epsilon_of_event` cannot disagree.

    Build it with :func:`privacy_profile`.
    """

    def __init__(self, state: _Composition) -> None:
        self._state = state

    @property
    def private(self) -> bool:
        """False when the event gives no differential privacy at all (delta(epsilon) = 1 for every epsilon)."""
        return not self._state.non_private

    def epsilon(self, delta: float) -> float:
        """The ledger's epsilon of the event at ``delta`` (as :func:`epsilon_of_event` with the PLD accountant)."""
        return self._state.epsilon(check_delta(delta))

    def delta(self, epsilons) -> np.ndarray:
        """The hockey-stick divergence delta(epsilon) at each of ``epsilons`` (any real numbers), read fail closed
        (:func:`~.trusted.trusted_delta`); pessimistic like every PLD epsilon the ledger reports."""
        eps = np.asarray(epsilons, dtype=float)
        if self._state.non_private:
            return np.ones_like(eps)
        chain = self._state.pld_chain
        distribution, slack = _pld_chain_and_slack(chain) if chain else (
            pld.privacy_loss_distribution.identity(value_discretization_interval=self._state.discretization), 0.0)
        # dp_accounting reads epsilons in ascending order only ("must be sorted", a ValueError for [1, 0]): read
        # sorted, given back in the order asked; an epsilon nan is no number to read at, and its delta 1 (nothing)
        flat = eps.reshape(-1)
        order = np.flatnonzero(~np.isnan(flat))
        order = order[np.argsort(flat[order], kind="stable")]
        deltas = np.ones_like(flat)
        if order.size:
            with quiet():  # plus its FFTs' rounding, as the ledger reads it (_pld_chain_and_slack)
                deltas[order] = np.asarray(distribution.get_delta_for_epsilon(flat[order]), dtype=float) + slack
        return trusted_delta(deltas).reshape(eps.shape)


def privacy_profile(
    event: dp_accounting.DpEvent,
    *,
    neighbouring: "Neighbouring | str" = Neighbouring.ADD_REMOVE,
    pld_discretization: float = PLD_DISCRETIZATION,
) -> PrivacyProfile:
    """The privacy profile of ``event`` (:class:`PrivacyProfile`), composed as the ledger's PLD accountant composes.

    Raises :class:`~dpcore.exceptions.DPValueError` where the ledger itself would not hold the event as one PLD:
    parts known only by a theorem's (epsilon, delta) or by basic composition, or a grid too large for memory (where
    the ledger answers with RDP). A profile of those is not known, and none is made up.

    Examples
    --------
    >>> p = privacy_profile(dp_accounting.GaussianDpEvent(1.0), pld_discretization=1e-3)
    >>> round(float(p.delta([0.0])[0]), 3)  # 2 Phi(1/2) - 1 for a Gaussian of sensitivity 1 and noise 1
    0.383
    >>> p.epsilon(1e-5) == epsilon_of_event(dp_accounting.GaussianDpEvent(1.0), delta=1e-5, accountant="pld",
    ...                                     pld_discretization=1e-3)
    True
    """
    if not isinstance(event, dp_accounting.DpEvent):
        raise DPTypeError(f"event must be a dp_accounting DpEvent, got {type(event).__name__}")
    state = _Composition("pld", Neighbouring.of(neighbouring), check_positive(pld_discretization, "pld_discretization"))
    with reasons_unsaid():  # a hand-over to RDP is refused below, not announced (this thread only)
        state.add(event)
    if state.accountant != "pld" or state.pld_chain is None:
        raise DPValueError(f"{event} has no privacy loss distribution the PLD accountant can hold (its grid would "
                           "not fit in memory, or part of it is known only by its RDP curve); only its epsilon, from "
                           "the RDP accountant, is known")
    if state.outside_epsilon or state.outside_delta:
        raise DPValueError(f"part of {event} is known only by its (epsilon, delta) guarantee, outside the PLD "
                           f"accountant under {state.neighbouring.spelling} neighbours: its privacy profile is not "
                           "known; check the neighbouring relation")
    return PrivacyProfile(state)


def _as_shape(shape) -> float:
    """The shape of :func:`repeat_and_select_epsilon`'s number of runs: a number >= 0, infinity for Poisson."""
    from ..validation import check_real

    eta = check_real(shape, "shape")
    if eta < 0:
        raise DPValueError(f"shape must be >= 0 (0: logarithmic, 1: geometric, inf: Poisson number of runs; a "
                           f"truncated negative binomial in between), got {eta:g}")
    return eta


def repeat_and_select_epsilon(event: dp_accounting.DpEvent, *, candidates: float, delta: float,
                              shape: float = math.inf) -> float:
    """Epsilon of a hyperparameter search: ``event`` run a random number of times (mean ``candidates``), best kept.

    Papernot & Steinke (2022) show that choosing the best of a random number of runs (a
    Poisson number for ``shape`` = inf, the default; geometric for 1; truncated negative
    binomial in between) costs one run's Rényi DP plus a term growing with the logarithm of its mean, where a fixed
    number K of runs costs K times as much under composition. The number comes from dp_accounting's RDP
    accountant for its ``RepeatAndSelectDpEvent``.

    Examples
    --------
    >>> e = dp_accounting.GaussianDpEvent(2.0)
    >>> one = repeat_and_select_epsilon(e, candidates=1, delta=1e-5)
    >>> ten = repeat_and_select_epsilon(e, candidates=10, delta=1e-5)
    >>> one < ten < 10 * one
    True

    References
    ----------
    Papernot, Steinke. Hyperparameter tuning with Renyi differential privacy. ICLR 2022.
    """
    k = check_positive(candidates, "candidates")
    if k < 1:  # dp_accounting's own words named no argument ("Mean of number of repetitions must be >=1")
        raise DPValueError(f"candidates must be at least 1 (the mean number of runs the best is chosen from), got "
                           f"{k:g}")
    shape = _as_shape(shape)
    return epsilon_of_event(dp_accounting.dp_event.RepeatAndSelectDpEvent(event, float(k), float(shape)), delta=delta,
                            accountant="rdp")
