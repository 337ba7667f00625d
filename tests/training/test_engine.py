"""The DP-SGD trainer: noise scale, accounting against dp_accounting, modes, determinism, errors."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
import torch

from dpcore.exceptions import DPCoreWarning, DPTypeError, DPValueError
from dpcore.training import GhostClipper, TrainConfig, build_model, train
from dpcore.training.step import private_gradient


def _data(n=200, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


def _reference_epsilon(q, sigma, steps, delta, accountant):
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    acc = dp_accounting.rdp.RdpAccountant() if accountant == "rdp" else dp_accounting.pld.PLDAccountant()
    acc.compose(event)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("sigma, C", [(2.0, 0.5), (0.7, 3.0)])
def test_noise_std_is_sigma_times_clip(sigma, C):
    """Empirical std of (noisy - clipped) gradient coordinates equals sigma*C / expected batch size."""
    torch.manual_seed(0)
    model = build_model("mlp", n_features=10, n_outputs=3, hidden=40, seed=1)
    clipper = GhostClipper(model)
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    gen = torch.Generator().manual_seed(7)
    kw = dict(task="classification", clip_norm=C, expected_batch_size=20.0)
    private_gradient(model, clipper, x, y, noise_std=0.0, generator=gen, **kw)
    clean = torch.cat([p.grad.flatten() for p in model.parameters()])
    private_gradient(model, clipper, x, y, noise_std=sigma * C, generator=gen, **kw)
    noisy = torch.cat([p.grad.flatten() for p in model.parameters()])
    diff = (noisy - clean).numpy() * 20.0
    n = diff.size  # 563 coordinates
    expected = sigma * C
    # sample std of n normals: relative standard error ~ 1/sqrt(2n) = 3%; allow 5 standard errors
    assert abs(diff.std() / expected - 1) < 5 / math.sqrt(2 * n)
    assert abs(diff.mean()) < 5 * expected / math.sqrt(n)


def test_clean_gradient_norm_is_bounded_by_clip():
    model = build_model("mlp", n_features=10, n_outputs=3, hidden=20, seed=1)
    clipper = GhostClipper(model)
    x, y = torch.randn(1, 10) * 50, torch.tensor([2])
    private_gradient(model, clipper, x, y, task="classification", clip_norm=0.25, noise_std=0.0,
                     expected_batch_size=1.0, generator=torch.Generator())
    norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
    assert norm <= 0.25 * (1 + 1e-5)


def test_empty_batch_gives_pure_noise_and_training_survives():
    model = build_model("linear", n_features=4, n_outputs=2, seed=0)
    clipper = GhostClipper(model)
    gen = torch.Generator().manual_seed(0)
    loss = private_gradient(model, clipper, torch.zeros(0, 4), torch.zeros(0, dtype=torch.long),
                            task="classification", clip_norm=1.0, noise_std=2.0, expected_batch_size=1.0,
                            generator=gen)
    assert loss == 0.0
    g = torch.cat([p.grad.flatten() for p in model.parameters()])
    assert g.abs().sum() > 0
    # a sample rate so small that most Poisson batches are empty
    X, y = _data(n=40)
    res = train(X, y, TrainConfig(model="linear", epochs=1, batch_size=1, noise_multiplier=1.0, seed=3),
                n_outputs=2)
    assert res.steps == 40 and np.all(np.isfinite(res.history["loss"]))


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_reported_epsilon_equals_dp_accounting(accountant):
    X, y = _data(n=100)
    cfg = TrainConfig(model="linear", epochs=3, batch_size=10, noise_multiplier=1.1, accountant=accountant, seed=0)
    res = train(X, y, cfg, n_outputs=2)
    assert res.steps == 30 and res.sample_rate == pytest.approx(0.1)
    for _, row in res.history.iterrows():
        ref = _reference_epsilon(0.1, 1.1, int(row["step"]), 1e-5, accountant)
        assert row["epsilon"] == pytest.approx(ref, rel=1e-3 if accountant == "pld" else 1e-6)
    assert res.epsilon == res.history["epsilon"].iloc[-1]
    assert res.history["epsilon"].is_monotonic_increasing


def test_known_value_sigma_1_5():
    """sigma=1.5, q=0.04, 2250 steps, delta=1e-5: RDP ~7.33 (STYLE.md golden value)."""
    assert _reference_epsilon(0.04, 1.5, 2250, 1e-5, "rdp") == pytest.approx(7.33, abs=0.02)


@pytest.mark.parametrize("target", [0.5, 2.0])
def test_target_mode_never_exceeds_target(target):
    X, y = _data(n=120)
    res = train(X, y, TrainConfig(model="linear", epochs=4, batch_size=30, target_epsilon=target, seed=0),
                n_outputs=2)
    assert res.epsilon <= target
    assert res.epsilon > 0.9 * target  # calibration is tight, not wildly conservative
    assert (res.history["epsilon"] <= target).all()


def test_max_epsilon_budget_stops_training():
    X, y = _data(n=100)
    cfg = TrainConfig(model="linear", epochs=10, batch_size=20, noise_multiplier=1.0, max_epsilon=3.0, seed=0)
    with pytest.warns(DPCoreWarning, match="max_epsilon"):
        res = train(X, y, cfg, n_outputs=2)
    assert res.stopped_early and len(res.history) < 10
    assert res.epsilon <= 3.0
    full = _reference_epsilon(0.2, 1.0, res.steps + 5, 1e-5, "rdp")
    assert full > 3.0  # one more epoch would have gone over


def test_same_seed_same_result_and_different_seed_differs():
    X, y = _data()
    cfg = TrainConfig(model="mlp", hidden=8, epochs=2, batch_size=40, noise_multiplier=1.0, seed=5)
    a, b = train(X, y, cfg, n_outputs=2), train(X, y, cfg, n_outputs=2)
    for k in a.state:
        np.testing.assert_array_equal(a.state[k], b.state[k])
    c = train(X, y, cfg.replace(seed=6), n_outputs=2)
    assert any(not np.array_equal(a.state[k], c.state[k]) for k in a.state)


def test_on_epoch_called_every_epoch():
    X, y = _data()
    seen = []
    train(X, y, TrainConfig(model="linear", epochs=3, batch_size=50, noise_multiplier=1.0), n_outputs=2,
          on_epoch=seen.append)
    assert [s["epoch"] for s in seen] == [1, 2, 3]
    assert {"loss", "accuracy", "epsilon", "epochs"} <= set(seen[0])


def test_learns_with_moderate_noise_and_nonprivate_baseline():
    X, y = _data(n=400)
    priv = train(X, y, TrainConfig(model="linear", epochs=5, batch_size=100, noise_multiplier=0.8,
                                   learning_rate=1.0), n_outputs=2)
    base = train(X, y, TrainConfig(model="linear", epochs=5, batch_size=50, private=False, learning_rate=0.5),
                 n_outputs=2)
    assert priv.history["accuracy"].iloc[-1] > 0.85
    assert base.history["accuracy"].iloc[-1] > 0.9 and math.isinf(base.epsilon)


def test_shuffle_sampling_warns_about_accounting():
    X, y = _data(n=100)
    with pytest.warns(DPCoreWarning, match="Poisson"):
        res = train(X, y, TrainConfig(model="linear", epochs=2, batch_size=25, noise_multiplier=1.0,
                                      sampling="shuffle"), n_outputs=2)
    assert res.steps == 8


def test_cnn_on_images_and_regression():
    rng = np.random.default_rng(0)
    X = rng.random((30, 64)).astype(np.float32)
    res = train(X, rng.integers(0, 3, 30), TrainConfig(model="cnn", channels=2, hidden=8, epochs=1, batch_size=10,
                                                       noise_multiplier=1.0), n_outputs=3, image_shape=(8, 8))
    assert res.steps == 3
    yr = X[:, 0] * 2
    reg = train(X, yr, TrainConfig(model="linear", task="regression", epochs=2, batch_size=10,
                                   noise_multiplier=1.0))
    assert "mse" in reg.history and reg.predict(X).shape == (30,)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(noise_multiplier=None), "noise_multiplier .* or target_epsilon"),
        (dict(noise_multiplier=1.0, target_epsilon=1.0), "not both"),
        (dict(noise_multiplier=-1.0), "noise_multiplier"),
        (dict(noise_multiplier=1.0, clip_norm=0.0), "clip_norm must be > 0"),
        (dict(noise_multiplier=1.0, learning_rate=-0.1), "learning_rate"),
        (dict(noise_multiplier=1.0, batch_size=0), "batch_size must be >= 1"),
        (dict(noise_multiplier=1.0, model="resnet"), "model must be one of"),
        (dict(noise_multiplier=1.0, sampling="random"), "sampling must be one of"),
        (dict(noise_multiplier=1.0, accountant="moments"), "accountant must be one of"),
        (dict(target_epsilon=-1.0), "target_epsilon must be > 0"),
        (dict(noise_multiplier=1.0, delta=2.0), "delta"),
        (dict(target_epsilon=1.0, delta=0.0), "delta > 0"),
        (dict(noise_multiplier=1.0, ema=1.0), "ema"),
    ],
)
def test_invalid_knobs_give_clear_errors(kwargs, match):
    with pytest.raises(DPValueError, match=match):
        TrainConfig(**kwargs)


def test_bad_data_errors():
    X, y = _data(n=20)
    cfg = TrainConfig(model="linear", epochs=1, batch_size=50, noise_multiplier=1.0)
    with pytest.raises(DPValueError, match="batch_size=50 is larger"):
        train(X, y, cfg, n_outputs=2)
    with pytest.raises(DPValueError, match="rows"):
        train(X, y[:10], cfg.replace(batch_size=5), n_outputs=2)
    with pytest.raises(DPValueError, match="cnn"):
        train(X, y, cfg.replace(batch_size=5, model="cnn"), n_outputs=2)
    with pytest.raises(DPValueError, match="NaN"):
        train(np.full((20, 6), np.nan), y, cfg.replace(batch_size=5), n_outputs=2)


def test_a_config_that_is_not_a_train_config_is_a_type_error_saying_how_to_make_one():
    # it was a ValueError: a wrong type is a TypeError everywhere else in the library
    X, y = _data(n=20)
    with pytest.raises(DPTypeError, match=r"config must be a TrainConfig, got dict: TrainConfig\(\*\*settings\)"):
        train(X, y, {"epochs": 1, "noise_multiplier": 1.0})


def test_a_train_result_refuses_to_answer_rows_with_missing_values():
    # predict answered a row of NaN with class 0 (the argmax of NaN scores)
    X, y = _data(n=20)
    res = train(X, y, TrainConfig(model="linear", epochs=1, batch_size=5, noise_multiplier=1.0), n_outputs=2)
    rows = X[:4].copy()
    rows[1, 2] = np.nan
    for answer in (res.predict, res.predict_proba, res.predict_output):
        with pytest.raises(DPValueError, match=r"^X has missing or infinite values in column\(s\) 2 \(1 of 4 rows\)"):
            answer(rows)
    assert res.predict(X[:4]).shape == (4,)


@pytest.mark.parametrize("momentum,weight_decay", [(0.0, 0.0), (0.9, 0.0), (0.5, 1e-3)])
def test_plain_sgd_is_bitwise_torch_sgd(momentum, weight_decay):
    """The written-out SGD (no torch.optim import) takes exactly torch.optim.SGD's steps."""
    import torch

    from dpcore.training.optim import PlainSGD

    gen = torch.Generator().manual_seed(0)
    a = [torch.randn(5, 3, generator=gen, requires_grad=True), torch.randn(3, generator=gen, requires_grad=True)]
    b = [t.detach().clone().requires_grad_(True) for t in a]
    ours = PlainSGD(a, lr=0.3, momentum=momentum, weight_decay=weight_decay)
    ref = torch.optim.SGD(b, lr=0.3, momentum=momentum, weight_decay=weight_decay)
    for step in range(5):
        grads = [torch.randn(t.shape, generator=gen) for t in a]
        for opt, ps in ((ours, a), (ref, b)):
            opt.zero_grad(set_to_none=True)
            for p, g in zip(ps, grads):
                p.grad = None if (step == 2 and p.ndim == 1) else g.clone()  # a skipped parameter, as torch does
            opt.step()
        for p, r in zip(a, b):
            assert torch.equal(p, r)


@pytest.mark.parametrize("lr,weight_decay", [(0.01, 0.0), (0.003, 1e-2), (0.5, 0.3)])
def test_plain_adam_is_bitwise_torch_adam_over_many_steps(lr, weight_decay):
    """The written-out Adam (no torch.optim import) takes exactly torch.optim.Adam's single-tensor steps, bit for
    bit over 300 steps, a parameter whose gradient is None being skipped (its step count held back) as torch does."""
    import torch

    from dpcore.training.optim import PlainAdam

    gen = torch.Generator().manual_seed(1)
    a = [torch.randn(7, 4, generator=gen, requires_grad=True), torch.randn(4, generator=gen, requires_grad=True)]
    b = [t.detach().clone().requires_grad_(True) for t in a]
    ours = PlainAdam(a, lr=lr, weight_decay=weight_decay)
    ref = torch.optim.Adam(b, lr=lr, weight_decay=weight_decay, foreach=False)
    for step in range(300):
        grads = [torch.randn(t.shape, generator=gen) * (10.0 if step % 7 == 0 else 0.1) for t in a]
        for opt, ps in ((ours, a), (ref, b)):
            opt.zero_grad(set_to_none=True)
            for p, g in zip(ps, grads):
                p.grad = None if (step % 11 in (0, 3) and p.ndim == 1) else g.clone()  # skipped, as torch does
            opt.step()
        for p, r in zip(a, b):
            assert torch.equal(p, r), step
    assert ours._steps == [300, 300 - len([s for s in range(300) if s % 11 in (0, 3)])]


def test_adam_runs_train_without_importing_torch_optim():
    """A non-private (Adam) run imports neither torch.optim's Adam nor torch._dynamo (about a second per process)."""
    import subprocess
    import sys

    # one epoch: the optimiser is built and steps as in a full run; only the import of torch.optim is looked at
    code = ("import sys; from dpcore.learners import run_learner; "
            "run_learner('non-private', 'breast_cancer', seed=0, params={'epochs': 1}); "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_a_printed_result_shows_its_privacy_numbers_not_its_weights():
    # print(result) gave every weight of the model (tens of thousands of characters for a small MLP)
    g = np.random.default_rng(0)
    X = g.normal(size=(100, 20))
    res = train(X, (X[:, 0] > 0).astype(int), TrainConfig(model="mlp", hidden=64, epochs=1, batch_size=20,
                                                          noise_multiplier=1.0), n_outputs=2)
    shown = repr(res)
    assert f"epsilon={res.epsilon!r}" in shown and "noise_multiplier=1.0" in shown and "delta=1e-05" in shown
    assert "state=" not in shown and len(shown) < 3000
    assert res.state["0.weight"].shape == (64, 20)  # still there, for whoever asks


@pytest.mark.parametrize("setting", [dict(target_epsilon=1.0), dict(noise_multiplier=1.0), dict(max_epsilon=2.0),
                                     dict(target_epsilon=1.0, max_epsilon=2.0)])
def test_a_non_private_config_refuses_a_privacy_setting_it_would_drop(setting):
    """TrainConfig(target_epsilon=1, private=False) trained a model with no noise and reported epsilon infinity, with
    no word that the 1 was dropped: a data scientist who set both believed the model private."""
    with pytest.raises(DPValueError) as got:
        TrainConfig(private=False, **setting)
    said = str(got.value)
    assert "private=False" in said and "private=True" in said
    assert all(f"{name}=" in said for name in setting)
    assert TrainConfig(private=False).noise_multiplier is None  # the baseline itself stands
