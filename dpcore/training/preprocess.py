"""Data-independent feature scaling for training: only the dataset's declared (public) bounds are used."""
from __future__ import annotations

import numpy as np

from ..datasets import standardize_with_bounds
from ..validation import check_bounds


def prepare_features(X, bounds, *, warn: bool = True) -> np.ndarray:
    """Map every feature from its public ``bounds`` onto [-1, 1] as float32.

    Values outside the bounds are clipped to them with a warning (never silently).
    No statistic of the private data is used, so this costs no privacy.

    Examples
    --------
    >>> prepare_features([[0.0, 8.0]], ((0.0, 0.0), (16.0, 16.0))).tolist()
    [[-1.0, 0.0]]
    """
    X = np.asarray(X, dtype=float)
    lo, hi = check_bounds(bounds, X.shape[1])
    if warn:
        from ..validation import clip_to_bounds

        X = clip_to_bounds(X, lo, hi)
    return standardize_with_bounds(X, (lo, hi)).astype(np.float32)


FEATURES = ("pixels", "dct")


def dct_features(X, image_shape: tuple[int, int], k: int) -> np.ndarray:
    """Low-frequency 2-D DCT coefficients of images: the top-left ``k x k`` block of an orthonormal DCT-II.

    A fixed, data-independent linear map (so it costs no privacy). Keeping the
    low frequencies of a handwritten digit keeps most of its shape while the
    model gets far fewer weights, and DP-SGD's noise grows with the number of
    weights it perturbs: handcrafted features help DP training (Tramèr & Boneh,
    Differentially private learning needs better features (or much more data),
    ICLR 2021). Orthonormality means ``||dct(x)|| <= ||x||``.

    Examples
    --------
    >>> dct_features(np.ones((1, 16)), (4, 4), 2).round(6).tolist()
    [[4.0, 0.0, 0.0, 0.0]]
    """
    from scipy.fft import dctn

    X = np.asarray(X, dtype=float)
    h, w = (int(s) for s in image_shape)
    k = int(k)
    if not 1 <= k <= min(h, w):
        from ..exceptions import DPValueError

        raise DPValueError(f"dct_size must be between 1 and {min(h, w)} for {h}x{w} images, got {k}")
    coef = dctn(X.reshape(-1, h, w), axes=(1, 2), norm="ortho")[:, :k, :k]
    return coef.reshape(X.shape[0], k * k).astype(np.float32)
