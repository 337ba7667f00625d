"""The DP-SGD step's audit hooks: fixed extra clipped gradients and the noisy-sum observer.

An auditor of the kind of Steinke, Nasr & Jagielski (2023) adds canary records
whose clipped gradient is a fixed vector and reads each step's noisy summed
gradient. These tests check the two hooks it needs, not an audit.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from dpcore.exceptions import DPCoreWarning, DPValueError
from dpcore.training import ExtraGradients, PrivateGradient, TrainConfig, build_model, make_clipper, train


def _step(model, *, sigma=1.3, C=0.5, L=12.0, seed=0, **kw):
    return PrivateGradient(model, make_clipper(model), task="classification", clip_norm=C, noise_multiplier=sigma,
                           expected_batch_size=L, generator=torch.Generator().manual_seed(seed), **kw)


def _batch(d=6, n=10, k=3, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=torch.double), torch.randint(0, k, (n,), generator=g)


@pytest.mark.parametrize("sparse", [True, False])
def test_extra_gradients_show_up_exactly_in_the_observed_sum(sparse):
    model = build_model("mlp", n_features=6, n_outputs=3, hidden=5, seed=0).double()
    P = sum(p.numel() for p in model.parameters())
    g = torch.Generator().manual_seed(2)
    dense = torch.randn(4, P, generator=g, dtype=torch.double)
    dense = 0.5 * dense / dense.norm(dim=1, keepdim=True)  # norm exactly C
    extra = ExtraGradients(dense.to_sparse() if sparse else dense)
    x, y = _batch()
    seen = {}
    for name, chosen in (("without", None), ("with", [0, 2, 3])):
        m = copy.deepcopy(model)
        step = _step(m, extra=extra, on_step=lambda i, s, name=name: seen.setdefault(name, (i, s)))
        step(x, y, extra_index=chosen)
        seen[name + " grad"] = torch.cat([p.grad.flatten() for p in m.parameters()])
    assert seen["with"][0] == seen["without"][0] == 0
    added = dense[[0, 2, 3]].sum(0)
    assert torch.allclose(seen["with"][1] - seen["without"][1], added, rtol=0, atol=1e-12)
    # and p.grad is that noisy sum divided by the expected batch size
    assert torch.allclose(seen["with grad"] * 12.0, seen["with"][1], rtol=1e-13, atol=1e-15)


def test_observed_sum_is_the_clipped_sum_plus_noise_of_std_sigma_c():
    model = build_model("linear", n_features=30, n_outputs=10, seed=0).double()
    x, y = _batch(d=30, n=20, k=10)
    sums = []
    for sigma in (0.0, 2.0):
        step = _step(copy.deepcopy(model), sigma=sigma, C=0.5, on_step=lambda i, s: sums.append(s))
        step(x, y)
    clean, noisy = sums
    assert clean.norm() <= 20 * 0.5 * (1 + 1e-9)  # a sum of 20 clipped gradients
    noise = (noisy - clean).numpy()  # 310 coordinates of N(0, (sigma C)^2)
    assert abs(noise.std() / 1.0 - 1) < 5 / math.sqrt(2 * noise.size)


def test_observer_numbers_the_steps_and_an_empty_batch_still_adds_the_sampled_extras():
    model = build_model("linear", n_features=6, n_outputs=3, seed=0).double()
    extra = ExtraGradients.diracs([1, 4], value=0.5, size=21)
    seen = []
    step = _step(model, sigma=0.0, extra=extra, on_step=lambda i, s: seen.append((i, s.clone())))
    empty_x, empty_y = torch.zeros(0, 6, dtype=torch.double), torch.zeros(0, dtype=torch.long)
    assert step(empty_x, empty_y, extra_index=np.array([1])) == 0.0
    step(empty_x, empty_y)
    assert [i for i, _ in seen] == [0, 1]
    expected = torch.zeros(21, dtype=torch.double)
    expected[4] = 0.5
    assert torch.equal(seen[0][1], expected) and torch.equal(seen[1][1], torch.zeros(21, dtype=torch.double))


@pytest.mark.parametrize(
    "extra, match",
    [
        (ExtraGradients.diracs([0], value=0.6, size=21), "norm 0.6 > clip_norm=0.5"),
        (ExtraGradients(torch.ones(2, 20)), "20 entries per record but the model has 21"),
    ],
)
def test_extra_gradients_must_be_clipped_and_match_the_model(extra, match):
    model = build_model("linear", n_features=6, n_outputs=3, seed=0)
    with pytest.raises(DPValueError, match=match):
        _step(model, extra=extra)


def test_extra_gradients_reject_bad_input():
    with pytest.raises(DPValueError, match="2-D"):
        ExtraGradients(torch.ones(3))
    with pytest.raises(DPValueError, match="finite"):
        ExtraGradients(torch.tensor([[float("nan"), 0.0]]))
    with pytest.raises(DPValueError, match="coordinates must be in"):
        ExtraGradients.diracs([5], value=1.0, size=5)


def _zero_column_data(n=120, d=6, seed=0):
    """Features whose last column is all zero: no record has a gradient in that column's weights."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, -1] = 0.0
    return X, (X[:, 0] > 0).astype(int)


def test_canaries_in_a_coordinate_no_record_uses_are_counted_exactly_by_the_observer():
    """Dirac canaries of norm C in W[0, last column]: with sigma = 0 that coordinate of every observed
    sum is C times the number of canaries Poisson-sampled at that step, a Binomial(m, q) count."""
    X, y = _zero_column_data()
    m, C, d = 30, 0.5, X.shape[1]
    extra = ExtraGradients.diracs([d - 1] * m, value=C, size=2 * d + 2)  # weight[0, d-1] in parameters() order
    seen = []
    cfg = TrainConfig(model="linear", epochs=6, batch_size=30, noise_multiplier=0.0, clip_norm=C, seed=1)
    with pytest.warns(DPCoreWarning, match="noise_multiplier=0"):
        res = train(X, y, cfg, n_outputs=2, extra_gradients=extra,
                    on_step=lambda i, s: seen.append((i, float(s[d - 1]))))
    q = 30 / (120 + m)
    assert res.sample_rate == pytest.approx(q)
    assert [i for i, _ in seen] == list(range(res.steps))
    counts = np.array([v for _, v in seen]) / C
    # whole canaries, nothing from the real records (up to float32 rounding of the 1/L folded into the step)
    assert np.abs(counts - np.round(counts)).max() < 1e-5
    # mean of res.steps Binomial(m, q) counts
    sd = math.sqrt(m * q * (1 - q) / res.steps)
    assert abs(counts.mean() - m * q) < 5 * sd


def test_observer_changes_nothing_and_canaries_change_the_run():
    X, y = _zero_column_data()
    cfg = TrainConfig(model="mlp", hidden=8, epochs=2, batch_size=30, noise_multiplier=1.0, seed=2)
    plain = train(X, y, cfg, n_outputs=2)
    observed = train(X, y, cfg, n_outputs=2, on_step=lambda i, s: None)
    assert all(np.array_equal(plain.state[k], observed.state[k]) for k in plain.state)
    assert plain.history.equals(observed.history)
    P = sum(v.size for v in plain.state.values())
    with_canaries = train(X, y, cfg, n_outputs=2, extra_gradients=ExtraGradients.diracs([0, 1], value=0.1, size=P))
    assert with_canaries.sample_rate == pytest.approx(30 / 122) and with_canaries.epsilon > 0
    for hook in (dict(extra_gradients=ExtraGradients.diracs([0], value=0.1, size=P)),
                 dict(on_step=lambda i, s: None)):
        with pytest.raises(DPValueError, match=f"{next(iter(hook))} needs a private run"):
            train(X, y, cfg.replace(private=False, noise_multiplier=None), n_outputs=2, **hook)


def test_a_record_whose_gradient_overflows_is_left_out_of_the_noisy_sum_never_makes_it_nan():
    # weights of 1e306: the third record's logits overflow, its per-example gradient is nan, and its clip factor
    # C / (nan + 1e-6) (or 0 * inf) made the whole noisy sum nan: with the record the step released nan with
    # certainty, without it a finite gradient, a difference no epsilon covers. The record now adds nothing (as a
    # zero gradient would: a function of that record alone, within the clip norm), so the step is the one without it
    model = build_model("linear", n_features=3, n_outputs=2, seed=0).double()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1e306)
    x = torch.tensor([[1e-3, 0.0, 0.0], [0.0, 1e-3, 0.0], [1e4, 1e4, 1e4]], dtype=torch.double)
    y = torch.tensor([0, 1, 0])
    grads = {}
    for rows in ([0, 1, 2], [0, 1]):
        m = copy.deepcopy(model)
        _step(m, sigma=1.0, C=1.0, L=3.0, seed=0)(x[rows], y[rows])
        grads[len(rows)] = torch.cat([p.grad.flatten() for p in m.parameters()])
    assert torch.isfinite(grads[2]).all()
    assert torch.equal(grads[3], grads[2])
