"""Confident-GNMax, and the private release of a data-dependent epsilon by smooth sensitivity.

Confident-GNMax (Papernot et al. 2018, Algorithm 1) answers a query only when the teachers agree: it first checks,
with noise, that the largest vote count reaches a threshold T (``max_j n_j + N(0, sigma1^2) >= T``) and only then
answers with GNMax (``argmax_j n_j + N(0, sigma2^2)``); otherwise the student gets no label for that query. The
answers it gives are more often right, and when the teachers agree strongly they cost far less privacy than the
data-independent bound says.

Sensitivities (the neighbouring relation of :mod:`dpcore.pate.aggregation`: one private record changes at most one
teacher's vote): the largest count moves by at most 1, so the check is a Gaussian mechanism of L2 sensitivity 1,
``GaussianDpEvent(sigma1)``; an answer is GNMax, ``GaussianDpEvent(sigma2 / sqrt 2)``.

**Data-independent guarantee** (:func:`~dpcore.pate.aggregation.confident_event`; the mechanism itself,
:class:`~dpcore.pate.aggregation.ConfidentGNMax`, lives beside the other aggregators): every examined query pays one
check and, in the worst case, one answer; this is the epsilon the app calibrates to and reports as the guarantee.

**Data-dependent epsilon, released privately** (:func:`release_data_dependent_epsilon`): the RDP of each check and of
each answer given the actual votes (Theorem 6 with Proposition 7 for GNMax; the same theorem for the check, whose
non-majority outcome has probability ``min(p, 1 - p)`` with ``p = Pr[answered]``) is far smaller when consensus is
strong, but it is a function of the private votes. Papernot et al. release it with the Gaussian noise with smooth
sensitivity mechanism (GNSS, their Theorem 23): local sensitivity bounds at every distance d (Algorithms 3-5 for
GNMax, an exact table over the largest count for the check), the beta-smooth sensitivity
``SS = max_d e^(-beta d) LS^(d)``, then ``RDP + SS * N(0, sigma_ss^2)``, which itself costs
``lambda e^(2 beta) / sigma_ss^2 + (beta lambda - ln(1 - 2 beta lambda) / 2) / (lambda - 1)`` at order lambda, or,
where it is larger, the exact Renyi divergence between two neighbours' Gaussians (:func:`gnss_rdp`: the theorem falls
below it as lambda nears 1 / (2 beta), at the release order among others).
The released RDP plus that cost becomes an epsilon by dpcore's one RDP-to-DP conversion, the ledger's
(:func:`dpcore.accounting.trusted.rdp_epsilon`: dp_accounting's, Canonne, Kamath & Steinke 2020, Proposition 12),
at that one order. The order, beta and sigma_ss are fixed before looking at the votes (:func:`release_parameters`),
so that the choice leaks nothing. The GNMax part needs the paper's conditions C5-C6 on the bound (monotone in q);
they are verified numerically (:func:`smooth_sensitivity_conditions_hold`) and the release is refused where they
fail.

References
----------
Papernot, Song, Mironov, Raghunathan, Talwar, Erlingsson. "Scalable Private Learning with PATE." ICLR 2018:
Algorithm 1 (Confident-GNMax), Theorem 6 and Propositions 7, 8, 10 (data-dependent RDP), Section 4.2 and
Appendix B (smooth sensitivity: Algorithms 3-5, Proposition 13, conditions C5-C6), Theorem 23 (GNSS).
Nissim, Raskhodnikova, Smith. "Smooth sensitivity and sampling in private data analysis." STOC 2007.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import optimize, special, stats

from ..accounting.events import RdpCurveDpEvent
from ..accounting.trusted import rdp_epsilon
from ..exceptions import DPValueError
from ..mechanisms import NoiseMultiplierGaussian
from ..mechanisms.base import round_down, sqrt_down
from ..types import ArrayLike, RngLike
from ..validation import check_delta, check_int, check_positive
from .aggregation import MAX_COUNT_SENSITIVITY, ConfidentGNMax, _check_votes, confident_event
from .analysis import RDP_ORDERS, _log1mexp, gnmax_data_dependent_rdp, gnmax_log_q

# --------------------------------------------------------------------------------------------------------------
# Data-dependent RDP of the check and of the answers (Papernot et al. 2018, Theorem 6)
# --------------------------------------------------------------------------------------------------------------

def log_pr_answered(votes, *, threshold: float, sigma1: float) -> np.ndarray:
    """``ln Pr[max_j n_j + N(0, sigma1^2) >= threshold]`` for every query (row of ``votes``)."""
    v = _check_votes(votes)
    return stats.norm.logsf(threshold - v.max(axis=1), scale=check_positive(sigma1, "sigma1"))


def log_pr_not_answered(votes, *, threshold: float, sigma1: float) -> np.ndarray:
    """``ln Pr[max_j n_j + N(0, sigma1^2) < threshold]`` for every query, from the other tail: where the check is
    nearly sure to pass, ``1 - Pr[answered]`` rounds to 0 and only this keeps its size."""
    v = _check_votes(votes)
    return stats.norm.logcdf(threshold - v.max(axis=1), scale=check_positive(sigma1, "sigma1"))


def check_data_dependent_rdp(log_p: float, *, sigma1: float, orders=RDP_ORDERS,
                             log_not_p: float | None = None) -> np.ndarray:
    """Data-dependent RDP of one consensus check whose answer probability is ``e^log_p``.

    The check has two outcomes; the less likely one has probability ``q = min(p, 1 - p)``, and the check is a
    Gaussian mechanism of sensitivity 1, i.e. ``(lambda, lambda / (2 sigma1^2))``-RDP: Theorem 6 applies as for
    GNMax with ``sigma = sqrt 2 sigma1`` (Papernot et al. 2018, Section 4.1 and its published analysis).

    ``log_not_p`` is ``ln(1 - p)`` from the other tail (:func:`log_pr_not_answered`). Without it, it is computed from
    ``log_p``; where ``log_p`` rounded to 0 (a check more than about 38 noise deviations above the threshold) that
    says nothing of ``1 - p``, which is not 0: the outcome is not certain, and the neighbour's ``1 - p'`` can be
    e^46 times smaller, so the data-independent ``lambda / (2 sigma1^2)`` is returned (the bound's ``q = 0``
    shortcut stated 0).
    """
    # sqrt 2 sigma1 rounded DOWN (a larger sigma states a smaller RDP): math.sqrt(2.0) is above the exact root
    sigma = round_down(Fraction(sqrt_down(2)) * Fraction(sigma1))
    log_p = float(log_p)
    if log_not_p is None:
        if log_p == 0.0:  # p rounded to 1: how far 1 - p is from 0 is lost, fail closed
            return np.asarray(orders, dtype=float) / sigma**2
        log_not_p = _log1mexp(min(log_p, 0.0))
    log_q = min(log_p, float(log_not_p))
    return gnmax_data_dependent_rdp(log_q, sigma=sigma, orders=orders)


# --------------------------------------------------------------------------------------------------------------
# Smooth sensitivity (Papernot et al. 2018, Appendix B), at one RDP order
# --------------------------------------------------------------------------------------------------------------

def _mu(sigma: float, log_q: float) -> tuple[float, float]:
    """mu_1, mu_2 of Proposition 10."""
    mu2 = sigma * math.sqrt(-log_q)
    return mu2 + 1.0, mu2


def _dependent_bound(sigma: float, log_q: float, order: float) -> float:
    """Theorem 6's bound at ``order`` without its validity checks (callers compare ``log_q`` with ``log q0``)."""
    var = sigma**2
    mu1, mu2 = _mu(sigma, log_q)
    eps1, eps2 = mu1 / var, mu2 / var
    log_1mq = _log1mexp(log_q)
    log_a = (order - 1.0) * (log_1mq - _log1mexp((log_q + eps2) * (1.0 - 1.0 / mu2)))
    log_b = (order - 1.0) * (eps1 - log_q / (mu1 - 1.0))
    return float(np.logaddexp(log_1mq + log_a, log_q + log_b) / (order - 1.0))


@functools.lru_cache(maxsize=512)
def log_q0(sigma: float, order: float) -> float:
    """The q below which Theorem 6's bound is valid and beats the data-independent ``order / sigma^2``.

    Found by bracketing and Brent's method from the natural upper bound of the paper's published analysis.
    """
    independent = order / sigma**2

    def valid(log_q):
        mu1, mu2 = _mu(sigma, log_q)
        if mu1 < order or mu2 <= 1.0:
            return False
        eps2 = mu2 / sigma**2
        return log_q <= (mu2 - 1.0) * eps2 - mu2 * math.log(mu1 / (mu1 - 1.0) * mu2 / (mu2 - 1.0))

    def gap(log_q):
        return _dependent_bound(sigma, log_q, order) - independent

    upper = min(-(1.0 + 1.0 / sigma) ** 2, -((order - 0.99) / sigma) ** 2, -1.0 / sigma**2)
    if not valid(upper):
        raise DPValueError(f"Theorem 6 does not apply at sigma={sigma}, order={order}")
    if gap(upper) < 0:
        return upper
    lower = 2.0 * upper
    while gap(lower) > 0:
        if lower < -1e5:
            raise DPValueError(f"no data-dependent regime found at sigma={sigma}, order={order}")
        lower *= 1.5
    root = optimize.brentq(gap, lower, upper)
    return float(root)


def gnmax_rdp_at(sigma: float, log_q: float, order: float) -> float:
    """GNMax's data-dependent RDP at one ``order``: Theorem 6 below ``log q0``, ``order / sigma^2`` above."""
    if math.isinf(log_q) and log_q < 0:
        return 0.0
    if log_q >= log_q0(sigma, order):
        return order / sigma**2
    return _dependent_bound(sigma, log_q, order)


def _bl(q: float, sigma: float, m: int) -> float:
    """Lower bound on q after one teacher changes its vote (Papernot et al. 2018, Appendix B.4)."""
    return (m - 1) / 2.0 * special.erfc(1.0 / sigma + special.erfcinv(2.0 * q / (m - 1)))


def _bu(q: float, sigma: float, m: int) -> float:
    """Upper bound on q after one teacher changes its vote (Appendix B.4)."""
    return min(1.0, (m - 1) / 2.0 * special.erfc(-1.0 / sigma + special.erfcinv(2.0 * q / (m - 1))))


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def _q(log_q: float) -> float:
    return max(math.exp(log_q), 1e-300)


@functools.lru_cache(maxsize=512)
def _log_q1(sigma: float, order: float, m: int) -> float:
    return _log(_bl(math.exp(log_q0(sigma, order)), sigma, m))


def _gnmax_local_sensitivity(log_q: float, sigma: float, m: int, order: float) -> float:
    """Algorithm 3: an upper bound on the local sensitivity of :func:`gnmax_rdp_at` at a histogram with this q."""
    lq0, lq1 = log_q0(sigma, order), _log_q1(sigma, order, m)
    if lq1 <= log_q <= lq0:
        log_q = lq1
    beta = gnmax_rdp_at(sigma, log_q, order)
    up = gnmax_rdp_at(sigma, _log(_bu(_q(log_q), sigma, m)), order)
    down = gnmax_rdp_at(sigma, _log(_bl(_q(log_q), sigma, m)), order)
    return max(up - beta, beta - down)


def gnmax_local_sensitivity_bounds(votes, *, teachers: int, sigma: float, order: float) -> np.ndarray:
    """Upper bounds on the local sensitivity of GNMax's data-dependent RDP at every distance ``0 <= d < teachers``.

    Algorithms 4 and 5 of Papernot et al. 2018 in O(teachers x classes): from the actual histogram, the bound at
    distance d is Algorithm 3's at the histogram d vote moves away that brings q closest to the plateau
    ``[q1, q0]`` (moving votes from the runner-up to the winner while q > q0, the other way while q < q1).
    """
    v = np.sort(np.asarray(votes, dtype=float).ravel())[::-1].copy()
    m = v.size
    lq0, lq1 = log_q0(sigma, order), _log_q1(sigma, order, m)
    log_q = gnmax_log_q(v, sigma=sigma)
    out = np.full(int(teachers), _gnmax_local_sensitivity(lq1, sigma, m, order))
    if lq1 <= log_q <= lq0:
        return out
    out[0] = _gnmax_local_sensitivity(log_q, sigma, m, order)
    d = 0
    go_left = log_q > lq0
    while d + 1 < out.size and ((go_left and log_q > lq0 and v[1] > 0) or (not go_left and log_q < lq1)):
        d += 1
        if go_left:  # widen the winner's lead: q falls
            v[0] += 1
            v[1] -= 1
            i = 1
            while i < m - 1 and v[i] < v[i + 1]:
                v[i], v[i + 1] = v[i + 1], v[i]
                i += 1
        else:  # narrow it: q rises
            v[0] -= 1
            v[1] += 1
        log_q = gnmax_log_q(v, sigma=sigma)
        out[d] = _gnmax_local_sensitivity(log_q, sigma, m, order)
    return out


@functools.lru_cache(maxsize=256)
def _check_rdp_table(teachers: int, threshold: float, sigma1: float, order: float) -> np.ndarray:
    """The check's data-dependent RDP at ``order`` for every possible largest count 0..teachers."""
    lp = stats.norm.logsf(threshold - np.arange(teachers + 1), scale=sigma1)
    lnp = stats.norm.logcdf(threshold - np.arange(teachers + 1), scale=sigma1)
    return np.array([float(check_data_dependent_rdp(x, sigma1=sigma1, orders=[order], log_not_p=y)[0])
                     for x, y in zip(lp, lnp)])


def check_local_sensitivity_bounds(votes, *, teachers: int, threshold: float, sigma1: float,
                                   order: float) -> np.ndarray:
    """Exact largest local sensitivity of the check's data-dependent RDP at every distance ``0 <= d < teachers``:
    it depends on the largest count alone, which moves by at most one per changed vote."""
    table = _check_rdp_table(int(teachers), float(threshold), float(sigma1), float(order))
    steps = np.abs(np.diff(table))  # |f(c + 1) - f(c)|
    local = np.maximum(np.r_[steps, 0.0], np.r_[0.0, steps])  # at count c: one step either way
    top = int(round(float(np.max(votes))))
    out = np.zeros(int(teachers))
    for d in range(out.size):
        lo, hi = max(0, top - d), min(int(teachers), top + d)
        out[d] = local[lo:hi + 1].max()
    return out


def smooth_sensitivity(beta: float, local_bounds) -> float:
    """``max_d e^(-beta d) LS^(d)``: the beta-smooth upper bound on the local sensitivity (Nissim et al. 2007)."""
    ls = np.asarray(local_bounds, dtype=float)
    return float(np.max(ls * np.exp(-beta * np.arange(ls.size)))) if ls.size else 0.0


def gaussian_renyi_divergence(order: float, shift: float, sd0: float, sd1: float) -> float:
    """``D_order(N(0, sd0^2) || N(shift, sd1^2))`` in closed form (Gil, Alajaji & Linder 2013):
    ``order shift^2 / (2 v) + ln(sd1 / sd0) + ln(sd1^2 / v) / (2 (order - 1))`` with ``v = order sd1^2 + (1 - order)
    sd0^2``; infinite where ``v <= 0`` (the second Gaussian too narrow for the first's tails at this order).

    >>> round(gaussian_renyi_divergence(3.0, 1.0, 2.0, 2.0), 6)   # equal widths: the Gaussian's order / (2 s^2)
    0.375
    """
    v = order * sd1**2 + (1.0 - order) * sd0**2
    if not v > 0.0:
        return math.inf
    return order * shift**2 / (2.0 * v) + math.log(sd1 / sd0) + math.log(sd1**2 / v) / (2.0 * (order - 1.0))


def gnss_exact_rdp(*, beta: float, sigma_ss: float, order: float) -> float:
    """The largest Renyi divergence at ``order`` between the releases ``f(D) + S(D) N(0, sigma_ss^2)`` of two
    neighbours, for any f and any beta-smooth sensitivity bound S (Nissim, Raskhodnikova & Smith 2007).

    Neighbours satisfy ``|f(D) - f(D')| <= min(S(D), S(D'))`` (the local sensitivity at either one bounds it) and
    ``S(D') = e^r S(D)`` with ``|r| <= beta``. Scaling by S(D), the pair is ``N(0, sigma^2)`` against
    ``N(Delta, e^(2r) sigma^2)`` with ``Delta <= min(1, e^r)`` (the other order of the pair is the same set, rescaled).
    The divergence grows with Delta; for ``r <= 0`` (Delta = e^r) it grows as r falls, so ``r = -beta`` is the worst;
    for ``r >= 0`` (Delta = 1) its shift term falls and its width term grows with r, so the shift term at r = 0 plus
    the width term at r = beta bounds them all.
    """
    sd = sigma_ss
    narrower = gaussian_renyi_divergence(order, math.exp(-beta), sd, sd * math.exp(-beta))
    wider = (gaussian_renyi_divergence(order, 1.0, sd, sd)
             + gaussian_renyi_divergence(order, 0.0, sd, sd * math.exp(beta)))
    return max(narrower, wider)


def gnss_rdp(*, beta: float, sigma_ss: float, order: float) -> float:
    """RDP at ``order`` of releasing ``f(D) + SS_beta(D) N(0, sigma_ss^2)``: Papernot et al. 2018, Theorem 23,
    ``order e^(2 beta) / sigma^2 + (beta order - ln(1 - 2 beta order) / 2) / (order - 1)``, or the exact divergence of
    the two Gaussians (:func:`gnss_exact_rdp`) where that is larger. The theorem's bound falls below the exact one as
    ``order`` nears ``1 / (2 beta)`` (from about ``beta order = 0.35``; at the release's own ``beta order = 0.4``,
    order 24 and sigma 15.8 it states 0.152 where two neighbours' releases are 0.236 apart), where its narrower
    Gaussian's tails weigh most; below that the theorem is the larger (it spends a factor 2 on the shift) and stays.

    >>> round(gnss_rdp(beta=0.0, sigma_ss=2.0, order=3.0), 6)   # beta = 0: the theorem's order / sigma^2
    0.75
    """
    if not 1.0 < order < (math.inf if beta == 0 else 1.0 / (2.0 * beta)):
        raise DPValueError(f"GNSS needs 1 < order < 1 / (2 beta); got order={order}, beta={beta}")
    theorem = order * math.exp(2.0 * beta) / sigma_ss**2 + (
        beta * order - 0.5 * math.log(1.0 - 2.0 * beta * order)) / (order - 1.0)
    return max(theorem, gnss_exact_rdp(beta=beta, sigma_ss=sigma_ss, order=order))


@functools.lru_cache(maxsize=256)
def smooth_sensitivity_conditions_hold(sigma: float, m: int, order: float) -> bool:
    """Conditions C5-C6 of Papernot et al. 2018 (Appendix B.4), checked numerically on a fine grid of q.

    C5: Theorem 6's bound is non-decreasing in q on (0, q0] and meets ``order / sigma^2`` at q0. C6:
    ``beta(bu(q)) - beta(q)`` is non-decreasing on (0, bl(q0)]. Algorithm 3's local sensitivity bound rests on
    both. (The paper checks the derivatives symbolically; here they are checked by differences over 4,000 points
    of log q spanning 11 orders of magnitude below log q0.) Where they cannot be checked in double precision (a
    noise so small that ``order / sigma^2`` overflows), they are not shown to hold: False, and the release is
    refused.
    """
    try:
        return _conditions_hold(sigma, m, order)
    except (ZeroDivisionError, OverflowError, FloatingPointError):
        return False


def _conditions_hold(sigma: float, m: int, order: float) -> bool:
    lq0 = log_q0(sigma, order)
    if not math.isclose(_dependent_bound(sigma, lq0, order), order / sigma**2, rel_tol=1e-6):
        return False  # the bound jumps at q0 (q0 sits at its natural upper bound): Algorithm 3's plateau fails
    grid = lq0 - np.geomspace(1e-9, 100.0, 4000)[::-1] * max(1.0, -lq0)  # log q from far below up to log q0
    beta = np.array([_dependent_bound(sigma, x, order) for x in grid])
    if np.any(np.diff(beta) < -1e-12 * np.maximum(1.0, np.abs(beta[1:]))):
        return False
    lb = _log(_bl(math.exp(lq0), sigma, m))
    grid = grid[grid <= lb]
    if grid.size < 2:
        return True
    delta_beta = np.array([_dependent_bound(sigma, min(_log(_bu(_q(x), sigma, m)), lq0), order)
                           - _dependent_bound(sigma, x, order) for x in grid])
    return bool(np.all(np.diff(delta_beta) >= -1e-12 * np.maximum(1.0, np.abs(delta_beta[1:]))))


# --------------------------------------------------------------------------------------------------------------
# The private release
# --------------------------------------------------------------------------------------------------------------

#: beta as a share of 1 / order (the paper searched 0.3 / order to 0.495 / order).
BETA_SHARE = 0.4
#: sigma_ss makes the Gaussian term of Theorem 23 (the release's own cost) this much RDP at the release order.
GNSS_NOISE_COST = 0.1

@dataclass(frozen=True)
class ReleaseParameters:
    """Order, beta and sigma_ss of the smooth-sensitivity release, fixed before the votes are seen."""

    order: float
    beta: float
    sigma_ss: float

    @property
    def cost(self) -> float:
        """RDP of the release itself at ``order`` (:func:`gnss_rdp`: Theorem 23, or the exact divergence)."""
        return gnss_rdp(beta=self.beta, sigma_ss=self.sigma_ss, order=self.order)

    @property
    def dp_event(self) -> RdpCurveDpEvent:
        """The release as an event a :class:`~dpcore.accounting.PrivacyLedger` composes: :func:`gnss_rdp` at every
        order of :data:`~dpcore.pate.analysis.RDP_ORDERS` below ``1 / (2 beta)``, infinity from there (the theorem
        says nothing). The release is a second mechanism on the private votes, after the answers: the run's
        guarantee composes both, order by order (Mironov 2017, Proposition 1).

        >>> p = release_parameters(1e-5)
        >>> e = p.dp_event
        >>> bool(e.curve_at([25.0])[0] == gnss_rdp(beta=p.beta, sigma_ss=p.sigma_ss, order=25.0))
        True
        >>> float(e.curve_at([1 / (2 * p.beta)])[0])
        inf
        """
        top = math.inf if self.beta == 0 else 1.0 / (2.0 * self.beta)
        return RdpCurveDpEvent(orders=RDP_ORDERS, rdp=[
            gnss_rdp(beta=self.beta, sigma_ss=self.sigma_ss, order=float(o)) if o < top else math.inf
            for o in RDP_ORDERS])


#: Orders the release may fall back to, from high to low, where conditions C5-C6 fail at the first choice.
FALLBACK_ORDERS = (32.0, 24.0, 20.0, 16.0, 12.0, 10.0, 8.0, 6.0, 5.0, 4.0, 3.0, 2.0)


def release_parameters(delta: float, *, sigma2: float | None = None, classes: int | None = None,
                       delta_share: float = 0.5) -> ReleaseParameters:
    """Order, beta and sigma_ss of the release, chosen without looking at the votes.

    The order is the one whose conversion term ``ln(1/delta) / (order - 1)`` is ``delta_share`` (given GNMax's
    ``sigma2`` and the number of ``classes``: the largest of that and :data:`FALLBACK_ORDERS` below it where
    conditions C5-C6 hold); beta = :data:`BETA_SHARE` / order; sigma_ss makes the Gaussian term of Theorem 23
    :data:`GNSS_NOISE_COST`. (Papernot et al.'s published analysis tuned beta and sigma_ss on the private smooth
    sensitivity; a fixed cost keeps the choice free of the data, and the noise is small exactly when the teachers
    agree, where the data-dependent epsilon is worth releasing.)

    >>> p = release_parameters(1e-5)
    >>> round(p.order, 2), round(p.beta * p.order, 2), round(p.cost, 3)
    (24.03, 0.4, 0.236)
    """
    delta = check_delta(delta, allow_zero=False)
    order = 1.0 + math.log(1.0 / delta) / check_positive(delta_share, "delta_share")
    if sigma2 is not None:
        candidates = [order] + [o for o in FALLBACK_ORDERS if o < order]
        order = next((o for o in candidates if smooth_sensitivity_conditions_hold(float(sigma2), int(classes), o)),
                     None)
        if order is None:
            raise DPValueError(f"the smooth-sensitivity conditions C5-C6 do not hold for sigma2={sigma2:.3g} with "
                               f"{classes} classes at any order: the data-dependent epsilon cannot be released")
    beta = BETA_SHARE / order
    sigma_ss = math.sqrt(order * math.exp(2.0 * beta) / GNSS_NOISE_COST)
    return ReleaseParameters(order=order, beta=beta, sigma_ss=sigma_ss)


@dataclass(frozen=True)
class ReleasedEpsilon:
    """A data-dependent epsilon released with smooth sensitivity (what may be published).

    ``epsilon`` is the released RDP plus the release's own cost, converted at ``params.order`` by the ledger's
    conversion (:func:`dpcore.accounting.trusted.rdp_epsilon`; at most Mironov's ``rdp + ln(1/delta) / (order - 1)``,
    the one Papernot et al. used); ``noise_std`` is the standard deviation of the noise it
    carries (``SS * sigma_ss``, itself computed from the private votes, so only for the record of this run).
    """

    epsilon: float
    noise_std: float
    delta: float
    params: ReleaseParameters
    answered: int


def data_dependent_rdp_at(votes, answered, *, sigma2: float, order: float, teachers: int,
                          threshold: float | None = None, sigma1: float | None = None) -> float:
    """The (private) data-dependent RDP at ``order`` of the checks of all ``votes`` and the answers where
    ``answered``: the value :func:`release_data_dependent_epsilon` sanitises."""
    v = _check_votes(votes)
    mask = np.asarray(answered, dtype=bool)
    total = sum(gnmax_rdp_at(sigma2, gnmax_log_q(row, sigma=sigma2), order) for row in v[mask])
    if threshold is not None:
        table = _check_rdp_table(int(teachers), float(threshold), float(sigma1), float(order))
        total += float(table[np.clip(np.rint(v.max(axis=1)).astype(int), 0, int(teachers))].sum())
    return float(total)


def release_data_dependent_epsilon(votes: ArrayLike, answered: ArrayLike, *, teachers: int, sigma2: float,
                                   delta: float, rng: RngLike = None,
                                   threshold: float | None = None, sigma1: float | None = None,
                                   params: ReleaseParameters | None = None) -> ReleasedEpsilon:
    """Release the data-dependent epsilon of a PATE run privately (Papernot et al. 2018, Section 4.2).

    Parameters
    ----------
    votes : array (n_queries, n_classes)
        Vote histograms of every examined query (integers summing to ``teachers``).
    answered : bool array (n_queries,)
        Which queries were answered (all of them for GNMax).
    teachers : int
    sigma2 : float
        GNMax's noise.
    threshold, sigma1 : float, optional
        Confident-GNMax's check (None: GNMax, no check).
    delta : float
    params : ReleaseParameters, optional
        Default :func:`release_parameters` from ``delta``, ``sigma2`` and the number of classes.
    rng : seed, Generator or "secure"

    Raises
    ------
    DPValueError
        Where conditions C5-C6 fail for ``sigma2`` at the release order: the smooth-sensitivity bound would not hold.
    """
    v = _check_votes(votes)
    teachers = check_int(teachers, "teachers", minimum=1)
    delta = check_delta(delta, allow_zero=False)
    m = v.shape[1]
    mask = np.asarray(answered, dtype=bool)
    p = params or release_parameters(delta, sigma2=sigma2, classes=m)  # public quantities only
    if mask.any() and not smooth_sensitivity_conditions_hold(float(sigma2), m, p.order):
        raise DPValueError(f"the smooth-sensitivity conditions C5-C6 do not hold for sigma2={sigma2:.3g} with {m} "
                           f"classes at order {p.order:.3g}; the data-dependent epsilon cannot be released")
    ls = np.zeros(teachers)
    for row in v[mask]:
        ls += gnmax_local_sensitivity_bounds(row, teachers=teachers, sigma=sigma2, order=p.order)
    if threshold is not None:
        for row in v:
            ls += check_local_sensitivity_bounds(row, teachers=teachers, threshold=threshold, sigma1=sigma1,
                                                 order=p.order)
    ss = smooth_sensitivity(p.beta, ls)
    exact = data_dependent_rdp_at(v, mask, sigma2=sigma2, order=p.order, teachers=teachers, threshold=threshold,
                                  sigma1=sigma1)
    noisy = exact if ss == 0 else float(NoiseMultiplierGaussian(noise_multiplier=p.sigma_ss, sensitivity=ss)
                                         .randomise(exact, rng=rng))
    epsilon, _ = rdp_epsilon([p.order], [max(noisy, 0.0) + p.cost], delta)  # the ledger's conversion, fail closed
    return ReleasedEpsilon(epsilon=float(epsilon), noise_std=float(ss * p.sigma_ss), delta=delta, params=p,
                           answered=int(mask.sum()))


__all__ = [
    "FALLBACK_ORDERS",
    "MAX_COUNT_SENSITIVITY",
    "ConfidentGNMax",
    "ReleaseParameters",
    "ReleasedEpsilon",
    "check_data_dependent_rdp",
    "check_local_sensitivity_bounds",
    "confident_event",
    "data_dependent_rdp_at",
    "gnmax_local_sensitivity_bounds",
    "gnmax_rdp_at",
    "gaussian_renyi_divergence",
    "gnss_exact_rdp",
    "gnss_rdp",
    "log_pr_answered",
    "log_pr_not_answered",
    "log_q0",
    "release_data_dependent_epsilon",
    "release_parameters",
    "smooth_sensitivity",
    "smooth_sensitivity_conditions_hold",
]
