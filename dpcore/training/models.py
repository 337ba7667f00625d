"""Model builders for DP-SGD: softmax/logistic regression, an MLP and a small CNN.

Every parameterised layer is an :class:`torch.nn.Linear` or :class:`torch.nn.Conv2d`
so that per-example gradient norms can be computed from activations and output
gradients (ghost clipping) without materialising per-example gradients. No batch
normalisation: it mixes examples of a batch, which breaks per-example clipping
(Abadi et al. 2016 use none; Opacus replaces it by GroupNorm).
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn.utils import parametrize

from ..exceptions import DPValueError
from ..rng import torch_generator
from ..validation import check_int
from .config import ACTIVATIONS as ACTIVATION_NAMES
from .config import MODELS

#: The layer types that may hold trainable parameters in a model DP-SGD trains: the engine has a per-example
#: gradient rule for each (:mod:`dpcore.training.ghost`). Any other layer with parameters is refused by name.
SUPPORTED_LAYERS = (nn.Linear, nn.Conv2d, nn.LayerNorm, nn.GroupNorm, nn.Embedding)
#: Layers that mix the examples of a batch, so that no example has a gradient of its own: what to use instead.
#: They are refused whether or not they train (``affine=False`` or frozen): in training mode they normalise
#: every example by its batch's statistics, and they keep running means and variances of the private rows,
#: released with the model without any noise.
_MIXING = {nn.BatchNorm1d: "GroupNorm or LayerNorm", nn.BatchNorm2d: "GroupNorm", nn.BatchNorm3d: "GroupNorm",
           nn.SyncBatchNorm: "GroupNorm"}
#: Layers that normalise each example alone but have no per-example rule here for their scale and shift.
_INSTEAD = {nn.InstanceNorm1d: "GroupNorm(C, C) (the same normalisation, per channel)",
            nn.InstanceNorm2d: "GroupNorm(C, C) (the same normalisation, per channel)",
            nn.InstanceNorm3d: "GroupNorm(C, C) (the same normalisation, per channel)",
            nn.Conv1d: "Conv2d with a (1, k) kernel on inputs of shape (B, C, 1, L) (the same convolution; "
                       "x.unsqueeze(2) before it, .squeeze(2) after)",
            nn.MultiheadAttention: "four Linear layers (query, key, value, output) around "
                                   "torch.nn.functional.scaled_dot_product_attention (as Opacus's "
                                   "DPMultiheadAttention does)",
            nn.RNNBase: "a feed-forward model over the sequence (a Conv2d with a (1, k) kernel, or a Linear on the "
                        "flattened sequence): a recurrent layer reuses its weights at every step, and a layer called "
                        "more than once in a forward pass has no per-example rule here either"}
ACTIVATIONS = dict(zip(ACTIVATION_NAMES, (nn.ReLU, nn.Tanh, nn.Sigmoid, nn.ELU)))  # the layer of each name


def _activation(name: str) -> nn.Module:
    if name not in ACTIVATIONS:
        raise DPValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {name!r}")
    return ACTIVATIONS[name]()


class Reshape(nn.Module):
    """Turn flat feature rows back into (channels, height, width) images."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        super().__init__()
        self.shape = tuple(shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], *self.shape)

    def extra_repr(self) -> str:
        return f"shape={self.shape}"


def build_model(
    kind: str,
    *,
    n_features: int,
    n_outputs: int,
    hidden: int = 128,
    depth: int = 1,
    activation: str = "tanh",
    image_shape: tuple[int, int] | None = None,
    channels: int = 16,
    seed: int = 0,
) -> nn.Sequential:
    """Build a model whose only parameterised layers are Linear and Conv2d.

    Parameters
    ----------
    kind : {"linear", "mlp", "cnn"}
        ``"linear"``: softmax (multinomial logistic) regression, or linear
        regression when ``n_outputs == 1``. ``"mlp"``: ``depth`` hidden layers of
        width ``hidden``. ``"cnn"``: two conv blocks (3x3 conv, activation,
        2x2 average pooling) and a linear head; works for 8x8 and 28x28 images
        (any image of side >= 4).
    n_features, n_outputs : int
        Input width (flattened) and number of outputs (classes, or 1 for regression).
    hidden, depth : int
        MLP width and number of hidden layers.
    activation : {"tanh", "relu", "sigmoid", "elu"}
        Tanh is bounded, which Papernot et al. (2021) found better for DP-SGD.
    image_shape : (int, int), optional
        Needed for ``"cnn"``.
    channels : int
        Channels of the first conv layer (the second has twice as many).
    seed : int
        Seeds the initial weights through a private ``torch.Generator``.

    References
    ----------
    Abadi et al., Deep learning with differential privacy, CCS 2016.
    Papernot et al., Tempered sigmoid activations for deep learning with DP, AAAI 2021.

    Examples
    --------
    >>> m = build_model("mlp", n_features=64, n_outputs=10, hidden=32)
    >>> m(torch.zeros(2, 64)).shape
    torch.Size([2, 10])
    """
    if kind not in MODELS:
        raise DPValueError(f"model must be one of {MODELS}, got {kind!r}")
    n_features = check_int(n_features, "n_features", minimum=1)
    n_outputs = check_int(n_outputs, "n_outputs", minimum=1)
    hidden = check_int(hidden, "hidden", minimum=1)
    depth = check_int(depth, "depth", minimum=1)
    channels = check_int(channels, "channels", minimum=1)
    layers: list[nn.Module] = []
    if kind == "linear":
        layers = [nn.Linear(n_features, n_outputs)]
    elif kind == "mlp":
        width = n_features
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), _activation(activation)]
            width = hidden
        layers.append(nn.Linear(width, n_outputs))
    else:
        if image_shape is None:
            raise DPValueError("model='cnn' needs image data (image_shape); use 'mlp' or 'linear' for tabular data")
        h, w = (int(s) for s in image_shape)
        if h * w != n_features:
            raise DPValueError(f"image_shape {image_shape} does not match n_features={n_features}")
        if min(h, w) < 4:
            raise DPValueError(f"model='cnn' needs images of at least 4x4 pixels, got {image_shape}")
        c1, c2 = channels, 2 * channels
        layers = [
            Reshape((1, h, w)),
            nn.Conv2d(1, c1, 3, padding=1), _activation(activation), nn.AvgPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), _activation(activation), nn.AvgPool2d(2),
            nn.Flatten(),
        ]
        flat = c2 * (h // 2 // 2) * (w // 2 // 2)
        layers += [nn.Linear(flat, hidden), _activation(activation), nn.Linear(hidden, n_outputs)]
    model = nn.Sequential(*layers)
    _init(model, seed)
    return model


def _init(model: nn.Module, seed: int) -> None:
    """PyTorch's default (Kaiming-uniform) initialisation drawn from a seeded generator."""
    gen = torch_generator(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                fan_in = m.weight[0].numel()
                bound = 1.0 / math.sqrt(fan_in)
                m.weight.uniform_(-bound, bound, generator=gen)
                if m.bias is not None:
                    m.bias.uniform_(-bound, bound, generator=gen)


def trainable_layers(model: nn.Module) -> list[nn.Module]:
    """The layers of ``model`` that hold trainable parameters, each of a :data:`SUPPORTED_LAYERS` type.

    A layer of another type with trainable parameters is refused by name, with the supported types listed; freeze
    it (``requires_grad_(False)``) if it is not to be trained. A batch normalisation is refused even without
    trainable parameters (frozen, or ``affine=False``), and so is any layer that keeps running statistics
    (``track_running_stats=True``): the first mixes the examples of a batch, both release noiseless statistics
    of the private rows. A supported layer is refused where its rule would not be its gradient: an Embedding with
    ``max_norm`` (rewrites its rows in the forward pass), ``scale_grad_by_freq`` (scales by the batch's counts) or
    ``sparse=True``; a layer with one of its weight and bias frozen; a weight computed from other parameters
    (``torch.nn.utils.weight_norm``, ``spectral_norm``, ``prune``, a parametrization).
    """
    out = []
    supported = ", ".join(t.__name__ for t in SUPPORTED_LAYERS)
    for name, m in model.named_modules():
        mixing = next((v for k, v in _MIXING.items() if isinstance(m, k)), None)
        if mixing is not None:  # trainable or not: frozen or affine=False it still mixes the batch and keeps stats
            raise DPValueError(
                f"layer {name!r} ({type(m).__name__}) normalises every example by the statistics of its batch, so "
                "one record changes the other records' gradients and no per-example clip bound holds; it also "
                "keeps running means and variances of the private rows, released with the model without noise. "
                f"It is refused even frozen or with affine=False: use {mixing} instead (as Opacus does)")
        if getattr(m, "track_running_stats", False) and getattr(m, "running_mean", None) is not None:
            raise DPValueError(
                f"layer {name!r} ({type(m).__name__}) keeps running statistics of the private rows "
                "(track_running_stats=True), released with the model without noise; use track_running_stats=False")
        own = [p for p in m.parameters(recurse=False) if p.requires_grad]
        if type(m) in SUPPORTED_LAYERS and own:
            if isinstance(m, nn.Conv2d) and (m.groups != 1 or m.padding_mode != "zeros"):
                raise DPValueError(f"layer {name!r}: only Conv2d with groups=1 and zero padding is supported")
            if isinstance(m, nn.Embedding) and m.max_norm is not None:
                raise DPValueError(f"layer {name!r}: Embedding with max_norm rewrites its weights in the forward "
                                   "pass; use max_norm=None")
            if isinstance(m, nn.Embedding) and m.scale_grad_by_freq:
                raise DPValueError(
                    f"layer {name!r}: Embedding with scale_grad_by_freq=True divides each index's gradient by how "
                    "often the whole batch uses it, so one record's gradient moves with the other records and no "
                    "per-example clip bound holds; use scale_grad_by_freq=False")
            if isinstance(m, nn.Embedding) and m.sparse:
                raise DPValueError(
                    f"layer {name!r}: Embedding with sparse=True: DP-SGD adds noise to every row of the table, so "
                    "its gradient is dense whatever the batch; use sparse=False")
            computed = [w for w in ("weight", "bias") if getattr(m, w, None) is not None
                        and not isinstance(getattr(m, w), nn.Parameter)]
            if computed:  # torch.nn.utils.weight_norm / spectral_norm / prune: the weight is recomputed from other
                # parameters (weight_g and weight_v, weight_orig) before every call, outside the layer's rule
                held = ", ".join(repr(n) for n, p in m.named_parameters(recurse=False)
                                 if p.requires_grad and n not in ("weight", "bias"))
                raise DPValueError(
                    f"layer {name!r} ({type(m).__name__}) computes its {' and '.join(computed)} from the "
                    f"parameter(s) {held} before every call (torch.nn.utils.weight_norm, spectral_norm or a prune "
                    "method): the engine's per-example rule is for the layer's own weight, not for what it is "
                    "computed from. Remove the reparametrization (torch.nn.utils.remove_weight_norm / "
                    "remove_spectral_norm / prune.remove)")
            frozen = [w for w in ("weight", "bias") if isinstance(getattr(m, w, None), nn.Parameter)
                      and not getattr(m, w).requires_grad]
            if frozen:
                path = "model." + (f"{name}." if name else "")
                trained = [w for w in ("weight", "bias") if w not in frozen and getattr(m, w, None) is not None]
                raise DPValueError(
                    f"layer {name!r} ({type(m).__name__}) has its {' and '.join(frozen)} frozen and its "
                    f"{' and '.join(trained)} trained: per-example clipping counts every parameter of a trained "
                    f"layer; freeze the whole layer ({path[:-1]}.requires_grad_(False)) or unfreeze "
                    f"{path}{frozen[0]}")
            out.append(m)
        elif own and not type(m).__module__.startswith("torch."):  # your own module holding a parameter itself
            held = [n for n, p in m.named_parameters(recurse=False) if p.requires_grad]
            where = f"your model ({type(m).__name__})" if not name else f"module {name!r} ({type(m).__name__})"
            path = "model." + (f"{name}." if name else "")
            raise DPValueError(
                f"{where} holds the trainable parameter(s) {', '.join(map(repr, held))} outside any layer, which "
                f"the engine cannot clip per example; DP-SGD here trains {supported} layers. Compute it with one of "
                f"them, or freeze it alone ({path}{held[0]}.requires_grad_(False))")
        elif own:
            instead = next((v for k, v in _INSTEAD.items() if isinstance(m, k)), None)
            why = f"; use {instead} instead" if instead else ""
            if parametrize.is_parametrized(m):  # a ParametrizedLinear...: its weight is computed by other modules
                why = (f"; its {', '.join(m.parametrizations)} is computed by a parametrization (torch.nn.utils."
                       "parametrizations.weight_norm, spectral_norm, orthogonal ...), outside the layer's rule: "
                       "remove it (torch.nn.utils.parametrize.remove_parametrizations)")
            raise DPValueError(
                f"layer {name!r} ({type(m).__name__}) has trainable parameters but no per-example gradient rule; "
                f"DP-SGD here trains {supported} layers{why}. Freeze it with requires_grad_(False) if it is not to "
                "be trained"
            )
    return out
