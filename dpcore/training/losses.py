"""Per-example losses of the trainer, and their gradients with respect to the model output.

Classification uses the cross-entropy of the logits against integer labels or
soft/one-hot rows; regression the squared error summed over outputs. Losses are
per example (never averaged) because DP-SGD clips every example's gradient.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def per_example_loss(out: torch.Tensor, y: torch.Tensor, task: str) -> torch.Tensor:
    """Loss of every row of ``out`` (shape ``(B,)``), differentiable by autograd.

    >>> per_example_loss(torch.zeros(2, 2), torch.tensor([0, 1]), "classification")
    tensor([0.6931, 0.6931])
    """
    if task == "classification":
        return F.cross_entropy(out, y, reduction="none")
    diff = out - y.reshape(out.shape[0], -1)
    return diff.pow(2).sum(1)


_MINUS_ONES: dict[tuple[torch.dtype, torch.device], torch.Tensor] = {}


def _minus_ones(n: int, dtype: torch.dtype, device: torch.device | str = "cpu") -> torch.Tensor:
    """A (n, 1) column of -1 (a view of one cached column per dtype and device, grown as needed)."""
    key = (dtype, torch.device(device))
    col = _MINUS_ONES.get(key)
    if col is None or col.shape[0] < n:
        col = _MINUS_ONES[key] = torch.full((max(n, 1024), 1), -1.0, dtype=dtype, device=device)
    return col[:n]


def loss_and_output_grad(out: torch.Tensor, y: torch.Tensor, task: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-example losses and their gradients with respect to ``out``, written down (no autograd).

    Cross-entropy ``l_i = -sum_k y_ik log softmax(z_i)_k`` has gradient
    ``softmax(z_i) * sum_k y_ik - y_i`` (``softmax(z_i) - onehot(y_i)`` for a
    label); the squared error ``l_i = ||z_i - y_i||^2`` has ``2 (z_i - y_i)``.

    >>> losses, grad = loss_and_output_grad(torch.zeros(1, 2), torch.tensor([1]), "classification")
    >>> grad
    tensor([[ 0.5000, -0.5000]])
    """
    if task == "classification":
        lsm = torch.log_softmax(out, 1)
        if y.dim() == 1:
            losses = F.nll_loss(lsm, y, reduction="none")
            prob = lsm.exp_()  # the log-probabilities are not needed after the loss
            prob.scatter_add_(1, y[:, None], _minus_ones(y.shape[0], prob.dtype, prob.device))
            return losses, prob
        yf = y.to(out.dtype)
        losses = -(lsm * yf).sum(1)
        return losses, lsm.exp_() * yf.sum(1, keepdim=True) - yf
    diff = out - y.reshape(out.shape[0], -1).to(out.dtype)
    return diff.pow(2).sum(1), diff * 2.0
