"""Differentially private empirical risk minimisation (Chaudhuri, Monteleoni & Sarwate 2011).

L2-regularised logistic regression and Huber-loss SVM, trained by output
perturbation (Algorithm 1) or objective perturbation (Algorithm 2), optionally
on random Fourier features (Algorithm 3), with private selection of the
regularisation constant (Algorithm 4, :func:`private_tune_regularization`).

The objective is ``J(f) = (1/n) sum_i l(y_i f.x_i) + (Lambda/2) ||f||^2`` with
labels in {-1, +1} and ``||x_i|| <= 1``; rows are first divided by the declared
``data_norm`` (and clipped to it); with ``fit_intercept`` they are multiplied by
``sqrt(1 - a^2)`` and a constant column ``a`` (``intercept_scale``) is appended, so
every row the algorithm sees has norm at most 1 as the theorems require.

The theorems are about the exact minimiser of each objective; a solver returns a point near it. A private fit runs
the solver until the gradient norm is at most :data:`SOLVER_GRADIENT_BOUND`, which puts its point within a known
distance of the minimiser, and its release covers that distance (Iyengar et al. 2019, approximate minima
perturbation): output perturbation adds it to the sensitivity, objective perturbation spends
:data:`SOLVER_EPSILON_SHARE` of its epsilon on an output noise of that size.

References: Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk minimization. JMLR 2011.
Iyengar, Near, Song, Thakkar, Thakurta, Wang. Towards practical differentially private convex optimization.
IEEE S&P 2019.
"""
from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize
from scipy.sparse.linalg import LinearOperator, cg
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.metaestimators import available_if

from ..accounting.events import EpsilonDeltaDpEvent, _log1p_up
from ..exceptions import DPValueError, PrivacyLeakWarning, user_stacklevel
from ..mechanisms import Exponential, L2LaplaceVector
from ..mechanisms.base import round_down, round_up
from ..rng import as_generator, child_seed
from ..runtime.workload import NUMPY_THROUGHPUT, Work, check_work
from ..types import AnyCallable, ArrayLike, RngLike
from ..validation import check_array, check_epsilon, check_int, check_positive
from ._utils import check_fitted_X, clip_rows_l2, plain, validate_X, validate_X_y

__all__ = [
    "PrivateERMClassifier",
    "OutputPerturbationClassifier",
    "ObjectivePerturbationClassifier",
    "ERMClassifier",
    "RandomFourierFeatures",
    "objective_perturbation_params",
    "output_perturbation_beta",
    "loss_curvature",
    "canonical_model",
    "canonical_kernel",
    "private_tune_regularization",
]

_MODELS = ("logreg", "svm")
_KERNELS = ("none", "rff")
#: other accepted spellings (the names the papers and the command-line help use)
MODEL_ALIASES = {"logistic": "logreg", "huber-svm": "svm"}
KERNEL_ALIASES = {"linear": "none", "rbf": "rff"}
#: Lambda = AUTO_LAMBDA[perturbation] * sqrt(d) / (n * eps_model) when regularization="auto": the noise
#: vector's component along a row (norm ~ d / (n Lambda eps), seen through sqrt(d) directions) stays a fixed
#: share of the margin. C chosen on validation rows of all seven classification datasets
#: (bench/erm_regularization.py), never test rows.
AUTO_LAMBDA = {"objective": 3.0, "output": 10.0}
#: Lambda of the non-private model when regularization="auto" (no noise to regularise against, no epsilon to scale
#: by). Chosen on validation quarters of the training rows of the seven classification datasets (3 splits each):
#: mean validation accuracy 0.938 at 1e-5 against 0.910 at the former 1e-3, which underfit MNIST 5k (0.852 vs
#: 0.904) and Adult (0.818 vs 0.845) and so understated what privacy costs; no dataset lost more than 0.02
#: (``python bench/erm_regularization.py --nonprivate`` prints the table).
NONPRIVATE_AUTO_LAMBDA = 1e-5


def auto_regularization(perturbation: str, *, n: int, d: int, epsilon: float) -> float:
    """DP-ERM's default Lambda: ``C sqrt(d) / (n epsilon)`` for one binary model.

    Both perturbations add a noise vector whose norm grows like ``d / (n Lambda epsilon)`` (output
    perturbation: the minimiser's L2 sensitivity 2 / (n Lambda), Chaudhuri et al. 2011, Corollary 8;
    objective perturbation: the linear term b / n, their Algorithm 2), and a row of norm <= 1 sees about
    ``1 / sqrt(d)`` of it. Holding that share of the margin fixed gives Lambda proportional to
    ``sqrt(d) / (n epsilon)``. The constants (3 objective, 10 output) were chosen on validation quarters of the
    training rows of iris, wine, breast cancer, digits, MNIST 5k, Adult and faces at epsilon 0.5-5 (mean
    validation accuracy 0.573 and 0.524 against 0.583 and 0.539 for the best Lambda of each cell picked with
    hindsight, and 0.554 and 0.510 for the former 0.03 / epsilon and 0.2 / epsilon, which made Adult predict
    one class); ``bench/erm_regularization.py`` reruns it.

    >>> round(auto_regularization("objective", n=16966, d=105, epsilon=1.0), 5)
    0.00181
    """
    c = AUTO_LAMBDA.get(perturbation, AUTO_LAMBDA["objective"])
    return c * math.sqrt(d) / (max(int(n), 1) * epsilon)


#: default value a of the constant (intercept) feature; the other features get norm sqrt(1 - a^2)
DEFAULT_INTERCEPT_SCALE = 0.3


# --------------------------------------------------------------------------- losses


def _logistic(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """l(z) = log(1 + e^-z) and l'(z); |l'| <= 1, l'' <= 1/4."""
    val = np.logaddexp(0.0, -z)
    grad = -0.5 * (1.0 - np.tanh(0.5 * z))  # = -1 / (1 + e^z), stable
    return val, grad


def _huber(z: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Chaudhuri et al.'s Huber hinge (eq. 7): |l'| <= 1, l'' <= 1/(2h)."""
    # (1 + h - z)^2 / (4h) written as t^2 with t = (1 + h - z) / (2 sqrt h): no overflow for huge h
    # sqrt h in the width of z: the certified gradient norm evaluates this in the widest float, its rounding bound
    # assuming every step rounds at that width
    root = np.sqrt(np.asarray(h, dtype=np.result_type(z, float)))
    t = (1.0 + h - z) / (2.0 * root)
    val = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1.0 - z, t * t))
    grad = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, -1.0, -t / root))
    return val, grad


def _choice(value, name: str, valid: tuple[str, ...], aliases: dict[str, str]) -> str:
    """Return the canonical spelling of ``value`` (one of ``valid`` or an alias of one)."""
    if isinstance(value, str):
        value_ = aliases.get(value, value)
        if value_ in valid:
            return value_
    names = " or ".join(repr(v) for v in valid)
    alias_text = ", ".join(f"{a!r} for {c!r}" for a, c in aliases.items())
    raise DPValueError(f"{name} must be {names} (also accepted: {alias_text}), got {value!r}")


def canonical_model(model) -> str:
    """``"logreg"`` or ``"svm"``; ``"logistic"`` and ``"huber-svm"`` are accepted as aliases.

    >>> canonical_model("huber-svm")
    'svm'
    """
    return _choice(model, "model", _MODELS, MODEL_ALIASES)


def canonical_kernel(kernel) -> str:
    """``"none"`` or ``"rff"``; ``"linear"`` and ``"rbf"`` are accepted as aliases.

    >>> canonical_kernel("rbf")
    'rff'
    """
    return _choice(kernel, "kernel", _KERNELS, KERNEL_ALIASES)


def loss_curvature(model: str, huber_h: float = 0.5) -> float:
    """The constant c bounding |l''|: 1/4 for logistic loss, 1/(2h) for the Huber SVM loss.

    >>> loss_curvature("logreg"), loss_curvature("svm", 0.5)
    (0.25, 1.0)
    """
    if canonical_model(model) == "logreg":
        return 0.25
    return 1.0 / (2.0 * check_positive(huber_h, "huber_h"))


#: The gradient norm gamma a private fit's minimiser must reach before it is released (Iyengar et al. 2019,
#: "Towards practical differentially private convex optimization", Algorithm 1). The objective is mu-strongly convex
#: (mu = Lambda + Delta), so a point whose gradient norm is at most gamma lies within gamma / mu of the exact
#: minimiser, the point Chaudhuri et al. (2011)'s theorems are about; the release covers that distance (see
#: :data:`SOLVER_EPSILON_SHARE`). The norm is certified (:func:`_certified_gradient_norm`): computed in the widest
#: float the platform has, plus a bound on that computation's rounding error.
SOLVER_GRADIENT_BOUND = 1e-9
#: The share of an objective-perturbation model's epsilon spent on the output noise that covers the solver's distance
#: to the exact minimiser (Iyengar et al. 2019 spend 1 %, their ``eps_out_frac``); the rest is Algorithm 2's.
SOLVER_EPSILON_SHARE = 0.01


def _objective(X: np.ndarray, y: np.ndarray, *, model: str, huber_h: float, reg: float, lin: np.ndarray):
    """``(fun, hessp)`` of ``J(f) = (1/n) sum l(y_i f.x_i) + (reg/2)||f||^2 + lin.f``: ``fun(f)`` is the value and
    the gradient, ``hessp(f, v)`` the Hessian's product with ``v`` (labels are +-1, so ``y_i^2 = 1``)."""
    n = X.shape[0]

    def fun(f):
        z = y * (X @ f)
        v, g = _logistic(z) if model == "logreg" else _huber(z, huber_h)
        return v.mean() + 0.5 * reg * f @ f + lin @ f, X.T @ (g * y) / n + reg * f + lin

    def hessp(f, v):
        z = y * (X @ f)
        if model == "logreg":
            curvature = 0.25 * (1.0 - np.tanh(0.5 * z) ** 2)  # l''(z) = sigma(z) sigma(-z)
        else:  # the Huber hinge's quadratic piece, 1 - h <= z <= 1 + h
            curvature = np.where(np.abs(1.0 - z) <= huber_h, 1.0 / (2.0 * huber_h), 0.0)
        return X.T @ (curvature * (X @ v)) / n + reg * v

    return fun, hessp


def _certified_gradient_norm(X: np.ndarray, y: np.ndarray, f: np.ndarray, *, model: str, huber_h: float,
                              reg: float, lin: np.ndarray, dtype=np.longdouble) -> float:
    """An upper bound on the norm of the exact gradient of ``J(f) = (1/n) sum l(y_i f.x_i) + (reg/2)||f||^2 + lin.f``
    at ``f``: the norm computed in ``dtype`` (``np.longdouble``: a 64-bit mantissa on x86, double elsewhere), plus a
    worst-case bound on that computation's rounding error (Higham 2002, Chapter 3: a sum of k products errs by at
    most gamma_k = k u / (1 - k u) of the sum of their magnitudes, u the unit roundoff, in any order of summation).

    With ``||x_i|| <= 1``, ``|l'| <= 1`` and ``|l''| <= c``: each ``z_i = x_i.f`` errs by at most ``gamma_d ||f||``,
    so each ``l'(z_i)`` by ``c gamma_d ||f||`` (plus a few u for its own evaluation); each coordinate of the data
    term then errs by ``gamma_(n+8) + c gamma_d ||f||``, and adding ``reg f_j + lin_j`` by ``3 u`` of their sizes.
    """
    L = dtype  # the widest float by default; double (BLAS-fast) where its bound is enough (:func:`_solve`)
    n, d = X.shape
    XL, fL, yL = X.astype(L), f.astype(L), y.astype(L)
    z = yL * (XL @ fL)
    lp = (_logistic(z) if model == "logreg" else _huber(z, huber_h))[1]  # l'(z), in the width of z
    c = loss_curvature(model, huber_h)
    g = XL.T @ (lp * yL) / n + L(reg) * fL + lin.astype(L)
    computed = float(np.sqrt(np.sum(g * g)))
    u = float(np.finfo(L).eps) / 2

    def gamma(k: int) -> float:
        return k * u / (1 - k * u)

    f_inf, f_two, lin_inf = float(np.max(np.abs(f), initial=0.0)), float(np.linalg.norm(f)), float(
        np.max(np.abs(lin), initial=0.0))
    per_coordinate = gamma(n + 8) * (1 + reg * f_inf + lin_inf) + c * gamma(d) * f_two
    rounding = math.sqrt(d) * per_coordinate * (1 + gamma(d + 2)) + computed * gamma(d + 2)
    return (computed + rounding) * (1 + 4 * np.finfo(float).eps)  # and the conversion to double, rounded up


def _strong_convexity(lam: float, extra: float) -> float:
    """Lambda + Delta, the regularisation the solver uses, rounded UP: Algorithm 2's Delta is the least it may add
    (rounded to nearest, Lambda + Delta lay a hair below the exact sum about half the time). The solver's point is
    within gamma / (this double) of the exact minimiser of the objective it solves."""
    return round_up(Fraction(lam) + Fraction(extra)) if extra else lam


def _solve(X: np.ndarray, y: np.ndarray, *, model: str, huber_h: float, lam: float,
           b: np.ndarray | None = None, extra: float = 0.0,
           gradient_bound: float | None = None) -> tuple[np.ndarray, float]:
    """argmin_f (1/n) sum l(y_i f.x_i) + (lam/2)||f||^2 + (1/n) b.f + (extra/2)||f||^2 (strictly convex), and the
    norm of the objective's gradient there (certified, :func:`_certified_gradient_norm`, when a bound is asked).

    ``gradient_bound``: the norm the gradient must reach (a private fit's, :data:`SOLVER_GRADIENT_BOUND`). L-BFGS
    stops where the objective's values no longer resolve its decrease (gradient norms of 1e-10 to 2e-8 on the
    registry sets); Newton steps then take the gradient below the bound, each accepted only where it lowers the
    gradient's norm. Where they cannot, nothing is released: :class:`DPValueError` says so.
    """
    n, d = X.shape
    reg = _strong_convexity(lam, extra)
    lin = np.zeros(d) if b is None else b / n
    fun, hessp = _objective(X, y, model=model, huber_h=huber_h, reg=reg, lin=lin)
    res = minimize(fun, np.zeros(d), jac=True, method="L-BFGS-B",
                   options={"maxiter": 2000, "gtol": 1e-10, "ftol": 0.0})
    f = res.x
    if gradient_bound is None:
        return f, float(np.linalg.norm(fun(f)[1]))

    def certified(point):
        # in double first (a BLAS product); the widest float only where double's own rounding bound is too wide
        # (1.8 s instead of 0.1 s on Adult's rows with 2,000 random features)
        quick = _certified_gradient_norm(X, y, point, model=model, huber_h=huber_h, reg=reg, lin=lin,
                                         dtype=np.float64)
        if quick <= gradient_bound or np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps:
            return quick
        return min(quick, _certified_gradient_norm(X, y, point, model=model, huber_h=huber_h, reg=reg, lin=lin))

    def plain(point):
        return float(np.linalg.norm(fun(point)[1]))

    # Newton's steps are judged by the double-precision norm; the certified one only once that norm is within the bound
    norm = plain(f)
    for _ in range(30):
        if norm <= gradient_bound and (sure := certified(f)) <= gradient_bound:
            return f, sure
        g = fun(f)[1]
        H = LinearOperator((d, d), matvec=lambda v, f=f: hessp(f, v), dtype=float)
        # an inexact Newton step is enough (the step is kept only where it lowers the gradient), and 200 products
        # at most keep the polish within a few L-BFGS runs of work, however many features
        step, _ = cg(H, -g, rtol=1e-8, maxiter=min(10 * d, 200))
        for _ in range(40):  # halve the Newton step until the gradient's norm goes down
            trial = f + step
            trial_norm = plain(trial)
            if trial_norm < norm:
                f, norm = trial, trial_norm
                break
            step = step / 2.0
        else:
            break
    norm = certified(f)
    if norm <= gradient_bound:
        return f, norm
    head = (f"the solver stopped at a gradient norm of {norm:.3g}, above the {gradient_bound:.3g} a private model "
            "needs before it is released (its guarantee is for the objective's minimiser, which a larger gradient "
            "leaves too far away); nothing was released. ")
    noise_term = float(np.max(np.abs(lin), initial=0.0))  # the noise's term (b / n): no data in it
    if noise_term > 1e3:  # at a tiny epsilon the noise term is huge, and so are the terms that cancel it at the
        # minimiser: double precision cannot resolve their sum to the bound (epsilon 1e-8 on iris, 1e-7 on digits)
        raise DPValueError(head + f"At this epsilon the objective's noise term is about {noise_term:.1g}, too "
                                  "large for double precision to bring its gradient that close to zero: use a larger "
                                  "epsilon")
    raise DPValueError(head + "Raise the regularization (a better-conditioned objective) or use fewer features "
                              "(n_components)")


def _spawn(rng: np.random.Generator) -> np.random.Generator:
    """An independent generator from ``rng``'s seed sequence, leaving ``rng``'s own draws as they were (a generator
    built without a seed sequence gives one of its draws as the seed instead)."""
    try:
        return rng.spawn(1)[0]
    except TypeError:
        return np.random.default_rng(child_seed(rng))


def erm_work(n: int, n_features: int, n_components: int | None, n_models: int) -> Work:
    """The work of fitting ``n_models`` one-vs-rest models on ``n`` rows, before the features exist.

    The feature matrix (random Fourier features when ``n_components`` is given) and its products hold
    about three ``n x D`` arrays, and the random features' projection a ``n_features x D`` one (on 100 rows of
    3,000 columns, 100,000 components drew 2.4 GB of it); computing the features takes ``n x n_features x D``
    multiply-adds, and L-BFGS a few hundred passes over them per model.
    """
    D = (check_int(n_components, "n_components", minimum=1) if n_components is not None else int(n_features)) + 1
    memory = 3 * 8.0 * n * D
    operations = 300 * 4.0 * n * D * n_models
    if n_components is not None:
        memory += 8.0 * int(n_features) * D  # the projection's weights (and the n x D product below)
        operations += 2.0 * n * int(n_features) * D
    drivers = {"memory_bytes": ("n_components", n_components), "seconds": ("n_components", n_components)} \
        if n_components is not None else {}
    return Work(memory_bytes=memory, operations=operations, throughput=NUMPY_THROUGHPUT, drivers=drivers,
                resize=lambda _name, v: erm_work(n, n_features, int(v), n_models))


# --------------------------------------------------------------------------- privacy parameters


def output_perturbation_beta(*, n: int, regularization: float, epsilon: float) -> float:
    """beta = n Lambda epsilon / 2 of Algorithm 1: the noise density is proportional to exp(-beta ||b||).

    The L2 sensitivity of argmin J is 2 / (n Lambda) (Corollary 8), so ``||b||``
    is Gamma(d, 1/beta) and its mean is ``2 d / (n Lambda epsilon)``.

    >>> output_perturbation_beta(n=100, regularization=0.1, epsilon=2.0)
    10.0
    """
    return n * regularization * epsilon / 2.0


def objective_perturbation_params(*, n: int, regularization: float, epsilon: float, c: float) -> tuple[float, float]:
    """``(eps', Delta)`` of Algorithm 2.

    ``eps' = eps - ln(1 + 2c/(n Lambda) + c^2/(n^2 Lambda^2))``. If ``eps' > 0``
    then ``Delta = 0``; otherwise ``Delta = c / (n (e^(eps/4) - 1)) - Lambda`` and
    ``eps' = eps / 2``. The noise density is proportional to ``exp(-(eps'/2)||b||)``.

    >>> objective_perturbation_params(n=1000, regularization=0.01, epsilon=1.0, c=0.25)[1]
    0.0
    >>> eps_p, delta = objective_perturbation_params(n=10, regularization=0.001, epsilon=0.1, c=0.25)
    >>> eps_p, round(delta, 4)
    (0.05, 0.9866)
    """
    # Rounded toward privacy: eps' down and Delta up. ln(1 + 2x + x^2) = 2 ln(1 + x), taken from the exact rational x
    # and rounded up; computed as it stood, eps' came out above the exact value for about one fit in nine, by up to
    # 9e-11 relative (1 + 2x rounds away most of a tiny x), so the noise was a hair too small for the epsilon stated.
    x = Fraction(c) / (int(n) * Fraction(regularization))
    eps_p = round_down(Fraction(epsilon) - 2 * Fraction(_log1p_up(x)))
    if eps_p > 0:
        return eps_p, 0.0
    # e^(eps/4) - 1 is rounded by expm1 to within a unit in the last place: taken two units low, Delta is never below
    # the exact one
    low = math.expm1(epsilon / 4.0) * (1.0 - 2.0**-50)
    extra = Fraction(c) / (int(n) * Fraction(low)) - Fraction(regularization)
    return round_down(Fraction(epsilon) / 2), round_up(extra)


# --------------------------------------------------------------------------- random Fourier features


class RandomFourierFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """v(x) = sqrt(2/D) [cos(w_j.x + u_j)]_j / sqrt(2), w_j ~ N(0, 2 gamma I), u_j ~ U[0, 2 pi].

    Approximates the RBF kernel ``exp(-gamma ||x - y||^2)`` up to the factor 1/2
    that makes ``||v(x)|| <= 1`` for every x (Rahimi & Recht 2007; Chaudhuri et al.
    2011, Algorithm 3). ``fit`` reads only the number of columns of ``X``: the draws
    depend on the seed, never on the data (no privacy is spent), and are part of the
    released model.

    Parameters
    ----------
    n_components : int
        Number D of random features.
    gamma : float
        Width of the RBF kernel.
    random_state : int, Generator or None

    Attributes
    ----------
    random_weights_ : ndarray (n_features_in_, n_components), the w_j
    random_offset_ : ndarray (n_components,), the u_j

    References
    ----------
    Rahimi, Recht. Random features for large-scale kernel machines. NeurIPS 2007.
    Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk minimization. JMLR 2011.

    Examples
    --------
    >>> V = RandomFourierFeatures(n_components=50, random_state=0).fit_transform(np.ones((4, 3)))
    >>> V.shape, bool(np.linalg.norm(V, axis=1).max() <= 1.0)
    ((4, 50), True)
    """

    def __init__(self, n_components: int = 200, *, gamma: float = 1.0, random_state=None):
        self.n_components = n_components
        self.gamma = gamma
        self.random_state = random_state

    def fit(self, X, y=None) -> "RandomFourierFeatures":
        n_components = check_int(self.n_components, "n_components", minimum=1)
        gamma = check_positive(self.gamma, "gamma")
        X = validate_X(self, X, reset=True)
        rng = as_generator(self.random_state, name="random_state")
        self.random_weights_ = rng.normal(0.0, math.sqrt(2.0 * gamma), size=(X.shape[1], n_components))
        self.random_offset_ = rng.uniform(0.0, 2.0 * math.pi, size=n_components)
        self._n_features_out = n_components
        return self

    def transform(self, X) -> np.ndarray:
        X = check_fitted_X(self, X, "random_weights_")
        return np.cos(X @ self.random_weights_ + self.random_offset_) / math.sqrt(self._n_features_out)


# --------------------------------------------------------------------------- estimators


class PrivateERMClassifier(ClassifierMixin, BaseEstimator):
    """DP-ERM classifier: logistic regression or Huber SVM by output or objective perturbation.

    Parameters
    ----------
    epsilon : float, keyword-only
        Total budget. With k > 2 classes one-vs-rest trains k binary models on the
        same rows, each with ``epsilon / k``.
    regularization : float or "auto", keyword-only
        Lambda in ``J(f) = (1/n) sum l + (Lambda/2)||f||^2``. ``"auto"``:
        :func:`auto_regularization`, ``Lambda = C sqrt(d) / (n eps_model)`` (``eps_model`` = the
        budget of each binary model, d the features with the intercept's), C = 3 for objective and
        10 for output perturbation, chosen on validation rows of every classification dataset of
        the registry (not private: use :func:`private_tune_regularization` for a private choice).
        The non-private :class:`ERMClassifier` uses 0.001 for ``"auto"``.
    perturbation : {"objective", "output"}, keyword-only
    model : {"logreg", "svm"}, keyword-only
        Also accepted: ``"logistic"`` for ``"logreg"``, ``"huber-svm"`` for ``"svm"``.
    huber_h : float > 0, keyword-only
        Width h of the Huber SVM loss (c = 1/(2h)).
    data_norm : float or None, keyword-only
        Declared bound on the L2 norm of a row; larger rows are scaled down to it
        (with a warning). ``None`` infers it from the data (PrivacyLeakWarning).
    fit_intercept : bool, keyword-only
        Append a constant feature of value ``intercept_scale`` (the other features are
        multiplied by ``sqrt(1 - intercept_scale^2)`` to keep the norm <= 1).
    intercept_scale : float in (0, 1), keyword-only
        Value a of the constant feature. The noise vector is isotropic, so a smaller a
        leaves more of the unit norm to the informative features; a = 1/sqrt 2 is an even
        split. Default 0.3, chosen on validation splits of breast-cancer training rows
        (grid {0.15, 0.3, 0.71}; 0.15 and 0.3 tied, 0.71 about 2 points worse).
    kernel : {"none", "rff"}, keyword-only
        Also accepted: ``"linear"`` for ``"none"``, ``"rbf"`` for ``"rff"``.
        ``"rff"``: Algorithm 3 with ``n_components`` random Fourier features of an
        RBF kernel of width ``gamma``.
    n_components : int, gamma : float, keyword-only
        Number D of random features and RBF width. The noise vector lives in R^(D+1), so
        at small n a small D wins: defaults D = 25, gamma = 0.5 were picked on wine splits
        (grid D in {25, 50, 200}, gamma in {0.5, 2}; breast cancer agreed).
    classes : array-like or None, keyword-only
        The labels the model tells apart, declared (public): with k > 2 of them one-vs-rest trains k models at
        ``epsilon / k`` each, with 2 one binary model. ``None`` reads them from ``y``, as scikit-learn does; for a
        private fit that is a function of the private labels the epsilon does not cover (replacing the only row of
        a class changes how many models are released and the budget each gets), so it warns
        (PrivacyLeakWarning). Labels of ``y`` outside the declared classes are refused.
    random_state : int, Generator or None

    Attributes
    ----------
    coef_ : ndarray (n_models, n_features_used), intercept_ : ndarray (n_models,)
    classes_ : ndarray
        ``classes`` when declared, else the distinct labels of ``y``.
    epsilon_spent_ : float
    dp_event_ : EpsilonDeltaDpEvent or None
        ``EpsilonDeltaDpEvent(epsilon_spent_, 0)``: pure epsilon-DP by Theorems 6 and 9 (no dp_accounting noise
        event models this noise), so a ledger composes it (basic composition); None for the non-private fit
        (``epsilon=inf``).
    neighbouring_ : "replace_one" or None
        What the guarantee protects, one record replaced, as in the paper: ``PrivacyLedger.spend(clf)`` checks it
        against the ledger's relation (a ledger under add/remove refuses it).
    noise_norms_ : ndarray, the norm of each drawn noise vector b
        For the data owner only, not covered by epsilon: beside the released weights it is a statistic of the rows
        (output perturbation: the distance from the release to the exact minimiser; objective perturbation: ``||b||``,
        which the released minimiser and the rows determine through its first-order condition).
    solver_gradient_norms_ : ndarray
        A certified bound on the objective's gradient norm at each model's solver point, at most
        :data:`SOLVER_GRADIENT_BOUND` for a private fit (its release covers the distance to the exact minimiser
        that this leaves, Iyengar et al. 2019); NaN for the non-private fit. Computed from the rows at the point
        before its output noise: for the data owner, not covered by epsilon.
    epsilon_prime_, extra_regularization_ : float (objective perturbation only)

    References
    ----------
    Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk
    minimization. JMLR 12:1069-1109, 2011.
    Rahimi, Recht. Random features for large-scale kernel machines. NeurIPS 2007.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2)); y = (X[:, 0] > 0).astype(int)
    >>> clf = PrivateERMClassifier(epsilon=5.0, data_norm=4.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.8
    True
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        regularization: float | str = "auto",
        perturbation: str = "objective",
        model: str = "logreg",
        huber_h: float = 0.5,
        data_norm: float | None = None,
        fit_intercept: bool = True,
        intercept_scale: float = DEFAULT_INTERCEPT_SCALE,
        kernel: str = "none",
        n_components: int = 25,
        gamma: float = 0.5,
        classes=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.regularization = regularization
        self.perturbation = perturbation
        self.model = model
        self.huber_h = huber_h
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.intercept_scale = intercept_scale
        self.kernel = kernel
        self.n_components = n_components
        self.gamma = gamma
        self.classes = classes
        self.random_state = random_state

    # ----- shared pieces
    _private = True

    def _check_common(self) -> None:
        """Validate the parameters; set ``model_`` and ``kernel_`` (the canonical spellings)."""
        self.model_ = canonical_model(self.model)
        self.kernel_ = canonical_kernel(self.kernel)
        if self._private and self.perturbation not in ("objective", "output"):
            raise DPValueError(f"perturbation must be 'objective' or 'output', got {self.perturbation!r}")
        if isinstance(self.regularization, str):
            if self.regularization != "auto":
                raise DPValueError(f"regularization must be a number > 0 or 'auto', got {self.regularization!r}")
        else:
            check_positive(self.regularization, "regularization")
        check_positive(self.huber_h, "huber_h")  # h = 0 would divide by zero in the Huber loss
        if self.data_norm is not None:
            check_positive(self.data_norm, "data_norm")
        if self.kernel_ == "rff":
            check_int(self.n_components, "n_components", minimum=1)
            check_positive(self.gamma, "gamma")
        a = self.intercept_scale
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not 0.0 < float(a) < 1.0:
            raise DPValueError(f"intercept_scale must be a number strictly between 0 and 1, got {a!r}")

    def _features(self, X: np.ndarray, *, fitting: bool) -> np.ndarray:
        """Rows of norm <= 1: scale by data_norm (clip), optional RFF, optional intercept column."""
        Z, n_over = clip_rows_l2(X, self.data_norm_, name="X", warn=fitting)
        Z = Z / self.data_norm_
        if fitting:
            self.n_rows_clipped_ = n_over
        if self.rff_ is not None:
            Z = self.rff_.transform(Z)
        if self.fit_intercept:
            a = float(self.intercept_scale)
            Z = np.hstack([Z * math.sqrt(1.0 - a * a), np.full((Z.shape[0], 1), a)])
        return Z

    def fit(self, X, y) -> "PrivateERMClassifier":
        self._check_common()
        X, y = validate_X_y(self, X, y, classifier=True)
        classes = self._classes(y)
        rng = as_generator(self.random_state, name="random_state")
        eps = check_epsilon(self.epsilon) if self._private else math.inf
        if self.data_norm is None:
            warnings.warn(
                "data_norm (the largest L2 norm of a row) was not declared, so it was read from the private rows: "
                "this leaks privacy beyond the stated epsilon. Declare data_norm= from what the features can hold: "
                "rows a BoundedScaler maps onto its default range (-1, 1) have norm at most "
                f"sqrt({X.shape[1]}) = {math.sqrt(X.shape[1]):.3g}",
                PrivacyLeakWarning, stacklevel=user_stacklevel())
            self.data_norm_ = float(max(np.linalg.norm(X, axis=1).max(), 1e-12))
        else:
            self.data_norm_ = check_positive(self.data_norm, "data_norm")
        check_work(erm_work(X.shape[0], X.shape[1], self.n_components if self.kernel_ == "rff" else None,
                            1 if classes.size == 2 else classes.size))
        self.rff_ = None
        if self.kernel_ == "rff":  # data-independent draws: fit reads only the width of X
            self.rff_ = RandomFourierFeatures(n_components=self.n_components, gamma=self.gamma,
                                              random_state=child_seed(rng)).fit(X)
        Z = self._features(X, fitting=True)
        self.classes_ = classes
        n_models = 1 if classes.size == 2 else classes.size
        # each model's share rounded down, so that the n_models shares spend no more than eps together (to nearest,
        # three shares of 1.0 summed a unit in the last place above it)
        eps_each = round_down(Fraction(eps) / n_models) if math.isfinite(eps) else eps
        # the noise covering the solver's distance to each minimiser draws from a stream of its own, spawned without
        # drawing from ``rng``: Algorithm 2's noise vectors are the ones the same seed drew before it was added
        out_rng = _spawn(rng)
        coefs, norms, eps_primes, extras, grad_norms = [], [], [], [], []
        for m in range(n_models):
            pos = classes[1] if n_models == 1 else classes[m]
            ys = np.where(y == pos, 1.0, -1.0)
            f, info = self._fit_binary(Z, ys, eps_each, rng, out_rng)
            coefs.append(f)
            norms.append(info.get("noise_norm", 0.0))
            eps_primes.append(info.get("epsilon_prime", math.nan))
            extras.append(info.get("extra", 0.0))
            grad_norms.append(info.get("gradient_norm", math.nan))
        W = np.array(coefs)
        if self.fit_intercept:
            a = float(self.intercept_scale)
            self.coef_, self.intercept_ = W[:, :-1] * math.sqrt(1.0 - a * a), W[:, -1] * a
        else:
            self.coef_, self.intercept_ = W, np.zeros(n_models)
        self.noise_norms_ = np.array(norms)
        self.solver_gradient_norms_ = np.array(grad_norms)
        self.epsilon_per_model_ = eps_each
        self.regularization_ = self._lambda(eps_each, *Z.shape)
        self.epsilon_spent_ = eps
        # the theorems' guarantee, as an event a ledger composes (basic composition); none for a non-private fit
        self.dp_event_ = EpsilonDeltaDpEvent(eps, 0.0) if self._private and math.isfinite(eps) else None
        self.neighbouring_ = "replace_one" if self.dp_event_ is not None else None  # the theorems' relation
        if self._private and self.perturbation == "objective":
            self.epsilon_prime_ = eps_primes[0]
            self.extra_regularization_ = extras[0]
        return self

    def _classes(self, y: np.ndarray) -> np.ndarray:
        """The classes the fit tells apart: the declared ``classes``, or (warned for a private fit) those of ``y``."""
        if self.classes is None:
            classes = np.unique(y)
            if classes.size < 2:
                raise DPValueError(
                    f"y has a single class ({plain(classes[0])!r}); one class gives a classifier nothing to tell "
                    "apart, the training data needs at least two classes"
                )
            if self._private:
                warnings.warn(
                    f"classes were not declared, so they were read from the private labels ({classes.size} found): "
                    "which classes the training rows hold is not covered by epsilon (replacing the only row of a "
                    "class changes how many one-vs-rest models are released and the budget of each). Declare "
                    "classes= with every label the data can hold",
                    PrivacyLeakWarning, stacklevel=user_stacklevel())
            return classes
        declared = np.asarray(self.classes)
        if declared.ndim != 1 or np.unique(declared).size != declared.size or declared.size < 2:
            raise DPValueError(f"classes must list at least two distinct labels, each once, got {self.classes!r}")
        unknown = ~np.isin(y, declared)
        if unknown.any():
            raise DPValueError(f"y holds labels outside the declared classes {declared.tolist()!r} (e.g. "
                               f"{plain(y[unknown][0])!r}); declare every label the data can hold in classes=")
        return np.sort(declared)

    def _lambda(self, eps_model: float, n: int, d: int) -> float:
        """Lambda for one binary model fitted on ``n`` rows of ``d`` features (with the intercept's)."""
        if isinstance(self.regularization, str):
            if not math.isfinite(eps_model):
                return NONPRIVATE_AUTO_LAMBDA
            # never below the non-private model's: at epsilon 1e308 the formula underflows to 0 and 1/(n Lambda) fails
            lam = max(auto_regularization(self.perturbation, n=n, d=d, epsilon=eps_model), NONPRIVATE_AUTO_LAMBDA)
            if not math.isfinite(lam):  # a subnormal epsilon: C sqrt(d) / (n epsilon) overflows
                raise DPValueError(
                    f"epsilon={self.epsilon:g} is too small for regularization='auto': its rule C sqrt(d) / (n "
                    "epsilon) overflows double precision; use a larger epsilon (or give regularization a number)")
            return lam
        return float(self.regularization)

    def _fit_binary(self, Z: np.ndarray, y: np.ndarray, eps: float, rng,
                    out_rng: np.random.Generator) -> tuple[np.ndarray, dict]:
        n, d = Z.shape
        lam = self._lambda(eps, n, d)
        gamma = SOLVER_GRADIENT_BOUND
        if self.perturbation == "output":
            f, grad_norm = _solve(Z, y, model=self.model_, huber_h=self.huber_h, lam=lam, gradient_bound=gamma)
            # Corollary 8: argmin J has L2 sensitivity 2 / (n Lambda). The solver's point is within gamma / Lambda of
            # argmin J on either dataset (J is Lambda-strongly convex), so its own sensitivity is at most
            # 2 / (n Lambda) + 2 gamma / Lambda
            # rounded UP from the exact rationals: to nearest, the sum of the two quotients lay below the exact one
            # for about half of all (n, Lambda) (n = 300 at Lambda 0.3), a hair less noise than the bound needs
            mech = L2LaplaceVector(epsilon=eps, sensitivity=round_up(Fraction(2) / (n * Fraction(lam))
                                                                     + 2 * Fraction(gamma) / Fraction(lam)))
            released = mech.randomise(f, rng=rng)  # in secure mode the released weights land on the secure grid
            return released, {"noise_norm": float(np.linalg.norm(released - f)), "gradient_norm": grad_norm}
        c = loss_curvature(self.model_, self.huber_h)
        eps_out = SOLVER_EPSILON_SHARE * eps
        # Algorithm 2's share rounded down: with the output noise's, it spends no more than eps
        eps_main = round_down(Fraction(eps) - Fraction(eps_out))
        eps_p, extra = objective_perturbation_params(n=n, regularization=lam, epsilon=eps_main, c=c)
        # Algorithm 2 at eps - eps_out: b has density proportional to exp(-(eps'/2) ||b||)
        b = L2LaplaceVector(epsilon=eps_p, sensitivity=2.0).noise((d,), rng=rng)
        f, grad_norm = _solve(Z, y, model=self.model_, huber_h=self.huber_h, lam=lam, b=b, extra=extra,
                              gradient_bound=gamma)
        # Algorithm 2's guarantee is for the exact minimiser f*. The objective is (Lambda + Delta)-strongly convex,
        # so the solver's point is within r = gamma / (Lambda + Delta) of it. Coupling the noise b on one dataset
        # with the b' that gives the neighbouring dataset the same f* (the map whose density ratio Theorem 9
        # bounds by e^(eps - eps_out)), the two released points are within 2r of each other, and noise of density
        # exp(-eps_out ||v|| / (2r)) hides that distance (Iyengar et al. 2019, Algorithm 1 and its Theorem, with
        # this pure-epsilon noise in place of their Gaussian): eps in all. In secure mode the released weights land
        # on the secure grid, as output perturbation's do (Mironov 2012: the low bits of a floating-point sum can
        # give away which point the noise was added to)
        # (over the regularisation the solver used, rounded UP: to nearest the quotient fell below 2 gamma / it)
        out_sensitivity = round_up(2 * Fraction(gamma) / Fraction(_strong_convexity(lam, extra)))
        released = L2LaplaceVector(epsilon=eps_out, sensitivity=out_sensitivity).randomise(f, rng=out_rng)
        return released, {"noise_norm": float(np.linalg.norm(b)), "epsilon_prime": eps_p, "extra": extra,
                          "gradient_norm": grad_norm, "output_noise_norm": float(np.linalg.norm(released - f))}

    def decision_function(self, X) -> np.ndarray:
        X = check_fitted_X(self, X, "coef_")
        Z, _ = clip_rows_l2(X, self.data_norm_, warn=False)
        Z = Z / self.data_norm_
        if self.rff_ is not None:
            Z = self.rff_.transform(Z)
        s = Z @ self.coef_.T + self.intercept_
        return s[:, 0] if s.shape[1] == 1 else s

    def predict(self, X) -> np.ndarray:
        s = self.decision_function(X)
        if s.ndim == 1:
            return self.classes_[(s > 0).astype(int)]
        return self.classes_[np.argmax(s, axis=1)]

    def _is_logistic(self) -> bool:
        try:
            return canonical_model(self.model) == "logreg"
        except DPValueError:
            return False

    @available_if(_is_logistic)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the logistic model, in the order of ``classes_`` (post-processing of the released
        weights: no privacy cost): ``sigmoid(margin)`` for two classes; with k > 2 classes each one-vs-rest model's
        sigmoid, normalised over the classes (as scikit-learn's one-vs-rest logistic regression). The Huber SVM
        (``model="svm"``) gives no probabilities, as scikit-learn's LinearSVC does not."""
        s = self.decision_function(X)
        p = expit(s)
        if s.ndim == 1:
            return np.column_stack([expit(-s), p])
        total = p.sum(axis=1, keepdims=True)
        return np.divide(p, total, out=np.full_like(p, 1.0 / p.shape[1]), where=total > 0)


class OutputPerturbationClassifier(PrivateERMClassifier):
    """:class:`PrivateERMClassifier` with ``perturbation="output"`` (Algorithm 1) by default."""

    def __init__(self, *, epsilon: float = 1.0, regularization: float | str = "auto", perturbation: str = "output",
                 model: str = "logreg", huber_h: float = 0.5, data_norm: float | None = None,
                 fit_intercept: bool = True, intercept_scale: float = DEFAULT_INTERCEPT_SCALE, kernel: str = "none",
                 n_components: int = 25, gamma: float = 0.5, classes=None, random_state=None):
        super().__init__(epsilon=epsilon, regularization=regularization, perturbation=perturbation, model=model,
                         huber_h=huber_h, data_norm=data_norm, fit_intercept=fit_intercept,
                         intercept_scale=intercept_scale, kernel=kernel,
                         n_components=n_components, gamma=gamma, classes=classes, random_state=random_state)


class ObjectivePerturbationClassifier(PrivateERMClassifier):
    """:class:`PrivateERMClassifier` with ``perturbation="objective"`` (Algorithm 2)."""


class ERMClassifier(PrivateERMClassifier):
    """The same regularised ERM with no noise (non-private baseline; ``epsilon`` is ignored)."""

    _private = False

    def _fit_binary(self, Z, y, eps, rng, out_rng):
        return _solve(Z, y, model=self.model_, huber_h=self.huber_h, lam=self._lambda(math.inf, *Z.shape))[0], {}


# --------------------------------------------------------------------------- Algorithm 4


def private_tune_regularization(
    X: ArrayLike, y: ArrayLike, *, lambdas: ArrayLike, make_estimator: AnyCallable, epsilon: float, rng: RngLike = None
) -> tuple[PrivateERMClassifier, dict]:
    """Privacy-preserving choice of Lambda (Chaudhuri et al. 2011, Algorithm 4).

    Split the rows into ``m + 1`` disjoint parts (m = ``len(lambdas)``); train
    ``f_i = make_estimator(regularization=Lambda_i, epsilon=epsilon)`` on part i;
    count the mistakes ``z_i`` of ``f_i`` on part m+1; release ``f_i`` with
    probability proportional to ``exp(-epsilon z_i / 2)``. The parts are disjoint
    (parallel composition) and z has sensitivity 1, so the output is epsilon-DP.

    Returns the chosen fitted estimator and a dict with ``lambdas``, ``mistakes``,
    ``probabilities`` and ``chosen``. Only the chosen estimator is the release epsilon covers: ``mistakes`` are exact
    counts on the private held-out part, and ``probabilities`` a function of them, for the data owner alone.
    """
    eps = check_epsilon(epsilon)
    lambdas = [check_positive(v, "lambdas[i]") for v in lambdas]
    if not lambdas:
        raise DPValueError("lambdas must hold at least one candidate regularisation constant")
    rng = as_generator(rng)
    X = check_array(X, "X", ndim=2)
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise DPValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}), got shape {y.shape}")
    m = len(lambdas)
    perm = rng.permutation(X.shape[0])
    parts = np.array_split(perm, m + 1)
    if min(p.size for p in parts) < 2:
        raise DPValueError(f"{X.shape[0]} rows are too few to split into {m + 1} parts; use fewer lambdas")
    hold = parts[-1]
    models, mistakes = [], []
    for lam, part in zip(lambdas, parts[:-1]):
        est = make_estimator(regularization=lam, epsilon=eps, random_state=child_seed(rng))
        est.fit(X[part], y[part])
        models.append(est)
        mistakes.append(int(np.sum(est.predict(X[hold]) != y[hold])))
    # the exponential mechanism with utility -z (sensitivity 1): Pr[i] proportional to exp(-epsilon z_i / 2)
    selection = Exponential(epsilon=eps, sensitivity=1.0)
    utilities = -np.array(mistakes, dtype=float)
    i = selection.randomise(utilities, rng=rng)
    p = selection.probabilities(utilities)
    return models[i], {"lambdas": lambdas, "mistakes": mistakes, "probabilities": p.tolist(), "chosen": lambdas[i]}
