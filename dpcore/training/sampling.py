"""Which records each DP-SGD step sees: Poisson sampling, or shuffled fixed-size batches.

Poisson sampling is what the privacy accounting of DP-SGD assumes: every record
joins every batch independently with probability ``q``, so batch sizes vary and
a batch may be empty (Abadi et al. 2016; Mironov, Talwar & Zhang 2019).
Shuffled fixed-size batches are what most training code does instead; reporting
their epsilon as if they were Poisson samples is not a proven guarantee and can
understate it (Chua et al. 2024), so dpcore accounts them without amplification:
one Gaussian mechanism per epoch, replace-one neighbours
(:func:`dpcore.accounting.shuffled_dpsgd_event`; :data:`dpcore.training.SHUFFLE_CAVEAT`).

Both samplers draw from the run's :class:`numpy.random.Generator` only, so a
seeded run sees the same batches every time, and ``train()`` keeps the stream it
has always used (``rng.random(n) < q`` per Poisson batch, one
``rng.permutation(n)`` per shuffled epoch).

References
----------
Abadi et al. Deep learning with differential privacy. CCS 2016 (lots sampled with probability L/N).
Mironov, Talwar, Zhang. Rényi differential privacy of the sampled Gaussian mechanism. 2019.
Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang. How private are DP-SGD implementations? ICML 2024.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from ..accounting.neighbouring import Neighbouring
from ..exceptions import DPValueError
from ..rng import as_generator, bernoulli_threshold, noise_generator
from ..types import RngLike
from ..validation import check_fraction, check_int

SAMPLINGS = ("poisson", "shuffle")
#: What a run's epsilon protects, by its sampling: a record added or removed for Poisson sampling (Abadi et al.
#: 2016), a record replaced for shuffled batches (each epoch one Gaussian mechanism,
#: :func:`~dpcore.accounting.shuffled_dpsgd_event`).
SAMPLING_NEIGHBOURING = {"poisson": Neighbouring.ADD_REMOVE, "shuffle": Neighbouring.REPLACE_ONE}


class PoissonSampler:
    """Batches in which each of ``n`` records appears independently with probability ``sample_rate``.

    The counterpart of Opacus's ``UniformWithReplacementSampler``: the expected
    batch size is ``q n``, the realised one varies, and an empty batch is a
    valid batch (the DP-SGD step still adds its noise and steps).

    Parameters
    ----------
    n : int
        Number of records.
    sample_rate : float
        q, in (0, 1].
    rng : numpy Generator, int or None
        The run's generator (shared with the rest of the run, so one seed fixes all).

    Examples
    --------
    >>> s = PoissonSampler(10, sample_rate=0.3, rng=0)
    >>> [b.tolist() for b in s.batches(3)]
    [[1, 2, 3], [1, 3, 5, 8], [0, 1]]
    """

    def __init__(self, n: int, *, sample_rate: float, rng=None) -> None:
        self.n = check_int(n, "n", minimum=1)
        self.sample_rate = check_fraction(sample_rate, "sample_rate")
        self.rng = noise_generator(rng)  # secure mode: which records join a batch stays secret (amplification)

    @property
    def expected_batch_size(self) -> float:
        return self.sample_rate * self.n

    def batches(self, steps: int) -> Iterator[np.ndarray]:
        """``steps`` batches of sorted record indices (int64; possibly empty)."""
        for _ in range(check_int(steps, "steps", minimum=0)):
            yield self.draw()

    def draw(self) -> np.ndarray:
        """The next batch: the sorted indices of the records with ``rng.random(n) < sample_rate`` (the rate rounded
        down to the draws' grid, :func:`~dpcore.rng.bernoulli_threshold`, so that a record joins with probability at
        most the rate accounted)."""
        return np.flatnonzero(self.rng.random(self.n) < bernoulli_threshold(self.sample_rate))


def shuffled_batches_per_epoch(n: int, batch_size: int) -> int:
    """How many batches one shuffled epoch of ``n`` records has: ``ceil(n / batch_size)``, the last one short. The
    training loop steps through them and the accounting counts an epoch per this many steps
    (:func:`dpcore.accounting.shuffled_dpsgd_event`).

    >>> shuffled_batches_per_epoch(23, 5)
    5
    """
    return -(-int(n) // int(batch_size))


class ShuffleSampler:
    """Fixed-size batches taken in order from a fresh random permutation of the records.

    Each call of :meth:`batches` is one epoch (one permutation); the last batch
    of an epoch is smaller when ``batch_size`` does not divide ``n``.

    Examples
    --------
    >>> s = ShuffleSampler(5, batch_size=2, rng=0)
    >>> [b.tolist() for b in s.batches(3)]
    [[2, 4], [3, 0], [1]]
    """

    def __init__(self, n: int, *, batch_size: int, rng=None) -> None:
        self.n = check_int(n, "n", minimum=1)
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        if self.batch_size > self.n:
            raise DPValueError(
                f"batch_size={self.batch_size} is larger than the {self.n} records; use at most {self.n}")
        self.rng = as_generator(rng)

    @property
    def sample_rate(self) -> float:
        """``batch_size / n``: the share of the records in each full batch (the accounting does not amplify by it)."""
        return self.batch_size / self.n

    @property
    def steps_per_epoch(self) -> int:
        return shuffled_batches_per_epoch(self.n, self.batch_size)

    def batches(self, steps: int) -> Iterator[np.ndarray]:
        """The first ``steps`` batches (at most one epoch's worth) of a new permutation."""
        steps = check_int(steps, "steps", minimum=0)
        if steps > self.steps_per_epoch:
            raise DPValueError(f"steps={steps} is more than one epoch of {self.steps_per_epoch} shuffled batches")
        order = self.rng.permutation(self.n)
        b = self.batch_size
        for s in range(steps):
            yield order[s * b:(s + 1) * b]


def make_sampler(kind: str, n: int, *, batch_size: int, rng: RngLike = None) -> PoissonSampler | ShuffleSampler:
    """The sampler ``train()`` uses for ``config.sampling``: rate ``batch_size / n`` either way.

    >>> make_sampler("poisson", 200, batch_size=50, rng=0).sample_rate
    0.25
    """
    if kind not in SAMPLINGS:
        raise DPValueError(f"sampling must be one of {SAMPLINGS}, got {kind!r}")
    n = check_int(n, "n", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    if batch_size > n:
        raise DPValueError(f"batch_size={batch_size} is larger than the {n} records; use at most {n}")
    if kind == "poisson":
        return PoissonSampler(n, sample_rate=batch_size / n, rng=rng)
    return ShuffleSampler(n, batch_size=batch_size, rng=rng)
