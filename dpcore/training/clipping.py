"""Per-example L2 clipping of torch gradients: the one clip-factor rule and the clipper protocol.

Clipping a per-example gradient (or a client's model update) to L2 norm at most C
multiplies it by ``min(1, C / ||g_i||)`` (Abadi et al. 2016, Algorithm 1; McMahan et
al. 2018 for client updates). :func:`clip_factors` is the only place that rule is
written: the DP-SGD step (whichever clipper it runs) and DP-FedAvg use it.

A *clipper* turns a batch into per-example losses and gradient norms, then adds the
clipped sum ``sum_i c_i g_i`` to given gradient buffers without ever materialising
the ``g_i`` of Linear layers. Both implementations in :mod:`dpcore.training.ghost`
follow :class:`Clipper`, so the engine never asks which one it has.

References
----------
Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep learning with differential
privacy. CCS 2016 (Algorithm 1: clip each per-example gradient to norm C).
McMahan, Ramage, Talwar, Zhang. Learning differentially private recurrent language
models. ICLR 2018 (DP-FedAvg: clip each client's update).
"""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import torch

#: Opacus's stabiliser in ``C / (norm + eps)``; kept identical so clipped sums match Opacus's.
CLIP_EPS = 1e-6


def clip_factors(norms: torch.Tensor, clip_norm: float, *, scale: float = 1.0) -> torch.Tensor:
    """``scale * min(1, C / (||g_i|| + 1e-6))`` for every norm, as Opacus computes it.

    Multiplying row i by its factor gives it norm at most ``scale * C`` (the
    ``1e-6`` keeps a zero norm finite and only ever shrinks the factor). A
    ``scale`` other than 1 folds a later division into the factors, e.g. the
    DP-SGD step passes ``1/L`` so its clipped sum comes out already divided by
    the expected batch size, with no extra pass over the gradient.

    Parameters
    ----------
    norms : Tensor of shape (B,)
        Per-example (or per-client) L2 norms.
    clip_norm : float
        C, the bound.
    scale : float
        Multiplies every factor.

    Examples
    --------
    >>> clip_factors(torch.tensor([0.5, 2.0, 0.0]), 1.0)
    tensor([1.0000, 0.5000, 1.0000])
    >>> clip_factors(torch.tensor([4.0]), 1.0, scale=0.5)
    tensor([0.1250])
    """
    return torch.div(clip_norm * scale, norms + CLIP_EPS).clamp_(max=scale)


@runtime_checkable
class Clipper(Protocol):
    """What the DP-SGD step needs from a per-example clipper.

    Call :meth:`loss_and_norms` on a batch, compute factors with
    :func:`clip_factors`, then :meth:`accumulate_clipped_sum` once; the clipper
    keeps what it needs from the first call for the second. Implemented by
    :class:`~dpcore.training.ghost.DenseStackClipper` (hand-differentiated
    Linear/activation stacks) and :class:`~dpcore.training.ghost.GhostClipper`
    (forward hooks and one autograd pass, any model of the layers in
    :data:`~dpcore.training.models.SUPPORTED_LAYERS`);
    :func:`~dpcore.training.ghost.make_clipper` picks the faster one.
    """

    def loss_and_norms(self, x: torch.Tensor, y: torch.Tensor, *, task: str,
                       x_sq_norms: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-example losses (detached) and per-example gradient L2 norms, both of shape ``(B,)``.

        The loss is the cross-entropy (integer labels or soft rows) for
        ``task="classification"`` and the squared error summed over outputs
        for ``"regression"``; the norm is over all trainable parameters
        together ("flat" clipping). ``x_sq_norms`` optionally gives the squared
        L2 norms of the rows of ``x``, computed once per run by the caller; a
        clipper may use them or ignore them.
        """
        ...

    def accumulate_clipped_sum(self, factors: torch.Tensor, grads: Sequence[torch.Tensor]) -> None:
        """Add ``sum_i factors[i] * g_i`` in place to ``grads`` (one tensor per trainable
        parameter, in ``model.parameters()`` order) for the batch of the last :meth:`loss_and_norms`."""
        ...

    def remove(self) -> None:
        """Detach from the model (hooks, cached activations)."""
        ...
