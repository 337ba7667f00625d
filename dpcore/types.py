"""Type aliases of the public API, for the arguments that take several forms.

>>> from dpcore.types import RngLike
>>> RngLike  # doctest: +ELLIPSIS
typing.Union[int, numpy.random...Generator, str, NoneType]
"""
from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING, Any, Callable, Mapping, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:  # pragma: no cover - names for the type checker only
    import pandas as pd

#: A source of randomness: a seed, a numpy Generator, ``"secure"`` (the operating system's) or None.
RngLike = Union[int, np.random.Generator, str, None]
#: Declared bounds, in any of :data:`dpcore.datasets.BOUNDS_FORMS`: ``{column: (low, high)}``,
#: ``"col=low:high"`` text, or a pair ``(low, high)`` of numbers or of per-column sequences.
BoundsLike = Union[Mapping[str, Sequence[float]], str, Sequence[Any], None]
#: Declared categories of text (or coded) columns: ``{column: [value, ...]}`` or ``"col=a|b|c"`` text
#: (:func:`dpcore.datasets.csv_upload.parse_categories`).
CategoriesLike = Union[Mapping[str, Sequence[Any]], str, None]
#: A CSV upload: a path, bytes, text (with a newline), a file object, or a pandas DataFrame.
CsvSource = Union[str, bytes, "os.PathLike[str]", IO[Any], "pd.DataFrame"]
#: What a learner runs on: a registry name, a Dataset, a Split, a DataFrame, a pair (X, y) or an array X.
DataLike = Union[str, "pd.DataFrame", tuple, ArrayLike, Any]
#: A callback or factory the caller provides.
AnyCallable = Callable[..., Any]

__all__ = ["AnyCallable", "ArrayLike", "BoundsLike", "CategoriesLike", "CsvSource", "DataLike", "RngLike"]
