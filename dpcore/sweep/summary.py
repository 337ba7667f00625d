"""Across-seed summaries of a sweep table: what the chart draws and the CLI prints."""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Mapping, NamedTuple

import numpy as np
import pandas as pd

from ..defaults import DELTA
from ..exceptions import DPCoreError, DPValueError
from ..teaching.verdict import EPSILON_TOLERANCE, epsilon_text, round_epsilon


def summarize(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean, std, min, max and count of ``metric`` across seeds, per (learner, role, value).

    Also the epsilon actually spent, the largest of the group's runs (each run is a release of its own: should runs
    of one point spend different epsilons, their mean is below what one of them spent; ``nan`` if any run's is
    unknown, where a mean or a maximum skipped it) and, when the table has the
    ``leaks_privacy`` column, whether any run of the group leaked (its epsilon is then
    not a guarantee). Baseline rows (``value`` NaN) give one
    row per baseline learner. ``std`` is the sample standard deviation (0 for one seed).

    >>> t = pd.DataFrame({"learner": ["a", "a"], "role": ["swept"] * 2, "value": [1.0, 1.0],
    ...                   "seed": [0, 1], "accuracy": [0.5, 0.7], "epsilon": [1.0, 1.0]})
    >>> summarize(t, "accuracy")[["mean", "min", "max", "n"]].round(3).to_dict("records")
    [{'mean': 0.6, 'min': 0.5, 'max': 0.7, 'n': 2}]
    """
    if metric not in table.columns:
        raise DPValueError(f"metric {metric!r} is not a column of the sweep table; it has {list(table.columns)}")
    cols = ["learner", "role", "value", "mean", "std", "min", "max", "n", "epsilon_spent"]
    leaks = "leaks_privacy" in table.columns
    if leaks:
        cols.append("leaks_privacy")
    if table.empty:
        return pd.DataFrame(columns=cols)
    t = table.copy()
    if not leaks:
        t["leaks_privacy"] = False
    t["_v"] = t["value"].fillna(-np.inf)  # groupby drops NaN keys; baselines have value NaN
    g = t.groupby(["learner", "role", "_v"], sort=False)
    out = g.agg(
        value=("value", "first"),
        mean=(metric, "mean"),
        std=(metric, "std"),
        min=(metric, "min"),
        max=(metric, "max"),
        n=(metric, "count"),
        epsilon_spent=("epsilon", lambda e: e.max(skipna=False)),
        leaks_privacy=("leaks_privacy", "any"),
    ).reset_index()
    out["std"] = out["std"].fillna(0.0)
    out["n"] = out["n"].astype(int)
    return out[cols].sort_values(["role", "learner", "value"], kind="stable").reset_index(drop=True)


#: The neighbouring relations of a sweep table's ``neighbouring`` column, in words (the CSV keeps the identifiers).
NEIGHBOURS_SAID = {"add-remove": "one record added or removed", "replace-one": "one record replaced by another"}


def neighbours_said(relation: str, unit: str | None = "records") -> str:
    """A row's ``neighbouring`` in words, of what its ``unit`` counts: a federation's neighbour is a client, not a
    record ("one client added or removed"); "" for a run without a guarantee.

    >>> neighbours_said("add-remove"), neighbours_said("add-remove", "clients")
    ('one record added or removed', 'one client added or removed')
    """
    said = NEIGHBOURS_SAID.get(relation, relation) if relation else ""
    return said.replace("record", "client") if unit == "clients" else said


def neighbouring_note(table: pd.DataFrame, *, markdown: bool = True,
                      wordings: Mapping[str, tuple[str, str]] | None = None) -> str | None:
    """A sentence when the swept private learners' ε do not protect the same thing, so that one ε axis does not
    pass them off as one unit: a different unit (a whole record, a label only, a client's whole data), or the same
    unit under different neighbours (one record added or removed, or one replaced). None when they agree. The
    Trade-off explorer shows it under its chart, the ``sweep`` command on stderr. ``wordings`` gives each learner's
    title and what its ε protects (:meth:`~dpcore.sweep.SweepConfig.wordings`); by default the registry's."""
    if "neighbouring" not in table:
        return None
    if wordings is None:
        from ..learners import learners

        wordings = {name: (spec.title, spec.wording.protects) for name, spec in learners().items()}
    rows = table[(table.role == "swept") & table.neighbouring.fillna("").astype(bool)]
    each = {}  # learner -> (what its ε protects, its neighbours in words)
    for name, group in rows.groupby("learner", sort=False):
        unit = str(group["unit"].iloc[0] or "records") if "unit" in group else "records"
        each[name] = (wordings[name][1] if name in wordings else "",
                      tuple(sorted({neighbours_said(r, unit) for r in group.neighbouring})))
    units, relations = {u for u, _ in each.values()}, {r for _, rs in each.values() for r in rs}
    if len(units) < 2 and len(relations) < 2:
        return None

    def title(name: str) -> str:
        return wordings[name][0] if name in wordings else name

    if len(units) > 1:
        parts = [f"{title(n)}: {unit} ({' or '.join(rels)})" for n, (unit, rels) in each.items()]
        head = "**Different guarantees on one ε axis.** " if markdown else "note: different guarantees on one axis: "
        return (head + "; ".join(parts) + ". The same ε does not protect the same thing here: set curves side by "
                "side only where they protect the same unit.")
    parts = [f"{title(n)}: {' or '.join(rels)}" for n, (_, rels) in each.items()]
    head = "**Two meanings of ε on one axis.** " if markdown else "note: two meanings of epsilon on one axis: "
    # (ε, δ) under add-or-remove is (2ε, (1 + e^ε)δ) under replace-one (group privacy, Dwork & Roth 2014), as the
    # session's total restates it: "at most 2ε" alone read as if δ carried over, which the total then contradicted
    return (head + "; ".join(parts) + ". A record replaced is one removed and another added, so (ε, δ) under "
            "add-or-remove gives at most (2ε, (1 + e^ε)δ) under replace-one: at the same ε the add-or-remove curve "
            "carries the stronger guarantee, by up to a factor 2 in ε (the `neighbouring` column of the table and of "
            "the CSV says which each run has).")


#: A run spends more than the ε it was given beyond this factor of it: a calibration that lands at 0.9999 of its
#: target, or a float rounded just above it (within EPSILON_TOLERANCE, as an ε is shown), spends that ε. (At 1.01, a
#: run that spent 1.009 at ε = 1 was recommended, and its verdict banded, as ε = 1.)
OVERSPEND = 1.0 + EPSILON_TOLERANCE


def spends_more(table: pd.DataFrame) -> pd.Series:
    """Per row of a sweep table: a swept run that spent more than :data:`OVERSPEND` times the ε it was given
    (``epsilon_target``: on the ε axis, its x value). Output perturbation does, by design: its ε is per released
    answer and every test answer is released (Dwork et al. 2006: m answers at ε each compose to m·ε). A sweep that
    sets σ has no target (NaN), so none of its rows does.

    >>> t = pd.DataFrame({"role": ["swept"] * 3 + ["baseline"], "epsilon": [0.9999, 45.0, 1.0, np.inf],
    ...                   "epsilon_target": [1.0, 0.1, np.nan, np.nan]})
    >>> spends_more(t).tolist()
    [False, True, False, False]
    """
    if table.empty or "epsilon_target" not in table or "epsilon" not in table:
        return pd.Series(False, index=table.index, dtype=bool)
    spent = pd.to_numeric(table["epsilon"], errors="coerce")
    target = pd.to_numeric(table["epsilon_target"], errors="coerce")
    return (table["role"] == "swept") & (target > 0) & np.isfinite(target) & (spent > OVERSPEND * target)


def _composed_count(events: pd.Series) -> int | None:
    """The count of the runs' ``SelfComposedDpEvent`` when they all are one, with the same count; else None."""
    counts = set()
    for text in events.fillna(""):
        try:
            event = json.loads(text) if text else {}
        except ValueError:
            return None
        if not isinstance(event, dict) or event.get("dp_event") != "SelfComposedDpEvent":
            return None
        counts.add(event.get("count"))
    return counts.pop() if len(counts) == 1 and isinstance(next(iter(counts)), int) else None


def spent_text(epsilon: float, *, infinity: str = "∞") -> str:
    """An ε (or a multiple of one) as text: 3 significant figures rounded up (never below the ε spent), thousands
    separated, so that an ε spent reads "9,000", not "9e+03"; small values as ``:g`` writes them; ``infinity`` for an
    infinite one. The one wording of an ε spent, for the Trade-off explorer's point labels, :func:`overspent_note` and
    the advisor.

    >>> [spent_text(e) for e in (9000.0, 2390.4, 1234567.0, 4.5, 0.31623, float("inf"))]
    ['9,000', '2,400', '1,240,000', '4.5', '0.317', '∞']
    """
    return epsilon_text(epsilon, infinity=infinity)


def _eps(v: float, markdown: bool) -> str:
    return spent_text(v, infinity="∞" if markdown else "inf")


def overspent_note(table: pd.DataFrame, *, markdown: bool = True,
                   wordings: Mapping[str, tuple[str, str]] | None = None) -> str | None:
    """A sentence when swept learners spent more than the ε they were given (:func:`spends_more`), so that a point
    drawn at ε = 0.1 on the axis is not read as a run spending 0.1: for each such learner, what its ε protects,
    how many times its runs compose it (read off their dp_accounting events) and the ε they spent in total. None
    when every run spent at most its ε. The Trade-off explorer shows it under its chart, whose points of these
    learners are labelled with the ε they spent; the ``sweep`` command prints it on stderr. ``wordings``: as for
    :func:`neighbouring_note`.

    >>> event = '{"dp_event": "SelfComposedDpEvent", "count": 450}'
    >>> t = pd.DataFrame({"learner": ["op", "op"], "role": ["swept"] * 2, "epsilon": [45.0, 450.0],
    ...                   "epsilon_target": [0.1, 1.0], "event": [event] * 2})
    >>> print(overspent_note(t, markdown=False, wordings={"op": ("Output perturbation", "each record, per answer")}))
    note: epsilon spent exceeds the epsilon given: Output perturbation: its ε protects each record, per answer; each \
run composes the ε it is given 450 times (its dp_accounting event), so epsilon = 0.1 spends epsilon = 45 in all, 1 \
spends 450. Compare its rows by the epsilon they spent (the epsilon and epsilon_spent columns), not by the epsilon \
given.
    """
    over = spends_more(table)
    if not over.any():
        return None
    if wordings is None:
        from ..learners import learners

        wordings = {name: (spec.title, spec.wording.protects) for name, spec in learners().items()}
    e = "ε" if markdown else "epsilon"
    parts = []
    for name, g in table[over].groupby("learner", sort=False):
        title, protects = wordings.get(name, (name, ""))
        spent = g.groupby("epsilon_target")["epsilon"].max().sort_index()  # the largest over the seeds
        ratio = spent / spent.index.to_numpy()
        count = _composed_count(g["event"]) if "event" in g else None
        if count is not None and np.allclose(ratio, count, rtol=0.01):
            how = f"each run composes the ε it is given {count} times (its dp_accounting event)"
        elif np.isfinite(ratio).all() and np.allclose(ratio, ratio.iloc[0], rtol=0.01):
            how = f"each run spends {_eps(float(ratio.iloc[0]), markdown)} times the ε it is given"
        else:
            how = "its runs spend more than the ε they are given"
        pairs = [(float(t), float(s)) for t, s in spent.items()]
        if len(pairs) > 3:
            pairs = [pairs[0], pairs[-1]]
        said = ", ".join(f"{_eps(t, markdown)} spends {e + ' = ' if i == 0 else ''}{_eps(s, markdown)}"
                         + (" in all" if i == 0 else "") for i, (t, s) in enumerate(pairs))
        ranged = " (from the smallest to the largest tried)" if len(spent) > 3 else ""
        parts.append(f"{title}: " + (f"its ε protects {protects}; " if protects else "") + f"{how}, so {e} = {said}"
                     + ranged)
    head = (f"**{e} spent exceeds the {e} given.** " if markdown else
            f"note: {e} spent exceeds the {e} given: ")
    its = "its" if len(parts) == 1 else "their"
    tail = (f"Read {its} points by the ε they spent (the label beside each point, and the **ε spent** columns "
            "below), not by the ε given." if markdown else
            f"Compare {its} rows by the epsilon they spent (the epsilon and epsilon_spent columns), not by the "
            "epsilon given.")
    return head + "; ".join(parts) + ". " + tail


def spent_beyond_axis(point: pd.Series, axis: str) -> float | None:
    """The ε a point of the summary (:func:`summarize`) spent, when the axis is ε and that is more than its x
    (:data:`OVERSPEND` times it: output perturbation's ε is per answer); else None.

    >>> spent_beyond_axis(pd.Series({"value": 0.1, "epsilon_spent": 45.0}), "epsilon")
    45.0
    >>> spent_beyond_axis(pd.Series({"value": 1.0, "epsilon_spent": 0.9999}), "epsilon") is None
    True
    """
    if axis != "epsilon":
        return None
    spent, value = float(point["epsilon_spent"]), float(point["value"])
    return spent if spent > OVERSPEND * value else None


def tied_with_best(swept: pd.DataFrame, best: pd.Series) -> list[pd.Series]:
    """The other swept points (rows of a summary) whose mean lies within the larger of the two points' spreads
    across seeds (sample standard deviation) of the best one: these runs do not tell them apart. Empty with one
    seed (no spread to judge by)."""
    out = []
    for _, r in swept.iterrows():
        if r.learner == best.learner and r.value == best.value:
            continue
        spread = max(float(r["std"]), float(best["std"]))
        if spread > 0 and abs(float(r["mean"]) - float(best["mean"])) <= spread:
            out.append(r)
    return out


@dataclass(frozen=True)
class BestSwept:
    """The best point of a sweep's swept curves (:func:`best_swept`).

    ``point``: its row of the summary; ``spent``: the ε its runs spent when that is more than the ε on the axis
    (only when every point overspends), else None; ``ties``: the other points within the seeds' spread of it
    (:func:`tied_with_best`); ``left_out``: how many points were passed over for spending more than their axis ε.
    """

    point: pd.Series
    spent: float | None
    ties: tuple[pd.Series, ...]
    left_out: int


def best_swept(summary: pd.DataFrame, *, axis: str, metric: str) -> BestSwept | None:
    """The best swept point of a summary (:func:`summarize`), wherever it lies on the axis: the highest mean (the
    lowest for MSE), the first of equal ones. None when no swept point has a mean.

    A point that spent more than its axis ε (:func:`spent_beyond_axis`: output perturbation's 450 answers at ε each)
    is no best at that ε, as the advisor does not count it either (:func:`dpcore.decision.advisor.judge`); it is the
    best only when every point overspends, and then ``spent`` says what it spent.

    >>> summ = pd.DataFrame({"learner": ["dpsgd", "dpsgd", "op"], "role": ["swept"] * 3, "value": [1.0, 10.0, 10.0],
    ...                      "mean": [0.90, 0.93, 0.96], "std": [0.0, 0.0, 0.0], "epsilon_spent": [1.0, 10.0, 4500.0]})
    >>> b = best_swept(summ, axis="epsilon", metric="accuracy")
    >>> (b.point.learner, float(b.point.value), b.spent, b.left_out)
    ('dpsgd', 10.0, None, 1)
    """
    swept = summary[summary.role == "swept"].dropna(subset=["mean"])
    if swept.empty:
        return None
    kept = swept[[spent_beyond_axis(r, axis) is None for _, r in swept.iterrows()]]
    left_out = 0 if kept.empty else len(swept) - len(kept)
    swept = kept if not kept.empty else swept
    best = swept.sort_values("mean", ascending=metric == "mse", kind="stable").iloc[0]
    return BestSwept(point=best, spent=spent_beyond_axis(best, axis), ties=tuple(tied_with_best(swept, best)),
                     left_out=left_out)


__all__ = ["NEIGHBOURS_SAID", "OVERSPEND", "BestSwept", "best_swept", "neighbouring_note", "neighbours_said",
           "leaked_runs", "overspent_note",
           "private_swept", "spends_more", "spent_beyond_axis", "spent_text", "summarize", "tied_with_best"]


def private_swept(table: pd.DataFrame) -> pd.DataFrame:
    """The swept runs of the learners that spend privacy: every learner with a finite epsilon somewhere, ALL of its
    runs, an infinite epsilon included (a search that looked at a run without a guarantee has none either: leaving
    it out of a composition understated it); a learner infinite everywhere is not private and is left out, as are
    runs without an epsilon (NaN: they failed and released nothing).

    >>> t = pd.DataFrame({"learner": ["a", "a", "b"], "role": ["swept"] * 3, "epsilon": [1.0, np.inf, np.inf]})
    >>> private_swept(t).epsilon.tolist()
    [1.0, inf]
    """
    swept = table[(table["role"] == "swept") & table["epsilon"].notna()]
    private = swept.groupby("learner", sort=False)["epsilon"].transform(lambda e: bool(np.isfinite(e).any()))
    return swept[private.astype(bool)]


class Composition(NamedTuple):
    """What :func:`composition` gives: the total ``epsilon`` and ``delta``, whether it is stated for a record
    replaced (``replaced``), and what of the data it protects (``unit``, :data:`~dpcore.accounting.UNITS`; None when
    the runs protect no one thing together, and the total is then infinite)."""

    epsilon: float
    delta: float
    replaced: bool
    unit: str | None


def composition(runs: pd.DataFrame) -> Composition:
    """The ``runs`` released together: their stored mechanisms composed by dp_accounting's RDP accountant
    (Mironov 2017; the session's total composes the same way, :class:`~dpcore.accounting.PrivacyLedger`), or added
    up by basic composition (Dwork & Roth 2014, Theorem 3.16: the epsilons add up at the sum of the deltas;
    :func:`~dpcore.accounting.compose_guarantees`) where that is smaller or a run's mechanism is not stored.

    The total is stated at the sum of the runs' deltas either way, and is the smaller of the two bounds there (both
    hold): twenty DP-SGD runs at ε 1 add up to 20 but compose to about 6. Pure ε-DP runs (Laplace, randomized
    response) add up as they are. Runs of one relation compose in one accountant; runs that do not say theirs, or
    whose ``event`` column is empty or absent (a table of an older version), are added up.

    Runs whose ``neighbouring`` column says different relations (DP-SGD a record added or removed, the ERMs a record
    replaced) have no sum under either as they are: a guarantee for a record replaced says nothing of one added or
    removed. The bound is then stated for a record replaced (``replaced`` is True): the add/remove runs' total read
    on its own privacy curve at the smaller δ′ that keeps (1 + e^ε)δ′ within its δ and counted as (2ε, (1 + e^ε)δ′)
    (:func:`~dpcore.accounting.restated_for_replaced`; read at its own δ, ten runs at ε 8 and δ 1e-5 stretched
    their deltas past 1 together, and the composition was infinite), a run without a stored event restated alone
    the same way, and a run that does not say its relation as (2ε, (1 + e^ε)δ) (group privacy,
    :func:`~dpcore.accounting.replace_one_guarantee`: never less than its own ε).

    Runs whose ``unit`` column says they protect different things have a sum only for what every one of them protects
    (:func:`~dpcore.accounting.common_unit`): label DP beside whole records, each record's label; label DP beside
    DP-FedAvg (a client's whole data), nothing, and the total is infinite with ``unit`` None. So are federated runs
    of different simulated federations (their ``federation`` column: the records dealt out with another seed or to
    another number of clients), whose clients are different groups of records, and federated runs that do not say
    their federation (no ``federation`` column, or an empty cell), which may be of any. A table without the ``unit``
    column is of whole records. A run that leaked privacy besides its noise (its ``leaks_privacy`` column: features
    scaled by the private rows' statistics, bounds read from them) has no guarantee, and counts as ε = ∞, as the
    session's total counts it (:func:`dpcore.ui.ledger.release_of`).

    >>> t = pd.DataFrame({"epsilon": [1.0, 0.5], "delta": [0.0, 1e-5], "neighbouring": ["replace-one", "add-remove"]})
    >>> eps, delta, replaced, unit = composition(t)
    >>> eps, round(delta, 10), replaced, unit
    (2.0, 2.64872e-05, True, 'records')
    >>> composition(t.assign(unit=["labels", "clients"]))
    Composition(epsilon=inf, delta=1.0, replaced=True, unit=None)
    """
    from ..accounting import Neighbouring, common_unit, compose_guarantees

    if not len(runs):
        return Composition(0.0, 0.0, False, "records")
    epsilons = pd.to_numeric(runs["epsilon"], errors="coerce").to_numpy(dtype=float)
    if "leaks_privacy" in runs:  # its epsilon is not a guarantee: a composition with it has none either
        epsilons = np.where(leaked_runs(runs), math.inf, epsilons)
    deltas = (pd.to_numeric(runs["delta"], errors="coerce").fillna(0.0).to_numpy(dtype=float) if "delta" in runs
              else np.zeros(len(runs)))
    said = runs["neighbouring"].fillna("").astype(str) if "neighbouring" in runs else [""] * len(runs)
    texts = [t if isinstance(t, str) else "" for t in runs["event"]] if "event" in runs else [""] * len(runs)
    replaced = len({Neighbouring.of(r) for r in said if r}) > 1
    rows: list[tuple] = []
    by_relation: dict = {}
    for e, d, r, text in zip(epsilons, deltas, said, texts):
        if r and text and math.isfinite(e):  # composed with the other runs of its relation
            by_relation.setdefault(Neighbouring.of(r), []).append((e, d, text))
        else:
            rows.append(_restated(e, d, r, text) if replaced else (e, d, r))
    for relation, group in by_relation.items():
        rows.extend(_composed(relation, group, replaced=replaced))
    epsilon, delta, _ = compose_guarantees(rows)
    unit = common_unit(runs["unit"].fillna("").astype(str) if "unit" in runs else ())
    federations = runs["federation"].fillna("").astype(str) if "federation" in runs else pd.Series([""] * len(runs))
    if unit == "clients" and (federations.nunique() > 1 or not federations.iloc[0]):
        unit = None  # a client of one simulated federation is no client of another (another seed, other clients),
        # and a run that does not say its federation may be of any other (as a ledger of clients refuses it)
    if unit is None:
        return Composition(math.inf, 1.0, replaced, None)
    return Composition(float(epsilon), float(delta), replaced, unit)


def _composed(relation, group: list[tuple], *, replaced: bool) -> list[tuple]:
    """The guarantees to add up for ``group``, runs ``(epsilon, delta, event text)`` of one ``relation``: one, their
    events composed by the RDP accountant and read at the sum of their deltas where that is below their sum (and, for
    a composition under both relations, an add/remove total restated for a record replaced on its curve); else the
    runs as they are (each restated alone where needed, :func:`_restated`)."""
    from ..accounting import Neighbouring, compose_guarantees, restated_for_replaced

    basic_epsilon, basic_delta, _ = compose_guarantees([(e, d, relation) for e, d, _ in group])
    curve = _events_curve(tuple(text for _, _, text in group), relation.value) if basic_delta > 0 else None
    tight = curve(basic_delta) if curve is not None else math.inf
    if curve is None or not tight < basic_epsilon:
        return [_restated(e, d, relation.value, text) if replaced else (e, d, relation.value) for e, d, text in group]
    if replaced and relation is Neighbouring.ADD_REMOVE:
        return [restated_for_replaced(curve, tight, basic_delta, relation)]
    return [(tight, basic_delta, relation.value)]


@functools.lru_cache(maxsize=64)
def _events_curve(texts: tuple[str, ...], relation: str):
    """The ε-at-δ curve of the stored events ``texts`` composed under ``relation`` by the RDP accountant (the
    seeds of one point share their event), or None where one cannot be read or composed."""
    from ..accounting import PrivacyLedger, event_from_json
    from ..accounting.ledger import reasons_unsaid
    from ..runtime.thread_warnings import ignored

    try:
        ledger = PrivacyLedger(delta=DELTA, neighbouring=relation)
        with reasons_unsaid(), ignored():  # this thread's only: a server runs other visitors' beside it
            for text in texts:
                ledger.spend(event_from_json(json.loads(text)))
    except (DPCoreError, ValueError, TypeError):
        return None
    return ledger.epsilon_at


def _restated(epsilon: float, delta: float, relation: str, event_text) -> tuple:
    """One run's ``(epsilon, delta, relation)`` for a composition under both relations: an add/remove run with an
    event restated for a record replaced on its event's curve (:func:`~dpcore.accounting.restated_for_replaced`),
    any other as it is."""
    from ..accounting import Neighbouring, restated_for_replaced

    if not (relation and Neighbouring.of(relation) is Neighbouring.ADD_REMOVE and isinstance(event_text, str)
            and event_text and math.isfinite(epsilon) and 0 < delta < 1):
        return epsilon, delta, relation
    curve = _event_curve(event_text)
    if curve is None:
        return epsilon, delta, relation
    return restated_for_replaced(curve, epsilon, delta, Neighbouring.ADD_REMOVE)


@functools.lru_cache(maxsize=256)
def _event_curve(event_text: str):
    """The ε-at-δ curve of a stored event under add/remove (its RDP composed once, read at any δ; the seeds of one
    point share their event), or None for an event that cannot be read."""
    return _events_curve((event_text,), "add-remove")


def leaked_runs(runs: pd.DataFrame) -> np.ndarray:
    """Which of ``runs`` leaked privacy besides their noise (the ``leaks_privacy`` column; False where it is empty)."""
    if "leaks_privacy" not in runs:
        return np.zeros(len(runs), dtype=bool)
    return runs["leaks_privacy"].map(lambda v: isinstance(v, (bool, np.bool_)) and bool(v)
                                     or str(v).strip().lower() == "true").to_numpy(dtype=bool)


def composition_unit_text(unit: str | None) -> str:
    """What a composition protects, in words, when not whole records: " for each record's label"; "" for records.

    >>> composition_unit_text("labels"), composition_unit_text("records")
    (" for each record's label only", '')
    """
    from ..accounting import UNIT_SAID

    if unit is None:
        return (" (no one guarantee covers them all: they protect different things, such as a record's label and a "
                "client's whole data, or the clients of different simulated federations)")
    return "" if unit == "records" else f" for {UNIT_SAID[unit]} only"


def composition_delta_text(delta: float) -> str:
    """" at δ = ..." for a composed epsilon stated at ``delta`` (two figures, rounded up as a delta spent is), or ""
    at delta 0.

    >>> composition_delta_text(3.34e-5), composition_delta_text(0.0)
    (' at δ = 3.4e-05', '')
    """
    return f" at δ = {round_epsilon(delta, 2):.2g}" if delta > 0 else ""


def tuning_tax(table: pd.DataFrame, *, delta: float) -> pd.DataFrame:
    """What picking the best point of a sweep costs in privacy, per swept private learner.

    A sweep trains one model per candidate value and seed; choosing the best of K candidates on the
    private data spends more than one run. Released together, the runs compose: every run (each seed of a
    candidate included, a model of its own) counts, composed by dp_accounting's RDP accountant or added up
    (:func:`composition`), the ``composition_epsilon`` column, at the sum of their deltas (``composition_delta``).
    Papernot & Steinke (2022) show that if the number of runs is itself random (Poisson with mean K) and only the best
    is released, the whole search costs one run's Rényi DP plus a term growing with log K: the ``search_epsilon``
    column, from dp_accounting's
    ``RepeatAndSelectDpEvent`` with the runs' own event. It needs every candidate to be
    the same mechanism (sweeping the clip norm or the learning rate changes no noise); when
    the candidates' events differ (sweeping epsilon, the noise or the epochs) the column is
    NaN and ``note`` says why. Seeds are repetitions of the same candidate, not candidates: a candidate is scored by
    the mean of its seeds' runs, each a model trained on the private rows, so the mechanism repeated is all of them
    (the run's event composed once per seed), not one run.

    Returns a DataFrame with ``learner``, ``candidates``, ``run_epsilon``, ``search_epsilon``,
    ``composition_epsilon``, ``composition_delta`` and ``note``.
    """
    import dp_accounting

    from ..accounting import event_from_json, repeat_and_select_epsilon

    rows = []
    swept = private_swept(table) if "event" in table else table.iloc[:0]
    for learner, group in swept.groupby("learner", sort=False):
        k = int(group["value"].nunique())
        texts = set(group["event"].fillna(""))
        run_eps = float(group["epsilon"].max())
        # every run released, composed: a seed is a model of its own, trained on the private rows with its own noise
        composed, composed_delta, replaced, unit = composition(group)
        row = {"learner": learner, "candidates": k, "run_epsilon": run_eps, "search_epsilon": np.nan,
               "composition_epsilon": composed, "composition_delta": composed_delta, "note": ""}
        if not np.isfinite(run_eps):
            row["note"] = "a candidate's epsilon is infinite (no privacy guarantee), and so is the search's"
        elif leaked_runs(group).any():
            row["note"] = ("a run leaked privacy besides its noise (see the warnings): its epsilon is not a guarantee, "
                           "and neither is the search's nor the composition's")
        elif "" in texts:
            row["note"] = "a run has no stored event (computed by an older version): rerun the sweep"
        elif len(texts) > 1:
            row["note"] = ("the candidates are different mechanisms (the swept knob changes the noise), so the "
                           "repeat-and-select bound of one mechanism does not apply: basic composition only")
        else:
            event = event_from_json(json.loads(texts.pop()))
            seeds = int(group.groupby("value", sort=False).size().max())  # the runs one candidate's score reads
            if seeds > 1:
                event = dp_accounting.SelfComposedDpEvent(event, seeds)
            try:
                row["search_epsilon"] = repeat_and_select_epsilon(event, candidates=k, delta=delta or DELTA)
            except DPCoreError:
                row["note"] = ("dp_accounting has no Renyi analysis of this mechanism (a guarantee proved by a "
                               "theorem), so its repetition cannot be accounted: basic composition only")
            else:
                if delta == 0:
                    row["note"] = f"read at delta = {DELTA:g} (the Renyi bound of a repeated search needs a delta > 0)"
        if replaced:  # its runs protect different neighbours (a sweep of the sampling): see composition()
            row["note"] = "; ".join(filter(None, [row["note"], "the composition is for a record replaced"]))
        if unit is None:  # one learner's runs: federations dealt out anew by each seed
            row["note"] = "; ".join(filter(None, [row["note"], "no one guarantee covers these runs together: each "
                                                  "seed deals the records out to other clients (another simulated "
                                                  "federation), so no client is protected by all of them"]))
        elif unit != "records":  # label DP, noisy images, a federation: what the composition protects
            row["note"] = "; ".join(filter(None, [row["note"], f"the composition is{composition_unit_text(unit)}"]))
        rows.append(row)
    return pd.DataFrame(rows, columns=["learner", "candidates", "run_epsilon", "search_epsilon",
                                       "composition_epsilon", "composition_delta", "note"])
