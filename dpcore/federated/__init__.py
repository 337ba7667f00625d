"""Federated learning with differential privacy: FedAvg, DP-FedAvg (server noise) and local DP.

N simulated clients hold disjoint shards (IID or label-skewed); every round a
Poisson sample of clients trains locally, updates are clipped and noised at the
server (DP-FedAvg, McMahan et al. 2018, user-level DP) or by each client (local
DP), or averaged as they are (FedAvg, McMahan et al. 2017). All clients of a
round train at once as one batched torch computation.
"""
from .._lazy import lazy_names

#: Each public name and the module that defines it, loaded on first use (PEP 562): the federated learners' knobs
#: read :mod:`~dpcore.federated.config` without loading torch.
_WHERE = {
    "dp_fedavg_epsilons": "accounting",
    "dp_fedavg_event": "accounting",
    "local_dp_epsilon": "accounting",
    "local_dp_event": "accounting",
    "label_counts": "clients",
    "partition_clients": "clients",
    "MODELS": "config",
    "MODES": "config",
    "FedAvgConfig": "config",
    "FedAvgResult": "fedavg",
    "clip_updates": "fedavg",
    "noisy_server_average": "fedavg",
    "train_fedavg": "fedavg",
    "train_fedavg_split": "fedavg",
    "FlatModel": "models",
}

__getattr__, __dir__ = lazy_names(__name__, _WHERE)

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
