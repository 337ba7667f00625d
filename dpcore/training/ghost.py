"""Per-example gradient norms without per-example gradients, and the clipped sum in one pass.

For a Linear layer ``y = W a + b`` applied to one input vector, the gradient of
example i's loss is ``g_i = b_i a_i^T`` (``b_i`` the gradient of the loss with
respect to the layer output), so ``||g_i||^2 = ||a_i||^2 ||b_i||^2``, and the bias
adds ``||b_i||^2``. For a Conv2d layer (unfolded into T positions) or a Linear
layer applied to a sequence, ``g_i = sum_t b_it a_it^T`` and
``||g_i||^2 = sum_{t,s} (a_it . a_is)(b_it . b_is)`` (ghost clipping, Li et al.
2021). Where the per-example gradient is smaller than the two T x T Gram
matrices (small kernels, many positions) it is cheaper to materialise it, which
is what we do then (the "mixed" rule of Bu et al. 2022/2023).

The clipped sum ``sum_i c_i g_i`` with ``c_i = min(1, C / ||g_i||)`` is then
``B^T diag(c) A``: one matrix product per layer from the stored activations and
output gradients (book-keeping, Bu et al. 2023), with no second backward pass.
The whole per-example gradient is clipped ("flat" clipping, Abadi et al. 2016):
the norms of all layers are added before the clip factor is computed.

References
----------
Abadi et al., Deep learning with differential privacy, CCS 2016.
Goodfellow, Efficient per-example gradient computations, arXiv:1510.01799, 2015.
Li, Tramèr, Liang, Hashimoto, Large language models can be strong differentially
private learners, ICLR 2022 (arXiv 2021) -- ghost clipping.
Bu, Wang, Zha, Karypis, Differentially private optimization on large model at
small cost (book-keeping), ICML 2023.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .models import trainable_layers

#: Conv2d layers with at least this many input channels get per-example gradients from the
#: grouped native kernel; thinner ones (e.g. the first layer on grey images) from unfold + bmm.
GROUPED_MIN_CHANNELS = 4

#: Opacus's stabiliser in ``C / (norm + eps)``; kept identical so clipped sums match it.
CLIP_EPS = 1e-6


@dataclass
class _Record:
    layer: nn.Module
    a: torch.Tensor | None = None  # layer input (detached)
    out: torch.Tensor | None = None  # layer output (in the graph)
    # filled by the norm computation for reuse in the clipped sum
    A: torch.Tensor | None = None  # (B, T, d) unfolded input, or (B, d)
    Bg: torch.Tensor | None = None  # (B, T, p) output gradient, or (B, p)
    G: torch.Tensor | None = None  # materialised per-example weight gradients (B, p, d), if cheaper


class GhostClipper:
    """Attach to a model; after a forward pass, compute per-example norms and clipped sums.

    Usage: ``with clipper.capture(): out = model(x)``; then
    ``norms = clipper.norms(per_example_losses)`` and
    ``clipper.write_clipped_sum(factors)`` fills ``p.grad`` with ``sum_i c_i g_i``.
    """

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.records = [_Record(layer) for layer in trainable_layers(model)]
        self._active = False
        self._handles = [r.layer.register_forward_hook(self._make_hook(r)) for r in self.records]

    def _make_hook(self, rec: _Record):
        def hook(module, inputs, output):
            if self._active:
                rec.a = inputs[0].detach()
                rec.out = output
        return hook

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    class _Capture:
        def __init__(self, owner: "GhostClipper") -> None:
            self.owner = owner

        def __enter__(self):
            self.owner._active = True
            for r in self.owner.records:
                r.a = r.out = r.A = r.Bg = r.G = None
            return self.owner

        def __exit__(self, *exc):
            self.owner._active = False
            return False

    def capture(self) -> "GhostClipper._Capture":
        """Context manager: record layer inputs and outputs during the forward pass inside it."""
        return GhostClipper._Capture(self)

    def norms(self, losses: torch.Tensor) -> torch.Tensor:
        """Per-example L2 norms of the gradient of ``losses[i]`` w.r.t. all parameters, shape (B,)."""
        outs = [r.out for r in self.records]
        if any(o is None for o in outs):
            raise RuntimeError("run the forward pass inside clipper.capture() before asking for norms")
        grads = torch.autograd.grad(losses.sum(), outs)
        total = torch.zeros(losses.shape[0], dtype=losses.dtype, device=losses.device)
        for rec, b in zip(self.records, grads):
            total = total + _layer_sq_norms(rec, b.detach())
        return total.sqrt()

    def write_clipped_sum(self, factors: torch.Tensor) -> None:
        """Set ``p.grad = sum_i factors[i] * g_i`` for every parameter (one product per layer)."""
        for rec in self.records:
            w_grad, b_grad = _layer_weighted_sum(rec, factors)
            rec.layer.weight.grad = w_grad.reshape(rec.layer.weight.shape)
            if rec.layer.bias is not None:
                rec.layer.bias.grad = b_grad
            rec.a = rec.out = rec.A = rec.Bg = rec.G = None


def clip_factors(norms: torch.Tensor, clip_norm: float) -> torch.Tensor:
    """``min(1, C / (||g_i|| + 1e-6))``, as in Opacus."""
    return (clip_norm / (norms + CLIP_EPS)).clamp(max=1.0)


def _unfold(rec: _Record, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (A, B) as (batch, positions, d) and (batch, positions, p), or 2-D for plain Linear."""
    layer, a = rec.layer, rec.a
    if isinstance(layer, nn.Conv2d):
        A = F.unfold(a, layer.kernel_size, dilation=layer.dilation, padding=layer.padding, stride=layer.stride)
        return A.transpose(1, 2), b.flatten(2).transpose(1, 2)
    if a.dim() == 2:
        return a, b
    return a.reshape(a.shape[0], -1, a.shape[-1]), b.reshape(b.shape[0], -1, b.shape[-1])


def _conv_per_example_grads(rec: _Record, b: torch.Tensor) -> torch.Tensor:
    """Per-example Conv2d weight gradients (B, p, d) with the native weight-gradient kernel.

    Folding the batch into the channel axis and using ``groups=B`` makes the
    backend compute every example's weight gradient at once without unfolding
    the input (an im2col copy that dominates the cost for many input channels).
    """
    layer, a = rec.layer, rec.a
    n, cin, h, w = a.shape
    cout = layer.out_channels
    g = torch.nn.grad.conv2d_weight(
        a.reshape(1, n * cin, h, w), (n * cout, cin, *layer.kernel_size), b.reshape(1, n * cout, *b.shape[2:]),
        stride=layer.stride, padding=layer.padding, dilation=layer.dilation, groups=n,
    )
    return g.reshape(n, cout, -1)


def _layer_sq_norms(rec: _Record, b: torch.Tensor) -> torch.Tensor:
    has_bias = rec.layer.bias is not None
    if isinstance(rec.layer, nn.Conv2d) and rec.layer.in_channels >= GROUPED_MIN_CHANNELS:
        rec.G = _conv_per_example_grads(rec, b)
        rec.Bg = b.flatten(2).transpose(1, 2)
        rec.A = None
        sq = rec.G.pow(2).sum((1, 2))
        return sq + rec.Bg.sum(1).pow(2).sum(1) if has_bias else sq
    A, Bg = _unfold(rec, b)
    rec.A, rec.Bg = A, Bg
    if A.dim() == 2:  # ||a_i||^2 ||b_i||^2 (+ ||b_i||^2 for the bias)
        b2 = Bg.pow(2).sum(1)
        a2 = A.pow(2).sum(1)
        return b2 * (a2 + 1.0) if has_bias else b2 * a2
    n, T, d = A.shape
    p = Bg.shape[2]
    if T * T * (d + p) <= p * d * T:  # ghost: Gram matrices are cheaper
        ga = torch.bmm(A, A.transpose(1, 2))
        gb = torch.bmm(Bg, Bg.transpose(1, 2))
        sq = (ga * gb).sum((1, 2))
    else:  # materialise the (p, d) per-example gradients; reused for the clipped sum
        rec.G = torch.bmm(Bg.transpose(1, 2), A)
        sq = rec.G.pow(2).sum((1, 2))
    if has_bias:
        sq = sq + Bg.sum(1).pow(2).sum(1)
    return sq


def _layer_weighted_sum(rec: _Record, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    A, Bg = rec.A, rec.Bg
    bias_on = rec.layer.bias is not None
    if A is not None and A.dim() == 2:
        Bc = Bg * c[:, None]
        return Bc.t() @ A, (Bc.sum(0) if bias_on else None)
    if rec.G is not None:
        w = torch.tensordot(c, rec.G, dims=1)
    else:
        Bc = Bg * c[:, None, None]
        w = Bc.reshape(-1, Bc.shape[2]).t() @ A.reshape(-1, A.shape[2])
    bias = torch.tensordot(c, Bg.sum(1), dims=1) if bias_on else None
    return w, bias


def per_sample_grad_norms(model: nn.Module, losses_fn, x: torch.Tensor) -> torch.Tensor:
    """Per-example gradient norms of ``losses_fn(model(x))`` (a vector of per-example losses).

    A convenience wrapper over :class:`GhostClipper` for tests and notebooks.

    Examples
    --------
    >>> m = nn.Linear(3, 2)
    >>> x = torch.randn(4, 3)
    >>> per_sample_grad_norms(m, lambda out: out.sum(1), x).shape
    torch.Size([4])
    """
    clipper = GhostClipper(model)
    try:
        with clipper.capture():
            out = model(x)
        return clipper.norms(losses_fn(out)).detach()
    finally:
        clipper.remove()
