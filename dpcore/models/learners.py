"""Registry entries for the classical private models (DP-ERM, functional mechanism, k-means).

Names: ``erm-output``, ``erm-objective``, ``logreg`` (non-private), ``functional-mechanism``,
``ssp`` (Gaussian sufficient statistics, (epsilon, delta)), ``linreg`` (non-private), ``dplloyd``,
``input-perturbation``, ``lloyd`` (non-private).

Preprocessing of the ERM learners (``preprocess``); every option ends with rows clipped to
L2 norm ``data_norm`` (Chaudhuri et al.'s ``||x|| <= 1`` after dividing by it):

* ``"log-bounds"`` (default except on iris, see :data:`PREPROCESS_BY_DATASET`; private): each feature is
  log-scaled between the dataset's declared (public) bounds onto [-1, 1] (:func:`~dpcore.models._utils.log_box_to_unit`,
  offset 0.1 of the range), i.e. centred at the bounds' log-midpoint; a feature whose declared range reaches below 0
  (no size or count) is mapped linearly instead; ``data_norm`` = 1.
  No statistic of the private rows is used. On breast cancer (30 positive, heavy-tailed
  features) the linear ``"bounds"`` map leaves most rows in one corner of the box and
  objective perturbation reaches ~0.77 accuracy at eps = 1; this map reaches ~0.91-0.92, the
  same as the leaky standardisation below (0.915 on 20 test splits, 0.909 for log-bounds).
  The offset was chosen on validation splits of the breast-cancer training rows (a quarter
  held out; grid {0.01, 0.03, 0.1, 0.3, 1} on 6-10 splits, then {0.05, 0.1, 0.2} on 30
  splits), never on test rows; with it ``intercept_scale`` 0.3 and Lambda = 0.03 / eps (the rule then).
  Other data sets (validation splits, 15 per cell, objective and output perturbation at
  eps 1 and 5; mean over breast cancer, wine, iris): offset 0.1 -> 0.739, 0.3 -> 0.750,
  1 -> 0.746, linear ``"bounds"`` with ``data_norm`` 1 -> 0.730. 0.1 wins on breast cancer
  (positive, heavy-tailed features) and loses on iris (e.g. objective perturbation at eps 5:
  0.68 vs 0.83 linear), whose features are not skewed; ``log_offset`` is a learner
  parameter and the page offers the linear map.
* ``"bounds"`` (private): the linear map of the declared bounds onto [-1, 1];
  ``data_norm`` defaults to sqrt(d/3), the RMS norm of a uniform point in that box.
* ``"standardize"`` (NOT private): centre and scale each feature by the training
  rows' mean and standard deviation, then clip rows to L2 norm ``data_norm``
  (1.0). This is the setting of published comparisons (and of the reference rows of
  bench/classical_utility.py, for both libraries); the mean and standard deviation are
  statistics of the private rows, so a PrivacyLeakWarning is raised every time.

Functional mechanism: rows (scaled into [-1, 1]^d) are bounded in L1 norm by
``l1_norm = d/2`` (the mean L1 norm of a uniform point in the box, a
data-independent choice); ``quadratic_fraction=0.5``, ``intercept_fraction=0.2``
and ``noise_ridge=1``. They were first picked on diabetes test
splits (a non-private, test-set choice) and then re-checked on validation splits of the
diabetes training rows (a quarter held out, 20 splits, eps = 1; grid l1_norm in {d/2, 2, 3},
quadratic_fraction in {0.2, 0.35, 0.5}, noise_ridge in {0.5, 1, 2}, ridge in {0.01, 0.1, 0.3},
intercept_fraction in {0.1, 0.2}): all 162 settings give validation R^2 between -0.13 and
+0.04 at eps = 1. The best there (quadratic_fraction 0.2, noise_ridge 0.5: 0.044 vs 0.010)
is worse at eps = 2 and 5 on the same validation splits (0.006 vs 0.075, 0.07 vs 0.23). A second
grid scored by the mean validation R^2 over eps in {0.5, 1, 2, 5} (l1_norm in {2, 3, d/2},
quadratic_fraction in {0.35, 0.5, 0.65}, noise_ridge in {0.25, 0.5, 1}, intercept_fraction in
{0.1, 0.2}; 54 settings) ranks the defaults third (0.079 against 0.088 for the best, l1_norm 2
and quadratic_fraction 0.65, a difference within the split-to-split noise), so the defaults
were kept.

Default ``regularization="auto"``: Lambda = C sqrt(d) / (n eps) per binary model, C = 3
(objective) or 10 (output) (:func:`~dpcore.models.erm.auto_regularization`; chosen on validation rows of
every classification dataset, a non-private choice); ``tune=True`` runs the private Algorithm 4 over
(0.01, 0.05, 0.2) instead.
"""
from __future__ import annotations

import functools
import inspect
import math
import warnings
from typing import Any, Callable, Mapping

import numpy as np

from ..accounting import EpsilonDeltaDpEvent, Neighbouring
from ..datasets import Split, scale_to_unit_interval, standardize_with_bounds
from ..exceptions import DPCoreWarning, DPValueError, PrivacyLeakWarning, user_stacklevel
from ..learners.base import LearnerSpec, ReleasedModel, RunResult, TestOutputs, class_labels
from ..learners.knobs import Knob, Wording
from ..learners.metrics import score
from ..runtime.thread_warnings import ignored
from .erm import (
    DEFAULT_INTERCEPT_SCALE,
    KERNEL_ALIASES,
    MODEL_ALIASES,
    ERMClassifier,
    PrivateERMClassifier,
    private_tune_regularization,
)
from .kmeans import DPLloydKMeans, InputPerturbationKMeans, LloydKMeans, random_centres_reference
from .linear import BoundedLinearRegression, FunctionalMechanismRegressor
from .metrics import hungarian_accuracy, intra_cluster_variance
from .ssp import SSPRegressor

PREPROCESS = ("log-bounds", "bounds", "standardize")
DEFAULT_PREPROCESS = "log-bounds"
#: Per-dataset default scaling where the linear map wins on validation rows
#: (``bench/erm_preprocess_validation.py``: held-out fifths of the training rows of 5 splits, objective and output
#: perturbation at eps 0.5-5; iris 0.647 linear vs 0.584 log, breast cancer 0.793 vs 0.917, wine 0.564 vs 0.584).
PREPROCESS_BY_DATASET = {"iris": "bounds"}


def default_preprocess(dataset: str) -> str:
    """The ERM learners' default ``preprocess`` for a registry dataset (both choices are private).

    >>> default_preprocess("iris"), default_preprocess("breast_cancer")
    ('bounds', 'log-bounds')
    """
    return PREPROCESS_BY_DATASET.get(dataset, DEFAULT_PREPROCESS)


#: offset of the log map, as a fraction of each feature's declared range (chosen on validation splits)
LOG_OFFSET = 0.1
DEFAULT_LAMBDA = "auto"
TUNE_LAMBDAS = (0.01, 0.05, 0.2)
#: The values a page offers for a fixed Λ, and the one it starts from (the middle of the private tuning's choices).
FIXED_LAMBDAS = (0.001, 0.003, 0.01, 0.03, 0.05, 0.1, 0.2, 0.5, 1.0)
FIXED_LAMBDA = TUNE_LAMBDAS[1]
_POSITIVE = dict(low=0.0, low_open=True, high=1e6)
#: A row norm bound in the unit box: below 1e-6 every row is clipped to (nearly) nothing and the sensitivities
#: derived from it underflow to 0 (an L1 bound of 1e-308 gave "sensitivity must be > 0, got 0.0").
_ROW_BOUND = dict(low=1e-6, high=1e6)

#: DP-ERM's knobs (Chaudhuri, Monteleoni & Sarwate 2011); the non-private logistic regression shares them.
ERM_KNOBS = (
    Knob("model", "choice", default="logreg", choices=("logreg", "svm"), aliases=dict(MODEL_ALIASES), shared=True,
         label="Model", choice_labels={"logreg": "Logistic regression", "svm": "Huber SVM"},
         page_help="Logistic regression, or a support vector machine with the Huber loss (a smoothed hinge; "
                   "Chaudhuri et al. 2011).",
         help="logreg (logistic regression) or svm (Huber-loss SVM); also accepted: logistic, "
                             "huber-svm"),
    Knob("kernel", "choice", default="none", choices=("none", "rff"), aliases=dict(KERNEL_ALIASES), shared=True,
         label="Kernel", choice_labels={"none": "Linear", "rff": "RBF (random Fourier features)"},
         page_help="Linear, or an RBF kernel approximated by random Fourier features (Chaudhuri et al. 2011, "
                   "Algorithm 3).",
         help="none (linear) or rff: random Fourier features of an RBF kernel (Chaudhuri et al. "
                              "Algorithm 3); also accepted: linear, rbf"),
    Knob("regularization", "float", default=DEFAULT_LAMBDA, also=("auto",), log=True, privacy=True,
         label="Regularisation Λ",
         help="Λ > 0, or auto: Λ = C·√d/(n·ε) per binary model (C chosen on validation rows of every dataset)",
         hint="to choose Λ privately use tune=true (the private ERM learners take it)",
         **_POSITIVE),
    Knob("tune", "bool", default=False, privacy=True, label="Tune Λ privately",
         help="choose Λ privately among (0.01, 0.05, 0.2) (Chaudhuri et al. Algorithm 4; its cost is included)"),
    Knob("preprocess", "choice", choices=PREPROCESS, shared=True, privacy=True, label="Feature scaling",
         choice_labels={"log-bounds": "Log scale between declared bounds (private)",
                        "bounds": "Linear scale between declared bounds (private)",
                        "standardize": "Training mean/std (leaks; the usual reference setting)"},
         default_from=lambda split: default_preprocess(split.dataset.name),
         help="log-bounds (a feature whose declared range reaches below 0 is scaled linearly) or bounds (private: "
              "only the declared bounds are used) or standardize (leaks: uses the private rows' mean and standard "
              "deviation)"),
    Knob("data_norm", "float", shared=True, advanced=True, label="Row norm bound",
         help="rows are clipped to this L2 norm (the sensitivity assumes norm <= 1 after dividing by it)",
         **_POSITIVE),
    Knob("huber_h", "float", default=0.5, shared=True, advanced=True, label="Huber h",
         help="smoothing width of the Huber loss (SVM only)", when={"model": ("svm",)}, **_POSITIVE),
    Knob("n_components", "int", default=25, low=1, high=100_000, shared=True, advanced=True,
         label="Random features", help="number of random Fourier features (kernel=rff)", when={"kernel": ("rff",)}),
    Knob("gamma", "float", default=0.5, shared=True, advanced=True, label="RBF γ",
         help="RBF kernel width of the random features (kernel=rff)", when={"kernel": ("rff",)}, **_POSITIVE),
    Knob("fit_intercept", "bool", default=True, shared=True, advanced=True, label="Fit an intercept",
         help="add a constant feature (scaled by intercept_scale)"),
    Knob("intercept_scale", "float", default=DEFAULT_INTERCEPT_SCALE, low=0.0, low_open=True, high=1.0, high_open=True,
         shared=True, advanced=True, label="Intercept scale", help="value of the constant feature before row clipping",
         when={"fit_intercept": (True,)}),
    Knob("log_offset", "float", default=LOG_OFFSET, shared=True, advanced=True, label="Log offset",
         help="offset (as a share of the range) of the log-bounds scaling", when={"preprocess": ("log-bounds",)},
         **_POSITIVE),
)
#: The functional mechanism's knobs (Zhang et al. 2012).
FM_KNOBS = (
    Knob("quadratic_fraction", "float", default=0.5, low=0.0, low_open=True, high=0.999, privacy=True,
         advanced=True, label="Budget share of the quadratic terms", help="share of ε spent on the X^T X terms"),
    Knob("intercept_fraction", "float", default=0.2, low=0.0, high=0.999, privacy=True, advanced=True,
         label="Budget share of the intercept", help="share of ε spent on the intercept terms"),
    Knob("ridge", "float", default=0.01, low=0.0, high=1e6, advanced=True, label="Ridge",
         help="ridge added before solving"),
    Knob("noise_ridge", "float", default=1.0, low=0.0, high=1e6, advanced=True, label="Noise ridge",
         help="multiples of the noise scale added to the diagonal (a PSD repair)"),
    Knob("l1_norm", "float", privacy=True, advanced=True, label="Row L1 bound",
         help="rows are clipped to this L1 norm (default d/2)", **_ROW_BOUND),
)
#: Gaussian sufficient-statistics perturbation (Wang 2018).
SSP_KNOBS = (
    Knob("data_norm", "float", default=1.0, privacy=True, advanced=True, label="Row norm bound",
         help="centred rows are clipped to this L2 norm before X^T X and X^T y", **_POSITIVE),
    Knob("adaptive", "bool", default=False, privacy=True, label="AdaSSP ridge",
         help="use AdaSSP's adaptive ridge instead of the size of the noise"),
)
_K = Knob("k", "int", low=1, high=1000, label="Clusters k", default_from=lambda split: split.n_classes or 3,
          shared=True, help="number of clusters (default: the dataset's number of classes)")
#: DPLloydKMeans's own defaults, which its knobs show: every knob but k is the estimator's parameter of the same name
#: (:func:`kmeans_estimator` hands each one on), so a knob is added here and in the estimator, nowhere else.
_DPLLOYD_DEFAULTS = {name: p.default for name, p in inspect.signature(DPLloydKMeans).parameters.items()}
#: DPLloyd (Su et al. 2016).
DPLLOYD_KNOBS = (
    _K,
    Knob("iterations", "int", low=1, high=1000, privacy=True, label="Rounds",
         help="Lloyd rounds, each spending its share of ε (default: Su et al.'s hybrid, 1 round after the noisy-grid "
              "start where the data have few enough dimensions for a grid, else 3 after a start that reads no data)"),
    Knob("init", "choice", default=_DPLLOYD_DEFAULTS["init"], choices=("auto", "grid", "sphere_packing", "uniform"),
         privacy=True, label="Initial centres", help="auto, grid (a private histogram), sphere_packing or uniform"),
    Knob("count_fraction", "float", low=0.0, low_open=True, high=0.999, privacy=True, advanced=True,
         label="Budget share of the counts", help="share of each round's ε spent on the counts (default: Su et al.)"),
    Knob("l1_norm", "float", privacy=True, advanced=True, label="Row L1 bound",
         help="rows are clipped to this L1 norm in the unit box (default: half the number of features, the mean L1 "
              "norm of a point drawn uniformly from the box, a bound that reads no data)", **_ROW_BOUND),
    Knob("init_fraction", "float", default=_DPLLOYD_DEFAULTS["init_fraction"], low=0.0, high=0.999, privacy=True,
         advanced=True, label="Budget share of the initial centres", help="share of ε spent on the private grid start",
         when={"init": ("auto", "grid")}),
    Knob("neighbouring", "choice", default=_DPLLOYD_DEFAULTS["neighbouring"], choices=("add-remove", "replace-one"),
         privacy=True, aliases={"add_remove": "add-remove", "replace_one": "replace-one", "replace": "replace-one"},
         label="Neighbouring data sets",
         choice_labels={"add-remove": "Add or remove one record (Su et al.; DPLloyd only)",
                        "replace-one": "Replace one record (like for like with input perturbation)"},
         help="add-remove (Su et al.) or replace-one (doubles every sensitivity)"),
)

#: The neighbouring relation the Clustering page and the ``cluster`` command start DPLloyd on: replace-one, the
#: relation input perturbation protects, so that the two are compared like for like. DPLloyd's own default (its
#: knob's, for ``train`` and the sweeps) stays add-remove, Su et al.'s.
CLUSTER_COMPARISON_NEIGHBOURING = "replace-one"
#: How many seeds (each its own split and noise) the Clustering page and ``python -m dpcore cluster`` average the
#: accuracy at one ε over: one seed of DPLloyd on iris at ε 1 scores 0.69 where seeds 0 to 2 average 0.84.
CLUSTER_SEEDS = 3


def _feature_names(split: Split) -> tuple[str, ...]:
    return tuple(str(c) for c in split.dataset.feature_names)


def _bounds_of(split):
    b = split.dataset.bounds
    if b is None:
        warnings.warn(
            f"dataset {split.dataset.name!r} declares no feature bounds, so they are inferred from the training rows: "
            "this leaks privacy beyond the stated epsilon",
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )
        lo, hi = split.X_train.min(0), split.X_train.max(0)
        return lo, np.where(hi > lo, hi, lo + 1.0)
    return b


def _flag(params: dict, key: str, default: bool) -> bool:
    """A true/false learner parameter; a string such as "no" is an error, not ``bool("no") == True``."""
    value = params.pop(key, default)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise DPValueError(f"{key} takes true or false, got {value!r}")


def _lam(v):
    return v if isinstance(v, str) else float(v)


def erm_features(split, preprocess: str, *, log_offset: float = LOG_OFFSET) -> tuple[np.ndarray, np.ndarray, float]:
    """The ERM learners' preprocessing; returns (X_train, X_test, default data_norm).

    Only ``"standardize"`` looks at the private rows (and warns); the others use the
    declared bounds alone and are therefore applied row by row.
    """
    if preprocess == "standardize":
        warnings.warn(
            "preprocess='standardize' centres and scales features by the mean and standard deviation of the private "
            "training rows: this leaks privacy beyond the stated epsilon (use preprocess='log-bounds' or 'bounds', "
            "which scale by the declared bounds only, for the guarantee)",
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )
        rows = erm_row_transform(split, preprocess)
        return rows(split.X_train), rows(split.X_test), 1.0
    if preprocess == "log-bounds":
        from ..validation import clip_to_bounds

        lo, hi = (np.asarray(v, dtype=float) for v in _bounds_of(split))
        # training rows outside the bounds are clipped with a warning; test rows silently (prediction only)
        Xtr = _log_bounds_rows(clip_to_bounds(np.asarray(split.X_train, dtype=float), lo, hi), lower=lo, upper=hi,
                               offset=log_offset)
        return Xtr, erm_row_transform(split, preprocess, log_offset=log_offset)(split.X_test), 1.0
    if preprocess == "bounds":
        # training rows outside the declared bounds are clipped with a warning; test rows silently (prediction only)
        Xtr = scale_to_unit_interval(split.X_train, _bounds_of(split), lo=-1.0, hi=1.0, warn=True)
        # data_norm sqrt(d/3): the RMS norm of a uniform point in [-1, 1]^d, a data-independent choice
        return Xtr, erm_row_transform(split, preprocess)(split.X_test), math.sqrt(split.X_train.shape[1] / 3.0)
    raise DPValueError(f"preprocess must be one of {PREPROCESS}, got {preprocess!r}")


def _log_bounds_rows(X: np.ndarray, *, lower: np.ndarray, upper: np.ndarray, offset: float) -> np.ndarray:
    """Rows clipped to the declared box and log-scaled onto [-1, 1] (:func:`~dpcore.models._utils.log_box_to_unit`)."""
    from ._utils import log_box_to_unit

    return log_box_to_unit(np.clip(np.asarray(X, dtype=float), lower, upper), lower, upper, offset=offset)


def _standardized_rows(X: np.ndarray, *, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    return (np.asarray(X, dtype=float) - mean) / std


def erm_row_transform(split: Split, preprocess: str, *,
                      log_offset: float = LOG_OFFSET) -> Callable[[np.ndarray], np.ndarray]:
    """How the ERM learners map rows they predict on (the test rows, a released model's new rows), one by one.

    A picklable function of the feature matrix: scaling by the declared bounds (``"bounds"``, ``"log-bounds"``;
    values outside clipped silently) or, for ``"standardize"``, by the training rows' mean and standard deviation
    (statistics of the private rows, which :func:`erm_features` warns about).
    """
    if preprocess == "standardize":
        mu = split.X_train.mean(0)
        sd = split.X_train.std(0)
        return functools.partial(_standardized_rows, mean=mu, std=np.where(sd > 0, sd, 1.0))
    if preprocess == "log-bounds":
        lo, hi = (np.asarray(v, dtype=float) for v in _bounds_of(split))
        return functools.partial(_log_bounds_rows, lower=lo, upper=hi, offset=log_offset)
    if preprocess == "bounds":
        return functools.partial(standardize_with_bounds, bounds=_bounds_of(split), warn=False)
    raise DPValueError(f"preprocess must be one of {PREPROCESS}, got {preprocess!r}")


def _erm_runner(name: str, perturbation: str | None):
    def run(split, *, epsilon, delta, seed, params: Mapping[str, Any], on_epoch=None) -> RunResult:
        p = dict(params)
        preprocess = p.pop("preprocess", default_preprocess(split.dataset.name))
        log_offset = float(p.pop("log_offset", LOG_OFFSET))
        Xtr, Xte, norm = erm_features(split, preprocess, log_offset=log_offset)
        tune = _flag(p, "tune", False)
        kw = dict(model=p.pop("model", "logreg"), kernel=p.pop("kernel", "none"),
                  regularization=_lam(p.pop("regularization", DEFAULT_LAMBDA)),
                  data_norm=float(p.pop("data_norm", norm)), huber_h=float(p.pop("huber_h", 0.5)),
                  n_components=int(p.pop("n_components", 25)), gamma=float(p.pop("gamma", 0.5)),
                  fit_intercept=_flag(p, "fit_intercept", True),
                  intercept_scale=float(p.pop("intercept_scale", DEFAULT_INTERCEPT_SCALE)),
                  # the dataset's declared classes, never those the private labels hold (one-vs-rest's model count)
                  classes=tuple(range(max(int(split.n_classes), 2))))
        if kw["kernel"] in (None, ""):  # aliases such as "linear" are the estimator's business
            kw["kernel"] = "none"
        extras: dict = {"when_trivial": _erm_when_trivial(split, preprocess)}  # advice on the scaling this run used
        # clipping rows to data_norm is the designed sensitivity bound here (the preprocessing note says so)
        with ignored(DPCoreWarning, r".*had an L2 norm above data_norm"):
            est, eps_spent = _fit_erm(perturbation, tune, kw, Xtr, split, epsilon, seed, extras)
        pred = est.predict(Xte)
        extras["y_pred"] = pred
        # Chaudhuri et al. prove pure epsilon-DP (Theorems 6 and 9) for noise dp_accounting does not model
        event = None if perturbation is None else EpsilonDeltaDpEvent(eps_spent, 0.0)
        model = ReleasedModel(est, _feature_names(split), erm_row_transform(split, preprocess, log_offset=log_offset),
                              class_labels(split), dp_event=event)
        return RunResult(name, split.dataset.name, split.task, score(split, pred), eps_spent, 0.0, extras=extras,
                         event=event, neighbouring=None if perturbation is None else Neighbouring.REPLACE_ONE,
                         test_outputs=_class_scores(est.decision_function(Xte)), model=model)

    return run


def _class_scores(decision: np.ndarray) -> TestOutputs:
    """Decision values as one score per class (a binary model's margin s becomes (-s/2, s/2))."""
    d = np.asarray(decision, dtype=float)
    return TestOutputs(np.c_[-d / 2, d / 2] if d.ndim == 1 else d, "score")


def _fit_erm(perturbation, tune, kw, Xtr, split, epsilon, seed, extras):
    """Fit the ERM estimator the learner asks for; returns (estimator, epsilon spent)."""
    if perturbation is None:
        if tune:
            warnings.warn("tune=true selects Λ privately and applies to the private learners only; the non-private "
                          f"model uses regularization={kw['regularization']!r} (set it with --set regularization=...)",
                          DPCoreWarning, stacklevel=user_stacklevel())
        est = ERMClassifier(**kw).fit(Xtr, split.y_train)
        eps_spent = math.inf
    elif tune:
        kw.pop("regularization")

        def make(**over):
            return PrivateERMClassifier(perturbation=perturbation, **kw, **over)

        est, info = private_tune_regularization(Xtr, split.y_train, lambdas=TUNE_LAMBDAS, make_estimator=make,
                                                epsilon=epsilon, rng=seed)
        extras["tuning"] = info
        eps_spent = epsilon
    else:
        est = PrivateERMClassifier(epsilon=epsilon, perturbation=perturbation, random_state=seed, **kw)
        est.fit(Xtr, split.y_train)
        eps_spent = est.epsilon_spent_
        extras["noise_norms"] = est.noise_norms_
        extras["solver_gradient_norms"] = est.solver_gradient_norms_  # certified, within SOLVER_GRADIENT_BOUND
        if perturbation == "objective":
            extras["epsilon_prime"] = est.epsilon_prime_
            extras["extra_regularization"] = est.extra_regularization_
    return est, eps_spent


def _regression_runner(name: str, private: bool):
    def run(split, *, epsilon, delta, seed, params: Mapping[str, Any], on_epoch=None) -> RunResult:
        p = dict(params)
        bX = _bounds_of(split)
        ds = split.dataset
        by = ds.label_range
        if by is None:
            warnings.warn("the label range is not declared, so it is inferred from the training labels: this leaks "
                          "privacy beyond the stated epsilon", PrivacyLeakWarning, stacklevel=user_stacklevel())
            by = (float(split.y_train.min()), float(split.y_train.max()))
        if name == "ssp":
            kw = {k.name: p[k.name] for k in SSP_KNOBS if k.name in p}
            est = SSPRegressor(epsilon=epsilon, delta=delta, bounds_X=bX, bounds_y=by, random_state=seed, **kw)
        elif private:
            kw = {k.name: p[k.name] for k in FM_KNOBS if k.name in p}
            est = FunctionalMechanismRegressor(epsilon=epsilon, bounds_X=bX, bounds_y=by, random_state=seed, **kw)
        else:
            est = BoundedLinearRegression(bounds_X=bX, bounds_y=by, ridge=float(p.get("ridge", 0.0)))
        est.fit(split.X_train, split.y_train)
        pred = est.predict(split.X_test)
        extras = {"y_pred": pred, "coef": est.coef_, "intercept": est.intercept_}
        if name == "ssp":
            extras["noise_stds"] = est.noise_stds_
            extras["ridge"] = est.ridge_
            extras["neighbouring"] = est.neighbouring_
        elif private:
            extras["noise_scales"] = est.noise_scales_
            extras["epsilon_split"] = est.epsilon_split_
        # SSP adds or removes a record; the functional mechanism replaces one (its n is public)
        rel = (Neighbouring.of(est.neighbouring_) if name == "ssp" else Neighbouring.REPLACE_ONE) if private else None
        return RunResult(name, ds.name, split.task, score(split, pred), est.epsilon_spent_,
                         est.delta_ if name == "ssp" else 0.0, extras=extras, event=est.dp_event_, neighbouring=rel,
                         test_outputs=TestOutputs(pred, "value"),
                         model=ReleasedModel(est, _feature_names(split), dp_event=est.dp_event_))

    return run


def kmeans_estimator(name: str, k: int, *, epsilon: float | None, bounds, seed, params: Mapping[str, Any]):
    """The unfitted k-means of learner ``name`` ("dplloyd", "input-perturbation" or "lloyd") with its knobs from
    ``params`` (DPLloyd's rounds, start, budget shares, relation and L1 bound; input perturbation's clipping): one
    construction for the registry's runs and for a table clustered without a label
    (:func:`dpcore.models.cluster_rows.cluster_rows`)."""
    p = dict(params)
    if name == "dplloyd":  # each knob given, but k, is the estimator's parameter of the same name
        kw = {knob.name: p[knob.name] for knob in DPLLOYD_KNOBS if knob.name != "k" and knob.name in p}
        return DPLloydKMeans(k, epsilon=epsilon, bounds=bounds, random_state=seed, **kw)
    if name == "input-perturbation":
        return InputPerturbationKMeans(k, epsilon=epsilon, bounds=bounds, random_state=seed,
                                       clip_noisy=_flag(p, "clip_noisy", False))
    if name == "lloyd":
        return LloydKMeans(k, bounds=bounds, random_state=seed)
    raise DPValueError(f"method must be 'dplloyd', 'input-perturbation' or 'lloyd', got {name!r}")


def _kmeans_runner(name: str):
    def run(split, *, epsilon, delta, seed, params: Mapping[str, Any], on_epoch=None) -> RunResult:
        p = dict(params)
        from ..validation import check_int

        k = check_int(p.pop("k", split.n_classes or 3), "k", minimum=1)  # named as the user typed it (--k, k=)
        bounds = _bounds_of(split)
        est = kmeans_estimator(name, k, epsilon=epsilon, bounds=bounds, seed=seed, params=p)
        est.fit(split.X_train)
        pred = est.predict(split.X_test)
        Zte = est.transform_unit(split.X_test)
        metrics = {"accuracy": hungarian_accuracy(split.y_test, pred),
                   "intra_cluster_variance": intra_cluster_variance(Zte, pred, est.cluster_centers_unit_)}
        extras = {"centers": est.cluster_centers_, "centers_unit": est.cluster_centers_unit_, "labels_test": pred,
                  # what centres drawn at random in the bounds score on the same test rows (no data used)
                  "random_centres": random_centres_reference(split.X_test, split.y_test, k, bounds=bounds)}
        if name == "dplloyd":  # what actually ran, for captions that describe this run
            extras.update(init=est.init_, rounds=est.n_iter_, epsilon_init=est.noise_scales_["eps_init"],
                          rows_clipped=est.n_rows_clipped_, n_train=int(split.X_train.shape[0]),
                          neighbouring=est.neighbouring)
        eps = est.epsilon_spent_
        rel = None
        if name == "dplloyd":
            rel = Neighbouring.of(est.neighbouring)
        elif name == "input-perturbation":
            rel = Neighbouring.REPLACE_ONE  # every record is released once: its values are what is protected
        # minus the squared distance to every released centre: how close each test row sits to the model
        C = est.cluster_centers_unit_  # (as a matrix product: no n x k x d array)
        affinity = -np.maximum((Zte * Zte).sum(1)[:, None] - 2.0 * Zte @ C.T + (C * C).sum(1)[None, :], 0.0)
        return RunResult(name, split.dataset.name, split.task, metrics, eps, 0.0, extras=extras,
                         event=est.dp_event_, neighbouring=rel, test_outputs=TestOutputs(affinity, "cluster"),
                         model=ReleasedModel(est, _feature_names(split), dp_event=est.dp_event_))  # cluster indices

    return run


def _random_centres(split, *, epsilon, delta, seed, params: Mapping[str, Any], on_epoch=None) -> RunResult:
    """The clusterings' trivial line: k centres drawn at random in the declared bounds, scored on the test rows as
    the k-means are (:func:`~dpcore.models.kmeans.random_centres_reference`; the mean over its draws). It reads no
    training row, so it spends no ε."""
    from ..validation import check_int

    k = check_int(dict(params).get("k", split.n_classes or 3), "k", minimum=1)
    ref = random_centres_reference(split.X_test, split.y_test, k, bounds=_bounds_of(split))
    metrics = {"accuracy": ref.accuracy, "intra_cluster_variance": ref.intra_cluster_variance}
    return RunResult("random-centres", split.dataset.name, split.task, metrics, 0.0, 0.0,
                     extras={"accuracy_sd": ref.accuracy_sd, "draws": ref.draws, "random_centres": ref})


#: Why a DP-ERM model (or its non-private twin) can end up no better than the most common class, and what to change,
#: by the feature scaling the run used.
_ERM_WHEN_TRIVIAL = {
    "log-bounds": "These models see the features only through their scaling between the declared bounds: on features "
                  "that are not skewed (ages, blood pressures) the linear scaling (Feature scaling \"Linear scale "
                  "...\", --set preprocess=bounds) can do better than the log scale used here, which suits skewed "
                  "ones (incomes, counts, areas). Otherwise try a larger epsilon, or more data.",
    "bounds": "These models see the features only through their scaling between the declared bounds: on skewed "
              "features (incomes, counts, areas) the log scale (Feature scaling \"Log scale ...\", --set "
              "preprocess=log-bounds) can do better than the linear scaling used here, and bounds far wider than "
              "the values squeeze them. Otherwise try a larger epsilon, or more data.",
    "standardize": "The noise may have drowned what it learnt: try a larger epsilon, or more data.",
    # log-bounds on a table whose every feature's declared range reaches below 0: each is scaled linearly already
    # (:func:`~dpcore.models._utils.log_box_to_unit`), so pointing to the linear scaling would send the owner to the
    # same model
    "log-bounds, all linear": "These models see the features only through their scaling between the declared "
                              "bounds: every feature here can be negative, so each is already scaled linearly, and "
                              "bounds far wider than the values squeeze them. Otherwise try a larger epsilon, or "
                              "more data.",
}


def _erm_when_trivial(split, preprocess: str) -> str:
    """The advice :data:`_ERM_WHEN_TRIVIAL` gives for the scaling this run used on these features."""
    # the lower bounds the scaling used (:func:`_bounds_of`, without its warning a second time)
    lower = split.dataset.bounds[0] if split.dataset.bounds is not None else split.X_train.min(0)
    if preprocess == "log-bounds" and bool(np.all(np.asarray(lower, dtype=float) < 0)):
        return _ERM_WHEN_TRIVIAL["log-bounds, all linear"]
    return _ERM_WHEN_TRIVIAL[preprocess]


def _register() -> None:
    from ..learners import register

    register(LearnerSpec("erm-output", "DP-ERM, output perturbation (Chaudhuri et al. Alg. 1)", ("classification",),
                         True, _erm_runner("erm-output", "output"), knobs=ERM_KNOBS, baseline="logreg",
                         uses_delta=False,
                         description="Regularised logistic regression / Huber SVM plus Gamma-norm noise on the "
                                     "minimiser (sensitivity 2/(n Lambda), plus the solver's distance to it)."))
    register(LearnerSpec("erm-objective", "DP-ERM, objective perturbation (Chaudhuri et al. Alg. 2)",
                         ("classification",), True, _erm_runner("erm-objective", "objective"), knobs=ERM_KNOBS,
                         baseline="logreg", uses_delta=False,
                         description="Regularised logistic regression / Huber SVM with a random linear term added "
                                     "to the objective (99 % of epsilon), and a tiny noise for the solver's distance "
                                     "to its minimiser (1 %, Iyengar et al. 2019)."))
    register(LearnerSpec("logreg", "Regularised logistic regression / SVM (non-private)", ("classification",), False,
                         _erm_runner("logreg", None), knobs=ERM_KNOBS, uses_delta=False,
                         description="The same ERM objective and preprocessing with no noise."))
    register(LearnerSpec("functional-mechanism", "Linear regression, functional mechanism (Zhang et al.)",
                         ("regression",), True, _regression_runner("functional-mechanism", True), knobs=FM_KNOBS,
                         baseline="linreg", uses_delta=False,
                         description="Laplace noise on the coefficients of the squared loss, then a PSD repair."))
    register(LearnerSpec("ssp", "Linear regression, Gaussian sufficient statistics (SSP / AdaSSP, Wang 2018)",
                         ("regression",), True, _regression_runner("ssp", True), knobs=SSP_KNOBS,
                         baseline="linreg", uses_delta=True,
                         description="Gaussian noise on the count, sums, X^T X and X^T y ((epsilon, delta), "
                                     "add/remove one record), then a ridge the size of the noise."))
    register(LearnerSpec("linreg", "Linear regression (non-private)", ("regression",), False,
                         _regression_runner("linreg", False), uses_delta=False,
                         knobs=(Knob("ridge", "float", default=0.0, low=0.0, high=1e6, advanced=True, label="Ridge",
                                     help="ridge added before solving"),),
                         description="Least squares in the same bounds-scaled coordinates."))
    register(LearnerSpec("dplloyd", "k-means, DPLloyd (Su et al.)", ("classification",), True,
                         _kmeans_runner("dplloyd"), knobs=DPLLOYD_KNOBS, baseline="lloyd", uses_delta=False,
                         family="clustering",
                         description="Noisy counts and sums per Lloyd round; accuracy after Hungarian matching.",
                         wording=Wording(when_trivial=(
                             "Each round adds Laplace noise to every cluster's count and to each of its {d} "
                             "coordinate sums, whose sensitivity grows with the dimension (Su et al. 2016); with "
                             "{n} training rows shared among the clusters, that noise can outweigh a cluster's own "
                             "rows, so the noisy centres drift from the rows and one cluster may take them all. At a "
                             "small epsilon a noisy centre can still split the classes by luck on one seed: read the "
                             "mean over seeds. Try a larger epsilon, more rows, or fewer features."))))
    register(LearnerSpec("input-perturbation", "k-means on Laplace-perturbed records", ("classification",), True,
                         _kmeans_runner("input-perturbation"), baseline="lloyd", uses_delta=False,
                         family="clustering",
                         knobs=(_K, Knob("clip_noisy", "bool", default=False, label="Clip noisy records to the box",
                                         help="clip each noisy record back into the declared bounds "
                                              "(post-processing)")),
                         description="Every record gets Lap(sum of ranges / epsilon) noise, then plain Lloyd.",
                         wording=Wording(when_trivial=(
                             "Every value of every record gets Laplace noise scaled by the sum of the {d} features' "
                             "ranges over epsilon, so with many features the noise swamps the records unless epsilon "
                             "is large: try a larger epsilon, or data with fewer features."))))
    register(LearnerSpec("lloyd", "k-means, Lloyd (non-private)", ("classification",), False,
                         _kmeans_runner("lloyd"), knobs=(_K,), uses_delta=False, family="clustering",
                         description="k-means++ seeding, 10 restarts, in the bounds-normalised domain."))
    register(LearnerSpec("random-centres", "Random centres (no data used)", ("classification",), False,
                         _random_centres, knobs=(_K,), uses_delta=False, trivial=True, family="clustering",
                         description="k centres drawn uniformly in the declared bounds (20 draws, no data used): what "
                                     "a clustering reaches without learning anything; a clustering sweep's trivial "
                                     "line."))

_register()
