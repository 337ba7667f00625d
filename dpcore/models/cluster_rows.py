"""k-means on a table with no class label: the owner's own rows clustered privately, read without classes.

The Clustering page and ``python -m dpcore cluster`` score a clustering against a label of classes (accuracy after
Hungarian matching, on held-out rows). A table with no label can still be clustered: k-means needs the rows alone.
Here every row is clustered (no split: nothing is held out, since nothing is predicted), by DPLloyd (Su et al.
2016), Laplace input perturbation or non-private Lloyd, with the same estimators and knobs as the labelled runs
(:func:`dpcore.models.learners.kmeans_estimator`), and read by what needs no classes:

* the within-cluster over the total sum of squares of the rows in the ``[-1, 1]^d`` coordinates of the declared
  bounds (Su et al. 2016's normalised intra-cluster variance, NICV), beside the non-private Lloyd's and beside k
  centres drawn at random in the declared bounds (:func:`~dpcore.models.kmeans.random_centres_reference`, no data
  used to place them);
* the ε the run spent and its dp_accounting event (the centres are the release);
* the centres in the columns' own units.

The score is a statistic of the private rows themselves, computed after the release: ε does not cover it. It is
for the owner, who holds the rows anyway; publishing it is a further release that the run's ε does not account for.

References
----------
Su, Cao, Li, Bertino, Jin. Differentially private k-means clustering. CODASPY 2016.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..accounting import Neighbouring
from ..exceptions import DPValueError
from ..rng import noise_mode, secure_or_seed
from ..validation import check_epsilon, check_int
from .kmeans import RandomCentresReference, random_centres_reference
from .metrics import intra_cluster_variance

#: k when the owner gives none: a table with no classes suggests no number of clusters.
DEFAULT_K = 3
#: The methods, private first, by their learner names (their labels are the Clustering page's).
METHODS = ("dplloyd", "input-perturbation", "lloyd")
#: What the within / total score is, said wherever it is shown for a table's own rows.
SCORE_NOTE = ("The within / total sum of squares is computed on your private rows after the release: it is a "
              "statistic of those rows that ε does not cover. Keep it to yourself, or count it as a further release.")
#: Why no accuracy is shown.
NO_ACCURACY_NOTE = "Accuracy is not shown because the file has no classes to score the clusters against."


@dataclass(frozen=True)
class RowsClustering:
    """One method's clustering of every row of a table with no label.

    ``centres`` (k x d) are in the columns' own units, ``centres_unit`` in the ``[-1, 1]^d`` coordinates of the
    declared bounds; ``within_total``: within-cluster / total sum of squares of the rows in those coordinates (not
    covered by ε: :data:`SCORE_NOTE`); ``labels``: each row's cluster (the owner's, like the rows); ``epsilon``: what
    the run spent (infinite for Lloyd, which is not private); ``dp_event``: its dp_accounting event (None for Lloyd);
    ``run``: what DPLloyd did (its start, rounds, budget of the start, rows scaled down).
    """

    method: str
    k: int
    epsilon: float
    within_total: float
    centres: np.ndarray = field(repr=False)
    centres_unit: np.ndarray = field(repr=False)
    labels: np.ndarray = field(repr=False)
    dp_event: Any = field(default=None, repr=False)
    neighbouring: str | None = None
    run: dict = field(default_factory=dict, repr=False)

    @property
    def private(self) -> bool:
        return self.dp_event is not None


def _rows_and_bounds(dataset) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    X, bounds = getattr(dataset, "X", None), getattr(dataset, "bounds", None)
    if X is None:
        raise DPValueError(f"dataset must be a Dataset (e.g. dpcore.datasets.load_csv_unlabelled), got "
                           f"{type(dataset).__name__}")
    if bounds is None:
        raise DPValueError(f"dataset {dataset.name!r} declares no bounds: declare each column's range (bounds=...) "
                           "so that the clustering's sensitivity does not depend on the private rows")
    return np.asarray(X, dtype=float), bounds


def cluster_rows(dataset, method: str, *, k: int = DEFAULT_K, epsilon: float | None = None,
                 params: Mapping[str, Any] | None = None, seed: int | None = 0) -> RowsClustering:
    """Cluster every row of ``dataset`` (a :class:`~dpcore.datasets.Dataset`, labelled or not: only ``X`` and its
    declared ``bounds`` are read) by ``method`` ("dplloyd", "input-perturbation" or "lloyd").

    ``epsilon``: the budget of a private method (required there; refused for Lloyd). ``params``: the method's
    knobs as the learners take them (``iterations``, ``neighbouring``, ``init``, ``count_fraction``,
    ``init_fraction``, ``l1_norm`` for DPLloyd, ``clip_noisy`` for input perturbation). ``seed`` None: secure noise
    (drawn from the operating system, :func:`dpcore.rng.secure_noise`), the data-independent start from seed 0.

    >>> from dpcore.datasets.csv_upload import load_csv_unlabelled
    >>> ds = load_csv_unlabelled("a,b\\n0,0\\n0,1\\n9,9\\n9,8\\n", bounds="*=0:9")
    >>> res = cluster_rows(ds, "dplloyd", k=2, epsilon=1.0, seed=0)
    >>> res.epsilon, res.centres.shape
    (1.0, (2, 2))
    """
    from .learners import kmeans_estimator

    if method not in METHODS:
        raise DPValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    X, bounds = _rows_and_bounds(dataset)
    k = check_int(k, "k", minimum=1)
    private = method != "lloyd"
    if private:
        if epsilon is None:
            raise DPValueError(f"{method} is private and needs epsilon > 0")
        epsilon = check_epsilon(epsilon)
    elif epsilon is not None:
        raise DPValueError("lloyd is not private and takes no epsilon; leave it out")
    secure, seed = secure_or_seed(seed)
    est = kmeans_estimator(method, k, epsilon=epsilon, bounds=bounds, seed=seed, params=dict(params or {}))
    with noise_mode(secure):  # every noise draw from the OS; the data-independent start still from the seed
        est.fit(X)
    Z = est.transform_unit(X)
    labels = est.predict(X)
    run = {}
    if method == "dplloyd":
        run = {"init": est.init_, "rounds": est.n_iter_, "epsilon_init": est.noise_scales_["eps_init"],
               "rows_clipped": est.n_rows_clipped_, "n_train": int(X.shape[0]), "neighbouring": est.neighbouring}
    relation = (Neighbouring.of(est.neighbouring).value if method == "dplloyd"
                else Neighbouring.REPLACE_ONE.value if method == "input-perturbation" else None)
    return RowsClustering(method, k, float(est.epsilon_spent_),
                          intra_cluster_variance(Z, labels, est.cluster_centers_unit_),
                          np.asarray(est.cluster_centers_), np.asarray(est.cluster_centers_unit_), labels,
                          est.dp_event_ if private else None, relation, run)


def random_centres_on_rows(dataset, k: int = DEFAULT_K) -> RandomCentresReference:
    """k centres drawn uniformly in ``dataset``'s declared bounds (no data used to place them), scored on every
    row by the within / total sum of squares, mean and spread over their draws; the accuracy fields are NaN."""
    X, bounds = _rows_and_bounds(dataset)
    return random_centres_reference(X, None, check_int(k, "k", minimum=1), bounds=bounds)


__all__ = ["DEFAULT_K", "METHODS", "NO_ACCURACY_NOTE", "SCORE_NOTE", "RowsClustering", "cluster_rows",
           "random_centres_on_rows"]
