"""DP-FedAvg's unit of privacy is a client: one client, with all of its records, moves a round's release by at most
S / (q N) (McMahan et al. 2018, Algorithm 1, the fixed-denominator estimator).

The round is run on two federations that differ in one client's data (that client holds nothing in the second, the
coupling of add/remove with the public denominator q N), with the same local shuffles and the same server noise, so
the difference of the two released averages is exactly what the noise must hide: the accounting's Gaussian of
multiplier sigma covers a sum that moves by at most S. Plain FedAvg (no clipping, weights by data size) moves it by
more, and is caught.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from dpcore.datasets import train_test_split
from dpcore.datasets.transforms import scale_to_unit_interval
from dpcore.federated import FedAvgConfig, FlatModel
from dpcore.federated.clients import partition_clients
from dpcore.federated.fedavg import _round_average
from dpcore.rng import torch_generator

N, Q, S = 10, 0.5, 0.05


@pytest.fixture(scope="module")
def federation():
    split = train_test_split("digits", seed=0)
    X = scale_to_unit_interval(split.X_train, split.dataset.bounds)
    y = np.asarray(split.y_train, dtype=np.int64)
    shards = partition_clients(y, clients=N, non_iid=False, shards_per_client=2, rng=np.random.default_rng(0))
    return torch.tensor(X, dtype=torch.float32), torch.tensor(y), shards


def released(mode: str, X, y, shards):
    """One round's released average with every client sampled, from fixed shuffles and fixed server noise."""
    cfg = FedAvgConfig(mode=mode, clients=N, rounds=1, client_fraction=Q, clip_norm=S, noise_multiplier=1.0,
                       learning_rate=2.0, batch_size=8, seed=0)
    model = FlatModel("softmax", X.shape[1], 10, 1)
    theta = torch.zeros(model.n_params)
    sizes = np.array([s.size for s in shards])
    avg, clipped, _ = _round_average(cfg, model, theta, X, y, shards, sizes, np.arange(N), 1.0,
                                     rng=np.random.default_rng(1), gen=torch_generator(2))
    return avg, clipped


def neighbours(shards):
    """The federation, and the same one with the last client's data removed (it sends a zero update)."""
    shards = list(shards)
    return shards, shards[:-1] + [np.array([], dtype=np.int64)]


def test_one_client_with_all_its_records_moves_the_server_average_by_at_most_s_over_qn(federation):
    X, y, shards = federation
    assert shards[-1].size > 100  # a client of many records: they are protected together
    a, b = neighbours(shards)
    avg_a, clipped = released("central", X, y, a)
    avg_b, _ = released("central", X, y, b)
    assert clipped == 1.0  # every update was larger than S: the bound is met with equality
    moved = float((avg_a - avg_b).norm())
    assert moved <= S / (Q * N) * (1 + 1e-5)
    assert moved == pytest.approx(S / (Q * N), rel=1e-4)


def test_plain_fedavg_without_clipping_moves_the_average_by_more_and_is_caught(federation):
    X, y, shards = federation
    a, b = neighbours(shards)
    moved = float((released("none", X, y, a)[0] - released("none", X, y, b)[0]).norm())
    assert moved > 10 * S / (Q * N)
