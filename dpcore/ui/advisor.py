"""Streamlit side of the ε advisor (:mod:`dpcore.decision.advisor`) and the decision report
(:mod:`dpcore.decision.report`), and the Trade-off explorer's one notice of warnings.

The advisor reads the sweep the page already ran; the attack at the recommended ε trains one more model, on a button.
The report is built in memory and handed to ``st.download_button``: for an uploaded file nothing of it (nor the
attack) is written to disk.
"""
from __future__ import annotations

from typing import Sequence

import streamlit as st

from ..decision.advisor import (
    ADVISOR_CONFIDENCE,
    ADVISOR_POINTS,
    ADVISOR_SEEDS,
    Advice,
    Need,
    attack_evidence,
    classification_metrics,
    dataset_labels,
    default_need,
    judge,
    metric_name,
)
from ..decision.report import ATTACK_CAVEAT
from ..exceptions import DPCoreError, PrivacyLeakWarning
from ..sweep import SweepResult, from_upload, table_warnings
from ..teaching.verdict import confidence_text
from .common import bounded_number, format_epsilon, in_page_words
from .sweep import _where_raised, title_of

ATTACKS = "sweep.advisor.attacks"


def _sentence(msg: str) -> str:
    msg = msg.rstrip()
    return msg if msg.endswith((".", "!", "?")) else msg + "."


def load_warnings_of(caught) -> list[tuple[str, bool]]:
    """(message, is a privacy leak) of warnings recorded while a file was read, for the notice and the report."""
    out = []
    for w in caught:
        msg = str(getattr(w, "message", w))
        leak = isinstance(getattr(w, "category", None), type) and issubclass(w.category, PrivacyLeakWarning)
        if (msg, leak) not in out:
            out.append((msg, leak))
    return out


def warnings_notice(table, load: Sequence[tuple[str, bool]] = (), *, slot=None) -> int:
    """Every warning of the file and of the sweep in one collapsed notice, privacy leaks first, so the chart below
    stays in view at 1280×720; returns how many. The label says how many leak and who. ``slot`` (an ``st.empty``):
    the notice replaces what it holds, only when there is something to say."""
    found = []
    for msg, leak in load:
        found.append({"text": _sentence(msg), "leak": leak, "who": "Your file"})
    sweep = table_warnings(table) if table is not None else []
    for w in sweep:
        who = ", ".join(title_of(n) for n in w["learners"])
        where = _where_raised(w, table)
        text = _sentence(w["message"])
        if w["leak"] and w["private"]:
            text += " The ε shown for these runs is not a privacy guarantee."
        elif w["leak"]:
            who += " (not private anyway)"
        if text in {f["text"] for f in found}:
            continue
        found.append({"text": where + text, "leak": bool(w["leak"] and w["private"]), "who": who})
    if not found:
        return 0
    found.sort(key=lambda f: not f["leak"])
    leaks = [f for f in found if f["leak"]]
    if leaks:
        label = (f"Privacy leak ({leaks[0]['who']})" + (f" and {len(found) - 1} more warning"
                                                         f"{'s' if len(found) > 2 else ''}" if len(found) > 1 else "")
                 + ": the ε of the leaking runs is not a guarantee — open to read")
    else:
        label = f"{len(found)} warning{'s' if len(found) > 1 else ''} about this data and sweep — open to read"
    with (slot.container() if slot is not None else st.container()), st.expander(label, icon="⚠️", expanded=False):
        for f in found:  # on the page, a setting is named by its box alone (the report keeps every caller's name)
            if f["leak"]:
                st.warning(f"**Privacy leak — {f['who']}:** {in_page_words(f['text'])}", icon="⚠️")
            else:
                st.warning(f"**{f['who']}:** {in_page_words(f['text'])}")
    return len(found)


def _need_input(task: str, y) -> Need:
    """The owner's need: a gap to the non-private model, or a level of the metric. A classifier is judged by accuracy,
    or, where one class is most of the labels ``y``, by balanced accuracy first, with accuracy offered too."""
    d = default_need(task, y)
    headline = d.metric
    if headline == "balanced_accuracy":  # one class is most rows: accuracy would praise answering it alone
        headline = st.radio("Judged by", classification_metrics(y), horizontal=True, key="sweep.advisor.judged",
                            format_func=lambda m: {"balanced_accuracy": "Balanced accuracy (each class counts "
                                                   "equally)", "accuracy": "Accuracy"}[m],
                            help="One class is most of your rows: always answering it scores that share in accuracy "
                                 "but 1/k in balanced accuracy (the mean over the classes of the share of each "
                                 "class's rows found right), which shows how the rarer classes are found.")
    name = metric_name(headline)
    c1, c2 = st.columns([3, 2])
    kinds = {"within": "Within a gap of the non-private model", "level": "At least a level" if task ==
             "classification" else "A level of R² or MSE"}
    kind = c1.radio("I need", list(kinds), format_func=kinds.get, key="sweep.advisor.kind", horizontal=True)
    if kind == "within":
        points = bounded_number(c2, f"Gap (points of {name})",
                                low=0.0, high=100.0, default=100 * d.amount, key="sweep.advisor.gap", name="The gap",
                                value=100 * d.amount, step=0.5,
                                 help=f"{100 * d.amount:g} points = {d.amount:g} of {name}: the private model may "
                                      "score at most this much below its non-private counterpart trained on the same "
                                      "split.")
        return Need("within", headline, points / 100)
    if task == "classification":
        level = bounded_number(c2, f"{name[0].upper()}{name[1:]} at least", low=0.0, high=1.0, default=0.8,
                               key="sweep.advisor.level" + ("" if headline == "accuracy" else f".{headline}"),
                               value=0.8, step=0.01)
        return Need("at_least", headline, level)
    metric = c2.radio("Metric", ["r2", "mse"], key="sweep.advisor.metric", horizontal=True,
                      format_func=lambda m: {"r2": "R² at least", "mse": "MSE at most"}[m])
    level0 = 0.4 if metric == "r2" else 3000.0
    # R² is at most 1 and an MSE never below 0, as the command line's --need says: a level beyond either swept every
    # ε only to say that nothing meets it (R² below 0, worse than the mean, is a level like any other)
    level = bounded_number(c2, "Level", low=0.0 if metric == "mse" else None, high=1.0 if metric == "r2" else None,
                           default=level0, key=f"sweep.advisor.level.{metric}",
                           name="The R² level" if metric == "r2" else "The MSE level", value=level0)
    return Need("at_least", "r2", level) if metric == "r2" else Need("at_most", "mse", level)


def _attack_run(advice: Advice, *, seed: int, secure: bool) -> dict:
    """The advisor's attack (:func:`~dpcore.decision.advisor.attack_evidence`) with what its attacked model released
    (None when the attack failed before training it)."""
    released: list = []
    evidence = attack_evidence(advice, seed=seed, secure=secure, released=released)
    return {"evidence": evidence, "release": released[0] if released else None}


def advisor_panel(result: SweepResult, *, load: Sequence[tuple[str, bool]] = (), data=None) -> Advice | None:
    """The owner states a need and the ε range they accept; the panel answers from the page's sweep, offers the
    attack at that ε and the decision report as a download. ``data``: the key of the data set
    (:func:`dpcore.ui.uploads.data_key`) under which the attacked model, trained on it for real, joins this session's
    running total (:mod:`dpcore.ui.ledger`); the page draws the total after the panel."""
    from ..decision.report import report_html

    config = result.config
    st.header("Which ε meets your need?")
    st.caption("The advisor reads the sweep above: the smallest ε of your range at which a fresh run meets the need "
               f"in {ADVISOR_CONFIDENCE:.0%} of cases (a prediction bound over the seeds), every larger ε tried "
               "meeting it on average. More seeds give a tighter answer; `python -m dpcore report` runs the same "
               f"advisor from the command line, over a sweep of its own: {ADVISOR_POINTS} ε values and "
               f"{ADVISOR_SEEDS} seeds by default"
               + (", as this sweep has." if (len(config.values), config.seeds) == (ADVISOR_POINTS, ADVISOR_SEEDS) else
                  f", where this sweep has {len(config.values)} and {config.seeds} (`--points {len(config.values)} "
                  f"--seeds {config.seeds}` for the same)."))
    need = _need_input(config.task, dataset_labels(config.dataset))
    lo0, hi0 = min(config.values), max(config.values)
    c1, c2 = st.columns(2)
    lo = bounded_number(c1, "Smallest ε I could accept", low=1e-4, high=None, default=float(lo0), value=float(lo0),
                        format="%.4g", key="sweep.advisor.lo")
    hi = bounded_number(c2, "Largest ε I could accept", low=1e-4, high=None, default=float(hi0), value=float(hi0),
                        format="%.4g", key="sweep.advisor.hi")
    if lo > hi:
        st.error("The smallest ε must not exceed the largest: swap them.")
        return None
    if lo < lo0 * (1 - 1e-9) or hi > hi0 * (1 + 1e-9):
        st.info(f"The sweep tried ε from {lo0:.3g} to {hi0:.3g}: the advisor answers within that part of your range. "
                "Widen the sweep's Min and Max in the sidebar to try the rest.")
    try:
        advice = judge(result, need, epsilon_range=(lo, hi))
    except DPCoreError as exc:
        st.error(str(exc))
        return None
    if advice.recommended is None:
        st.warning("**" + advice.headline() + "** What would:\n\n" + "\n".join(f"- {t}" for t in advice.instead))
    else:
        r = advice.recommended
        st.success("**" + advice.headline() + "**\n\n" + "\n".join(f"- {t}" for t in advice.reasons))
        key = (config.fingerprint(), r["learner"], r["epsilon"], need)
        store = st.session_state.setdefault(ATTACKS, {})
        if key not in store:
            slot = st.empty()  # the button goes once its attack has run: its paragraph below answers the press
            if slot.button(f"Attack a model trained at ε = {format_epsilon(r['epsilon'])} (trains one more model)",
                           key="sweep.advisor.attack"):
                from .common import shared_call

                with st.spinner("Training the target model and attacking it…"):
                    # an upload's attack is this session's alone: not kept by the server's store (on disk), not joined
                    store[key] = shared_call(("advisor-attack-run",) + key, lambda progress: _attack_run(
                        advice, seed=config.base_seed, secure=config.secure), private=from_upload(config),
                        done="computed")
                slot.empty()
        attacked = store.get(key)
        evidence = None if attacked is None else attacked["evidence"]
        if attacked is not None and data is not None and attacked["release"] is not None:
            from .ledger import record_release

            record_release(data, ("advisor-attack",) + key, attacked["release"], page="Trade-off explorer",
                           source="the advisor's attacked model")
        if evidence is not None:
            from dataclasses import replace

            advice = replace(advice, attack=evidence)
            if "error" in evidence:
                st.error(f"The attack could not run: {evidence['error']}")
            else:
                caught = evidence["caught_at_1pct"]
                st.markdown(f"**What an attacker learned at ε = {format_epsilon(r['epsilon'])}:** the loss-threshold "
                            "attack "
                            f"proves ε ≥ {format_epsilon(evidence['epsilon_lower_bound'], lower_bound=True)} at "
                            f"{confidence_text(evidence['confidence'])} "
                            "confidence" + (f" and catches {caught:.1%} of members at 1 % false alarms (a blind "
                                            "guess catches 1 %)" if caught is not None else " (too few non-members "
                                            "to measure its catch at 1 % false alarms)")
                            + f", on a pool of {evidence['pool']} records. " + ATTACK_CAVEAT)
    with st.expander("Choosing ε from these curves is itself a release"):
        st.markdown(advice.selection["note"])
    name = getattr(config.dataset, "name", config.dataset) if not isinstance(config.dataset, str) else config.dataset
    html = report_html(advice, load_warnings=list(load))
    st.download_button("Download the report", html.encode("utf-8"), file_name=f"dp_decision_{name}.html",
                       mime="text/html", key="sweep.advisor.report",
                       help="One HTML file that opens offline: the question, the answer and its reasons, the curves, "
                            "the attack, the verdict band, every warning and each ε's dp_accounting event; no record "
                            "or value of the data." + (" Built in memory: nothing of your file is written to disk."
                                                       if from_upload(config) else ""))
    return advice


__all__ = ["advisor_panel", "load_warnings_of", "warnings_notice"]
