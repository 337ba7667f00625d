"""Secure mode: every mechanism, learner and DP-SGD step drawing from the OS's source onto a grid.

The draws are not seeded; each statistical check uses a threshold a correct sampler fails with probability
below 1e-6.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from scipy import stats

from dpcore.audit.floating_point import floating_point_attack
from dpcore.exceptions import DPValueError
from dpcore.learners import run_learner
from dpcore.mechanisms import (
    Exponential,
    Gaussian,
    L2LaplaceVector,
    Laplace,
    NoiseMultiplierGaussian,
    RandomizedResponse,
)
from dpcore.mechanisms.additive import GRID_PER_SCALE, SecureGaussianStream, secure_grid
from dpcore.rng import SECURE, SecureRandom, as_generator, secure_active, secure_noise
from dpcore.training import make_clipper
from dpcore.training.sampling import PoissonSampler
from dpcore.training.step import PrivateGradient


def test_secure_uniforms_reach_every_binade_in_proportion():
    """P[U < 2^-k] = 2^-k for a full-precision uniform; a 53-bit uniform never goes below 2^-53."""
    u = SecureRandom().uniform_positive(2_000_000)
    assert ((u > 0) & (u < 1)).all()
    for k in (1, 4, 8, 12, 14):
        expected = u.size * 2.0**-k
        assert abs(np.sum(u < 2.0**-k) - expected) <= 5.5 * math.sqrt(expected)
    # inside one binade the mantissa is uniform
    top = u[u >= 0.5]
    assert stats.kstest(top, stats.uniform(0.5, 0.5).cdf).pvalue > 1e-6


def test_a_uniform_below_two_to_the_minus_twelve_is_redrawn_finer_from_fresh_words(monkeypatch):
    words = iter([np.array([np.uint64(5)]), np.array([np.uint64(2**60 + 2**12)])])
    monkeypatch.setattr(SecureRandom, "words", staticmethod(lambda n: next(words)))
    u = SecureRandom().uniform_positive(1)  # first 52 bits: 0 (below 2^-12); then 2^-4 + 2^-52, scaled by 2^-12
    assert u[0] == (2.0**-4 + 2.0**-52) * 2.0**-12


@pytest.mark.parametrize("draw,dist", [
    (lambda r: r.standard_normal(20000), stats.norm()),
    (lambda r: r.laplace(1.0, 2.0, size=20000), stats.laplace(1.0, 2.0)),
    (lambda r: r.exponential(3.0, size=20000), stats.expon(scale=3.0)),
    (lambda r: r.gamma(4, 0.5, size=20000), stats.gamma(4, scale=0.5)),
    (lambda r: r.random(20000), stats.uniform()),
])
def test_secure_draws_follow_their_laws(draw, dist):
    assert stats.kstest(draw(SecureRandom()), dist.cdf).pvalue > 1e-6


def test_secure_integers_are_uniform_and_in_range():
    r = SecureRandom()
    x = r.integers(3, 10, size=70000)
    assert x.min() >= 3 and x.max() <= 9
    assert stats.chisquare(np.bincount(x - 3, minlength=7)).pvalue > 1e-6
    assert sorted(r.permutation(50).tolist()) == list(range(50))
    picks = r.choice(4, size=40000, p=[0.1, 0.2, 0.3, 0.4])
    assert stats.chisquare(np.bincount(picks, minlength=4), 40000 * np.array([0.1, 0.2, 0.3, 0.4])).pvalue > 1e-6


def test_secure_randomness_cannot_be_reproduced():
    assert isinstance(as_generator(SECURE), SecureRandom)
    assert not np.array_equal(SecureRandom().words(4), SecureRandom().words(4))
    a = Laplace(epsilon=1.0).randomise(np.zeros(8), rng=SECURE)
    b = Laplace(epsilon=1.0).randomise(np.zeros(8), rng=SECURE)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("mech,norm,sens,scale,var", [
    (Laplace(epsilon=0.5, sensitivity=2.0), 1, 2.0, 4.0, lambda s: 2 * s**2),
    (Gaussian(epsilon=1.0, delta=1e-5, sensitivity=3.0), 2, 3.0, None, lambda s: s**2),
    (NoiseMultiplierGaussian(noise_multiplier=1.5, sensitivity=2.0), 2, 2.0, 3.0, lambda s: s**2),
])
def test_secure_releases_land_on_the_grid_with_the_stated_noise(mech, norm, sens, scale, var):
    scale = mech.sigma if scale is None else scale
    x = np.full(20000, 7.3)
    out = mech.randomise(x, rng=SECURE)
    grid = secure_grid(sensitivity=sens, scale=scale, coordinates=x.size, norm=norm)
    assert np.all(out / grid.granularity == np.rint(out / grid.granularity))  # every output a grid point
    assert math.frexp(grid.granularity)[0] == 0.5  # a power of two
    noise = out - np.rint(7.3 / grid.granularity) * grid.granularity
    s = scale * grid.scale_increase
    # rounding to a grid of 1/1000 of the scale adds g²/12 of variance: invisible at this sample size
    target = stats.laplace(scale=s) if norm == 1 else stats.norm(scale=s)
    assert stats.kstest(noise, target.cdf).pvalue > 1e-6
    assert abs(noise.var() / var(s) - 1) < 0.1


def test_the_grid_costs_a_tenth_of_a_percent_unless_the_vector_is_very_long():
    """The grid is Δ/(1024 m) (L1) or Δ/(1024 √m) (L2), floored at 2^-24 noise scales; the cost is stated."""
    g = secure_grid(sensitivity=1.0, scale=1.0, coordinates=10, norm=1)
    assert g.granularity <= 1.0 / (1024 * 10) and g.scale_increase <= 1 + 1 / 1024
    g2 = secure_grid(sensitivity=1.0, scale=0.5, coordinates=10_000, norm=2)
    assert g2.granularity <= 1.0 / (1024 * 100) and g2.scale_increase == pytest.approx(1 + 100 * g2.granularity)
    long = secure_grid(sensitivity=1.0, scale=1.0, coordinates=10**7, norm=1)  # the floor binds
    assert long.granularity >= GRID_PER_SCALE and long.scale_increase == pytest.approx(1 + 10**7 * long.granularity)


def test_mironovs_attack_finds_nothing_in_the_secure_mode_of_the_library_laplace():
    textbook = floating_point_attack(Laplace(epsilon=1.0), releases=1000)
    secure = floating_point_attack(Laplace(epsilon=1.0), releases=1000, secure=True)
    assert textbook.breaks_claim and textbook.certain_when_x > 500
    assert secure.certain_when_x == 0 and not secure.breaks_claim


def test_the_attack_would_see_a_release_off_the_secure_grid():
    """The secure-mode check is not vacuous: a release off the grid, or beyond the sampler's range, is caught."""
    from dpcore.audit.floating_point import _reachable

    m = Laplace(epsilon=1.0)
    g = secure_grid(sensitivity=1.0, scale=1.0, coordinates=1, norm=1).granularity
    assert _reachable(m, 5 * g, 0.0, secure=True)
    assert not _reachable(m, 5 * g + g / 3, 0.0, secure=True)
    assert not _reachable(m, 1000.0, 0.0, secure=True)


def test_discrete_mechanisms_draw_from_the_secure_source(monkeypatch):
    calls = []
    real = SecureRandom.words
    monkeypatch.setattr(SecureRandom, "words", staticmethod(lambda n: calls.append(n) or real(n)))
    RandomizedResponse(epsilon=1.0, k=3).randomise([0, 1, 2], rng=SECURE)
    Exponential(epsilon=1.0).randomise([1.0, 2.0], rng=SECURE)
    out = L2LaplaceVector(epsilon=1.0, sensitivity=1.0).randomise(np.zeros((2, 3)), rng=SECURE)
    assert len(calls) >= 3 and out.shape == (2, 3)


def test_randomized_response_in_secure_mode_keeps_the_true_answer_at_the_stated_rate():
    rr = RandomizedResponse(epsilon=1.0, k=4)
    out = rr.randomise(np.zeros(40000, dtype=int), rng=SECURE)
    n, p = out.size, rr.p_keep
    assert abs(np.sum(out == 0) - n * p) <= 5.5 * math.sqrt(n * p * (1 - p))


def test_inside_secure_mode_a_seeded_generator_does_not_fix_the_noise_and_the_mode_ends_with_the_block():
    with secure_noise():
        assert secure_active()
        a = Laplace(epsilon=1.0).randomise(np.zeros(4), rng=0)
        b = Laplace(epsilon=1.0).randomise(np.zeros(4), rng=0)
        assert not np.array_equal(a, b)
        assert isinstance(PoissonSampler(10, sample_rate=0.5, rng=0).rng, SecureRandom)  # secret batches
    assert not secure_active()
    np.testing.assert_array_equal(Laplace(epsilon=1.0).randomise(np.zeros(4), rng=0),
                                  Laplace(epsilon=1.0).randomise(np.zeros(4), rng=0))


def test_a_secure_dpsgd_step_adds_noise_of_sigma_c_over_l_on_a_grid():
    """An empty batch releases pure noise: N(0, (σ C / L)²) per coordinate, widened by the stated grid cost."""
    model = torch.nn.Linear(50, 4)
    with secure_noise():
        step = PrivateGradient(model, make_clipper(model), task="classification", clip_norm=2.0,
                               noise_multiplier=1.5, expected_batch_size=8.0, generator=torch.Generator())
    assert step.secure
    draws = []
    for _ in range(60):
        step(torch.zeros(0, 50), torch.zeros(0, dtype=torch.long))
        draws.append(torch.cat([p.grad.reshape(-1) for p in step.params]).double().numpy() * 8.0)
    z = np.concatenate(draws)
    grid = secure_grid(sensitivity=2.0, scale=3.0, coordinates=z.size // 60, norm=2)
    assert np.allclose(z / grid.granularity, np.rint(z / grid.granularity), atol=1e-3)  # on the grid (float32 store)
    assert stats.kstest(z, stats.norm(scale=3.0 * grid.scale_increase).cdf).pvalue > 1e-6


def test_a_noise_stream_drawn_in_blocks_gives_independent_releases_across_refills():
    """Small blocks force refills: every release still carries N(0, (σ·increase)²) on the grid, and consecutive
    releases are uncorrelated (the blocks are used once, one vector at a time)."""
    stream = SecureGaussianStream(sigma=1.5, sensitivity=1.0, size=40, block_values=120)  # 3 vectors per block
    g = stream.grid.granularity
    releases = np.stack([stream.release(torch.zeros(40, dtype=torch.float64)).numpy() for _ in range(600)])
    assert np.array_equal(releases / g, np.rint(releases / g))
    assert stats.kstest(releases.ravel(), stats.norm(scale=1.5 * stream.grid.scale_increase).cdf).pvalue > 1e-6
    r = np.corrcoef(releases[:-1].ravel(), releases[1:].ravel())[0, 1]
    assert abs(r) < 5.5 / math.sqrt(releases[1:].size)
    with pytest.raises(DPValueError, match="vectors of 40 values"):
        stream.release(torch.zeros(41, dtype=torch.float64))
    with pytest.raises(DPValueError, match="finite"):
        stream.release(torch.full((40,), float("nan"), dtype=torch.float64))


def test_a_seeded_dpsgd_step_is_unchanged_outside_secure_mode():
    model = torch.nn.Linear(5, 2)
    step = PrivateGradient(model, make_clipper(model), task="classification", clip_norm=1.0,
                           noise_multiplier=1.0, expected_batch_size=4.0, generator=torch.Generator().manual_seed(3))
    assert not step.secure
    step(torch.zeros(0, 5), torch.zeros(0, dtype=torch.long))
    expected = torch.empty(12).normal_(0.0, 0.25, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(torch.cat([p.grad.reshape(-1) for p in step.params]), expected)


def test_run_learner_in_secure_mode_refuses_a_seed_and_draws_fresh_noise_each_run():
    with pytest.raises(DPValueError, match="secure noise cannot be seeded"):
        run_learner("output-perturbation", "iris", seed=0, secure=True)
    with pytest.raises(DPValueError, match="secure=True"):
        run_learner("output-perturbation", "iris", seed=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [run_learner("erm-output", "breast_cancer", epsilon=0.5, seed=None, secure=True) for _ in range(3)]
        seeded = [run_learner("erm-output", "breast_cancer", epsilon=0.5, seed=0) for _ in range(2)]
    assert len({str(r.test_outputs.values.tolist()) for r in runs}) > 1
    assert seeded[0].metrics == seeded[1].metrics
    assert not secure_active()


def test_run_learner_asked_for_secure_noise_without_a_seed_runs_in_secure_mode():
    # secure=True alone was refused as "seed=0 with secure=True", a seed the caller never gave (the default's)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [run_learner("erm-output", "breast_cancer", epsilon=0.5, secure=True) for _ in range(2)]
    assert runs[0].test_outputs.values.tolist() != runs[1].test_outputs.values.tolist()
    assert not secure_active()


def test_secure_noise_whose_grid_rounding_overflows_is_refused_as_the_seeded_noise_is():
    # At epsilon 1e-90 the grid floor (2**-24 noise scales) multiplied the drawn noise by about 1e87: input
    # perturbation released records near 1e177, whose squared distances overflowed (k-means++ then stopped with
    # "Probabilities contain NaN"). The seeded Laplace refuses noise beyond MAX_NOISE_SCALE; the noise actually
    # drawn in secure mode now meets the same limit, with the reason.
    from dpcore.mechanisms.base import MAX_NOISE_SCALE
    from dpcore.models import InputPerturbationKMeans

    assert 6.0 / 1e-90 <= MAX_NOISE_SCALE  # the seeded mechanism takes this epsilon
    with pytest.raises(DPValueError, match="larger epsilon"):
        secure_grid(sensitivity=6.0, scale=6.0 / 1e-90, coordinates=300, norm=1)
    X = np.random.default_rng(0).uniform(0, 1, (100, 3))
    with secure_noise(), pytest.raises(DPValueError, match="overflow double precision"):
        InputPerturbationKMeans(3, epsilon=1e-90, bounds=(0, 1)).fit(X)
    # where the rounding stays small the noise is drawn as before
    g = secure_grid(sensitivity=1.0, scale=1e6, coordinates=100, norm=1)
    assert g.scale_increase * 1e6 <= MAX_NOISE_SCALE


def test_objective_perturbation_in_secure_mode_releases_weights_on_the_secure_grid():
    """Its release is the solver's point plus the noise covering its distance to the minimiser (Iyengar et al. 2019):
    in secure mode that sum lands on the grid, as output perturbation's does, not as raw floating-point bits."""
    from dpcore.models import PrivateERMClassifier
    from dpcore.models.erm import SOLVER_EPSILON_SHARE, SOLVER_GRADIENT_BOUND

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    with secure_noise():
        clf = PrivateERMClassifier(epsilon=1.0, regularization=0.05, data_norm=1.0, fit_intercept=False).fit(X, y)
    scale = 2 * SOLVER_GRADIENT_BOUND / (0.05 + clf.extra_regularization_) / (SOLVER_EPSILON_SHARE * 1.0)
    grid = secure_grid(sensitivity=scale * SOLVER_EPSILON_SHARE, scale=scale, coordinates=3, norm=2)
    w = clf.coef_[0]
    assert np.all(w / grid.granularity == np.rint(w / grid.granularity))
