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

Two implementations of one protocol (:class:`~dpcore.training.clipping.Clipper`:
``loss_and_norms(x, y, task=...)`` then ``accumulate_clipped_sum(factors, grads)``):
:class:`GhostClipper` records layer inputs with forward hooks and gets the output
gradients from one ``torch.autograd.grad`` call (any model whose trainable layers
are Linear, Conv2d, LayerNorm, GroupNorm or Embedding: a user's own module too);
:class:`DenseStackClipper` is the fast path for plain stacks of Linear
layers and elementwise activations (the ``linear`` and ``mlp`` models), whose
forward and backward it writes out by hand, with no autograd graph at all.
:func:`make_clipper` picks the fast path when it applies.

References
----------
Abadi et al., Deep learning with differential privacy, CCS 2016.
Goodfellow, Efficient per-example gradient computations, arXiv:1510.01799, 2015.
Li, Tramèr, Liang, Hashimoto, Large language models can be strong differentially
private learners, ICLR 2022 (arXiv 2021) -- ghost clipping.
Bu, Wang, Zha, Karypis, Differentially private optimization on large model at
small cost (book-keeping), ICML 2023.
Ba, Kiros, Hinton, Layer normalization, arXiv:1607.06450, 2016; Wu, He, Group
normalization, ECCV 2018 (the normalisation layers' scale and shift, whose small
per-example gradients are materialised).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.graph import get_gradient_edge
from torch.nn.modules.utils import _pair

from ..exceptions import DPValueError
from ..types import AnyCallable
from .losses import loss_and_output_grad, per_example_loss
from .models import trainable_layers

#: A per-example loss: ``loss(output, y)`` gives a tensor of shape ``(B,)`` (``reduction="none"``).
LossFunction = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

#: Conv2d layers with at least this many input channels get per-example gradients from the
#: grouped native kernel; thinner ones (e.g. the first layer on grey images) from unfold + bmm.
GROUPED_MIN_CHANNELS = 4

@dataclass
class _Record:
    layer: nn.Module
    a: torch.Tensor | None = None  # layer input (detached)
    a_version: int = 0  # the input's version counter when the layer read it (an in-place op after moves it)
    # where the layer's output enters the graph: the gradient is asked of it, and the output's values are not held
    # (autograd frees a pre-activation as soon as the activation is computed, as in a non-private step: holding the
    # CNN's two pre-activations at batch 256, 19 MB, pushed the backward pass's buffers out of the cache)
    out: torch.autograd.graph.GradientEdge | None = None
    called: bool = False  # the layer ran in this forward pass (its output may not need a gradient)
    # filled by the norm computation for reuse in the clipped sum
    A: torch.Tensor | None = None  # (B, T, d) unfolded input, or (B, d)
    Bg: torch.Tensor | None = None  # (B, T, p) output gradient, or (B, p)
    G: torch.Tensor | None = None  # materialised per-example weight gradients (B, p, d), if cheaper
    Gb: torch.Tensor | None = None  # materialised per-example bias gradients (B, p), if the layer has a bias
    ones: bool = False  # A's last column is ones (a convolution's bias folded into its weight gradient)


class GhostClipper:
    """Per-example norms and clipped sums of any model of Linear, Conv2d, LayerNorm, GroupNorm and Embedding
    layers (:data:`~dpcore.training.models.SUPPORTED_LAYERS`), through hooks.

    The :class:`~dpcore.training.clipping.Clipper` protocol:
    ``losses, norms = clipper.loss_and_norms(x, y, task=...)`` runs the forward
    pass with the hooks on and one ``torch.autograd.grad`` call;
    ``clipper.accumulate_clipped_sum(factors, grads)`` adds ``sum_i c_i g_i``
    to ``grads`` (one product per layer). ``loss(output, y)``, if given, is the
    per-example loss (a tensor of shape ``(B,)``, e.g. ``nn.CrossEntropyLoss(reduction="none")``) used instead of
    the task's; or run the forward pass inside ``with clipper.capture():`` and call ``clipper.norms(losses)``.

    Examples
    --------
    >>> m = nn.Sequential(nn.Linear(3, 2))
    >>> clipper = GhostClipper(m)
    >>> losses, norms = clipper.loss_and_norms(torch.randn(4, 3), torch.tensor([0, 1, 1, 0]),
    ...                                        task="classification")
    >>> sums = [torch.zeros_like(p) for p in m.parameters()]
    >>> clipper.accumulate_clipped_sum(torch.ones(4), sums)
    >>> [tuple(s.shape) for s in sums]
    [(2, 3), (2,)]
    """

    def __init__(self, model: nn.Module, *, loss: LossFunction | None = None) -> None:
        self.model = model
        self.loss = loss
        self.records = [_Record(layer) for layer in trainable_layers(model)]
        position = {id(p): i for i, p in enumerate(p for p in model.parameters() if p.requires_grad)}
        self._slots = []  # where each layer's weight and bias gradients go in the grads list
        owner: dict[int, nn.Module] = {}
        for rec in self.records:
            for p in rec.layer.parameters(recurse=False):
                if id(p) in owner:  # weight tying: ||g1 + g2|| is not sqrt(||g1||^2 + ||g2||^2), so the clip bound
                    # computed layer by layer would not hold for the shared parameter
                    raise DPValueError(
                        f"a parameter is shared by a {type(owner[id(p)]).__name__} and a {type(rec.layer).__name__} "
                        "layer (weight tying): per-example gradient norms are computed layer by layer, which does "
                        "not bound a shared parameter's gradient; untie the weights to train with DP-SGD")
                owner[id(p)] = rec.layer
            own = [rec.layer.weight] + ([rec.layer.bias] if getattr(rec.layer, "bias", None) is not None else [])
            if any(id(p) not in position for p in own):
                raise DPValueError(
                    f"{type(rec.layer).__name__} layer has a frozen parameter: per-example clipping counts every "
                    "parameter of a trained layer; unfreeze it, or freeze the whole layer"
                )
            self._slots.append([position[id(p)] for p in own])
        self._active = False
        self._handles = [r.layer.register_forward_hook(self._make_hook(r)) for r in self.records]

    def _make_hook(self, rec: _Record):
        def hook(module, inputs, output):
            if self._active:
                if rec.called:  # a second call would replace the first's record: its gradient would be
                    # left out of the norm, and the clip bound would not hold
                    raise DPValueError(
                        f"a {type(module).__name__} layer is applied more than once in one forward pass (a shared "
                        "or recurrent layer): per-example norms are computed from one call per layer; use a "
                        "separate layer for each use")
                rec.a = inputs[0].detach()  # shares the input's version counter
                rec.a_version = -1 if rec.a.is_inference() else rec.a._version  # inference tensors have none
                rec.out = get_gradient_edge(output) if output.requires_grad else None
                rec.called = True
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
                r.a = r.out = r.A = r.Bg = r.G = r.Gb = None
                r.ones = r.called = False
            return self.owner

        def __exit__(self, *exc):
            self.owner._active = False
            return False

    def capture(self) -> "GhostClipper._Capture":
        """Context manager: record layer inputs and outputs during the forward pass inside it."""
        return GhostClipper._Capture(self)

    def loss_and_norms(self, x: torch.Tensor, y: torch.Tensor, *, task: str,
                       x_sq_norms: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-example losses (detached) and gradient norms for the batch ``(x, y)`` (see the protocol).

        ``x_sq_norms`` is accepted and not used: the hooks see each layer's input, not ``x``.
        """
        with self.capture():
            out = self.model(x)
        self._check_every_layer_called()
        losses = per_example_loss(out, y, task) if self.loss is None else self.loss(out, y)
        if not isinstance(losses, torch.Tensor) or tuple(losses.shape) != (x.shape[0],):
            per_row = isinstance(losses, torch.Tensor) and losses.dim() > 1 and losses.shape[0] == x.shape[0]
            fix = (" (one row per example, several values in each: add them up, e.g. loss = lambda out, y: "
                   "nn.BCEWithLogitsLoss(reduction='none')(out, y).sum(dim=1))" if per_row else
                   ". Use reduction='none' (e.g. nn.CrossEntropyLoss(reduction='none'))")
            raise DPValueError(f"the loss must give one loss per example, a tensor of shape ({x.shape[0]},); got "
                               f"{tuple(losses.shape) if isinstance(losses, torch.Tensor) else type(losses).__name__}"
                               f"{fix}: DP-SGD clips every example's gradient")
        return losses.detach(), self.norms(losses)

    def _named(self, layers: list) -> str:
        """'name' (Type) of each of ``layers`` in the model, for a message."""
        names = {id(m): name for name, m in self.model.named_modules()}
        return ", ".join(f"{names.get(id(m), '?')!r} ({type(m).__name__})" for m in layers)

    def _check_every_layer_called(self) -> None:
        """Refuse, by name, trained layers the forward pass did not call as modules: their hooks saw nothing, so
        their gradients have no per-example norm."""
        missed = [r.layer for r in self.records if not r.called]
        if missed:
            shown = self._named(missed)
            raise DPValueError(
                f"layer(s) {shown} hold trainable parameters but the forward pass did not call them as modules "
                "(unused, or their weights used through torch.nn.functional): DP-SGD clips each example's gradient "
                "from the layers' calls. Call each trained layer as a module, or freeze the unused ones with "
                "requires_grad_(False)")

    def _check_inputs_unchanged(self) -> None:
        """Refuse a layer whose input was changed in place after the layer read it (``nn.Dropout(inplace=True)``
        on a tensor another layer also reads, ``x.mul_(...)``): its per-example gradients would be of the changed
        values, not of what the layer computed with. torch's own backward refuses it too, but only when it runs the
        layer's backward, which the norms never do for a layer whose input needs no gradient (the model's input)."""
        changed = [r.layer for r in self.records if r.a is not None and r.a_version >= 0
                   and r.a._version != r.a_version]
        if changed:
            shown = self._named(changed)
            raise DPValueError(
                f"the input of layer(s) {shown} was changed in place after the layer read it (an in-place op such as "
                "Dropout(inplace=True) or x.mul_(...) on a tensor the layer had taken): its per-example gradients "
                "would be of the changed values, not of the ones the layer used; write that op out of place")

    def norms(self, losses: torch.Tensor) -> torch.Tensor:
        """Per-example L2 norms of the gradient of ``losses[i]`` w.r.t. all parameters, shape (B,)."""
        outs = [r.out for r in self.records]
        if not all(r.called for r in self.records):
            raise RuntimeError("run the forward pass inside clipper.capture() before asking for norms")
        if any(o is None for o in outs):
            shown = self._named([r.layer for r in self.records if r.out is None])
            raise DPValueError(f"layer(s) {shown} ran without gradients (inside torch.no_grad() or "
                               "torch.inference_mode()): per-example gradients need the graph; run them with "
                               "gradients on, or freeze them with requires_grad_(False) if they are not to be trained")
        self._check_inputs_unchanged()
        grads = torch.autograd.grad(losses.sum(), outs, allow_unused=True)
        unused = [r.layer for r, b in zip(self.records, grads) if b is None]
        if unused:  # torch's own words ("the differentiated Tensor at index 1 appears to not have been used") name no
            # layer, and a run with a module of its own read them as an in-place change
            names = {id(m): name for name, m in self.model.named_modules()}
            shown = ", ".join(f"{names.get(id(m), '?')!r} ({type(m).__name__})" for m in unused)
            raise DPValueError(
                f"the output of layer(s) {shown} does not reach the loss: called in the forward pass but not used for "
                "what it returns, so they get no gradient. Freeze them with requires_grad_(False), or use their "
                "output")
        total = None
        for rec, b in zip(self.records, grads):
            sq = _layer_sq_norms(rec, b.detach())
            total = sq if total is None else total.add_(sq)
        return total.sqrt_()

    def accumulate_clipped_sum(self, factors: torch.Tensor, grads: Sequence[torch.Tensor]) -> None:
        """Add ``sum_i factors[i] * g_i`` to ``grads`` (trainable parameters in ``model.parameters()`` order)."""
        if any(r.A is None and r.G is None and r.Bg is None for r in self.records):
            raise RuntimeError("call loss_and_norms (or norms) before accumulate_clipped_sum")
        with torch.no_grad():
            for rec, slots in zip(self.records, self._slots):
                w_grad, b_grad = _layer_weighted_sum(rec, factors)
                grads[slots[0]].add_(w_grad.reshape(rec.layer.weight.shape))
                if b_grad is not None:
                    grads[slots[1]].add_(b_grad)
                rec.a = rec.out = rec.A = rec.Bg = rec.G = rec.Gb = None
                rec.ones = rec.called = False


def _unfold(rec: _Record, b: torch.Tensor, *, ones: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (A, B) as (batch, positions, d) and (batch, positions, p), or 2-D for plain Linear. ``ones`` (a
    Conv2d): A gets a last column of ones, so that ``A^T B`` holds the bias gradients (the output gradient summed
    over the positions) as its last row, from the same pass over B."""
    layer, a = rec.layer, rec.a
    if isinstance(layer, nn.Conv2d):
        a, padding = _padded_input(layer, a)
        A = _im2col(a, layer.kernel_size, layer.dilation, padding, layer.stride, ones=ones)
        return A.transpose(1, 2), b.flatten(2).transpose(1, 2)
    if a.dim() == 2:
        return a, b
    return a.reshape(a.shape[0], -1, a.shape[-1]), b.reshape(b.shape[0], -1, b.shape[-1])


def _padded_input(layer: nn.Conv2d, a: torch.Tensor) -> tuple[torch.Tensor, tuple[int, int]]:
    """A Conv2d layer's input and the symmetric padding left to apply: ``(a, layer.padding)`` for numeric padding;
    for ``padding="same"`` or ``"valid"`` the input padded as torch pads it, and ``(0, 0)``.

    ``"same"`` (stride 1) pads ``dilation * (kernel - 1)`` along each side's axis, half before and the rest (one
    more where it is odd) after, as ATen's convolution does.
    """
    if not isinstance(layer.padding, str):
        return a, layer.padding
    if layer.padding == "valid":
        return a, (0, 0)
    (kh, kw), (dh, dw) = layer.kernel_size, layer.dilation
    th, tw = dh * (kh - 1), dw * (kw - 1)
    return F.pad(a, (tw // 2, tw - tw // 2, th // 2, th - th // 2)), (0, 0)


def _im2col(a: torch.Tensor, kernel_size, dilation, padding, stride, *, ones: bool = False) -> torch.Tensor:
    """``F.unfold(a, ...)`` (shape ``(B, C*kh*kw, L)``, same order, same values) as one strided copy; ``ones``
    appends a row of ones (shape ``(B, C*kh*kw + 1, L)``).

    A zero-padded copy of the input viewed through ``as_strided`` as
    ``(B, C, kh, kw, out_h, out_w)`` and reshaped: several times faster than
    ``F.unfold`` on CPU, whose im2col kernel is serial (e.g. 0.1 ms instead of
    1.1 ms for a batch of 256 28x28 grey images and a 3x3 kernel).
    """
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    if ph or pw:
        a = F.pad(a, (pw, pw, ph, ph))
    n, c, h, w = a.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (w - dw * (kw - 1) - 1) // sw + 1
    s_n, s_c, s_h, s_w = a.stride()
    windows = a.as_strided((n, c, kh, kw, oh, ow), (s_n, s_c, dh * s_h, dw * s_w, sh * s_h, sw * s_w))
    if not ones:
        return windows.reshape(n, c * kh * kw, oh * ow)
    out = a.new_empty((n, c * kh * kw + 1, oh * ow))
    out[:, :-1].view(n, c, kh, kw, oh, ow).copy_(windows)
    out[:, -1].fill_(1.0)
    return out


def _conv_per_example_grads(rec: _Record, b: torch.Tensor) -> torch.Tensor:
    """Per-example Conv2d weight gradients (B, p, d) with the native weight-gradient kernel.

    Folding the batch into the channel axis and using ``groups=B`` makes the
    backend compute every example's weight gradient at once without unfolding
    the input (an im2col copy that dominates the cost for many input channels).
    """
    layer = rec.layer
    a, padding = _padded_input(layer, rec.a)
    n, cin, h, w = a.shape
    cout = layer.out_channels
    # torch.nn.grad.conv2d_weight with a real (unfilled) weight of the grouped shape: that function passes an
    # expanded one-element tensor, which the backend copies out to the full (n * cout, cin, kh, kw) before it
    # reads only its layout (a 4.7 MB copy per step for the small CNN's second layer); the values are never used
    # for the weight gradient
    g = torch.ops.aten.convolution_backward(
        b.reshape(1, n * cout, *b.shape[2:]), a.reshape(1, n * cin, h, w),
        b.new_empty((n * cout, cin, *layer.kernel_size)), None, _pair(layer.stride), _pair(padding),
        _pair(layer.dilation), False, [0, 0], n, (False, True, False),
    )[1]
    return g.reshape(n, cout, -1)


def _normalisation_grads(rec: _Record, b: torch.Tensor) -> torch.Tensor:
    """Per-example gradients of a LayerNorm's or GroupNorm's scale and shift, materialised (they are small).

    ``y = x_hat * w + s`` elementwise (per channel for GroupNorm), with ``x_hat`` the input normalised without
    the affine part, so example i's gradients are ``sum_t b_it * x_hat_it`` for ``w`` and ``sum_t b_it`` for
    ``s``, summed over the positions the parameter is shared by (Ba, Kiros & Hinton 2016; Wu & He 2018).
    """
    layer, a = rec.layer, rec.a
    if isinstance(layer, nn.LayerNorm):
        x_hat = F.layer_norm(a, layer.normalized_shape, eps=layer.eps)
        shared = tuple(range(1, a.dim() - len(layer.normalized_shape)))  # positions between batch and features
    else:  # GroupNorm: one scale and shift per channel (dimension 1), shared over the spatial positions
        x_hat = F.group_norm(a, layer.num_groups, eps=layer.eps)
        shared = tuple(range(2, a.dim()))
    n = a.shape[0]
    gw = (b * x_hat).sum(shared) if shared else b * x_hat
    rec.G = gw.reshape(n, -1)
    if layer.bias is not None:
        rec.Gb = (b.sum(shared) if shared else b).reshape(n, -1)
    return rec.G.pow(2).sum(1) + (rec.Gb.pow(2).sum(1) if rec.Gb is not None else 0.0)


def _embedding_sq_norms(rec: _Record, b: torch.Tensor) -> torch.Tensor:
    """Per-example squared gradient norms of an Embedding, without materialising ``(B, num_embeddings, dim)``.

    Example i's gradient puts ``b_it`` on row ``idx_it`` for every position t, so
    ``||g_i||^2 = sum_{t,s} [idx_it == idx_is] (b_it . b_is)`` (a ghost norm, as Li et al. 2021 write it for
    sequences); the padding index gets no gradient, as in torch.
    """
    idx = rec.a.reshape(rec.a.shape[0], -1)
    bg = b.reshape(b.shape[0], idx.shape[1], -1)
    if rec.layer.padding_idx is not None:
        bg = bg * (idx != rec.layer.padding_idx).unsqueeze(-1).to(bg.dtype)
    rec.A, rec.Bg = idx, bg
    same = (idx.unsqueeze(2) == idx.unsqueeze(1)).to(bg.dtype)
    return (same * torch.bmm(bg, bg.transpose(1, 2))).sum((1, 2))


def _sq_norms(t: torch.Tensor) -> torch.Tensor:
    """``||t_i||^2`` of every example i (dimension 0) over all its other dimensions, in one fused pass with no
    squared copy of ``t``."""
    return torch.linalg.vector_norm(t, dim=tuple(range(1, t.dim()))).square_()


def _layer_sq_norms(rec: _Record, b: torch.Tensor) -> torch.Tensor:
    if isinstance(rec.layer, (nn.LayerNorm, nn.GroupNorm)):
        return _normalisation_grads(rec, b)
    if isinstance(rec.layer, nn.Embedding):
        return _embedding_sq_norms(rec, b)
    has_bias = rec.layer.bias is not None
    conv = isinstance(rec.layer, nn.Conv2d)
    if conv and rec.layer.in_channels >= GROUPED_MIN_CHANNELS:
        if has_bias:  # the per-example bias gradients, summed over the positions once: the clipped sum reuses
            # them (summed from the output gradient as autograd lays it out, channels before positions)
            rec.Gb = b.flatten(2).sum(2)
        rec.G = _conv_per_example_grads(rec, b)
        rec.A = None
    else:
        # a thin convolution's bias rides in A as a column of ones: its gradients come out of the same product as
        # the weights', one pass over the output gradient instead of two (it is as large as the layer's output)
        rec.ones = conv and has_bias
        A, Bg = _unfold(rec, b, ones=rec.ones)
        rec.A, rec.Bg = A, Bg
        if A.dim() == 2:  # ||a_i||^2 ||b_i||^2 (+ ||b_i||^2 for the bias)
            a2 = _sq_norms(A)
            return _sq_norms(Bg).mul_(a2.add_(1.0) if has_bias else a2)
        if has_bias and not conv:
            rec.Gb = Bg.sum(1)
        n, T, d = A.shape
        p = Bg.shape[2]
        if T * T * (d + p) <= p * d * T:  # ghost: Gram matrices are cheaper
            ga = torch.bmm(A, A.transpose(1, 2))
            gb = torch.bmm(Bg, Bg.transpose(1, 2))
            sq = (ga * gb).sum((1, 2))
            return sq.add_(_sq_norms(rec.Gb)) if rec.Gb is not None else sq
        # materialise the (p, d) per-example gradients; reused for the clipped sum
        G = torch.bmm(A.transpose(1, 2), Bg).transpose(1, 2)  # (d, p) products: faster for thin inputs
        if rec.ones:  # weights and bias in one (p, d + 1) gradient: its norm is both
            rec.G, rec.Gb = G[..., :-1], G[..., -1]
            return _sq_norms(G)
        rec.G = G
    sq = _sq_norms(rec.G)
    return sq.add_(_sq_norms(rec.Gb)) if has_bias else sq


def _layer_weighted_sum(rec: _Record, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    if isinstance(rec.layer, (nn.LayerNorm, nn.GroupNorm)):
        return c @ rec.G, (c @ rec.Gb if rec.Gb is not None else None)
    if isinstance(rec.layer, nn.Embedding):
        w = torch.zeros_like(rec.layer.weight)
        return w.index_add_(0, rec.A.reshape(-1), (rec.Bg * c[:, None, None]).reshape(-1, w.shape[1])), None
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
        if rec.ones:  # the bias gradients are the last column (A's column of ones)
            return w[:, :-1], w[:, -1]
    bias = torch.tensordot(c, rec.Gb, dims=1) if bias_on else None
    return w, bias


def per_sample_grad_norms(model: nn.Module, losses_fn: AnyCallable, x: torch.Tensor) -> torch.Tensor:
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


# ----------------------------------------------------------------------------------------------
# Fast path: a stack of Linear layers and elementwise activations, differentiated by hand.
# ----------------------------------------------------------------------------------------------

_aten = torch.ops.aten


#: Elementwise activations the fast path differentiates by hand: module type -> (forward
#: ``f(z, inplace)``, backward ``f(grad, z, output)``, whether the backward needs ``z``).
#: The backward functions are the ATen kernels autograd itself uses for these modules.
_DENSE_ACTIVATIONS: dict[type, tuple] = {
    nn.ReLU: (lambda m: (lambda z, inplace: z.relu_() if inplace else z.relu()),
              lambda m: (lambda g, z, y: _aten.threshold_backward(g, y, 0)), False),
    nn.Tanh: (lambda m: (lambda z, inplace: z.tanh_() if inplace else z.tanh()),
              lambda m: (lambda g, z, y: _aten.tanh_backward(g, y)), False),
    nn.Sigmoid: (lambda m: (lambda z, inplace: z.sigmoid_() if inplace else z.sigmoid()),
                 lambda m: (lambda g, z, y: _aten.sigmoid_backward(g, y)), False),
    # ELU's backward uses the input (as autograd does for the out-of-place op), so z is kept
    nn.ELU: (lambda m: (lambda z, inplace, a=float(m.alpha): F.elu(z, a)),
             lambda m: (lambda g, z, y, a=float(m.alpha): _aten.elu_backward(g, a, 1, 1, False, z)), True),
}


def _dense_plan(model: nn.Module) -> list[tuple] | None:
    """The layer plan of a supported Linear/activation stack, or None if the fast path does not apply."""
    if type(model) is not nn.Sequential or len(model) == 0:
        return None
    plan: list[tuple] = []
    for m in model:
        if type(m) is nn.Linear:
            if not m.weight.requires_grad or (m.bias is not None and not m.bias.requires_grad):
                return None
            plan.append(("linear", m))
        elif type(m) in _DENSE_ACTIVATIONS:
            fwd, bwd, keep_z = _DENSE_ACTIVATIONS[type(m)]
            plan.append(("act", fwd(m), bwd(m), keep_z))
        else:
            return None
    if not any(op[0] == "linear" for op in plan):
        return None
    # the parameters must be exactly the Linear layers' (no stray parameters elsewhere)
    own = [id(p) for op in plan if op[0] == "linear" for p in op[1].parameters()]
    if [id(p) for p in model.parameters()] != own:
        return None
    return plan


class DenseStackClipper:
    """Per-example norms and clipped sums for a Linear/activation stack, with no autograd at all.

    The fast path for the ``linear`` and ``mlp`` models of
    :func:`dpcore.training.build_model` (an ``nn.Sequential`` of ``nn.Linear``
    layers and the activations of :data:`dpcore.training.ACTIVATIONS`). One
    hand-written forward keeps every Linear layer's input ``a``; the gradient of
    each example's loss with respect to the logits is written down directly
    (``softmax(z) - y`` for cross-entropy, ``2 (z - y)`` for the squared error)
    and propagated back through the layers with the same ATen backward kernels
    autograd uses, giving every layer's output gradient ``b``. Per-example
    squared norms are ``||a_i||^2 ||b_i||^2 (+ ||b_i||^2 for the bias)`` summed
    over layers (the ghost identity for a Linear layer applied to one vector),
    and the clipped sum is ``(c * B)^T A`` per layer (book-keeping), added in
    place to a gradient buffer that may already hold the noise.

    It computes the same quantities as :class:`GhostClipper` (tests check
    agreement within float rounding, and against torch.func per-example
    gradients), only without hooks, the autograd graph and a backward pass
    through the first layer's input.

    Parameters
    ----------
    model : nn.Sequential
        A stack that :meth:`supports`; anything else raises ``DPValueError``
        (use :func:`make_clipper` to fall back to :class:`GhostClipper`).

    References
    ----------
    Goodfellow, Efficient per-example gradient computations, arXiv:1510.01799, 2015.
    Li, Tramèr, Liang, Hashimoto, Large language models can be strong differentially
    private learners, ICLR 2022 (ghost clipping).
    Bu, Wang, Zha, Karypis, Differentially private optimization on large model at
    small cost, ICML 2023 (book-keeping).
    Abadi et al., Deep learning with differential privacy, CCS 2016 (flat clipping).

    Examples
    --------
    >>> m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    >>> clipper = DenseStackClipper(m)
    >>> losses, norms = clipper.loss_and_norms(torch.randn(5, 3), torch.tensor([0, 1, 1, 0, 1]),
    ...                                        task="classification")
    >>> norms.shape
    torch.Size([5])
    """

    def __init__(self, model: nn.Module) -> None:
        plan = _dense_plan(model)
        if plan is None:
            raise DPValueError(
                "DenseStackClipper needs an nn.Sequential of nn.Linear layers and the activations "
                f"{sorted(t.__name__ for t in _DENSE_ACTIVATIONS)}; use make_clipper(model) to fall back "
                "to GhostClipper for other models"
            )
        self.model = model
        self._plan = plan
        self._cache: list | None = None

    @staticmethod
    def supports(model: nn.Module) -> bool:
        """True if ``model`` is a stack of Linear layers and supported elementwise activations."""
        return _dense_plan(model) is not None

    def remove(self) -> None:
        """Nothing to detach (no hooks); present so both clippers can be used alike."""
        self._cache = None

    def loss_and_norms(self, x: torch.Tensor, y: torch.Tensor, *, task: str,
                       x_sq_norms: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-example losses and gradient norms (both shape ``(B,)``) for the batch ``(x, y)``.

        ``task="classification"``: cross-entropy of the logits against integer
        labels (or soft/one-hot rows); ``"regression"``: squared error summed over
        outputs. The layer inputs and output gradients are kept for
        :meth:`accumulate_clipped_sum`. ``x_sq_norms``, if given, are the
        ``||x_i||^2`` of the rows of ``x`` (as ``vector_norm(x, dim=1) ** 2``):
        the first layer's input norms, which ``train()`` computes once per run
        instead of once per step.
        """
        plan = self._plan

        def linear(i: int, h: torch.Tensor) -> torch.Tensor:
            layer = plan[i][1]
            w = layer.weight.detach()
            return torch.addmm(layer.bias.detach(), h, w.t()) if layer.bias is not None else h @ w.t()

        with torch.no_grad():
            losses, norms, records = dense_pass(plan, x, lambda out: loss_and_output_grad(out, y, task),
                                                linear=linear, back=lambda i, g: g @ plan[i][1].weight.detach(),
                                                x_sq_norms=x_sq_norms)
        self._cache = [(plan[i][1], a, b) for i, a, b in records]
        return losses, norms

    def accumulate_clipped_sum(self, factors: torch.Tensor, grads: Sequence[torch.Tensor]) -> None:
        """Add ``sum_i factors[i] * g_i`` to every parameter's gradient, one product per layer.

        ``grads`` lists the destination tensors in ``model.parameters()`` order;
        the sums are added in place (``addmm_``/``addmv_``), so a buffer that
        already holds the noise needs no second pass.
        """
        if self._cache is None:
            raise RuntimeError("call loss_and_norms(x, y, task=...) before accumulate_clipped_sum")
        it = iter(grads)
        with torch.no_grad():
            for layer, a, b in self._cache:
                gw = next(it)
                # scale the narrower of the two factors by c: sum_i c_i b_i a_i^T (b in place: it is ours and
                # no longer needed; a may be the caller's x)
                if layer.bias is not None:
                    next(it).addmv_(b.t(), factors)
                if b.shape[1] <= a.shape[1]:
                    gw.addmm_(b.mul_(factors[:, None]).t(), a)
                else:
                    gw.addmm_(b.t(), a * factors[:, None])
        self._cache = None


def dense_pass(plan: list, x: torch.Tensor, loss_grad, *, linear, back, x_sq_norms: torch.Tensor | None = None,
               norms: bool = True) -> tuple[torch.Tensor, torch.Tensor | None, list]:
    """The hand-written forward and backward pass of a Linear/activation stack (see :class:`DenseStackClipper`).

    ``linear(i, h)`` applies the Linear layer at position ``i`` of ``plan``, ``back(i, g)`` takes an output
    gradient back through its weights, and ``loss_grad(out)`` gives the per-example losses and their gradients
    with respect to the output; rows are along the last-but-one axis, so the same pass serves one network
    (rows ``(B, d)``) and K stacked ones (``(K, B, d)``, :mod:`dpcore.training.batched`). Returns the losses,
    every example's gradient norm (the ghost identity ``||a_i||^2 ||b_i||^2``, plus ``||b_i||^2`` for a bias,
    summed over layers) and, per Linear layer in forward order, ``[i, input a, output gradient b]``.
    ``x_sq_norms``: the ``||x_i||^2`` of the rows, if the caller has them (the first layer's input norms).
    ``norms=False``: the norms are not computed (None is returned in their place): a non-private step clips nothing.
    """
    records = []  # [position of the Linear layer, its input a, its output gradient b] in forward order
    acts = []
    h = x
    fresh = False
    for i, op in enumerate(plan):
        if op[0] == "linear":
            records.append([i, h, None])
            h = linear(i, h)
        else:
            _, fwd, bwd, keep_z = op
            z = h
            # in place only on a fresh Linear output that nothing else needs
            h = fwd(z, fresh and not keep_z)
            acts.append((bwd, z if keep_z else None, h))
        fresh = op[0] == "linear"
    losses, g = loss_grad(h)
    # back through the stack: every Linear's output gradient, and the input gradient of all but the first
    total = None
    ai = len(acts)
    k = len(records)
    for op in reversed(plan):
        if op[0] == "linear":
            k -= 1
            rec = records[k]
            rec[2] = g
            if norms:
                total = _add_ghost_norm(total, g, rec[1], op[1].bias is not None,
                                        x_sq_norms if k == 0 and plan[0][0] == "linear" else None)
            if k == 0:
                break
            g = back(rec[0], g)
        else:
            ai -= 1
            bwd, z, yact = acts[ai]
            g = bwd(g, z, yact)
    return losses, (total.sqrt() if norms else None), records


def _add_ghost_norm(total: torch.Tensor | None, g: torch.Tensor, a: torch.Tensor, bias: bool,
                    a_sq: torch.Tensor | None) -> torch.Tensor:
    """``total`` plus one Linear layer's squared per-example gradient norms: ``||a_i||^2 ||b_i||^2`` (plus
    ``||b_i||^2`` for a bias); ``a_sq``, if given, holds the ``||a_i||^2``. vector_norm is one fused pass."""
    b2 = torch.linalg.vector_norm(g, dim=-1).square_()
    a2 = a_sq if a_sq is not None else torch.linalg.vector_norm(a, dim=-1).square_()
    if total is None:
        return torch.addcmul(b2, b2, a2) if bias else b2.mul_(a2)
    total.addcmul_(b2, a2)
    if bias:
        total.add_(b2)
    return total


def make_clipper(model: nn.Module, *, fast: bool = True,
                 loss: LossFunction | None = None) -> "DenseStackClipper | GhostClipper":
    """The fastest clipper for ``model``: :class:`DenseStackClipper` for Linear/activation stacks
    (the ``linear`` and ``mlp`` models) with the task's own loss, :class:`GhostClipper` (hooks) for anything else,
    for a given per-example ``loss(output, y)``, or if ``fast=False``."""
    if fast and loss is None and DenseStackClipper.supports(model):
        return DenseStackClipper(model)
    return GhostClipper(model, loss=loss)
