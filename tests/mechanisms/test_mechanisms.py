"""Contract and statistical tests for every registered mechanism."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpcore.accounting import epsilon_of_event, make_accountant
from dpcore.exceptions import DPCoreError
from dpcore.mechanisms import (
    MECHANISMS,
    Exponential,
    Gaussian,
    L2LaplaceVector,
    Laplace,
    NoiseMultiplierGaussian,
    RandomizedResponse,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    create_mechanism,
)

GOOD = {
    "laplace": dict(epsilon=0.7, sensitivity=2.0),
    "gaussian": dict(epsilon=0.7, delta=1e-5, sensitivity=2.0),
    "randomized_response": dict(epsilon=0.7, k=4),
    "exponential": dict(epsilon=0.7, sensitivity=1.0),
    "l2_laplace_vector": dict(epsilon=0.7, sensitivity=2.0),
}
INPUTS = {
    "laplace": np.arange(6.0),
    "gaussian": np.arange(6.0),
    "randomized_response": np.array([0, 1, 2, 3, 0, 1]),
    "exponential": np.array([0.0, 1.0, 3.0]),
    "l2_laplace_vector": np.arange(6.0).reshape(2, 3),
}


def test_registry_is_covered():
    assert set(GOOD) == set(MECHANISMS)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("bad_eps", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon_raises_with_parameter_name(name, bad_eps):
    kw = dict(GOOD[name], epsilon=bad_eps)
    with pytest.raises(DPCoreError, match="epsilon"):
        create_mechanism(name, **kw)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_wrong_type_is_type_error(name):
    with pytest.raises(TypeError):
        create_mechanism(name, **dict(GOOD[name], epsilon="one"))


def test_unknown_mechanism():
    with pytest.raises(DPCoreError, match="unknown mechanism"):
        create_mechanism("nope", epsilon=1.0)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_same_seed_same_output(name):
    m = create_mechanism(name, **GOOD[name])
    a = m.randomise(INPUTS[name], rng=42)
    b = m.randomise(INPUTS[name], rng=42)
    c = m.randomise(INPUTS[name], rng=43)
    np.testing.assert_array_equal(a, b)
    if name != "exponential":
        assert not np.array_equal(a, c)


@pytest.mark.parametrize("name", ["laplace", "gaussian", "l2_laplace_vector"])
def test_vectorised_shape_and_scalar(name):
    m = create_mechanism(name, **GOOD[name])
    out = m.randomise(np.zeros((3, 4, 5)), rng=0)
    assert out.shape == (3, 4, 5)
    assert isinstance(m.randomise(1.0, rng=0), float)


@pytest.mark.parametrize("name", ["laplace", "gaussian"])
def test_empirical_variance_matches_formula(name):
    m = create_mechanism(name, **GOOD[name])
    x = m.randomise(np.zeros(200_000), rng=1)
    # variance of the sample variance is ~ 2 sigma^4 / n (Gaussian) and larger for Laplace: 3% is > 5 SE
    assert abs(np.var(x) / m.variance() - 1) < 0.03
    assert abs(np.mean(x)) < 5 * math.sqrt(m.variance() / x.size)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_event_supported_by_both_accountants(name, accountant):
    m = create_mechanism(name, **GOOD[name])
    # randomized response, and the binary randomized response that bounds the pure-epsilon exponential and
    # L2 Laplace mechanisms, are read by dp_accounting under replace-one only
    relation = "replace_one" if name in ("randomized_response", "exponential", "l2_laplace_vector") else "add_remove"
    acc = make_accountant(accountant, neighbouring=relation)
    assert acc.supports(m.dp_event)
    acc.compose(m.dp_event)
    eps = acc.get_epsilon(1e-6)
    assert eps <= m.epsilon * 1.05 + 1e-3 or name == "gaussian"


def test_laplace_scale_and_density():
    m = Laplace(epsilon=0.5, sensitivity=2.0)
    assert m.scale == pytest.approx(4.0)
    x = np.linspace(-20, 20, 11)
    np.testing.assert_allclose(m.density(x), stats.laplace(scale=4.0).pdf(x))


def test_laplace_samples_follow_laplace_distribution():
    m = Laplace(epsilon=0.5, sensitivity=2.0)
    x = m.randomise(np.zeros(20_000), rng=3)
    assert stats.kstest(x, stats.laplace(scale=4.0).cdf).pvalue > 0.001


def test_laplace_neighbouring_outputs_respect_e_epsilon():
    """Histogram the outputs on neighbouring inputs (0 and the sensitivity); every bin ratio <= e^eps (+ noise)."""
    eps = 1.0
    m = Laplace(epsilon=eps, sensitivity=1.0)
    n = 400_000
    a = m.randomise(np.zeros(n), rng=10)
    b = m.randomise(np.ones(n), rng=11)
    bins = np.linspace(-3, 4, 15)
    ha, _ = np.histogram(a, bins)
    hb, _ = np.histogram(b, bins)
    ratio = np.maximum(ha / hb, hb / ha)
    # each bin has >= ~4000 samples: relative error of a ratio < ~4% at 2 SE
    assert ratio.max() <= math.exp(eps) * 1.06
    # and the bound is nearly attained (the mechanism is not over-noised)
    assert ratio.max() >= math.exp(eps) * 0.85


def test_randomized_response_neighbouring_ratio():
    eps = math.log(3)
    rr = RandomizedResponse(epsilon=eps, k=3)
    n = 300_000
    a = np.bincount(rr.randomise(np.zeros(n, dtype=int), rng=1), minlength=3) / n
    b = np.bincount(rr.randomise(np.ones(n, dtype=int), rng=2), minlength=3) / n
    ratio = np.maximum(a / b, b / a)
    assert ratio.max() == pytest.approx(3.0, rel=0.03)
    assert a[0] == pytest.approx(rr.p_keep, abs=0.005)


def test_randomized_response_golden_ln11():
    """dp_accounting's RR(p=0.5, k=10) under replace-one is ln 11; our parametrisation matches."""
    acc = make_accountant("pld", neighbouring="replace_one")
    acc.compose(dp_accounting.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=10))
    assert acc.get_epsilon(0.0) == pytest.approx(math.log(11), abs=1e-3)
    rr = RandomizedResponse(epsilon=math.log(11), k=10)
    assert rr.noise_parameter == pytest.approx(0.5)
    assert rr.p_keep == pytest.approx(0.55)


@pytest.mark.parametrize("eps", [0.01, 0.3, 1.0, 100.0, 700.0, 701.0, 1e4])
def test_a_pure_epsilon_mechanisms_event_never_states_less_than_its_epsilon(eps):
    # the bounding randomized response was capped at epsilon 700: Exponential(epsilon=800) composed as 700; and its
    # answer-at-random probability 2 / (e^eps + 1) rounded up in double precision read 0.009999999999999785 for 0.01
    for mech in (Exponential(epsilon=eps), L2LaplaceVector(epsilon=eps)):
        for accountant in ("rdp", "pld"):
            spent = epsilon_of_event(mech.dp_event, delta=0.0, accountant=accountant, neighbouring="replace-one")
            assert spent >= eps, (type(mech).__name__, accountant, spent)


class _FixedUniform(np.random.Generator):
    """A numpy generator whose uniform draws are all ``u`` (numpy's random() draws multiples of 2**-53 in [0, 1))."""

    def __init__(self, u: float) -> None:
        super().__init__(np.random.PCG64(0))
        self.u = u

    def random(self, size=None, dtype=np.float64, out=None):
        return np.full(size, self.u)


@pytest.mark.parametrize("eps", [40.0, 100.0, 800.0])
def test_randomized_response_at_a_large_epsilon_still_changes_some_answers(eps):
    """1 - p_keep rounds to 0 from epsilon ~37: a draw compared with p_keep kept every answer (epsilon infinite
    where epsilon was reported). The least draw numpy can give (0.0, probability 2**-53) must change the answer, and
    the keep probability the 2**-53 grid gives must stay within e^eps of a given other answer's."""
    rr = RandomizedResponse(epsilon=eps, k=2)
    assert rr.randomise(np.zeros(4, dtype=int), rng=_FixedUniform(0.0)).tolist() == [1, 1, 1, 1]
    assert rr.randomise(np.zeros(4, dtype=int), rng=_FixedUniform(2.0**-53)).tolist() == [0, 0, 0, 0]
    grid = 2.0**53
    p_change = math.ceil(rr.p_change * grid) / grid  # P(u < p_change) for u uniform on the grid
    assert math.log((1 - p_change) / p_change) <= eps


def test_randomized_response_keeps_no_more_often_than_its_epsilon_allows_on_the_uniform_grid():
    for eps in [0.1, 1.0, 10.0, 30.0, 35.0, 36.0]:
        for k in [2, 10]:
            rr = RandomizedResponse(epsilon=eps, k=k)
            for grid in (2.0**53, 2.0**52):  # numpy's random(), and secure mode's
                p_other = math.ceil(rr.p_change * grid) / grid / (k - 1)
                assert math.log((1 - p_other * (k - 1)) / p_other) <= eps * (1 + 1e-12), (eps, k, grid)


def test_randomized_response_rejects_out_of_range_values():
    with pytest.raises(DPCoreError, match="integers in"):
        RandomizedResponse(epsilon=1.0, k=3).randomise([0, 5], rng=0)


def test_gaussian_classic_formula_and_validity():
    s = classic_gaussian_sigma(epsilon=0.5, delta=1e-5, sensitivity=2.0)
    assert s == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5)
    with pytest.raises(DPCoreError, match="epsilon < 1"):
        Gaussian(epsilon=1.5, delta=1e-5, calibration="classic")
    with pytest.raises(DPCoreError, match="delta"):
        Gaussian(epsilon=0.5, delta=0.0)


@pytest.mark.parametrize("eps", [0.1, 0.5, 0.99, 2.0, 8.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_analytic_gaussian_is_tight_and_never_worse(eps, delta):
    s = analytic_gaussian_sigma(epsilon=eps, delta=delta, sensitivity=1.5)
    # exactly attains delta (Balle & Wang Thm 8) ...
    assert analytic_gaussian_delta(sigma=s, epsilon=eps, sensitivity=1.5) <= delta
    assert analytic_gaussian_delta(sigma=s * 0.99, epsilon=eps, sensitivity=1.5) > delta
    # ... and never needs more noise than the classic bound where that one is valid
    if eps < 1:
        assert s <= classic_gaussian_sigma(epsilon=eps, delta=delta, sensitivity=1.5)


def test_analytic_gaussian_against_dp_accounting():
    """Independent check: dp_accounting's PLD of a single Gaussian gives the same epsilon."""
    s = analytic_gaussian_sigma(epsilon=1.0, delta=1e-5)
    acc = make_accountant("pld")
    acc.compose(dp_accounting.GaussianDpEvent(s))
    assert acc.get_epsilon(1e-5) == pytest.approx(1.0, abs=0.01)


def test_exponential_probabilities_and_sampling():
    m = Exponential(epsilon=2.0, sensitivity=1.0)
    u = np.array([0.0, 1.0, 2.0])
    p = m.probabilities(u)
    np.testing.assert_allclose(p, np.exp(u) / np.exp(u).sum())
    draws = np.array([m.randomise(u, rng=i) for i in range(3000)])
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 3000, p, atol=0.03)


def test_l2_laplace_norm_is_gamma_and_direction_uniform():
    """||b|| ~ Gamma(d, sensitivity / epsilon) and b / ||b|| uniform on the sphere (Chaudhuri et al. 2011, eq. 4)."""
    m = L2LaplaceVector(epsilon=2.0, sensitivity=1.4)
    b = m.randomise(np.zeros((4000, 5)), rng=1)
    norms = np.linalg.norm(b, axis=1)
    assert stats.kstest(norms, stats.gamma(a=5, scale=0.7).cdf).pvalue > 0.01
    dirs = m.randomise(np.zeros((4000, 3)), rng=2)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    assert np.abs(dirs.mean(0)).max() < 0.05  # mean of a uniform direction is 0 (SE ~ 0.009)
    # uniform on the sphere in R^3: each coordinate is uniform on [-1, 1] (Archimedes)
    assert stats.kstest(dirs[:, 0], stats.uniform(loc=-1, scale=2).cdf).pvalue > 0.01


def test_l2_laplace_per_coordinate_variance_and_one_dimension_is_laplace():
    m = L2LaplaceVector(epsilon=0.5, sensitivity=1.0)
    b = m.randomise(np.zeros((100_000, 4)), rng=3)
    assert np.var(b) / m.variance(dim=4) == pytest.approx(1.0, abs=0.03)
    one = m.randomise(np.zeros((20_000, 1)), rng=4).ravel()
    assert stats.kstest(one, stats.laplace(scale=2.0).cdf).pvalue > 0.01
    assert m.variance() == Laplace(epsilon=0.5).variance()


def test_l2_laplace_neighbouring_outputs_respect_e_epsilon():
    """Outputs on two inputs at L2 distance = sensitivity: every 2-D histogram bin ratio <= e^eps (+ noise)."""
    eps = 1.0
    m = L2LaplaceVector(epsilon=eps, sensitivity=1.0)
    n = 600_000
    a = m.randomise(np.zeros((n, 2)), rng=10)
    b = m.randomise(np.tile([0.6, 0.8], (n, 1)), rng=11)  # ||(0.6, 0.8)|| = 1
    edges = np.linspace(-2.0, 3.0, 11)
    ha, _, _ = np.histogram2d(a[:, 0], a[:, 1], [edges, edges])
    hb, _, _ = np.histogram2d(b[:, 0], b[:, 1], [edges, edges])
    ok = (ha > 2000) & (hb > 2000)  # relative error of a ratio of two such counts < ~5% at 2 SE
    ratio = np.maximum(ha[ok] / hb[ok], hb[ok] / ha[ok])
    assert ratio.max() <= math.exp(eps) * 1.07
    assert ratio.max() >= math.exp(eps) * 0.85  # nearly attained: not over-noised (twice the noise gives ~0.63)


def test_l2_laplace_empty_and_bad_input():
    m = L2LaplaceVector(epsilon=1.0)
    assert m.randomise(np.zeros((3, 0)), rng=0).shape == (3, 0)
    with pytest.raises(DPCoreError, match="sensitivity"):
        L2LaplaceVector(epsilon=1.0, sensitivity=0.0)
    with pytest.raises(DPCoreError, match="at least one axis"):
        m.noise((), rng=0)


def test_noise_multiplier_gaussian_std_event_and_epsilon():
    g = NoiseMultiplierGaussian(noise_multiplier=1.5, sensitivity=2.0)
    assert g.sigma == 3.0 and g.dp_event == dp_accounting.GaussianDpEvent(1.5)
    x = g.randomise(np.zeros(200_000), rng=5)
    assert np.std(x) == pytest.approx(3.0, rel=0.01)
    np.testing.assert_array_equal(g.randomise(np.arange(4.0), rng=6), g.randomise(np.arange(4.0), rng=6))
    assert isinstance(g.randomise(1.0, rng=0), float)
    # epsilon at delta: dp_accounting's PLD of the same Gaussian is the independent reference
    acc = make_accountant("pld")
    acc.compose(g.dp_event)
    assert g.epsilon_at(1e-5) == pytest.approx(acc.get_epsilon(1e-5), rel=0.01)
    assert g.privacy(1e-5) == (g.epsilon_at(1e-5), 1e-5)
    # and the analytic Gaussian calibrated to that epsilon needs exactly this multiplier
    assert analytic_gaussian_sigma(epsilon=g.epsilon_at(1e-5), delta=1e-5) == pytest.approx(1.5, rel=1e-6)
    with pytest.raises(TypeError, match="delta"):
        g.privacy()


@pytest.mark.parametrize("field, bad", [("noise_multiplier", 0.0), ("noise_multiplier", -1.0),
                                        ("sensitivity", 0.0), ("noise_multiplier", float("nan"))])
def test_noise_multiplier_gaussian_rejects_bad_parameters(field, bad):
    kw = {"noise_multiplier": 1.0, "sensitivity": 1.0, field: bad}
    with pytest.raises(DPCoreError, match=field):
        NoiseMultiplierGaussian(**kw)


@pytest.mark.parametrize("k", [10, 1000, 10**6, 10**9])
def test_randomized_response_releases_and_accounts_its_epsilon_exactly_not_to_double_precision(k):
    """In double precision e^1e-12 + 999,999 is 1,000,000: p_change rounded DOWN, and at k = 10^6 the answers
    released at epsilon 1e-12 were 2.9e-11-DP while the ledger read the event (noise parameter 1.0) as epsilon 0; at
    k = 10^9 and epsilon 0.5 the ledger said 0.49999995 of answers that were 0.5000000006-DP. Checked exactly: the
    ratio P(keep) / P(a given other answer) of the released draws (uniform on the 2**-53 and 2**-52 grids) is at most
    e^eps, and the epsilon the ledger reads from the event is at least the one spent."""
    from decimal import Decimal, localcontext
    from fractions import Fraction

    for eps in [1e-12, 1e-6, 0.01, 0.5, 1.0, math.log(11), 5.0, 30.0]:
        rr = RandomizedResponse(epsilon=eps, k=k)
        spent = epsilon_of_event(rr.dp_event, delta=0.0, neighbouring="replace-one")
        with localcontext() as ctx:
            ctx.prec = 60
            assert Decimal(spent) >= Decimal(eps), (eps, spent)
            for grid in (2**53, 2**52):
                changed = math.ceil(Fraction(rr.p_change) * grid)
                ratio = Fraction(grid - changed, grid) / (Fraction(changed, grid) / (k - 1))
                assert Decimal(ratio.numerator) / Decimal(ratio.denominator) <= Decimal(eps).exp(), (eps, grid)


@pytest.mark.parametrize("mech", [Laplace(epsilon=1.0), Gaussian(epsilon=1.0, delta=1e-5),
                                  L2LaplaceVector(epsilon=1.0, sensitivity=1.0)],
                         ids=["laplace", "gaussian", "l2-laplace"])
@pytest.mark.parametrize("answer", [math.nan, [1.0, math.inf]], ids=["nan", "inf"])
def test_a_seeded_release_of_an_answer_that_is_not_finite_is_refused_as_a_secure_one_is(mech, answer):
    # NaN plus noise came back NaN: the release told that the data made the answer NaN, under any epsilon
    with pytest.raises(DPCoreError, match=r"NaN or infinite value\(s\): noise cannot hide them"):
        mech.randomise(answer, rng=0)
    with pytest.raises(DPCoreError, match="must be finite"):
        mech.randomise(answer, rng="secure")


def test_randomized_response_event_covers_the_answers_drawn_at_a_tiny_epsilon():
    """The answers change with p_change rounded up to the draws' grid (2**-52 at the coarsest): below epsilon ~1e-15
    that is above (k - 1) / k, and another answer is likelier than the true one by a ratio r > 1. The event's epsilon
    (Warner 1965; Kairouz et al. 2014: ln(1 + k (1 - p) / p)) is at least ln r, worked out here in rationals. It was
    0 below epsilon 1e-49 (e^eps read as 1 in 50 digits) and a hair below ln r above it (3.3e-16 at k = 3)."""
    from decimal import Decimal, localcontext
    from fractions import Fraction

    from dpcore.accounting.events import atom_pure_epsilon

    for k in (2, 3, 7, 1000):
        for eps in (1e-300, 1e-40, 1e-17, 1e-15, 1e-12, 0.5):
            rr = RandomizedResponse(epsilon=eps, k=k)
            for grid in (Fraction(1, 2**52), Fraction(1, 2**53)):
                drawn = math.ceil(Fraction(rr.p_change) / grid) * grid
                keep, other = 1 - drawn, drawn / (k - 1)
                ratio = max(keep / other, other / keep)
                with localcontext() as ctx:
                    ctx.prec = 80
                    spent = (Decimal(ratio.numerator) / Decimal(ratio.denominator)).ln()
                assert Decimal(atom_pure_epsilon(rr.dp_event)) >= spent, (k, eps)
            assert atom_pure_epsilon(rr.dp_event) >= eps
