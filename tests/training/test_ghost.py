"""Per-example norms and clipped sums against independent references (torch.func vmap, Opacus)."""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap

from dpcore.exceptions import DPValueError
from dpcore.training import GhostClipper, build_model, clip_factors, per_sample_grad_norms


def _vmap_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_one(p, xi, yi):
        return F.cross_entropy(functional_call(model, p, (xi[None],)), yi[None])

    return vmap(grad(loss_one), in_dims=(None, 0, 0))(params, x, y)


def _vmap_norms(model, x, y):
    g = _vmap_grads(model, x, y)
    return torch.sqrt(sum(v.flatten(1).pow(2).sum(1) for v in g.values()))


def _rel(a, b):
    return float((a - b).abs().max() / b.abs().max())


@pytest.mark.parametrize(
    "layer, shape",
    [
        (nn.Linear(7, 4), (5, 7)),
        (nn.Linear(7, 4, bias=False), (5, 7)),
        (nn.Conv2d(2, 4, 3, padding=1), (5, 2, 6, 6)),  # materialised branch (small kernel, few positions)
        (nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), (5, 3, 9, 9)),
        (nn.Conv2d(3, 32, 5, padding=2), (3, 3, 2, 2)),  # Gram (ghost) branch: 4 positions, big kernel
        (nn.Conv2d(16, 32, 5, padding=2), (3, 16, 3, 3)),  # grouped native kernel (>= 4 input channels)
        (nn.Conv2d(8, 6, 3, stride=2, padding=2, dilation=2), (4, 8, 9, 9)),  # grouped, strided, dilated
    ],
)
def test_layer_norms_match_vmap(layer, shape):
    torch.manual_seed(0)
    model = nn.Sequential(layer, nn.Flatten()).double()
    x = torch.randn(*shape, dtype=torch.double)
    out_dim = model(x).shape[1]
    y = torch.randint(0, out_dim, (shape[0],))
    ours = per_sample_grad_norms(model, lambda out: F.cross_entropy(out, y, reduction="none"), x)
    assert _rel(ours, _vmap_norms(model, x, y)) < 1e-4


def test_branch_selection():
    from dpcore.training import ghost

    def branch(layer, shape):
        model = nn.Sequential(layer, nn.Flatten())
        clipper = GhostClipper(model)
        with clipper.capture():
            out = model(torch.randn(*shape))
        clipper.norms(out.sum(1))
        rec = clipper.records[0]
        return "grouped" if rec.A is None else ("materialised" if rec.G is not None else "gram")

    assert branch(nn.Conv2d(3, 32, 5, padding=2), (2, 3, 2, 2)) == "gram"
    assert branch(nn.Conv2d(2, 4, 3, padding=1), (2, 2, 6, 6)) == "materialised"
    assert branch(nn.Conv2d(16, 4, 3, padding=1), (2, 16, 6, 6)) == "grouped"
    assert ghost.GROUPED_MIN_CHANNELS == 4


def test_gram_and_materialised_branches_agree():
    from dpcore.training import ghost

    torch.manual_seed(1)
    conv = nn.Conv2d(4, 6, 3, padding=1).double()
    a = torch.randn(3, 4, 5, 5, dtype=torch.double)
    b = torch.randn(3, 6, 5, 5, dtype=torch.double)
    rec = ghost._Record(conv, a=a)
    A, B = ghost._unfold(rec, b)
    gram = ((A @ A.transpose(1, 2)) * (B @ B.transpose(1, 2))).sum((1, 2))
    mat = (B.transpose(1, 2) @ A).pow(2).sum((1, 2))
    assert torch.allclose(gram, mat, rtol=1e-10)


@pytest.mark.parametrize(
    "kind, n_features, image_shape",
    [("linear", 20, None), ("mlp", 20, None), ("cnn", 64, (8, 8)), ("cnn", 784, (28, 28))],
)
def test_full_model_norms_match_vmap(kind, n_features, image_shape):
    torch.manual_seed(2)
    model = build_model(kind, n_features=n_features, n_outputs=10, hidden=16, channels=4,
                        image_shape=image_shape, activation="tanh", seed=3).double()
    x = torch.randn(6, n_features, dtype=torch.double)
    y = torch.randint(0, 10, (6,))
    ours = per_sample_grad_norms(model, lambda out: F.cross_entropy(out, y, reduction="none"), x)
    assert _rel(ours, _vmap_norms(model, x, y)) < 1e-4


def test_clipped_sum_matches_explicit_per_example_clipping():
    torch.manual_seed(4)
    model = build_model("cnn", n_features=64, n_outputs=10, hidden=16, channels=4, image_shape=(8, 8)).double()
    x = torch.randn(9, 64, dtype=torch.double)
    y = torch.randint(0, 10, (9,))
    g = _vmap_grads(model, x, y)
    norms = torch.sqrt(sum(v.flatten(1).pow(2).sum(1) for v in g.values()))
    c = clip_factors(norms, 0.5)
    assert (c < 1).any()  # the bound really bites
    clipper = GhostClipper(model)
    with clipper.capture():
        out = model(x)
    sums = [torch.zeros_like(p) for p in model.parameters()]
    clipper.accumulate_clipped_sum(clip_factors(clipper.norms(F.cross_entropy(out, y, reduction="none")), 0.5), sums)
    for (name, _p), s in zip(model.named_parameters(), sums):
        ref = torch.tensordot(c, g[name], dims=1)
        assert torch.allclose(s, ref, rtol=1e-8, atol=1e-10), name


class _SequenceHead(nn.Module):
    """A Linear layer applied to every position of a sequence, then a mean: the 3-D Linear branch."""

    def __init__(self, bias: bool) -> None:
        super().__init__()
        self.proj = nn.Linear(6, 3, bias=bias)

    def forward(self, x):
        return self.proj(x.reshape(x.shape[0], 4, 6)).mean(1)


@pytest.mark.parametrize(
    "first, shape",
    [
        (nn.Conv2d(1, 4, 3, padding=1), (6, 1, 6, 6)),  # materialised branch, with a bias
        (nn.Conv2d(2, 4, 3, padding=1, bias=False), (6, 2, 6, 6)),
        (nn.Conv2d(3, 32, 5, padding=2), (6, 3, 2, 2)),  # Gram (ghost) branch
        (nn.Conv2d(16, 4, 3, padding=1), (6, 16, 5, 5)),  # grouped native kernel
        (nn.Conv2d(8, 4, 3, stride=2, padding=2, dilation=2, bias=False), (6, 8, 9, 9)),
        (_SequenceHead(bias=True), (6, 24)),
        (_SequenceHead(bias=False), (6, 24)),
        # padding given as text, as a user's module may: odd kernels pad evenly, even ones one more after
        (nn.Conv2d(1, 4, 3, padding="same"), (6, 1, 6, 6)),
        (nn.Conv2d(2, 4, (2, 4), padding="same", dilation=(1, 1), bias=False), (6, 2, 6, 7)),
        (nn.Conv2d(16, 4, (2, 3), padding="same", dilation=(1, 2)), (6, 16, 6, 6)),
        (nn.Conv2d(3, 32, 2, padding="same"), (6, 3, 2, 2)),
        (nn.Conv2d(16, 4, 3, padding="valid"), (6, 16, 5, 5)),
    ],
    ids=["materialised", "materialised-no-bias", "gram", "grouped", "grouped-dilated-no-bias", "sequence",
         "sequence-no-bias", "same-materialised", "same-even-kernel", "same-grouped-dilated", "same-gram",
         "valid-grouped"],
)
def test_every_layer_branch_gives_the_explicitly_clipped_sum(first, shape):
    """Norms and clipped sum of each kind of layer (its bias gradients computed once for both) against torch.func
    per-example gradients clipped one by one."""
    torch.manual_seed(6)
    model = nn.Sequential(first, nn.Tanh(), nn.Flatten(), nn.LazyLinear(5)).double()
    x = 3.0 * torch.randn(*shape, dtype=torch.double)
    model(x)  # sizes the lazy layer
    y = torch.randint(0, 5, (shape[0],))
    g = _vmap_grads(model, x, y)
    norms = torch.sqrt(sum(v.flatten(1).pow(2).sum(1) for v in g.values()))
    c = clip_factors(norms, 0.05)
    assert (c < 1).any()  # the bound bites
    clipper = GhostClipper(model)
    losses, ours = clipper.loss_and_norms(x, y, task="classification")
    assert _rel(ours, norms) < 1e-10
    sums = [torch.zeros_like(p) for p in model.parameters()]
    clipper.accumulate_clipped_sum(clip_factors(ours, 0.05), sums)
    for (name, _p), s in zip(model.named_parameters(), sums):
        assert torch.allclose(s, torch.tensordot(c, g[name], dims=1), rtol=1e-9, atol=1e-12), name
    assert all(r.a is None and r.Gb is None for r in clipper.records)  # nothing of the batch is kept


@pytest.mark.parametrize("kind, n_features, image_shape", [("mlp", 30, None), ("cnn", 64, (8, 8))])
def test_clipped_sum_equals_opacus(kind, n_features, image_shape):
    """With the noise off, one step's clipped gradient sum equals Opacus's on the same batch."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    torch.manual_seed(5)
    model = build_model(kind, n_features=n_features, n_outputs=10, hidden=32, channels=4, image_shape=image_shape)
    x = torch.randn(32, n_features)
    y = torch.randint(0, 10, (32,))
    C = 0.3

    ref = GradSampleModule(copy.deepcopy(model))
    opt = DPOptimizer(torch.optim.SGD(ref.parameters(), lr=0.1), noise_multiplier=0.0, max_grad_norm=C,
                      expected_batch_size=32, loss_reduction="sum")
    F.cross_entropy(ref(x), y, reduction="sum").backward()
    opt.clip_and_accumulate()
    opacus_sum = [p.summed_grad.clone() for p in ref.parameters()]

    clipper = GhostClipper(model)
    losses, norms = clipper.loss_and_norms(x, y, task="classification")
    sums = [torch.zeros_like(p) for p in model.parameters()]
    clipper.accumulate_clipped_sum(clip_factors(norms, C), sums)
    for ours, theirs in zip(sums, opacus_sum):
        assert torch.allclose(ours, theirs, rtol=1e-4, atol=1e-6)


def test_unsupported_parameterised_layer_is_rejected():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    with pytest.raises(DPValueError, match="BatchNorm1d"):
        GhostClipper(model)


def test_norms_need_capture():
    model = nn.Sequential(nn.Linear(3, 2))
    clipper = GhostClipper(model)
    with pytest.raises(RuntimeError, match="capture"):
        clipper.norms(torch.zeros(4))


class _TripleInPlace(nn.Module):
    """An in-place op after a trained layer (as Dropout(inplace=True) scales the kept units by 1 / (1 - p)): the
    layer's gradient is three times the gradient of what the op leaves in the tensor."""

    def forward(self, x):
        return x.mul_(3.0)


@pytest.mark.parametrize("after", [_TripleInPlace(), nn.ReLU(inplace=True)])
def test_norms_are_of_the_layers_own_output_when_an_in_place_op_follows_it(after):
    """The gradient is asked of where each layer's output enters the graph, not of the tensor an in-place op later
    rewrote: of the rewritten one, the norms came out a third of the truth after an in-place tripling (each example
    then kept up to 3C after clipping), and inflated after an in-place ReLU."""
    torch.manual_seed(7)
    model = nn.Sequential(nn.Linear(5, 6), after, nn.Tanh(), nn.Linear(6, 3)).double()
    x, y = torch.randn(8, 5, dtype=torch.double), torch.randint(0, 3, (8,))
    clipper = GhostClipper(model)
    _, norms = clipper.loss_and_norms(x, y, task="classification")
    reference = []
    for i in range(8):  # each example's gradient by plain autograd
        model.zero_grad()
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        reference.append(torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters())))
    assert torch.allclose(norms, torch.stack(reference), rtol=1e-10)


def test_norms_refuse_a_forward_pass_without_gradients():
    model = nn.Sequential(nn.Linear(3, 2))
    clipper = GhostClipper(model)
    with torch.no_grad(), pytest.raises(DPValueError, match="without gradients"):
        clipper.loss_and_norms(torch.zeros(4, 3), torch.zeros(4, dtype=torch.long), task="classification")


def test_accumulate_clipped_sum_adds_to_what_the_buffer_holds():
    torch.manual_seed(6)
    model = build_model("cnn", n_features=64, n_outputs=10, hidden=8, channels=4, image_shape=(8, 8)).double()
    x, y = torch.randn(5, 64, dtype=torch.double), torch.randint(0, 10, (5,))
    sums = []
    for start in (0.0, 0.25):
        clipper = GhostClipper(model)
        _, norms = clipper.loss_and_norms(x, y, task="classification")
        buf = [torch.full_like(p, start) for p in model.parameters()]
        clipper.accumulate_clipped_sum(clip_factors(norms, 0.5), buf)
        sums.append(buf)
        clipper.remove()
    for fresh, acc in zip(*sums):
        assert torch.allclose(acc, fresh + 0.25, rtol=1e-12, atol=1e-12)


def test_frozen_parameter_is_rejected_with_a_clear_message():
    model = build_model("cnn", n_features=64, n_outputs=3, hidden=8, channels=4, image_shape=(8, 8))
    next(model.parameters()).requires_grad_(False)
    with pytest.raises(DPValueError, match=r"layer '1' \(Conv2d\) has its weight frozen and its bias trained"):
        GhostClipper(model)


@pytest.mark.parametrize(
    "shape, kernel, dilation, padding, stride",
    [((3, 1, 8, 8), (3, 3), (1, 1), (1, 1), (1, 1)), ((2, 4, 9, 7), (3, 2), (2, 1), (2, 0), (2, 3)),
     ((2, 3, 5, 5), (5, 5), (1, 1), (0, 0), (1, 1)), ((1, 2, 6, 6), (1, 1), (1, 1), (0, 0), (2, 2))],
)
def test_im2col_equals_unfold(shape, kernel, dilation, padding, stride):
    from dpcore.training import ghost

    a = torch.randn(*shape)
    ref = F.unfold(a, kernel, dilation=dilation, padding=padding, stride=stride)
    assert torch.equal(ghost._im2col(a, kernel, dilation, padding, stride), ref)
