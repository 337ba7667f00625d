"""DP-SGD engine (Abadi et al. 2016) with ghost-norm clipping, and the other private learners of the seeds.

Public API: :class:`TrainConfig`, :class:`TrainResult`, :func:`train`,
:func:`build_model`, :data:`PRESETS` / :func:`preset_for`,
:func:`per_sample_grad_norms`, :class:`GhostClipper`. The learners
(``non-private``, ``dpsgd``, ``output-perturbation``, ``label-dp-laplace``,
``label-dp-rr``) are registered by :mod:`dpcore.training.learners`.
"""
from .engine import (
    SAMPLINGS,
    SHUFFLE_CAVEAT,
    TrainConfig,
    TrainResult,
    planned_steps,
    private_gradient,
    resolve_noise_multiplier,
    train,
)
from .ghost import GhostClipper, clip_factors, per_sample_grad_norms
from .models import ACTIVATIONS, MODELS, build_model
from .presets import PRESETS, Preset, preset_for
from .preprocess import FEATURES, dct_features, hog_features, prepare_features

__all__ = [
    "ACTIVATIONS",
    "MODELS",
    "PRESETS",
    "Preset",
    "SAMPLINGS",
    "SHUFFLE_CAVEAT",
    "GhostClipper",
    "TrainConfig",
    "TrainResult",
    "FEATURES",
    "build_model",
    "dct_features",
    "hog_features",
    "clip_factors",
    "per_sample_grad_norms",
    "planned_steps",
    "prepare_features",
    "preset_for",
    "private_gradient",
    "resolve_noise_multiplier",
    "train",
]
