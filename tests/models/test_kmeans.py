
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from dpcore.exceptions import DPCoreWarning, DPValueError, PrivacyLeakWarning
from dpcore.models import (
    DPLloydKMeans,
    InputPerturbationKMeans,
    LloydKMeans,
    hungarian_accuracy,
    input_perturbation_scale,
    intra_cluster_variance,
    su_count_fraction,
)
from dpcore.models.kmeans import noisy_grid_init, sphere_packing_init

rng0 = np.random.default_rng(0)
X = np.r_[rng0.normal(-0.5, 0.1, (60, 2)), rng0.normal(0.5, 0.1, (60, 2))].clip(-1, 1)
Y = np.r_[np.zeros(60, int), np.ones(60, int)]
B = (-1.0, 1.0)
EST = [
    lambda: DPLloydKMeans(2, epsilon=1.0, bounds=B, random_state=0),
    lambda: InputPerturbationKMeans(2, epsilon=1.0, bounds=B, random_state=0),
    lambda: LloydKMeans(2, bounds=B, random_state=0),
]


@pytest.mark.parametrize("make", EST)
def test_sklearn_conventions(make):
    est = make()
    params = est.get_params()
    c = clone(est)
    assert c.get_params() == params
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.fit(X) is est
    assert est.get_params() == params  # fit leaves parameters untouched
    assert est.cluster_centers_.shape == (2, 2)
    assert est.predict(X).shape == (120,)


@pytest.mark.parametrize("make", EST)
def test_same_seed_same_centres(make):
    assert np.array_equal(make().fit(X).cluster_centers_, make().fit(X).cluster_centers_)


def test_su_rule_matches_formula():
    d, rho = 4, 0.225
    c = np.cbrt(4 * d * rho**2)
    assert su_count_fraction(d) == pytest.approx(c / (d + c))


def test_dplloyd_budget_and_laplace_scales():
    km = DPLloydKMeans(2, epsilon=2.0, bounds=B, init="sphere_packing", iterations=4, count_fraction=0.25,
                       l1_norm=None, random_state=0).fit(X)
    s = km.noise_scales_
    # per round epsilon/T, split 1:3; count sensitivity 1, sum sensitivity sum_j max(|lo|,|hi|) = d = 2
    assert s["eps_count"] == pytest.approx(0.5 * 0.25)
    assert s["eps_sum"] == pytest.approx(0.5 * 0.75)
    assert s["count_scale"] == pytest.approx(1 / 0.125)
    assert s["sum_scale"] == pytest.approx(2 / 0.375)
    assert km.epsilon_spent_ == pytest.approx(2.0)
    assert 4 * (s["eps_count"] + s["eps_sum"]) == pytest.approx(2.0)


def test_dplloyd_hybrid_budget_sums_to_epsilon():
    km = DPLloydKMeans(2, epsilon=1.5, bounds=B, init="grid", init_fraction=0.3, iterations=2, random_state=1).fit(X)
    s = km.noise_scales_
    assert s["eps_init"] == pytest.approx(0.45)
    assert s["eps_init"] + 2 * (s["eps_count"] + s["eps_sum"]) == pytest.approx(1.5)
    assert km.epsilon_spent_ == pytest.approx(1.5)


def test_dplloyd_sum_noise_is_laplace_with_declared_scale():
    # one cluster, one round, all records at the origin: the released centre is L_s / (200 + L_c);
    # with count scale 2 the denominator is 200 +- 1%, so 200 * centre is ~ Laplace(d / eps_s) = Laplace(4)
    Xs = np.zeros((200, 2))
    errs = []
    for s in range(300):
        km = DPLloydKMeans(1, epsilon=1.0, bounds=B, init="uniform", iterations=1, count_fraction=0.5,
                           l1_norm=None, random_state=s).fit(Xs)
        errs.append(km.history_[-1][0] * 200)
    errs = np.array(errs).ravel()
    assert km.noise_scales_["sum_scale"] == pytest.approx(4.0)
    assert np.mean(np.abs(errs)) == pytest.approx(4.0, rel=0.1)  # E|Lap(b)| = b
    assert np.var(errs) == pytest.approx(2 * 16.0, rel=0.25)


def test_dplloyd_l1_bound_shrinks_sensitivity_and_clips_records():
    Xw = np.random.default_rng(3).uniform(-1, 1, (300, 4))
    km = DPLloydKMeans(2, epsilon=1.0, bounds=B, init="sphere_packing", iterations=2, count_fraction=0.2,
                       random_state=0).fit(Xw)  # l1_norm="auto" -> d/2 = 2
    s = km.noise_scales_
    assert s["sum_sensitivity"] == 2.0
    assert s["sum_scale"] == pytest.approx(2.0 / (0.5 * 0.8))
    # independent check of the bound: a record's contribution to the sums after clipping has L1 norm <= 2
    norms = np.abs(Xw).sum(1)
    clipped = Xw * np.minimum(1.0, 2.0 / norms)[:, None]
    assert np.abs(clipped).sum(1).max() <= 2.0 + 1e-12
    with pytest.raises(DPValueError, match="l1_norm"):
        DPLloydKMeans(2, epsilon=1.0, bounds=B, l1_norm="big").fit(Xw)


def test_dplloyd_centres_clamped_to_box():
    km = DPLloydKMeans(3, epsilon=0.01, bounds=(0, 10), init="sphere_packing", iterations=3, random_state=0).fit(
        np.random.default_rng(0).uniform(0, 10, (50, 3)))
    assert np.all(km.cluster_centers_ >= 0) and np.all(km.cluster_centers_ <= 10)
    for c in km.history_:
        assert np.all(np.abs(c) <= 1)


def test_input_perturbation_scale_is_sum_of_ranges():
    assert input_perturbation_scale(epsilon=0.5, lower=[0, -2], upper=[1, 2]) == pytest.approx(10.0)
    km = InputPerturbationKMeans(2, epsilon=0.5, bounds=([0, -2], [1, 2]), random_state=0).fit(
        np.c_[np.linspace(0, 1, 100), np.linspace(-2, 2, 100)])
    # in [-1, 1]^d the sum of ranges is 2d = 4
    assert km.noise_scale_ == pytest.approx(4 / 0.5)
    noise = km.noisy_data_unit_ - np.c_[np.linspace(-1, 1, 100), np.linspace(-1, 1, 100)]
    assert np.mean(np.abs(noise)) == pytest.approx(8.0, rel=0.2)


def test_sphere_packing_is_data_independent_and_inside_box():
    c = sphere_packing_init(4, 3, rng=0)
    assert c.shape == (4, 3) and np.all(np.abs(c) <= 1)
    assert np.array_equal(c, sphere_packing_init(4, 3, rng=0))


def test_grid_init_recovers_well_separated_clusters():
    c = noisy_grid_init(X, 2, epsilon=5.0, grid_size=4, rng=0)
    assert sorted(np.round(c[:, 0], 1).tolist()) == [-0.5, 0.5] or np.all(np.abs(np.sort(c[:, 0]) - [-0.5, 0.5]) < 0.3)


def test_bad_inputs():
    with pytest.raises(DPValueError, match="epsilon"):
        DPLloydKMeans(2, epsilon=0, bounds=B).fit(X)
    with pytest.raises(DPValueError, match="epsilon"):
        InputPerturbationKMeans(2, epsilon=-1, bounds=B).fit(X)
    with pytest.raises(DPValueError, match="n_clusters"):  # Lloyd's seeding needs k rows; n is public here
        InputPerturbationKMeans(500, epsilon=1, bounds=B).fit(X)
    with pytest.raises(DPValueError, match="n_clusters"):
        LloydKMeans(500, bounds=B).fit(X)
    with pytest.raises(DPValueError, match="init"):
        DPLloydKMeans(2, epsilon=1, bounds=B, init="kmeans++").fit(X)


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_dplloyd_runs_with_more_clusters_than_rows_so_its_refusal_never_depends_on_the_private_n(neighbouring):
    # under add/remove neighbours the number of rows is private: a refusal for k > n would tell n >= k from n < k
    few = X[:3]
    for k in (3, 4, 12):
        km = DPLloydKMeans(k, epsilon=1.0, bounds=B, random_state=0, neighbouring=neighbouring).fit(few)
        assert km.cluster_centers_.shape == (k, 2)
        assert np.all(np.abs(km.cluster_centers_) <= 1.0) and km.labels_.shape == (3,)
        assert km.epsilon_spent_ == 1.0


def test_bounds_excluding_data_warn_and_clip():
    with pytest.warns(DPCoreWarning, match="clipped"):
        km = DPLloydKMeans(2, epsilon=1, bounds=(-0.2, 0.2), random_state=0).fit(X)
    assert np.all(np.abs(km.cluster_centers_) <= 0.2 + 1e-12)


def test_inferred_bounds_warn_every_time():
    for _ in range(2):
        with pytest.warns(PrivacyLeakWarning):
            LloydKMeans(2, random_state=0).fit(X)


def test_hungarian_and_variance_metrics():
    assert hungarian_accuracy([0, 0, 1, 1, 2, 2], [1, 1, 2, 2, 0, 0]) == 1.0
    assert hungarian_accuracy([0, 0, 1, 1], [0, 0, 0, 0]) == 0.5
    km = LloydKMeans(2, bounds=B, random_state=0).fit(X)
    assert hungarian_accuracy(Y, km.predict(X)) == 1.0
    icv = intra_cluster_variance(X, km.predict(X), km.cluster_centers_)
    assert 0 < icv < 0.2


def test_dplloyd_converges_to_lloyd_at_large_epsilon():
    km = DPLloydKMeans(2, epsilon=1000.0, bounds=B, random_state=0).fit(X)
    assert hungarian_accuracy(Y, km.predict(X)) == 1.0


def _round_statistics(Z, centres, l1):
    """One DPLloyd round's released statistics before noise: per-cluster counts and L1-clipped sums."""
    lab = np.argmin(((Z[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
    Zr = Z * np.minimum(1.0, l1 / np.maximum(np.abs(Z).sum(1), 1e-300))[:, None]
    counts = np.bincount(lab, minlength=len(centres)).astype(float)
    sums = np.zeros_like(centres)
    np.add.at(sums, lab, Zr)
    return counts, sums


def test_replace_one_sensitivities_hold_by_brute_force_and_add_remove_would_not():
    # independent of the estimator: move one record anywhere in the box and measure how far the statistics move
    rng = np.random.default_rng(7)
    d, l1 = 4, 2.0
    Z = rng.uniform(-1, 1, (40, d))
    centres = np.array([[-0.5] * d, [0.5] * d])
    c0, s0 = _round_statistics(Z, centres, l1)
    worst_c = worst_s = 0.0
    for _ in range(400):
        Zn = Z.copy()
        Zn[rng.integers(40)] = rng.choice([-1.0, 1.0], size=d) * rng.uniform(0.5, 1.0, size=d)
        c1, s1 = _round_statistics(Zn, centres, l1)
        worst_c, worst_s = max(worst_c, np.abs(c1 - c0).sum()), max(worst_s, np.abs(s1 - s0).sum())
    from dpcore.models.kmeans import dplloyd_sensitivities

    sc, ss = dplloyd_sensitivities(n_features=d, l1_norm=l1, neighbouring="replace-one")
    assert (sc, ss) == (2.0, 4.0)
    assert worst_c <= sc and worst_s <= ss + 1e-12
    assert worst_c > 1.0 and worst_s > l1  # the add/remove sensitivities (1, R) are exceeded by a replacement
    assert dplloyd_sensitivities(n_features=d, l1_norm=l1) == (1.0, 2.0)


def test_replace_one_doubles_every_noise_scale_and_keeps_the_budget():
    kw = dict(epsilon=1.5, bounds=B, init="grid", init_fraction=0.3, iterations=2, count_fraction=0.25,
              random_state=1)
    ar = DPLloydKMeans(2, **kw).fit(X)
    ro = DPLloydKMeans(2, neighbouring="replace-one", **kw).fit(X)
    for key in ("count_scale", "sum_scale", "count_sensitivity", "sum_sensitivity"):
        assert ro.noise_scales_[key] == pytest.approx(2 * ar.noise_scales_[key])
    assert ro.epsilon_spent_ == pytest.approx(1.5) == ar.epsilon_spent_
    import dp_accounting

    # the event's noise multipliers (scale / sensitivity) are unchanged: same epsilon, under the other relation
    assert str(ro.dp_event_) == str(ar.dp_event_)
    with pytest.raises(DPValueError, match="neighbouring"):
        DPLloydKMeans(2, epsilon=1.0, bounds=B, neighbouring="swap").fit(X)
    assert isinstance(ro.dp_event_, dp_accounting.ComposedDpEvent)


class _LaplaceSpy(np.random.Generator):
    """A generator that records the scale of every Laplace draw (the noise the code really adds)."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.scales = []

    def laplace(self, loc=0.0, scale=1.0, size=None):
        self.scales.append(float(scale))
        return super().laplace(loc, scale, size)


@pytest.mark.parametrize("neighbouring, sensitivity", [("add-remove", 1.0), ("replace-one", 2.0)])
def test_grid_histogram_and_rounds_draw_noise_at_the_declared_scales(neighbouring, sensitivity):
    spy = _LaplaceSpy(0)
    noisy_grid_init(np.zeros((10, 2)), 2, epsilon=0.5, grid_size=3, rng=spy, sensitivity=sensitivity)
    assert spy.scales == [sensitivity / 0.5]  # one histogram release, Lap(sensitivity / eps)
    spy = _LaplaceSpy(0)
    km = DPLloydKMeans(2, epsilon=1.0, bounds=B, init="grid", init_fraction=0.4, iterations=1, count_fraction=0.5,
                       l1_norm=None, neighbouring=neighbouring, random_state=spy).fit(X)
    # grid with eps 0.4, then one round of counts (eps 0.3) and sums (eps 0.3, d = 2 per record)
    assert spy.scales == pytest.approx([sensitivity / 0.4, sensitivity / 0.3, sensitivity * 2 / 0.3])
    assert km.epsilon_spent_ == pytest.approx(1.0)


def test_more_clusters_than_grid_cells():
    Xw = np.random.default_rng(0).uniform(-1, 1, (200, 2))  # 3^2 = 9 grid cells
    km = DPLloydKMeans(12, epsilon=1.0, bounds=B, random_state=0).fit(Xw)
    assert km.init_ == "sphere_packing" and km.cluster_centers_.shape == (12, 2)
    with pytest.raises(DPValueError, match="grid_size"):
        DPLloydKMeans(12, epsilon=1.0, bounds=B, init="grid", random_state=0).fit(Xw)


def _sequential_packing(k, d, seed, shrink=0.9, max_trials=10):
    """Su et al.'s sphere packing written as the plain one-candidate-at-a-time loop, same candidate draws."""
    rng = np.random.default_rng(seed)
    a = 1.0 / k ** (1.0 / d)
    while True:
        a *= shrink
        for _ in range(max_trials):
            cand = rng.uniform(-1.0 + a, 1.0 - a, size=(50 * k, d))
            centers = []
            for c in cand:
                if all(np.linalg.norm(c - o) >= 2.0 * a for o in centers):
                    centers.append(c)
                    if len(centers) == k:
                        return np.array(centers), a
            if len(centers) < 0.9 * k:
                break


@pytest.mark.parametrize("k, d", [(3, 4), (12, 4), (5, 30), (60, 2), (40, 200)])
def test_sphere_packing_equals_the_sequential_rule(k, d):
    ref, a = _sequential_packing(k, d, seed=k + d)
    got = sphere_packing_init(k, d, rng=np.random.default_rng(k + d))
    np.testing.assert_array_equal(got, ref)
    gaps = np.linalg.norm(got[:, None] - got[None], axis=-1)[np.triu_indices(k, 1)]
    assert gaps.min() >= 2 * a - 1e-12 and np.all(np.abs(got) <= 1 - a + 1e-12)


@pytest.mark.parametrize("rho", [1e-300, 1e-200, 1e200, 1e300])
def test_su_rule_at_an_extreme_rho_gives_a_share_or_a_reason_never_a_traceback(rho):
    # (4 d rho^2)^(1/3) squared rho first: rho = 1e-300 gave a share of 0 (ZeroDivisionError in the round's
    # budget), rho = 1e300 an OverflowError. The rule's share is (4 d)^(1/3) rho^(2/3) / (d + ...) (Su et al. 2016).
    d = 4
    c = np.cbrt(4.0 * d) * rho ** (2.0 / 3.0)
    expected = c / (d + c)
    if 0.0 < expected < 1.0:
        assert su_count_fraction(d, rho) == pytest.approx(expected, rel=1e-12)
    else:
        with pytest.raises(DPValueError, match="rho"):
            su_count_fraction(d, rho)
    try:
        km = DPLloydKMeans(2, epsilon=1.0, bounds=B, rho=rho, random_state=0).fit(X)
    except DPValueError as e:  # a share so small its noise overflows, or none left for the sums: said so
        assert "rho" in str(e) or "noise of scale" in str(e)
    else:
        assert km.epsilon_spent_ == pytest.approx(1.0)


@pytest.mark.parametrize("cls", [LloydKMeans, DPLloydKMeans, InputPerturbationKMeans])
def test_kmeans_scores_as_scikit_learns_so_cross_validation_can_compare_fits(cls):
    # cross_val_score(DPLloydKMeans(...), X) said "the estimator passed should have a 'score' method"
    from sklearn.model_selection import cross_val_score

    g = np.random.default_rng(0)
    X = np.vstack([g.normal(-0.5, 0.1, size=(60, 2)), g.normal(0.5, 0.1, size=(60, 2))])
    km = cls(n_clusters=2, bounds=(-1, 1), random_state=0).fit(X)
    assert km.score(X) == pytest.approx(-km.inertia_)
    assert km.score(X[:60]) + km.score(X[60:]) == pytest.approx(km.score(X))  # a sum over the rows given
    assert cross_val_score(cls(n_clusters=2, bounds=(-1, 1), random_state=0), X, cv=3).shape == (3,)


def test_dplloyd_reports_at_least_the_exact_sum_of_what_its_rounds_spend():
    """The rounds spend eps_count and eps_sum each (and the grid its eps_init): the epsilon reported is at or above
    their exact sum (basic composition). Added in floating point, epsilon 0.9388809398100537 over 8 rounds with a
    count share of 0.17 reported a unit in the last place below it."""
    from fractions import Fraction

    X = np.random.default_rng(0).uniform(0, 1, (200, 3))
    for eps, T, init, share in [(0.9388809398100537, 8, "sphere_packing", 0.17), (0.7, 7, "grid", 0.3),
                                (3.3, 10, "grid", None), (0.1, 3, "sphere_packing", None)]:
        km = DPLloydKMeans(3, epsilon=eps, bounds=(0, 1), random_state=0, iterations=T, init=init,
                           count_fraction=share).fit(X)
        s = km.noise_scales_
        exact = Fraction(s["eps_init"]) + T * Fraction(s["eps_count"]) + T * Fraction(s["eps_sum"])
        assert Fraction(km.epsilon_spent_) >= exact
        assert km.epsilon_spent_ == pytest.approx(eps, rel=1e-12)
