"""The app's pages in one table: the router, the sidebar menu and the home page's link grid all read it.

Paths are relative to ``app.py`` (the router); Streamlit derives each page's URL from its file name, so
``pages/2_Train_a_network.py`` is served at ``/Train_a_network`` and the home page (the default) at ``/`` (and at
:data:`HOME_ALIAS`).
"""
from __future__ import annotations

import contextlib
import pathlib
import threading
from dataclasses import dataclass
from typing import Iterator

import streamlit as st

#: The router. A run of the app's server whose main script is this file shows every page through it.
APP_PATH = pathlib.Path(__file__).resolve().parents[2] / "app.py"
_routing = threading.local()  # each visitor's script runs in a thread of its own
_ROUTE_TRIES = "nav.route_tries"  # reruns this session made to reach the router


@dataclass(frozen=True)
class PageInfo:
    """One page of the app: its file (relative to ``app.py``), menu title, Material icon, one-line blurb, and the
    prefix of its widget keys (the inputs a link to the page carries, :mod:`dpcore.ui.links`)."""

    path: str
    title: str
    icon: str
    blurb: str
    keys: str = ""


#: Every page, the home page first (it is the default, served at ``/``).
PAGES: tuple[PageInfo, ...] = (
    PageInfo("pages/0_What_epsilon_means.py", "What ε means", ":material/home:",
             "Two neighbouring databases, a noisy count and the privacy-loss ratio against e^ε.", keys="home."),
    PageInfo("pages/1_Accountant.py", "Accountant", ":material/calculate:",
             "ε spent as DP-SGD trains: naive vs advanced composition vs moments accountant vs PLD.", keys="acct."),
    PageInfo("pages/2_Train_a_network.py", "Train a network", ":material/neurology:",
             "DP-SGD, softmax output perturbation and label DP, trained live.", keys="train."),
    PageInfo("pages/3_Clustering.py", "Clustering", ":material/scatter_plot:",
             "k-means by DPLloyd and by Laplace input perturbation.", keys="cluster."),
    PageInfo("pages/4_Classical_models.py", "Classical models", ":material/show_chart:",
             "Output and objective perturbation, kernels, functional mechanism.", keys="classical."),
    PageInfo("pages/5_Tradeoff_explorer.py", "Trade-off explorer", ":material/balance:",
             "Accuracy vs ε (or clip, noise, learning rate, data size) for any learner.", keys="sweep."),
    PageInfo("pages/6_Noisy_images.py", "Noisy images", ":material/image:",
             "What input noise does to pictures, and why DP training does better.", keys="images."),
    PageInfo("pages/7_PATE.py", "PATE", ":material/school:",
             "Teachers vote, noise decides, a student learns from public data.", keys="pate."),
    PageInfo("pages/8_Federated_learning.py", "Federated learning", ":material/devices:",
             "DP-FedAvg with clipped client updates and server noise.", keys="fed."),
    PageInfo("pages/9_Attack_the_model.py", "Attack the model", ":material/policy:",
             "Membership inference and privacy audits: what an attacker can still learn at your ε.", keys="audit."),
    PageInfo("pages/10_Papers_reproduced.py", "Papers, reproduced", ":material/menu_book:",
             "Published results run live beside ours: Abadi, Chaudhuri, Papernot, Zhang, Su, Tramèr.",
             keys="repro."),
    PageInfo("pages/11_Glossary.py", "Glossary", ":material/dictionary:",
             "Every term these pages use, how to judge an ε, and the ε of published deployments.",
             keys="glossary."),
)


#: The home page is served at ``/`` and also at the name its file gives it (``/What_epsilon_means``: where a link
#: written from the file's name, or from Streamlit's own page list of an older version of this app, leads).
HOME_ALIAS = PAGES[0].path.rsplit("/", 1)[-1].removesuffix(".py").split("_", 1)[1]


@contextlib.contextmanager
def routed() -> Iterator[None]:
    """Around the router's ``nav.run()``: the page run inside knows it came through ``app.py``, and its key control
    has the sidebar's first place (:func:`dpcore.ui.present.open_key_slot`)."""
    from .present import close_key_slot, open_key_slot

    _routing.active = True
    open_key_slot()
    try:
        yield
    finally:
        _routing.active = False
        close_key_slot()


def route_through_app() -> None:
    """Rerun through ``app.py`` when Streamlit ran a ``pages/`` file on its own.

    A Streamlit process starts in its pages-directory mode whenever ``pages/`` sits beside the entry file:
    a page asked for by URL (``/Train_a_network``) is executed alone, without ``app.py``, so without the app's
    menu and layout, until some run calls ``st.navigation``, which switches the whole process to routing
    through ``app.py`` (Streamlit 1.67: ``PagesManager.uses_pages_directory``, set to False by
    ``st.navigation``). Every page calls this first (through :func:`dpcore.ui.page_header`): a page run that did not
    come through the router (:func:`routed`) in a server whose main script is ``app.py`` makes that switch and
    reruns, so ``app.py`` draws the menu and runs the requested page. The check is this run's own, not the process's
    mode: when several visitors deep-linked a fresh server at once, the first switched the mode and the others,
    already running their pages alone, stayed without the menu. A page file run on its own by ``streamlit run`` or
    ``AppTest`` (its own main script) is left alone.
    """
    if getattr(_routing, "active", False):
        return
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        ctx = get_script_run_ctx()
        main = pathlib.Path(ctx.main_script_path).resolve() if ctx is not None else None
    except Exception:  # a Streamlit without these internals: nothing to route
        return
    if main != APP_PATH:
        return
    tries = st.session_state.get(_ROUTE_TRIES, 0)
    if tries >= 3:  # the reruns did not reach the router: show the page bare rather than rerun for ever
        return
    st.session_state[_ROUTE_TRIES] = tries + 1
    try:
        from streamlit.runtime.pages_manager import PagesManager

        if getattr(PagesManager, "uses_pages_directory", False):
            PagesManager.uses_pages_directory = False
    except ImportError:
        pass
    st.rerun()


def sidebar_menu(home_link=None, *, current: str | None = None) -> None:
    """The app's own menu at the top of the sidebar: one ``st.page_link`` per page (drawn by the router), folded
    into one line naming the ``current`` page. Open, the twelve entries filled the sidebar's first screen and pushed
    each page's ε box to 760-1,570 px, below a 720 px projector's edge; folded, the key control is on the first
    screen (:func:`dpcore.ui.present.open_key_slot`), and the home page's cards and every stop's "next" link still
    lead on.

    ``home_link``: the page the home entry links to instead of the home page's file, the one being shown when the
    home page is open at :data:`HOME_ALIAS` (a link to the file would light up no entry there).
    """
    with st.sidebar.expander(f"Pages · {current}" if current else "Pages", icon=":material/menu:"):
        for p in PAGES:
            st.page_link(home_link if p is PAGES[0] and home_link is not None else p.path, label=p.title,
                         icon=p.icon)


#: Names a search may spell out for the symbols the glossary writes.
_SYMBOLS = {"epsilon": "ε", "delta": "δ", "sigma": "σ", "lambda": "λ", "gamma": "γ", "alpha": "α"}


def _stem(word: str) -> str:
    """``word`` without a plural or verb ending, so "clipping" and "clipped" find "clip" and "noises" "noise".

    >>> [_stem(w) for w in ("clipping", "clipped", "noises", "membership", "queries")]
    ['clip', 'clip', 'nois', 'membership', 'quer']
    """
    for end in ("ing", "ed", "ies", "es", "s"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            word = word[: -len(end)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":  # clipp -> clip
                word = word[:-1]
            break
    return word


def glossary_matches(find: str, text: str) -> bool:
    """Whether every word of ``find`` (any case, any ending; "sigma" for σ) occurs in ``text``."""
    text = text.lower()
    for word in (w for w in find.lower().replace(",", " ").split() if w):
        if _stem(word) not in text and _SYMBOLS.get(word, word) not in text:
            return False
    return True


def glossary_markdown(find: str = "") -> str:
    """The glossary's text: the ε bands, published deployments with their sources, then every term. With ``find``,
    the terms whose name or text contains it (any case) come first, right under the box that asked: after the bands
    and the ten deployments they lay below the first screen at 1280×720."""
    from ..teaching.glossary import GLOSSARY
    from ..teaching.verdict import BANDS, DEPLOYMENTS, NOT_PRIVATE

    ranges = {"strong": "ε ≤ 1", "moderate": "1 < ε ≤ 4", "weak": "4 < ε ≤ 10", "nominal": "ε > 10"}
    terms = [(t, x) for t, x in GLOSSARY.items() if glossary_matches(find, f"{t} {x}")]
    terms = ["**Terms**", "", *([f"- **{term}**: {text}" for term, text in terms]
                                or [f"No term mentions “{find.strip()}”."]), ""]
    judging = ["**Judging ε.** Every ε on these pages carries one of these bands; the band describes what the "
               "guarantee bounds (an attacker's odds about anyone change by at most e^ε, plus an additive δ in any "
               "outcome's probability for an (ε, δ) guarantee), not a legal threshold.", ""]
    judging += [f"- {b.icon} **{b.headline}**: {ranges[b.name]}" for b in BANDS]
    judging += [f"- {NOT_PRIVATE.icon} **{NOT_PRIVATE.headline}**: ε = ∞", "",
                "**Published ε** (as each source states it; per-day budgets add up over days):", ""]
    judging += [f"- **{d.epsilon:g}**: {d.who}, {d.what} ({d.unit}). *{d.source}*" for d in DEPLOYMENTS]
    return "\n".join(terms + judging if find.strip() else judging + [""] + terms).rstrip()


def sidebar_glossary() -> None:
    """A folded glossary at the foot of every page's sidebar (drawn by the router after the page)."""
    with st.sidebar.expander("Glossary: terms, and how to judge ε", icon=":material/menu_book:"):
        st.markdown(glossary_markdown())


def page_grid(pages: tuple[PageInfo, ...] = PAGES[1:], *, per_row: int = 2) -> None:
    """Bordered cards linking to ``pages`` (every page but the home page by default), ``per_row`` to a row."""
    for start in range(0, len(pages), per_row):  # one row of columns at a time, so the rows line up
        # each card as tall as its row's tallest (a fixed 100 px cut the blurbs' second line in presentation mode's
        # larger type)
        for col, p in zip(st.columns(per_row), pages[start:start + per_row]):
            with col.container(border=True, height="stretch"):
                page_link(p)
                st.caption(p.blurb)


def page_link(p: PageInfo) -> None:
    """A link to page ``p`` when this page came through the router; its title alone when the page file runs on its
    own (``streamlit run pages/...``, ``AppTest.from_file``), where no other page exists to link to and
    ``st.page_link`` would fail with StreamlitPageNotFoundError."""
    if getattr(_routing, "active", False):
        st.page_link(p.path, label=p.title, icon=p.icon)
    else:
        st.markdown(f"{p.icon} **{p.title}**")
