"""LNMax / GNMax: vote histograms, their sensitivity, and the noise actually added."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpcore.exceptions import DPValueError
from dpcore.pate import (
    HISTOGRAM_L1_SENSITIVITY,
    HISTOGRAM_L2_SENSITIVITY,
    GNMax,
    LNMax,
    make_aggregator,
    vote_histogram,
)


def test_vote_histogram_counts_each_teacher_once():
    rng = np.random.default_rng(0)
    preds = rng.integers(0, 4, size=(7, 30))
    v = vote_histogram(preds, 4)
    assert v.shape == (30, 4)
    assert np.all(v.sum(axis=1) == 7)
    for q in range(30):
        assert v[q].tolist() == [int(np.sum(preds[:, q] == j)) for j in range(4)]


def test_histogram_sensitivity_one_teacher_changes():
    """Neighbouring private data changes one teacher's votes: L1 <= 2, L2 <= sqrt 2 per query, attained."""
    rng = np.random.default_rng(1)
    worst_l1 = worst_l2 = 0.0
    for _ in range(200):
        preds = rng.integers(0, 5, size=(11, 20))
        other = preds.copy()
        t = rng.integers(11)
        other[t] = rng.integers(0, 5, size=20)  # that teacher retrained on a neighbouring partition
        diff = vote_histogram(preds, 5) - vote_histogram(other, 5)
        worst_l1 = max(worst_l1, np.abs(diff).sum(axis=1).max())
        worst_l2 = max(worst_l2, np.linalg.norm(diff, axis=1).max())
    assert worst_l1 == HISTOGRAM_L1_SENSITIVITY == 2
    assert worst_l2 == pytest.approx(HISTOGRAM_L2_SENSITIVITY)
    assert HISTOGRAM_L2_SENSITIVITY == pytest.approx(math.sqrt(2))


def test_events_normalise_the_sensitivity():
    assert GNMax(sigma=10.0).dp_event == dp_accounting.GaussianDpEvent(10.0 / math.sqrt(2))
    assert LNMax(gamma=0.1).dp_event == dp_accounting.LaplaceDpEvent(5.0)  # scale 10 / L1 sensitivity 2
    assert LNMax(gamma=0.1).epsilon_per_query == pytest.approx(0.2)


def test_gnmax_noise_std_is_sigma():
    votes = np.zeros((40000, 3))
    noise = GNMax(sigma=7.0).noisy_votes(votes, rng=0)
    assert noise.std() == pytest.approx(7.0, rel=0.01)
    assert abs(noise.mean()) < 0.05
    # independent across classes
    assert abs(np.corrcoef(noise[:, 0], noise[:, 1])[0, 1]) < 0.02


def test_lnmax_noise_is_laplace_with_scale_one_over_gamma():
    noise = LNMax(gamma=0.25).noisy_votes(np.zeros((40000, 3)), rng=0).ravel()
    assert np.mean(np.abs(noise)) == pytest.approx(4.0, rel=0.01)  # E|Lap(b)| = b
    assert stats.kstest(noise, stats.laplace(scale=4.0).cdf).pvalue > 0.01


@pytest.mark.parametrize("sigma,gap", [(3.0, 2), (5.0, 6), (10.0, 0)])
def test_gnmax_win_probability(sigma, gap):
    """Two classes: Pr[runner-up wins] = Pr[N(0, 2 sigma^2) > gap] = Phi(-gap / (sqrt 2 sigma))."""
    votes = np.tile([10 + gap, 10], (60000, 1))
    flips = np.mean(GNMax(sigma=sigma).aggregate(votes, rng=1) == 1)
    expect = stats.norm.cdf(-gap / (math.sqrt(2) * sigma))
    assert flips == pytest.approx(expect, abs=4 * math.sqrt(expect * (1 - expect) / 60000) + 1e-4)


@pytest.mark.parametrize("b,gap", [(2.0, 1), (4.0, 6)])
def test_lnmax_win_probability(b, gap):
    """Two classes: Pr[Lap_1 - Lap_0 > g] = (2 + g/b) / 4 * exp(-g/b) (difference of two Laplaces)."""
    votes = np.tile([10 + gap, 10], (60000, 1))
    flips = np.mean(make_aggregator("lnmax", noise_scale=b).aggregate(votes, rng=2) == 1)
    expect = (2 + gap / b) / 4 * math.exp(-gap / b)
    assert flips == pytest.approx(expect, abs=4 * math.sqrt(expect * (1 - expect) / 60000))


def test_same_seed_same_labels_and_bad_inputs():
    v = np.array([[3, 4, 5], [9, 0, 1]])
    assert np.array_equal(GNMax(sigma=2.0).aggregate(v, rng=5), GNMax(sigma=2.0).aggregate(v, rng=5))
    with pytest.raises(DPValueError, match="sigma"):
        GNMax(sigma=0.0)
    with pytest.raises(DPValueError, match="gamma"):
        LNMax(gamma=-1.0)
    with pytest.raises(DPValueError, match="aggregator"):
        make_aggregator("median", noise_scale=1.0)
    with pytest.raises(DPValueError, match="class indices"):
        vote_histogram([[0, 3]], 3)
