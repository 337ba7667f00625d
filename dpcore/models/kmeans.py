"""k-means: DPLloyd (Su et al.), Laplace input perturbation (J. Zhang 2021, course report, extension 2) and plain Lloyd.

All three work in the same coordinates: each feature is mapped from its
declared public bounds ``[lo_j, hi_j]`` onto ``[-1, 1]`` (an affine map that
uses no private statistic), so the three methods are compared on equal terms and
``cluster_centers_`` are mapped back to the original units.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..accounting.events import added_up
from ..accounting.neighbouring import Neighbouring
from ..exceptions import DPValueError
from ..mechanisms import Laplace
from ..rng import as_generator
from ..runtime.workload import NUMPY_THROUGHPUT, Work, check_work
from ..types import ArrayLike
from ..validation import check_bounds, check_epsilon, check_fraction, check_int, check_positive, clip_to_norm
from ._utils import box_to_unit, check_fitted_X, clip_with_warning, resolve_bounds, unit_to_box, validate_X
from .metrics import hungarian_accuracy, intra_cluster_variance

__all__ = [
    "DPLloydKMeans",
    "InputPerturbationKMeans",
    "LloydKMeans",
    "RandomCentresReference",
    "random_centres_reference",
    "su_count_fraction",
    "sphere_packing_init",
    "noisy_grid_init",
    "dplloyd_noise_scales",
    "dplloyd_sensitivities",
    "input_perturbation_scale",
    "lloyd",
]


# --------------------------------------------------------------------------- plain Lloyd


def _assign(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    d2 = (X * X).sum(1)[:, None] - 2.0 * X @ centers.T + (centers * centers).sum(1)[None, :]
    return np.argmin(d2, axis=1)


def _kmeanspp(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (Arthur & Vassilvitskii 2007)."""
    n = X.shape[0]
    centers = [X[rng.integers(n)]]
    d2 = ((X - centers[0]) ** 2).sum(1)
    for _ in range(1, k):
        total = d2.sum()
        idx = rng.integers(n) if total <= 0 else rng.choice(n, p=d2 / total)
        centers.append(X[idx])
        d2 = np.minimum(d2, ((X - X[idx]) ** 2).sum(1))
    return np.array(centers)


def kmeans_work(n: int, d: int, k: int, iterations: int, restarts: int = 1) -> Work:
    """The work of ``restarts`` runs of at most ``iterations`` Lloyd rounds on ``n`` rows in ``d`` dimensions.

    Each round computes the ``n x k`` squared distances (about 3 n k d operations, an ``n x k`` array)
    and then one pass over the rows per cluster; numpy's elementwise passes over ``n x k`` arrays and a fixed cost
    per cluster and round give the time.
    """
    rounds = iterations * restarts
    return Work(steps=rounds, operations=rounds * (3.0 * n * k * d + 2.0 * n * k), memory_bytes=8.0 * 3 * n * k,
                step_seconds=1e-4 * k, throughput=NUMPY_THROUGHPUT,
                drivers={"seconds": [("k", k), ("iterations", iterations)], "memory_bytes": ("k", k)},
                resize=lambda name, v: kmeans_work(n, d, v if name == "k" else k, v if name == "iterations"
                                                   else iterations, restarts))


def lloyd(
    X: np.ndarray, k: int, *, rng, n_init: int = 10, max_iter: int = 100, tol: float = 1e-8
) -> tuple[np.ndarray, float, int]:
    """Lloyd's algorithm with k-means++ seeding and ``n_init`` restarts; returns (centers, inertia, iterations).

    >>> c, inertia, _ = lloyd(np.array([[0.0], [0.1], [5.0], [5.1]]), 2, rng=0)
    >>> sorted(np.round(c.ravel(), 2).tolist())
    [0.05, 5.05]
    """
    rng = as_generator(rng)
    check_work(kmeans_work(X.shape[0], X.shape[1], k, max_iter, n_init))
    best = (None, np.inf, 0)
    for _ in range(n_init):
        c = _kmeanspp(X, k, rng)
        for it in range(1, max_iter + 1):  # noqa: B007 - the round count is kept after the loop
            lab = _assign(X, c)
            new = c.copy()
            for j in range(k):
                m = lab == j
                if m.any():
                    new[j] = X[m].mean(0)
                else:  # re-seed an empty cluster at the point farthest from its centre
                    far = np.argmax(((X - c[lab]) ** 2).sum(1))
                    new[j] = X[far]
            shift = float(((new - c) ** 2).sum())
            c = new
            if shift <= tol:
                break
        inertia = float(((X - c[_assign(X, c)]) ** 2).sum())
        if inertia < best[1]:
            best = (c, inertia, it)
    return best


# --------------------------------------------------------------------------- DPLloyd pieces


def su_count_fraction(n_features: int, rho: float = 0.225) -> float:
    """Share of each iteration's budget that goes to the noisy counts under Su et al.'s rule.

    Su et al. (2016) minimise the mean squared error of a noisy
    centroid ``(S + Lap) / (C + Lap)`` and find that the budget of the count and
    of each dimension of the sum should be in the ratio
    ``eps_count : eps_dim = (4 d rho^2)^(1/3) : 1``, where ``rho ~ 0.225`` is
    the average squared coordinate of a centroid in the normalised domain. With
    ``d`` dimensions of sum this gives the count the fraction
    ``(4 d rho^2)^(1/3) / (d + (4 d rho^2)^(1/3))`` (the same rule diffprivlib uses).

    The ratio is computed as ``(4 d)^(1/3) rho^(2/3)``, so no square of rho overflows or underflows; a rho so far
    from 0.225 that either share would be 0 in double precision is refused with the reason (the counts or the sums
    would get no budget at all, noise of infinite scale).

    >>> round(su_count_fraction(4), 4)
    0.189
    """
    d = check_int(n_features, "n_features", minimum=1)
    rho = check_positive(rho, "rho")
    c = (4.0 * d) ** (1.0 / 3.0) * rho ** (2.0 / 3.0)
    share = c / (d + c)
    if not 0.0 < share < 1.0:
        raise DPValueError(f"rho={rho:g} (Su et al.'s normalised centroid magnitude, about 0.225) gives the noisy "
                           f"counts a share {share:g} of each round's budget, which leaves the "
                           f"{'counts' if share == 0.0 else 'sums'} none; use a rho near 0.225, or set "
                           "count_fraction directly")
    return share


def dplloyd_sensitivities(*, n_features: int, l1_norm: float | None = None,
                          neighbouring: "Neighbouring | str" = Neighbouring.ADD_REMOVE) -> tuple[float, float]:
    """L1 sensitivities ``(count, sum)`` of one DPLloyd round in ``[-1, 1]^d``.

    Adding or removing one record changes one cluster's count by 1 and that
    cluster's coordinate sums by the record itself, whose L1 norm is at most ``d``
    in the box (or ``R`` when records are scaled into the L1 ball of radius R).
    Replacing a record takes it out of one cluster and puts the new one into
    another: two counts move by 1 and two sums by a record each, so both
    sensitivities double (``2`` and ``2 min(d, R)``), the price of comparing
    DPLloyd with replace-one mechanisms such as input perturbation.

    >>> (dplloyd_sensitivities(n_features=4),
    ...  dplloyd_sensitivities(n_features=4, l1_norm=2.0, neighbouring="replace-one"))
    ((1.0, 4.0), (2.0, 4.0))
    """
    factor = 2.0 if Neighbouring.of(neighbouring) is Neighbouring.REPLACE_ONE else 1.0
    record = float(n_features) if l1_norm is None or l1_norm >= n_features else float(l1_norm)
    return factor, factor * record


def dplloyd_noise_scales(
    *, epsilon: float, iterations: int, n_features: int, count_fraction: float, l1_norm: float | None = None,
    neighbouring: "Neighbouring | str" = Neighbouring.ADD_REMOVE,
) -> tuple[float, float, float, float]:
    """Per-iteration budgets and Laplace scales of DPLloyd in the ``[-1, 1]^d`` domain.

    Returns ``(eps_count, eps_sum, count_scale, sum_scale)``. Each iteration
    spends ``epsilon / iterations``, split ``count_fraction`` to the counts and the
    rest to the sums; each scale is the sensitivity of :func:`dplloyd_sensitivities`
    over its budget.

    >>> dplloyd_noise_scales(epsilon=1.0, iterations=2, n_features=4, count_fraction=0.2)
    (0.1, 0.4, 10.0, 10.0)
    >>> dplloyd_noise_scales(epsilon=1.0, iterations=2, n_features=4, count_fraction=0.2, neighbouring="replace-one")
    (0.1, 0.4, 20.0, 20.0)
    """
    eps_it = epsilon / iterations
    eps_count = eps_it * count_fraction
    eps_sum = eps_it - eps_count
    s_count, s_sum = dplloyd_sensitivities(n_features=n_features, l1_norm=l1_norm, neighbouring=neighbouring)
    return eps_count, eps_sum, s_count / eps_count, s_sum / eps_sum


def sphere_packing_init(k: int, d: int, *, rng, max_trials: int = 10, shrink: float = 0.9) -> np.ndarray:
    """Data-independent initial centres in ``[-1, 1]^d`` by Su et al.'s sphere packing (no privacy spent).

    Start from a radius ``a`` large enough that k balls of radius ``a`` could
    not fit; repeatedly draw k centres uniformly in ``[-1 + a, 1 - a]^d``, each
    at distance >= ``2a`` from those already placed; after ``max_trials``
    failures (or at once, when a draw placed fewer than 90% of the k) shrink ``a``
    and retry. The result spreads centres over the whole domain without looking at the data.
    """
    rng = as_generator(rng)
    a = 1.0 / k ** (1.0 / d)
    while True:
        a *= shrink
        for _ in range(max_trials):
            chosen = _first_spread_candidates(rng.uniform(-1.0 + a, 1.0 - a, size=(50 * k, d)), k, 4.0 * a * a)
            if len(chosen) == k:
                return chosen
            if len(chosen) < 0.9 * k:  # far from fitting: more draws at this radius would fail too
                break
        if a < 1e-6:  # pragma: no cover - unreachable for finite k
            return rng.uniform(-1.0, 1.0, size=(k, d))


def _first_spread_candidates(cand: np.ndarray, k: int, min_sq: float, block: int = 1024) -> np.ndarray:
    """Up to ``k`` candidates taken in order, each kept if it is at squared distance >= ``min_sq`` from all kept before.

    The candidates are read in blocks: a block is first filtered against those already kept (one matrix
    product), then decided in order from its own distance matrix, and reading stops once ``k`` are kept,
    so in high dimension, where almost every candidate is far enough, only about ``k`` are ever looked at.
    """
    kept = np.empty((0, cand.shape[1]))

    def sq_dist(A, B):
        return (A * A).sum(1)[:, None] - 2.0 * A @ B.T + (B * B).sum(1)[None, :]

    for start in range(0, cand.shape[0], block):
        B = cand[start:start + block]
        if len(kept):
            B = B[sq_dist(B, kept).min(1) >= min_sq]
        if not len(B):
            continue
        close = sq_dist(B, B) < min_sq
        alive = np.ones(len(B), dtype=bool)
        take = []
        for i in range(len(B)):
            if alive[i]:
                take.append(i)
                if len(kept) + len(take) == k:
                    break
                alive &= ~close[i]
        kept = np.vstack([kept, B[take]])
        if len(kept) == k:
            break
    return kept


def noisy_grid_init(
    Z: np.ndarray, k: int, *, epsilon: float, grid_size: int, rng, threshold: float = 1.0, n_init: int = 10,
    sensitivity: float = 1.0,
) -> np.ndarray:
    """Initial centres from a noisy grid histogram (Su et al.'s EUGkM, used as the first stage of their hybrid).

    Cut ``[-1, 1]^d`` into ``grid_size^d`` equal cells, release every cell count
    plus ``Lap(sensitivity / epsilon)``, keep the cells whose noisy count exceeds
    ``threshold * sensitivity / epsilon`` and run weighted k-means on their centres
    (post-processing). A histogram's L1 sensitivity is 1 under add/remove (one count
    moves by 1) and 2 under replace-one (one count down, another up). Only sensible
    for small ``d``; it needs at least ``k`` cells.
    """
    rng = as_generator(rng)
    d = Z.shape[1]
    m = grid_size
    if m**d < k:
        raise DPValueError(f"the noisy grid has only grid_size^d = {m}^{d} = {m**d} cells, fewer than k={k} "
                           "clusters; use a larger grid_size or init='sphere_packing'")
    idx = np.clip(((Z + 1.0) / 2.0 * m).astype(np.int64), 0, m - 1)
    flat = np.ravel_multi_index(idx.T, (m,) * d)
    histogram = Laplace(epsilon=epsilon, sensitivity=sensitivity)
    noisy = histogram.randomise(np.bincount(flat, minlength=m**d).astype(float), rng=rng)
    w = np.where(noisy > threshold * sensitivity / epsilon, noisy, 0.0)
    if np.count_nonzero(w) < k:
        w = np.clip(noisy, 0.0, None)
    if np.count_nonzero(w) < k:
        w = np.ones_like(noisy)
    keep = np.flatnonzero(w > 0)
    cells = np.stack(np.unravel_index(keep, (m,) * d), axis=1)
    P = (cells + 0.5) / m * 2.0 - 1.0
    W = w[keep]
    best_c, best_inertia = None, np.inf
    for _ in range(n_init):
        c = P[rng.choice(P.shape[0], size=k, replace=False, p=W / W.sum())].copy()
        for _it in range(50):
            lab = _assign(P, c)
            tot = np.bincount(lab, weights=W, minlength=k)
            new = c.copy()
            for j in np.flatnonzero(tot > 0):
                new[j] = (W[lab == j, None] * P[lab == j]).sum(0) / tot[j]
            if np.allclose(new, c):
                break
            c = new
        inertia = float((W * ((P - c[_assign(P, c)]) ** 2).sum(1)).sum())
        if inertia < best_inertia:
            best_c, best_inertia = c, inertia
    return best_c


def input_perturbation_scale(*, epsilon: float, lower: ArrayLike, upper: ArrayLike) -> float:
    """Laplace scale for input perturbation: ``Delta_1 / epsilon`` with ``Delta_1 = sum_j (hi_j - lo_j)``.

    Under replace-one neighbours a record can move anywhere in the box, so the
    L1 distance between two records is at most the sum of the ranges.

    >>> input_perturbation_scale(epsilon=2.0, lower=[0, 0], upper=[1, 3])
    2.0
    """
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    return float(np.sum(hi - lo)) / check_epsilon(epsilon)


# --------------------------------------------------------------------------- estimators


#: How many draws of random centres the reference averages over, and the seed of the first.
RANDOM_CENTRES_DRAWS = 20
RANDOM_CENTRES_SEED = 0


@dataclass(frozen=True)
class RandomCentresReference:
    """What a clustering that never looked at the data scores: mean and standard deviation over ``draws`` draws.

    ``centres_unit`` (``draws x k x d``, in the ``[-1, 1]^d`` coordinates) are what was drawn: from the bounds, k
    and the seed alone. A private clustering whose accuracy is at most ``accuracy + accuracy_sd`` is within this
    reference's spread: :meth:`covers`.
    """

    accuracy: float
    accuracy_sd: float
    intra_cluster_variance: float
    intra_cluster_variance_sd: float
    draws: int
    centres_unit: np.ndarray = field(repr=False, compare=False)

    def covers(self, accuracy: float) -> bool:
        """True when ``accuracy`` is no better than random centres (within one standard deviation of their mean)."""
        return bool(accuracy <= self.accuracy + self.accuracy_sd)

    @classmethod
    def averaged(cls, references: "list[RandomCentresReference]") -> "RandomCentresReference":
        """The reference over several seeds' splits, read against a clustering's mean over those seeds: the mean of
        their means and of their spreads. The centres are the same on every split (drawn from the bounds, k and a
        fixed seed alone), so the first's are kept.

        >>> a = RandomCentresReference(0.6, 0.1, 1.5, 0.2, 20, np.zeros((20, 3, 4)))
        >>> b = RandomCentresReference(0.7, 0.2, 1.3, 0.2, 20, np.zeros((20, 3, 4)))
        >>> m = RandomCentresReference.averaged([a, b]); round(m.accuracy, 3), round(m.accuracy_sd, 3)
        (0.65, 0.15)
        """
        if not references:
            raise DPValueError("averaged needs at least one reference")
        first = references[0]
        return cls(float(np.mean([r.accuracy for r in references])),
                   float(np.mean([r.accuracy_sd for r in references])),
                   float(np.mean([r.intra_cluster_variance for r in references])),
                   float(np.mean([r.intra_cluster_variance_sd for r in references])), first.draws, first.centres_unit)


def random_centres_reference(X: ArrayLike, y: ArrayLike | None, k: int, *, bounds, draws: int = RANDOM_CENTRES_DRAWS,
                             seed: int = RANDOM_CENTRES_SEED) -> RandomCentresReference:
    """A data-independent reference for a clustering's scores (ε = 0: no private data is used to place centres).

    Each of ``draws`` times, ``k`` centres are drawn uniformly inside the declared (public) ``bounds`` (the
    ``[-1, 1]^d`` box all three k-means work in), every row of ``X`` joins its nearest centre, and the result is
    scored as the k-means runs are: accuracy after Hungarian matching against ``y`` and within / total sum of
    squares in the ``[-1, 1]^d`` coordinates. A uniformly random start is also DPLloyd's free initialisation (Su et
    al. 2016); the reference shows what such centres reach with no round of noisy Lloyd at all, which on iris is
    about 0.63, far above the 1/3 of putting every row in one cluster. ``y`` None (a table with no classes): only
    the within / total sum of squares is scored, the accuracy and its spread are NaN.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise DPValueError(f"X must be a non-empty 2-D array of rows, got shape {X.shape}")
    y = None if y is None else np.asarray(y)
    if y is not None and y.shape[0] != X.shape[0]:
        raise DPValueError(f"y has {y.shape[0]} labels but X has {X.shape[0]} rows")
    k = check_int(k, "k", minimum=1)
    draws = check_int(draws, "draws", minimum=2)
    lo, hi = check_bounds(bounds, X.shape[1])
    # the centres come from the bounds, k and the seed only; the rows are read after, to assign and score them
    centres = as_generator(seed).uniform(-1.0, 1.0, size=(draws, k, X.shape[1]))
    Z = box_to_unit(np.clip(X, lo, hi), lo, hi)
    acc, icv = np.empty(draws), np.empty(draws)
    for i, C in enumerate(centres):
        labels = _assign(Z, C)
        acc[i] = np.nan if y is None else hungarian_accuracy(y, labels)
        icv[i] = intra_cluster_variance(Z, labels, C)
    return RandomCentresReference(float(acc.mean()), float(acc.std(ddof=1)), float(icv.mean()),
                                  float(icv.std(ddof=1)), draws, centres)


class _BoxKMeans(ClusterMixin, BaseEstimator):
    """Shared fit/predict plumbing: validation, bounds, mapping to [-1, 1]^d."""

    #: whether the algorithm needs at least k rows (Lloyd's seeding picks k of them); a private algorithm whose
    #: neighbours add or remove a record must not look at n to decide whether to run
    _needs_k_rows = True

    def _check_params(self, X: np.ndarray) -> int:
        k = check_int(self.n_clusters, "n_clusters", minimum=1)
        if self._needs_k_rows and k > X.shape[0]:
            raise DPValueError(
                f"n_clusters={k} (the number of clusters k) is larger than the number of training rows "
                f"n={X.shape[0]}; choose k <= n"
            )
        return k

    def _prepare(self, X) -> tuple[np.ndarray, int]:
        X = validate_X(self, X, reset=True)
        k = self._check_params(X)
        lo, hi = resolve_bounds(X, self.bounds, columns=getattr(self, "feature_names_in_", None))
        X = clip_with_warning(X, lo, hi, "X")
        self.bounds_ = (lo, hi)
        return box_to_unit(X, lo, hi), k

    def _finish(self, Z: np.ndarray, centers_unit: np.ndarray) -> None:
        self.cluster_centers_unit_ = centers_unit
        self.cluster_centers_ = unit_to_box(centers_unit, *self.bounds_)
        # labels_ of the training rows are for the data owner (they read the private data); not released.
        self.labels_ = _assign(Z, centers_unit)
        self.inertia_ = float(((Z - centers_unit[self.labels_]) ** 2).sum())

    def transform_unit(self, X) -> np.ndarray:
        """Map ``X`` into the ``[-1, 1]^d`` coordinates the centres live in (clipping silently, for scoring)."""
        X = check_fitted_X(self, X, "cluster_centers_unit_")
        lo, hi = self.bounds_
        return box_to_unit(np.clip(X, lo, hi), lo, hi)

    def predict(self, X) -> np.ndarray:
        """Index of the nearest centre for each row."""
        return _assign(self.transform_unit(X), self.cluster_centers_unit_)

    def score(self, X, y=None) -> float:
        """Opposite of the k-means objective on ``X`` (the sum of squared distances to the nearest centre, in the
        ``[-1, 1]^d`` coordinates of the declared bounds, as ``inertia_``): larger is better, as scikit-learn's
        ``KMeans.score``, so ``cross_val_score`` and ``GridSearchCV`` can compare fits. It reads the rows given
        without noise: on private rows no epsilon covers it (see :mod:`dpcore.models` on cross-validation)."""
        Z = self.transform_unit(X)
        c = self.cluster_centers_unit_
        return -float(((Z - c[_assign(Z, c)]) ** 2).sum())


class LloydKMeans(_BoxKMeans):
    """Non-private k-means (Lloyd's algorithm, k-means++ seeding) in the bounds-normalised domain.

    Parameters
    ----------
    n_clusters : int
    bounds : pair of arrays, mapping or None
        Declared per-feature ``(lower, upper)``, or ``{column: (low, high)}``; ``None`` infers them with a
        PrivacyLeakWarning.
    n_init, max_iter : int
    random_state : int, Generator or None

    References
    ----------
    Lloyd. Least squares quantization in PCM. IEEE Trans. Inf. Theory 1982.
    Arthur, Vassilvitskii. k-means++: the advantages of careful seeding. SODA 2007.
    """

    def __init__(self, n_clusters: int = 3, *, bounds=None, n_init: int = 10, max_iter: int = 100, random_state=None):
        self.n_clusters = n_clusters
        self.bounds = bounds
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None) -> "LloydKMeans":
        rng = as_generator(self.random_state, name="random_state")
        Z, k = self._prepare(X)
        c, _, it = lloyd(Z, k, rng=rng, n_init=check_int(self.n_init, "n_init", minimum=1),
                         max_iter=check_int(self.max_iter, "max_iter", minimum=1))
        self.n_iter_ = it
        self.epsilon_spent_ = math.inf
        self.dp_event_ = None
        self._finish(Z, c)
        return self


class DPLloydKMeans(_BoxKMeans):
    """Differentially private k-means by DPLloyd (Blum et al. 2005; Su et al. 2016, 2017).

    The data are mapped from the declared box onto ``[-1, 1]^d``. Each of
    ``iterations`` rounds assigns the records to their nearest centre and
    releases, per cluster, a noisy count ``C + Lap(1 / eps_c)`` and a noisy
    coordinate sum ``S + Lap(d / eps_s)`` per dimension, where
    ``eps_c + eps_s = epsilon_rounds / iterations`` (add/remove-one neighbours, as in
    Su et al.: the count vector moves by 1 and the sum matrix by one record, of L1
    norm at most ``sum_j max(|lo_j|, |hi_j|) = d`` in ``[-1, 1]^d``; under
    ``neighbouring="replace-one"`` both sensitivities double, see
    :func:`dplloyd_sensitivities`). The new centre is
    the noisy sum over the noisy count, clamped to the box; a cluster whose noisy
    count falls below 1 keeps its previous centre (post-processing).

    Initialisation: ``"sphere_packing"`` (Su et al.; data-independent, free),
    ``"uniform"`` (free), or ``"grid"``: Su et al.'s hybrid, whose first stage is
    a noisy grid histogram (EUGkM, :func:`noisy_grid_init`) that spends
    ``init_fraction * epsilon``; DPLloyd then spends the rest. ``"auto"`` picks
    ``"grid"`` when the grid has between k and 20000 cells (``k <= grid_size^d <= 20000``),
    else ``"sphere_packing"``.
    By basic composition the whole run is ``epsilon``-DP.

    Parameters
    ----------
    n_clusters : int
    epsilon : float, keyword-only
        Total privacy budget.
    bounds : pair, mapping or None, keyword-only
        Declared per-feature ``(lower, upper)``, or by column, ``{column: (low, high)}`` or ``"age=17:90,
        *=0:1"`` (a DataFrame's names, ``x0, x1, ...`` for an array). Data outside are clipped with a
        warning; ``None`` infers them from the data with a PrivacyLeakWarning.
    iterations : int or None, keyword-only
        Number of DPLloyd rounds T, fixed in advance. ``None``: 1 after the grid
        initialisation (Su et al.'s hybrid), 3 after a data-independent one.
    count_fraction : float or None, keyword-only
        Share of each round's budget spent on the counts; ``None`` uses Su et al.'s
        rule (:func:`su_count_fraction`).
    rho : float, keyword-only
        Su et al.'s normalised centroid magnitude used by their rule (0.225).
    init : {"auto", "grid", "sphere_packing", "uniform"}, keyword-only
    init_fraction : float, keyword-only
        Share of ``epsilon`` the grid initialisation spends (ignored otherwise).
    grid_size : int, keyword-only
        Cells per dimension of the grid initialisation.
    neighbouring : Neighbouring or {"add-remove", "replace-one"}, keyword-only
        What a neighbouring data set is. ``"add-remove"`` (Su et al.; diffprivlib) hides
        one record's presence; ``"replace-one"`` hides a change of one record's values, as
        input perturbation does, and doubles every sensitivity. An add/remove ε-DP run is
        2ε-DP under replace-one, so only the same relation gives a like-for-like comparison.
    l1_norm : float, "auto" or None, keyword-only
        Declared bound R on the L1 norm of a record in ``[-1, 1]^d``; records above it
        are scaled down before they enter the sums, whose sensitivity becomes
        ``min(d, R)`` instead of ``d``. ``"auto"``: ``R = d/2``, the mean L1 norm of a
        point drawn uniformly from the box (a data-independent choice); ``None``: no
        bound beyond the box. Assignments still use the unclipped records.
    random_state : int, Generator or None

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), in original units
    epsilon_spent_ : float
    dp_event_ : dp_accounting event (initial histogram, then T rounds of Laplace releases)
    neighbouring_ : "add_remove" or "replace_one", as ``neighbouring`` asked (``PrivacyLedger.spend(km)`` checks it)
    history_ : list of ndarray, centres in [-1, 1]^d after the initialisation and each round
    noise_scales_ : dict with ``count_scale``, ``sum_scale``, ``eps_count``, ``eps_sum`` per round, ``eps_init``

    References
    ----------
    Blum, Dwork, McSherry, Nissim. Practical privacy: the SuLQ framework. PODS 2005.
    Su, Cao, Li, Bertino, Jin. Differentially private k-means clustering. CODASPY 2016.
    Su, Cao, Li, Bertino, Lin, Jin. Differentially private k-means clustering and a hybrid
    approach to private optimization. ACM TOPS 20(4), 2017.

    Examples
    --------
    >>> X = np.r_[np.zeros((50, 2)), np.ones((50, 2))]
    >>> km = DPLloydKMeans(2, epsilon=5.0, bounds=(0, 1), random_state=0).fit(X)
    >>> km.epsilon_spent_
    5.0
    """

    # the rounds need no minimum of rows (a cluster whose noisy count falls below 1 keeps its centre), and
    # under add/remove neighbours n is private: refusing k > n would say whether the data has k rows or more
    _needs_k_rows = False

    def __init__(
        self,
        n_clusters: int = 3,
        *,
        epsilon: float = 1.0,
        bounds=None,
        iterations: int | None = None,
        count_fraction: float | None = None,
        rho: float = 0.225,
        init: str = "auto",
        init_fraction: float = 0.4,
        grid_size: int = 3,
        l1_norm: float | str | None = "auto",
        neighbouring: str = "add-remove",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.iterations = iterations
        self.count_fraction = count_fraction
        self.rho = rho
        self.init = init
        self.init_fraction = init_fraction
        self.grid_size = grid_size
        self.l1_norm = l1_norm
        self.neighbouring = neighbouring
        self.random_state = random_state

    def fit(self, X, y=None) -> "DPLloydKMeans":
        epsilon = check_epsilon(self.epsilon)
        if self.init not in ("auto", "grid", "sphere_packing", "uniform"):
            raise DPValueError(f"init must be 'auto', 'grid', 'sphere_packing' or 'uniform', got {self.init!r}")
        m = check_int(self.grid_size, "grid_size", minimum=2)
        rel = Neighbouring.of(self.neighbouring)
        rng = as_generator(self.random_state, name="random_state")
        Z, k = self._prepare(X)
        d = Z.shape[1]
        init = self.init
        if init == "auto":
            init = "grid" if k <= m**d <= 20000 else "sphere_packing"
        if init == "grid" and m**d > 10**6:
            raise DPValueError(f"grid_size={m} gives {m}^{d} cells, too many; use init='sphere_packing'")
        T = (1 if init == "grid" else 3) if self.iterations is None else check_int(
            self.iterations, "iterations", minimum=1)
        check_work(kmeans_work(Z.shape[0], d, k, T))
        frac = su_count_fraction(d, self.rho) if self.count_fraction is None else check_fraction(
            self.count_fraction, "count_fraction")
        if frac >= 1.0:
            raise DPValueError("count_fraction must be < 1 so that the sums get some budget")
        eps_init = 0.0
        if init == "grid":
            f0 = check_fraction(self.init_fraction, "init_fraction")
            if f0 >= 1.0:
                raise DPValueError("init_fraction must be < 1 so that the DPLloyd rounds get some budget")
            eps_init = f0 * epsilon
            c = noisy_grid_init(Z, k, epsilon=eps_init, grid_size=m, rng=rng,
                                sensitivity=2.0 if rel is Neighbouring.REPLACE_ONE else 1.0)
        elif init == "sphere_packing":
            c = sphere_packing_init(k, d, rng=rng)
        else:
            c = rng.uniform(-1.0, 1.0, size=(k, d))
        l1 = _resolve_l1(self.l1_norm, d)
        Zr, self.n_rows_clipped_ = Z, 0
        if l1 is not None and l1 < d:
            Zr, self.n_rows_clipped_ = clip_to_norm(Z, l1, ord=1, name="l1_norm", return_count=True)
        eps_c, eps_s, count_scale, sum_scale = dplloyd_noise_scales(
            epsilon=epsilon - eps_init, iterations=T, n_features=d, count_fraction=frac, l1_norm=l1,
            neighbouring=rel)
        count_sensitivity, sum_sensitivity = dplloyd_sensitivities(n_features=d, l1_norm=l1, neighbouring=rel)
        count_mechanism = Laplace(epsilon=eps_c, sensitivity=count_sensitivity)
        sum_mechanism = Laplace(epsilon=eps_s, sensitivity=sum_sensitivity)
        history = [c.copy()]
        for _ in range(T):
            lab = _assign(Z, c)
            counts = np.bincount(lab, minlength=k).astype(float)
            sums = np.zeros((k, d))
            np.add.at(sums, lab, Zr)
            noisy_counts = count_mechanism.randomise(counts, rng=rng)
            noisy_sums = sum_mechanism.randomise(sums, rng=rng)
            ok = noisy_counts >= 1.0
            new = c.copy()
            new[ok] = np.clip(noisy_sums[ok] / noisy_counts[ok, None], -1.0, 1.0)
            c = new
            history.append(c.copy())
        self.init_ = init
        self.count_fraction_ = frac
        self.noise_scales_ = {"eps_init": eps_init, "eps_count": eps_c, "eps_sum": eps_s,
                              "count_scale": count_scale, "sum_scale": sum_scale, "sum_sensitivity": sum_sensitivity,
                              "count_sensitivity": count_sensitivity}
        self.history_ = history
        self.n_iter_ = T
        # the parts' epsilons added exactly and rounded up (basic composition; in floating point the sum fell a unit
        # in the last place below them for some budgets)
        self.epsilon_spent_ = added_up(added_up(eps_init, T, eps_c), T, eps_s)
        rounds = _composition_event([count_mechanism, sum_mechanism], rounds=T)
        if eps_init > 0:
            import dp_accounting

            from ..mechanisms.base import pure_laplace_event

            rounds = dp_accounting.ComposedDpEvent([pure_laplace_event(eps_init), rounds])
        self.dp_event_ = rounds
        self.neighbouring_ = rel.value
        self._finish(Z, c)
        return self


class InputPerturbationKMeans(_BoxKMeans):
    """k-means on Laplace-perturbed records, then plain Lloyd (Ren et al. 2019; J. Zhang's 2021 course report).

    Every record is released as ``x + Lap(Delta_1 / epsilon)`` per coordinate with
    ``Delta_1 = sum_j (hi_j - lo_j)`` (in ``[-1, 1]^d``: ``2 d``). Under replace-one
    neighbours (n public) the released table is epsilon-DP, and each record is in
    fact locally epsilon-DP; Lloyd on the noisy table is post-processing.

    Parameters
    ----------
    n_clusters : int
    epsilon : float, keyword-only
    bounds : pair or None, keyword-only
    clip_noisy : bool, keyword-only
        Clamp the noisy records back into the box before Lloyd (post-processing,
        off by default to match the seed).
    n_init, max_iter : int, keyword-only
    random_state : int, Generator or None

    References
    ----------
    Ren, Xiong, Yao, Jia, Wen. Recommender systems based on autoencoder and
    differential privacy. COMPSAC 2019. (Also J. Zhang's 2021 CSDS 440 course report, extension 2.)
    Dwork, McSherry, Nissim, Smith. Calibrating noise to sensitivity. TCC 2006.
    """

    def __init__(self, n_clusters: int = 3, *, epsilon: float = 1.0, bounds=None, clip_noisy: bool = False,
                 n_init: int = 10, max_iter: int = 100, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.clip_noisy = clip_noisy
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None) -> "InputPerturbationKMeans":
        epsilon = check_epsilon(self.epsilon)
        rng = as_generator(self.random_state, name="random_state")
        Z, k = self._prepare(X)
        d = Z.shape[1]
        # replace-one: a record moves anywhere in [-1, 1]^d, by at most 2 d in L1 norm
        mechanism = Laplace(epsilon=epsilon, sensitivity=2.0 * d)
        noisy = mechanism.randomise(Z, rng=rng)
        if self.clip_noisy:
            noisy = np.clip(noisy, -1.0, 1.0)
        c, _, it = lloyd(noisy, k, rng=rng, n_init=check_int(self.n_init, "n_init", minimum=1),
                         max_iter=check_int(self.max_iter, "max_iter", minimum=1))
        self.noise_scale_ = mechanism.scale
        self.noisy_data_unit_ = noisy
        self.n_iter_ = it
        self.epsilon_spent_ = epsilon
        self.dp_event_ = mechanism.dp_event
        self.neighbouring_ = "replace_one"  # each record's values, perturbed: one record replaced
        self._finish(Z, np.clip(c, -1.0, 1.0) if self.clip_noisy else c)
        return self


def _resolve_l1(l1_norm, d: int) -> float | None:
    """``"auto"`` -> d/2; None -> None; else a validated positive float."""
    if l1_norm is None:
        return None
    if isinstance(l1_norm, str):
        if l1_norm != "auto":
            raise DPValueError(f"l1_norm must be a positive number, 'auto' or None, got {l1_norm!r}")
        return d / 2.0
    return check_positive(l1_norm, "l1_norm")


def _composition_event(mechanisms, rounds: int):
    """dp_accounting event: ``rounds`` compositions of one release by each of ``mechanisms``."""
    import dp_accounting

    events = [m.dp_event for m in mechanisms]
    one = events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)
    return one if rounds == 1 else dp_accounting.SelfComposedDpEvent(one, rounds)
