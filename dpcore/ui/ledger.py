"""A visitor's running privacy total: every private run on the same data composes.

Each page run of a private learner is a release about the same people; if all of them were
published, their guarantees compose. :func:`session_ledger` keeps one
:class:`~dpcore.accounting.PrivacyLedger` per data set and protected unit in this visitor's
``st.session_state`` (never shared between visitors), :func:`record_run` spends a run's event
once (showing the same inputs again re-shows the same seeded release, it is not a new one),
and :func:`show_session_total` says the total in one caption.

Every page that releases something private about a data set records it here under the same key for the data
(:func:`dpcore.ui.uploads.data_key`: the registry name, or this session's :class:`~dpcore.ui.uploads.UploadRef`), so
the runs of the Train page, the Classical models page, PATE, the Attack page ... on one data set compose into one
total: :func:`record_release` takes any run's result (a page's ``out`` mapping, a ``RunResult``, ``FedAvgResult``,
``PateResult``, an audit, a sweep table's row), :func:`sweep_releases` lists a sweep's private runs, and
:func:`show_data_total` draws the caption.
"""
from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import dp_accounting
import pandas as pd
import streamlit as st

from ..accounting import (
    UNIT_SAID,
    UNITS,
    EpsilonDeltaDpEvent,
    Neighbouring,
    PrivacyLedger,
    compose_guarantees,
    event_from_json,
    restated_for_replaced,
)
from ..accounting.ledger import PURE_READ, reasons_unsaid
from ..exceptions import DPCoreWarning, user_stacklevel
from ..teaching.verdict import round_epsilon
from .common import format_epsilon

#: session-state key of the store: {(data, unit, relation, federation): SessionRuns} (federation: "" but for clients)
SESSION_KEY = "session.ledgers"
#: How the runs that protect less than a whole record are named in the total.
UNIT_RUNS = {"labels": "label-DP training", "images": "noisy-image release", "clients": "federated training"}


@dataclass
class SessionRuns:
    """The private runs of one visitor on one data set that protect the same unit under the same relation."""

    ledger: PrivacyLedger
    keys: set = field(default_factory=set)
    reported: list = field(default_factory=list)  # (epsilon, delta) each run reported
    pages: dict = field(default_factory=dict)  # {page: runs recorded from it}
    sources: dict = field(default_factory=dict)  # {(page, source): runs recorded from that part of the page}

    @property
    def delta(self) -> float:
        """The total is stated at the sum of the runs' deltas, where basic composition holds too."""
        return min(sum(d for _, d in self.reported), 0.999)

    @property
    def epsilon(self) -> float:
        """dp_accounting's composition of all runs, never above the sum of their own epsilons (basic composition,
        which states that sum at the sum of their deltas: no bound once those reach 1, where :attr:`delta` stops)."""
        deltas = sum(d for _, d in self.reported)
        basic = sum(e for e, _ in self.reported) if deltas <= self.delta else math.inf
        return min(self.ledger.epsilon_at(self.delta), basic)


def session_ledger(data: str, *, unit: str = "records", neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                   store: dict | None = None, federation: str | None = None) -> SessionRuns:
    """This visitor's runs on ``data`` protecting ``unit`` under ``neighbouring`` (created empty on first use); for
    clients, those of one simulated ``federation`` (:func:`~dpcore.federated.fedavg.federation_of`: a client of one
    federation is no client of another, so their runs compose apart)."""
    store = st.session_state.setdefault(SESSION_KEY, {}) if store is None else store
    rel = Neighbouring.of(neighbouring)
    fed = (federation or "") if unit == "clients" else ""
    return store.setdefault((data, unit, rel, fed), SessionRuns(PrivacyLedger(delta=0.0, neighbouring=rel, unit=unit)))


def record_run(data: str, run_key, *, event: dp_accounting.DpEvent | None, epsilon: float, delta: float,
               neighbouring: Neighbouring | None, unit: str = "records", store: dict | None = None,
               page: str | None = None, source: str | None = None, federation: str | None = None) -> bool:
    """Spend one run's event on the session ledger of ``data``, once per ``run_key``; True if it was new.

    Runs without an event (not private) are not recorded: they have no guarantee to compose. A private run whose
    epsilon is infinite (a noise too small for any guarantee) is recorded: released with the others, it leaves their
    total without one, so the total is infinite too. ``page``: the page that made the run (the caption counts the
    runs per page when several pages ran on the data).
    """
    if event is None or neighbouring is None:
        return False
    runs = session_ledger(data, unit=unit, neighbouring=neighbouring, store=store, federation=federation)
    if run_key in runs.keys:
        return False
    said = len(runs.ledger.caveats)
    with reasons_unsaid():
        runs.ledger.spend(event)
    for reason in runs.ledger.caveats[said:]:  # the run's own reasons; the session's total is read at the session's
        if not reason.startswith(PURE_READ):    # delta (SessionRuns.epsilon), not at the ledger's own 0
            warnings.warn(reason, DPCoreWarning, stacklevel=user_stacklevel())
    runs.keys.add(run_key)
    runs.reported.append((float(epsilon), float(delta)))
    if page:
        runs.pages[page] = runs.pages.get(page, 0) + 1
        runs.sources[page, source] = runs.sources.get((page, source), 0) + 1
    return True


def _field(run, *names: str):
    """The first of ``names`` that ``run`` (a mapping or an object) holds with a value other than None."""
    for name in names:
        value = run.get(name) if isinstance(run, Mapping) else getattr(run, name, None)
        if value is not None:
            return value
    return None


def release_of(run) -> dict | None:
    """What one run released, for :func:`record_run`: ``event``, ``epsilon``, ``delta``, ``neighbouring`` and
    ``unit``; None for a run that is not private (no event, or no relation: a non-private baseline, a reference).

    ``run`` is a page's result mapping (the Train page's ``out``), a run's result (``RunResult``, ``FedAvgResult``,
    ``PateResult``: ``event`` or ``dp_event``) or a sweep table's row (its event stored as JSON text, its relation
    spelled, empty without a guarantee). A run that leaked privacy besides (``leaks_privacy``: e.g. features
    standardised with the private rows' statistics) has no guarantee, whatever its accountant said: it is recorded as
    dp_accounting's non-private event, and the total becomes infinite. A private run whose event was not kept (a row
    of older code) composes as the (ε, δ) it reported (:class:`~dpcore.accounting.EpsilonDeltaDpEvent`, basic
    composition), or as no guarantee when that ε is infinite.
    """
    relation = _field(run, "neighbouring", "neighbouring_")
    if relation is None or (isinstance(relation, float) and math.isnan(relation)) or relation == "":
        return None
    event = _field(run, "event", "dp_event", "dp_event_")
    if isinstance(event, str):
        event = event_from_json(json.loads(event)) if event else None
    epsilon = float(_field(run, "epsilon", "epsilon_spent_"))
    if math.isnan(epsilon):  # the run failed: it released nothing
        return None
    delta = float(_field(run, "delta", "delta_") or 0.0)
    if isinstance(event, dp_accounting.NonPrivateDpEvent):  # said to protect something, with no guarantee
        epsilon = math.inf
    elif event is None:
        event = (EpsilonDeltaDpEvent(epsilon, min(delta, 1.0)) if math.isfinite(epsilon)
                 else dp_accounting.NonPrivateDpEvent())
    if bool(_field(run, "leaks_privacy")):
        event, epsilon = dp_accounting.NonPrivateDpEvent(), math.inf
    return {"event": event, "epsilon": epsilon, "delta": delta, "neighbouring": Neighbouring.of(relation),
            "unit": _field(run, "unit") or "records", "federation": _field(run, "federation") or None}


def record_release(data, run_key, run, *, page: str | None = None, source: str | None = None,
                   store: dict | None = None, leaks_privacy: bool = False) -> bool:
    """Record ``run`` (anything :func:`release_of` reads) in this session's total on ``data``, once per ``run_key``;
    True if it was new. A run that is not private is not recorded. ``page`` and ``source``: :func:`record_run`.
    ``leaks_privacy``: the run's data leaked besides its noise, though the run's result does not say so (a
    ``PateResult`` or ``FedAvgResult`` on an upload whose bounds were read from its rows,
    :func:`dpcore.ui.uploads.leaks_bounds`): recorded with no guarantee, as :func:`release_of` records a leaking run."""
    release = release_of(run)
    if release is None:
        return False
    if leaks_privacy:
        release |= {"event": dp_accounting.NonPrivateDpEvent(), "epsilon": math.inf}
    return record_run(data, run_key, **release, page=page, source=source, store=store)


def sweep_releases(table: pd.DataFrame, identity: tuple[str, ...] = ("learner", "value", "seed")) -> list:
    """A sweep table's private runs as ``[(identity, release), ...]``: each run named by its ``identity`` columns
    (learner, swept value and seed: one release each) with what :func:`release_of` reads from its row, plain values
    only, so the list pickles with a cached chart (``DataFrame.attrs``). Baselines and references are left out."""
    if table is None or not len(table) or "neighbouring" not in table:
        return []
    keep = [c for c in ("event", "epsilon", "delta", "neighbouring", "unit", "federation", "leaks_privacy")
            if c in table]
    out = []
    for row in table[[*identity, *keep]].to_dict("records"):
        if not row.get("neighbouring") or (isinstance(row["neighbouring"], float) and math.isnan(row["neighbouring"])):
            continue
        out.append((tuple(_plain(row[c]) for c in identity), {c: _plain(row[c]) for c in keep}))
    return out


def _plain(value):
    """A numpy scalar as the Python value it holds (a key equal across a table and its cached copy)."""
    return value.item() if hasattr(value, "item") else value


def run_key_of(*inputs, seed: int | None) -> tuple:
    """The key of a run a page makes on a click and keeps in the session (not memoised on its inputs): its inputs and
    its seed, which fix its noise (clicking again with them draws the same release); with secure noise
    (``seed=None``) every click draws fresh noise, a new release, so each gets a key of its own."""
    if seed is not None:
        return (*inputs, int(seed))
    n = st.session_state.get(_SECURE_CLICKS, 0) + 1
    st.session_state[_SECURE_CLICKS] = n
    return (*inputs, "secure", n)


#: session-state key of the count of secure runs made on a click (:func:`run_key_of`)
_SECURE_CLICKS = "session.secure_runs"


def record_chart(dataset, key: tuple, chart: pd.DataFrame | None, *, page: str,
                 source: str = "the chart's points") -> int:
    """Record the private runs behind a page's chart (their :func:`sweep_releases`, kept in ``chart.attrs
    ["releases"]``) in the session's total on ``dataset``, under ``key`` (the chart's inputs: the same inputs show
    the same runs again, from the server's store)."""
    from .uploads import data_key

    if chart is None:
        return 0
    return record_releases(data_key(dataset), key, chart.attrs.get("releases", ()), page=page, source=source)


def record_releases(data, key: tuple, releases: Iterable, *, page: str | None = None, source: str | None = None,
                    store: dict | None = None, leaks_privacy: bool = False) -> int:
    """Record each ``(identity, run)`` of ``releases`` (e.g. :func:`sweep_releases`) under ``(*key, *identity)``;
    returns how many were new. ``leaks_privacy``: as for :func:`record_release`, for every one of them."""
    return sum(record_release(data, (*key, *identity), run, page=page, source=source, store=store,
                              leaks_privacy=leaks_privacy)
               for identity, run in releases)


def session_total_text(data: str, title: str, *, store: dict) -> str | None:
    """One paragraph on what this session's private runs on ``data`` would cost if all were released."""
    groups = [(key, runs) for key, runs in store.items() if key[0] == data and runs.reported]
    groups.sort(key=lambda g: UNITS.index(g[0][1]) if g[0][1] in UNITS else len(UNITS))  # whole records first
    if not groups:
        return None
    parts, kinds = [], []
    both = sum(unit == "records" for (_, unit, _, _), _ in groups) > 1  # add/remove and replace-one runs on one data
    federations = len({fed for (_, unit, _, fed), _ in groups if unit == "clients"})
    for (_, unit, rel, fed), runs in groups:
        n = len(runs.reported)
        # the total delta is spent too: rounded up as the epsilon is (3.34e-05 reads 3.4e-05, never 3.3e-05)
        total = f"ε = {format_epsilon(runs.epsilon, 4)}" + (
            f", δ = {round_epsilon(runs.delta, 2):.2g}" if runs.delta > 0 else "")
        if unit != "records" and math.isinf(runs.epsilon):  # no guarantee: "protected ... (ε = ∞ ...)" said nothing
            one = n == 1
            what = UNIT_RUNS.get(unit, f"{unit} run")
            parts.append(f"**{n} {what}{'' if one else 's'}** gave no guarantee for {UNIT_SAID.get(unit, unit)} "
                         f"({total}).")
        elif unit == "clients":  # a client's whole data: more than a record, of another kind (user-level DP)
            one = n == 1
            neighbour = "one client added or removed" if rel is Neighbouring.ADD_REMOVE else "one client replaced"
            where = f" (federation of {fed})" if federations > 1 and fed else ""  # which one, when there are several
            parts.append(f"**{n} {UNIT_RUNS['clients']}{'' if one else 's'}**{where} protected "
                         f"{UNIT_SAID['clients']} ({total} for {'it' if one else 'them'}, {neighbour}): a record "
                         f"added changes what its client holds, so {'it adds' if one else 'they add'} to no total of "
                         "records.")
        elif unit != "records":
            what = UNIT_RUNS.get(unit, f"{unit} run")
            one = n == 1
            parts.append(f"**{n} {what}{'' if one else 's'}** protected only {UNIT_SAID.get(unit, unit)} ({total} "
                         f"for {'it' if one else 'them'}, {rel.description}); {'it' if one else 'they'} used the "
                         f"rest of each record in the clear, so {'it protects' if one else 'they protect'} no "
                         "whole record.")
        elif both:  # said in one sentence, the two kinds of neighbour side by side
            kinds.append((n, f"{n} counting {rel.description} (**{total}** for each record)"))
        elif n == 1:
            parts.append(f"This session has run **1 private training** on {title}: **{total}** for each record "
                         f"({rel.description}).")
        else:
            parts.append(f"This session has run **{n} private trainings** on {title}; if they were all released, "
                         f"the total would be **{total}** for each record ({rel.description}).")
    if kinds:  # whole records come first
        parts.insert(0, f"This session has run **{sum(n for n, _ in kinds)} private trainings** on {title}, under two "
                        f"kinds of neighbour: {' and '.join(said for _, said in kinds)}.")
    if federations > 1:
        parts.append("These federations deal the records out differently (another seed, another number of clients): "
                     "a client of one holds records of several clients of another, so their totals do not add up "
                     "into one.")
    if combined := _combined_records_text([runs for (_, unit, _, _), runs in groups if unit == "records"]):
        parts.append(combined)
    if where := _sources_text(runs for _, runs in groups):
        parts.append(where)
    return (" ".join(parts) + " Each new run adds to the total if released too; the non-private baselines are not "
            "counted.")


#: what the caption's help says of how the runs compose (kept off the caption itself: read at a glance, it says the
#: total and where its runs came from)
TOTAL_HELP = ("Runs on the same data compose: dp_accounting's RDP accountant adds up their privacy loss, never more "
              "than the sum of their ε. Each new run adds to the total if it is released too, whatever its seed or "
              "split; showing the same inputs again re-shows the same seeded run and adds nothing. The non-private "
              "baselines shown beside the private runs have no guarantee and are not covered.")


def _sources_text(groups: Iterable[SessionRuns]) -> str | None:
    """Where the runs were made, whenever there are more than one (the runs of every unit and relation on the data):
    "Where the 35 runs come from: Train a network 1 (the trained model); Classical models 34 (24 for the ε chart's
    points, 10 for the training-size chart's points)." When a source is a chart's or a sweep's points (its name says
    "point"), it adds that each point is a training of its own, so a count of 34 after one click reads as what it is."""
    pages: dict = {}
    for runs in groups:
        for (page, source), n in runs.sources.items():
            by = pages.setdefault(page, {})
            by[source] = by.get(source, 0) + n
    total = sum(sum(by.values()) for by in pages.values())
    if total < 2:
        return None
    said = []
    for page, by in pages.items():
        named = [(source, n) for source, n in by.items() if source]
        text = f"{page} {sum(by.values())}"
        if len(by) == 1 and named:
            text += f" ({named[0][0]})"
        elif named:
            text += " (" + ", ".join(f"{n} for {source}" for source, n in named) + ")"
        said.append(text)
    points = any(n > 1 and source and "point" in source for by in pages.values() for source, n in by.items())
    return (f"Where the {total} runs come from: " + "; ".join(said) + "."
            + (" Each point of a chart, for each seed and learner, is a private training of its own." if points
               else ""))


def _combined_records_text(groups: list[SessionRuns]) -> str | None:
    """One bound for whole records when runs under add/remove and under replace-one were both made on the data.

    dp_accounting composes runs under one relation; the two totals cannot be added as they are. A replace-one
    guarantee says nothing about a record added or removed, but an add/remove one does say something about a record
    replaced (:func:`~dpcore.accounting.replace_one_guarantee`: (2ε, (1 + e^ε) δ)), so the bound for both is
    stated for a record replaced, the two guarantees adding up (basic composition). The add/remove total is read on
    its ledger's curve at the δ′ that keeps (1 + e^ε) δ′ within its own δ (:func:`~dpcore.accounting.
    replace_one_within`): read at its own δ, its δ grew 1 + e^ε times (a total of ε 11 gave δ 0.67, or passed 1).
    """
    if len(groups) < 2:
        return None
    with reasons_unsaid():  # the session's own totals said their reasons; the search reads its curves below them
        restated = [restated_for_replaced(runs.ledger.epsilon_at, runs.epsilon, runs.delta, runs.ledger.neighbouring)
                    for runs in groups]
    epsilon, delta, _ = compose_guarantees(restated)
    if not math.isfinite(epsilon):
        if any(not math.isfinite(runs.epsilon) for runs in groups):
            return "**Together: no bound**, a total above being infinite."
        # a guarantee for a record added or removed holds for a record replaced only with δ times 1 + e^ε (Dwork &
        # Roth 2014, group privacy): at every point of the add/remove total's curve that passes its own δ
        return ("**Together: no bound** (for a record replaced, the add-or-remove total's δ grows 1 + e^ε times, "
                "past 1).")
    n = sum(len(runs.reported) for runs in groups)
    return (f"**Together**, the {n} trainings are at most **ε = {format_epsilon(epsilon, 4)}, "
            f"δ = {round_epsilon(delta, 2):.2g}** for each record replaced: a guarantee for a record added or removed "
            "holds at twice its ε (and δ times 1 + e^ε) for a record replaced (removed, then another added; Dwork & "
            "Roth 2014, group privacy), read here at a smaller δ that keeps δ times 1 + e^ε within its own, and the "
            "two totals then add up.")


def show_session_total(dataset, run_key: tuple, out: dict, *, page: str = "Train a network",
                       source: str = "the trained model") -> None:
    """Record the run on show (once) and draw the session's running total on ``dataset`` as a caption.

    ``run_key`` is the page's key of the run (its first item identifies the data, uploads
    included); ``out`` holds the run's ``event``, ``epsilon``, ``delta``, ``neighbouring``, ``unit`` (what of
    each record its ε protects; whole records when absent) and ``leaks_privacy`` (:func:`release_of`).
    """
    store = st.session_state.setdefault(SESSION_KEY, {})
    data = run_key[0]
    # a run that leaked besides its ε: no guarantee
    record_release(data, run_key, out, store=store, page=page, source=source)
    show_data_total(dataset, data=data)


def show_data_total(dataset, *, data=None, title: str | None = None, container=None) -> None:
    """Draw this session's running total on ``dataset`` (what every page recorded on it) as a caption in
    ``container`` (the page by default; a slot drawn under a page's first result, filled once all of its runs are
    recorded). ``data``: its key, :func:`dpcore.ui.uploads.data_key` of it unless given."""
    from .uploads import data_key

    store = st.session_state.setdefault(SESSION_KEY, {})
    data = data_key(dataset) if data is None else data
    if text := session_total_text(data, title or getattr(dataset, "title", str(data)), store=store):
        (st if container is None else container).caption(f"**Session total.** {text}", help=TOTAL_HELP)
