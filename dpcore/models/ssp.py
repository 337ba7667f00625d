"""Linear regression by Gaussian sufficient-statistics perturbation (SSP; AdaSSP of Wang 2018).

The least-squares solution depends on the data only through ``X^T X``, ``X^T y``
(and, with an intercept, the means of X and y). SSP releases those statistics
with Gaussian noise and solves a ridge-regularised system from the noisy copies;
everything after the release is post-processing. Against the functional
mechanism (:mod:`dpcore.models.linear`, Laplace noise, pure epsilon) it trades
a small delta for L2 instead of L1 sensitivities, which on ten features is
roughly a sqrt(d) smaller noise per statistic.
"""
from __future__ import annotations

import math
from fractions import Fraction

import dp_accounting
import numpy as np

from ..defaults import DELTA
from ..exceptions import DPValueError
from ..mechanisms import NoiseMultiplierGaussian
from ..mechanisms.base import round_up, sqrt_up
from ..mechanisms.gaussian import analytic_gaussian_sigma
from ..rng import as_generator
from ..validation import check_delta, check_epsilon, check_positive, clip_to_norm
from ._utils import box_to_unit, check_fitted_X, check_n_at_least
from .linear import _BoundedRegressor, psd_repair

__all__ = ["SSPRegressor", "ssp_sensitivities", "ssp_noise_multipliers", "SSP_SHARES"]

#: Share of the Gaussian budget (of ``mu^2`` in mu-GDP terms) per release. The two matrices carry the
#: model; the count and the sums fix the centre and the intercept, whose errors dominate at small
#: epsilon (0.1 each: R^2 -0.15 instead of -0.62 with 0.02-0.05 at eps = 0.1 on diabetes, the same
#: 0.33 at eps = 1, 20 splits). ``lambda_min`` is released only with ``adaptive=True`` (AdaSSP);
#: otherwise its share goes to the two matrices equally.
SSP_SHARES = {"n": 0.1, "sum_x": 0.1, "sum_y": 0.1, "lambda_min": 0.15, "xtx": 0.275, "xty": 0.275}


def ssp_sensitivities(n_features: int, data_norm: float) -> dict[str, float]:
    """L2 sensitivities of the released statistics under add/remove-one neighbours.

    Derivation. Features are mapped from their declared bounds into ``[-1, 1]^d`` and the
    label into ``[-1, 1]``. Adding or removing one record changes

    * the count n by 1;
    * ``sum x`` (rows in the box, L2 norm at most sqrt d) by at most ``sqrt d`` (rounded up to a double);
    * ``sum y`` by at most 1;
    * then, with the released means ``c`` and ``ybar`` public, every row is centred and
      clipped to L2 norm ``R`` (``data_norm``) and its label centred and clipped to ``[-1, 1]``:
      ``X^T X`` moves by ``x x^T``, whose Frobenius norm is ``||x||^2 <= R^2`` (the upper
      triangle that is released moves by no more); ``X^T y`` by ``|y| ||x|| <= R``; and the
      smallest eigenvalue of ``X^T X`` by at most ``R^2`` (Weyl's inequality).

    >>> ssp_sensitivities(4, 1.0)
    {'n': 1.0, 'sum_x': 2.0, 'sum_y': 1.0, 'lambda_min': 1.0, 'xtx': 1.0, 'xty': 1.0}
    """
    d = int(n_features)
    r = check_positive(data_norm, "data_norm")
    if r * r == 0.0:  # the sensitivity of X^T X underflows: the Gaussian mechanism would divide by zero
        raise DPValueError(f"data_norm={r!r} is too small: its square, the sensitivity of X^T X, is 0 in double "
                           "precision; declare a data_norm of at least 1e-150 (rows scaled to that size)")
    # R^2 rounded UP (to nearest it lay below the exact square for about half of all R: 0.7, 1.1, 1.7 ...)
    square = round_up(Fraction(r) ** 2)
    return {"n": 1.0, "sum_x": sqrt_up(d), "sum_y": 1.0, "lambda_min": square, "xtx": square, "xty": r}


def ssp_noise_multipliers(epsilon: float, delta: float, *, adaptive: bool = False) -> dict[str, float]:
    """Noise multiplier (noise std / L2 sensitivity) of each release for a total (epsilon, delta).

    A composition of Gaussian mechanisms with multipliers ``s_i`` has exactly the privacy loss of
    one Gaussian mechanism with multiplier ``(sum s_i^-2)^(-1/2)`` (mu-GDP composition; Dong, Roth
    & Su 2019). So the single multiplier ``s`` of the analytic Gaussian mechanism (Balle & Wang
    2018) for (epsilon, delta) is split as ``s_i = s / sqrt(w_i)`` with shares ``w_i`` summing to 1.

    >>> m = ssp_noise_multipliers(1.0, 1e-5)
    >>> round(sum(v ** -2 for v in m.values()) ** -0.5, 4) == round(analytic_gaussian_sigma(epsilon=1.0, delta=1e-5), 4)
    True
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    shares = dict(SSP_SHARES)
    if not adaptive:
        extra = shares.pop("lambda_min") / 2.0
        shares["xtx"] += extra
        shares["xty"] += extra
    # each s / sqrt(w_i) rounded UP (the shares' sum, the root and the product exactly), so that sum s_i^-2 is at most
    # s^-2: rounded to nearest, a multiplier lay below its exact value and the composition was a hair less private
    # than the (epsilon, delta) stated for it
    total = sum(Fraction(w) for w in shares.values())
    s = Fraction(analytic_gaussian_sigma(epsilon=eps, delta=delta))
    return {k: round_up(s * Fraction(sqrt_up(total / Fraction(w)))) for k, w in shares.items()}


class SSPRegressor(_BoundedRegressor):
    """(epsilon, delta)-DP linear regression by Gaussian sufficient-statistics perturbation.

    Fit, in the coordinates where each feature's declared bounds map to ``[-1, 1]`` and the
    label's to ``[-1, 1]`` (values outside are clipped with a warning):

    1. release ``n``, ``sum x`` and ``sum y`` with Gaussian noise; the noisy means ``c`` and
       ``ybar`` (clipped to the box) become public;
    2. centre every row at ``c`` and clip it to L2 norm ``data_norm``; centre the label at
       ``ybar`` and clip it to ``[-1, 1]``;
    3. release the upper triangle of ``X^T X`` (mirrored) and ``X^T y`` with Gaussian noise;
    4. solve ``(PSD(X^T X~) + lambda I) w = X^T y~`` and predict ``ybar + w . clip(x - c)``.

    The ridge ``lambda`` is ``2 sqrt(d) sigma_xtx``, the typical spectral norm of the d x d
    symmetric Gaussian noise matrix (std ``sigma_xtx`` per entry): public, so post-processing.
    With ``adaptive=True`` it is AdaSSP's rule (Wang 2018, Algorithm 2): the smallest eigenvalue
    of ``X^T X`` is released too (noise std ``sigma_l``), shifted down to a high-probability lower
    bound ``lmin~ = max(0, lmin + sigma_l Z - sigma_l sqrt(log(6/delta)))`` and
    ``lambda = max(0, sqrt(d log(2 d^2 / rho)) sigma_xtx - lmin~)`` with ``rho = 0.05``.

    Privacy. Every release is a Gaussian mechanism with the L2 sensitivities of
    :func:`ssp_sensitivities` (add/remove-one neighbours: the guarantee covers a record's
    presence, as DP-SGD's does). Their composition is calibrated exactly to (epsilon, delta) by
    :func:`ssp_noise_multipliers`; ``dp_event_`` is the composed dp_accounting event, whose PLD
    epsilon at delta equals ``epsilon`` up to the accountant's discretisation. Wang's paper
    splits (epsilon, delta) in three by basic composition instead; the exact composition spends
    the same budget on less noise.

    Parameters
    ----------
    epsilon : float, keyword-only
    delta : float, keyword-only
        Must be > 0 (Gaussian noise); keep it below 1/n.
    bounds_X, bounds_y : pairs or None, keyword-only
        Declared bounds: ``(lower, upper)`` (numbers, or one per feature); ``bounds_X`` also by column,
        ``{column: (low, high)}`` or ``"age=17:90, *=0:1"`` (a DataFrame's names, ``x0, x1, ...`` for an array).
        ``None`` infers them from the data (PrivacyLeakWarning).
    data_norm : float, keyword-only
        L2 bound R on a centred row in the scaled coordinates; larger rows are scaled down
        (counted in ``n_rows_clipped_``), and ``predict`` applies the same public map.
    adaptive : bool, keyword-only
        AdaSSP's data-adaptive ridge (spends a share of the budget on ``lambda_min``).
    random_state : int, Generator or None

    Attributes
    ----------
    coef_, intercept_ : in original units (for rows inside the norm bound)
    epsilon_spent_, delta_ : float; dp_event_ : dp_accounting event; neighbouring_ : "add_remove"
    noise_multipliers_, noise_stds_, sensitivities_ : dicts keyed by release
    ridge_ : the lambda used (scaled coordinates)
    n_rows_clipped_ : int
        Exact count, for the data owner only: not covered by the guarantee (strip it before publishing).
    centre_, ybar_ : the released means (scaled coordinates); statistics_ : the noisy n, X^T X, X^T y

    References
    ----------
    Wang. Revisiting differentially private linear regression: optimal and adaptive prediction
    & estimation in unbounded domain. UAI 2018 (SSP and AdaSSP).
    Foulds, Geumlek, Welling, Chaudhuri. On the theory and practice of privacy-preserving
    Bayesian data analysis. UAI 2016 (sufficient-statistics perturbation).
    Balle & Wang. Improving the Gaussian mechanism for differential privacy. ICML 2018.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 2)); y = X @ [0.5, -0.3] + 0.05 * rng.normal(size=5000)
    >>> m = SSPRegressor(epsilon=1.0, delta=1e-5, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0)
    >>> m.fit(X, y).score(X, y) > 0.9
    True
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = DELTA, bounds_X=None, bounds_y=None,
                 data_norm: float = 1.0, adaptive: bool = False, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.data_norm = data_norm
        self.adaptive = adaptive
        self.random_state = random_state

    def fit(self, X, y) -> "SSPRegressor":
        eps = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, allow_zero=False,
                            zero_hint="SSP's noise is Gaussian, which needs delta > 0 (1e-5 is usual); the functional "
                                      "mechanism (Laplace noise) works at delta = 0")
        r = check_positive(self.data_norm, "data_norm")
        if not isinstance(self.adaptive, (bool, np.bool_)):
            raise DPValueError(f"adaptive must be True or False, got {self.adaptive!r}")
        adaptive = bool(self.adaptive)
        rng = as_generator(self.random_state, name="random_state")
        Xu, yu = self._prepare(X, y)
        n, d = Xu.shape
        check_n_at_least(n, 2, "SSPRegressor.fit")
        check_delta(delta, n=n)  # warns when delta > 1/n
        mult = ssp_noise_multipliers(eps, delta, adaptive=adaptive)
        sens = ssp_sensitivities(d, r)
        gauss = {k: NoiseMultiplierGaussian(noise_multiplier=mult[k], sensitivity=sens[k]) for k in mult}
        std = {k: g.sigma for k, g in gauss.items()}

        # 1. count and sums -> public centre
        n_noisy = max(1.0, gauss["n"].randomise(float(n), rng=rng))
        centre = np.clip(gauss["sum_x"].randomise(Xu.sum(0), rng=rng) / n_noisy, -1.0, 1.0)
        ybar = float(np.clip(gauss["sum_y"].randomise(float(yu.sum()), rng=rng) / n_noisy, -1.0, 1.0))
        # 2. centre and clip with public quantities
        Xc, self.n_rows_clipped_ = clip_to_norm(Xu - centre, r, name="data_norm", return_count=True)
        yc = np.clip(yu - ybar, -1.0, 1.0)
        # 3. the statistics
        xtx, xty = Xc.T @ Xc, Xc.T @ yc
        upper = np.triu_indices(d)  # the upper triangle is released, the lower one mirrors it
        xtx_noisy = np.zeros((d, d))
        xtx_noisy[upper] = gauss["xtx"].randomise(xtx[upper], rng=rng)
        xtx_noisy = xtx_noisy + np.triu(xtx_noisy, 1).T
        xty_noisy = gauss["xty"].randomise(xty, rng=rng)
        if adaptive:
            lmin = float(np.linalg.eigvalsh(xtx)[0])
            s_l = std["lambda_min"]
            lmin_noisy = max(0.0, gauss["lambda_min"].randomise(lmin, rng=rng) - s_l * math.sqrt(math.log(6.0 / delta)))
            ridge = max(0.0, math.sqrt(d * math.log(2.0 * d * d / 0.05)) * std["xtx"] - lmin_noisy)
        else:
            ridge = 2.0 * math.sqrt(d) * std["xtx"]
        # 4. solve (post-processing)
        # the floor keeps the system solvable; it must use the noisy count (the true n is private here)
        ridge = max(ridge, 1e-9 * n_noisy)
        A = psd_repair(xtx_noisy) + ridge * np.eye(d)
        w = np.linalg.solve(A, xty_noisy)

        self.centre_, self.ybar_, self.w_unit_, self.ridge_ = centre, ybar, w, float(ridge)
        self.statistics_ = {"n": n_noisy, "xtx": xtx_noisy, "xty": xty_noisy}  # the noisy releases (public)
        lo, hi = self.bounds_X_
        ylo, yhi = self.bounds_y_
        yhalf, ymid = 0.5 * (yhi - ylo), 0.5 * (yhi + ylo)
        # y = ymid + yhalf (ybar + w . (x_u - c)) with x_u = (2 x - (hi + lo)) / (hi - lo)
        self.coef_ = yhalf * w * 2.0 / (hi - lo)
        self.intercept_ = float(ymid + yhalf * (ybar - w @ centre - np.sum(w * (hi + lo) / (hi - lo))))
        self.noise_multipliers_, self.noise_stds_, self.sensitivities_ = mult, std, sens
        self.epsilon_spent_, self.delta_ = eps, delta
        self.neighbouring_ = "add_remove"
        self.dp_event_ = dp_accounting.ComposedDpEvent([g.dp_event for g in gauss.values()])
        return self

    def predict(self, X) -> np.ndarray:
        """Predictions in y's units, clipped to the declared label bounds (post-processing)."""
        X = check_fitted_X(self, X, "w_unit_")
        lo, hi = self.bounds_X_
        Xc = clip_to_norm(box_to_unit(np.clip(X, lo, hi), lo, hi) - self.centre_, float(self.data_norm))
        ylo, yhi = self.bounds_y_
        pred = 0.5 * (yhi + ylo) + 0.5 * (yhi - ylo) * (self.ybar_ + Xc @ self.w_unit_)
        return np.clip(pred, ylo, yhi)
