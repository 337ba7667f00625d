"""GhostClipper's per-example norms, taken where each layer's output enters the graph (a gradient edge), and its
clipped sum, against each example's gradient by plain autograd, on models that try to break it: in-place ops after
trained layers, a layer output used twice, normalisation and embedding layers, and an input rewritten in place."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from dpcore.exceptions import DPValueError
from dpcore.training import GhostClipper, clip_factors


class _FixedMaskDropout(nn.Module):
    """Dropout(inplace=True) in train mode with a fixed mask (so the reference sees the same one): kept units are
    scaled by 1 / (1 - p) in place."""

    def __init__(self, width: int, p: float = 0.5) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.register_buffer("mask", (torch.rand(width, generator=g) > p).double() / (1 - p))

    def forward(self, x):
        return x.mul_(self.mask)


class _Skip(nn.Module):
    """A layer's output used twice: through the next layer and around it."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b, self.c = nn.Linear(5, 6), nn.Linear(6, 6), nn.Linear(6, 3)

    def forward(self, x):
        h = self.a(x)
        return self.c(self.b(torch.tanh(h)) + h)


class _Norms(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.g, self.n, self.c = nn.Linear(5, 8), nn.GroupNorm(2, 8), nn.LayerNorm(8), nn.Linear(8, 3)

    def forward(self, x):
        h = self.n(self.g(self.a(x)))
        return self.c(h.mul_(2.0).relu_())


class _Embed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.e, self.c = nn.Embedding(10, 4), nn.Linear(20, 3)

    def forward(self, x):
        return self.c(F.leaky_relu_(self.e(x.long()).flatten(1), 0.1))


MODELS = {
    "in-place ReLU, fixed-mask in-place dropout": lambda: nn.Sequential(
        nn.Linear(5, 6), nn.ReLU(inplace=True), nn.Linear(6, 6), _FixedMaskDropout(6), nn.Linear(6, 3)),
    "in-place LeakyReLU": lambda: nn.Sequential(nn.Linear(5, 6), nn.LeakyReLU(0.1, inplace=True), nn.Linear(6, 3)),
    "skip connection": _Skip,
    "GroupNorm, LayerNorm, in-place mul": _Norms,
    "Embedding, in-place LeakyReLU": _Embed,
}


def _inputs(name: str, n: int) -> torch.Tensor:
    if name.startswith("Embedding"):
        return torch.randint(0, 10, (n, 5)).double()
    return 2.0 * torch.randn(n, 5, dtype=torch.double)


@pytest.mark.parametrize("name", list(MODELS))
def test_norms_and_clipped_sum_equal_each_examples_own_gradient_clipped(name):
    torch.manual_seed(0)
    model = MODELS[name]().double().train()
    n, C = 7, 0.3
    x, y = _inputs(name, n), torch.randint(0, 3, (n,))
    own = []
    for i in range(n):  # the reference: each example's gradient alone, by torch's own backward
        model.zero_grad()
        F.cross_entropy(model(x[i:i + 1].clone()), y[i:i + 1]).backward()
        own.append([p.grad.clone() for p in model.parameters()])
    own_norms = torch.stack([torch.sqrt(sum(g.square().sum() for g in gs)) for gs in own])
    clipper = GhostClipper(model)
    _, norms = clipper.loss_and_norms(x.clone(), y, task="classification")
    assert torch.allclose(norms, own_norms, rtol=1e-10)
    factors = clip_factors(norms, C)
    assert (factors < 1).any()  # the bound bites
    sums = [torch.zeros_like(p) for p in model.parameters()]
    clipper.accumulate_clipped_sum(factors, sums)
    for k, s in enumerate(sums):
        assert torch.allclose(s, sum(factors[i] * own[i][k] for i in range(n)), rtol=1e-9, atol=1e-12)
    # white box: every example's clipped contribution stays within the clip norm
    kept = torch.stack([factors[i] * own_norms[i] for i in range(n)])
    assert (kept <= C * (1 + 1e-9)).all()


@pytest.mark.parametrize("name", list(MODELS))
def test_each_examples_clipped_contribution_is_at_most_the_clip_norm_white_box(name):
    """One example at a time through the clipper: the clipped sum of a batch of one is that example's contribution,
    and its norm is at most C (the sensitivity the noise is calibrated to)."""
    torch.manual_seed(1)
    model = MODELS[name]().double().train()
    C = 0.05
    clipper = GhostClipper(model)
    for _ in range(4):
        x, y = _inputs(name, 1), torch.randint(0, 3, (1,))
        _, norms = clipper.loss_and_norms(x, y, task="classification")
        sums = [torch.zeros_like(p) for p in model.parameters()]
        clipper.accumulate_clipped_sum(clip_factors(norms, C), sums)
        assert float(torch.sqrt(sum(s.square().sum() for s in sums))) <= C * (1 + 1e-9)


class _InputRewritten(nn.Module):
    """Dropout(inplace=True) on the model's input after a layer read it: torch's own backward refuses it (the
    layer's saved input changed), but the norms never run that layer's backward, so they read the changed input."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.c, self.drop = nn.Linear(5, 3), nn.Linear(5, 3), _FixedMaskDropout(5)

    def forward(self, x):
        return self.a(x) + self.c(self.drop(x))


def test_a_layer_input_changed_in_place_after_the_layer_read_it_is_refused():
    torch.manual_seed(2)
    model = _InputRewritten().double()
    x, y = torch.randn(4, 5, dtype=torch.double), torch.randint(0, 3, (4,))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):  # torch's own backward
        F.cross_entropy(model(x.clone()), y).backward()
    with pytest.raises(DPValueError, match=r"input of layer\(s\) 'a' \(Linear\) was changed in place"):
        GhostClipper(model).loss_and_norms(x.clone(), y, task="classification")


@pytest.mark.parametrize("context", [torch.no_grad, torch.inference_mode])
def test_a_forward_pass_without_gradients_is_refused_by_name(context):
    clipper = GhostClipper(nn.Sequential(nn.Linear(3, 2)))
    with context(), pytest.raises(DPValueError, match="without gradients"):
        clipper.loss_and_norms(torch.zeros(4, 3), torch.zeros(4, dtype=torch.long), task="classification")


def test_a_layer_whose_output_does_not_reach_the_loss_is_refused_by_name():
    """Called but its output unused: no gradient reaches it. torch's own error names no layer (and a run with a module
    of its own read it as an in-place change); the refusal says which layer and what to do."""
    import numpy as np

    from dpcore.exceptions import DPValueError
    from dpcore.training import TrainConfig, train

    class Dangling(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.dangling = nn.Linear(3, 2), nn.Linear(3, 2)

        def forward(self, x):
            self.dangling(x)
            return self.used(x)

    clipper = GhostClipper(Dangling())
    with pytest.raises(DPValueError, match=r"'dangling' \(Linear\) does not reach the loss"):
        clipper.loss_and_norms(torch.randn(4, 3), torch.tensor([0, 1, 0, 1]), task="classification")
    X = np.random.default_rng(0).normal(size=(40, 3)).astype("float32")
    with pytest.raises(DPValueError, match="does not reach the loss"):
        train(X, (X[:, 0] > 0).astype(int), TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0),
              model=Dangling(), n_outputs=2)
