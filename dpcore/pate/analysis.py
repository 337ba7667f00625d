"""Privacy accounting of the PATE aggregators.

Data-independent accounting goes through dp_accounting (via
:mod:`dpcore.accounting`): m answered GNMax queries are
``SelfComposedDpEvent(GaussianDpEvent(sigma / sqrt 2), m)``, m LNMax queries are
``SelfComposedDpEvent(LaplaceDpEvent(1 / (2 gamma)), m)`` (plus the pure
``2 gamma m`` of basic composition). See :mod:`dpcore.pate.aggregation` for the
neighbouring relation and why the sensitivity is sqrt 2 (L2) / 2 (L1).

The **data-dependent** RDP bound of Papernot et al. 2018 (Theorem 6 with the
union bound of Proposition 7) is here as an option: when the teachers agree
strongly, the noisy argmax almost surely returns the plurality class, and the
privacy cost of such a query is far below the data-independent
``alpha / sigma^2``. That bound is a function of the private votes, so the
epsilon it gives is itself sensitive: Papernot et al. publish it only after
sanitising it with smooth sensitivity (their Section 4.2 and Appendix B), which
:func:`dpcore.pate.confident.release_data_dependent_epsilon` does. The values here are
the exact, unsanitised analysis of what a run cost: not to be published.

References
----------
Papernot et al., "Scalable Private Learning with PATE", ICLR 2018: Proposition 7
(union bound on q), Theorem 6 (data-dependent RDP), Proposition 8
(data-independent RDP of GNMax), Proposition 10 (choice of mu_1, mu_2).
Mironov, "Rényi Differential Privacy", CSF 2017.
"""
from __future__ import annotations

import math
from typing import Sequence

import dp_accounting
import numpy as np
from scipy import stats

from ..accounting import Neighbouring, calibrate, epsilon_of_event
from ..accounting.accountants import RDP_ORDERS as ACCOUNTING_RDP_ORDERS
from ..accounting.trusted import rdp_epsilon
from ..exceptions import DPValueError
from ..teaching.verdict import epsilon_text
from ..types import ArrayLike
from ..validation import check_delta, check_int, check_positive
from .aggregation import (
    AGGREGATORS,
    HISTOGRAM_L1_SENSITIVITY,
    HISTOGRAM_L2_SENSITIVITY,
    confident_event,
    make_aggregator,
)

#: RDP orders for the data-dependent analysis: dpcore.accounting's RDP grid, so the two analyses compare.
RDP_ORDERS = np.array(ACCOUNTING_RDP_ORDERS, dtype=float)


#: A record is added to, removed from or replaced in one teacher's partition (see :mod:`.aggregation`); the
#: vote sensitivities already cover all three, and dp_accounting reads the events as one-unit shifts.
PATE_NEIGHBOURING = Neighbouring.ADD_REMOVE


def _check_aggregator(aggregator: str) -> str:
    if aggregator not in AGGREGATORS:
        raise DPValueError(f"aggregator must be one of {AGGREGATORS}, got {aggregator!r}")
    return aggregator


def pate_event(*, aggregator: str, noise_scale: float, queries: int,
               threshold_noise: float | None = None) -> dp_accounting.DpEvent:
    """The dp_accounting event of ``queries`` queries.

    Parameters
    ----------
    aggregator : {"gnmax", "lnmax", "confident"}
    noise_scale : float
        Gaussian sigma (GNMax, and Confident-GNMax's answers), or Laplace scale 1/gamma (LNMax), in votes.
    queries : int
        Answered queries; for Confident-GNMax, examined queries (each checked, and in the worst case answered).
    threshold_noise : float, optional
        Confident-GNMax only: sigma1, the noise on the consensus check, in votes.

    Examples
    --------
    >>> ev = pate_event(aggregator="gnmax", noise_scale=2 ** 0.5, queries=3)
    >>> ev.count, round(ev.event.noise_multiplier, 9)
    (3, 1.0)
    """
    aggregator = _check_aggregator(aggregator)
    queries = check_int(queries, "queries", minimum=0)
    if aggregator == "confident":
        if threshold_noise is None:
            raise DPValueError("aggregator='confident' needs threshold_noise (sigma1, the noise on the consensus "
                               "check)")
        return confident_event(sigma1=threshold_noise, sigma2=noise_scale, queries=queries)
    agg = make_aggregator(aggregator, noise_scale=noise_scale)
    return dp_accounting.SelfComposedDpEvent(agg.dp_event, queries)


def pate_epsilon(
    *, aggregator: str, noise_scale: float, queries: int, delta: float, accountant: str = "rdp",
    threshold_noise: float | None = None,
) -> float:
    """Data-independent epsilon of ``queries`` queries at ``delta``.

    :func:`~dpcore.accounting.epsilon_of_event` on the event of :func:`pate_event`:
    for LNMax that is the smaller of the pure basic composition ``2 gamma m`` (valid at
    every delta, the only answer at delta = 0) and the accountant's epsilon.

    Examples
    --------
    >>> pate_epsilon(aggregator="lnmax", noise_scale=16.0, queries=10, delta=0.0)  # 10 queries of 2 / 16 each
    1.25
    """
    _check_aggregator(aggregator)
    queries = check_int(queries, "queries", minimum=0)
    delta = check_delta(delta)
    noise_scale = check_positive(noise_scale, "noise_scale")
    if queries == 0:
        return 0.0
    _check_gaussian_delta(aggregator, delta)
    ev = pate_event(aggregator=aggregator, noise_scale=noise_scale, queries=queries, threshold_noise=threshold_noise)
    return epsilon_of_event(ev, delta=delta, accountant=accountant, neighbouring=PATE_NEIGHBOURING)


def _check_gaussian_delta(aggregator: str, delta: float) -> None:
    if aggregator in ("gnmax", "confident") and delta == 0.0:
        raise DPValueError(f"{'GNMax' if aggregator == 'gnmax' else 'Confident-GNMax'} needs delta > 0 (Gaussian "
                           "noise is not pure-DP); use aggregator='lnmax' for delta = 0")


def calibrate_noise_scale(
    *, aggregator: str, target_epsilon: float, delta: float, queries: int, accountant: str = "rdp",
    threshold_noise: float | None = None,
) -> float:
    """Smallest noise on the votes for which ``queries`` answers cost at most ``target_epsilon``.

    :func:`~dpcore.accounting.calibrate` over the noise scale of :func:`pate_event`
    (GNMax sigma, LNMax Laplace scale b = 1/gamma, Confident-GNMax's sigma2 with its check's noise fixed; in votes).

    Examples
    --------
    >>> b = calibrate_noise_scale(aggregator="lnmax", target_epsilon=1.0, delta=0.0, queries=10)
    >>> 20.0 <= b < 20.01   # basic composition: 10 queries of 2 / b each
    True
    """
    _check_aggregator(aggregator)
    delta = check_delta(delta)
    queries = check_int(queries, "queries", minimum=1)
    _check_gaussian_delta(aggregator, delta)
    if aggregator == "confident":
        checks = pate_epsilon(aggregator=aggregator, noise_scale=1e12, queries=queries, delta=delta,
                              accountant=accountant, threshold_noise=threshold_noise)
        if checks >= target_epsilon:
            raise DPValueError(
                f"the {queries} consensus checks alone cost epsilon = {epsilon_text(checks)}, not less than the target "
                f"{target_epsilon:g}: raise threshold_noise (the check's noise), ask fewer queries or raise epsilon")
    return calibrate(lambda scale: pate_event(aggregator=aggregator, noise_scale=scale, queries=queries,
                                              threshold_noise=threshold_noise),
                     target_epsilon=target_epsilon, delta=delta, accountant=accountant,
                     neighbouring=PATE_NEIGHBOURING, guess=10.0, name="noise_scale")


# --------------------------------------------------------------------------------------------
# Data-dependent analysis of GNMax (Papernot et al. 2018), optional and clearly labelled.
# --------------------------------------------------------------------------------------------


def _log1mexp(x: float) -> float:
    """log(1 - e^x) for x <= 0, accurately."""
    if x > 0:
        raise DPValueError(f"log1mexp needs x <= 0, got {x}")
    if x == 0:
        return -math.inf
    return math.log1p(-math.exp(x)) if x < -math.log(2) else math.log(-math.expm1(x))


def gnmax_log_q(votes: ArrayLike, *, sigma: float) -> float:
    """Upper bound on ``ln Pr[GNMax(votes) != argmax votes]`` (Papernot et al. 2018, Proposition 7).

    With i* the plurality class, class j beats i* only if
    ``noise_j - noise_i* > n_i* - n_j``, where the noise difference is
    N(0, 2 sigma^2); a union bound over j gives
    ``q <= sum_{j != i*} Pr[N(0, 2 sigma^2) > n_i* - n_j] = sum 1/2 erfc((n_i* - n_j) / (2 sigma))``.
    Also ``q <= 1 - 1/k``: with i.i.d. noise the plurality class is the likeliest winner.

    Parameters
    ----------
    votes : array of shape (n_classes,)
    sigma : float

    Examples
    --------
    >>> round(math.exp(gnmax_log_q([10, 0], sigma=5.0)), 4)   # Pr[N(0, 50) > 10]
    0.0786
    """
    sigma = check_positive(sigma, "sigma")
    v = np.asarray(votes, dtype=float).ravel()
    k = v.size
    if k < 2:
        raise DPValueError("votes must have at least 2 classes")
    top = int(np.argmax(v))
    gaps = v[top] - np.delete(v, top)
    log_q = float(np.logaddexp.reduce(stats.norm.logsf(gaps, scale=math.sqrt(2.0) * sigma)))
    return min(log_q, math.log1p(-1.0 / k))


def gnmax_data_dependent_rdp(log_q: float, *, sigma: float, orders: Sequence[float] = RDP_ORDERS) -> np.ndarray:
    """Data-dependent RDP of one GNMax answer, given ``q~ >= Pr[outcome != i*]`` (Theorem 6).

    Theorem 6 of Papernot et al. 2018: if M is (mu_1, eps_1)- and
    (mu_2, eps_2)-RDP, ``q~ >= Pr[M(D) != i*]``, ``lambda <= mu_1`` and
    ``q~ <= e^((mu_2 - 1) eps_2) / (mu_1/(mu_1 - 1) * mu_2/(mu_2 - 1))^mu_2``, then
    for every neighbour D'

        D_lambda(M(D) || M(D')) <= 1/(lambda - 1) log((1 - q~) A^(lambda - 1) + q~ B^(lambda - 1)),
        A = (1 - q~) / (1 - (q~ e^eps_2)^((mu_2 - 1)/mu_2)),   B = e^eps_1 / q~^(1/(mu_1 - 1)).

    For GNMax eps_i = mu_i / sigma^2 (Proposition 8); we take
    ``mu_2 = sigma sqrt(ln(1/q~))`` and ``mu_1 = mu_2 + 1`` (Proposition 10).
    Orders where the conditions fail (or ``q~ e^eps_2 >= 1``, where A is not
    defined) keep the data-independent ``lambda / sigma^2``; everywhere the
    result is the minimum of the two, so it never exceeds the data-independent bound.

    Returns
    -------
    ndarray
        RDP at each order in ``orders``.

    References
    ----------
    Papernot et al., "Scalable Private Learning with PATE", ICLR 2018, Theorem 6,
    Propositions 7, 8 and 10.
    """
    sigma = check_positive(sigma, "sigma")
    lam = np.asarray(orders, dtype=float)
    if np.any(lam <= 1):
        raise DPValueError("RDP orders must all be > 1")
    if log_q > 0:
        raise DPValueError(f"log_q must be <= 0 (it is the log of a probability), got {log_q}")
    var = sigma**2
    independent = lam / var
    if math.isinf(log_q):  # the outcome is certain: 0-RDP
        return np.zeros_like(lam)
    mu2 = sigma * math.sqrt(-log_q)
    mu1 = mu2 + 1.0
    if mu2 <= 1.0:
        return independent
    eps1, eps2 = mu1 / var, mu2 / var
    # Condition on q~ of Theorem 6 (in logs), and q~ e^eps2 < 1 so that A is positive and finite.
    log_q_max = (mu2 - 1.0) * eps2 - mu2 * (math.log(mu1 / (mu1 - 1.0)) + math.log(mu2 / (mu2 - 1.0)))
    if not (log_q <= log_q_max and log_q + eps2 < 0):
        return independent
    log_1mq = _log1mexp(log_q)
    log_a = log_1mq - _log1mexp((log_q + eps2) * (mu2 - 1.0) / mu2)
    log_b = eps1 - log_q / (mu1 - 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        log_sum = np.logaddexp(log_1mq + (lam - 1.0) * log_a, log_q + (lam - 1.0) * log_b)
        dependent = log_sum / (lam - 1.0)
    applies = lam <= mu1
    return np.where(applies, np.minimum(independent, dependent), independent)


def data_dependent_epsilon(
    votes: ArrayLike, *, sigma: float, delta: float, orders: Sequence[float] = RDP_ORDERS
) -> tuple[float, float, np.ndarray]:
    """DATA-DEPENDENT epsilon of GNMax answers on ``votes`` (not itself differentially private).

    Sums :func:`gnmax_data_dependent_rdp` over the queries (RDP composes
    additively) and converts RDP to (epsilon, delta) with the ledger's conversion
    (:func:`dpcore.accounting.trusted.rdp_epsilon`: dp_accounting's ``compute_epsilon``, read
    fail closed), the same one the data-independent RDP accountant uses.

    Parameters
    ----------
    votes : array of shape (n_queries, n_classes)
        The teachers' vote histograms of the answered queries.
    sigma, delta : float

    Returns
    -------
    epsilon : float
    order : float
        The optimal RDP order.
    per_query_rdp : ndarray of shape (n_queries,)
        Each query's RDP at that order (strong consensus costs little).

    Notes
    -----
    The value depends on the private votes; Papernot et al. release it only after
    a smooth-sensitivity sanitisation (:func:`dpcore.pate.confident.release_data_dependent_epsilon`).
    """
    delta = check_delta(delta, allow_zero=False)
    v = np.asarray(votes, dtype=float)
    if v.ndim != 2:
        raise DPValueError(f"votes must have shape (n_queries, n_classes), got {v.shape}")
    lam = np.asarray(orders, dtype=float)
    per = np.array([gnmax_data_dependent_rdp(gnmax_log_q(row, sigma=sigma), sigma=sigma, orders=lam) for row in v])
    if per.size == 0:
        return 0.0, float(lam[0]), np.zeros(0)
    total = per.sum(axis=0)
    eps, order = rdp_epsilon(lam, total, delta)  # dpcore's one RDP-to-DP conversion, fail closed
    idx = int(np.argmin(np.abs(lam - order)))
    return float(eps), float(order), per[:, idx]


def data_independent_rdp_epsilon(*, sigma: float, queries: int, delta: float,
                                 orders: Sequence[float] = RDP_ORDERS) -> float:
    """GNMax's data-independent epsilon from RDP ``m alpha / sigma^2`` on ``orders``, for comparison.

    Uses the same orders and RDP-to-DP conversion as :func:`data_dependent_epsilon`,
    so the two are directly comparable (and it matches dp_accounting's RdpAccountant).
    """
    sigma = check_positive(sigma, "sigma")
    queries = check_int(queries, "queries", minimum=0)
    delta = check_delta(delta, allow_zero=False)
    lam = np.asarray(orders, dtype=float)
    if np.array_equal(lam, RDP_ORDERS):  # the ledger's grid: GNMax's event through the ledger itself
        # RDP m alpha / sigma^2 is that of m Gaussians of noise multiplier sigma / sqrt(2) (alpha / (2 z^2))
        gnmax = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / math.sqrt(2.0)), queries)
        return epsilon_of_event(gnmax, delta=delta, accountant="rdp")
    # m alpha / sigma^2 in floating point: the square, the product and the quotient each round by up to half a unit,
    # so the curve is taken a few units up, never below the exact one (which the conversion then reads)
    return rdp_epsilon(lam, queries * lam / sigma**2 * (1.0 + 8 * 2.0**-52), delta)[0]


__all__ = [
    "HISTOGRAM_L1_SENSITIVITY",
    "HISTOGRAM_L2_SENSITIVITY",
    "RDP_ORDERS",
    "calibrate_noise_scale",
    "data_dependent_epsilon",
    "data_independent_rdp_epsilon",
    "gnmax_data_dependent_rdp",
    "gnmax_log_q",
    "pate_epsilon",
    "pate_event",
]
