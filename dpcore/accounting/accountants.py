"""The two dp_accounting accountants dpcore uses, built one way everywhere."""
from __future__ import annotations

import logging

import dp_accounting
from dp_accounting import pld, rdp

from ..exceptions import DPValueError
from .neighbouring import Neighbouring

# dp_accounting logs a warning for every RDP order it drops at very small sigmas (the order is
# simply excluded, the bound stays valid); that is noise on a terminal or a page.
logging.getLogger("absl").setLevel(logging.ERROR)

ACCOUNTANTS = ("rdp", "pld")

#: RDP orders: dp_accounting's default grid extended with large orders so small
#: epsilons at tiny deltas are not overestimated.
RDP_ORDERS = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [64, 80, 96, 128, 160, 192, 256, 384, 512, 1024]
)
#: The PLD grid of every reported epsilon (pessimistic: a coarser grid only loosens the bound).
PLD_DISCRETIZATION = 1e-4


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
