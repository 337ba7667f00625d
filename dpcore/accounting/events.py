"""dp_accounting events: dpcore's builders, the events for guarantees dp_accounting cannot model (an (epsilon,
delta) guarantee, an RDP curve), and basic composition of pure epsilon-DP events.
"""
from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, Iterator

import attr
import dp_accounting
import numpy as np

from ..exceptions import DPTypeError, DPValueError
from ..mechanisms.base import round_down, round_up
from ..validation import check_fraction, check_int, check_positive


@attr.s(frozen=True, slots=True, auto_attribs=True)
class EpsilonDeltaDpEvent(dp_accounting.DpEvent):
    """A mechanism known only to be (epsilon, delta)-DP.

    For guarantees proved by a theorem rather than by a noise distribution
    dp_accounting models: objective and Gamma-norm output perturbation
    (Chaudhuri et al. 2011, Theorems 6 and 9), private parameter tuning, the
    exponential mechanism, DP-Pix's per-pixel bound. dp_accounting 0.6 has no
    such event, so its accountants call it unsupported; :func:`epsilon_of_event`
    composes it by basic composition (epsilons and deltas add up; Dwork and Roth
    2014, Theorem 3.16).

    Examples
    --------
    >>> EpsilonDeltaDpEvent(1.0)
    EpsilonDeltaDpEvent(epsilon=1.0, delta=0.0)
    """

    epsilon: float
    delta: float = 0.0

    def __attrs_post_init__(self) -> None:
        if not (self.epsilon >= 0 and math.isfinite(self.epsilon)):
            raise DPValueError(f"EpsilonDeltaDpEvent needs a finite epsilon >= 0, got {self.epsilon!r}")
        if not 0.0 <= self.delta < 1.0:
            raise DPValueError(f"EpsilonDeltaDpEvent needs 0 <= delta < 1, got {self.delta!r}")


@attr.s(frozen=True, slots=True, auto_attribs=True, repr=False)
class RdpCurveDpEvent(dp_accounting.DpEvent):
    """A mechanism known only by an upper bound on its Rényi divergence at some orders (its RDP curve).

    For guarantees a theorem states in RDP for a mechanism dp_accounting does not model: the release of PATE's
    data-dependent epsilon with smooth sensitivity (Papernot et al. 2018, Theorem 23, GNSS). The RDP accountant of a
    :class:`~dpcore.accounting.PrivacyLedger` adds the curve to the rest order by order, as it adds dp_accounting's
    curves (Mironov 2017, Proposition 1: RDP composes by adding); the PLD accountant cannot hold it and hands the
    composition to RDP. The curve is read upwards: the Rényi divergence never decreases with the order (van Erven &
    Harremoës 2014, Theorem 3), so a bound at one order bounds every order below it, and an order reads the least
    value given at it or above (infinity above the last given order: nothing is known there); ``inf`` is an order
    where the bound says nothing.

    Examples
    --------
    >>> e = RdpCurveDpEvent(orders=(2.0, 4.0, 8.0), rdp=(0.9, 0.2, 0.5))   # the bound at 4 holds at 2 too
    >>> e.curve_at([1.5, 2.0, 3.0, 4.0, 8.0, 16.0]).tolist()
    [0.2, 0.2, 0.2, 0.2, 0.5, inf]
    >>> e
    RdpCurveDpEvent(3 orders, 2 to 8: rdp 0.2 to 0.5)
    """

    orders: tuple = attr.ib(converter=lambda x: tuple(float(v) for v in x))
    rdp: tuple = attr.ib(converter=lambda x: tuple(float(v) for v in x))

    def __attrs_post_init__(self) -> None:
        o, r = np.asarray(self.orders), np.asarray(self.rdp)
        if o.size == 0 or o.size != r.size:
            raise DPValueError(f"RdpCurveDpEvent needs as many RDP values as orders (at least one), got {r.size} "
                               f"values for {o.size} orders")
        if not (np.all(o > 1.0) and np.all(np.isfinite(o)) and np.all(np.diff(o) > 0)):
            raise DPValueError("RdpCurveDpEvent needs finite orders > 1 in increasing order")
        if not np.all(r >= 0):  # nan >= 0 is False
            raise DPValueError("RdpCurveDpEvent needs RDP values >= 0 (inf where nothing is known), got "
                               f"{[v for v in self.rdp if not v >= 0][:3]}")

    def __repr__(self) -> str:  # the curve's ends: the whole of it is 150 numbers in a page's tooltip
        finite = [(o, r) for o, r in zip(self.orders, self.curve_at(self.orders)) if math.isfinite(r)]
        said = (f"rdp {finite[0][1]:.3g} to {finite[-1][1]:.3g}" + (f", inf above order {finite[-1][0]:g}"
                                                                   if len(finite) < len(self.rdp) else "")
                if finite else "rdp inf")
        return f"RdpCurveDpEvent({len(self.orders)} orders, {self.orders[0]:g} to {self.orders[-1]:g}: {said})"

    def curve_at(self, orders) -> np.ndarray:
        """The curve at ``orders``: each the least value given at that order or above (infinity above the last given
        order)."""
        at = np.asarray(orders, dtype=float)
        i = np.searchsorted(np.asarray(self.orders), at, side="left")
        upwards = np.minimum.accumulate(np.append(np.asarray(self.rdp), math.inf)[::-1])[::-1]
        return upwards[i]


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DiscreteGaussianDpEvent(dp_accounting.GaussianDpEvent):
    """The discrete Gaussian mechanism: integer noise with P[z] ∝ exp(-z² / (2 sigma²)) on an answer whose
    neighbours differ by at most ``sensitivity`` integers (:class:`~dpcore.mechanisms.SecureGaussian`'s grid steps).

    Its Rényi divergences are at most the continuous Gaussian's of the same sigma and sensitivity (Canonne, Kamath &
    Steinke 2020, Theorem 4: (1/2)(Δ/σ)²-concentrated DP), so it is a :class:`dp_accounting.GaussianDpEvent`
    of ``noise_multiplier`` sigma / sensitivity (rounded down) to RDP. Its privacy loss distribution is not the
    continuous one's: on a coarse grid (sigma of a few steps) the discrete Gaussian's delta is the larger (by a third at
    sigma 1.2 steps and epsilon 8), so a PLD ledger composes dp_accounting's discrete Gaussian PLD
    (``from_discrete_gaussian_mechanism``) for it. dp_accounting's own PLDAccountant, handed this event directly,
    would read it as continuous: compose it through a :class:`~dpcore.accounting.PrivacyLedger`.

    Examples
    --------
    >>> e = DiscreteGaussianDpEvent.of(sigma=3.5, sensitivity=2)
    >>> e.noise_multiplier, e.sigma, e.sensitivity
    (1.75, 3.5, 2)
    """

    sigma: float
    sensitivity: int

    def __attrs_post_init__(self) -> None:
        self._check(self.sigma, self.sensitivity)
        if not self.noise_multiplier <= Fraction(self.sigma) / self.sensitivity:
            raise DPValueError("DiscreteGaussianDpEvent's noise_multiplier must be at most sigma / sensitivity (its "
                               "RDP bound); build it with DiscreteGaussianDpEvent.of(sigma=..., sensitivity=...)")

    @staticmethod
    def _check(sigma, sensitivity) -> None:
        if not (isinstance(sensitivity, (int, np.integer)) and not isinstance(sensitivity, bool) and sensitivity >= 1):
            raise DPValueError(f"DiscreteGaussianDpEvent needs an integer sensitivity >= 1 (grid steps), got "
                               f"{sensitivity!r}")
        if isinstance(sigma, bool) or not (isinstance(sigma, (int, float, np.integer, np.floating))
                                           and 0 < sigma < math.inf):
            raise DPValueError(f"DiscreteGaussianDpEvent needs a finite sigma > 0 (grid steps), got {sigma!r}")

    @classmethod
    def of(cls, *, sigma: float, sensitivity: int) -> "DiscreteGaussianDpEvent":
        """The event of a discrete Gaussian of parameter ``sigma`` for an integer ``sensitivity``; its noise
        multiplier is sigma / sensitivity rounded down (less noise stated, never more)."""
        cls._check(sigma, sensitivity)
        return cls(noise_multiplier=round_down(Fraction(float(sigma)) / int(sensitivity)), sigma=float(sigma),
                   sensitivity=int(sensitivity))


#: The largest DP-SGD noise multiplier accounted: epsilon is 0 in double precision long before it.
MAX_NOISE_MULTIPLIER = 1e12


def dpsgd_event(*, noise_multiplier: float, sample_rate: float, steps: int) -> dp_accounting.DpEvent:
    """The event of DP-SGD: a Poisson-subsampled Gaussian composed over ``steps``.

    Examples
    --------
    >>> dpsgd_event(noise_multiplier=1.0, sample_rate=0.01, steps=10).count
    10
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    if sigma > MAX_NOISE_MULTIPLIER:
        raise DPValueError(f"noise_multiplier must be at most {MAX_NOISE_MULTIPLIER:g}, got {sigma:g}: the epsilon is "
                           "already 0 to machine precision there (and larger values overflow the accountant)")
    q = check_fraction(sample_rate, "sample_rate")
    steps = check_int(steps, "steps", minimum=0)
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
    )


def shuffled_dpsgd_event(*, noise_multiplier: float, epochs: int) -> dp_accounting.DpEvent:
    """The event of DP-SGD on shuffled fixed-size batches, accounted without amplification by sampling.

    No amplification is proven for shuffled batches, and reporting them as Poisson samples can understate epsilon
    (Chua et al. 2024, "How private are DP-SGD implementations?"). What holds whatever the order, even a public
    one: each epoch puts a record in exactly one batch, so an epoch is one Gaussian mechanism on that batch's
    clipped sum, and epochs compose. Neighbours replace one record (its slot in the order stays, so both data sets
    have the same batches): the sum moves by at most 2C against noise sigma*C, a Gaussian of noise multiplier
    sigma/2 in units of its sensitivity. Each epoch begun counts as one.

    Examples
    --------
    >>> e = shuffled_dpsgd_event(noise_multiplier=4.0, epochs=3)
    >>> (e.count, e.event.noise_multiplier)
    (3, 2.0)
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    if sigma > MAX_NOISE_MULTIPLIER:
        raise DPValueError(f"noise_multiplier must be at most {MAX_NOISE_MULTIPLIER:g}, got {sigma:g}: the epsilon is "
                           "already 0 to machine precision there (and larger values overflow the accountant)")
    epochs = check_int(epochs, "epochs", minimum=0)
    return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / 2.0), epochs)


def _estimator_without_event(estimator) -> str:
    """Why a scikit-learn estimator given as an event holds none, and what to spend instead."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    what = type(estimator).__name__
    try:
        check_is_fitted(estimator)
    except NotFittedError:  # clone() and a search's unfitted copies too: nothing spent yet
        return f"{what} is not fitted, so it has spent nothing yet and holds no event: fit it first, then spend it"
    except TypeError:  # not an estimator after all
        return f"expected a dp_accounting DpEvent, got {what}"
    if hasattr(estimator, "cv_results_"):
        return (f"{what} fitted one model per candidate and fold, on overlapping rows, and its best estimator's event "
                "covers the refit alone: each record is in k - 1 fits per candidate plus the refit, (k - 1) times "
                "the candidates' epsilons summed plus the best's by basic composition, which dpcore cannot see from "
                "here; spend that total as EpsilonDeltaDpEvent(epsilon, delta) (dpcore.accounting)")
    if hasattr(estimator, "steps"):
        return (f"a {what} holds no event of its own: spend its private estimator, {what.lower()}[-1] (the steps "
                "before it must read nothing private: a BoundedScaler reads no statistic of the rows, a "
                "StandardScaler reads their means and variances, which no epsilon covers)")
    return (f"{what} holds no dp_event_: it is not one of dpcore's private estimators, so what it learnt has no "
            "privacy guarantee to compose")


def flatten(event: dp_accounting.DpEvent, count: int = 1) -> Iterator[tuple[dp_accounting.DpEvent, int]]:
    """The (mechanism, times composed) pairs of ``event``, in the order dp_accounting's accountants visit them.

    ``ComposedDpEvent`` and ``SelfComposedDpEvent`` are opened (counts multiply, as in the
    accountants' ``_maybe_compose``); ``NoOpDpEvent`` and zero counts vanish.

    Examples
    --------
    >>> lap = dp_accounting.LaplaceDpEvent(1.0)
    >>> list(flatten(dp_accounting.SelfComposedDpEvent(dp_accounting.ComposedDpEvent([lap, lap]), 3)))
    [(LaplaceDpEvent(noise_multiplier=1.0), 3), (LaplaceDpEvent(noise_multiplier=1.0), 3)]
    """
    if not isinstance(event, dp_accounting.DpEvent):
        held = next((name for name in ("event", "dp_event", "dp_event_")  # a run's, train()'s, an estimator's
                     if isinstance(getattr(event, name, None), dp_accounting.DpEvent)), None)
        if held and callable(getattr(event, "predict", None)):
            # a run's released model holds its event but not what it protects: its bare event would compose as a
            # guarantee under the ledger's relation, unchecked; the run's result says its relation
            raise DPTypeError(f"expected a dp_accounting DpEvent, got {type(event).__name__}: spend the run's result "
                              "(ledger.spend(run)), whose relation the ledger checks against its own")
        if held:
            raise DPTypeError(f"expected a dp_accounting DpEvent, got {type(event).__name__}: pass its event, .{held}")
        if callable(getattr(event, "fit", None)) and callable(getattr(event, "get_params", None)):
            raise DPTypeError(_estimator_without_event(event))
        raise DPTypeError(f"expected a dp_accounting DpEvent, got {type(event).__name__}: spend a mechanism (Laplace("
                          "epsilon=...)), a run's result (run_learner's, train()'s), a fitted estimator, or an event; "
                          "a guarantee of your own is EpsilonDeltaDpEvent(epsilon, delta) (dpcore.accounting)")
    if isinstance(event, dp_accounting.NoOpDpEvent) or count == 0:
        return
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        times = event.count
        # a mechanism runs a whole number of times: a negative count subtracted its epsilon from a composition (-2
        # for twice a Laplace of epsilon 1), a fraction claimed part of one run (dp_accounting's PLD refuses both)
        if isinstance(times, bool) or not (isinstance(times, (int, np.integer)) or (
                isinstance(times, (float, np.floating)) and float(times).is_integer())) or times < 0:
            raise DPValueError("SelfComposedDpEvent needs a count that is a whole number >= 0 (the times its "
                               f"mechanism runs), got {times!r}")
        yield from flatten(event.event, count * int(times))
    elif isinstance(event, dp_accounting.ComposedDpEvent):
        for e in event.events:
            yield from flatten(e, count)
    else:
        _check_noise(event)
        yield event, count


def _check_noise(atom: dp_accounting.DpEvent) -> None:
    """Refuse a mechanism whose noise or sampling probability is no number dp_accounting can account: NaN, negative
    or infinite noise, a probability outside [0, 1]. dp_accounting answered them with its own errors, or none (a
    Laplace of noise NaN raised "eps must be > 0. Got nan"; of infinite noise, an IndexError in the PLD accountant)."""
    if isinstance(atom, (dp_accounting.PoissonSampledDpEvent, dp_accounting.SampledWithReplacementDpEvent,
                         dp_accounting.SampledWithoutReplacementDpEvent)):
        q = getattr(atom, "sampling_probability", None)
        if q is not None and not (isinstance(q, (int, float, np.integer, np.floating)) and 0 <= q <= 1):
            raise DPValueError(f"{type(atom).__name__} needs a sampling_probability from 0 to 1 (the chance each "
                               f"record is in a batch), got {q!r}")
        _check_noise(atom.event)
    elif isinstance(atom, (dp_accounting.GaussianDpEvent, dp_accounting.LaplaceDpEvent)):
        noise = atom.noise_multiplier
        if isinstance(noise, bool) or not (isinstance(noise, (int, float, np.integer, np.floating))
                                           and 0 <= noise < math.inf):
            raise DPValueError(f"{type(atom).__name__} needs a noise_multiplier that is a finite number >= 0 (noise "
                               f"std, or Laplace scale, over the sensitivity), got {noise!r}")
    elif isinstance(atom, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
        a, k = atom.noise_parameter, atom.sensitivity
        if isinstance(a, bool) or not (isinstance(a, (int, float, np.integer, np.floating)) and 0 < a < math.inf):
            raise DPValueError(f"DiscreteLaplaceDpEvent needs a noise_parameter that is a finite number > 0 (P[z] ∝ "
                               f"exp(-a |z|)), got {a!r}")
        if isinstance(k, bool) or not (isinstance(k, (int, np.integer)) and k >= 0):
            raise DPValueError(f"DiscreteLaplaceDpEvent needs a whole-number sensitivity >= 0, got {k!r}")


def _log1p_up(x: Fraction) -> float:
    """ln(1 + x) for an exact rational ``x`` >= 0, rounded UP to a double (50-digit decimals): ``math.log1p`` of the
    rounded quotient was below the exact value, by a unit in the last place at k = 10 and by 1e-7 relative at
    k = 10^9, where 1 - p holds a few digits only."""
    with localcontext() as ctx:
        ctx.prec = 50
        exact = (1 + Decimal(x.numerator) / Decimal(x.denominator)).ln() * (1 + Decimal(10) ** -45)
    out = float(exact)
    return out if Decimal(out) >= exact else math.nextafter(out, math.inf)


def added_up(total: float, count: int, value: float) -> float:
    """``total + count * value`` for numbers >= 0, rounded UP to a double (infinity if either is infinite): a basic
    composition summed in floating point rounds to nearest, below the exact sum about half the time (two Laplace
    events of noise multipliers 0.7 and 0.3 summed to a unit in the last place under their 1/0.7 + 1/0.3).

    >>> added_up(0.1, 2, 0.1) >= Fraction(0.1) * 3, added_up(1.0, 3, math.inf)
    (True, inf)
    """
    if count == 0 or value == 0:
        return float(total)
    if not (math.isfinite(total) and math.isfinite(value)):
        return math.inf
    return round_up(Fraction(total) + int(count) * Fraction(value))


def atom_pure_epsilon(atom: dp_accounting.DpEvent) -> float:
    """Epsilon of one mechanism at delta = 0 (``inf`` if it is not pure epsilon-DP).

    Laplace with noise multiplier b is 1/b-DP; the discrete Laplace of parameter a on answers ``sensitivity`` integers
    apart is (a · sensitivity)-DP; k-ary randomized response that answers at
    random with probability p is ln(1 + k (1 - p) / p)-DP (Warner 1965; Kairouz et al. 2014);
    an :class:`EpsilonDeltaDpEvent` with delta = 0 is its epsilon. Both dp_accounting
    accountants answer infinity at delta = 0, hence this; :func:`~dpcore.accounting.epsilon_of_event`
    adds these up over a composition (basic composition).

    Examples
    --------
    >>> round(atom_pure_epsilon(dp_accounting.RandomizedResponseDpEvent(0.5, 10)), 6) == round(math.log(11), 6)
    True
    """
    if isinstance(atom, dp_accounting.LaplaceDpEvent):
        b = atom.noise_multiplier
        if not b > 0:  # b nan or <= 0: no guarantee
            return math.inf
        # 1 / b rounded UP (to nearest, it lies below the exact 1 / b half the time)
        return round_up(1 / Fraction(float(b)))
    if isinstance(atom, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
        # P[z] ∝ exp(-a |z|) on integers; answers at most `sensitivity` integers apart: a · sensitivity, rounded UP
        a, k = atom.noise_parameter, atom.sensitivity
        if not (0 < a < math.inf and isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 0):
            return math.inf
        return round_up(Fraction(float(a)) * int(k))
    if isinstance(atom, dp_accounting.RandomizedResponseDpEvent):
        p, k = atom.noise_parameter, atom.num_buckets
        if k == 1:
            return 0.0
        # p nan or outside (0, 1], or no whole number of buckets: no guarantee (a nan here made the total nan, which
        # a budget's "epsilon > budget" let through)
        if not (0 < p <= 1 and isinstance(k, (int, float, np.integer, np.floating)) and float(k).is_integer()
                and k >= 1):
            return math.inf
        return _log1p_up(int(k) * (1 - Fraction(float(p))) / Fraction(float(p)))
    if isinstance(atom, EpsilonDeltaDpEvent):
        return atom.epsilon if atom.delta == 0 else math.inf
    return math.inf  # RdpCurveDpEvent too: an RDP curve gives no pure epsilon


def _event_classes() -> dict[str, type]:
    classes = {name: cls for name in dir(dp_accounting.dp_event)
               if isinstance(cls := getattr(dp_accounting.dp_event, name), type)
               and issubclass(cls, dp_accounting.DpEvent)}
    classes["EpsilonDeltaDpEvent"] = EpsilonDeltaDpEvent
    classes["RdpCurveDpEvent"] = RdpCurveDpEvent
    classes["DiscreteGaussianDpEvent"] = DiscreteGaussianDpEvent
    return classes


def event_to_json(event: dp_accounting.DpEvent | None) -> Any:
    """A dp_accounting event as plain JSON values (class name and fields, nested), for caches and files.

    :func:`event_from_json` gives back an equal event, so a stored run's privacy composes again.

    Examples
    --------
    >>> e = dpsgd_event(noise_multiplier=1.5, sample_rate=0.04, steps=2250)
    >>> event_from_json(event_to_json(e)) == e
    True
    """
    if event is None:
        return None
    if isinstance(event, dp_accounting.DpEvent):
        fields = {f.name: event_to_json(getattr(event, f.name)) for f in attr.fields(type(event))}
        return {"dp_event": type(event).__name__, **fields}
    if isinstance(event, (list, tuple)):
        return [event_to_json(e) for e in event]
    if isinstance(event, float) and not math.isfinite(event):
        return {"float": repr(event)}
    return event


def event_from_json(doc: Any) -> dp_accounting.DpEvent | None:
    """Inverse of :func:`event_to_json`; an unknown event class is an error naming it."""
    if isinstance(doc, list):
        return [event_from_json(d) for d in doc]
    if not isinstance(doc, dict):
        return doc
    if set(doc) == {"float"}:
        return float(doc["float"])
    name = doc.get("dp_event")
    cls = _event_classes().get(name)
    if cls is None:
        raise DPValueError(f"unknown dp_accounting event {name!r}; it was stored by another version of dp_accounting")
    return cls(**{k: event_from_json(v) for k, v in doc.items() if k != "dp_event"})
