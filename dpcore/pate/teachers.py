"""Disjoint partitions of the private data and one teacher per partition.

Teachers are ordinary non-private scikit-learn classifiers: a teacher's own
parameters are never released, only its votes go through the noisy aggregator.
Features are scaled with the dataset's declared public bounds before training.

References
----------
Papernot et al., "Semi-supervised Knowledge Transfer for Deep Learning from
Private Training Data", ICLR 2017, Section 2.1 (training the ensemble of teachers).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..exceptions import DPValueError
from ..rng import as_generator, child_seed
from ..runtime.thread_warnings import ignored
from ..types import RngLike
from ..validation import check_int

#: Teacher / student model families: name -> human label.
MODELS = {
    "logreg": "Logistic regression (scikit-learn)",
    "mlp": "Small neural network, one hidden layer of 64 (scikit-learn)",
    "knn": "Nearest neighbour (1-NN, Euclidean): the strongest teacher on a handful of rows each",
}

_CONTROLLER = None


def one_thread():
    """A context in which BLAS and OpenMP use one thread: many small fits are faster without oversubscribing the
    cores. The libraries are looked up once per process (a fresh ``threadpool_limits`` scans them every time,
    a few milliseconds that add up over hundreds of teachers)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1)


class NearestNeighbour:
    """1-nearest-neighbour classifier (Euclidean distance; the first of equally near training rows wins), in a few
    matrix products: the same predictions as scikit-learn's ``KNeighborsClassifier(n_neighbors=1)`` up to ties,
    without its per-call set-up, which dominated PATE's hundreds of small teachers."""

    def fit(self, X, y) -> "NearestNeighbour":
        self.X_ = np.asarray(X, dtype=np.float64)
        self.y_ = np.asarray(y, dtype=np.int64)
        self.sq_ = np.einsum("ij,ij->i", self.X_, self.X_)
        return self

    def predict(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        out = np.empty(X.shape[0], dtype=np.int64)
        step = max(1, 2_000_000 // max(1, self.X_.shape[0]))  # at most ~16 MB of distances at a time
        for i in range(0, X.shape[0], step):
            # |x - t|^2 = |t|^2 - 2 x.t + |x|^2, and |x|^2 is the same for every t: leave it out of the argmin
            d = self.sq_[None, :] - 2.0 * (X[i:i + step] @ self.X_.T)
            out[i:i + step] = self.y_[np.argmin(d, axis=1)]
        return out


def partition_indices(n: int, teachers: int, *, rng: RngLike = None) -> tuple[np.ndarray, ...]:
    """Split ``range(n)`` into ``teachers`` disjoint, near-equal random parts.

    Parameters
    ----------
    n : int
        Number of private examples.
    teachers : int
        Number of partitions (one per teacher); at most ``n``.
    rng : int, Generator or None

    Returns
    -------
    tuple of sorted int arrays, pairwise disjoint, whose union is ``range(n)``.

    Examples
    --------
    >>> [p.size for p in partition_indices(10, 3, rng=0)]
    [4, 3, 3]
    """
    n = check_int(n, "n", minimum=1)
    teachers = check_int(teachers, "teachers", minimum=1)
    if teachers > n:
        raise DPValueError(
            f"teachers={teachers} is more than the {n} private examples: every teacher needs its own disjoint "
            f"data. Use at most {n} teachers (in practice far fewer, so each has dozens of examples) or more data."
        )
    perm = as_generator(rng).permutation(n)
    return tuple(np.sort(p) for p in np.array_split(perm, teachers))


class ConstantClassifier:
    """Predicts one class: a teacher whose partition held a single class."""

    def __init__(self, label: int) -> None:
        self.label = int(label)

    def predict(self, X) -> np.ndarray:
        return np.full(np.asarray(X).shape[0], self.label, dtype=np.int64)


def make_model(name: str, *, random_state: int):
    """A fresh scikit-learn classifier of family ``name`` (see :data:`MODELS`)."""
    if name == "logreg":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=200, C=1.0, random_state=random_state)
    if name == "mlp":
        from sklearn.neural_network import MLPClassifier

        return MLPClassifier(hidden_layer_sizes=(64,), max_iter=150, alpha=1e-3, random_state=random_state)
    if name == "knn":
        return NearestNeighbour()
    raise DPValueError(f"model must be one of {sorted(MODELS)}, got {name!r}")


def fit_classifier(name: str, X: np.ndarray, y: np.ndarray, *, random_state: int):
    """Fit a model of family ``name`` on (X, y); a single-class y gives a :class:`ConstantClassifier`."""
    y = np.asarray(y, dtype=np.int64)
    if y.size == 0:
        raise DPValueError("cannot train a model on zero examples")
    classes = np.unique(y)
    if classes.size == 1:
        return ConstantClassifier(int(classes[0]))
    model = make_model(name, random_state=random_state)
    with one_thread(), ignored(Warning, ".*(converge|Maximum iterations).*"):
        model.fit(X, y)
    return model


def predict(model, X: np.ndarray) -> np.ndarray:
    with one_thread():
        return np.asarray(model.predict(X), dtype=np.int64)


def train_teachers(
    X_private: np.ndarray,
    y_private: np.ndarray,
    partitions: Sequence[np.ndarray],
    *,
    model: str = "logreg",
    rng: RngLike = None,
    on_teacher: Callable[[int, object], None] | None = None,
) -> list:
    """Train one teacher per partition; teacher ``i`` sees only rows ``partitions[i]``.

    Parameters
    ----------
    X_private, y_private : arrays
        The private (sensitive) training data.
    partitions : sequence of index arrays
        Pairwise disjoint (checked), e.g. from :func:`partition_indices`.
    model : {"logreg", "mlp"}
    rng : int, Generator or None
    on_teacher : callable, optional
        Called as ``on_teacher(i, fitted_model)`` after each teacher.
    """
    g = as_generator(rng)
    seen = np.concatenate([np.asarray(p, dtype=np.int64) for p in partitions]) if partitions else np.zeros(0, int)
    if np.unique(seen).size != seen.size:
        raise DPValueError("teacher partitions overlap; PATE's privacy analysis needs disjoint partitions")
    out = []
    for i, idx in enumerate(partitions):
        m = fit_classifier(model, X_private[idx], y_private[idx], random_state=child_seed(g))
        out.append(m)
        if on_teacher is not None:
            on_teacher(i, m)
    return out


def teacher_predictions(teachers: Sequence, X: np.ndarray) -> np.ndarray:
    """Every teacher's predicted class on every row of X: shape (n_teachers, n_rows)."""
    return np.stack([predict(t, X) for t in teachers]) if teachers else np.zeros((0, X.shape[0]), dtype=np.int64)
