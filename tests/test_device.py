"""Training, the audits and federated averaging run where the model lives, and bring their results to the CPU.

The machine that runs the suite has no GPU: the same tests take "cuda" where torch sees one, and the plumbing that
the CPU cannot exercise (tensors created on a device other than the CPU's) is checked on torch's "meta" device,
which has shapes and devices but no values.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from dpcore.audit import audit, per_example_losses
from dpcore.datasets import train_test_split
from dpcore.exceptions import DPCoreError, DPValueError
from dpcore.federated import FedAvgConfig
from dpcore.federated.fedavg import train_fedavg_split
from dpcore.training import DenseStackClipper, ExtraGradients, GhostClipper, TrainConfig, build_model, train
from dpcore.training.losses import loss_and_output_grad
from dpcore.validation import check_device

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                 reason="no CUDA device here"))]


@pytest.mark.parametrize("device", DEVICES)
def test_dpsgd_on_a_module_of_that_device_gives_cpu_results(device):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] > 0).astype(int)
    net = build_model("mlp", n_features=4, n_outputs=2, hidden=8).to(device)
    res = train(X, y, TrainConfig(epochs=2, batch_size=30, noise_multiplier=1.0, ema=0.5), model=net,
                X_test=X[:20], y_test=y[:20])
    assert {v.device.type for v in net.state_dict().values()} == {device}
    assert all(isinstance(v, np.ndarray) for v in res.state.values())
    assert res.predict_proba(X[:3]).shape == (3, 2)


@pytest.mark.parametrize("device", DEVICES)
def test_fedavg_runs_on_the_device_asked_and_gives_the_cpu_run_on_the_cpu(device):
    split = train_test_split("iris", seed=0)
    cfg = FedAvgConfig(clients=10, rounds=3, client_fraction=0.5, noise_multiplier=1.0, mode="central")
    res = train_fedavg_split(split, cfg, device=device)
    assert isinstance(res.params, np.ndarray) and isinstance(res.test_proba, np.ndarray)
    if device == "cpu":  # the device argument changes nothing on the CPU: same seed, same numbers
        np.testing.assert_array_equal(res.params, train_fedavg_split(split, cfg).params)


@pytest.mark.parametrize("device", DEVICES)
def test_audit_scores_a_module_on_its_device(device):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    net = nn.Sequential(nn.Linear(3, 2)).to(device)
    losses = per_example_losses(net, X, y)
    assert losses.shape == (60,) and np.all(losses > 0)
    assert 0.0 <= audit(net, (X[:30], y[:30]), (X[30:], y[30:]), rng=0).auc <= 1.0


def test_canary_mask_and_sum_follow_the_devices_of_the_canaries_and_of_the_step():
    extra = ExtraGradients.diracs([0, 3], value=1.0, size=5)
    flat = torch.zeros(5, device="meta")  # the model's device, here one the CPU is not
    extra.add_to(flat, [1], alpha=2.0)
    assert flat.device.type == "meta"
    dense = ExtraGradients(torch.eye(2, 5))
    dense.add_to(flat, [0])
    assert flat.device.type == "meta"


@pytest.mark.parametrize("clipper", [DenseStackClipper, GhostClipper])
def test_clippers_build_their_tensors_on_the_models_device(clipper):
    model = build_model("mlp", n_features=4, n_outputs=3, hidden=5).to("meta")
    x = torch.empty(6, 4, device="meta")
    y = torch.zeros(6, dtype=torch.long, device="meta")
    losses, norms = clipper(model).loss_and_norms(x, y, task="classification")
    assert losses.device.type == norms.device.type == "meta" and norms.shape == (6,)
    _, grad = loss_and_output_grad(torch.empty(6, 3, device="meta"), y, "classification")
    assert grad.device.type == "meta"


@pytest.mark.parametrize("device", ["cpu", torch.device("cpu")])
def test_train_takes_a_device_by_name_or_as_torch_device_and_moves_your_model_there(device):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    cfg = TrainConfig(epochs=1, batch_size=20, noise_multiplier=1.0)
    net = nn.Sequential(nn.Linear(3, 2))
    res = train(X, y, cfg, model=net, device=device)
    assert next(net.parameters()).device.type == "cpu" and np.isfinite(res.epsilon)
    assert train(X, y, cfg, model=nn.Sequential(nn.Linear(3, 2)), device=None).epsilon == res.epsilon
    assert train(X, y, cfg.replace(model="linear"), device=device).steps == res.steps  # a built-in model too


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: 'cuda' is a device it can use")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", 0, torch.device("cuda")])
def test_a_gpu_this_machine_lacks_is_refused_with_the_reason_before_training(device):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.arange(40) % 2
    net = nn.Sequential(nn.Linear(3, 2))
    before = [p.detach().clone() for p in net.parameters()]
    with pytest.raises(DPValueError, match=r"device=.* cannot be used: (this torch .* is a CPU-only build|torch sees "
                                           r"no cuda device).*use device='cpu'"):
        train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=net, device=device)
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters()))  # nothing was trained
    split = train_test_split("iris", seed=0)
    with pytest.raises(DPValueError, match="cannot be used"):
        train_fedavg_split(split, FedAvgConfig(clients=10, rounds=2, noise_multiplier=1.0), device=device)


@pytest.mark.parametrize("device, error", [("gpu", "is not a device torch knows"), (1.5, "must be a device name"),
                                           (True, "must be a device name"),
                                           ("meta", "torch's meta device holds shapes, not values")])
def test_a_device_that_is_not_one_is_refused_by_name(device, error):
    with pytest.raises(DPCoreError, match=error):
        check_device(device)
    with pytest.raises(DPCoreError, match=rf"device=.*{error}|device {error}"):
        train(np.zeros((10, 2)), np.arange(10) % 2, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0),
              device=device)
