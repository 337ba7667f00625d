"""DP-SGD's epsilon: after a number of steps, and step by step (all through dp_accounting)."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..exceptions import DPValueError
from ..validation import check_delta, check_fraction, check_int, check_positive
from .accountants import ACCOUNTANTS, PLD_DISCRETIZATION, check_accountant, make_accountant
from .events import dpsgd_event
from .ledger import PrivacyLedger

__all__ = ["ACCOUNTANTS", "dpsgd_accounting", "dpsgd_epsilon", "epsilon_curve", "make_accountant", "steps_for"]


def dpsgd_epsilon(
    *, noise_multiplier: float, sample_rate: float, steps: int, delta: float, accountant: str = "rdp",
    pld_discretization: float = PLD_DISCRETIZATION,
) -> float:
    """Epsilon spent by DP-SGD after ``steps`` (add/remove neighbours); ``pld_discretization`` is the PLD grid
    (the grid a noise was calibrated on, to check it: :func:`~dpcore.accounting.accountants.pld_discretization_for`).

    ``noise_multiplier`` is sigma, the noise's standard deviation over the clip norm; ``sample_rate`` is q, the
    probability that a record joins a step's batch (Poisson sampling, Abadi et al. 2016), the expected batch size
    over the training records; ``steps`` counts the noisy steps. A run planned in batch size and epochs (as Opacus
    and :func:`dpcore.train` plan one) has ``q = batch_size / n`` and ``steps = ceil(epochs / q)``. Fixed-size
    shuffled batches are not Poisson samples: :func:`~dpcore.accounting.shuffled_dpsgd_event` accounts them.

    Examples
    --------
    >>> round(dpsgd_epsilon(noise_multiplier=1.5, sample_rate=0.04, steps=2250, delta=1e-5), 2)
    7.33
    >>> q = 256 / 60_000  # a batch size of 256 out of 60,000 records, for 60 epochs
    >>> round(dpsgd_epsilon(noise_multiplier=1.1, sample_rate=q, steps=math.ceil(60 / q), delta=1e-5), 3)
    2.597
    """
    return dpsgd_accounting(noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=steps, delta=delta,
                            accountant=accountant, pld_discretization=pld_discretization)[0]


def dpsgd_accounting(
    *, noise_multiplier: float, sample_rate: float, steps: int, delta: float, accountant: str = "rdp",
    pld_discretization: float = PLD_DISCRETIZATION,
) -> tuple[float, str]:
    """(epsilon, the accountant that gave it) of :func:`dpsgd_epsilon`: ``accountant``, or ``"rdp"`` where the PLD
    accountant handed over to RDP (:attr:`PrivacyLedger.accountant_used`), so that what is reported is what ran.

    Examples
    --------
    >>> dpsgd_accounting(noise_multiplier=1e-3, sample_rate=0.5, steps=10, delta=1e-5, accountant="pld")[1]
    'rdp'
    """
    check_accountant(accountant)
    ev = dpsgd_event(noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=steps)  # checks them all
    delta = check_delta(delta)
    if ev.count == 0:
        return 0.0, accountant
    ledger = PrivacyLedger(delta=delta, accountant=accountant, pld_discretization=pld_discretization)
    return ledger.spend(ev), ledger.accountant_used


def steps_for(*, epochs: float, sample_rate: float) -> int:
    """Number of steps in ``epochs`` passes at ``sample_rate`` (expected batch = q n), as DP-SGD's training loop
    takes them: ``epochs / q`` rounded up, where a ratio within 1e-9 above a whole number is that number (an epoch at
    q = 2 / 98 is the 49 steps training runs, not the 50 of 1 / (2 / 98) = 49.00000000000001 in floating point).

    >>> steps_for(epochs=1, sample_rate=2 / 98), steps_for(epochs=2.5, sample_rate=0.3)
    (49, 9)
    """
    epochs = check_positive(epochs, "epochs")
    q = check_fraction(sample_rate, "sample_rate")
    if not math.isfinite(epochs / q):
        raise DPValueError(f"epochs={epochs:g} at sample_rate={q:g} is more steps than can be counted; give fewer "
                           "epochs")
    return max(1, int(math.ceil(epochs / q - 1e-9)))


def epsilon_curve(
    *,
    noise_multiplier: float,
    sample_rate: float,
    delta: float,
    steps: Sequence[int],
    accountant: str = "rdp",
    pld_discretization: float = PLD_DISCRETIZATION,
) -> np.ndarray:
    """Epsilon after each number of steps in ``steps`` (increasing), on one :class:`PrivacyLedger`.

    ``pld_discretization`` trades PLD tightness for speed and memory (pessimistic either way:
    a coarser grid only loosens the bound). Charts use 1e-3.

    Examples
    --------
    >>> epsilon_curve(noise_multiplier=1.5, sample_rate=0.04, delta=1e-5, steps=[0, 2250]).round(2).tolist()
    [0.0, 7.33]
    """
    delta = check_delta(delta)
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    q = check_fraction(sample_rate, "sample_rate")
    steps = [check_int(s, "steps", minimum=0) for s in steps]
    if any(b < a for a, b in zip(steps, steps[1:])):
        raise DPValueError("steps must be increasing")
    ledger = PrivacyLedger(delta=delta, accountant=accountant, pld_discretization=pld_discretization)
    out, done = [], 0
    for s in steps:
        if s > done:
            ledger.spend(dpsgd_event(noise_multiplier=sigma, sample_rate=q, steps=s - done))
            done = s
        out.append(ledger.epsilon)
    return np.asarray(out, dtype=float)
