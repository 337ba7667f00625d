"""Privacy accounting: a thin layer over Google's ``dp_accounting``.

One surface for every private learner:

* events: every run describes what it released as a ``dp_accounting.DpEvent``
  (:func:`dpsgd_event`, :class:`EpsilonDeltaDpEvent` for guarantees proved by a theorem);
* :func:`epsilon_of_event`: its epsilon under ``dp_accounting.rdp.RdpAccountant`` (the
  moments accountant of Abadi et al. 2016, in Mironov's RDP form) or
  ``dp_accounting.pld.PLDAccountant``; pure epsilon-DP events at delta = 0 by basic
  composition, for which both accountants answer infinity;
* :func:`calibrate`: the noise whose event spends at most a target epsilon;
* :class:`PrivacyLedger`: events composed as they are spent, epsilon so far and
  epsilon-if, with a budget; :func:`privacy_profile`: one event's delta(epsilon) for every
  epsilon, from the same composition (the audit's trade-off curves);
* :class:`Neighbouring`: who counts as a neighbour, one typed name.

Nothing here computes RDP or privacy-loss distributions by hand. The composition
theorems (naive and advanced) are here only as the comparison lines of the
Accountant page (Abadi et al. 2016, figure 2).
"""
from .accountants import ACCOUNTANTS, make_accountant
from .calibration import calibrate, calibrate_noise_multiplier
from .composition import advanced_composition, amplified_epsilon, gaussian_epsilon, naive_composition
from .core import dpsgd_accounting, dpsgd_epsilon, epsilon_curve, steps_for
from .curves import METHOD_LABELS, composition_comparison
from .events import EpsilonDeltaDpEvent, dpsgd_event, event_from_json, event_to_json
from .ledger import PrivacyLedger, PrivacyProfile, epsilon_of_event, privacy_profile, repeat_and_select_epsilon
from .neighbouring import Neighbouring

__all__ = [
    "event_from_json",
    "event_to_json",
    "repeat_and_select_epsilon",
    "ACCOUNTANTS",
    "EpsilonDeltaDpEvent",
    "METHOD_LABELS",
    "Neighbouring",
    "PrivacyLedger",
    "PrivacyProfile",
    "advanced_composition",
    "amplified_epsilon",
    "calibrate",
    "calibrate_noise_multiplier",
    "composition_comparison",
    "dpsgd_accounting",
    "dpsgd_epsilon",
    "dpsgd_event",
    "epsilon_curve",
    "epsilon_of_event",
    "gaussian_epsilon",
    "make_accountant",
    "naive_composition",
    "privacy_profile",
    "steps_for",
]
