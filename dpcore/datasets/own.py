"""Your own data as a :class:`~dpcore.datasets.Dataset`: a pandas DataFrame with a label column, or arrays (X, y).

Every entry point that takes a dataset (:func:`dpcore.learners.run_learner`, the sweep, the audits) takes what
:func:`as_dataset` turns into one, with the checks an uploaded file gets (numeric features or declared categories,
no missing values, classes or a regression target, declared bounds and the
:class:`~dpcore.exceptions.PrivacyLeakWarning` when a column's range is read from the rows).
"""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np
import pandas as pd

from ..exceptions import DatasetError, DPTypeError, DPValueError
from ..types import ArrayLike, BoundsLike, CategoriesLike, DataLike
from .csv_upload import load_csv
from .registry import REGISTRY, Dataset, load_dataset

#: The label column's name when the labels come as a separate vector.
LABEL = "label"


def as_dataset(data: DataLike, label: ArrayLike | str | None = None, *, task: str | None = None,
               bounds: BoundsLike = None, name: str = "data", class_shares=None,
               drop: str | Sequence[str] = (), categories: CategoriesLike = None) -> Dataset:
    """``data`` as a Dataset: a registry name or a Dataset as they are, a CSV file, a DataFrame, or arrays.

    Parameters
    ----------
    data : str, path, Dataset, DataFrame, (X, y) or array
        A registry name (``"iris"``) or a :class:`Dataset` is returned as it is. A CSV file's path (a
        ``pathlib.Path``, or text naming a file that is not a registry name) is read as
        :func:`~dpcore.datasets.load_csv` reads it, ``label`` naming its label column. A DataFrame holds the
        feature columns and, unless ``label`` is a vector, the label column. A pair ``(X, y)`` or an array ``X``
        with ``label=y`` gives the features as columns ``x0, x1, ...`` (or a DataFrame's own names).
    label : str or array-like, optional
        The label column's name in a DataFrame or a CSV file, or the labels themselves (one per row).
    task : {"classification", "regression"} or None
        ``None`` guesses as :func:`~dpcore.datasets.load_csv` does (whole numbers with at most 20 values and text
        are classes).
    bounds : mapping, text or pair, optional
        Declared ranges, in any of the forms of :func:`~dpcore.datasets.csv_upload.bounds_by_column`:
        ``{"age": (17, 90), "*": (0, 1)}``, ``"age=17:90, *=0:1"`` or ``(low, high)``. A column without declared
        bounds gets its own min and max, with a PrivacyLeakWarning (those extremes are private values).
    name : str
        What results call the data.
    class_shares : text or mapping, optional
        A classification label's class shares, declared as public knowledge (``"fraud=0.07, ok=0.93"``): the
        classifiers that release class probabilities answer by them (:func:`~dpcore.datasets.load_csv`).
    drop : column name or names, optional
        Columns of your data to leave out before anything else is read (an identifier, free text):
        ``"id"`` or ``["id", "note"]``; an array's columns are ``x0, x1, ...``. Their cells are never checked or
        used.
    categories : mapping or text, optional
        The values each column of categories can hold, declared from what it means, not read from its rows:
        ``{"ward": ["Cardiology", "Oncology", "Surgery"]}`` or ``"ward=Cardiology|Oncology|Surgery, sex=F|M"``;
        each becomes one 0/1 feature per value, bounded 0:1 (:func:`~dpcore.datasets.load_csv`). Declared for the
        label (``"diagnosis=healthy|flu|covid"``; labels given as a vector are the column ``"label"``), the values
        are its classes, in that order, a class no row holds included; undeclared, the classes are read from the
        rows, with a PrivacyLeakWarning.

    Examples
    --------
    >>> import warnings
    >>> X = np.array([[0.1, 0.2], [0.9, 0.8], [0.2, 0.1], [0.8, 0.9]]); y = np.array([5, 8, 5, 8])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ds = as_dataset((X, y), bounds=(0.0, 1.0))
    >>> ds.feature_names, ds.classes, ds.y.tolist()
    (('x0', 'x1'), (5, 8), [0, 1, 0, 1])
    """
    if _is_csv_path(data):
        if not isinstance(label, str):
            raise DatasetError(f"the CSV file {os.fspath(data)!r} needs label='column': the name of its label column"
                               + ("" if label is None else f", not {type(label).__name__}"))
        if not os.path.isfile(data):
            raise DatasetError(f"there is no file {os.fspath(data)!r} (from {os.getcwd()}), and it is not a registry "
                               f"dataset ({', '.join(REGISTRY)})")
        return load_csv(data, label_column=label, task=task, bounds=bounds, drop=drop, class_shares=class_shares,
                        categories=categories, name=os.path.basename(os.fspath(data)) if name == "data" else name)
    if isinstance(data, Dataset) or isinstance(data, str):
        if label is not None or bounds is not None or task is not None or drop or categories is not None:
            raise DPTypeError("label=, task=, bounds=, drop= and categories= describe your own data (a DataFrame, "
                              "arrays or a CSV file); "
                              f"{'the registry dataset ' + repr(data) if isinstance(data, str) else 'a Dataset'} "
                              "carries its own")
        if isinstance(data, str) and data not in REGISTRY:
            raise DPValueError(f"unknown dataset {data!r}; choose one of {', '.join(REGISTRY)}, or give a CSV file's "
                               "path with label='column'")
        ds = load_dataset(data) if isinstance(data, str) else data
        return ds if class_shares is None else ds.with_class_shares(class_shares)
    if isinstance(data, tuple) and len(data) == 2:
        if label is not None:
            raise DPTypeError("give the labels once: as (X, y) or as X with label=y, not both")
        data, label = data
    if isinstance(data, pd.DataFrame):
        if isinstance(label, str) or (label is not None and np.ndim(label) == 0):
            return load_csv(data, label_column=label, task=task, bounds=bounds, name=name, class_shares=class_shares,
                            drop=drop, categories=categories)
        frame = data.copy()
    else:
        X = np.asarray(data)
        if X.ndim != 2:
            raise DatasetError(f"X must be a 2-D array (rows x features), got shape {X.shape}; give a DataFrame, "
                               "(X, y) arrays or a registry name")
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    if label is None:
        raise DatasetError("give the labels: label='column' for a DataFrame that holds them, or (X, y) / label=y")
    y = np.asarray(label)
    if y.ndim != 1 or y.shape[0] != frame.shape[0]:
        raise DatasetError(f"the labels must be one per row: X has {frame.shape[0]} rows, the labels have shape "
                           f"{y.shape}")
    if (missing := int(pd.isna(y).sum())) > 0:
        raise DatasetError(f"the labels have missing values ({missing} of {y.shape[0]} rows); remove those rows "
                           "first (every row needs its label)")
    column = LABEL
    while column in frame.columns:
        column = "_" + column
    frame[column] = y
    return load_csv(frame, label_column=column, task=task, bounds=bounds, name=name, class_shares=class_shares,
                    drop=drop, categories=categories)


def _is_csv_path(data: object) -> bool:
    """A path to your file: any ``os.PathLike``, or text that is not a registry name and names a file or ends in
    ``.csv`` (a registry name wins over a file of the same name in the working directory)."""
    if isinstance(data, os.PathLike):
        return True
    return isinstance(data, str) and data not in REGISTRY and (data.lower().endswith(".csv") or os.path.isfile(data))
