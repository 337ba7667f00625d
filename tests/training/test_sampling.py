"""Poisson and shuffled batch samplers: rates, determinism for a seed, empty batches, errors."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.exceptions import DPValueError
from dpcore.training import PoissonSampler, ShuffleSampler, make_sampler


def test_poisson_inclusion_rate_and_batch_size_distribution():
    n, q, steps = 400, 0.05, 2000
    batches = list(PoissonSampler(n, sample_rate=q, rng=0).batches(steps))
    sizes = np.array([b.size for b in batches])
    # batch size ~ Binomial(n, q): mean 20, sd 4.36; the mean of 2000 batches has sd 0.1
    assert abs(sizes.mean() - n * q) < 5 * np.sqrt(n * q * (1 - q) / steps)
    assert abs(sizes.var() / (n * q * (1 - q)) - 1) < 0.15
    # every record is included in each batch with probability q: its count is Binomial(steps, q)
    counts = np.bincount(np.concatenate(batches), minlength=n)
    sd = np.sqrt(steps * q * (1 - q))
    assert np.abs(counts - steps * q).max() < 5 * sd
    assert abs(counts.std() / sd - 1) < 0.15
    for b in batches:
        assert b.dtype == np.int64 and np.all(np.diff(b) > 0)  # sorted, no record twice in a batch


def test_poisson_allows_empty_batches():
    sizes = [b.size for b in PoissonSampler(50, sample_rate=0.01, rng=1).batches(500)]
    # P(empty) = 0.99^50 = 0.605: about 300 of 500 batches are empty
    assert 250 < sizes.count(0) < 350
    assert max(sizes) >= 2


def test_poisson_keeps_the_stream_train_has_always_used():
    """One ``rng.random(n) < q`` per batch: seeded runs see the batches they always saw."""
    n, q = 37, 0.2
    ref = np.random.default_rng(5)
    expected = [np.flatnonzero(ref.random(n) < q) for _ in range(10)]
    got = list(PoissonSampler(n, sample_rate=q, rng=np.random.default_rng(5)).batches(10))
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))


@pytest.mark.parametrize("kind", ["poisson", "shuffle"])
def test_same_seed_same_batches_other_seed_differs(kind):
    def draw(seed):
        s = make_sampler(kind, 60, batch_size=7, rng=seed)
        return [b.tolist() for _ in range(3) for b in s.batches(5)]

    assert draw(3) == draw(3)
    assert draw(3) != draw(4)


def test_shuffle_visits_every_record_once_per_epoch():
    s = ShuffleSampler(23, batch_size=5, rng=2)
    assert s.steps_per_epoch == 5 and s.sample_rate == 5 / 23
    epochs = [list(s.batches(5)) for _ in range(3)]
    for batches in epochs:
        assert [b.size for b in batches] == [5, 5, 5, 5, 3]
        assert sorted(np.concatenate(batches).tolist()) == list(range(23))
    assert not all(np.array_equal(a[0], b[0]) for a, b in zip(epochs, epochs[1:]))  # a new order each epoch
    ref = np.random.default_rng(2)  # one permutation per epoch, as train() always drew it
    assert np.array_equal(np.concatenate(list(ShuffleSampler(23, batch_size=5, rng=2).batches(5))),
                          ref.permutation(23))


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: PoissonSampler(10, sample_rate=0.0), "sample_rate must be in"),
        (lambda: PoissonSampler(10, sample_rate=1.5), "sample_rate must be in"),
        (lambda: PoissonSampler(0, sample_rate=0.5), "n must be >= 1"),
        (lambda: ShuffleSampler(10, batch_size=11), "batch_size=11 is larger"),
        (lambda: make_sampler("random", 10, batch_size=2), "sampling must be one of"),
        (lambda: make_sampler("poisson", 10, batch_size=20), "batch_size=20 is larger"),
        (lambda: list(ShuffleSampler(10, batch_size=5).batches(3)), "more than one epoch"),
    ],
)
def test_bad_arguments_name_the_parameter(make, match):
    with pytest.raises(DPValueError, match=match):
        make()
