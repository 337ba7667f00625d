"""The autograd-free fast path (DenseStackClipper) against the hook path (GhostClipper) and torch.func vmap.

It must compute the same thing: per-example norms, clipped sums and whole noisy steps
(same torch.Generator seed) agree within 1e-5 relative, for linear and MLP models, every
activation, classification (hard and soft labels) and regression, with and without bias.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap

from dpcore.exceptions import DPValueError
from dpcore.training import ACTIVATIONS, GhostClipper, TrainConfig, build_model, clip_factors, train
from dpcore.training import engine as engine_mod
from dpcore.training.ghost import DenseStackClipper, make_clipper
from dpcore.training.losses import per_example_loss
from dpcore.training.step import private_gradient

TOL = 1e-5


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max() / b.abs().max())


def _loss_one(task: str):
    def f(model, params, xi, yi):
        out = functional_call(model, params, (xi[None],))
        if task == "classification":
            return F.cross_entropy(out, yi[None])
        return (out - yi[None]).pow(2).sum()
    return f


def _vmap_grads(model: nn.Module, x, y, task) -> list[torch.Tensor]:
    """Per-example gradients of every parameter (in parameters() order) by torch.func."""
    names = [k for k, _ in model.named_parameters()]
    params = {k: v.detach() for k, v in model.named_parameters()}
    loss = _loss_one(task)
    g = vmap(grad(lambda p, xi, yi: loss(model, p, xi, yi)), in_dims=(None, 0, 0))(params, x, y)
    return [g[k] for k in names]


def _model(kind: str, activation: str, bias: bool, k: int, d: int = 12, seed: int = 0) -> nn.Sequential:
    m = build_model(kind, n_features=d, n_outputs=k, hidden=9, depth=2, activation=activation, seed=seed).double()
    if not bias:  # the same stack without biases
        layers = []
        for layer in m:
            if isinstance(layer, nn.Linear):
                new = nn.Linear(layer.in_features, layer.out_features, bias=False).double()
                with torch.no_grad():
                    new.weight.copy_(layer.weight)
                layers.append(new)
            else:
                layers.append(layer)
        m = nn.Sequential(*layers)
    return m


def _batch(task: str, k: int, n: int = 17, d: int = 12, seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    x = 2.0 * torch.randn(n, d, generator=g, dtype=torch.double)
    if task == "classification":
        y = torch.randint(0, k, (n,), generator=g)
    else:
        y = torch.randn(n, k, generator=g, dtype=torch.double)
    return x, y


CASES = [("linear", "tanh")] + [("mlp", a) for a in sorted(ACTIVATIONS)]


@pytest.mark.parametrize("kind, activation", CASES)
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("bias", [True, False])
def test_norms_and_clipped_sum_match_hooks_and_vmap(kind, activation, task, bias):
    k = 5 if task == "classification" else 2
    model = _model(kind, activation, bias, k)
    x, y = _batch(task, k)
    ref = _vmap_grads(model, x, y, task)
    ref_norms = torch.sqrt(sum(v.flatten(1).pow(2).sum(1) for v in ref))

    fast = DenseStackClipper(model)
    losses, norms = fast.loss_and_norms(x, y, task=task)
    assert _rel(norms, ref_norms) < TOL
    hook_model = copy.deepcopy(model)
    hook = GhostClipper(hook_model)
    with hook.capture():
        out = hook_model(x)
    hook_losses = per_example_loss(out, y, task)
    hook_norms = hook.norms(hook_losses)
    assert _rel(norms, hook_norms) < TOL
    assert _rel(losses, hook_losses.detach()) < TOL

    c = clip_factors(ref_norms, float(ref_norms.median()))
    assert (c < 1).any() and (c == 1).any()  # some examples clipped, some not
    sums = [torch.zeros_like(p) for p in model.parameters()]
    fast.accumulate_clipped_sum(c, sums)
    hook_sums = [torch.zeros_like(p) for p in model.parameters()]
    hook.accumulate_clipped_sum(c, hook_sums)
    for s, g, h in zip(sums, ref, hook_sums):
        expected = torch.tensordot(c, g, dims=1)
        assert _rel(s, expected) < TOL
        assert _rel(s, h) < TOL


@pytest.mark.parametrize("kind, activation", CASES)
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_full_noisy_step_equals_hook_path_same_seed(kind, activation, task, dtype):
    k = 4 if task == "classification" else 1
    model = build_model(kind, n_features=30, n_outputs=k, hidden=24, activation=activation, seed=2).to(dtype)
    x, y = _batch(task, k, n=40, d=30, seed=3)
    x = x.to(dtype)
    if task == "regression":
        y = y.to(dtype)
    grads, losses = [], []
    for clipper_cls in (DenseStackClipper, GhostClipper):
        m = copy.deepcopy(model)
        gen = torch.Generator().manual_seed(11)
        losses.append(private_gradient(m, clipper_cls(m), x, y, task=task, clip_norm=0.1, noise_std=0.1 * 1.3,
                                       expected_batch_size=37.0, generator=gen))
        grads.append([p.grad.clone() for p in m.parameters()])
    assert abs(losses[0] - losses[1]) <= TOL * abs(losses[1])
    for a, b in zip(*grads):
        assert a.dtype == dtype
        assert _rel(a, b) < TOL


def test_soft_label_classification_matches_vmap():
    model = _model("mlp", "tanh", True, 3)
    x, _ = _batch("classification", 3)
    g = torch.Generator().manual_seed(5)
    y = torch.softmax(torch.randn(x.shape[0], 3, generator=g, dtype=torch.double), 1)
    names = [k for k, _ in model.named_parameters()]
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        return F.cross_entropy(functional_call(model, p, (xi[None],)), yi[None])

    ref = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    ref_norms = torch.sqrt(sum(ref[k].flatten(1).pow(2).sum(1) for k in names))
    losses, norms = DenseStackClipper(model).loss_and_norms(x, y, task="classification")
    assert _rel(norms, ref_norms) < TOL
    assert _rel(losses, F.cross_entropy(model(x), y, reduction="none").detach()) < TOL


def test_unusual_stacks_match_hooks_and_leave_input_alone():
    """Activation first, two activations in a row, a trailing activation: in-place tricks must not leak."""
    torch.manual_seed(3)
    model = nn.Sequential(nn.Tanh(), nn.Linear(6, 8), nn.ReLU(), nn.Sigmoid(), nn.Linear(8, 4), nn.ELU(alpha=0.5),
                          nn.Linear(4, 3), nn.Tanh()).double()
    x, y = _batch("classification", 3, d=6)
    x_before = x.clone()
    assert DenseStackClipper.supports(model)
    _, fast_norms = DenseStackClipper(model).loss_and_norms(x, y, task="classification")
    assert torch.equal(x, x_before)
    ref = _vmap_grads(model, x, y, "classification")
    assert _rel(fast_norms, torch.sqrt(sum(v.flatten(1).pow(2).sum(1) for v in ref))) < TOL


def test_empty_batch_is_pure_noise_like_hook_path():
    model = build_model("mlp", n_features=5, n_outputs=3, hidden=7, seed=0)
    out = []
    for clipper_cls in (DenseStackClipper, GhostClipper):
        m = copy.deepcopy(model)
        loss = private_gradient(m, clipper_cls(m), torch.zeros(0, 5), torch.zeros(0, dtype=torch.long),
                                task="classification", clip_norm=1.0, noise_std=2.0, expected_batch_size=4.0,
                                generator=torch.Generator().manual_seed(1))
        assert loss == 0.0
        out.append(torch.cat([p.grad.flatten() for p in m.parameters()]))
    assert torch.equal(out[0], out[1]) and out[0].abs().sum() > 0


def test_fast_path_noise_std_is_sigma_times_clip():
    """Independent of the hook path: (noisy - clean) coordinates have std sigma*C/L."""
    model = build_model("mlp", n_features=20, n_outputs=4, hidden=50, seed=1)
    clipper = DenseStackClipper(model)
    x, y = torch.randn(16, 20), torch.randint(0, 4, (16,))
    sigma, C, L = 1.7, 0.4, 20.0
    kw = dict(task="classification", clip_norm=C, expected_batch_size=L, generator=torch.Generator().manual_seed(2))
    private_gradient(model, clipper, x, y, noise_std=0.0, **kw)
    clean = torch.cat([p.grad.flatten() for p in model.parameters()])
    assert float(clean.norm()) * L <= 16 * C * (1 + 1e-5)  # a sum of 16 clipped gradients, each of norm <= C
    private_gradient(model, clipper, x, y, noise_std=sigma * C, **kw)
    noisy = torch.cat([p.grad.flatten() for p in model.parameters()])
    diff = ((noisy - clean) * L).double().numpy()
    n = diff.size  # 1254 coordinates: relative standard error of the std ~ 1/sqrt(2n) = 2%
    assert abs(diff.std() / (sigma * C) - 1) < 5 / np.sqrt(2 * n)
    assert abs(diff.mean()) < 5 * sigma * C / np.sqrt(n)


def test_supports_and_make_clipper():
    for kind in ("linear", "mlp"):
        for act in ACTIVATIONS:
            m = build_model(kind, n_features=8, n_outputs=3, hidden=4, activation=act)
            assert isinstance(make_clipper(m), DenseStackClipper)
            assert isinstance(make_clipper(m, fast=False), GhostClipper)
    cnn = build_model("cnn", n_features=64, n_outputs=3, image_shape=(8, 8), channels=2, hidden=4)
    assert isinstance(make_clipper(cnn), GhostClipper)
    with pytest.raises(DPValueError, match="make_clipper"):
        DenseStackClipper(cnn)
    for other in (nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.1), nn.Linear(4, 2)),
                  nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(), nn.Linear(4, 2)),
                  nn.Sequential(nn.Tanh()),
                  nn.Linear(3, 2)):
        assert not DenseStackClipper.supports(other)
    frozen = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    frozen[0].weight.requires_grad_(False)
    assert not DenseStackClipper.supports(frozen)


@pytest.mark.parametrize("clipper_cls", [DenseStackClipper, GhostClipper])
def test_clipped_sum_needs_loss_and_norms_first(clipper_cls):
    model = nn.Sequential(nn.Linear(3, 2))
    clipper = clipper_cls(model)
    with pytest.raises(RuntimeError, match="loss_and_norms"):
        clipper.accumulate_clipped_sum(torch.ones(4), [torch.zeros_like(p) for p in model.parameters()])


def _train_data(task: str, n: int = 150, d: int = 8):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, d)).astype(np.float32)
    y = (X[:, 0] - X[:, 1] > 0).astype(int) if task == "classification" else (X[:, :2].sum(1)).astype(np.float32)
    return X, y


@pytest.mark.parametrize("kind, task", [("mlp", "classification"), ("linear", "regression")])
def test_whole_training_run_fast_equals_hooks_and_is_deterministic(kind, task, monkeypatch):
    X, y = _train_data(task)
    cfg = TrainConfig(model=kind, hidden=16, epochs=3, batch_size=30, learning_rate=0.5, noise_multiplier=1.0,
                      clip_norm=0.5, task=task, seed=4)
    kw = dict(n_outputs=2) if task == "classification" else {}
    used = []
    monkeypatch.setattr(engine_mod, "make_clipper", lambda model: used.append(make_clipper(model)) or used[-1])
    a = train(X, y, cfg, **kw)
    assert len(used) == 1 and isinstance(used[0], DenseStackClipper)  # train() takes the fast path
    b = train(X, y, cfg, **kw)
    for key in a.state:
        assert np.array_equal(a.state[key], b.state[key])  # same seed, same result (bitwise)
    assert a.history.equals(b.history)
    monkeypatch.setattr(engine_mod, "make_clipper", lambda model: GhostClipper(model))
    h = train(X, y, cfg, **kw)
    assert h.steps == a.steps and h.epsilon == a.epsilon
    for key in a.state:
        assert _rel(torch.as_tensor(a.state[key]), torch.as_tensor(h.state[key])) < 1e-4, key


@pytest.mark.parametrize("model", [build_model("mlp", n_features=12, n_outputs=3, hidden=9, seed=0),
                                   nn.Sequential(nn.Tanh(), nn.Linear(12, 3))])
def test_precomputed_input_norms_give_the_same_norms(model):
    """train() passes the rows' squared norms computed once per run; a stack that starts with an
    activation (whose first Linear does not see x) must ignore them."""
    x, y = _batch("classification", 3, d=12)
    x, model = x.float(), model.float()
    clipper = DenseStackClipper(model)
    _, plain = clipper.loss_and_norms(x, y, task="classification")
    x_sq = torch.linalg.vector_norm(x, dim=1).square_()
    _, given = clipper.loss_and_norms(x, y, task="classification", x_sq_norms=x_sq)
    assert torch.equal(plain, given)
    _, wrong = clipper.loss_and_norms(x, y, task="classification", x_sq_norms=4 * x_sq)
    assert torch.equal(plain, wrong) == isinstance(model[0], nn.Tanh)  # used exactly when x feeds a Linear
