"""Offline datasets and the CSV upload loader.

Registry names (used by the CLI and every page): ``iris``, ``wine``,
``breast_cancer``, ``digits``, ``diabetes``, ``mnist5k``, ``adult``, ``faces``.
"""
from .csv_upload import load_csv, read_csv_columns
from .registry import REGISTRY, Dataset, DatasetInfo, Split, dataset_names, load_dataset, train_test_split
from .transforms import clip_rows_to_norm, scale_to_unit_interval, standardize_with_bounds

__all__ = [
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
