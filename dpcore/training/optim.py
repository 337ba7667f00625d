"""What consumes the (noisy) gradient: SGD written out, or torch's Adam. Both are post-processing."""
from __future__ import annotations

import torch
from torch import nn


class PlainSGD:
    """``torch.optim.SGD`` (no dampening, no Nesterov), written out.

    Creating any ``torch.optim`` optimizer imports ``torch._dynamo`` on first use,
    about 1.4 s per process, which every sweep worker and every command-line run
    paid for an update of a few lines. This is the same arithmetic as torch's
    single-tensor SGD (bitwise equal, tested): weight decay added to the gradient,
    a momentum buffer started as a copy of the first gradient, then
    ``p -= lr * g``. Parameters whose gradient is None are skipped.
    """

    def __init__(self, params, *, lr: float, momentum: float = 0.0, weight_decay: float = 0.0) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.momentum, self.weight_decay = float(lr), float(momentum), float(weight_decay)
        self._bufs: list[torch.Tensor | None] = [None] * len(self.params)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        for i, p in enumerate(self.params):
            g = p.grad
            if g is None:
                continue
            if self.weight_decay != 0:
                g = g.add(p, alpha=self.weight_decay)
            if self.momentum != 0:
                buf = self._bufs[i]
                if buf is None:
                    buf = self._bufs[i] = torch.clone(g).detach()
                else:
                    buf.mul_(self.momentum).add_(g)
                g = buf
            p.add_(g, alpha=-self.lr)


def make_optimizer(model: nn.Module, *, kind: str, learning_rate: float, momentum: float = 0.0,
                   weight_decay: float = 0.0):
    """:class:`PlainSGD` for ``kind="sgd"``, ``torch.optim.Adam`` (momentum unused) for ``"adam"``."""
    if kind == "adam":
        return torch.optim.Adam(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    return PlainSGD(model.parameters(), lr=learning_rate, momentum=momentum, weight_decay=weight_decay)
