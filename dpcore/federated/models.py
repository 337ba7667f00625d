"""Small torch models evaluated for many clients at once.

Each client's parameters are one row of a matrix ``theta`` of shape
(clients, n_params); the forward pass uses batched matrix products, so the local
SGD of all sampled clients in a round runs as one vectorised computation. The
sum of the clients' losses has, for row k, exactly client k's gradient (client k's
loss depends only on row k).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..exceptions import DPValueError
from ..validation import check_int
from .config import MODELS


@dataclass(frozen=True)
class FlatModel:
    """A softmax regression or a one-hidden-layer MLP with flat, batched parameters.

    Parameters
    ----------
    kind : {"softmax", "mlp"}
    n_features, n_classes : int
    hidden : int
        Hidden units of the MLP.
    """

    kind: str
    n_features: int
    n_classes: int
    hidden: int = 64

    def __post_init__(self) -> None:
        if self.kind not in MODELS:
            raise DPValueError(f"model must be one of {sorted(MODELS)}, got {self.kind!r}")
        check_int(self.n_features, "n_features", minimum=1)
        check_int(self.n_classes, "n_classes", minimum=2)
        check_int(self.hidden, "hidden", minimum=1)

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        d, c, h = self.n_features, self.n_classes, self.hidden
        if self.kind == "softmax":
            return [(d, c), (c,)]
        return [(d, h), (h,), (h, c), (c,)]

    @property
    def n_params(self) -> int:
        return sum(math.prod(s) for s in self.shapes)

    def init(self, generator: torch.Generator) -> torch.Tensor:
        """Initial parameters, shape (n_params,), on the generator's device: zeros for softmax, uniform
        +-1/sqrt(fan_in) for the MLP."""
        if self.kind == "softmax":
            return torch.zeros(self.n_params, device=generator.device)
        parts = []
        fan_ins = (self.n_features, self.n_features, self.hidden, self.hidden)  # torch.nn.Linear's default range
        for s, fan_in in zip(self.shapes, fan_ins):
            bound = 1.0 / math.sqrt(fan_in)
            parts.append((torch.rand(math.prod(s), generator=generator, device=generator.device) * 2 - 1) * bound)
        return torch.cat(parts)

    def _unflatten(self, theta: torch.Tensor) -> list[torch.Tensor]:
        m = theta.shape[0]
        out, o = [], 0
        for s in self.shapes:
            k = math.prod(s)
            out.append(theta[:, o:o + k].reshape(m, *s))
            o += k
        return out

    def logits(self, theta: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        """Logits of shape (m, b, n_classes) for parameters (m, P) and inputs (m, b, d)."""
        if self.kind == "softmax":
            W, b = self._unflatten(theta)
            return torch.baddbmm(b[:, None, :], X, W)
        W1, b1, W2, b2 = self._unflatten(theta)
        h = torch.relu(torch.baddbmm(b1[:, None, :], X, W1))
        return torch.baddbmm(b2[:, None, :], h, W2)


def local_sgd(
    model: FlatModel,
    theta: torch.Tensor,
    X: torch.Tensor,
    y: torch.Tensor,
    shards: list[np.ndarray],
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    rng: np.random.Generator,
) -> torch.Tensor:
    """Run ``epochs`` of minibatch SGD on every client in ``shards`` from the same start ``theta``.

    Parameters
    ----------
    model : FlatModel
    theta : tensor (n_params,)
        The global model the clients start from.
    X, y : tensors
        All training rows; client k uses rows ``shards[k]``.
    shards : list of index arrays
    epochs, batch_size : int
    learning_rate : float
    rng : numpy Generator
        Shuffles each client's rows every epoch.

    Returns
    -------
    tensor (len(shards), n_params): each client's locally trained parameters.
    """
    m = len(shards)
    sizes = np.array([s.size for s in shards])
    # a batch is never wider than the largest client's rows: clients of ~3 rows padded to batches of 32 made every
    # round compute ten times the rows it trains on (the padding is masked out, so the steps are the same)
    batch_size = max(1, min(int(batch_size), int(sizes.max())))
    steps = int(math.ceil(sizes.max() / batch_size))
    width = steps * batch_size
    local = theta.detach().expand(m, -1).clone().requires_grad_(True)
    for _ in range(epochs):
        idx = np.full((m, width), -1, dtype=np.int64)
        for k, s in enumerate(shards):
            idx[k, : s.size] = rng.permutation(s)
        idx_t = torch.from_numpy(idx).to(X.device)  # the clients' batches are picked where their rows live
        for st in range(steps):
            b = idx_t[:, st * batch_size:(st + 1) * batch_size]
            mask = (b >= 0).to(X.dtype)
            bi = b.clamp(min=0)
            logits = model.logits(local, X[bi])
            ce = torch.nn.functional.cross_entropy(logits.reshape(-1, model.n_classes), y[bi].reshape(-1),
                                                   reduction="none").reshape(m, -1)
            loss = ((ce * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)).sum()
            (grad,) = torch.autograd.grad(loss, local)
            with torch.no_grad():
                local -= learning_rate * grad
    return local.detach()


def evaluate(model: FlatModel, theta: torch.Tensor, X: torch.Tensor, y: torch.Tensor, *,
             shift: torch.Tensor | None = None) -> tuple[float, float, float]:
    """(accuracy, mean cross-entropy, balanced accuracy) of the global model on (X, y); ``shift``
    (:func:`dpcore.training.engine.shares_shift` of declared class shares) makes its answers ``argmax(p / shares)``,
    as the run's final test rows are answered."""
    from ..training.engine import balanced_accuracy_of

    with torch.no_grad():
        logits = model.logits(theta[None, :], X[None])[0]
        loss = float(torch.nn.functional.cross_entropy(logits, y))
        if shift is not None:
            logits = logits - shift.to(logits.dtype)
        answers = logits.argmax(dim=1)
        acc = float((answers == y).to(torch.float64).mean())
        balanced = float(balanced_accuracy_of(answers, y))
    return acc, loss, balanced
