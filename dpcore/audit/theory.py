"""The best any membership test can do against a run that was actually made.

(a) From an (eps, delta) claim alone. Any test against an (eps, delta)-DP mechanism has
(FPR, TPR) = (a, b) inside the region of Kairouz, Oh & Viswanath (2015):

    b <= e^eps a + delta,    1 - a <= e^eps (1 - b) + delta,
    a <= e^eps b + delta,    1 - b <= e^eps (1 - a) + delta,

so the largest TPR at FPR a is min(1, e^eps a + delta, 1 - e^-eps (1 - delta - a)) (the
last two inequalities only bound TPR from below), and the largest membership advantage
b - a is (e^eps - 1 + 2 delta) / (e^eps + 1), reached at a = (1 - delta) / (e^eps + 1).

(b) From the mechanism itself. Its privacy profile delta(eps) (the hockey-stick
divergence of the two output distributions, for every real eps, from dp_accounting's
privacy loss distribution of the composed DpEvent, as the ledger composes it:
:func:`dpcore.accounting.privacy_profile`, so the curve and the epsilon the run reports
come from one composition) gives the exact trade-off curve by
the duality of Dong, Roth & Su (2019, Proposition 2.12): every eps gives a line,

    b <= e^eps a + delta(eps)    and    b <= 1 - e^-eps (1 - delta(eps) - a),

and the largest TPR at FPR a is the minimum over eps. For a single Gaussian mechanism of
sensitivity 1 and noise sigma this is mu-GDP with mu = 1/sigma: b = Phi(Phi^-1(a) + mu).

References
----------
Kairouz, Oh, Viswanath. The composition theorem for differential privacy. ICML 2015.
Dong, Roth, Su. Gaussian differential privacy. JRSS B 2022 (arXiv 2019), Proposition 2.12
(the privacy-profile duality) and the Gaussian trade-off function G_mu.
Humphries et al. Investigating membership inference attacks under data dependencies.
IEEE CSF 2023 (the advantage bound with delta).
"""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
from scipy import stats

from ..accounting import Neighbouring, PrivacyProfile, privacy_profile
from ..exceptions import DPTypeError, DPValueError
from ..types import ArrayLike
from ..validation import check_array, check_delta, check_nonnegative, check_positive

__all__ = [
    "max_tpr_at_fpr",
    "max_advantage",
    "gaussian_tradeoff_tpr",
    "pld_max_tpr_at_fpr",
]

# Lines of the privacy profile are taken on [-E, E] with delta(E) <= this.
_TAIL_DELTA = 1e-12
_N_LINES = 2001
_MAX_LINE_EPSILON = 60.0


def _check_claim_epsilon(epsilon) -> float:
    if isinstance(epsilon, (float, np.floating)) and math.isinf(epsilon) and epsilon > 0:
        return math.inf
    return check_nonnegative(epsilon, "epsilon")


def _check_fprs(fpr) -> np.ndarray:
    arr = check_array(fpr, "fpr")
    if np.any(arr < 0) or np.any(arr > 1):
        raise DPValueError("fpr must lie in [0, 1]")
    return arr


def _shape_like(values: np.ndarray, like):
    return float(values) if np.ndim(like) == 0 else values


def max_tpr_at_fpr(fpr: ArrayLike, *, epsilon: float, delta: float = 0.0) -> float | np.ndarray:
    """Largest TPR at FPR ``fpr`` for any test against an (eps, delta)-DP mechanism.

    min(1, e^eps a + delta, 1 - e^-eps (1 - delta - a)) (Kairouz et al. 2015).

    Examples
    --------
    With e^eps = 3 the two lines cross at FPR 1/4:

    >>> max_tpr_at_fpr([0.1, 0.25, 0.4], epsilon=math.log(3)).round(6).tolist()
    [0.3, 0.75, 0.8]
    """
    a = _check_fprs(fpr)
    epsilon = _check_claim_epsilon(epsilon)
    delta = check_delta(delta)
    if math.isinf(epsilon):
        return _shape_like(np.ones_like(a), fpr)
    # e^eps a in logs: e^eps capped at e^700 understated it at FPRs below e^-700 (a TPR bound below the claim's)
    with np.errstate(divide="ignore"):
        forward = np.exp(np.minimum(epsilon + np.log(a), 1.0)) + delta
    tpr = np.minimum.reduce([np.ones_like(a), forward, 1.0 - (1.0 - delta - a) * math.exp(-epsilon)])
    return _shape_like(np.clip(tpr, 0.0, 1.0), fpr)


def max_advantage(*, epsilon: float, delta: float = 0.0) -> float:
    """Largest membership advantage TPR - FPR against (eps, delta)-DP: (e^eps - 1 + 2 delta) / (e^eps + 1).

    The gap of the region's two lines is largest where they cross, at FPR
    (1 - delta) / (e^eps + 1). It is tighter than Yeom et al.'s (2018) e^eps - 1.

    References
    ----------
    Kairouz, Oh, Viswanath 2015 (the region); Humphries et al. 2023 (the same bound).

    >>> round(max_advantage(epsilon=math.log(3)), 12)
    0.5
    """
    epsilon = _check_claim_epsilon(epsilon)
    delta = check_delta(delta)
    if math.isinf(epsilon):
        return 1.0
    e = math.exp(min(epsilon, 700.0))
    return min(1.0, (e - 1.0 + 2.0 * delta) / (e + 1.0))


def gaussian_tradeoff_tpr(fpr: ArrayLike, *, mu: float) -> float | np.ndarray:
    """TPR = Phi(Phi^-1(a) + mu): the best test against mu-GDP (Dong, Roth & Su 2019).

    One Gaussian mechanism with sensitivity 1 and noise sigma is (1/sigma)-GDP; T of them
    composed are (sqrt(T)/sigma)-GDP.

    >>> round(gaussian_tradeoff_tpr(0.5, mu=1.0), 4)
    0.8413
    """
    a = _check_fprs(fpr)
    mu = check_positive(mu, "mu")
    return _shape_like(stats.norm.cdf(stats.norm.ppf(a) + mu), fpr)


def _privacy_profile(event, neighbouring, discretization: float) -> tuple[PrivacyProfile, float]:
    """(profile, E): the ledger's privacy profile of ``event`` (:func:`dpcore.accounting.privacy_profile`) and its
    epsilon E at delta = 1e-12, where delta(eps) becomes negligible: the same epsilon the ledger reports."""
    if not isinstance(event, dp_accounting.DpEvent):
        raise DPTypeError(f"event must be a dp_accounting DpEvent, got {type(event).__name__}")
    discretization = check_positive(discretization, "value_discretization_interval")
    profile = privacy_profile(event, neighbouring=Neighbouring.of(neighbouring), pld_discretization=discretization)
    return profile, profile.epsilon(_TAIL_DELTA)


def pld_max_tpr_at_fpr(
    event: dp_accounting.DpEvent, fpr: ArrayLike, *, neighbouring: str = "add_remove",
    value_discretization_interval: float = 1e-3
) -> float | np.ndarray:
    """Largest TPR at FPR ``fpr`` for any membership test against the mechanism ``event`` describes.

    The minimum over eps in [-E, E] (E where delta(E) <= 1e-12) of the two privacy-profile
    lines of the module docstring, delta(eps) from the ledger's PLD of the event
    (:func:`dpcore.accounting.privacy_profile`; pessimistic discretisation, so the curve is an
    upper bound on the true one, tight to about the discretisation). A non-private event
    gives TPR = 1.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        What ran, e.g. ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(s)), T)``.
    fpr : float or array_like
    neighbouring : Neighbouring or str
        The neighbouring relation of the membership question (add/remove for DP-SGD), read as the
        ledger reads it: it changes the analysis of subsampling; randomized response is always
        analysed for one value replaced, what it is defined for.
    value_discretization_interval : float
        PLD discretisation; smaller is tighter and slower.

    References
    ----------
    Dong, Roth, Su. Gaussian differential privacy, Proposition 2.12. JRSS B 2022.
    Koskela, Jälkö, Honkela. Computing tight differential privacy guarantees using FFT. AISTATS 2020.

    Examples
    --------
    >>> event = dp_accounting.GaussianDpEvent(1.0)
    >>> round(pld_max_tpr_at_fpr(event, 0.5), 3), round(gaussian_tradeoff_tpr(0.5, mu=1.0), 3)
    (0.841, 0.841)
    """
    a = _check_fprs(fpr)
    profile, e_max = _privacy_profile(event, neighbouring, value_discretization_interval)
    if math.isinf(e_max):
        return _shape_like(np.ones_like(a), fpr)
    # beyond eps = 60 the lines only matter for FPR < e^-60; capping keeps e^eps finite and
    # can only raise the curve (fewer lines), so it stays an upper bound
    e_max = min(max(float(e_max), 1.0), _MAX_LINE_EPSILON)
    eps = np.linspace(-e_max, e_max, _N_LINES)
    deltas = profile.delta(eps)
    slope = np.exp(eps)[:, None]
    flat = a.reshape(1, -1)
    forward = slope * flat + deltas[:, None]
    backward = 1.0 - (1.0 - deltas[:, None] - flat) / slope
    tpr = np.clip(np.minimum(forward.min(axis=0), backward.min(axis=0)), flat.ravel(), 1.0)
    return _shape_like(tpr.reshape(a.shape), fpr)
