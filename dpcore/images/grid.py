"""The picture grid and the quality-vs-epsilon curves behind the Noisy images page.

Seeding: the noise in a cell of the grid depends only on ``(seed, row, the
column's settings)``, not on which other columns are shown, so the same settings
always give the same pictures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ..defaults import DELTA
from ..exceptions import DPValueError
from ..rng import as_generator, substream
from ..types import AnyCallable
from ..validation import check_int
from .mechanisms import IMAGE_MECHANISMS, ImageMechanism, make_image_mechanism
from .quality import psnr, ssim
from .sets import ImageSet

__all__ = ["ColumnSpec", "GridResult", "noisy_grid", "quality_curve", "cell_generator"]


@dataclass(frozen=True)
class ColumnSpec:
    """One column of the grid: a mechanism kind and its settings (hashable, so it caches)."""

    kind: str
    epsilon: float
    delta: float = DELTA
    cell: int = 4
    m: int = 1

    def __post_init__(self) -> None:
        if self.kind not in IMAGE_MECHANISMS:
            raise DPValueError(f"unknown image mechanism {self.kind!r}; choose one of {', '.join(IMAGE_MECHANISMS)}")

    def build(self, pixel_range: tuple[float, float]) -> ImageMechanism:
        return make_image_mechanism(self.kind, epsilon=self.epsilon, pixel_range=pixel_range,
                                    delta=self.delta, cell=self.cell, m=self.m)

    @property
    def key(self) -> str:
        # only the settings the mechanism uses, so e.g. the DP-Pix cell size does not reseed Laplace
        extra = {"dppix": f"b{self.cell}m{self.m}", "gaussian-pixel": f"d{self.delta!r}",
                 "gaussian-image": f"d{self.delta!r}"}.get(self.kind, "")
        return f"{self.kind}|{float(self.epsilon)!r}|{extra}"


def cell_generator(seed: int, row: int, key: str) -> np.random.Generator:
    """The generator for one grid cell: independent streams per (row, column settings)."""
    return as_generator(substream(check_int(seed, "seed", minimum=0), int(row), key))


@dataclass(frozen=True, eq=False)
class GridResult:
    """Originals, their noisy versions and the quality numbers (numpy/pandas only: pickles for caching).

    Attributes
    ----------
    originals : ndarray, shape (n, h, w[, 3])
    noisy : ndarray, shape (n, k, h, w[, 3])
        ``noisy[i, j]`` is image ``i`` through column ``j``; float64, inside ``pixel_range``.
    columns : tuple of str
        Column headings.
    quality : DataFrame
        One row per cell: row, image, column, kind, epsilon, delta, psnr_db, ssim, noise_std, image_epsilon (the ε
        for the picture as a whole), share_at_edge.
    privacy_units : dict
        Column heading -> what neighbouring means for it.
    """

    originals: np.ndarray
    noisy: np.ndarray
    columns: tuple[str, ...]
    quality: pd.DataFrame
    pixel_range: tuple[float, float]
    row_labels: tuple[str, ...]
    upscale: int = 1
    privacy_units: dict = field(default_factory=dict)


def _validated(columns: Sequence[ColumnSpec], image_set: ImageSet) -> list[ImageMechanism]:
    if not columns:
        raise DPValueError("choose at least one mechanism or epsilon value for the grid")
    mechs = [c.build(image_set.pixel_range) for c in columns]
    for m in mechs:
        m.check_shape(image_set.image_shape)
    return mechs


def noisy_grid(image_set: ImageSet, columns: Sequence[ColumnSpec], *, seed: int = 0) -> GridResult:
    """Push every image of ``image_set`` through every column's mechanism.

    Parameters
    ----------
    image_set : ImageSet
    columns : sequence of ColumnSpec
    seed : int

    Examples
    --------
    >>> from dpcore.images import load_image_set
    >>> g = noisy_grid(load_image_set("digits", n_images=2), [ColumnSpec("dppix", 1.0, cell=2)], seed=0)
    >>> g.noisy.shape, list(g.quality.columns[:4])
    ((2, 1, 8, 8), ['row', 'image', 'column', 'kind'])
    """
    mechs = _validated(columns, image_set)
    lo, hi = image_set.pixel_range
    names = image_set.label_names()
    noisy = np.empty((image_set.n_images, len(columns)) + image_set.image_shape, dtype=np.float64)
    rows = []
    for i, img in enumerate(image_set.images):
        for j, (spec, mech) in enumerate(zip(columns, mechs)):
            out = mech.privatise(img, rng=cell_generator(seed, i, spec.key))
            noisy[i, j] = out
            rows.append({
                "row": i,
                "image": names[i] or f"image {i + 1}",
                "column": mech.label,
                "kind": spec.kind,
                "epsilon": mech.epsilon,
                "delta": mech.delta,
                "psnr_db": psnr(img, out, data_range=hi - lo),
                "ssim": ssim(img, out, data_range=hi - lo),
                "noise_std": mech.noise_std(image_set.image_shape),
                "image_epsilon": mech.image_epsilon(image_set.image_shape),
                # share of output values at the range's edge: where clipping the noise bites
                "share_at_edge": float(np.mean((out <= lo) | (out >= hi))),
            })
    noisy.setflags(write=False)
    return GridResult(
        originals=np.asarray(image_set.images),
        noisy=noisy,
        columns=tuple(m.label for m in mechs),
        quality=pd.DataFrame(rows),
        pixel_range=image_set.pixel_range,
        row_labels=tuple(names),
        upscale=image_set.upscale,
        privacy_units={m.label: m.privacy_unit for m in mechs},
    )


def quality_curve(
    image_set: ImageSet,
    kinds: Sequence[str],
    epsilons: Sequence[float],
    *,
    seed: int = 0,
    delta: float = DELTA,
    cell: int = 4,
    m: int = 1,
    on_point: AnyCallable | None = None,
) -> pd.DataFrame:
    """Mean PSNR and SSIM over the images of the set, for every (mechanism, epsilon).

    Returns a DataFrame with columns ``mechanism, kind, epsilon, psnr_db, ssim,
    noise_std`` (means over the images; PSNR averages finite values). ``on_point(i, total)``
    is called after each point (for a progress bar).
    """
    if not kinds:
        raise DPValueError("choose at least one mechanism for the quality curve")
    if len(epsilons) == 0:
        raise DPValueError("choose at least one epsilon for the quality curve")
    specs = [ColumnSpec(k, float(e), delta=delta, cell=cell, m=m) for k in kinds for e in sorted(epsilons)]
    _validated(specs, image_set)
    total = len(specs)
    out = []
    for n, spec in enumerate(specs):
        g = noisy_grid(image_set, [spec], seed=seed)
        q = g.quality
        finite = q["psnr_db"].replace([math.inf], np.nan)
        out.append({
            "mechanism": IMAGE_MECHANISMS[spec.kind],
            "kind": spec.kind,
            "epsilon": spec.epsilon,
            "psnr_db": float(finite.mean()) if finite.notna().any() else math.inf,
            "ssim": float(q["ssim"].mean()),
            "noise_std": float(q["noise_std"].iloc[0]),
        })
        if on_point is not None:
            on_point(n + 1, total)
    return pd.DataFrame(out)
