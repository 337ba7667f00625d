"""Image quality of a noisy image against its original: PSNR and SSIM.

Both use the public pixel range as the data range, so numbers are comparable
across sets with different ranges (digits 0-16, faces 0-1, photos 0-255).
"""
from __future__ import annotations

import math

import numpy as np
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

from ..exceptions import DPValueError
from ..types import ArrayLike

__all__ = ["psnr", "ssim"]


def _pair(original, noisy) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(original, dtype=float)
    b = np.asarray(noisy, dtype=float)
    if a.shape != b.shape:
        raise DPValueError(f"original and noisy images must have the same shape, got {a.shape} and {b.shape}")
    return a, b


def psnr(original: ArrayLike, noisy: ArrayLike, *, data_range: float) -> float:
    """Peak signal-to-noise ratio in dB: ``10 log10(R^2 / MSE)`` (inf for identical images).

    >>> round(psnr(np.zeros((4, 4)), np.full((4, 4), 0.1), data_range=1.0), 6)
    20.0
    """
    a, b = _pair(original, noisy)
    if np.array_equal(a, b):
        return math.inf
    return float(peak_signal_noise_ratio(a, b, data_range=float(data_range)))


def ssim(original: ArrayLike, noisy: ArrayLike, *, data_range: float) -> float:
    """Structural similarity (Wang et al. 2004) in [-1, 1], 1 for identical images.

    The window is 7x7 (scikit-image's default), shrunk to the largest odd size
    that fits images smaller than 7 pixels on a side; NaN below 3 pixels.

    References
    ----------
    Wang, Bovik, Sheikh, Simoncelli. Image quality assessment: from error visibility
    to structural similarity. IEEE TIP 13(4), 2004.
    """
    a, b = _pair(original, noisy)
    side = min(a.shape[0], a.shape[1])
    win = min(7, side if side % 2 else side - 1)
    if win < 3:
        return math.nan
    channel_axis = -1 if a.ndim == 3 else None
    return float(structural_similarity(a, b, data_range=float(data_range), win_size=win, channel_axis=channel_axis))
