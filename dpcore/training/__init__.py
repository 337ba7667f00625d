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
from .._lazy import lazy_names

#: Each public name and the module that defines it, loaded on first use (PEP 562): the learners' menus and
#: ``python -m dpcore train --help`` read :mod:`~dpcore.training.config` and the presets without loading torch.
_WHERE = {
    "TogetherRun": "batched",
    "train_together": "batched",
    "why_not_together": "batched",
    "CLIP_EPS": "clipping",
    "Clipper": "clipping",
    "clip_factors": "clipping",
    "SHUFFLE_CAVEAT": "config",
    "TrainConfig": "config",
    "TrainResult": "engine",
    "planned_steps": "engine",
    "resolve_noise_multiplier": "engine",
    "train": "engine",
    "DenseStackClipper": "ghost",
    "GhostClipper": "ghost",
    "LossFunction": "ghost",
    "make_clipper": "ghost",
    "per_sample_grad_norms": "ghost",
    "ACTIVATIONS": "models",
    "MODELS": "config",
    "SUPPORTED_LAYERS": "models",
    "build_model": "models",
    "FEATURES": "preprocess",
    "dct_features": "preprocess",
    "hog_features": "preprocess",
    "prepare_features": "preprocess",
    "PRESETS": "presets",
    "Preset": "presets",
    "preset_for": "presets",
    "PoissonSampler": "sampling",
    "SAMPLINGS": "sampling",
    "ShuffleSampler": "sampling",
    "make_sampler": "sampling",
    "ExtraGradients": "step",
    "PrivateGradient": "step",
    "StepObserver": "step",
    "private_gradient": "step",
}

__getattr__, __dir__ = lazy_names(__name__, _WHERE)

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
