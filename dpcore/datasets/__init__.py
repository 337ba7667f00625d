"""Offline datasets and the CSV upload loader.

Registry names (used by the CLI and every page): ``iris``, ``wine``,
``breast_cancer``, ``digits``, ``diabetes``, ``mnist5k``, ``adult``, ``faces``.
Your own data: :func:`as_dataset` (a DataFrame with a label column, or arrays);
:class:`BoundedScaler` scales by declared bounds inside a scikit-learn Pipeline.
"""
from .csv_upload import BOUNDS_FORMS, bounds_by_column, load_csv, read_csv_columns
from .own import as_dataset
from .registry import REGISTRY, Dataset, DatasetInfo, Split, dataset_names, load_dataset, train_test_split
from .scaler import BoundedScaler
from .transforms import clip_rows_to_norm, scale_to_unit_interval, standardize_with_bounds

__all__ = [
    "BOUNDS_FORMS",
    "BoundedScaler",
    "as_dataset",
    "bounds_by_column",
    "REGISTRY",
    "Dataset",
    "DatasetInfo",
    "Split",
    "dataset_names",
    "load_dataset",
    "train_test_split",
    "load_csv",
    "read_csv_columns",
    "scale_to_unit_interval",
    "standardize_with_bounds",
    "clip_rows_to_norm",
]
