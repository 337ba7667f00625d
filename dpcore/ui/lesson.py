"""The lesson's "next" links and its plan on the page (the declaration is :mod:`dpcore.teaching.lesson`).

At the foot of every stop of the lesson the router draws a link to the next stop (:func:`show_next_stop`, called by
:func:`dpcore.ui.links.finish_page`) whose address carries the dataset, ε and seed on screen, in the next page's own
input names, as any shared link does (:mod:`dpcore.ui.links` reads them on the page's first visit).
"""
from __future__ import annotations

import json
import math

import streamlit as st

from ..datasets import REGISTRY
from ..teaching.lesson import DATASET, EPSILON, SEED, STOPS, Stop, carried, next_stop
from .present import PARAM, presentation_mode
from .uploads import stored_upload


def _stop_of_prefix(prefix: str) -> Stop | None:
    return next((s for s in STOPS if s.prefix == prefix), None)


def _on_screen(stop: Stop) -> tuple[str | None, float | None, int | None]:
    """The dataset, ε and seed the visitor has on ``stop``'s page now (None where the page has no such input, or
    holds something a link cannot carry: an uploaded file, a number out of range)."""
    values = st.session_state
    dataset = values.get(stop.dataset_key) if stop.dataset_key else None
    epsilon = values.get(stop.epsilon_key) if stop.epsilon_key else None
    seed = values.get(stop.seed_key) if stop.seed_key else None
    dataset = dataset if isinstance(dataset, str) and dataset in REGISTRY else None
    epsilon = float(epsilon) if isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0 else None
    seed = int(seed) if isinstance(seed, (int, float)) and not isinstance(seed, bool) else None
    return dataset, epsilon, seed


def _file_in_view(stop: Stop) -> bool:
    """True when ``stop``'s page works on the visitor's uploaded file. The file is not in the link, but the lesson's
    pages offer it first for the whole session (:mod:`dpcore.ui.uploads`): the next stop opens on it, provided the
    link names no dataset."""
    return (stop.dataset_key is not None and st.session_state.get(stop.dataset_key) == "upload"
            and stored_upload() is not None)


def next_link_params(prefix: str) -> tuple[Stop, dict] | None:
    """(the next stop, the query parameters of its link) from the page whose inputs start with ``prefix``, or None
    when that page is not a stop of the lesson or is its last."""
    here = _stop_of_prefix(prefix)
    to = next_stop(here.page) if here is not None else None
    if to is None:
        return None
    dataset, epsilon, seed = _on_screen(here)
    values = carried(to, dataset=dataset, epsilon=epsilon, seed=seed)
    if to.dataset_key and _file_in_view(here):  # no dataset in the link: the next stop offers the session's file first
        del values[to.dataset_key]  # (carrying the lesson's dataset opened the next stop on it, not on the file)
    params = {k: json.dumps(v, ensure_ascii=False) for k, v in values.items()}
    if presentation_mode():
        params[PARAM] = "1"
    return to, params


def next_stop_note(prefix: str) -> str | None:
    """The line under the next-stop link of the page whose inputs start with ``prefix``: which stop this is and
    what the link keeps (None on a page that is not a stop, or is the last)."""
    found = next_link_params(prefix)
    if found is None:
        return None
    to, _ = found
    here = _stop_of_prefix(prefix)
    dataset, epsilon, seed = _on_screen(here)
    uploaded = _file_in_view(here)
    keeps = ", ".join(x for x in (
        ("your file" if uploaded else REGISTRY[dataset or DATASET].title) if to.dataset_key else "",
        f"ε = {EPSILON if epsilon is None else epsilon:g}" if to.epsilon_key else "",
        f"seed {SEED if seed is None else seed}" if to.seed_key else "") if x)
    return (f"Stop {STOPS.index(here) + 1} of {len(STOPS)} (what ε means, train, attack, trade-off). The link keeps "
            f"{keeps}.")


def show_next_stop(prefix: str) -> None:
    """The link to the lesson's next stop, at the foot of a stop's page (nothing on other pages)."""
    found = next_link_params(prefix)
    if found is None:
        return
    to, params = found
    st.divider()
    box = st.container(border=True)
    box.page_link(to.page, label=f"Next stop of the lesson: {to.title}", icon=":material/arrow_forward:",
                  query_params=params)
    box.caption(next_stop_note(prefix))


def lesson_plan_markdown() -> str:
    """The lesson plan for a teacher: each stop, what to point at and what to ask the room (``docs/lesson.md`` holds
    the same text)."""
    lines = [f"Four stops, one dataset ({REGISTRY[DATASET].title}), ε = {EPSILON:g} and seed {SEED} throughout; each "
             "stop's *Next stop* link at the foot of its page carries the dataset, ε and seed on screen to the next "
             "(the trade-off explorer sweeps ε itself and marks yours on its chart).",
             ""]
    for i, s in enumerate(STOPS, 1):
        act = f"Press *{s.press}*, then point at" if s.press else "Point at"
        lines += [f"{i}. **{s.title}**. {act} {s.point_at}.  ", f"   Ask: *{s.ask}*"]
    return "\n".join(lines)
