"""Privacy accounting: a thin layer over Google's ``dp_accounting``.

Nothing here computes RDP or privacy-loss distributions by hand: every epsilon
comes from ``dp_accounting.rdp.RdpAccountant`` (the moments accountant of Abadi
et al. 2016, in Mironov's RDP form) or ``dp_accounting.pld.PLDAccountant``.
The composition theorems (naive and advanced) are here only as the comparison
lines of seed 004's figure, and :func:`pure_epsilon_sum` is the basic
composition of pure epsilon-DP (Laplace) pipelines, for which both accountants
answer infinity at delta = 0.
"""
from .composition import (
    advanced_composition,
    amplified_epsilon,
    gaussian_epsilon,
    naive_composition,
    pure_epsilon_sum,
)
from .curves import METHOD_LABELS, composition_comparison
from .core import (
    ACCOUNTANTS,
    NEIGHBOURING,
    DpsgdOdometer,
    PrivacyLedger,
    calibrate_noise_multiplier,
    dpsgd_epsilon,
    dpsgd_event,
    epsilon_curve,
    epsilon_of_event,
    make_accountant,
    steps_for,
)

__all__ = [
    "ACCOUNTANTS",
    "NEIGHBOURING",
    "DpsgdOdometer",
    "PrivacyLedger",
    "METHOD_LABELS",
    "advanced_composition",
    "composition_comparison",
    "amplified_epsilon",
    "calibrate_noise_multiplier",
    "dpsgd_epsilon",
    "dpsgd_event",
    "epsilon_curve",
    "epsilon_of_event",
    "gaussian_epsilon",
    "make_accountant",
    "naive_composition",
    "pure_epsilon_sum",
    "steps_for",
]
