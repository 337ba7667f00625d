"""Presentation mode: for a projector at 1280×720, the key control beside the headline chart on the first screen.

Switched on by the sidebar's toggle or by a link with ``?present=1`` (so a teacher can send a class a link that
opens in it). It then

- folds the sidebar away and enlarges text, metrics and chart labels (:data:`STYLE`);
- folds each page's introduction into an expander, so the content starts under the title;
- opens a *stage* right under the title: on the left the page's key control (ε on most pages: every
  :func:`dpcore.ui.epsilon_input` drawn for the sidebar lands there, and a page moves its own main control
  with :func:`control_area`), on the right the page's headline chart (:func:`headline_area`).

Off, :func:`headline_area` returns the container the page would have used anyway, and :func:`control_area` puts a
control meant for the sidebar at the sidebar's top (:func:`open_key_slot`, right under the folded menu), so the key
control is on the first screen in the normal mode too. The stage lives for one script run (a thread-local set by
``page_header``).
"""
from __future__ import annotations

import contextlib
import threading

import streamlit as st

#: query parameter and session key
PARAM = "present"
_ON = {"1", "true", "yes", "on"}
#: larger type, tighter top margin, dark chart labels (applied only in presentation mode). The type grows on a wide
#: screen only, not on a phone that opened the projector's address: the root font size scales Streamlit's Plotly
#: theme too, after the page's layout, and on a 390-pixel phone the attack's ROC chart stood its false-alarm ticks
#: upright across its axis title, and the trade-off chart's axis title ran into its legend. On such a phone, where the
#: stage's two columns stand one above the other, a stage whose control is a form (Attack, PATE, Federated learning)
#: shows its chart first: the form's dozen settings put the Attack page's ROC curve two screens down
STYLE = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.2rem; padding-bottom: 2rem; max-width: none; }
@media (min-width: 641px) {
  html { font-size: 19px; }
  h1 { font-size: 2.1rem !important; padding-top: 0 !important; padding-bottom: 0.3rem !important; }
  h2 { font-size: 1.6rem !important; }
  [data-testid="stMetricValue"] { font-size: 2.6rem; }
  [data-testid="stMetricLabel"] p { font-size: 1.05rem; }
  .stPlotlyChart .xtick text, .stPlotlyChart .ytick text { font-size: 15px !important; }
}
@media (max-width: 640px) {
  .st-key-dp-stage [data-testid="stHorizontalBlock"]:has([data-testid="stForm"]) > [data-testid="stColumn"]:last-child
    { order: -1; }
}
</style>"""
#: under the title, on a screen where Streamlit folds the sidebar away (768 px wide or less: a phone, a small tablet),
#: when the page's key control is in the sidebar: the main area showed no ε at all, and the home page's lesson asks the
#: room to move it (the class is shown by the page-wide style, :data:`dpcore.ui.common._PHONE_STYLE`)
KNOBS_CUE = ('<p class="dp-knobs-cue">The knobs of this page (ε, where it has one) are in the sidebar: tap <b>»</b> '
             'at the top left to open it.</p>')
#: folds the sidebar away once when presentation mode is switched on in a running session
_FOLD_SIDEBAR = """<script>
(() => {
  const button = document.querySelector('[data-testid="stSidebar"] button[aria-label="Collapse sidebar"]');
  if (button) button.click();
})();
</script>"""

#: the stage's container (its CSS class is ``st-key-dp-stage``, which :data:`STYLE` reads)
STAGE_KEY = "dp-stage"

_stage = threading.local()


def presentation_mode() -> bool:
    """Whether this session presents: the toggle's state, else the link's ``?present=`` parameter."""
    if PARAM in st.session_state:
        return bool(st.session_state[PARAM])
    return str(st.query_params.get(PARAM, "")).lower() in _ON


def _toggled() -> None:
    if st.session_state.get(PARAM):
        st.query_params[PARAM] = "1"
        st.session_state["present.fold"] = True
    else:
        st.query_params.pop(PARAM, None)


def presentation_toggle() -> None:
    """The sidebar switch (drawn by the router under the menu); it keeps the URL's ``?present=1`` in step."""
    st.session_state.setdefault(PARAM, presentation_mode())
    st.sidebar.toggle("Presentation mode", key=PARAM, on_change=_toggled,
                      help="For a projector: larger type, the sidebar folded away, the key control beside the "
                           "headline chart. A link with ?present=1 opens in it.")


def open_stage(intro: str) -> None:
    """Called by ``page_header`` after the title: in presentation mode, the intro folded and the stage opened."""
    _stage.cols = None
    _stage.cue = None
    if not presentation_mode():
        _stage.cue = st.empty()  # filled by control_area once a key control goes to the sidebar
        _stage.intro = (st.empty(), intro)
        _stage.intro[0].markdown(intro)
        return
    _stage.intro = None
    st.html(STYLE)
    if st.session_state.pop("present.fold", False):
        st.html(_FOLD_SIDEBAR, unsafe_allow_javascript=True)
    with st.expander("About this page"):
        st.markdown(intro)
    left, right = st.container(key=STAGE_KEY).columns([1, 2.4], gap="medium")
    _stage.cols = (left.container(), right.container())


def fold_intro() -> None:
    """Fold the page's intro into a closed "About this page" (as presentation mode does), so that what the page
    draws next starts higher: a visitor's own file brings warnings and choices of its own, and the chart they are
    about should stay on the first screen at 1280×720."""
    slot = getattr(_stage, "intro", None)
    if slot is None:
        return
    box, intro = slot
    with box.container():
        st.expander("About this page").markdown(intro)
    _stage.intro = None


def _cols():
    return getattr(_stage, "cols", None)


def open_key_slot() -> None:
    """Called by the router under the sidebar's menu: the first place of the sidebar, where the page's key control
    goes when not presenting (:func:`control_area`), so that ε is on the first screen at 1280×720 in the normal mode
    too, above the page's other knobs."""
    _stage.slot = st.sidebar.container()


def close_key_slot() -> None:
    """Called by the router after the page ran: the slot belongs to that run only."""
    _stage.slot = None


def control_area(default=None, *, top: bool = True):
    """Where the page's key control goes: the stage's left column when presenting; otherwise, for a control meant for
    the sidebar (``default`` None or ``st.sidebar``), the top of the sidebar when the router opened it
    (:func:`open_key_slot`) and ``top`` is True, else ``default`` (the sidebar). ``top=False``: a form holding the
    key control among others, whose own first place holds it."""
    cols = _cols()
    if cols is not None:
        return cols[0]
    if default is None or default is st.sidebar:
        _say_knobs_are_in_the_sidebar()
    if top and (default is None or default is st.sidebar) and getattr(_stage, "slot", None) is not None:
        return _stage.slot
    return default if default is not None else st.sidebar


def _say_knobs_are_in_the_sidebar() -> None:
    """Fill the cue under the title (:data:`KNOBS_CUE`), once a run: the page's key control went to the sidebar."""
    cue = getattr(_stage, "cue", None)
    if cue is not None:
        cue.markdown(KNOBS_CUE, unsafe_allow_html=True)
        _stage.cue = None


def settings_fold(label: str):
    """Around a stage form's settings under its key control: presenting, a closed expander named ``label``; otherwise
    nothing (the settings stand in the sidebar, as before). On the stage the form fills the left column: the Attack
    page's dozen settings ran two screens below its ROC chart at 1280×720 beside an empty right column, and the
    numbers and the ladder the lesson points at came after them. A form whose settings already hold an expander
    cannot use it (Streamlit nests no expanders)."""
    if _cols() is None:
        return contextlib.nullcontext()
    return st.expander(label)


def headline_area(default=None):
    """Where the page's headline chart goes: the stage's right column when presenting, else ``default`` (here)."""
    cols = _cols()
    if cols is not None:
        return cols[1]
    return default if default is not None else st


def headline_tabs(*labels: str) -> list:
    """Where a page's headline chart and the charts read with it go: presenting, one tab per label in the stage's
    right column, beside the key control; otherwise :func:`headline_area` for the first and None for the others (the
    page draws them where they stand). A chart the lesson asks the room to watch while moving ε was a screen below
    the stage, where the ε control is no longer on screen: the home page's privacy-loss ratio and its band."""
    cols = _cols()
    if cols is None:
        return [headline_area(), *([None] * (len(labels) - 1))]
    return list(cols[1].tabs(list(labels)))


def presenting_stage() -> bool:
    """Whether this run has a stage open (presentation mode, after ``page_header``)."""
    return _cols() is not None
