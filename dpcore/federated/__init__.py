"""Federated learning with differential privacy: FedAvg, DP-FedAvg (server noise) and local DP.

N simulated clients hold disjoint shards (IID or label-skewed); every round a
Poisson sample of clients trains locally, updates are clipped and noised at the
server (DP-FedAvg, McMahan et al. 2018, user-level DP) or by each client (local
DP), or averaged as they are (FedAvg, McMahan et al. 2017). All clients of a
round train at once as one batched torch computation.
"""
from .accounting import (
    dp_fedavg_epsilons,
    dp_fedavg_event,
    local_dp_epsilon,
    local_dp_event,
)
from .clients import label_counts, partition_clients
from .fedavg import (
    MODES,
    FedAvgConfig,
    FedAvgResult,
    clip_updates,
    noisy_server_average,
    train_fedavg,
    train_fedavg_split,
)
from .models import MODELS, FlatModel

__all__ = [
    "MODELS",
    "MODES",
    "FedAvgConfig",
    "FedAvgResult",
    "FlatModel",
    "clip_updates",
    "dp_fedavg_epsilons",
    "dp_fedavg_event",
    "label_counts",
    "local_dp_epsilon",
    "local_dp_event",
    "noisy_server_average",
    "partition_clients",
    "train_fedavg",
    "train_fedavg_split",
]
