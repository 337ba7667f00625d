"""The clip-factor rule and the clipper protocol, against a naive one-example-at-a-time loop.

The reference clips the way Abadi et al. (2016) write it: for each example, one
forward and backward pass, its whole gradient scaled by ``min(1, C / ||g_i||)``,
then the sum. Both clippers must give the same clipped sum, and the DP-SGD step
must accept any object that follows the protocol (here the naive loop itself).
"""
from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from dpcore.federated import clip_updates
from dpcore.training import (
    CLIP_EPS,
    Clipper,
    DenseStackClipper,
    GhostClipper,
    PrivateGradient,
    build_model,
    clip_factors,
    make_clipper,
)
from dpcore.training.losses import per_example_loss


class NaiveClipper:
    """The protocol implemented the slow, obvious way: one autograd pass per example."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self._grads: list[list[torch.Tensor]] | None = None

    def loss_and_norms(self, x, y, *, task, x_sq_norms=None):
        params = [p for p in self.model.parameters() if p.requires_grad]
        losses, grads = [], []
        for i in range(x.shape[0]):
            loss = per_example_loss(self.model(x[i:i + 1]), y[i:i + 1], task)[0]
            grads.append([g.detach() for g in torch.autograd.grad(loss, params)])
            losses.append(loss.detach())
        self._grads = grads
        norms = torch.stack([torch.sqrt(sum(g.pow(2).sum() for g in gi)) for gi in grads]) if grads else \
            torch.zeros(0)
        return (torch.stack(losses) if losses else torch.zeros(0)), norms

    def accumulate_clipped_sum(self, factors, grads):
        for c, gi in zip(factors, self._grads):
            for dst, g in zip(grads, gi):
                dst.add_(c * g)
        self._grads = None

    def remove(self) -> None:
        self._grads = None


def _naive_clipped_sum(model, x, y, task, C):
    """sum_i g_i * min(1, C / ||g_i||), written out (no stabiliser)."""
    params = list(model.parameters())
    total = [torch.zeros_like(p) for p in params]
    for i in range(x.shape[0]):
        loss = per_example_loss(model(x[i:i + 1]), y[i:i + 1], task)[0]
        g = torch.autograd.grad(loss, params)
        norm = torch.sqrt(sum(t.pow(2).sum() for t in g))
        scale = min(1.0, C / float(norm))
        for acc, t in zip(total, g):
            acc.add_(scale * t)
    return total


def _case(kind: str, task: str, seed: int = 0):
    k = 4 if task == "classification" else 2
    d, shape = (36, (6, 6)) if kind == "cnn" else (12, None)
    model = build_model(kind, n_features=d, n_outputs=k, hidden=10, channels=3, image_shape=shape,
                        activation="tanh", seed=seed).double()
    g = torch.Generator().manual_seed(seed + 1)
    x = 2.0 * torch.randn(9, d, generator=g, dtype=torch.double)
    y = torch.randint(0, k, (9,), generator=g) if task == "classification" else \
        torch.randn(9, k, generator=g, dtype=torch.double)
    return model, x, y


CLIPPERS = [(DenseStackClipper, "linear"), (DenseStackClipper, "mlp"), (GhostClipper, "linear"),
            (GhostClipper, "mlp"), (GhostClipper, "cnn"), (NaiveClipper, "mlp")]


@pytest.mark.parametrize("clipper_cls, kind", CLIPPERS)
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_every_clipper_gives_the_naive_loops_clipped_sum(clipper_cls, kind, task):
    model, x, y = _case(kind, task)
    C = 0.3
    expected = _naive_clipped_sum(copy.deepcopy(model), x, y, task, C)
    clipper = clipper_cls(model)
    assert isinstance(clipper, Clipper)
    losses, norms = clipper.loss_and_norms(x, y, task=task)
    factors = clip_factors(norms, C)
    assert (factors < 1).any()  # the bound bites for some examples
    sums = [torch.zeros_like(p) for p in model.parameters()]
    clipper.accumulate_clipped_sum(factors, sums)
    for got, ref in zip(sums, expected):
        # the only difference from the written-out rule is Opacus's 1e-6 in C / (norm + 1e-6): a relative
        # change of 1e-6 / norm in each clipped example's factor
        assert float((got - ref).abs().max()) <= 1e-5 * float(ref.abs().max())
    assert torch.allclose(losses, per_example_loss(model(x), y, task).detach(), rtol=1e-10)
    clipper.remove()


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_private_gradient_takes_any_clipper_following_the_protocol(kind):
    """The step does not ask which clipper it has: the naive loop gives the same noisy gradient."""
    model, x, y = _case(kind, "classification", seed=3)
    grads = []
    for make in (make_clipper, GhostClipper, NaiveClipper):
        m = copy.deepcopy(model)
        step = PrivateGradient(m, make(m), task="classification", clip_norm=0.2, noise_multiplier=1.5,
                               expected_batch_size=10.0, generator=torch.Generator().manual_seed(4))
        step(x, y)
        grads.append(torch.cat([p.grad.flatten() for p in m.parameters()]))
    assert torch.allclose(grads[0], grads[2], rtol=1e-9, atol=1e-12)
    assert torch.allclose(grads[1], grads[2], rtol=1e-9, atol=1e-12)


def test_clip_factors_bound_every_row_and_keep_short_rows():
    g = torch.Generator().manual_seed(0)
    rows = torch.randn(50, 7, generator=g, dtype=torch.double) * torch.logspace(-3, 2, 50, dtype=torch.double)[:, None]
    norms = rows.norm(dim=1)
    for C in (0.01, 1.0, 30.0):
        c = clip_factors(norms, C)
        assert ((rows * c[:, None]).norm(dim=1) <= C).all()
        short = norms + CLIP_EPS <= C
        assert (c[short] == 1).all() and (c[~short] < 1).all()
        assert torch.allclose(c, torch.clamp(C / (norms + 1e-6), max=1.0), rtol=1e-12)
        assert torch.allclose(clip_factors(norms, C, scale=0.25), 0.25 * c, rtol=1e-12)
    assert clip_factors(torch.zeros(3), 1.0).eq(1).all()  # a zero gradient stays finite


def test_dp_fedavg_clips_client_updates_with_the_same_rule():
    g = torch.Generator().manual_seed(1)
    updates = torch.randn(20, 30, generator=g) * torch.logspace(-2, 1, 20)[:, None]
    clipped, norms = clip_updates(updates, clip_norm=0.5)
    assert torch.equal(norms, updates.norm(dim=1))
    rule = updates * clip_factors(norms, 0.5)[:, None]
    # a row the rule leaves a few float32 units above S is scaled once more, to within 2**-20 of the rule's
    above = rule.double().norm(dim=1) > 0.5
    assert torch.equal(clipped[~above], rule[~above])
    assert torch.allclose(clipped[above], rule[above], rtol=2e-6, atol=0.0)
    assert (clipped.double().norm(dim=1) <= 0.5).all()
