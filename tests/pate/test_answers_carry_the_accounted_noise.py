"""A PATE run's answers carry the noise its epsilon is accounted for (Papernot et al. 2018, GNMax: N(0, sigma^2) on
every vote count; Papernot et al. 2017, LNMax: Lap(1 / gamma)).

The aggregators' own tests check GNMax and LNMax given a scale; these check what ``run_pate`` hands them: the noise
of the released noisy histograms (``noisy_votes`` less the teachers' ``votes``) against the scale the run reports
and accounts, and the run's epsilon against dp_accounting composed here (one Gaussian of noise multiplier
sigma / sqrt 2 per query: a histogram moves by sqrt 2 in L2 when one teacher changes its vote).

Confident-GNMax (Papernot et al. 2018, Algorithm 1) adds N(0, sigma1^2) to each query's largest count (the check) and
N(0, sigma2^2) to every count of the answers; both noises are measured where they are drawn.

For K noise values, sum (noise / sigma)^2 is chi-square(K) (GNMax) and sum |noise| / b is Gamma(K, 1) (LNMax): each
must lie in the central 1 - 1e-7 interval of its law (scipy's quantiles); half the noise lands far outside both.
"""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpcore.accounting.accountants import RDP_ORDERS
from dpcore.datasets import train_test_split
from dpcore.mechanisms import NoiseMultiplierGaussian
from dpcore.pate import PateConfig, run_pate

FALSE_ALARM = 1e-7


@pytest.fixture(scope="module")
def split():
    return train_test_split("digits", seed=0)


def _inside(total: float, law) -> None:
    lo, hi = law.ppf(FALSE_ALARM / 2), law.isf(FALSE_ALARM / 2)
    assert lo <= total <= hi, f"{total:.1f} outside [{lo:.1f}, {hi:.1f}]"


@pytest.mark.parametrize("query_mode", ["points", "clusters"])
def test_gnmax_answers_carry_gaussian_noise_of_the_accounted_sigma(split, query_mode):
    r = run_pate(split, PateConfig(teachers=8, queries=60, noise_scale=3.0, query_mode=query_mode, baseline=False,
                                   seed=0))
    assert r.noise_scale == 3.0 and r.votes.shape == r.noisy_votes.shape == (60, 10)
    # the sensitivity's premise: every teacher casts one vote per query (a public example or a cluster of them)
    assert np.all(r.votes.sum(axis=1) == 8)
    noise = r.noisy_votes - r.votes
    _inside(float(np.square(noise / 3.0).sum()), stats.chi2(noise.size))
    acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(dp_accounting.GaussianDpEvent(3.0 / math.sqrt(2.0)), 60)
    assert r.epsilon == pytest.approx(acc.get_epsilon(r.delta), rel=1e-9)


def test_lnmax_answers_carry_laplace_noise_of_the_accounted_scale(split):
    r = run_pate(split, PateConfig(aggregator="lnmax", teachers=8, queries=60, noise_scale=20.0, delta=0.0,
                                   baseline=False, seed=0))
    assert r.noise_scale == 20.0
    noise = r.noisy_votes - r.votes
    _inside(float(np.abs(noise / 20.0).sum()), stats.gamma(noise.size))
    # each answer is 2 gamma = 2 / b pure epsilon (L1 sensitivity 2); 60 of them compose to 60 * 2 / 20
    assert r.epsilon == pytest.approx(60 * 2 / 20.0, rel=1e-9)


def test_confident_gnmax_checks_and_answers_carry_the_accounted_noise(split, monkeypatch):
    drawn: list[tuple[np.ndarray, np.ndarray]] = []
    randomise = NoiseMultiplierGaussian.randomise

    def captured(self, values, **kw):
        out = randomise(self, values, **kw)
        drawn.append((np.asarray(values, dtype=float).copy(), np.asarray(out, dtype=float)))
        return out

    monkeypatch.setattr(NoiseMultiplierGaussian, "randomise", captured)
    teachers, queries = 20, 150  # 150 checks: half their noise sums to a quarter, 9 sd below the interval
    r = run_pate(split, PateConfig(aggregator="confident", teachers=teachers, queries=queries, noise_scale=4.0,
                                   threshold=0.6, threshold_noise=0.5, baseline=False, seed=0))
    sigma1, sigma2 = 0.5 * teachers, 4.0  # threshold_noise is a share of the teachers
    (check_in, check_out), = [(v, o) for v, o in drawn if v.ndim == 1]
    assert np.array_equal(check_in, r.votes.max(axis=1))  # the check is on each query's largest count
    _inside(float(np.square((check_out - check_in) / sigma1).sum()), stats.chi2(queries))
    assert np.array_equal(r.answered, check_out >= 0.6 * teachers)
    noise = r.noisy_votes - r.votes
    _inside(float(np.square(noise / sigma2).sum()), stats.chi2(noise.size))
    acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(dp_accounting.GaussianDpEvent(sigma1), queries)  # the largest count moves by at most 1
    acc.compose(dp_accounting.GaussianDpEvent(sigma2 / math.sqrt(2.0)), queries)
    assert r.epsilon == pytest.approx(acc.get_epsilon(r.delta), rel=1e-9)
