"""Noisy aggregation of teacher votes: LNMax (Papernot et al. 2017) and GNMax (Papernot et al. 2018).

Neighbouring relation and sensitivity
-------------------------------------
The private data is cut into disjoint partitions, one per teacher, by a random
permutation kept secret as the noise is (the operating system's randomness in
secure mode), so adding, removing or replacing one private record changes the
training set of exactly one teacher: a replaced record keeps its place, and an
added one joins one part of a random partition of the others (the two runs
coupled so that only that part differs; ``dpcore.pate.pipeline._partition``).
That teacher may change its vote on a query from one class to another, so the
vote histogram ``n(x)`` moves by -1 in one bin and +1 in another: its L1
sensitivity is 2 and its L2 sensitivity is sqrt(2)
(:data:`HISTOGRAM_L1_SENSITIVITY`, :data:`HISTOGRAM_L2_SENSITIVITY`). A teacher
that merely stops voting (a removal that empties a bin) moves one bin by 1,
which is within both bounds.

The accounting hands dp_accounting events whose sensitivity is already
normalised to 1: GNMax with standard deviation ``sigma`` on the votes is a
unit-sensitivity Gaussian with ``sigma / sqrt(2)``, LNMax with Laplace scale
``b = 1 / gamma`` is a unit-sensitivity Laplace with scale ``b / 2``. Those are
read by dp_accounting under its ``ADD_OR_REMOVE_ONE`` convention ("the two
output distributions are shifted by one unit"); its ``REPLACE_ONE`` convention
would double a shift we already doubled.

References
----------
Papernot, Abadi, Erlingsson, Goodfellow, Talwar. "Semi-supervised Knowledge
Transfer for Deep Learning from Private Training Data." ICLR 2017.
Papernot, Song, Mironov, Raghunathan, Talwar, Erlingsson. "Scalable Private
Learning with PATE." ICLR 2018.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
import numpy as np

from ..exceptions import DPValueError
from ..mechanisms import Laplace, NoiseMultiplierGaussian
from ..types import ArrayLike
from ..validation import check_int, check_positive

#: Changing one private record changes one teacher's vote: -1 in one bin, +1 in another.
HISTOGRAM_L1_SENSITIVITY = 2.0
#: The same change measured in L2: sqrt(1 + 1).
HISTOGRAM_L2_SENSITIVITY = math.sqrt(2.0)

#: GNMax, LNMax and Confident-GNMax (GNMax behind a noisy consensus check, :mod:`dpcore.pate.confident`).
AGGREGATORS = ("gnmax", "lnmax", "confident")


def vote_histogram(predictions: ArrayLike, n_classes: int) -> np.ndarray:
    """Count the teachers' votes for every query.

    Parameters
    ----------
    predictions : array of int, shape (n_teachers, n_queries)
        Class predicted by each teacher on each public query.
    n_classes : int

    Returns
    -------
    ndarray of int64, shape (n_queries, n_classes)
        ``votes[q, j]`` = number of teachers that predicted class ``j`` on query ``q``.

    Examples
    --------
    >>> vote_histogram([[0, 1], [0, 2], [1, 2]], 3).tolist()
    [[2, 1, 0], [0, 1, 2]]
    """
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    p = np.asarray(predictions)
    if p.ndim != 2:
        raise DPValueError(f"predictions must have shape (n_teachers, n_queries), got {p.shape}")
    if p.size and (p.min() < 0 or p.max() >= n_classes):
        raise DPValueError(f"predictions must be class indices in [0, {n_classes}), got range [{p.min()}, {p.max()}]")
    n_teachers, n_queries = p.shape
    votes = np.zeros((n_queries, n_classes), dtype=np.int64)
    np.add.at(votes, (np.broadcast_to(np.arange(n_queries), p.shape), p.astype(np.int64)), 1)
    return votes


def cluster_votes(predictions: ArrayLike, assignment: ArrayLike, n_clusters: int, n_classes: int) -> np.ndarray:
    """Count the teachers' votes when each query is a cluster of public examples.

    Every teacher casts ONE vote per cluster: the class it predicts most often over the cluster's members (ties
    to the smaller class index). Changing one teacher's partition changes that teacher's predictions only, so it
    moves at most one vote of each cluster, as with one example per query: the aggregators' sensitivity, and so
    their accounting, are unchanged.

    Parameters
    ----------
    predictions : array of int, shape (n_teachers, n_rows)
        Each teacher's class on every public row.
    assignment : array of int, shape (n_rows,)
        The cluster of every row, in ``[0, n_clusters)``.
    n_clusters, n_classes : int

    Returns
    -------
    ndarray of int64, shape (n_clusters, n_classes)

    Examples
    --------
    >>> cluster_votes([[0, 0, 1, 1], [0, 1, 1, 1], [2, 2, 2, 1]], [0, 0, 1, 1], 2, 3).tolist()
    [[2, 0, 1], [0, 3, 0]]
    """
    p = np.asarray(predictions)
    a = np.asarray(assignment)
    n_clusters = check_int(n_clusters, "n_clusters", minimum=1)
    if p.ndim != 2 or a.shape != (p.shape[1],):
        raise DPValueError(f"predictions (n_teachers, n_rows) and assignment (n_rows,) do not match: {p.shape}, "
                           f"{a.shape}")
    votes = np.zeros((n_clusters, n_classes), dtype=np.int64)
    for c in range(n_clusters):
        members = np.flatnonzero(a == c)
        if members.size:  # each teacher's plurality over the members: one vote
            per_teacher = vote_histogram(p[:, members].T, n_classes)  # (n_teachers, n_classes)
            votes[c] = np.bincount(per_teacher.argmax(axis=1), minlength=n_classes)
    return votes


def _check_votes(votes) -> np.ndarray:
    v = np.asarray(votes, dtype=float)
    if v.ndim == 1:
        v = v[None, :]
    if v.ndim != 2 or v.shape[1] < 2:
        raise DPValueError(f"votes must have shape (n_queries, n_classes) with n_classes >= 2, got {np.shape(votes)}")
    return v


class _NoisyMax:
    """What GNMax and LNMax share: each answered query is their ``mechanism`` (Gaussian or Laplace) on the vote
    histogram, then an argmax (post-processing); its dp_accounting event is the mechanism's, sensitivity
    normalised to 1 (see the module docstring)."""

    @property
    def dp_event(self) -> dp_accounting.DpEvent:
        """One answered query."""
        return self.mechanism.dp_event

    def noisy_votes(self, votes, *, rng=None) -> np.ndarray:
        """``votes`` (shape (n_queries, n_classes)) plus the mechanism's independent noise on every count."""
        return self.mechanism.randomise(_check_votes(votes), rng=rng)

    def aggregate(self, votes, *, rng=None) -> np.ndarray:
        """The noisy winner of every query (one int per row of ``votes``)."""
        return np.argmax(self.noisy_votes(votes, rng=rng), axis=1)


@dataclass(frozen=True, kw_only=True)
class GNMax(_NoisyMax):
    """Gaussian NoisyMax (Papernot et al. 2018): ``argmax_j n_j + N(0, sigma^2)``.

    Each answered query is the Gaussian mechanism on the vote histogram (L2
    sensitivity sqrt 2) followed by an argmax (post-processing), so it is
    ``(alpha, alpha / sigma^2)``-RDP for every order alpha (Proposition 8),
    i.e. ``GaussianDpEvent(sigma / sqrt(2))`` in dp_accounting.

    Parameters
    ----------
    sigma : float
        Standard deviation of the Gaussian noise added to every vote count.

    References
    ----------
    Papernot et al., "Scalable Private Learning with PATE", ICLR 2018, Section 4.1.

    Examples
    --------
    >>> round(GNMax(sigma=40.0).dp_event.noise_multiplier, 6)   # sigma / sqrt(2)
    28.284271
    """

    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))

    name = "gnmax"

    @property
    def noise_std(self) -> float:
        """Standard deviation of the noise on each count."""
        return self.sigma

    @property
    def mechanism(self) -> NoiseMultiplierGaussian:
        """The Gaussian mechanism on one query's histogram: multiplier sigma / sqrt 2 at L2 sensitivity sqrt 2."""
        return NoiseMultiplierGaussian(noise_multiplier=self.sigma / HISTOGRAM_L2_SENSITIVITY,
                                       sensitivity=HISTOGRAM_L2_SENSITIVITY)



@dataclass(frozen=True, kw_only=True)
class LNMax(_NoisyMax):
    """Laplace NoisyMax (Papernot et al. 2017): ``argmax_j n_j + Lap(1 / gamma)``.

    Releasing the whole noisy histogram (L1 sensitivity 2) with Laplace scale
    ``1/gamma`` is ``2 gamma``-DP, and the argmax is post-processing, so each
    answered query is ``(2 gamma, 0)``-DP: m queries cost ``2 gamma m`` by basic
    composition. dp_accounting sees it as ``LaplaceDpEvent(1 / (2 gamma))``,
    whose RDP/PLD composition at ``delta > 0`` can be smaller for many queries.

    Parameters
    ----------
    gamma : float
        Inverse Laplace scale (the paper's privacy parameter).

    References
    ----------
    Papernot et al., "Semi-supervised Knowledge Transfer for Deep Learning from
    Private Training Data", ICLR 2017, Section 2.1 and Theorem 2 (the per-query 2 gamma).

    Examples
    --------
    >>> LNMax(gamma=0.05).epsilon_per_query
    0.1
    """

    gamma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", check_positive(self.gamma, "gamma"))

    name = "lnmax"

    @property
    def scale(self) -> float:
        """Laplace scale ``b = 1 / gamma`` of the noise on each count."""
        return 1.0 / self.gamma

    @property
    def noise_std(self) -> float:
        """Standard deviation of the noise on each count: sqrt(2) b."""
        return math.sqrt(2.0) * self.scale

    @property
    def epsilon_per_query(self) -> float:
        """Pure epsilon of one answered query: ``2 gamma`` (L1 sensitivity 2 times gamma)."""
        return HISTOGRAM_L1_SENSITIVITY * self.gamma

    @property
    def mechanism(self) -> Laplace:
        """The Laplace mechanism on one query's histogram: L1 sensitivity 2 at epsilon 2 gamma (scale 1/gamma)."""
        return Laplace(epsilon=self.epsilon_per_query, sensitivity=HISTOGRAM_L1_SENSITIVITY)


#: One teacher changing its vote moves the largest count by at most one.
MAX_COUNT_SENSITIVITY = 1.0


@dataclass(frozen=True, kw_only=True)
class ConfidentGNMax:
    """Confident-GNMax (Papernot et al. 2018, Algorithm 1).

    Parameters
    ----------
    threshold : float
        T, in votes: a query is answered only when its largest count plus noise reaches T.
    sigma1 : float
        Standard deviation of the noise on the largest count (the consensus check).
    sigma2 : float
        Standard deviation of GNMax's noise on every count of an answered query.

    Examples
    --------
    >>> agg = ConfidentGNMax(threshold=200.0, sigma1=150.0, sigma2=40.0)
    >>> [round(e.event.noise_multiplier, 3) for e in agg.dp_event(10).events]   # check, then answer (sigma2 / sqrt 2)
    [150.0, 28.284]
    """

    threshold: float
    sigma1: float
    sigma2: float
    name = "confident"

    def __post_init__(self) -> None:
        object.__setattr__(self, "threshold", float(self.threshold))
        object.__setattr__(self, "sigma1", check_positive(self.sigma1, "sigma1"))
        object.__setattr__(self, "sigma2", check_positive(self.sigma2, "sigma2"))

    @property
    def check(self) -> NoiseMultiplierGaussian:
        """The consensus check: the Gaussian mechanism on the largest count (L2 sensitivity 1)."""
        return NoiseMultiplierGaussian(noise_multiplier=self.sigma1 / MAX_COUNT_SENSITIVITY,
                                       sensitivity=MAX_COUNT_SENSITIVITY)

    @property
    def answer(self) -> GNMax:
        """What answers a query that passed the check."""
        return GNMax(sigma=self.sigma2)

    def dp_event(self, queries: int) -> dp_accounting.DpEvent:
        """``queries`` examined queries, each checked and, in the worst case, answered."""
        queries = check_int(queries, "queries", minimum=0)
        return dp_accounting.ComposedDpEvent([
            dp_accounting.SelfComposedDpEvent(self.check.dp_event, queries),
            dp_accounting.SelfComposedDpEvent(self.answer.dp_event, queries),
        ])

    def answered(self, votes, *, rng=None) -> np.ndarray:
        """The noisy consensus check of every query: True where ``max_j n_j + N(0, sigma1^2) >= threshold``."""
        v = _check_votes(votes)
        return np.asarray(self.check.randomise(v.max(axis=1), rng=rng)) >= self.threshold

    def noisy_votes(self, votes, *, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """The check of every query, and every query's votes plus GNMax's noise (only answered rows are released)."""
        passed = self.answered(votes, rng=rng)
        return passed, self.answer.noisy_votes(votes, rng=rng)

    def aggregate(self, votes, *, rng=None) -> np.ndarray:
        """The noisy winner of every answered query, -1 where the check failed."""
        passed, noisy = self.noisy_votes(votes, rng=rng)
        return np.where(passed, np.argmax(noisy, axis=1), -1)


def confident_event(*, sigma1: float, sigma2: float, queries: int) -> dp_accounting.DpEvent:
    """The data-independent dp_accounting event of ``queries`` examined queries (threshold plays no part)."""
    return ConfidentGNMax(threshold=0.0, sigma1=sigma1, sigma2=sigma2).dp_event(queries)



def make_aggregator(name: str, *, noise_scale: float) -> "GNMax | LNMax":
    """Build an aggregator from its name and the noise on each count.

    ``noise_scale`` is the Gaussian standard deviation ``sigma`` for ``"gnmax"``
    and the Laplace scale ``b = 1/gamma`` for ``"lnmax"`` (both in votes).

    >>> make_aggregator("lnmax", noise_scale=20.0).gamma
    0.05
    """
    if name in ("gnmax", "confident"):  # Confident-GNMax answers with GNMax (its check: ConfidentGNMax)
        return GNMax(sigma=noise_scale)
    if name == "lnmax":
        return LNMax(gamma=1.0 / check_positive(noise_scale, "noise_scale"))
    raise DPValueError(f"aggregator must be one of {AGGREGATORS}, got {name!r}")
