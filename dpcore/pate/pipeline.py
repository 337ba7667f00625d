"""PATE end to end: three-way split, teachers, noisy labels for public queries, student.

References
----------
Papernot, Abadi, Erlingsson, Goodfellow, Talwar. "Semi-supervised Knowledge
Transfer for Deep Learning from Private Training Data." ICLR 2017.
Papernot, Song, Mironov, Raghunathan, Talwar, Erlingsson. "Scalable Private
Learning with PATE." ICLR 2018.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import dp_accounting
import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..accounting import ACCOUNTANTS, calibrate, epsilon_of_event
from ..accounting.trusted import rdp_epsilon
from ..datasets import Split
from ..datasets.transforms import scale_to_unit_interval
from ..defaults import DELTA
from ..exceptions import DPValueError, PrivacyLeakWarning, user_stacklevel
from ..rng import SECURE, as_generator, child_seed, noise_generator, noise_mode, substream
from ..teaching.verdict import epsilon_text
from ..types import RngLike
from ..validation import check_delta, check_epsilon, check_int, check_positive
from .aggregation import AGGREGATORS, cluster_votes, make_aggregator, vote_histogram
from .analysis import (
    PATE_NEIGHBOURING,
    RDP_ORDERS,
    calibrate_noise_scale,
    gnmax_data_dependent_rdp,
    gnmax_log_q,
    pate_epsilon,
    pate_event,
)
from .confident import (
    ConfidentGNMax,
    ReleasedEpsilon,
    check_data_dependent_rdp,
    log_pr_answered,
    log_pr_not_answered,
    release_data_dependent_epsilon,
    release_parameters,
)
from .teachers import MODELS, fit_classifier, partition_indices, predict, teacher_predictions, train_teachers

EpochCallback = Callable[[Mapping[str, Any]], None]
#: What teachers and student see (see :class:`PateConfig`).
FEATURES = ("pixels", "hog")
#: What one query labels: one public example, or one k-means cluster of the public pool.
QUERY_MODES = ("points", "clusters")


@dataclass(frozen=True, eq=False)
class PateData:
    """A registry split cut three ways, features scaled by the public bounds.

    ``private``: the teachers' labelled sensitive data (from the Split's training
    part); ``public``: the student's unlabelled inputs (the rest of the training
    part; ``y_public`` is kept only to *measure* the noisy labels, never given to
    the student); ``test``: the Split's test set.
    """

    X_private: np.ndarray
    y_private: np.ndarray
    X_public: np.ndarray
    y_public: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    private_index: np.ndarray  # rows of split.X_train
    public_index: np.ndarray  # rows of split.X_train
    n_classes: int
    image_shape: tuple[int, int] | None = None  # (h, w) of image data, for features="hog"

    @property
    def sizes(self) -> dict:
        return {"private (teachers)": int(self.y_private.size), "public (student, unlabelled)": int(self.y_public.size),
                "test": int(self.y_test.size)}


def pate_split(split: Split, *, public_fraction: float = 0.2, seed: int = 0) -> PateData:
    """Cut ``split``'s training part into private and public parts (the test part is kept).

    Parameters
    ----------
    split : dpcore.datasets.Split
    public_fraction : float in (0, 1)
        Share of the training part that becomes the student's public, unlabelled data.
    seed : int

    Examples
    --------
    >>> from dpcore.datasets import train_test_split
    >>> split = train_test_split("iris", seed=0)
    >>> d = pate_split(split, public_fraction=0.2)
    >>> sum(d.sizes.values()) == split.dataset.n_samples, d.y_public.size == round(0.2 * split.y_train.size)
    (True, True)
    """
    if split.task != "classification":
        raise DPValueError(f"PATE labels queries by a vote over classes; {split.dataset.name!r} is {split.task}")
    public_fraction = float(public_fraction)
    if not 0.0 < public_fraction < 1.0:
        raise DPValueError(f"public_fraction must be strictly between 0 and 1, got {public_fraction}")
    n = split.X_train.shape[0]
    n_pub = int(round(public_fraction * n))
    if n_pub < 1 or n - n_pub < 1:
        # the shares that leave each part a row: n_pub from 1 to n - 1 (1/n .. (n-1)/n, within the knob's 0.9)
        lo, hi = math.ceil(100 / n) / 100, math.floor(100 * min((n - 1) / n, 0.9)) / 100 if n else 0.0
        where = ("--public-fraction on the command line, 'Public share of the training part' on the PATE page")
        raise DPValueError(
            f"public_fraction={public_fraction} of the {n} training row{'s' if n != 1 else ''} leaves {n_pub} public "
            f"row{'s' if n_pub != 1 else ''} (the student's) and {n - n_pub} private (the teachers'): each part needs "
            "at least one. "
            + (f"Choose a share between {lo:g} and {hi:g} ({where}), or use data with more rows" if lo < hi else
               f"Choose a share of {lo:g} ({where}), or use data with more rows" if lo == hi else
               "Use data with more rows"))
    perm = as_generator(seed).permutation(n)
    pub, priv = np.sort(perm[:n_pub]), np.sort(perm[n_pub:])
    bounds = split.dataset.bounds
    if bounds is None:
        warnings.warn("no public feature bounds: scaling with the private data's range leaks privacy; declare bounds",
                      PrivacyLeakWarning, stacklevel=user_stacklevel())
        bounds = (split.X_train.min(axis=0), np.maximum(split.X_train.max(axis=0), split.X_train.min(axis=0) + 1))
    Xtr = scale_to_unit_interval(split.X_train, bounds)
    Xte = scale_to_unit_interval(split.X_test, bounds)
    y = np.asarray(split.y_train, dtype=np.int64)
    return PateData(
        X_private=Xtr[priv], y_private=y[priv], X_public=Xtr[pub], y_public=y[pub],
        X_test=Xte, y_test=np.asarray(split.y_test, dtype=np.int64),
        private_index=priv, public_index=pub, n_classes=max(split.n_classes, 2),
        image_shape=split.dataset.image_shape,
    )


def with_features(d: PateData, features: str) -> PateData:
    """``d`` with every part's inputs replaced by ``features`` of them ("pixels": unchanged).

    HOG (Dalal & Triggs 2005; :func:`~dpcore.training.preprocess.hog_features`) is computed per image from that
    image alone, so it costs no privacy; cells of ``min(6, max(2, side // 4))`` pixels in blocks of 2 x 2 cells.
    """
    if features not in FEATURES:
        raise DPValueError(f"features must be one of {FEATURES}, got {features!r}")
    if features == "pixels":
        return d
    if d.image_shape is None:
        raise DPValueError("features='hog' needs image data and this dataset is tabular: use features='pixels'")
    from ..training.preprocess import hog_features  # lazily: the training package brings torch

    side = min(d.image_shape)
    cell = min(6, max(2, side // 4))
    block = 2 if 2 * cell <= side else 1

    def hog(X):
        return hog_features(X, d.image_shape, cell_size=cell, block_size=block)

    return replace(d, X_private=hog(d.X_private), X_public=hog(d.X_public), X_test=hog(d.X_test))


@dataclass(frozen=True, eq=False)
class PublicQueries:
    """What the aggregator is asked: ``index`` holds the public row of each query (in cluster mode the member
    nearest the cluster's centre, to show), ``assignment`` (cluster mode only) the query of every public row."""

    index: np.ndarray
    assignment: np.ndarray | None = None

    def votes(self, teachers, d: PateData) -> np.ndarray:
        """The teachers' vote histogram of every query (only its noisy argmax ever leaves the teachers)."""
        if self.assignment is None:
            return vote_histogram(teacher_predictions(teachers, d.X_public[self.index]), d.n_classes)
        return cluster_votes(teacher_predictions(teachers, d.X_public), self.assignment, self.index.size,
                             d.n_classes)

    def student_rows(self, d: PateData, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The student's training set: the queried rows with their labels, or every public row with its
        cluster's label."""
        if self.assignment is None:
            X, y = d.X_public[self.index], labels
        else:
            X, y = d.X_public, labels[self.assignment]
        keep = y >= 0  # Confident-GNMax leaves unanswered queries (label -1) out
        return (X, y) if keep.all() else (X[keep], y[keep])

    def rows_right(self, d: PateData, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each query, how many of the student's rows it labels rightly and how many it labels (evaluation
        only): the queried row itself, or every row of the cluster (so a share along the queries ends at the share
        of the student's labels that are right, not of the clusters' majorities)."""
        if self.assignment is None:
            return (labels == d.y_public[self.index]).astype(float), np.ones(labels.size)
        size = np.bincount(self.assignment, minlength=labels.size).astype(float)
        right = np.bincount(self.assignment, weights=d.y_public == labels[self.assignment], minlength=labels.size)
        return right, size

    def true_labels(self, d: PateData) -> np.ndarray:
        """Each query's true label, for evaluation only: the row's, or the most common one in the cluster."""
        if self.assignment is None:
            return d.y_public[self.index]
        return np.array([np.bincount(d.y_public[self.assignment == c]).argmax() for c in range(self.index.size)])


def public_queries(d: PateData, cfg: "PateConfig", rng) -> PublicQueries:
    """``cfg.queries`` random public examples, or (``query_mode="clusters"``) ``cfg.queries`` k-means clusters of
    the public pool (public data only: no privacy cost; a cluster left empty is dropped, and the accounting
    still charges ``cfg.queries``, an upper bound)."""
    if cfg.query_mode == "points":
        return PublicQueries(np.sort(rng.permutation(d.y_public.size)[: cfg.queries]))
    from sklearn.cluster import KMeans

    with threadpool_limits(limits=1):
        km = KMeans(n_clusters=cfg.queries, n_init=3, random_state=child_seed(rng)).fit(d.X_public)
    present, assignment = np.unique(km.labels_, return_inverse=True)
    dist = np.sum((d.X_public - km.cluster_centers_[km.labels_]) ** 2, axis=1)
    index = np.array([np.flatnonzero(assignment == c)[np.argmin(dist[assignment == c])] for c in range(present.size)])
    return PublicQueries(index, assignment)


@dataclass(frozen=True, kw_only=True)
class PateConfig:
    """Everything one PATE run needs (frozen, hashable: a cache key).

    Parameters
    ----------
    aggregator : {"gnmax", "lnmax", "confident"}
        GNMax (Papernot et al. 2018, the default), LNMax (2017) or Confident-GNMax (2018, Algorithm 1: a query is
        answered by GNMax only when its noisy largest count reaches the threshold; the student learns the answered
        queries only).
    teachers : int
        Number of teachers = number of disjoint private partitions.
    queries : int
        Public examples (or clusters) labelled by the noisy aggregate (the student's training set); for
        Confident-GNMax, the queries examined, each checked and answered only when the teachers agree.
    noise_scale : float or None
        Noise on each vote count: Gaussian sigma (GNMax, and Confident-GNMax's answers) or Laplace scale 1/gamma
        (LNMax). ``None``: calibrated so ``queries`` answers cost ``target_epsilon`` (for Confident-GNMax: every
        examined query checked and answered, the data-independent worst case).
    threshold, threshold_noise : float
        Confident-GNMax only: the threshold T and the check's noise sigma1, as shares of the number of teachers
        (Papernot et al. 2018 used T = 200 and sigma1 = 150 for 250 teachers on MNIST, 0.8 and 0.6; the defaults
        here were chosen on validation rows, see :data:`dpcore.pate.learners.PATE_KNOBS`).
    target_epsilon : float or None
        Used when ``noise_scale`` is None.
    delta : float
    public_fraction : float
        Share of the training part used as the public, unlabelled pool.
    teacher_model, student_model : {"logreg", "mlp", "knn"}
    features : {"pixels", "hog"}
        What teachers and student see: the scaled inputs, or (image datasets) histograms of oriented gradients
        (Dalal & Triggs 2005), a fixed per-image transform that costs no privacy.
    query_mode : {"points", "clusters"}
        ``"points"``: each query is one public example (Papernot et al. 2017). ``"clusters"``: the public pool is
        cut into ``queries`` k-means clusters (public data: no privacy cost), each cluster is one query, every
        teacher casts ONE vote per cluster (the class it predicts most often over the cluster's members), and the
        student learns every public row with its cluster's noisy label -- cluster-then-label semi-supervised
        learning (Chapelle, Schölkopf & Zien 2006, Section 1.2.2) on the student's side. One teacher still moves one
        vote per query, so the aggregator and its accounting are unchanged; the labels cover the whole pool.
    data_dependent : bool
        Also compute the DATA-DEPENDENT epsilon of Papernot et al. 2018 (GNMax and Confident-GNMax): along the
        queries, as an analysis that is not itself private (:mod:`dpcore.pate.analysis`), and once at the end
        released privately with smooth sensitivity (:func:`dpcore.pate.confident.release_data_dependent_epsilon`).
        That release is a second mechanism on the votes: calibrated to ``target_epsilon``, the noise is chosen so that
        the answers and the release together cost at most the target (the answers get less than all of it), and where
        the release alone would cost the target or more it is withheld and the answers get the whole target.
    accountant : {"rdp", "pld"}
    baseline : bool
        Also train the student's model on all private data with their true labels (no privacy), for comparison.
    seed : int
    secure : bool
        Secure noise (:func:`dpcore.rng.secure_noise`): every noise draw and sample from the operating system, the
        teachers' partition too (a record added must not reshuffle the others' parts); ``seed`` then fixes only what
        releases nothing (the public/private cut of a registry split, initial weights).
    """

    aggregator: str = "gnmax"
    teachers: int = 20
    queries: int = 200
    noise_scale: float | None = None
    threshold: float = 0.5
    threshold_noise: float = 0.5
    target_epsilon: float | None = 5.0
    delta: float = DELTA
    public_fraction: float = 0.2
    teacher_model: str = "knn"
    student_model: str = "logreg"
    features: str = "pixels"
    query_mode: str = "points"
    data_dependent: bool = False
    accountant: str = "rdp"
    baseline: bool = False
    seed: int = 0
    secure: bool = False

    @property
    def sigma1(self) -> float | None:
        """Confident-GNMax's check noise in votes (None for the other aggregators)."""
        return self.threshold_noise * self.teachers if self.aggregator == "confident" else None

    @property
    def threshold_votes(self) -> float:
        """Confident-GNMax's threshold T in votes."""
        return self.threshold * self.teachers

    def __post_init__(self) -> None:
        if self.aggregator not in AGGREGATORS:
            raise DPValueError(f"aggregator must be one of {AGGREGATORS}, got {self.aggregator!r}")
        object.__setattr__(self, "teachers", check_int(self.teachers, "teachers", minimum=1))
        object.__setattr__(self, "queries", check_int(self.queries, "queries", minimum=1))
        if self.noise_scale is not None:
            object.__setattr__(self, "noise_scale", check_positive(self.noise_scale, "noise_scale"))
        elif self.target_epsilon is None:
            raise DPValueError("give either noise_scale or target_epsilon")
        else:
            object.__setattr__(self, "target_epsilon", check_epsilon(self.target_epsilon, "target_epsilon"))
        object.__setattr__(self, "delta", check_delta(
            self.delta, allow_zero=self.aggregator == "lnmax",
            zero_hint="this aggregator's vote noise is Gaussian, which needs delta > 0 (1e-5 is usual); for delta = 0 "
                      "choose the LNMax aggregator (Laplace noise, aggregator=lnmax)"))
        if not 0.0 < float(self.public_fraction) < 1.0:
            raise DPValueError(f"public_fraction must be strictly between 0 and 1, got {self.public_fraction}")
        for name in ("teacher_model", "student_model"):
            if getattr(self, name) not in MODELS:
                raise DPValueError(f"{name} must be one of {sorted(MODELS)}, got {getattr(self, name)!r}")
        if self.accountant not in ACCOUNTANTS:
            raise DPValueError(f"accountant must be one of {ACCOUNTANTS}, got {self.accountant!r}")
        if self.features not in FEATURES:
            raise DPValueError(f"features must be one of {FEATURES}, got {self.features!r}")
        if self.query_mode not in QUERY_MODES:
            raise DPValueError(f"query_mode must be one of {QUERY_MODES}, got {self.query_mode!r}")
        if self.data_dependent and self.aggregator == "lnmax":
            raise DPValueError("the data-dependent analysis is implemented for the Gaussian aggregators only: use "
                               "aggregator='gnmax' or 'confident'")
        if not 0.0 < float(self.threshold) <= 1.0:
            raise DPValueError(f"threshold is a share of the teachers, in (0, 1]; got {self.threshold}")
        object.__setattr__(self, "threshold_noise", check_positive(self.threshold_noise, "threshold_noise"))
        object.__setattr__(self, "seed", check_int(self.seed, "seed", minimum=0))


@dataclass(frozen=True, eq=False)
class PateResult:
    """What a PATE run gives back (numpy/pandas only, so it pickles for caching).

    Accuracies are on the test part, except ``label_accuracy`` (noisy labels vs the
    public part's true labels, which only the evaluation sees). ``epsilon`` and ``dp_event`` are the
    data-independent guarantee of everything the run published: the answered queries (``epsilon_answers`` alone)
    and, when the data-dependent epsilon was ``released``, that release too, a second mechanism on the private votes
    (Papernot et al. 2018, Theorem 23), composed with the answers order by order at the same delta
    (:meth:`~dpcore.pate.confident.ReleaseParameters.dp_event`). ``epsilon_data_dependent``
    (optional) is the data-dependent analysis, not itself private. ``neighbouring`` says what ``epsilon``
    protects, one private record added or removed: a :class:`~dpcore.accounting.PrivacyLedger` given this result
    checks it against its own.
    """

    config: PateConfig
    noise_scale: float
    epsilon: float
    delta: float
    epsilon_pure: float | None
    epsilon_data_dependent: float | None
    student_accuracy: float
    label_accuracy: float
    ensemble_accuracy: float
    teacher_accuracies: np.ndarray
    nonprivate_accuracy: float
    history: pd.DataFrame
    votes: np.ndarray  # (queries, classes) teacher vote histograms of the answered queries
    noisy_votes: np.ndarray  # the same plus the aggregator's noise (argmax = noisy label)
    noisy_labels: np.ndarray
    true_public_labels: np.ndarray  # evaluation only
    query_index: np.ndarray  # rows of the public part that were queried
    partition_sizes: np.ndarray
    split_sizes: dict
    per_query_rdp: np.ndarray | None
    dp_event: dp_accounting.DpEvent
    seconds: float
    teacher_seconds: float
    student_predictions: np.ndarray = field(repr=False, default=None)
    cluster_of_public_row: np.ndarray | None = None  # query_mode="clusters": the query (cluster) of each public row
    answered: np.ndarray | None = None  # which queries got a label (all but Confident-GNMax's failed checks)
    released: ReleasedEpsilon | None = None  # data_dependent: the data-dependent epsilon released privately
    epsilon_answers: float | None = None  # the answered queries alone (``epsilon`` less the release, if any)
    #: data_dependent, calibrated to a target the release alone would cost at least: what it would cost (it was
    #: withheld, and the answers spent the whole target); None otherwise
    release_withheld: float | None = None

    @property
    def neighbouring(self):
        """What ``epsilon`` protects: one private record added or removed
        (:data:`~dpcore.pate.analysis.PATE_NEIGHBOURING`)."""
        return PATE_NEIGHBOURING

    @property
    def answered_count(self) -> int:
        return int(self.noisy_labels.size if self.answered is None else np.sum(self.answered))

    @property
    def teacher_mean_accuracy(self) -> float:
        return float(np.mean(self.teacher_accuracies))

    @property
    def cluster_sizes(self) -> np.ndarray | None:
        """Public examples in each answered cluster (None when each query is one example)."""
        a = self.cluster_of_public_row
        return None if a is None else np.bincount(a, minlength=len(self.votes))


def _query_grid(q: int) -> list[int]:
    pts = sorted({max(1, int(round(q * f))) for f in np.linspace(0, 1, 21)[1:]})
    return pts


def train_student(X_queries: np.ndarray, noisy_labels: np.ndarray, *, model: str,
                  rng: RngLike = None) -> Any:  # a fitted scikit-learn style classifier
    """Train the student on public inputs and the aggregator's noisy labels (and nothing else)."""
    return fit_classifier(model, X_queries, noisy_labels, random_state=child_seed(as_generator(rng)))


def _data_dependent_rdp(cfg: PateConfig, scale: float, votes: np.ndarray, answered: np.ndarray) -> np.ndarray:
    """Each query's data-dependent RDP on :data:`RDP_ORDERS` (Papernot et al. 2018, Theorem 6): the answer's where
    answered, plus the consensus check's for Confident-GNMax."""
    per = np.array([gnmax_data_dependent_rdp(gnmax_log_q(v, sigma=scale), sigma=scale) for v in votes])
    per = per * answered[:, None]
    if cfg.aggregator == "confident":
        log_p = log_pr_answered(votes, threshold=cfg.threshold_votes, sigma1=cfg.sigma1)
        log_not_p = log_pr_not_answered(votes, threshold=cfg.threshold_votes, sigma1=cfg.sigma1)
        per = per + np.array([check_data_dependent_rdp(x, sigma1=cfg.sigma1, log_not_p=y)
                              for x, y in zip(log_p, log_not_p)])
    return per


def _query_history(cfg: PateConfig, scale: float, votes: np.ndarray, labels: np.ndarray,
                   rows: tuple[np.ndarray, np.ndarray], cb: EpochCallback) -> tuple[pd.DataFrame, np.ndarray | None]:
    """Epsilon (data-independent, and the data-dependent analysis when asked) and label accuracy along the queries
    (for Confident-GNMax: the examined queries, with how many were answered); also each query's data-dependent RDP
    at the order that gives the final epsilon (None when not asked)."""
    answered = labels >= 0
    right, size = rows  # PublicQueries.rows_right
    per_query = cum_rdp = None
    if cfg.data_dependent:
        per_query = _data_dependent_rdp(cfg, scale, votes, answered)
        cum_rdp = np.cumsum(per_query, axis=0)
    rows = []
    for k in _query_grid(cfg.queries):
        eps_k = pate_epsilon(aggregator=cfg.aggregator, noise_scale=scale, queries=k, delta=cfg.delta,
                             accountant=cfg.accountant, threshold_noise=cfg.sigma1)
        got = answered[:k]
        row = {"epoch": k, "queries": k, "epsilon": eps_k,
               "label_accuracy": float(right[:k][got].sum() / size[:k][got].sum()) if got.any() else math.nan}
        if cfg.aggregator == "confident":
            row["answered"] = int(got.sum())
        if cum_rdp is not None:
            row["epsilon_data_dependent"] = rdp_epsilon(RDP_ORDERS, cum_rdp[k - 1], cfg.delta)[0]
        rows.append(row)
        cb({"epoch": k, "epochs": cfg.queries, "stage": "queries", "accuracy": row["label_accuracy"], "epsilon": eps_k})
    at_opt = None
    if per_query is not None:
        _, order = rdp_epsilon(RDP_ORDERS, cum_rdp[-1], cfg.delta)
        at_opt = per_query[:, int(np.argmin(np.abs(RDP_ORDERS - order)))]
    return pd.DataFrame(rows), at_opt


def _aggregate(cfg: PateConfig, scale: float, votes: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """The noisy label of every query (-1 where Confident-GNMax's check failed) and the noisy votes."""
    if cfg.aggregator == "confident":
        agg = ConfidentGNMax(threshold=cfg.threshold_votes, sigma1=cfg.sigma1, sigma2=scale)
        passed, noisy = agg.noisy_votes(votes, rng=rng)
        labels = np.where(passed, np.argmax(noisy, axis=1), -1)
        if not passed.any():
            raise DPValueError(
                f"no query passed Confident-GNMax's consensus check (threshold {cfg.threshold:g} of the teachers, "
                f"check noise {cfg.threshold_noise:g} of the teachers): the student has nothing to learn from; "
                "lower threshold, or ask more queries")
        return labels, noisy
    noisy = make_aggregator(cfg.aggregator, noise_scale=scale).noisy_votes(votes, rng=rng)
    return np.argmax(noisy, axis=1), noisy


def _released(cfg: PateConfig, scale: float, votes: np.ndarray, labels: np.ndarray, rng,
              withheld: float | None = None) -> ReleasedEpsilon | None:
    """The data-dependent epsilon released with smooth sensitivity (None when not asked, when the calibration
    withheld it, its release alone costing ``withheld``, or when its conditions fail for this noise: a warning says
    why)."""
    if not cfg.data_dependent:
        return None
    if withheld is not None:
        warnings.warn(f"the data-dependent epsilon is not released: releasing it alone would cost epsilon = "
                      f"{epsilon_text(withheld)}, not less than the target {cfg.target_epsilon:g}, so the answers "
                      "spend the whole target; raise epsilon to release it", stacklevel=user_stacklevel())
        return None
    confident = cfg.aggregator == "confident"
    try:
        return release_data_dependent_epsilon(
            votes, labels >= 0, teachers=cfg.teachers, sigma2=scale, delta=cfg.delta, rng=rng,
            threshold=cfg.threshold_votes if confident else None, sigma1=cfg.sigma1)
    except DPValueError as e:
        warnings.warn(f"the data-dependent epsilon is not released: {e}", stacklevel=user_stacklevel())
        return None


def _published(cfg: PateConfig, scale: float, eps_answers: float,
               released: ReleasedEpsilon | None) -> tuple[dp_accounting.DpEvent, float]:
    """The event and epsilon of everything the run published: the answers, and the released data-dependent epsilon
    (Theorem 23's RDP curve, composed with the answers' order by order by the ledger's RDP accountant and converted
    once, at ``cfg.delta``); the answers alone when nothing was released."""
    answers = pate_event(aggregator=cfg.aggregator, noise_scale=scale, queries=cfg.queries, threshold_noise=cfg.sigma1)
    if released is None:
        return answers, eps_answers
    event = dp_accounting.ComposedDpEvent([answers, released.params.dp_event])
    return event, epsilon_of_event(event, delta=cfg.delta, accountant=cfg.accountant, neighbouring=PATE_NEIGHBOURING)


def _prepared(data: "Split | PateData", cfg: PateConfig) -> PateData:
    """``data`` cut three ways (a Split) with ``cfg.features``, checked against ``cfg.queries``."""
    d = data if isinstance(data, PateData) else pate_split(data, public_fraction=cfg.public_fraction, seed=cfg.seed)
    if cfg.queries > d.y_public.size:
        what = "clusters" if cfg.query_mode == "clusters" else "queries"
        raise DPValueError(
            f"queries={cfg.queries} (queries asked) is more {what} than the {d.y_public.size} public examples; ask "
            f"fewer, or raise public_fraction (the public share of the training part, now {cfg.public_fraction:g})"
        )
    return with_features(d, cfg.features)


def _label_accuracy(queries: PublicQueries, d: PateData, labels: np.ndarray) -> float:
    """Share of the student's training labels that are right (evaluation only: uses the public rows' labels)."""
    rows = queries.index if queries.assignment is None else np.arange(d.y_public.size)
    label_of_row = labels if queries.assignment is None else labels[queries.assignment]
    keep = label_of_row >= 0
    return float(np.mean(label_of_row[keep] == d.y_public[rows][keep])) if keep.any() else math.nan


def _noise_scale(cfg: PateConfig, n_classes: int) -> tuple[float, float | None]:
    """The noise on each vote count, and, where the data-dependent epsilon is withheld for the target, what its
    release alone would cost (None: it is released, if asked and its conditions hold). Public quantities only: it is
    decided before any vote is cast.

    Set by the visitor, the noise is used as it is. Calibrated to a target, it is the smallest noise at which
    everything the run publishes costs at most the target: the answers, and with ``data_dependent`` the release of
    the data-dependent epsilon too, a second mechanism on the same votes (Papernot et al. 2018, Theorem 23), composed
    with the answers order by order (:func:`_published`). Where the release alone would cost the target or more, no
    noise on the answers can make room for it: the answers get the whole target, and the release is withheld.
    """
    if cfg.noise_scale is not None:
        return cfg.noise_scale, None
    answers_only = calibrate_noise_scale(aggregator=cfg.aggregator, target_epsilon=cfg.target_epsilon,
                                         delta=cfg.delta, queries=cfg.queries, accountant=cfg.accountant,
                                         threshold_noise=cfg.sigma1)
    if not cfg.data_dependent:
        return answers_only, None
    try:  # the total is never below the answers' own epsilon, so its noise is at least theirs. Searched with the
        # RDP accountant: the total is RDP's under either accountant (a PLD cannot hold the release's Rényi curve), and
        # where the release is refused RDP's epsilon of the answers is at least PLD's
        scale = calibrate(lambda s: _published_event(cfg, s, n_classes), target_epsilon=cfg.target_epsilon,
                          delta=cfg.delta, accountant="rdp", neighbouring=PATE_NEIGHBOURING,
                          guess=answers_only, lower=answers_only, name="noise_scale")
    except DPValueError:
        release = _release_event(cfg, answers_only, n_classes)
        alone = math.inf if release is None else epsilon_of_event(release, delta=cfg.delta, accountant=cfg.accountant,
                                                                  neighbouring=PATE_NEIGHBOURING)
        return answers_only, alone
    return scale, None


def _release_event(cfg: PateConfig, scale: float, n_classes: int) -> dp_accounting.DpEvent | None:
    """The event of releasing the data-dependent epsilon at noise ``scale`` (Theorem 23's RDP curve at the order
    :func:`~dpcore.pate.confident.release_parameters` picks from public quantities), or None where conditions C5-C6
    fail at every order (the release is refused, and costs nothing)."""
    try:
        return release_parameters(cfg.delta, sigma2=scale, classes=n_classes).dp_event
    except DPValueError:
        return None


def _published_event(cfg: PateConfig, scale: float, n_classes: int) -> dp_accounting.DpEvent:
    """The event of everything a run with ``data_dependent`` publishes at noise ``scale``: the answers, and the
    release where it can be made."""
    answers = pate_event(aggregator=cfg.aggregator, noise_scale=scale, queries=cfg.queries,
                         threshold_noise=cfg.sigma1)
    release = _release_event(cfg, scale, n_classes)
    return answers if release is None else dp_accounting.ComposedDpEvent([answers, release])


def _partition(d: PateData, cfg: PateConfig, rng) -> tuple[np.ndarray, ...]:
    """The teachers' disjoint parts of the private rows, a random partition kept secret as the noise is.

    One record added, removed or replaced changes one teacher's data, which the vote sensitivities assume
    (:mod:`.aggregation`): replaced, it keeps its place in the same permutation; added, it joins one part of a random
    partition of the others (a uniform partition of the records with the new one put in a uniformly chosen part of
    the size that grows is a uniform partition of the larger set, so the two runs can be coupled to differ in that one
    teacher only, and the guarantee holds over the partition's randomness). That needs the permutation secret: drawn
    from a public seed, a record added reshuffles every part. So in secure mode it comes from the operating system
    (:func:`~dpcore.rng.noise_generator`); a seeded run draws it from its seed, as it draws its noise (a
    demonstration whose numbers are the same for all, not a release)."""
    return partition_indices(d.y_private.size, cfg.teachers, rng=noise_generator(SECURE if cfg.secure else rng))


def _teachers(d: PateData, cfg: PateConfig, rng, cb: EpochCallback) -> tuple[list, list, list[float], float,
                                                                            np.ndarray]:
    """Teachers on disjoint partitions of the private part, each scored on the test part as it finishes: the
    partitions, the teachers, their test accuracies, the seconds per teacher and every teacher's predictions on the
    test part (shape (teachers, test rows); the noiseless ensemble is read from them, not predicted again)."""
    parts = _partition(d, cfg, rng)
    accuracies: list[float] = []
    on_test: list[np.ndarray] = []
    t0 = time.perf_counter()

    def after_teacher(i, model):
        on_test.append(predict(model, d.X_test))
        acc = float(np.mean(on_test[-1] == d.y_test))
        accuracies.append(acc)
        cb({"epoch": i + 1, "epochs": cfg.teachers, "stage": "teachers", "accuracy": acc, "epsilon": 0.0})

    teachers = train_teachers(d.X_private, d.y_private, parts, model=cfg.teacher_model, rng=rng,
                              on_teacher=after_teacher)
    seconds = (time.perf_counter() - t0) / cfg.teachers
    return parts, teachers, accuracies, seconds, np.stack(on_test) if on_test else np.zeros((0, d.y_test.size), int)


def _nonprivate_accuracy(d: PateData, cfg: PateConfig, rng) -> float:
    """Test accuracy of the student's model on all private rows with their true labels (no privacy)."""
    base = fit_classifier(cfg.student_model, d.X_private, d.y_private, random_state=child_seed(rng))
    return float(np.mean(predict(base, d.X_test) == d.y_test))


def _run_pate(data: "Split | PateData", config: PateConfig, *, on_epoch: EpochCallback | None = None) -> PateResult:
    """The body of :func:`run_pate`."""
    t0 = time.perf_counter()
    cfg = config
    d = _prepared(data, cfg)
    rng = substream(cfg.seed, "pate")
    cb = on_epoch or (lambda info: None)

    scale, withheld = _noise_scale(cfg, d.n_classes)  # privacy parameters first: they do not depend on the data
    parts, teachers, teacher_acc, teacher_seconds, teachers_on_test = _teachers(d, cfg, rng, cb)

    # votes on the queries; the noisy argmax (and Confident-GNMax's check) is all that leaves the teachers
    queries = public_queries(d, cfg, rng)
    votes = queries.votes(teachers, d)
    labels, noisy = _aggregate(cfg, scale, votes, rng)
    true_q = queries.true_labels(d)

    history, per_query_at_opt = _query_history(cfg, scale, votes, labels, queries.rows_right(d, labels), cb)
    eps_answers = float(history.epsilon.iloc[-1])
    eps_dd = float(history.epsilon_data_dependent.iloc[-1]) if cfg.data_dependent else None
    released = _released(cfg, scale, votes, labels, rng, withheld)
    event, epsilon = _published(cfg, scale, eps_answers, released)

    # the student: public inputs + noisy labels only
    X_student, y_student = queries.student_rows(d, labels)
    student = train_student(X_student, y_student, model=cfg.student_model, rng=rng)
    student_pred = predict(student, d.X_test)
    student_acc = float(np.mean(student_pred == d.y_test))
    cb({"epoch": cfg.queries, "epochs": cfg.queries, "stage": "student", "accuracy": student_acc, "epsilon": epsilon})

    ens = vote_histogram(teachers_on_test, d.n_classes).argmax(axis=1)
    nonpriv = _nonprivate_accuracy(d, cfg, rng) if cfg.baseline else math.nan

    return PateResult(
        config=cfg,
        noise_scale=float(scale),
        epsilon=epsilon,
        delta=cfg.delta,
        epsilon_pure=(float(make_aggregator("lnmax", noise_scale=scale).epsilon_per_query * cfg.queries)
                      if cfg.aggregator == "lnmax" else None),
        epsilon_data_dependent=eps_dd,
        student_accuracy=student_acc,
        label_accuracy=_label_accuracy(queries, d, labels),
        ensemble_accuracy=float(np.mean(ens == d.y_test)),
        teacher_accuracies=np.asarray(teacher_acc),
        nonprivate_accuracy=nonpriv,
        history=history,
        votes=votes,
        noisy_votes=noisy,
        noisy_labels=labels,
        true_public_labels=true_q,
        query_index=queries.index,
        partition_sizes=np.array([p.size for p in parts]),
        split_sizes=d.sizes,
        per_query_rdp=per_query_at_opt,
        dp_event=event,
        seconds=time.perf_counter() - t0,
        teacher_seconds=teacher_seconds,
        student_predictions=student_pred,
        cluster_of_public_row=queries.assignment,
        answered=labels >= 0,
        released=released,
        epsilon_answers=eps_answers,
        release_withheld=withheld,
    )


def run_pate(data: "Split | PateData", config: PateConfig, *, on_epoch: EpochCallback | None = None) -> PateResult:
    """Run PATE: teachers on disjoint private partitions, noisy votes on public queries, a student (secure mode
    when ``config.secure``).

    Parameters
    ----------
    data : Split or PateData
        A registry split (cut three ways by :func:`pate_split` with
        ``config.public_fraction``) or an already cut :class:`PateData`.
    config : PateConfig
    on_epoch : callable, optional
        Progress hook, called after every teacher (``stage="teachers"``), along the
        answered queries (``stage="queries"``, with epsilon so far) and after the
        student (``stage="student"``).

    Returns
    -------
    PateResult

    References
    ----------
    Papernot et al. 2017 (Section 2, LNMax) and 2018 (Section 4, GNMax).
    """
    with noise_mode(config.secure):  # secure: every vote's noise from the operating system
        return _run_pate(data, config, on_epoch=on_epoch)


def epsilon_sweep(
    data: "Split | PateData",
    config: PateConfig,
    *,
    epsilons,
    on_point: Callable[[int, float, dict], None] | None = None,
) -> pd.DataFrame:
    """Accuracy against the budget: the teachers are trained once, then for every target
    epsilon the noise is calibrated, the queries relabelled and a student trained.

    Returns one row per epsilon: ``epsilon``, ``noise_scale``, ``teacher_accuracy``
    (mean over teachers), ``ensemble_accuracy`` (noiseless plurality vote),
    ``label_accuracy``, ``student_accuracy`` and ``nonprivate_accuracy`` (the student's
    model on all private data with their true labels).
    """
    cfg = config
    d = _prepared(data, cfg)
    rng = substream(cfg.seed, "pate")
    parts = _partition(d, cfg, rng)
    teachers = train_teachers(d.X_private, d.y_private, parts, model=cfg.teacher_model, rng=rng)
    teacher_acc = float(np.mean([np.mean(predict(t, d.X_test) == d.y_test) for t in teachers]))
    ens = float(np.mean(vote_histogram(teacher_predictions(teachers, d.X_test), d.n_classes).argmax(1) == d.y_test))
    queries = public_queries(d, cfg, rng)
    votes = queries.votes(teachers, d)
    nonpriv = _nonprivate_accuracy(d, cfg, rng)
    rows = []
    for i, eps in enumerate(sorted(float(e) for e in epsilons)):
        scale = calibrate_noise_scale(aggregator=cfg.aggregator, target_epsilon=eps, delta=cfg.delta,
                                      queries=cfg.queries, accountant=cfg.accountant, threshold_noise=cfg.sigma1)
        point_rng = substream(cfg.seed, "pate point", i)
        labels, _ = _aggregate(cfg, scale, votes, point_rng)
        student = train_student(*queries.student_rows(d, labels), model=cfg.student_model, rng=point_rng)
        row = {"epsilon": eps, "noise_scale": scale, "teacher_accuracy": teacher_acc, "ensemble_accuracy": ens,
               "label_accuracy": _label_accuracy(queries, d, labels),
               "student_accuracy": float(np.mean(predict(student, d.X_test) == d.y_test)),
               "nonprivate_accuracy": nonpriv}
        rows.append(row)
        if on_point is not None:
            on_point(i, eps, row)
    return pd.DataFrame(rows)


def teachers_sweep(
    data: "Split | PateData",
    config: PateConfig,
    *,
    teacher_counts,
    on_point: Callable[[int, int, dict], None] | None = None,
) -> pd.DataFrame:
    """The teachers trade-off (Papernot et al. 2017): more teachers means a larger vote gap (cheaper, more robust
    answers) but less data, hence weaker teachers. One full PATE run per teacher count at
    the configuration's noise / budget; one row each.
    """
    rows = []
    for i, t in enumerate(sorted(int(x) for x in teacher_counts)):
        r = run_pate(data, replace(config, teachers=t, baseline=False))
        row = {"teachers": t, "examples_per_teacher": float(np.mean(r.partition_sizes)),
               "teacher_accuracy": r.teacher_mean_accuracy, "ensemble_accuracy": r.ensemble_accuracy,
               "label_accuracy": r.label_accuracy, "student_accuracy": r.student_accuracy,
               "mean_vote_gap": float(np.mean(_top_gap(r.votes))), "epsilon": r.epsilon,
               "noise_scale": r.noise_scale}
        rows.append(row)
        if on_point is not None:
            on_point(i, t, row)
    return pd.DataFrame(rows)


def _top_gap(votes: np.ndarray) -> np.ndarray:
    """Difference between the two largest vote counts of each query."""
    s = np.sort(votes, axis=1)
    return s[:, -1] - s[:, -2]
