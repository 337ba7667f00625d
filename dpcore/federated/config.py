"""What defines one federated run, without torch: :class:`FedAvgConfig` and the names its fields may take.

The federated learners' knobs read their defaults here, so listing the learners does not load torch;
:mod:`dpcore.federated.fedavg` trains a config.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import ACCOUNTANTS
from ..defaults import DELTA
from ..exceptions import DPValueError
from ..validation import check_delta, check_epsilon, check_int, check_positive, refuse_unknown_fields
from .accounting import check_client_fraction

MODES = ("central", "local", "none")
#: The built-in models (:mod:`dpcore.federated.models`), each with what it is in words.
MODELS = {"softmax": "Softmax regression", "mlp": "Small neural network (one hidden ReLU layer)"}


@dataclass(frozen=True, kw_only=True)
class FedAvgConfig:
    """Everything one federated run needs (frozen, hashable: a cache key).

    Parameters
    ----------
    mode : {"central", "local", "none"}
        DP-FedAvg with server noise, local DP with client noise, or plain FedAvg.
    clients : int
        Number of simulated clients N (disjoint shards).
    rounds : int
    client_fraction : float in (0, 1]
        Poisson sampling rate q of clients per round.
    clip_norm : float
        L2 bound S on each client update (private modes).
    noise_multiplier : float or None
        sigma: noise std is sigma * S. ``None``: calibrated to ``target_epsilon``.
    target_epsilon : float or None
    delta : float
        User-level delta (keep it below 1/N).
    local_epochs, batch_size : int
    learning_rate : float
        Client SGD learning rate.
    server_learning_rate : float
    model : {"softmax", "mlp"}
    hidden : int
    non_iid : bool
        Label-skewed shards (``shards_per_client`` label-sorted shards per client).
    shards_per_client : int
    accountant : {"rdp", "pld"}
    seed : int
    secure : bool
        Secure noise (:func:`dpcore.rng.secure_noise`): every noise draw and sample from the operating system;
        ``seed`` then fixes only what releases nothing (partitions, initial weights).
    class_shares : tuple of float
        Declared class shares (public knowledge; empty: none): each round's evaluation answers ``argmax(p /
        shares)``, as :func:`dpcore.learners.decision.balanced_decision` answers the final test rows (evaluation
        only; the rounds, the noise and the accounting do not read it).
    """

    mode: str = "central"
    clients: int = 20
    rounds: int = 30
    client_fraction: float = 0.2
    clip_norm: float = 1.0
    noise_multiplier: float | None = None
    target_epsilon: float | None = None
    delta: float = DELTA
    local_epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 0.5
    server_learning_rate: float = 1.0
    model: str = "softmax"
    hidden: int = 64
    non_iid: bool = False
    shards_per_client: int = 2
    accountant: str = "rdp"
    seed: int = 0
    secure: bool = False
    class_shares: tuple = ()

    def __new__(cls, *args, **kwargs):
        refuse_unknown_fields(cls, kwargs)  # by name, with the field meant (epsilon: target_epsilon)
        return super().__new__(cls)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise DPValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if isinstance(self.clients, (int, np.integer)) and not isinstance(self.clients, bool) and self.clients < 1:
            raise DPValueError(f"clients must be >= 1, got {self.clients}; "
                               "federated learning needs at least one client")
        object.__setattr__(self, "clients", check_int(self.clients, "clients", minimum=1))
        object.__setattr__(self, "rounds", check_int(self.rounds, "rounds", minimum=1))
        object.__setattr__(self, "client_fraction", check_client_fraction(self.client_fraction))
        object.__setattr__(self, "clip_norm", check_positive(self.clip_norm, "clip_norm"))
        object.__setattr__(self, "local_epochs", check_int(self.local_epochs, "local_epochs", minimum=1))
        object.__setattr__(self, "batch_size", check_int(self.batch_size, "batch_size", minimum=1))
        object.__setattr__(self, "learning_rate", check_positive(self.learning_rate, "learning_rate"))
        object.__setattr__(self, "server_learning_rate",
                           check_positive(self.server_learning_rate, "server_learning_rate"))
        if self.model not in MODELS:
            raise DPValueError(f"model must be one of {sorted(MODELS)}, got {self.model!r}")
        object.__setattr__(self, "hidden", check_int(self.hidden, "hidden", minimum=1))
        object.__setattr__(self, "shards_per_client", check_int(self.shards_per_client, "shards_per_client", minimum=1))
        if self.accountant not in ACCOUNTANTS:
            raise DPValueError(f"accountant must be one of {ACCOUNTANTS}, got {self.accountant!r}")
        object.__setattr__(self, "seed", check_int(self.seed, "seed", minimum=0))
        shares = tuple(float(v) for v in (self.class_shares or ()))
        if not all(math.isfinite(v) and v > 0 for v in shares):
            raise DPValueError(f"class_shares must be positive numbers, one per class; got {shares}")
        object.__setattr__(self, "class_shares", shares)
        if self.mode != "none":
            object.__setattr__(self, "delta", check_delta(
                self.delta, allow_zero=False, n=self.clients,
                zero_hint="federated learning's noise is Gaussian, which needs delta > 0; 1e-5 is usual (well below "
                          "1 over the number of clients)"))
            if self.noise_multiplier is not None:
                object.__setattr__(self, "noise_multiplier", check_positive(self.noise_multiplier, "noise_multiplier"))
            elif self.target_epsilon is None:
                raise DPValueError(f"mode={self.mode!r} needs noise_multiplier or target_epsilon")
            else:
                object.__setattr__(self, "target_epsilon", check_epsilon(self.target_epsilon, "target_epsilon"))

    @property
    def private(self) -> bool:
        return self.mode != "none"
