"""Image sets that ship offline, and a safe loader for an uploaded PNG/JPEG.

Conventions used by the whole :mod:`dpcore.images` package:

* an image is a ``float64`` array of shape ``(h, w)`` (grey) or ``(h, w, 3)`` (RGB);
* its values lie in the set's public pixel range ``[lo, hi]`` (digits 0-16,
  MNIST 0-255, LFW faces 0-1, photographs and uploads 0-255);
* a set holds ``images`` of shape ``(n, h, w)`` or ``(n, h, w, 3)`` and, where the
  images have classes, integer ``labels`` of shape ``(n,)``.

Nothing here downloads anything: every set comes from an installed package.
"""
from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import numpy as np

from ..datasets import load_dataset
from ..exceptions import DatasetError, DPTypeError, DPValueError
from ..validation import check_int

__all__ = [
    "ImageSet",
    "IMAGE_SETS",
    "image_set_names",
    "load_image_set",
    "load_uploaded_image",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_PIXELS",
    "DISPLAY_UPSCALE",
]

#: default cap on the size of an uploaded file in bytes (5 MB)
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
#: default cap on width x height of an uploaded image (checked from the header, before decoding)
MAX_UPLOAD_PIXELS = 4_000_000

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"


@dataclass(frozen=True, eq=False)
class ImageSet:
    """A small stack of images with a public pixel range.

    Attributes
    ----------
    name, title : str
        Registry name and human label.
    images : ndarray of float64, shape (n, h, w) or (n, h, w, 3)
        Read-only; every value lies in ``pixel_range``.
    pixel_range : tuple of float
        The public range ``(lo, hi)`` a pixel value can take; mechanisms take
        their sensitivity from it.
    labels : ndarray of int64, shape (n,), or None
    target_names : tuple of str
        Class names indexed by label (empty when there are no labels).
    upscale : int
        Integer factor for nearest-neighbour display (so 8x8 digits are visible).
    source : str
    """

    name: str
    title: str
    images: np.ndarray
    pixel_range: tuple[float, float]
    labels: np.ndarray | None = None
    target_names: tuple[str, ...] = ()
    upscale: int = 1
    source: str = ""

    @property
    def n_images(self) -> int:
        return int(self.images.shape[0])

    @property
    def image_shape(self) -> tuple[int, ...]:
        """Shape of one image: ``(h, w)`` or ``(h, w, 3)``."""
        return tuple(int(s) for s in self.images.shape[1:])

    @property
    def is_rgb(self) -> bool:
        return self.images.ndim == 4

    @property
    def n_classes(self) -> int:
        return len(self.target_names)

    def label_names(self) -> list[str]:
        """Human label of every image ('' when the set has no labels)."""
        if self.labels is None:
            return [""] * self.n_images
        return [self.target_names[int(c)] for c in self.labels]


def _freeze(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _pick_per_class(y: np.ndarray, n: int) -> np.ndarray:
    """Indices of ``n`` images cycling through the classes (first of class 0, first of class 1, ...).

    Deterministic and independent of the seed, so the same setting always shows the same rows.
    """
    classes = np.unique(y)
    by_class = [np.flatnonzero(y == c) for c in classes]
    out: list[int] = []
    rank = 0
    while len(out) < n:
        added = False
        for idx in by_class:
            if rank < idx.size and len(out) < n:
                out.append(int(idx[rank]))
                added = True
        if not added:
            break
        rank += 1
    return np.asarray(out, dtype=np.int64)


def _from_dataset(name: str, n: int | None, upscale: int) -> ImageSet:
    ds = load_dataset(name)
    h, w = ds.image_shape
    lo, hi = float(ds.bounds[0].min()), float(ds.bounds[1].max())
    idx = np.arange(ds.n_samples) if n is None else _pick_per_class(ds.y, n)
    return ImageSet(
        name=name,
        title=ds.title,
        images=_freeze(ds.X[idx].reshape(len(idx), h, w)),
        pixel_range=(lo, hi),
        labels=np.asarray(ds.y[idx], dtype=np.int64),
        target_names=tuple(ds.target_names),
        upscale=upscale,
        source=ds.source,
    )


def _photos(n: int | None, colour: str, max_side: int | None) -> ImageSet:
    from PIL import Image
    from sklearn.datasets import load_sample_images

    bunch = load_sample_images()  # china.jpg and flower.jpg, shipped inside scikit-learn
    imgs = []
    for arr in bunch.images[: (2 if n is None else n)]:
        im = Image.fromarray(np.asarray(arr, dtype=np.uint8))
        imgs.append(_to_array(im, colour=colour, max_side=max_side))
    return ImageSet(
        name="photos",
        title="scikit-learn sample photographs",
        images=_freeze(np.stack(imgs)),
        pixel_range=(0.0, 255.0),
        upscale=1,
        source="scikit-learn (load_sample_images: china.jpg, flower.jpg)",
    )


#: Pixel repetition for display: every built-in set 150-168 px wide on the page (at least the ~150 px a projected
#: room reads at a glance; the Noisy images page's four default columns of 168 px fit a 1280 px screen).
DISPLAY_UPSCALE = {"digits": 21, "mnist5k": 6, "faces": 6, "photos": 1}

#: registry name -> (title, has labels)
IMAGE_SETS: dict[str, tuple[str, bool]] = {
    "digits": ("Digits (8x8, pixels 0-16)", True),
    "mnist5k": ("MNIST 5k (28x28, pixels 0-255)", True),
    "faces": ("LFW faces vs non-faces (25x25, pixels 0-1)", True),
    "photos": ("Two sample photographs (RGB, pixels 0-255)", False),
}


def image_set_names(*, labelled: bool | None = None) -> list[str]:
    """Names of the built-in image sets, optionally only those with (or without) labels."""
    return [k for k, (_, lab) in IMAGE_SETS.items() if labelled is None or lab == labelled]


def load_image_set(
    name: str, *, n_images: int | None = None, colour: str = "rgb", max_side: int | None = 320
) -> ImageSet:
    """Load a built-in image set.

    Parameters
    ----------
    name : {"digits", "mnist5k", "faces", "photos"}
    n_images : int or None
        How many images to return (None: all). Labelled sets cycle through the
        classes so a few rows show different digits/classes.
    colour : {"rgb", "grey"}
        Only for ``"photos"``.
    max_side : int or None
        Only for ``"photos"``: shrink so the longer side is at most this (the
        originals are 427x640; the photos are public, so resizing them costs no privacy).

    Examples
    --------
    >>> s = load_image_set("digits", n_images=3)
    >>> s.images.shape, s.pixel_range, s.labels.tolist()
    ((3, 8, 8), (0.0, 16.0), [0, 1, 2])
    """
    if not isinstance(name, str) or name not in IMAGE_SETS:
        raise DPValueError(f"unknown image set {name!r}; choose one of {', '.join(IMAGE_SETS)} or upload a PNG/JPEG")
    if n_images is not None:
        n_images = check_int(n_images, "n_images", minimum=1)
    if name == "photos":
        return _photos(n_images, colour, max_side)
    upscale = DISPLAY_UPSCALE[name]
    return _from_dataset(name, n_images, upscale)


def _to_array(im, *, colour: str, max_side: int | None) -> np.ndarray:
    from PIL import Image, ImageOps

    if colour not in ("rgb", "grey"):
        raise DPValueError(f"colour must be 'rgb' or 'grey', got {colour!r}")
    im = ImageOps.exif_transpose(im)
    if im.mode.startswith("I") or im.mode == "F":
        # 16-bit greyscale (PNG): Pillow's convert("L") would clip at 255; rescale by the bit depth instead
        grey = np.clip(np.asarray(im, dtype=np.float64) / 257.0, 0.0, 255.0)
        im = Image.fromarray(np.rint(grey).astype(np.uint8), mode="L")
    if im.mode in ("RGBA", "LA", "P", "PA"):
        # flatten transparency onto white so transparent regions do not turn black
        rgba = im.convert("RGBA")
        bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        im = Image.alpha_composite(bg, rgba)
    im = im.convert("RGB" if colour == "rgb" else "L")
    if max_side is not None:
        max_side = check_int(max_side, "max_side", minimum=8)
        if max(im.size) > max_side:
            im.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    return np.asarray(im, dtype=np.float64)


def load_uploaded_image(
    data: bytes,
    *,
    name: str = "upload",
    colour: str = "grey",
    max_bytes: int = MAX_UPLOAD_BYTES,
    max_pixels: int = MAX_UPLOAD_PIXELS,
    max_side: int | None = 256,
) -> ImageSet:
    """Decode an uploaded PNG or JPEG safely into a one-image :class:`ImageSet` (pixels 0-255).

    The checks run cheapest first: the byte size, the file signature (only PNG
    and JPEG are accepted, whatever the file name says), the width x height
    read from the header *before* any pixel is decoded (a decompression bomb
    is refused here), then the decode itself with Pillow's own
    decompression-bomb check turned into an error.

    Parameters
    ----------
    data : bytes
        The file's content.
    colour : {"grey", "rgb"}
    max_bytes, max_pixels : int
        Caps on the file size and on width x height.
    max_side : int or None
        Shrink (Lanczos) so the longer side is at most this, to keep the demo fast.

    Raises
    ------
    DatasetError
        Not PNG/JPEG, corrupt, too many bytes or too many pixels.

    Examples
    --------
    >>> load_uploaded_image(b"hello")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpcore.exceptions.DatasetError: the upload is not a PNG or JPEG image (its first bytes are b'hello'); upload ...
    """
    from PIL import Image, UnidentifiedImageError

    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DPTypeError(f"data must be the uploaded file's bytes, got {type(data).__name__}")
    data = bytes(data)
    max_bytes = check_int(max_bytes, "max_bytes", minimum=1)
    max_pixels = check_int(max_pixels, "max_pixels", minimum=1)
    if len(data) == 0:
        raise DatasetError("the upload is empty; upload a .png or .jpg file")
    if len(data) > max_bytes:
        raise DatasetError(
            f"the upload is {len(data) / 1e6:.1f} MB, larger than the limit of {max_bytes / 1e6:.1f} MB; "
            "shrink or re-compress the image first"
        )
    if not (data.startswith(_PNG_MAGIC) or data.startswith(_JPEG_MAGIC)):
        raise DatasetError(
            f"the upload is not a PNG or JPEG image (its first bytes are {data[:8]!r}); upload a .png or .jpg file"
        )
    try:
        with warnings.catch_warnings():
            # Pillow warns (and only errors at twice its own limit) about decompression bombs: refuse at once
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data), formats=["PNG", "JPEG"])
            w, h = im.size  # from the header: nothing decoded yet
            if w * h > max_pixels:
                raise DatasetError(
                    f"the image is {w} x {h} = {w * h:,} pixels, more than the limit of {max_pixels:,}; "
                    "resize it before uploading"
                )
            im.load()
    except DatasetError:
        raise
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise DatasetError(f"the image was refused as a possible decompression bomb: {exc}") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise DatasetError(f"the upload could not be decoded as PNG/JPEG ({exc}); is the file corrupt?") from None
    arr = _to_array(im, colour=colour, max_side=max_side)
    upscale = max(1, 112 // max(arr.shape[0], arr.shape[1])) if max(arr.shape[:2]) < 64 else 1
    return ImageSet(
        name="upload",
        title=f"Upload: {name}",
        images=_freeze(arr[None, ...]),
        pixel_range=(0.0, 255.0),
        upscale=upscale,
        source="uploaded by you (never stored)",
    )
