"""Privacy accounting of federated averaging, through dp_accounting (via dpcore.accounting).

* DP-FedAvg (central, McMahan et al. 2018): user-level DP under add/remove of one
  client's entire data. Each round every client joins with probability q (Poisson,
  kept secret by the server), its update is clipped to L2 norm S, and the server adds
  N(0, sigma^2 S^2) to the sum: one round is
  ``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))``, composed over rounds.
* Local DP (each client noises its own clipped update before sending): the
  server sees every update, so there is no amplification by sampling, and the
  guarantee is against the server under replace-one of the client's data:
  two clipped updates differ by up to 2S in L2, so noise N(0, sigma^2 S^2) is a
  unit-sensitivity Gaussian with noise multiplier ``sigma / 2``, composed over the
  rounds the client actually took part in (participation is drawn independently
  of the data, so the count of the most frequent participant is public).

References
----------
McMahan, Ramage, Talwar, Zhang. "Learning Differentially Private Recurrent
Language Models." ICLR 2018 (Algorithm 1, DP-FedAvg).
Abadi et al. "Deep Learning with Differential Privacy." CCS 2016 (moments accountant).
"""
from __future__ import annotations

import dp_accounting
import numpy as np

from ..accounting import Neighbouring, dpsgd_event, epsilon_curve, epsilon_of_event
from ..validation import check_delta, check_fraction, check_int, check_positive

#: Two clipped updates (norm <= S each) differ by at most 2S: the local-DP sensitivity in units of S.
LOCAL_SENSITIVITY = 2.0
#: Who is a neighbour: DP-FedAvg hides whether a client took part at all; local DP hides what a client sent.
DP_FEDAVG_NEIGHBOURING = Neighbouring.ADD_REMOVE
LOCAL_DP_NEIGHBOURING = Neighbouring.REPLACE_ONE
#: What both protect: a client's whole data, all of its records at once (``unit`` of a run's result; a
#: :class:`~dpcore.accounting.PrivacyLedger` of clients composes them, one of records refuses them).
FEDERATED_UNIT = "clients"


def dp_fedavg_event(*, noise_multiplier: float, sample_rate: float, rounds: int) -> dp_accounting.DpEvent:
    """``SelfComposed(PoissonSampled(q, Gaussian(sigma)), rounds)``: DP-FedAvg at user level.

    >>> dp_fedavg_event(noise_multiplier=1.0, sample_rate=0.5, rounds=3).count
    3
    """
    return dpsgd_event(noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=rounds)


def dp_fedavg_epsilons(
    *, noise_multiplier: float, sample_rate: float, rounds: int, delta: float, accountant: str = "rdp"
) -> np.ndarray:
    """Epsilon after each round 1..rounds of DP-FedAvg (user-level, add/remove of a client).

    Through :func:`dpcore.accounting.epsilon_curve`: with the RDP accountant one
    round's RDP curve is computed once by dp_accounting and round t's epsilon is
    ``compute_epsilon`` on t times it (exactly how the accountant composes a
    ``SelfComposedDpEvent``), so each round costs microseconds; the PLD accountant
    composes incrementally (slower).
    """
    rounds = check_int(rounds, "rounds", minimum=1)
    delta = check_delta(delta, allow_zero=False)
    return epsilon_curve(noise_multiplier=noise_multiplier, sample_rate=sample_rate, delta=delta,
                         steps=list(range(1, rounds + 1)), accountant=accountant)


def local_dp_event(*, noise_multiplier: float, participations: int) -> dp_accounting.DpEvent:
    """One client's local-DP event: ``participations`` Gaussian releases with multiplier ``sigma / 2``.

    >>> local_dp_event(noise_multiplier=2.0, participations=4)
    SelfComposedDpEvent(event=GaussianDpEvent(noise_multiplier=1.0), count=4)
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    k = check_int(participations, "participations", minimum=0)
    return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / LOCAL_SENSITIVITY), k)


def local_dp_epsilon(*, noise_multiplier: float, participations: int, delta: float, accountant: str = "rdp") -> float:
    """Local-DP epsilon of a client that sent ``participations`` noisy updates."""
    if check_int(participations, "participations", minimum=0) == 0:
        return 0.0
    return epsilon_of_event(local_dp_event(noise_multiplier=noise_multiplier, participations=participations),
                            delta=delta, accountant=accountant, neighbouring=LOCAL_DP_NEIGHBOURING)


def check_client_fraction(value) -> float:
    """The client sampling rate q must be in (0, 1]."""
    return check_fraction(value, "client_fraction")
