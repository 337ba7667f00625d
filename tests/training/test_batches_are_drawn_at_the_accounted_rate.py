"""DP-SGD's batches are drawn at the sample rate its epsilon is accounted at.

The accountant is told ``q = batch_size / n`` (Abadi et al. 2016, Section 3.1: each record joins a lot with
probability q; the Poisson-subsampled Gaussian of Mironov, Talwar & Zhang 2019). If the sampler drew records at any
other rate, the reported epsilon would be for another mechanism: at a larger rate, too small. These tests count the
records the trainer actually put in its batches (every Poisson draw, whoever makes it) and compare the count with
``Binomial(steps * n, q)`` for the q the result reports and the accountant used.

The acceptance region is the exact two-sided Binomial interval of probability 1 - 1e-7 (scipy's quantiles), so a
correct sampler fails with probability below 1e-7; at twice the rate the count is more than 60 standard deviations
away.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.training import TrainConfig, train
from dpcore.training.batched import TogetherRun, train_together

FALSE_ALARM = 1e-7


def _data(n=1000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    return X, (X[:, 0] > 0).astype(int)


def _assert_binomial(included: int, trials: int, q: float) -> None:
    lo = stats.binom.ppf(FALSE_ALARM / 2, trials, q)
    hi = stats.binom.isf(FALSE_ALARM / 2, trials, q)
    assert lo <= included <= hi, (f"{included} records were drawn in {trials} chances, outside [{lo:.0f}, {hi:.0f}] "
                                  f"for the accounted sample rate q = {q:g}")


def test_train_draws_its_batches_at_the_sample_rate_it_reports_and_accounts(poisson_draws):
    X, y = _data()
    res = train(X, y, TrainConfig(model="linear", epochs=5, batch_size=100, noise_multiplier=1.0, seed=0),
                n_outputs=2)
    assert res.sample_rate == pytest.approx(100 / 1000)
    assert len(poisson_draws) == res.steps == 50 and {n for n, _ in poisson_draws} == {1000}
    _assert_binomial(sum(size for _, size in poisson_draws), res.steps * 1000, res.sample_rate)


def test_runs_trained_together_draw_their_batches_at_the_rate_they_account(poisson_draws):
    X, y = _data()
    configs = [TrainConfig(model="linear", epochs=5, batch_size=b, noise_multiplier=1.0, seed=s)
               for b, s in ((100, 0), (200, 1))]
    results = train_together([TogetherRun(X=X, y=y, config=c, n_outputs=2) for c in configs])
    # each run has a sampler of its own (different seeds): its draws are the run's batches, in the order taken
    assert [r.steps for r in results] == [50, 25] and len(poisson_draws) == 75
    trials = sum(r.steps for r in results) * 1000
    expected = sum(r.steps * 1000 * r.sample_rate for r in results)
    assert [r.sample_rate for r in results] == [pytest.approx(0.1), pytest.approx(0.2)]
    # the total over both runs: a sum of two Binomials, checked against each one's interval summed (conservative)
    lo = sum(stats.binom.ppf(FALSE_ALARM / 4, r.steps * 1000, r.sample_rate) for r in results)
    hi = sum(stats.binom.isf(FALSE_ALARM / 4, r.steps * 1000, r.sample_rate) for r in results)
    included = sum(size for _, size in poisson_draws)
    assert lo <= included <= hi, (included, trials, expected)


class _OneDraw:
    """A generator whose every uniform draw is ``u``."""

    def __init__(self, u: float) -> None:
        self.u = u

    def random(self, size=None):
        return np.full(size, self.u)


@pytest.mark.parametrize("q", [0.1, 0.01, 0.3, 1 / 3, 1e-17])
@pytest.mark.parametrize("grid", [2.0**-53, 2.0**-52])  # numpy's draws; secure mode's
def test_a_record_joins_a_poisson_batch_with_probability_at_most_the_accounted_rate(q, grid):
    """A uniform draw lies on a grid, so ``random() < q`` held with probability q rounded UP to it (1.1e-16 more
    than q at q = 0.1, 2**-53 at q = 1e-17): the records that join are the grid points below the threshold, and
    there are at most q / grid of them."""
    from fractions import Fraction

    from dpcore.training.sampling import PoissonSampler

    def joins(k: int) -> bool:  # the k-th grid point
        sampler = PoissonSampler(1, sample_rate=q)
        sampler.rng = _OneDraw(k * grid)
        return sampler.draw().size == 1

    top = int(Fraction(q) / Fraction(grid))  # the grid point at or just below q
    joining = sum(joins(k) for k in range(max(0, top - 3), top + 3)) + max(0, top - 3)  # points below all join
    assert all(joins(k) for k in range(0, min(top - 3, 50)))
    assert Fraction(joining) * Fraction(grid) <= Fraction(q)
