"""Privacy mechanisms applied to images, each with its unit of privacy stated plainly.

Every mechanism takes an image as a float array ``(h, w)`` or ``(h, w, 3)`` whose
values lie in the public pixel range ``[lo, hi]`` (width ``R = hi - lo``), and
returns a float64 array of the same shape, clipped to ``[lo, hi]``. Clipping the
*output* is post-processing and costs no privacy; input values outside the range
are clipped with a warning (the guarantee assumes the range).

What "neighbouring" means differs between mechanisms, and that is the whole story:

* ``laplace-pixel`` / ``gaussian-pixel``: two images are neighbours if they differ
  in **one pixel** (all its channels). Each pixel is protected with epsilon, but the
  image as a whole is only protected with ``h * w * epsilon`` (basic composition).
* ``laplace-image`` / ``gaussian-image``: **any two images** of that size are
  neighbours: the whole picture is protected with epsilon (local DP for the person
  in it). For Laplace the budget is split across the ``h*w*C`` values, each gets
  ``epsilon / (h*w*C)`` of it; for Gaussian the image's L2 sensitivity ``R sqrt(h w C)``
  is used. The noise drowns the picture: that is the lesson.
* ``dppix`` (Fan 2018): neighbours differ in **at most m pixels**. Pixelisation into
  ``b x b`` cells shares each pixel's influence among ``b^2`` pixels, so the cell
  means need far less noise than the pixels would.
"""
from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from fractions import Fraction

import dp_accounting
import numpy as np

from ..defaults import DELTA
from ..exceptions import DPValueError
from ..mechanisms import Gaussian, Laplace, analytic_gaussian_epsilon
from ..mechanisms.base import noise_scale, pure_laplace_event, round_down, round_up, sqrt_up
from ..rng import as_generator
from ..types import ArrayLike
from ..validation import check_array, check_delta, check_epsilon, check_int, clip_to_bounds

__all__ = [
    "ImageMechanism",
    "PixelLaplace",
    "PixelGaussian",
    "DPPix",
    "IMAGE_MECHANISMS",
    "make_image_mechanism",
    "check_image",
    "cell_means",
    "pixelate",
]

_BUDGETS = ("pixel", "image")


def _check_range(pixel_range) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in pixel_range)
    except (TypeError, ValueError):
        raise DPValueError(f"pixel_range must be a pair (lo, hi) of numbers, got {pixel_range!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise DPValueError(f"pixel_range must satisfy lo < hi (finite), got ({lo}, {hi}); e.g. (0, 255)")
    return lo, hi


def check_image(image: ArrayLike, *, pixel_range: tuple[float, float], name: str = "image") -> np.ndarray:
    """Return ``image`` as float64 ``(h, w)`` or ``(h, w, 3)``, clipped (with a warning) to ``pixel_range``."""
    arr = check_array(image, name)
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (1, 3)):
        raise DPValueError(f"{name} must have shape (h, w) or (h, w, 3), got {arr.shape}")
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    lo, hi = pixel_range
    if arr.min() < lo or arr.max() > hi:
        arr = clip_to_bounds(arr, lo, hi, name=f"{name} (pixel range [{lo:g}, {hi:g}])")
    return arr


def _channels(shape: tuple[int, ...]) -> int:
    return int(shape[2]) if len(shape) == 3 else 1


@dataclass(frozen=True)
class ImageMechanism(abc.ABC):
    """Common interface: ``privatise(image, *, rng)`` and the numbers behind it.

    Subclasses are frozen dataclasses with keyword-only fields validated in
    ``__post_init__``.
    """

    epsilon: float = field(kw_only=True)  # type: ignore[misc]
    pixel_range: tuple[float, float] = field(default=(0.0, 255.0), kw_only=True)

    #: registry key
    kind = ""
    #: what two neighbouring inputs are, in plain words
    privacy_unit = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "pixel_range", _check_range(self.pixel_range))

    @property
    def width(self) -> float:
        """R = hi - lo, the most one pixel value can change, rounded UP (in floating point the difference lay below
        the exact one for a third of the ranges that straddle 0 unevenly, (-0.3, 3.3) among them)."""
        return round_up(Fraction(self.pixel_range[1]) - Fraction(self.pixel_range[0]))

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def guarantee(self) -> str:
        return f"ε = {self.epsilon:g}" + (f", δ = {self.delta:g}" if self.delta else "")

    @property
    def label(self) -> str:
        """Short column heading, e.g. ``"Laplace / image, ε=1"``."""
        return f"{self.title}, ε={self.epsilon:g}"

    title = ""

    @abc.abstractmethod
    def sensitivity(self, shape: tuple[int, ...]) -> float:
        """Sensitivity (L1 for Laplace, L2 for Gaussian) of what gets noised, for images of ``shape``."""

    @abc.abstractmethod
    def noise_std(self, shape: tuple[int, ...]) -> float:
        """Standard deviation of the noise added to one pixel value (one full cell for DP-Pix)."""

    @abc.abstractmethod
    def _noisy(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The unclipped noisy image."""

    @abc.abstractmethod
    def image_epsilon(self, shape: tuple[int, ...]) -> float:
        """The epsilon this mechanism gives when *any* two images of ``shape`` count as neighbours
        (at the same delta), i.e. what it guarantees for the picture as a whole."""

    @property
    @abc.abstractmethod
    def dp_event(self) -> dp_accounting.DpEvent:
        """dp_accounting event of one application, relative to this mechanism's neighbouring relation."""

    def image_dp_event(self, shape: tuple[int, ...]) -> dp_accounting.DpEvent:
        """dp_accounting event of one image of ``shape`` released when *any* two images are neighbours.

        Its epsilon is :meth:`image_epsilon`. Laplace and DP-Pix: one vector Laplace release
        whose whole-image L1 sensitivity over the noise scale is that epsilon.
        """
        return pure_laplace_event(self.image_epsilon(shape))

    def privatise(self, image, *, rng=None) -> np.ndarray:
        """Return a private copy of ``image``: same shape, float64, clipped to ``pixel_range``.

        Parameters
        ----------
        image : array-like, shape (h, w) or (h, w, 3)
        rng : int, numpy Generator or None
        """
        arr = check_image(image, pixel_range=self.pixel_range)
        self.check_shape(arr.shape)
        noisy = self._noisy(arr, as_generator(rng))
        return np.clip(noisy, *self.pixel_range)

    def privatise_many(self, images, *, rng=None) -> np.ndarray:
        """Apply :meth:`privatise` to every image of a stack ``(n, h, w[, 3])``, one generator in order."""
        gen = as_generator(rng)
        stack = np.asarray(images, dtype=float)
        if stack.ndim not in (3, 4):
            raise DPValueError(f"images must have shape (n, h, w) or (n, h, w, 3), got {stack.shape}")
        return np.stack([self.privatise(im, rng=gen) for im in stack])

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise :class:`DPValueError` if the mechanism cannot handle images of ``shape`` (any shape by default)."""
        return None


def _check_budget(budget: str) -> str:
    if budget not in _BUDGETS:
        raise DPValueError(
            f"budget must be 'pixel' (protect one pixel) or 'image' (protect the whole image), got {budget!r}"
        )
    return budget


@dataclass(frozen=True)
class PixelLaplace(ImageMechanism):
    """Laplace noise on every pixel value, sensitivity from the pixel range.

    Parameters
    ----------
    epsilon : float
    pixel_range : (lo, hi)
        Public range of a pixel value; ``R = hi - lo``.
    budget : {"pixel", "image"}
        ``"pixel"``: neighbours differ in one pixel of ``C`` channels, L1 sensitivity
        ``C R``, noise ``Lap(C R / epsilon)``. ``"image"``: neighbours are any two
        images of the same size; the L1 sensitivity is ``h w C R`` (equivalently
        epsilon split evenly across all ``h w C`` values), noise ``Lap(h w C R / epsilon)``.

    References
    ----------
    Dwork, McSherry, Nissim, Smith. Calibrating noise to sensitivity in private data
    analysis. TCC 2006. Dwork & Roth, The Algorithmic Foundations of Differential
    Privacy (2014), Thm 3.6 and 3.16 (basic composition).

    Examples
    --------
    >>> PixelLaplace(epsilon=1.0, pixel_range=(0, 16), budget="pixel").scale((8, 8))
    16.0
    >>> PixelLaplace(epsilon=1.0, pixel_range=(0, 16), budget="image").scale((8, 8))
    1024.0
    """

    budget: str = field(default="image", kw_only=True)
    kind = "laplace"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "budget", _check_budget(self.budget))

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"Laplace / {self.budget}"

    @property
    def privacy_unit(self) -> str:  # type: ignore[override]
        if self.budget == "pixel":
            return ("one pixel: neighbouring images differ in a single pixel's value. The image as a whole "
                    "is only (h·w·ε)-DP by composition.")
        return ("the whole image: any two images of this size are neighbours (local DP for the person in it); "
                "ε is split across all pixel values.")

    def sensitivity(self, shape: tuple[int, ...]) -> float:
        c = _channels(shape)  # rounded UP: to nearest, C R h w lay below the exact product for some R
        return round_up(c * Fraction(self.width) * (1 if self.budget == "pixel" else int(shape[0]) * int(shape[1])))

    def scale(self, shape: tuple[int, ...]) -> float:
        """Laplace scale b = sensitivity / epsilon (rounded up, as the noise drawn)."""
        return noise_scale(self.sensitivity(shape), self.epsilon)

    def noise_std(self, shape: tuple[int, ...]) -> float:
        return math.sqrt(2.0) * self.scale(shape)

    def _noisy(self, image, rng):
        return Laplace(epsilon=self.epsilon, sensitivity=self.sensitivity(image.shape)).randomise(image, rng=rng)

    def image_epsilon(self, shape: tuple[int, ...]) -> float:
        # the whole-image L1 sensitivity is h*w times the one-pixel one
        return round_up(Fraction(self.epsilon) * (int(shape[0]) * int(shape[1]) if self.budget == "pixel" else 1))

    @property
    def dp_event(self):
        return pure_laplace_event(self.epsilon)


@dataclass(frozen=True)
class PixelGaussian(ImageMechanism):
    """Gaussian noise on every pixel value with the analytic calibration (Balle & Wang 2018).

    ``budget="pixel"``: L2 sensitivity ``R sqrt(C)`` (one pixel of C channels).
    ``budget="image"``: L2 sensitivity ``R sqrt(h w C)`` (any two images are neighbours).

    References
    ----------
    Dwork & Roth (2014), Appendix A; Balle & Wang. Improving the Gaussian mechanism for
    differential privacy: analytical calibration and optimal denoising. ICML 2018.

    Examples
    --------
    >>> g = PixelGaussian(epsilon=1.0, delta=1e-5, pixel_range=(0, 1), budget="image")
    >>> round(g.noise_std((25, 25)) / PixelGaussian(epsilon=1.0, delta=1e-5, pixel_range=(0, 1),
    ...       budget="pixel").noise_std((25, 25)), 6)
    25.0
    """

    delta: float = field(default=DELTA, kw_only=True)  # type: ignore[assignment]
    budget: str = field(default="image", kw_only=True)
    kind = "gaussian"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "delta", check_delta(self.delta, allow_zero=False))
        object.__setattr__(self, "budget", _check_budget(self.budget))

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"Gaussian / {self.budget}"

    @property
    def privacy_unit(self) -> str:  # type: ignore[override]
        if self.budget == "pixel":
            return "one pixel: neighbouring images differ in a single pixel's value (L2 sensitivity R·√C)."
        return "the whole image: any two images of this size are neighbours (L2 sensitivity R·√(h·w·C))."

    def sensitivity(self, shape: tuple[int, ...]) -> float:
        c = _channels(shape)
        n = c if self.budget == "pixel" else c * int(shape[0]) * int(shape[1])
        return _times_root_up(self.width, n)

    def _mechanism(self, shape) -> Gaussian:
        return Gaussian(epsilon=self.epsilon, delta=self.delta, sensitivity=self.sensitivity(shape))

    def noise_std(self, shape: tuple[int, ...]) -> float:
        return self._mechanism(shape).sigma

    def _noisy(self, image, rng):
        return self._mechanism(image.shape).randomise(image, rng=rng)

    def image_epsilon(self, shape: tuple[int, ...]) -> float:
        if self.budget == "image":
            return self.epsilon
        # same sigma, whole-image L2 sensitivity R sqrt(h w C): solve Balle & Wang's delta(eps) = delta for eps
        sigma = self.noise_std(shape)
        whole = _times_root_up(self.width, _channels(shape) * int(shape[0]) * int(shape[1]))
        if whole <= self.sensitivity(shape):  # a 1 x 1 image is one pixel: the per-pixel epsilon is the image's
            return self.epsilon
        return analytic_gaussian_epsilon(sigma=sigma, delta=self.delta, sensitivity=whole)

    @property
    def dp_event(self):
        # noise multiplier sigma / Delta_2 does not depend on the image size
        return self._mechanism((1, 1)).dp_event

    def image_dp_event(self, shape: tuple[int, ...]) -> dp_accounting.DpEvent:
        """The same noise against the whole-image L2 sensitivity ``R sqrt(h w C)``."""
        whole = _times_root_up(self.width, _channels(shape) * int(shape[0]) * int(shape[1]))
        multiplier = round_down(Fraction(self.noise_std(shape)) / Fraction(whole))
        return dp_accounting.GaussianDpEvent(noise_multiplier=multiplier)


def _times_root_up(width: float, n: int) -> float:
    """``width * sqrt(n)`` rounded UP to a double: an L2 sensitivity R sqrt(m) rounded to nearest lay below the exact
    one for some m, and noise calibrated to it (or an event read against it) a hair less private than stated.

    >>> _times_root_up(1.0, 4), Fraction(_times_root_up(1.0, 2)) ** 2 >= 2
    (2.0, True)
    """
    return round_up(Fraction(width) * Fraction(sqrt_up(n)))


def _cells(n: int, b: int) -> np.ndarray:
    """Sizes of the cells along one axis: full cells of b, the last one shorter if b does not divide n."""
    sizes = np.full(n // b, b, dtype=np.int64)
    return np.append(sizes, n % b) if n % b else sizes


def cell_means(image: ArrayLike, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Means of the ``b x b`` cells of ``image`` and the number of pixels in each cell.

    Returns ``(means, counts)`` of shapes ``(ceil(h/b), ceil(w/b)[, C])`` and
    ``(ceil(h/b), ceil(w/b))``. Edge cells are smaller when ``b`` does not divide the side.

    >>> m, c = cell_means(np.arange(16.0).reshape(4, 4), 2)
    >>> m.tolist(), c.tolist()
    ([[2.5, 4.5], [10.5, 12.5]], [[4, 4], [4, 4]])
    """
    img = np.asarray(image, dtype=float)
    b = check_int(b, "cell", minimum=1)
    rows, cols = _cells(img.shape[0], b), _cells(img.shape[1], b)
    r0 = np.r_[0, np.cumsum(rows)[:-1]]
    c0 = np.r_[0, np.cumsum(cols)[:-1]]
    sums = np.add.reduceat(np.add.reduceat(img, r0, axis=0), c0, axis=1)
    counts = np.outer(rows, cols)
    cnt = counts if img.ndim == 2 else counts[:, :, None]
    return sums / cnt, counts


def pixelate(image: ArrayLike, b: int) -> np.ndarray:
    """Replace every ``b x b`` cell by its mean (no noise): the non-private half of DP-Pix."""
    img = np.asarray(image, dtype=float)
    means, _ = cell_means(img, b)
    rows, cols = _cells(img.shape[0], b), _cells(img.shape[1], b)
    return np.repeat(np.repeat(means, rows, axis=0), cols, axis=1)


@dataclass(frozen=True)
class DPPix(ImageMechanism):
    """DP-Pix: pixelise into ``b x b`` cells and add Laplace noise to each cell mean.

    Neighbouring images differ in at most ``m`` pixels. One changed pixel moves the
    mean of its cell by at most ``R / b^2``, so the vector of cell means has L1
    sensitivity ``R m / b^2`` and each mean gets ``Lap(R m / (b^2 epsilon))`` —
    Fan's ``Lap(255 m / (b^2 epsilon))`` with 255 replaced by the pixel range ``R``.

    Two generalisations, both reducing to Fan's formula for a grey image whose sides
    ``b`` divides: RGB images noise each channel's mean and a pixel counts with its
    ``C`` channels (L1 sensitivity ``C R m / b^2``); when ``b`` does not divide a side
    the edge cells hold ``n_c < b^2`` pixels and get ``Lap(C R m / (n_c epsilon))``, so
    each changed pixel still costs at most ``epsilon / m`` wherever it lies.

    Parameters
    ----------
    epsilon : float
    pixel_range : (lo, hi)
    cell : int
        Cell side ``b`` in pixels, ``1 <= b <= min(h, w)``.
    m : int
        How many pixels neighbouring images may differ in (``>= 1``).

    References
    ----------
    Liyue Fan. Image pixelization with differential privacy. DBSec 2018, LNCS 10980, pp. 148-162.

    Examples
    --------
    >>> DPPix(epsilon=1.0, cell=4, m=16).scale()
    255.0
    """

    cell: int = field(default=4, kw_only=True)
    m: int = field(default=1, kw_only=True)
    kind = "dppix"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "cell", check_int(self.cell, "cell", minimum=1))
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"DP-Pix b={self.cell}, m={self.m}"

    @property
    def privacy_unit(self) -> str:  # type: ignore[override]
        return (f"any {self.m} pixel(s): neighbouring images differ in at most m = {self.m} pixels "
                "(a small object, a face region). Larger changes are not covered.")

    def check_shape(self, shape):
        h, w = int(shape[0]), int(shape[1])
        if self.cell > min(h, w):
            raise DPValueError(
                f"cell size b={self.cell} is larger than the image ({h} x {w}); choose b <= {min(h, w)}"
            )
        if self.m > h * w:
            raise DPValueError(f"m={self.m} is more than the {h * w} pixels of the image; choose m <= {h * w}")

    def sensitivity(self, shape: tuple[int, ...]) -> float:
        """L1 sensitivity of the full-cell means, ``C R m / b^2``."""
        return round_up(_channels(shape) * Fraction(self.width) * self.m / self.cell**2)

    def scale(self, shape: tuple[int, ...] = (1, 1)) -> float:
        """Laplace scale on a full cell's mean, ``C R m / (b^2 epsilon)`` (rounded up)."""
        return noise_scale(self.sensitivity(shape), self.epsilon)

    def noise_std(self, shape: tuple[int, ...]) -> float:
        return math.sqrt(2.0) * self.scale(shape)

    def _noisy(self, image, rng):
        means, counts = cell_means(image, self.cell)
        # Lap(C R m / eps) / n_c has scale C R m / (n_c eps): Fan's scale for full cells
        sums = round_up(_channels(image.shape) * Fraction(self.width) * self.m)
        lap = Laplace(epsilon=self.epsilon, sensitivity=sums)
        cnt = counts if image.ndim == 2 else counts[:, :, None]
        # the cell sums are released (in secure mode on the secure grid), then divided: post-processing
        noisy = lap.randomise(means * cnt, rng=rng) / cnt
        rows, cols = _cells(image.shape[0], self.cell), _cells(image.shape[1], self.cell)
        return np.repeat(np.repeat(noisy, rows, axis=0), cols, axis=1)

    def image_epsilon(self, shape: tuple[int, ...]) -> float:
        # every pixel costs at most epsilon / m (see the class docstring): h*w of them cost h*w*epsilon/m
        return round_up(Fraction(self.epsilon) * int(shape[0]) * int(shape[1]) / self.m)

    @property
    def dp_event(self):
        return pure_laplace_event(self.epsilon)


#: kind -> human title; the page's select boxes and the tests' parametrize lists use it
IMAGE_MECHANISMS: dict[str, str] = {
    "laplace-pixel": "Laplace, ε per pixel",
    "laplace-image": "Laplace, ε per image",
    "gaussian-pixel": "Gaussian, (ε, δ) per pixel",
    "gaussian-image": "Gaussian, (ε, δ) per image",
    "dppix": "DP-Pix (Fan 2018)",
}
#: The mechanisms that need delta > 0 (Gaussian noise); the others are pure epsilon-DP and ignore delta.
NEEDS_DELTA = frozenset({"gaussian-pixel", "gaussian-image"})


def make_image_mechanism(
    kind: str,
    *,
    epsilon: float,
    pixel_range: tuple[float, float] = (0.0, 255.0),
    delta: float = DELTA,
    cell: int = 4,
    m: int = 1,
) -> ImageMechanism:
    """Build the image mechanism registered as ``kind`` (see :data:`IMAGE_MECHANISMS`).

    >>> make_image_mechanism("laplace-image", epsilon=2.0, pixel_range=(0, 1)).label
    'Laplace / image, ε=2'
    """
    if kind in ("laplace-pixel", "laplace-image"):
        return PixelLaplace(epsilon=epsilon, pixel_range=pixel_range, budget=kind.split("-")[1])
    if kind in ("gaussian-pixel", "gaussian-image"):
        return PixelGaussian(epsilon=epsilon, delta=delta, pixel_range=pixel_range, budget=kind.split("-")[1])
    if kind == "dppix":
        return DPPix(epsilon=epsilon, pixel_range=pixel_range, cell=cell, m=m)
    raise DPValueError(f"unknown image mechanism {kind!r}; choose one of {', '.join(IMAGE_MECHANISMS)}")
