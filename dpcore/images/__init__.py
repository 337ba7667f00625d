"""What privacy mechanisms do to real pictures.

* :mod:`.sets` — image sets that ship offline (digits, MNIST 5k, LFW faces, two
  photographs) and a safe PNG/JPEG upload decoder. Images are float64 arrays
  ``(h, w)`` or ``(h, w, 3)`` in the set's public pixel range.
* :mod:`.mechanisms` — per-pixel Laplace and Gaussian input perturbation (budget
  per pixel or per image) and DP-Pix (Fan 2018), each stating its privacy unit.
* :mod:`.labels` — label-noise views (Laplace on one-hot labels, randomized response).
* :mod:`.quality` — PSNR and SSIM against the original.
* :mod:`.grid` — the picture grid and quality-vs-epsilon curves for the page.
* :mod:`.learners` — the ``noisy-input`` learner and the "train on what you see" comparison
  (imported by the learner registry, not here).
"""
from .grid import ColumnSpec, GridResult, cell_generator, noisy_grid, quality_curve
from .labels import (
    ONE_HOT_SENSITIVITY,
    decode_argmax,
    decode_clamp_round,
    label_noise_view,
    laplace_one_hot,
    randomized_response_labels,
)
from .mechanisms import (
    IMAGE_MECHANISMS,
    NEEDS_DELTA,
    DPPix,
    ImageMechanism,
    PixelGaussian,
    PixelLaplace,
    cell_means,
    check_image,
    make_image_mechanism,
    pixelate,
)
from .quality import psnr, ssim
from .sets import (
    IMAGE_SETS,
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_PIXELS,
    ImageSet,
    image_set_names,
    load_image_set,
    load_uploaded_image,
)

__all__ = [
    "ColumnSpec", "GridResult", "cell_generator", "noisy_grid", "quality_curve",
    "ONE_HOT_SENSITIVITY", "decode_argmax", "decode_clamp_round", "label_noise_view", "laplace_one_hot",
    "randomized_response_labels",
    "IMAGE_MECHANISMS", "NEEDS_DELTA", "DPPix", "ImageMechanism", "PixelGaussian", "PixelLaplace", "cell_means",
    "check_image", "make_image_mechanism", "pixelate",
    "psnr", "ssim",
    "IMAGE_SETS", "MAX_UPLOAD_BYTES", "MAX_UPLOAD_PIXELS", "ImageSet", "image_set_names", "load_image_set",
    "load_uploaded_image",
]
