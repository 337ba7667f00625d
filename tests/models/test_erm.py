import math
import re

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from dpcore.exceptions import DPCoreWarning, DPValueError, PrivacyLeakWarning
from dpcore.models import (
    ERMClassifier,
    PrivateERMClassifier,
    RandomFourierFeatures,
    loss_curvature,
    objective_perturbation_params,
    output_perturbation_beta,
    private_tune_regularization,
)
from tests.mechanism_spy import mechanisms_made

rng0 = np.random.default_rng(0)
X = rng0.normal(size=(300, 3)) / 3
Y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)

MAKERS = [
    lambda: PrivateERMClassifier(epsilon=1.0, perturbation="objective", data_norm=1.0, random_state=0),
    lambda: PrivateERMClassifier(epsilon=1.0, perturbation="output", model="svm", data_norm=1.0, random_state=0),
    lambda: PrivateERMClassifier(epsilon=1.0, kernel="rff", n_components=20, data_norm=1.0, random_state=0),
    lambda: ERMClassifier(data_norm=1.0),
]


@pytest.mark.parametrize("make", MAKERS)
def test_sklearn_conventions(make):
    est = make()
    params = est.get_params()
    assert clone(est).get_params() == params
    with pytest.raises(NotFittedError):
        est.predict(X)
    with pytest.warns(DPCoreWarning) if np.linalg.norm(X, axis=1).max() > 1 else _nullcontext():
        assert est.fit(X, Y) is est
    assert est.get_params() == params
    assert set(np.unique(est.predict(X))) <= {0, 1}


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_objective_perturbation_eps_prime_branch_positive():
    n, lam, eps, c = 500, 0.01, 1.0, 0.25
    x = c / (n * lam)
    expected = eps - math.log(1 + 2 * x + x * x)
    eps_p, delta = objective_perturbation_params(n=n, regularization=lam, epsilon=eps, c=c)
    assert eps_p == pytest.approx(expected) and eps_p > 0
    assert delta == 0.0


def test_objective_perturbation_rounds_toward_privacy():
    """Algorithm 2's eps' (Chaudhuri et al. 2011) is never above eps - ln(1 + 2x + x^2) and its Delta never below
    c / (n (e^(eps/4) - 1)) - Lambda, both computed here in 60-digit decimals. In double precision, 1 + 2x lost most
    of a tiny x = c / (n Lambda) and eps' came out above the exact value (9e-11 relative at worst), a noise too small
    for the epsilon stated."""
    from decimal import Decimal, localcontext

    cases = [(1.738381048098503e-05, 30000, 7.356027674535524, 1.0), (1e-5, 30000, 7.0, 1.0),
             (0.3, 569, 0.01, 0.25), (2.0, 150, 1e-4, 0.5), (1e-4, 10, 3.0, 0.25),  # eps' > 0
             (0.2, 20, 0.001, 1.0), (1e-6, 150, 1e-3, 0.25), (5.0, 10, 1e-6, 1.0)]  # the Delta branch
    with localcontext() as ctx:
        ctx.prec = 60
        for eps, n, lam, c in cases:
            eps_p, extra = objective_perturbation_params(n=n, regularization=lam, epsilon=eps, c=c)
            exact = Decimal(eps) - 2 * (1 + Decimal(c) / (n * Decimal(lam))).ln()
            if exact > 0:
                assert extra == 0.0 and Decimal(eps_p) <= exact and eps_p == pytest.approx(float(exact), rel=1e-12)
            else:
                exact_extra = Decimal(c) / (n * ((Decimal(eps) / 4).exp() - 1)) - Decimal(lam)
                assert Decimal(eps_p) <= Decimal(eps) / 2 and Decimal(extra) >= exact_extra
                assert extra == pytest.approx(float(exact_extra), rel=1e-12)


def test_objective_perturbation_delta_branch():
    n, lam, eps, c = 20, 0.001, 0.2, 1.0  # Huber with h = 0.5
    x = c / (n * lam)
    assert eps - math.log(1 + 2 * x + x * x) <= 0
    eps_p, delta = objective_perturbation_params(n=n, regularization=lam, epsilon=eps, c=c)
    assert eps_p == pytest.approx(eps / 2)
    assert delta == pytest.approx(c / (n * (math.exp(eps / 4) - 1)) - lam)
    # a fit runs Algorithm 2 at 99 % of its epsilon (the rest covers the solver's distance to the exact minimiser)
    clf = PrivateERMClassifier(epsilon=eps / 0.99, regularization=lam, model="svm", data_norm=10.0,
                               fit_intercept=False, random_state=0).fit(X[:n], Y[:n])
    assert clf.epsilon_prime_ == pytest.approx(eps / 2)
    assert clf.extra_regularization_ == pytest.approx(delta)


def test_loss_curvature_constants():
    assert loss_curvature("logreg") == 0.25
    assert loss_curvature("svm", 0.1) == pytest.approx(5.0)


def test_output_perturbation_noise_scale():
    # ||f_priv - f*|| ~ Gamma(d, 2 / (n Lambda eps)), d = features + intercept
    n, lam, eps = 300, 0.1, 0.5
    beta = output_perturbation_beta(n=n, regularization=lam, epsilon=eps)
    assert beta == pytest.approx(n * lam * eps / 2)
    base = ERMClassifier(regularization=lam, data_norm=2.0).fit(X, Y)
    f0 = np.r_[base.coef_[0], base.intercept_[0]]
    a = base.intercept_scale
    internal = np.r_[np.full(base.coef_.shape[1], math.sqrt(1 - a * a)), a]
    diffs = []
    for s in range(300):
        clf = PrivateERMClassifier(epsilon=eps, regularization=lam, perturbation="output", data_norm=2.0,
                                   random_state=s).fit(X, Y)
        f = np.r_[clf.coef_[0], clf.intercept_[0]]
        diffs.append(np.linalg.norm((f - f0) / internal))
    # coef_ acts on x / data_norm and the model's internal rows are [sqrt(1 - a^2) x / data_norm, a]
    assert stats.kstest(diffs, stats.gamma(a=4, scale=1 / beta).cdf).pvalue > 0.01


def test_objective_noise_norm_distribution():
    n, lam, eps = 300, 0.05, 1.0
    # Algorithm 2 runs at 99 % of the fit's epsilon (the rest covers the solver's distance to the minimiser)
    eps_p, _ = objective_perturbation_params(n=n, regularization=lam, epsilon=0.99 * eps, c=0.25)
    norms = [PrivateERMClassifier(epsilon=eps, regularization=lam, data_norm=2.0, random_state=s).fit(X, Y)
             .noise_norms_[0] for s in range(200)]
    assert stats.kstest(norms, stats.gamma(a=4, scale=2 / eps_p).cdf).pvalue > 0.01


def test_one_vs_rest_splits_budget():
    y3 = np.digitize(X[:, 0], [-0.1, 0.1])
    clf = PrivateERMClassifier(epsilon=1.5, data_norm=2.0, random_state=0).fit(X, y3)
    assert clf.coef_.shape[0] == 3
    assert clf.epsilon_per_model_ == pytest.approx(0.5)
    assert 3 * clf.epsilon_per_model_ == pytest.approx(clf.epsilon_spent_)


def test_rows_clipped_to_norm_one():
    clf = PrivateERMClassifier(epsilon=1.0, data_norm=0.1, random_state=0)
    with pytest.warns(DPCoreWarning, match="data_norm"):
        clf.fit(X, Y)
    Z = clf._features(X, fitting=False)
    assert np.linalg.norm(Z, axis=1).max() <= 1 + 1e-12


def test_rff_features_bounded_by_one():
    Xr = np.random.default_rng(0).normal(size=(100, 3))
    rff = RandomFourierFeatures(n_components=50, gamma=2.0, random_state=0).fit(Xr)
    V = rff.transform(Xr)
    assert np.linalg.norm(V, axis=1).max() <= 1 + 1e-12
    # the draws depend on the seed and the width only, never on the rows
    other = RandomFourierFeatures(n_components=50, gamma=2.0, random_state=0).fit(np.zeros((1, 3)))
    assert np.array_equal(other.random_weights_, rff.random_weights_)
    assert np.array_equal(other.random_offset_, rff.random_offset_)
    # kernel approximation: 2 v(x).v(y) ~ exp(-gamma ||x-y||^2)
    rff = RandomFourierFeatures(n_components=4000, gamma=0.5, random_state=1).fit(np.zeros((1, 2)))
    a, b = np.array([[0.0, 0.0]]), np.array([[1.0, 0.5]])
    approx = 2 * (rff.transform(a) @ rff.transform(b).T).item()
    assert approx == pytest.approx(math.exp(-0.5 * 1.25), abs=0.05)


def test_bad_inputs():
    with pytest.raises(DPValueError, match="epsilon"):
        PrivateERMClassifier(epsilon=0, data_norm=1).fit(X, Y)
    with pytest.raises(DPValueError, match="single class"):
        PrivateERMClassifier(epsilon=1, data_norm=1).fit(X, np.zeros(300))
    with pytest.raises(DPValueError, match="model"):
        PrivateERMClassifier(epsilon=1, data_norm=1, model="tree").fit(X, Y)
    with pytest.warns(PrivacyLeakWarning):
        PrivateERMClassifier(epsilon=1, random_state=0).fit(X, Y)


def test_private_tuning_exponential_mechanism():
    def make(**kw):
        return PrivateERMClassifier(data_norm=2.0, **kw)

    est, info = private_tune_regularization(X, Y, lambdas=[0.01, 0.1, 10.0], make_estimator=make, epsilon=1.0,
                                            rng=0)
    z = np.array(info["mistakes"], dtype=float)
    p = np.exp(-1.0 * z / 2)
    assert np.allclose(info["probabilities"], p / p.sum())
    assert info["chosen"] in info["lambdas"]
    assert hasattr(est, "coef_")


def test_accuracy_improves_with_epsilon():
    lo = np.mean([PrivateERMClassifier(epsilon=0.05, data_norm=1.0, random_state=s).fit(X, Y).score(X, Y)
                  for s in range(5)])
    hi = np.mean([PrivateERMClassifier(epsilon=20, data_norm=1.0, random_state=s).fit(X, Y).score(X, Y)
                  for s in range(5)])
    assert hi > 0.9 and hi > lo


def test_auto_regularization_schedule():
    n, d = X.shape[0], X.shape[1] + 1  # the intercept is one more feature
    clf = PrivateERMClassifier(epsilon=0.6, data_norm=2.0, random_state=0).fit(X, np.digitize(X[:, 0], [-0.1, 0.1]))
    assert clf.regularization_ == pytest.approx(3.0 * math.sqrt(d) / (n * 0.2))  # three one-vs-rest models at 0.2
    out = PrivateERMClassifier(epsilon=0.5, perturbation="output", data_norm=2.0, random_state=0).fit(X, Y)
    assert out.regularization_ == pytest.approx(10.0 * math.sqrt(d) / (n * 0.5))
    rff = PrivateERMClassifier(epsilon=0.5, kernel="rff", n_components=30, data_norm=2.0, random_state=0).fit(X, Y)
    assert rff.regularization_ == pytest.approx(3.0 * math.sqrt(31) / (n * 0.5))  # d counts the random features
    assert ERMClassifier(data_norm=2.0).fit(X, Y).regularization_ == pytest.approx(1e-5)
    with pytest.raises(DPValueError, match="regularization"):
        PrivateERMClassifier(epsilon=1, regularization=-1.0, data_norm=1).fit(X, Y)


@pytest.mark.parametrize("a", [0.1, 0.3, 1 / math.sqrt(2), 0.9])
def test_intercept_scale_keeps_rows_in_unit_ball_and_decision_consistent(a):
    # rows the algorithm sees are [sqrt(1 - a^2) x / data_norm, a]: norm <= 1 (Chaudhuri's assumption)
    Xbig = np.vstack([X, [[5.0, 0.0, 0.0]]])
    Ybig = np.r_[Y, 1]
    clf = ERMClassifier(data_norm=0.5, intercept_scale=a)
    with pytest.warns(DPCoreWarning, match="data_norm"):
        clf.fit(Xbig, Ybig)
    Z = clf._features(Xbig, fitting=False)
    assert Z.shape[1] == X.shape[1] + 1
    assert np.linalg.norm(Z, axis=1).max() <= 1 + 1e-12
    assert np.allclose(Z[:, -1], a)
    # coef_ / intercept_ act on x / data_norm (clipped); they reproduce the internal model's scores
    f = _internal_weights(clf)
    assert np.allclose(Z @ f, clf.decision_function(Xbig))


def _internal_weights(clf):
    a = clf.intercept_scale
    return np.r_[clf.coef_[0] / math.sqrt(1 - a * a), clf.intercept_[0] / a]


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, 1.5, "x", True])
def test_bad_intercept_scale(bad):
    with pytest.raises(DPValueError, match="intercept_scale"):
        PrivateERMClassifier(epsilon=1.0, data_norm=1.0, intercept_scale=bad).fit(X, Y)


@pytest.mark.parametrize("perturbation", ["output", "objective"])
@pytest.mark.parametrize("bad", [0.0, -0.5, math.inf, math.nan])
def test_huber_h_must_be_positive_and_finite(perturbation, bad):
    # huber_h = 0 used to divide by zero in the Huber loss (output perturbation never checked it)
    clf = PrivateERMClassifier(epsilon=1.0, model="svm", perturbation=perturbation, huber_h=bad, data_norm=1.0)
    with pytest.raises(DPValueError, match="huber_h must be"):
        clf.fit(X, Y)
    with pytest.raises(DPValueError, match="huber_h must be"):
        ERMClassifier(model="svm", huber_h=bad, data_norm=1.0).fit(X, Y)


@pytest.mark.parametrize("perturbation", ["output", "objective"])
@pytest.mark.parametrize("param,bad,needle", [
    ("regularization", 0.0, "regularization must be > 0"),
    ("regularization", -1.0, "regularization must be > 0"),
    ("regularization", math.inf, "regularization must be finite"),
    ("regularization", "tune", "regularization must be a number > 0 or 'auto', got 'tune'"),
    ("data_norm", 0.0, "data_norm must be > 0"),
    ("data_norm", -2.0, "data_norm must be > 0"),
    ("data_norm", math.inf, "data_norm must be finite"),
])
def test_numeric_parameters_are_validated(perturbation, param, bad, needle):
    kw = {"data_norm": 1.0, param: bad}
    with pytest.raises(DPValueError, match=re.escape(needle)):
        PrivateERMClassifier(epsilon=1.0, perturbation=perturbation, **kw).fit(X, Y)


def test_rff_parameters_are_validated():
    with pytest.raises(DPValueError, match="gamma must be > 0"):
        PrivateERMClassifier(kernel="rff", gamma=0.0, data_norm=1.0).fit(X, Y)
    with pytest.raises(DPValueError, match="n_components must be >= 1"):
        PrivateERMClassifier(kernel="rbf", n_components=0, data_norm=1.0).fit(X, Y)


def test_single_class_message_prints_the_plain_label():
    with pytest.raises(DPValueError, match=r"y has a single class \(1\);") as info:
        PrivateERMClassifier(epsilon=1, data_norm=1).fit(X, np.ones(300, dtype=np.int64))
    assert "np." not in str(info.value)
    with pytest.raises(DPValueError, match=r"y has a single class \('b'\);"):
        ERMClassifier(data_norm=1).fit(X, np.array(["b"] * 300))


@pytest.mark.parametrize("alias,name,canonical", [("logistic", "model", "logreg"), ("huber-svm", "model", "svm"),
                                                  ("linear", "kernel", "none"), ("rbf", "kernel", "rff")])
def test_model_and_kernel_aliases_fit_the_same_model(alias, name, canonical):
    a = PrivateERMClassifier(epsilon=1.0, data_norm=1.0, random_state=3, **{name: alias})
    b = PrivateERMClassifier(epsilon=1.0, data_norm=1.0, random_state=3, **{name: canonical})
    a.fit(X, Y)
    b.fit(X, Y)
    assert a.get_params()[name] == alias  # fit leaves the parameter as given
    assert getattr(a, name + "_") == canonical
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)


def test_unknown_model_or_kernel_lists_the_valid_values():
    with pytest.raises(DPValueError, match=r"model must be 'logreg' or 'svm' \(also accepted: 'logistic'.*got 'tree'"):
        PrivateERMClassifier(model="tree", data_norm=1.0).fit(X, Y)
    with pytest.raises(DPValueError, match=r"kernel must be 'none' or 'rff' \(also accepted: 'linear'.*got 'poly'"):
        PrivateERMClassifier(kernel="poly", data_norm=1.0).fit(X, Y)
    assert loss_curvature("huber-svm", 0.25) == pytest.approx(2.0)
    assert loss_curvature("logistic") == 0.25
    with pytest.raises(DPValueError, match="model must be"):
        loss_curvature("tree")


def test_huber_loss_matches_chaudhuri_eq7_and_does_not_overflow_for_huge_h():
    import warnings

    from dpcore.models.erm import _huber

    z = np.linspace(-3, 3, 61)
    for h in (0.1, 0.5, 2.0):
        ref = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))
        val, grad = _huber(z, h)
        assert np.allclose(val, ref)
        num = (_huber(z + 1e-6, h)[0] - _huber(z - 1e-6, h)[0]) / 2e-6  # the gradient is the loss's derivative
        assert np.allclose(grad, num, atol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # used to print "overflow encountered in square" and return inf
        val, grad = _huber(z, 1e300)
    assert np.all(np.isfinite(val)) and np.all(np.isfinite(grad))
    clf = PrivateERMClassifier(epsilon=1.0, model="svm", huber_h=1e300, data_norm=1.0, random_state=0).fit(X, Y)
    assert np.all(np.isfinite(clf.coef_))


def test_a_grid_search_spends_every_fits_epsilon_on_a_record_as_the_readme_says():
    # the README's arithmetic for GridSearchCV: each record is in k - 1 fits per candidate plus the refit, and the
    # best estimator's epsilon_spent_ covers its refit only
    from sklearn.model_selection import GridSearchCV

    fits = []

    class Recording(PrivateERMClassifier):
        def fit(self, X, y):
            super().fit(X, y)
            fits.append((np.asarray(X).copy(), self.epsilon_spent_))
            return self

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(90, 2))
    y = (X[:, 0] > 0).astype(int)
    grid = {"epsilon": [0.5, 1.0, 2.0], "model": ["logreg", "svm"]}
    search = GridSearchCV(Recording(data_norm=1.5, random_state=0), grid, cv=3).fit(X, y)
    assert len(fits) == 6 * 3 + 1
    for record in X[:5]:
        spent_on_it = sum(eps for rows, eps in fits if (rows == record).all(axis=1).any())
        assert spent_on_it == pytest.approx((3 - 1) * 2 * sum(grid["epsilon"]) + search.best_params_["epsilon"])
    assert search.best_estimator_.epsilon_spent_ == search.best_params_["epsilon"]  # the refit's alone


def test_an_undeclared_data_norm_is_warned_with_the_value_a_bounded_scaler_gives():
    # it read "data_norm (the largest row norm) were inferred ...", with nothing on what to declare
    from dpcore.datasets import BoundedScaler

    rows = BoundedScaler(bounds=(-3, 3)).fit_transform(np.clip(X, -3, 3))
    with pytest.warns(PrivacyLeakWarning, match=r"^data_norm \(the largest L2 norm of a row\) was not declared, so "
                                                r"it was read from the private rows.*BoundedScaler.*at most "
                                                rf"sqrt\({X.shape[1]}\) = {np.sqrt(X.shape[1]):.3g}"):
        PrivateERMClassifier(epsilon=1, random_state=0).fit(rows, Y)


def _independent_gradient(Z, y, f, *, model, h, reg, b):
    """The gradient of (1/n) sum l(y_i f.z_i) + (reg/2)||f||^2 + (1/n) b.f, from the losses' textbook derivatives:
    logistic l'(m) = -1 / (1 + e^m); Chaudhuri et al. (2011, eq. 7)'s Huber hinge l'(m) = -1 below 1 - h,
    -(1 + h - m) / (2h) on [1 - h, 1 + h] and 0 above."""
    m = y * (Z @ f)
    if model == "logreg":
        lp = -1.0 / (1.0 + np.exp(m))
    else:
        lp = np.where(m < 1 - h, -1.0, np.where(m > 1 + h, 0.0, -(1 + h - m) / (2 * h)))
    return Z.T @ (lp * y) / len(y) + reg * f + b / len(y)


@pytest.mark.parametrize("dataset", ["wine", "mnist5k"])
@pytest.mark.parametrize("perturbation,model", [("objective", "logreg"), ("objective", "svm"), ("output", "logreg")])
def test_every_private_model_is_released_from_a_point_whose_gradient_is_within_the_bound(
        dataset, perturbation, model, monkeypatch):
    """Chaudhuri et al. (2011)'s guarantees are for the exact minimiser; a private fit releases a point whose
    gradient norm is at most gamma, so that it lies within gamma / (Lambda + Delta) of that minimiser (the
    distance its release covers). L-BFGS alone stopped at gradient norms up to 3.7e-5 (MNIST 5k) before it was run
    to its tolerance, and still stops above the bound on some models; the gradient is recomputed here from the
    losses' derivatives, not from the solver's code."""
    import dpcore.models.erm as erm
    from dpcore.learners import run_learner

    real, seen = erm._solve, []

    def spy(Z, y, **kw):
        f, norm = real(Z, y, **kw)
        seen.append((Z, y, f, kw))
        return f, norm

    monkeypatch.setattr(erm, "_solve", spy)
    name = "erm-objective" if perturbation == "objective" else "erm-output"
    run_learner(name, dataset, epsilon=1.0, delta=1e-5, seed=0, params={"model": model})
    assert seen
    for Z, y, f, kw in seen:
        assert kw["gradient_bound"] == erm.SOLVER_GRADIENT_BOUND == 1e-9
        b = kw.get("b")
        g = _independent_gradient(Z, y, f, model=model, h=0.5, reg=kw["lam"] + kw.get("extra", 0.0),
                                  b=np.zeros(Z.shape[1]) if b is None else b)
        assert np.linalg.norm(g) <= erm.SOLVER_GRADIENT_BOUND


def _mechanisms(monkeypatch):
    """Every L2LaplaceVector the ERM module makes, as (epsilon, sensitivity)."""
    import dpcore.models.erm as erm

    return mechanisms_made(monkeypatch, erm, "L2LaplaceVector")


def test_objective_perturbation_spends_one_percent_on_noise_covering_the_solvers_distance(monkeypatch):
    """Algorithm 2 runs at 0.99 eps; the released point is the solver's plus noise of density
    exp(-0.01 eps ||v|| / (2 gamma / (Lambda + Delta))): the two neighbouring runs' solver points, coupled through
    the same exact minimiser, are within 2 gamma / (Lambda + Delta) (Iyengar et al. 2019, Algorithm 1)."""
    made = _mechanisms(monkeypatch)
    n, lam, eps, gamma = 40, 0.001, 0.4, 1e-9  # Delta > 0 at this n and Lambda: both terms of the strong convexity
    clf = PrivateERMClassifier(epsilon=eps, regularization=lam, data_norm=10.0, fit_intercept=False,
                               random_state=0).fit(X[:n], Y[:n])
    eps_obj = 0.99 * eps
    x = 0.25 / (n * lam)
    assert eps_obj - math.log(1 + 2 * x + x * x) <= 0  # the paper's second branch: eps' = eps / 2, Delta > 0
    delta = 0.25 / (n * (math.exp(eps_obj / 4) - 1)) - lam
    assert made == [(pytest.approx(eps_obj / 2), 2.0), (pytest.approx(0.01 * eps), pytest.approx(2 * gamma /
                                                                                                 (lam + delta)))]
    assert clf.extra_regularization_ == pytest.approx(delta) and clf.epsilon_spent_ == eps
    assert clf.dp_event_.epsilon == eps


def test_output_perturbation_sensitivity_covers_the_solvers_distance(monkeypatch):
    """Corollary 8's 2 / (n Lambda) for the exact minimisers, plus 2 gamma / Lambda for the two solver points' distance
    from them (the objective is Lambda-strongly convex)."""
    made = _mechanisms(monkeypatch)
    n, lam, eps = 300, 0.1, 0.5
    PrivateERMClassifier(epsilon=eps, regularization=lam, perturbation="output", data_norm=2.0,
                         random_state=0).fit(X, Y)
    assert made == [(eps, pytest.approx(2 / (n * lam) + 2 * 1e-9 / lam, rel=1e-15))]


def test_a_solver_that_cannot_reach_the_bound_releases_nothing(monkeypatch):
    """L-BFGS cut to 2 iterations and Newton's step refused: the fit stops with the reason, no model."""
    import dpcore.models.erm as erm

    real = erm.minimize

    def short(fun, x0, **kw):
        return real(fun, x0, **{**kw, "options": {**kw["options"], "maxiter": 2}})

    monkeypatch.setattr(erm, "minimize", short)
    clf = PrivateERMClassifier(epsilon=1.0, data_norm=2.0, random_state=0)
    assert np.max(clf.fit(X, Y).solver_gradient_norms_) <= 1e-9  # Newton's steps finish what L-BFGS left
    monkeypatch.setattr(erm, "cg", lambda A, b, **kw: (np.zeros_like(b), 0))
    clf = PrivateERMClassifier(epsilon=1.0, data_norm=2.0, random_state=0)
    with pytest.raises(DPValueError, match="gradient norm of .* above the 1e-09 a private model needs.*nothing was "
                                           "released"):
        clf.fit(X, Y)
    assert not hasattr(clf, "coef_")


@pytest.mark.parametrize("model", ["logreg", "svm"])
def test_the_certified_gradient_norm_is_never_below_the_exact_one_and_close_to_it(model):
    """The exact gradient computed in 50-digit arithmetic (mpmath) at the solver's point and far from it: the
    certified norm (wide float plus its rounding bound) is at or above it, and within 1e-12 of it."""
    import mpmath

    from dpcore.models.erm import _certified_gradient_norm, _solve

    mpmath.mp.dps = 50
    gen = np.random.default_rng(3)
    Z = gen.normal(size=(60, 4))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = np.where(gen.random(60) < 0.5, 1.0, -1.0)
    reg, h = 0.01, 0.5
    lin = gen.normal(size=4) / 60
    solved, _ = _solve(Z, y, model=model, huber_h=h, lam=reg, b=lin * 60, gradient_bound=1e-9)
    for f in (solved, gen.normal(size=4), gen.normal(size=4) * 1e-6, gen.normal(size=4) * 50):
        exact = []
        for j in range(4):
            total = mpmath.mpf(0)
            for i in range(60):
                m = mpmath.mpf(float(y[i])) * mpmath.fsum(mpmath.mpf(float(Z[i, k])) * mpmath.mpf(float(f[k]))
                                                           for k in range(4))
                if model == "logreg":
                    lp = -1 / (1 + mpmath.e ** m)
                else:
                    lp = -1 if m < 1 - h else (0 if m > 1 + h else -(1 + h - m) / (2 * h))
                total += mpmath.mpf(float(Z[i, j])) * lp * mpmath.mpf(float(y[i]))
            exact.append(total / 60 + mpmath.mpf(reg) * mpmath.mpf(float(f[j])) + mpmath.mpf(float(lin[j])))
        true_norm = float(mpmath.sqrt(mpmath.fsum(e * e for e in exact)))
        for dtype, close in ((np.longdouble, 1e-12), (np.float64, 1e-10)):  # the wide pass, and the quick one
            got = _certified_gradient_norm(Z, y, f, model=model, huber_h=h, reg=reg, lin=lin, dtype=dtype)
            assert true_norm <= got <= true_norm + close


def test_objective_perturbation_at_a_tiny_epsilon_refuses_and_says_to_raise_epsilon():
    """At epsilon 1e-9 the noise term b / n is about 1e8 and the terms that cancel it at the minimiser are as large:
    double precision cannot bring the gradient within the bound, so nothing is released, and the message says why."""
    from dpcore.learners import run_learner

    with pytest.raises(DPValueError, match=r"nothing was released\. At this epsilon the objective's noise term is "
                                           r"about .*use a larger epsilon"):
        run_learner("erm-objective", "iris", epsilon=1e-9, seed=0)
    assert run_learner("erm-objective", "iris", epsilon=1e-6, seed=0).epsilon == 1e-6  # still released


def test_a_logistic_erm_model_gives_class_probabilities_its_answers_follow_and_an_svm_gives_none():
    """A scikit-learn user scores a logistic model by its probabilities (roc_auc_score, calibration): the released
    weights give them for free. Two classes: sigmoid of the margin; one-vs-rest: each sigmoid over their sum."""
    from scipy.special import expit
    from sklearn.datasets import load_iris

    from dpcore.models.erm import ERMClassifier, ObjectivePerturbationClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    clf = ObjectivePerturbationClassifier(epsilon=2.0, data_norm=4.0, random_state=0).fit(X, y)
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P[:, 1], expit(clf.decision_function(X)), rtol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X))
    Xi, yi = load_iris(return_X_y=True)
    multi = ERMClassifier(data_norm=10.0).fit(Xi, yi)
    Pm = multi.predict_proba(Xi)
    s = expit(multi.decision_function(Xi))
    np.testing.assert_allclose(Pm, s / s.sum(axis=1, keepdims=True), rtol=1e-12)
    assert np.array_equal(multi.classes_[Pm.argmax(axis=1)], multi.predict(Xi))
    assert not hasattr(ObjectivePerturbationClassifier(epsilon=1.0, model="svm"), "predict_proba")


def test_one_vs_rest_shares_and_the_solver_share_never_add_up_above_epsilon(monkeypatch):
    """Each of k models gets eps / k, and an objective-perturbation model spends it as Algorithm 2's share plus the
    output noise's (Chaudhuri et al. 2011; Iyengar et al. 2019): added up exactly they are at most the epsilon
    reported. Rounded to nearest, three shares of epsilon 1 summed a unit in the last place above 1."""
    from fractions import Fraction

    import dpcore.models.erm as erm

    seen = []
    real = erm.objective_perturbation_params
    monkeypatch.setattr(erm, "objective_perturbation_params",
                        lambda **kw: seen.append(kw["epsilon"]) or real(**kw))
    y3 = np.digitize(X[:, 0], [-0.1, 0.1])
    for eps in (1.0, 0.7, 3.3):
        for perturbation in ("objective", "output"):
            seen.clear()
            clf = PrivateERMClassifier(epsilon=eps, perturbation=perturbation, data_norm=2.0, random_state=0)
            clf.fit(X, y3)
            assert clf.epsilon_spent_ == eps and 3 * Fraction(clf.epsilon_per_model_) <= Fraction(eps)
            for main in seen:  # Algorithm 2's share, with the output noise's, within the model's
                out = erm.SOLVER_EPSILON_SHARE * clf.epsilon_per_model_
                assert Fraction(main) + Fraction(out) <= Fraction(clf.epsilon_per_model_)
            assert len(seen) == (3 if perturbation == "objective" else 0)


@pytest.mark.parametrize("lam", [0.3, 0.01, 0.03])
def test_output_perturbation_sensitivity_is_never_below_the_exact_bound(monkeypatch, lam):
    """2 / (n Lambda) + 2 gamma / Lambda from the exact rationals, rounded up: in floating point the sum lay below the
    exact one for about half of all (n, Lambda), n = 300 at Lambda 0.3 among them (Chaudhuri et al. 2011,
    Corollary 8)."""
    from fractions import Fraction

    made = _mechanisms(monkeypatch)
    PrivateERMClassifier(epsilon=0.5, regularization=lam, perturbation="output", data_norm=2.0,
                         random_state=0).fit(X, Y)
    (_, sensitivity), = made
    exact = Fraction(2) / (300 * Fraction(lam)) + 2 * Fraction(1e-9) / Fraction(lam)
    assert exact <= Fraction(sensitivity) <= exact * (1 + Fraction(1, 2**50))


def test_objective_perturbation_regularises_at_least_lambda_plus_delta_and_noises_the_solvers_distance(monkeypatch):
    """The solver regularises by at least Lambda + Delta (Algorithm 2's Delta is the least to add; in floating point
    0.0007 + Delta lay below the exact sum), and the output noise covers 2 gamma over the regularisation the solver
    used, rounded up (Iyengar et al. 2019; to nearest the quotient lay below it at epsilon 0.4)."""
    from fractions import Fraction

    import dpcore.models.erm as erm

    made, regs = _mechanisms(monkeypatch), []
    real = erm._objective
    monkeypatch.setattr(erm, "_objective", lambda *a, **kw: regs.append(kw["reg"]) or real(*a, **kw))
    lam = 0.0007
    clf = PrivateERMClassifier(epsilon=0.4, regularization=lam, data_norm=10.0, fit_intercept=False,
                               random_state=0).fit(X[:40], Y[:40])
    extra = clf.extra_regularization_
    assert extra > 0 and regs and all(Fraction(r) >= Fraction(lam) + Fraction(extra) for r in regs)
    (_, out_sensitivity) = made[1]
    assert Fraction(out_sensitivity) >= 2 * Fraction(erm.SOLVER_GRADIENT_BOUND) / Fraction(max(regs))
