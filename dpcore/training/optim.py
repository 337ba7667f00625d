"""What consumes the (noisy) gradient: SGD or Adam, written out. Both are post-processing."""
from __future__ import annotations

import torch
from torch import nn

#: Adam's moment decays (beta1, beta2) and the epsilon of its denominator: torch's defaults (Kingma & Ba, 2015).
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


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


class PlainAdam:
    """``torch.optim.Adam`` (no AMSGrad, L2 weight decay), written out (Kingma & Ba, 2015).

    For the same reason as :class:`PlainSGD`: ``torch.optim`` imports ``torch._dynamo`` (about 1 s per
    process) for what is a few lines of arithmetic. The operations are those of torch's single-tensor Adam, in
    its order (bitwise equal to ``torch.optim.Adam(foreach=False)``, tested), for every parameter with a gradient
    (one whose gradient is None is skipped, and its step count does not advance)::

        g = grad + weight_decay * p
        m = m.lerp(g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    References
    ----------
    Kingma, Ba. Adam: a method for stochastic optimization. ICLR 2015.
    """

    def __init__(self, params, *, lr: float, betas: tuple[float, float] = ADAM_BETAS, eps: float = ADAM_EPS,
                 weight_decay: float = 0.0) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.eps, self.weight_decay = float(lr), float(eps), float(weight_decay)
        self.beta1, self.beta2 = (float(b) for b in betas)
        self._steps = [0] * len(self.params)
        self._m: list[torch.Tensor | None] = [None] * len(self.params)
        self._v: list[torch.Tensor | None] = [None] * len(self.params)

    zero_grad = PlainSGD.zero_grad

    @torch.no_grad()
    def step(self) -> None:
        beta1, beta2 = self.beta1, self.beta2
        for i, p in enumerate(self.params):
            g = p.grad
            if g is None:
                continue
            if self._m[i] is None:
                self._m[i] = torch.zeros_like(p, memory_format=torch.preserve_format)
                self._v[i] = torch.zeros_like(p, memory_format=torch.preserve_format)
            m, v = self._m[i], self._v[i]
            self._steps[i] += 1
            t = float(self._steps[i])  # torch keeps the count as a float tensor and reads it back with .item()
            if self.weight_decay != 0:
                g = g.add(p, alpha=self.weight_decay)
            m.lerp_(g, 1 - beta1)
            v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            step_size = self.lr / (1 - beta1**t)
            denom = (v.sqrt() / (1 - beta2**t) ** 0.5).add_(self.eps)
            p.addcdiv_(m, denom, value=-step_size)


def make_optimizer(model: nn.Module, *, kind: str, learning_rate: float, momentum: float = 0.0,
                   weight_decay: float = 0.0):
    """:class:`PlainSGD` for ``kind="sgd"``, :class:`PlainAdam` (momentum unused) for ``"adam"``."""
    if kind == "adam":
        return PlainAdam(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    return PlainSGD(model.parameters(), lr=learning_rate, momentum=momentum, weight_decay=weight_decay)
