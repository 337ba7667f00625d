"""DP-SGD engine (Abadi et al. 2016) with ghost-norm clipping, and the other private learners of the seeds.

Your own network: ``train(X, y, config, model=your_module, loss=your_per_example_loss)`` trains any
``nn.Module`` whose trainable layers are :data:`SUPPORTED_LAYERS` (Linear, Conv2d, LayerNorm, GroupNorm,
Embedding) with DP-SGD, on the device of its parameters, accounted as the built-in models are.

Public API: :class:`TrainConfig`, :class:`TrainResult`, :func:`train`,
:func:`build_model`, :data:`PRESETS` / :func:`preset_for`,
:func:`per_sample_grad_norms`, :class:`GhostClipper`. The parts of one DP-SGD
step, as Opacus splits them: :mod:`~dpcore.training.sampling` (Poisson or
shuffled batches), :mod:`~dpcore.training.clipping` (:func:`clip_factors` and the
:class:`Clipper` protocol), :mod:`~dpcore.training.ghost` (the two clippers) and
:mod:`~dpcore.training.step` (:class:`PrivateGradient`: clip, sum, noise, divide;
with hooks for audit canaries). The learners
(``non-private``, ``dpsgd``, ``output-perturbation``, ``label-dp-laplace``,
``label-dp-rr``) are registered by :mod:`dpcore.training.learners`. Many runs of one dense network (a sweep's
seeds and budgets; DP-SGD or non-private, SGD or Adam) train together as one batched computation with
:func:`train_together` (:mod:`~dpcore.training.batched`), each equal to the run trained alone.
"""
from .batched import TogetherRun, train_together, why_not_together
from .clipping import CLIP_EPS, Clipper, clip_factors
from .engine import (
    SHUFFLE_CAVEAT,
    TrainConfig,
    TrainResult,
    planned_steps,
    resolve_noise_multiplier,
    train,
)
from .ghost import DenseStackClipper, GhostClipper, LossFunction, make_clipper, per_sample_grad_norms
from .models import ACTIVATIONS, MODELS, SUPPORTED_LAYERS, build_model
from .preprocess import FEATURES, dct_features, hog_features, prepare_features
from .presets import PRESETS, Preset, preset_for
from .sampling import SAMPLINGS, PoissonSampler, ShuffleSampler, make_sampler
from .step import ExtraGradients, PrivateGradient, StepObserver, private_gradient

__all__ = [
    "ACTIVATIONS",
    "CLIP_EPS",
    "Clipper",
    "DenseStackClipper",
    "ExtraGradients",
    "PoissonSampler",
    "PrivateGradient",
    "ShuffleSampler",
    "StepObserver",
    "TogetherRun",
    "MODELS",
    "PRESETS",
    "Preset",
    "SAMPLINGS",
    "SHUFFLE_CAVEAT",
    "GhostClipper",
    "LossFunction",
    "SUPPORTED_LAYERS",
    "TrainConfig",
    "TrainResult",
    "FEATURES",
    "build_model",
    "dct_features",
    "hog_features",
    "make_clipper",
    "make_sampler",
    "clip_factors",
    "per_sample_grad_norms",
    "planned_steps",
    "prepare_features",
    "preset_for",
    "private_gradient",
    "resolve_noise_multiplier",
    "train",
    "train_together",
    "why_not_together",
]
