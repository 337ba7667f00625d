"""Privacy accounting: a thin layer over Google's ``dp_accounting``.

One surface for every private learner:

* events: every run describes what it released as a ``dp_accounting.DpEvent``
  (:func:`dpsgd_event`, :class:`EpsilonDeltaDpEvent` and :class:`RdpCurveDpEvent` for guarantees proved by a
  theorem);
* :func:`epsilon_of_event`: its epsilon under ``dp_accounting.rdp.RdpAccountant`` (the
  moments accountant of Abadi et al. 2016, in Mironov's RDP form) or
  ``dp_accounting.pld.PLDAccountant``; pure epsilon-DP events at delta = 0 by basic
  composition, for which both accountants answer infinity;
* :func:`calibrate`: the noise whose event spends at most a target epsilon;
* :class:`PrivacyLedger`: events composed as they are spent, epsilon so far and
  epsilon-if, with a budget; :func:`privacy_profile`: one event's delta(epsilon) for every
  epsilon, from the same composition (the audit's trade-off curves);
* :class:`Neighbouring`: who counts as a neighbour, one typed name; :func:`replace_one_guarantee`: an add/remove
  guarantee restated for a record replaced.

Nothing here computes RDP or privacy-loss distributions by hand. The composition
theorems (naive and advanced) are here only as the comparison lines of the
Accountant page (Abadi et al. 2016, figure 2).
"""
from __future__ import annotations

from .._lazy import lazy_names

#: Every name and the module that defines it, loaded on first use (PEP 562): ``python -m dpcore epsilon`` needs
#: dp_accounting, not the composition curves' pandas.
_WHERE = {
    "ACCOUNTANTS": "accountants",
    "DEFAULT_ACCOUNTANT": "accountants",
    "make_accountant": "accountants",
    "calibrate": "calibration",
    "calibrate_noise_multiplier": "calibration",
    "advanced_composition": "composition",
    "amplified_epsilon": "composition",
    "gaussian_epsilon": "composition",
    "naive_composition": "composition",
    "dpsgd_accounting": "core",
    "dpsgd_epsilon": "core",
    "epsilon_curve": "core",
    "steps_for": "core",
    "METHOD_LABELS": "curves",
    "composition_comparison": "curves",
    "EpsilonDeltaDpEvent": "events",
    "RdpCurveDpEvent": "events",
    "dpsgd_event": "events",
    "shuffled_dpsgd_event": "events",
    "event_from_json": "events",
    "event_to_json": "events",
    "PrivacyLedger": "ledger",
    "PrivacyProfile": "ledger",
    "privacy_profile": "ledger",
    "epsilon_of_event": "ledger",
    "repeat_and_select_epsilon": "ledger",
    "Neighbouring": "neighbouring",
    "replace_one_guarantee": "neighbouring",
    "replace_one_within": "neighbouring",
    "restated_for_replaced": "neighbouring",
    "compose_guarantees": "neighbouring",
    "common_unit": "neighbouring",
    "covers": "neighbouring",
    "UNITS": "neighbouring",
    "UNIT_SAID": "neighbouring",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE)

__all__ = [
    "event_from_json",
    "event_to_json",
    "repeat_and_select_epsilon",
    "ACCOUNTANTS",
    "DEFAULT_ACCOUNTANT",
    "EpsilonDeltaDpEvent",
    "METHOD_LABELS",
    "Neighbouring",
    "PrivacyLedger",
    "PrivacyProfile",
    "RdpCurveDpEvent",
    "advanced_composition",
    "amplified_epsilon",
    "calibrate",
    "calibrate_noise_multiplier",
    "composition_comparison",
    "compose_guarantees",
    "common_unit",
    "covers",
    "UNITS",
    "UNIT_SAID",
    "dpsgd_accounting",
    "dpsgd_epsilon",
    "dpsgd_event",
    "shuffled_dpsgd_event",
    "epsilon_curve",
    "epsilon_of_event",
    "gaussian_epsilon",
    "make_accountant",
    "naive_composition",
    "privacy_profile",
    "replace_one_guarantee",
    "replace_one_within",
    "restated_for_replaced",
    "steps_for",
]
