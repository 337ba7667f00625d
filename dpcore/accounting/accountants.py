"""The two dp_accounting accountants dpcore uses, built one way everywhere."""
from __future__ import annotations

import logging
import math

import dp_accounting
from dp_accounting import pld, rdp

from ..exceptions import DPValueError
from .neighbouring import Neighbouring

# dp_accounting logs a warning for every RDP order it drops at very small sigmas (the order is
# simply excluded, the bound stays valid); that is noise on a terminal or a page.
logging.getLogger("absl").setLevel(logging.ERROR)

ACCOUNTANTS = ("rdp", "pld")
#: The accountant a DP-SGD epsilon is read with unless told otherwise: the Accountant page's and the ``epsilon`` and
#: ``noise`` commands' (RDP, as Opacus reports it).
DEFAULT_ACCOUNTANT = "rdp"

#: RDP orders: dp_accounting's default grid extended with large orders so small
#: epsilons at tiny deltas are not overestimated.
RDP_ORDERS = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [64, 80, 96, 128, 160, 192, 256, 384, 512, 1024]
)
#: The PLD grid of every reported epsilon (pessimistic: a coarser grid only loosens the bound).
PLD_DISCRETIZATION = 1e-4


def pld_discretization_for(epsilon: float | None) -> float:
    """The PLD grid for a run calibrated to ``epsilon``: :data:`PLD_DISCRETIZATION` for budgets from 1 to 10,
    proportionally finer below 1 and coarser above 10, so that the grid's pessimism stays a small share of the
    budget and the memory stays bounded. A fixed 1e-4 grid reports 0.0008 for a DP-SGD run whose epsilon is
    0.0004 (so calibrating to 0.001 overshoots the noise five-fold), and takes 2 GB and half a minute to follow a
    run at epsilon 100 epoch by epoch. The same grid must calibrate and report a run, or the reported epsilon
    could land above its target. None (no target) gives the default.

    >>> pld_discretization_for(1.0), pld_discretization_for(0.001), pld_discretization_for(100.0)
    (0.0001, 1e-07, 0.001)
    """
    if epsilon is None or not math.isfinite(epsilon) or epsilon <= 0:
        return PLD_DISCRETIZATION
    # floored at 1e-8 and capped at 0.1: a grid of e^1e4 per step overflows dp_accounting (epsilon 1e9)
    scale = max(float(epsilon), 1e-4) if epsilon < 1 else min(max(1.0, float(epsilon) / 10), 1e3)
    return float(f"{PLD_DISCRETIZATION * scale:.6g}")


def check_accountant(accountant: str) -> str:
    if accountant not in ACCOUNTANTS:
        raise DPValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    return accountant


def make_accountant(
    accountant: str = "rdp",
    *,
    neighbouring: "Neighbouring | str" = Neighbouring.ADD_REMOVE,
    pld_discretization: float = PLD_DISCRETIZATION,
) -> dp_accounting.PrivacyAccountant:
    """Return a fresh dp_accounting accountant.

    Parameters
    ----------
    accountant : {"rdp", "pld"}
        ``"rdp"``: Rényi DP (the moments accountant). ``"pld"``: privacy loss
        distributions, tighter.
    neighbouring : Neighbouring or str
        Neighbouring relation the epsilon refers to. Choose it on purpose.
    pld_discretization : float
        Value discretisation of the PLD (pessimistic, so coarser is still an
        upper bound, only looser).

    Examples
    --------
    >>> type(make_accountant("pld", neighbouring="replace-one")).__name__
    'PLDAccountant'
    """
    check_accountant(accountant)
    rel = Neighbouring.of(neighbouring).relation
    if accountant == "rdp":
        return rdp.RdpAccountant(orders=RDP_ORDERS, neighboring_relation=rel)
    return pld.PLDAccountant(neighboring_relation=rel, value_discretization_interval=pld_discretization)
