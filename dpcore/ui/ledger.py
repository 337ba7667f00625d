"""A visitor's running privacy total: every private run on the same data composes.

Each page run of a private learner is a release about the same people; if all of them were
published, their guarantees compose. :func:`session_ledger` keeps one
:class:`~dpcore.accounting.PrivacyLedger` per data set and protected unit in this visitor's
``st.session_state`` (never shared between visitors), :func:`record_run` spends a run's event
once (showing the same inputs again re-shows the same seeded release, it is not a new one),
and :func:`show_session_total` says the total in one caption.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import dp_accounting
import streamlit as st

from ..accounting import UNIT_SAID, Neighbouring, PrivacyLedger, compose_guarantees
from ..teaching.verdict import round_epsilon
from .common import format_epsilon

#: session-state key of the store: {(data, unit, relation): SessionRuns}
SESSION_KEY = "session.ledgers"
#: How the runs that protect less than a whole record are named in the total.
UNIT_RUNS = {"labels": "label-DP training", "images": "noisy-image release", "clients": "federated training"}


@dataclass
class SessionRuns:
    """The private runs of one visitor on one data set that protect the same unit under the same relation."""

    ledger: PrivacyLedger
    keys: set = field(default_factory=set)
    reported: list = field(default_factory=list)  # (epsilon, delta) each run reported

    @property
    def delta(self) -> float:
        """The total is stated at the sum of the runs' deltas, where basic composition holds too."""
        return min(sum(d for _, d in self.reported), 0.999)

    @property
    def epsilon(self) -> float:
        """dp_accounting's composition of all runs, never above the sum of their own epsilons (basic composition)."""
        basic = sum(e for e, _ in self.reported)
        return min(self.ledger.epsilon_at(self.delta), basic)


def session_ledger(data: str, *, unit: str = "records", neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                   store: dict | None = None) -> SessionRuns:
    """This visitor's runs on ``data`` protecting ``unit`` under ``neighbouring`` (created empty on first use)."""
    store = st.session_state.setdefault(SESSION_KEY, {}) if store is None else store
    rel = Neighbouring.of(neighbouring)
    return store.setdefault((data, unit, rel), SessionRuns(PrivacyLedger(delta=0.0, neighbouring=rel, unit=unit)))


def record_run(data: str, run_key, *, event: dp_accounting.DpEvent | None, epsilon: float, delta: float,
               neighbouring: Neighbouring | None, unit: str = "records", store: dict | None = None) -> bool:
    """Spend one run's event on the session ledger of ``data``, once per ``run_key``; True if it was new.

    Runs without an event (not private) are not recorded: they have no guarantee to compose. A private run whose
    epsilon is infinite (a noise too small for any guarantee) is recorded: released with the others, it leaves their
    total without one, so the total is infinite too.
    """
    if event is None or neighbouring is None:
        return False
    runs = session_ledger(data, unit=unit, neighbouring=neighbouring, store=store)
    if run_key in runs.keys:
        return False
    runs.ledger.spend(event)
    runs.keys.add(run_key)
    runs.reported.append((float(epsilon), float(delta)))
    return True


def session_total_text(data: str, title: str, *, store: dict) -> str | None:
    """One paragraph on what this session's private runs on ``data`` would cost if all were released."""
    groups = [(key, runs) for key, runs in store.items() if key[0] == data and runs.reported]
    if not groups:
        return None
    parts = []
    both = sum(unit == "records" for (_, unit, _), _ in groups) > 1  # add/remove and replace-one runs on one data set
    for (_, unit, rel), runs in groups:
        n = len(runs.reported)
        # the total delta is spent too: rounded up as the epsilon is (3.34e-05 reads 3.4e-05, never 3.3e-05)
        total = f"ε = {format_epsilon(runs.epsilon, 4)}" + (
            f", δ = {round_epsilon(runs.delta, 2):.2g}" if runs.delta > 0 else "")
        if unit != "records":
            what = UNIT_RUNS.get(unit, f"{unit} run")
            why = ("they protect a client, all of its records at once, and a record added changes what its client "
                   "holds, so they add to no total of records" if unit == "clients" else
                   "they used the rest of each record in the clear, so they protect no whole record")
            parts.append(f"**{n} {what}{'s' if n > 1 else ''}** protected only {UNIT_SAID.get(unit, unit)} ({total} "
                         f"for them, {rel.description}); {why}.")
        elif both:
            parts.append(f"**{n} private training{'s' if n > 1 else ''}** on {title} counted "
                         f"{rel.description} as the neighbour: **{total}** for each record.")
        elif n == 1:
            parts.append(f"This session has run **1 private training** on {title}: **{total}** for each record "
                         f"({rel.description}).")
        else:
            parts.append(f"This session has run **{n} private trainings** on {title}; if they were all released, "
                         f"the total would be **{total}** for each record ({rel.description}).")
    if combined := _combined_records_text([runs for (_, unit, _), runs in groups if unit == "records"]):
        parts.append(combined)
    return (" ".join(parts) + " Runs on the same data compose (dp_accounting's RDP accountant, never more than the "
            "sum of their ε): each new one adds to the total if it is released too, whatever its seed or split. "
            "The non-private baselines shown beside them are not covered.")


def _combined_records_text(groups: list[SessionRuns]) -> str | None:
    """One bound for whole records when runs under add/remove and under replace-one were both made on the data.

    dp_accounting composes runs under one relation; the two totals cannot be added as they are. A replace-one
    guarantee says nothing about a record added or removed, but an add/remove one does say something about a record
    replaced (:func:`~dpcore.accounting.replace_one_guarantee`: (2ε, (1 + e^ε) δ)), so the bound for both is
    stated for a record replaced, the two guarantees adding up (basic composition).
    """
    if len(groups) < 2:
        return None
    epsilon, delta, _ = compose_guarantees((runs.epsilon, runs.delta, runs.ledger.neighbouring) for runs in groups)
    if not math.isfinite(epsilon):
        return ("**Together** they have no bound this page can state: a total is infinite, or the add/remove one "
                "too large to restate for a record replaced.")
    n = sum(len(runs.reported) for runs in groups)
    return (f"**Together**, the {n} trainings are at most **ε = {format_epsilon(epsilon, 4)}, "
            f"δ = {round_epsilon(delta, 2):.2g}** for each record replaced: a guarantee for a record added or removed "
            "holds at twice its ε (and δ times 1 + e^ε) for a record replaced (removed, then another added; Dwork & "
            "Roth 2014, group privacy), and the two totals then add up.")


def show_session_total(dataset, run_key: tuple, out: dict) -> None:
    """Record the run on show (once) and draw the session's running total on ``dataset`` as a caption.

    ``run_key`` is the page's key of the run (its first item identifies the data, uploads
    included); ``out`` holds the run's ``event``, ``epsilon``, ``delta``, ``neighbouring`` and ``unit`` (what of
    each record its ε protects; whole records when absent).
    """
    store = st.session_state.setdefault(SESSION_KEY, {})
    data = run_key[0]
    record_run(data, run_key, event=out.get("event"), epsilon=out["epsilon"], delta=out["delta"],
               neighbouring=out.get("neighbouring"), unit=out.get("unit", "records"), store=store)
    if text := session_total_text(data, dataset.title, store=store):
        st.caption(f"**Session total.** {text}")
