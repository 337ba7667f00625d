"""Data-independent features for training: public-bound scaling, a low-frequency DCT, and HOG.

Every transform here is a fixed per-sample map: a row's features depend on
that row alone and on public constants (the dataset's declared bounds and
image shape), never on a statistic of the private rows, so computing them
costs no privacy and DP-SGD's guarantee for the rows carries over unchanged.
"""
from __future__ import annotations

import functools
import hashlib

import numpy as np

from ..datasets.transforms import scale_within_bounds
from ..types import ArrayLike, BoundsLike
from ..validation import check_bounds, clip_to_bounds, within_bounds


def prepare_features(X: ArrayLike, bounds: BoundsLike, *, warn: bool = True) -> np.ndarray:
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
    if not within_bounds(X, lo, hi):
        X = clip_to_bounds(X, lo, hi) if warn else np.clip(X, lo, hi)
    return scale_within_bounds(X, lo, hi, dtype=np.float32)


FEATURES = ("pixels", "dct", "hog")
HOG_BLOCK_NORMS = ("L2-Hys", "L2", "L1", "L1-sqrt")


def dct_features(X: ArrayLike, image_shape: tuple[int, int], k: int) -> np.ndarray:
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


def hog_features(X: ArrayLike, image_shape: tuple[int, int], *, cell_size: int = 6, block_size: int = 2,
                 orientations: int = 9, block_norm: str = "L2-Hys", unit_norm: bool = True) -> np.ndarray:
    """Histogram-of-oriented-gradients features of every image, computed for all rows at once.

    Per image (Dalal & Triggs 2005, as in ``skimage.feature.hog``): central
    differences ``[-1, 0, 1]`` along rows and columns (zero on the border);
    each pixel votes its gradient magnitude into one of ``orientations``
    unsigned orientation bins of ``180/orientations`` degrees; votes are summed
    over non-overlapping ``cell_size x cell_size`` cells and divided by the cell
    area; every ``block_size x block_size`` block of cells (stride one cell) is
    normalised (``block_norm``, eps = 1e-5); the blocks are concatenated. When
    the image side is not a multiple of ``cell_size``, the cells tile a centred
    crop (``skimage`` crops the bottom/right edge instead; on a centred crop the
    two agree to float32 precision, except that a gradient lying exactly on a
    bin edge -- possible only at 0, 45, 90 or 135 degrees -- goes to the bin
    above the edge here, while skimage's float64 degrees may round it either
    way; with the default 9 bins no such edge exists besides 0). With
    ``unit_norm`` the whole vector is then divided by
    its L2 norm, so every row has norm 1 (0 for a blank image).

    This is a fixed per-sample transform: a row's features depend on that row
    only, never on other rows or on any statistic of the data set, so it costs
    no privacy. Handcrafted features of this kind followed by a linear model are
    what Tramèr & Boneh (2021) found to beat end-to-end private networks on small
    data: the model has far fewer weights for DP-SGD's noise to perturb, and
    HOG's gradient orientations are robust to the small shifts and stroke-width
    changes that a linear model on pixels must learn from (noisy) data. The unit
    norm fixes every row's scale, which fixes the gradient scale that the
    clipping bound C is compared with.

    Parameters
    ----------
    X : array of shape (n, h * w)
        Flattened images (any affine intensity scale: the block normalisation
        removes it).
    image_shape : (int, int)
        ``(h, w)``, public.
    cell_size : int, default 6
        Pixels per cell side.
    block_size : int, default 2
        Cells per block side; ``block_size * cell_size`` must fit in the image.
    orientations : int, default 9
        Orientation bins over [0, 180) degrees.
    block_norm : {"L2-Hys", "L2", "L1", "L1-sqrt"}, default "L2-Hys"
        As in ``skimage.feature.hog``.
    unit_norm : bool, default True
        Scale each row's feature vector to L2 norm 1.

    Returns
    -------
    ndarray of float32, shape (n, n_blocks_row * n_blocks_col * block_size**2 * orientations)

    Raises
    ------
    DPValueError
        If ``X`` does not hold ``h * w`` columns of finite numbers or the cell
        and block sizes do not fit in the image.

    References
    ----------
    Dalal, Triggs. Histograms of oriented gradients for human detection. CVPR 2005.
    Tramèr, Boneh. Differentially private learning needs better features (or much
    more data). ICLR 2021.
    van der Walt et al. scikit-image: image processing in Python. PeerJ 2014
    (``skimage.feature.hog``, the reference this implementation is tested against).

    Examples
    --------
    >>> img = np.zeros((1, 64)); img[0, [3, 11, 19, 27, 35, 43, 51, 59]] = 1.0   # a vertical bar
    >>> f = hog_features(img, (8, 8), cell_size=4, block_size=1)
    >>> f.shape, round(float(np.linalg.norm(f)), 6)
    ((1, 36), 1.0)
    """
    from ..exceptions import DPValueError
    from ..validation import check_array, check_int

    X = check_array(X, "X", ndim=2)
    if not np.all(np.isfinite(X)):
        raise DPValueError("X contains NaN or infinite values; HOG features need finite pixel values")
    h, w = (check_int(s, "image_shape", minimum=1) for s in image_shape)
    if X.shape[1] != h * w:
        raise DPValueError(f"image_shape={h}x{w} needs {h * w} columns per row, X has {X.shape[1]}")
    cell = check_int(cell_size, "cell_size", minimum=1)
    block = check_int(block_size, "block_size", minimum=1)
    n_or = check_int(orientations, "orientations", minimum=1)
    if block_norm not in HOG_BLOCK_NORMS:
        raise DPValueError(f"block_norm must be one of {HOG_BLOCK_NORMS}, got {block_norm!r}")
    nr, nc = h // cell, w // cell
    if nr < block or nc < block:
        raise DPValueError(f"cell_size={cell} with block_size={block} needs images of at least {cell * block}x"
                           f"{cell * block} pixels, got {h}x{w}; use a smaller cell_size or block_size")
    return _hog_cached(_digest(X), X, (h, w), cell, block, n_or, block_norm, bool(unit_norm)).copy()


def _digest(X: np.ndarray) -> tuple:
    """A hashable fingerprint of an array's exact contents (for the per-array feature cache)."""
    a = np.ascontiguousarray(X)
    return a.shape, str(a.dtype), hashlib.blake2b(a.view(np.uint8), digest_size=16).hexdigest()


class _ByDigest:
    """Carries an array through ``functools.lru_cache``, hashed and compared by its content digest only."""

    def __init__(self, key: tuple, arr: np.ndarray) -> None:
        self.key, self.arr = key, arr

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ByDigest) and other.key == self.key


def _hog_cached(key: tuple, X: np.ndarray, shape, cell, block, n_or, norm, unit) -> np.ndarray:
    return _hog_lru(_ByDigest(key, X), shape, cell, block, n_or, norm, unit)


@functools.lru_cache(maxsize=8)
def _hog_lru(wrapped: _ByDigest, shape, cell, block, n_or, norm, unit) -> np.ndarray:
    out = _hog(wrapped.arr, shape, cell, block, n_or, norm, unit)
    out.setflags(write=False)
    return out


def _hog(X: np.ndarray, shape: tuple[int, int], cell: int, block: int, n_or: int, norm: str,
         unit: bool) -> np.ndarray:
    h, w = shape
    n = X.shape[0]
    nr, nc = h // cell, w // cell
    oh, ow = (h - nr * cell) // 2, (w - nc * cell) // 2
    # float32 for the per-pixel stage (4x less memory traffic); histograms and norms in float64
    img = np.asarray(X, dtype=np.float32).reshape(n, h, w)[:, oh:oh + nr * cell, ow:ow + nc * cell]
    hh, ww = img.shape[1:]
    g_row = np.zeros(img.shape, dtype=np.float32)
    g_col = np.zeros(img.shape, dtype=np.float32)
    np.subtract(img[:, 2:, :], img[:, :-2, :], out=g_row[:, 1:-1, :])
    np.subtract(img[:, :, 2:], img[:, :, :-2], out=g_col[:, :, 1:-1])
    mag = np.hypot(g_row, g_col)
    # unsigned orientation: angle in (-180, 180] degrees, taken mod 180, cut into n_or bins of 180/n_or degrees
    bins = np.floor(np.arctan2(g_row, g_col) * np.float32(n_or / np.pi)).astype(np.int64) % n_or
    # Axes and diagonals are the only directions with a rational slope (Niven), so the only ones that exact
    # pixel differences hit exactly, and they are common; bin them exactly as an exact angle would be
    # (0/180 -> 0, 45 -> floor(n/4), 90 -> floor(n/2), 135 -> floor(3n/4)), not by float rounding at a bin edge.
    bins[g_row == 0] = 0
    bins[(g_col == 0) & (g_row != 0)] = n_or // 2
    diag = (np.abs(g_row) == np.abs(g_col)) & (g_row != 0)
    same_sign = (g_row > 0) == (g_col > 0)
    bins[diag & same_sign] = n_or // 4
    bins[diag & ~same_sign] = (3 * n_or) // 4
    # one flat index per pixel: (image, cell row, cell column, orientation bin), summed by bincount
    r_cell = (np.arange(hh) // cell)[:, None] * nc
    c_cell = (np.arange(ww) // cell)[None, :]
    cell_id = (r_cell + c_cell)[None] + (np.arange(n) * (nr * nc))[:, None, None]
    idx = (cell_id * n_or + bins).ravel()
    hist = np.bincount(idx, weights=mag.ravel(), minlength=n * nr * nc * n_or)
    hist = hist.reshape(n, nr, nc, n_or) / float(cell * cell)
    nbr, nbc = nr - block + 1, nc - block + 1
    # blocks (n, nbr, nbc, block, block, n_or) by stacking the block_size^2 shifted views
    blocks = np.empty((n, nbr, nbc, block, block, n_or))
    for i in range(block):
        for j in range(block):
            blocks[:, :, :, i, j, :] = hist[:, i:i + nbr, j:j + nbc, :]
    flat = blocks.reshape(n, nbr, nbc, -1)
    eps = 1e-5
    if norm == "L1":
        out = flat / (np.abs(flat).sum(-1, keepdims=True) + eps)
    elif norm == "L1-sqrt":
        out = np.sqrt(flat / (np.abs(flat).sum(-1, keepdims=True) + eps))
    else:
        out = flat / np.sqrt((flat ** 2).sum(-1, keepdims=True) + eps ** 2)
        if norm == "L2-Hys":
            out = np.minimum(out, 0.2)
            out = out / np.sqrt((out ** 2).sum(-1, keepdims=True) + eps ** 2)
    out = out.reshape(n, -1)
    if unit:
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return out.astype(np.float32)
