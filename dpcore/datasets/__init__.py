"""Offline datasets and the CSV upload loader.

Registry names (used by the CLI and every page): ``iris``, ``wine``,
``breast_cancer``, ``digits``, ``diabetes``, ``mnist5k``, ``adult``, ``faces``.
Your own data: :func:`as_dataset` (a DataFrame with a label column, or arrays), with its columns of categories
declared (:func:`parse_categories`);
:class:`BoundedScaler` scales by declared bounds inside a scikit-learn Pipeline.
"""
from __future__ import annotations

from .._lazy import lazy_names
from .registry import REGISTRY, Dataset, DatasetInfo, Split, dataset_names, load_dataset, train_test_split

#: The names of the other modules, loaded on first use (PEP 562): the registry's names above need neither pandas
#: nor scikit-learn, so ``python -m dpcore`` can check a --dataset name (or answer a sweep from its cache) without
#: them.
_WHERE = {
    "BOUNDS_FORMS": "csv_upload",
    "CATEGORIES_SYNTAX": "csv_upload",
    "CLASS_SHARES_SYNTAX": "shares",
    "parse_class_shares": "shares",
    "bounds_by_column": "csv_upload",
    "encode_categories": "csv_upload",
    "parse_categories": "csv_upload",
    "load_csv": "csv_upload",
    "load_csv_unlabelled": "csv_upload",
    "read_csv_columns": "csv_upload",
    "as_dataset": "own",
    "BoundedScaler": "scaler",
    "clip_rows_to_norm": "transforms",
    "scale_to_unit_interval": "transforms",
    "standardize_with_bounds": "transforms",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE)

__all__ = [
    "BOUNDS_FORMS",
    "CATEGORIES_SYNTAX",
    "CLASS_SHARES_SYNTAX",
    "BoundedScaler",
    "as_dataset",
    "bounds_by_column",
    "encode_categories",
    "parse_categories",
    "parse_class_shares",
    "REGISTRY",
    "Dataset",
    "DatasetInfo",
    "Split",
    "dataset_names",
    "load_dataset",
    "train_test_split",
    "load_csv",
    "load_csv_unlabelled",
    "read_csv_columns",
    "scale_to_unit_interval",
    "standardize_with_bounds",
    "clip_rows_to_norm",
]
