"""Widgets and error handling shared by every page."""
from __future__ import annotations

import functools
import math
import re
import threading
import warnings
from functools import partial
from typing import Any, Callable

import numpy as np
import pandas as pd
import streamlit as st

from ..datasets import REGISTRY, dataset_names, load_csv, read_csv_columns
from ..datasets.csv_upload import (
    BOUNDS_SYNTAX,
    CATEGORIES_SYNTAX,
    UNLABELLED,
    _names,
    category_columns,
    last_column_holds_classes,
    load_csv_unlabelled,
    numbers_read_as_classes,
)
from ..datasets.shares import CLASS_SHARES_SYNTAX
from ..defaults import DELTA, EPSILON
from ..exceptions import BoundsError, CategoriesError, CategoriesWarning, DPCoreError, PrivacyLeakWarning
from ..runtime.thread_warnings import caught as caught_warnings
from ..runtime.workload import SERVER, WorkBudgetExceeded, set_default_budget
from ..teaching.verdict import ZERO_EPSILON, comparison, epsilon_text, round_epsilon, verdict
from .links import DATASET_PROBLEM, settle
from .navigation import route_through_app
from .present import control_area, open_stage

#: Shown under a wide table on narrow screens only (the class is styled by :data:`_PHONE_STYLE`).
SCROLL_CUE = '<p class="dp-scroll-cue">⟷ This table scrolls sideways; its first column stays in place.</p>'
#: The same cue under a table whose first column is too long to pin (:data:`PIN_CHARACTERS`).
SCROLL_CUE_UNPINNED = '<p class="dp-scroll-cue">⟷ This table scrolls sideways.</p>'
#: Page-wide style: the scroll cue appears below 640 px only; the cue that the knobs are in the sidebar
#: (:data:`dpcore.ui.present.KNOBS_CUE`) where Streamlit folds the sidebar away, 768 px and less.
_PHONE_STYLE = ("<style>.dp-scroll-cue{display:none;margin:0.25rem 0 1rem;font-size:0.9rem}"
                "@media (max-width: 640px){.dp-scroll-cue{display:block}}"
                ".dp-knobs-cue{display:none;margin:0 0 0.5rem}"
                "@media (max-width: 768px){.dp-knobs-cue{display:block}}"
                # and its element's place in the page's column, whose gap moved the title's next line down
                "@media (min-width: 769px){[data-testid=\"stElementContainer\"]:has(.dp-knobs-cue){display:none}}"
                ".stPlotlyChart .xtick text,.stPlotlyChart .ytick text,.stPlotlyChart .g-xtitle text,"
                ".stPlotlyChart .g-ytitle text{fill:#333333 !important}"
                # Plotly's toolbar would cover the legend on a phone; a touch screen cannot hover it away
                "@media (max-width: 640px), (hover: none){.stPlotlyChart .modebar-container{display:none !important}"
                # a touch screen shows a table's toolbar at all times, 44 px above it: make room, off the chart above
                "[data-testid=\"stDataFrame\"]{margin-top:2.8rem}}"
                "</style>")
#: Folds the sidebar away on a phone (below 640 px the open sidebar covers most of the screen), so the run that a
#: sidebar button started is seen; it does nothing on wider screens or when the sidebar is already closed.
_CLOSE_SIDEBAR_ON_PHONE = """<script>
(() => {
  if (window.innerWidth > 640) return;
  const button = document.querySelector('[data-testid="stSidebar"] button[aria-label="Collapse sidebar"]');
  if (button) button.click();
})();
</script>"""

SEED_CAPTION = (
    "Noise here is seeded so the same inputs give the same picture, for teaching and reproducible demos. "
    "A real release uses secure noise: the switch on the learning pages, --secure on the command line."
)


def page_header(title: str, intro: str) -> None:
    """The page's title and intro; the router (app.py) sets the browser tab's title and the wide layout.

    Called first by every page, so a page Streamlit runs without the router reruns through it, and so
    every page's work is held to the shared server's budget (:data:`dpcore.runtime.workload.SERVER`, unless
    ``DPCORE_WORK_BUDGET`` says otherwise).
    """
    set_default_budget(SERVER)
    _said.captions = set()  # what shared_call told this run of the page (the thread runs one script at a time)
    route_through_app()
    st.html(_PHONE_STYLE)
    st.title(title)
    open_stage(intro)  # presentation mode folds the intro and opens the stage (dpcore.ui.present)


def seed_input(key: str, *, container=None) -> int:
    c = container or st.sidebar
    seed = _seed_box(c, "Seed", key)
    c.caption(SEED_CAPTION)
    return seed


def _seed_box(c, label: str, key: str) -> int:
    """The seed: a whole number from 0 to 2**31 - 1 (NaN or a fraction is said under the box; 0 meanwhile)."""
    return bounded_number(c, label, low=0, high=2**31 - 1, default=0, key=key, name="Seed", whole=True, value=0,
                          help="Same seed, same noise, same picture.")


SECURE_CAPTION = (
    "**Secure noise**: drawn from the operating system's cryptographic source and released on a fine grid, so "
    "nobody can reproduce or subtract it and Mironov's floating-point attack finds nothing. The grid costs about "
    "0.1% more noise; ε is unchanged. The same inputs show the same release again: a fresh draw would spend the "
    "budget again."
)
DEMO_CAPTION = (
    "**Seeded demo mode**: the same seed draws the same noise, so a class sees the same picture. Anyone who knows "
    "the seed can subtract the noise: not for a real release."
)


def noise_mode_input(key: str, *, uploaded: bool, container=None, in_form: bool = False) -> int | None:
    """Secure noise or a seed: returns ``None`` for secure mode (pass ``secure=True`` to the run), else the seed.

    Secure by default for an uploaded CSV (a result on one's own data is the one likely to be shared), seeded by
    default for a registry dataset (the same picture for the whole class); either is one click away. Inside a form
    (``in_form``) nothing reruns until it is submitted, so the seed box stays, marked as used by the demo only.
    """
    c = container or st.sidebar
    secure = c.toggle("Secure noise (for a real release)", value=uploaded,
                      key=f"{key}.secure_{'upload' if uploaded else 'demo'}",
                      help="On: unseeded noise from the operating system, on a grid that defeats floating-point "
                           "attacks (Mironov 2012). Off: seeded noise for a reproducible demonstration.")
    if secure and not in_form:
        c.caption(SECURE_CAPTION)
        return None
    seed = _seed_box(c, "Seed (seeded demo mode only)" if in_form else "Seed", key)
    c.caption(SECURE_CAPTION if secure else DEMO_CAPTION)
    return None if secure else seed


#: A loader's message names each setting for every caller: "(categories= in load_csv, --categories on the command
#: line, 'Declared categories' on the pages)"; with an optional "drop= " before it
_EVERY_CALLER = re.compile(r"(?P<bare>[a-z_]+= )?\((?:[^()]*?)on the command line, (?P<box>[^()]*?) on the pages\)")


def in_page_words(message: str) -> str:
    """A library message as a page shows it: where it names a setting for every caller (a Python keyword, a
    command-line flag and the page's box), only the page's box. A student who uploads a file with a text column read
    "categories= in load_csv, --categories on the command line": names of a program and of a command line the page
    never shows.

    >>> in_page_words("Declare them (categories= in load_csv, --categories on the command line, 'Declared "
    ...               "categories' on the pages), e.g. note=A|B. Or drop it. To leave a column out: drop= (--drop on "
    ...               "the command line, 'Columns to leave out' on the pages).")
    "Declare them (the 'Declared categories' box), e.g. note=A|B. Or drop it. To leave a column out: the 'Columns to \
leave out' box."
    >>> in_page_words("leave it out (drop=, --drop on the command line, Columns to leave out on the pages)")
    "leave it out (the 'Columns to leave out' box)"
    """
    def box(m: re.Match) -> str:
        said = f"the '{m['box'].strip(chr(39))}' box"
        return said if m["bare"] else f"({said})"

    return _EVERY_CALLER.sub(box, message)


def _in_full(x: float) -> str:
    """A number in a box's message as a student reads it: a whole number of five digits or more in full, with
    thousands separators (``:g`` wrote the seed's largest, 2,147,483,647, as "2.14748e+09", a number below it, and a
    batch of a million as "1e+06"); any other as ``:g`` writes it (0.001, 1e-05, 2.5).

    >>> _in_full(2**31 - 1), _in_full(1e6), _in_full(1e9), _in_full(100.0)
    ('2,147,483,647', '1,000,000', '1,000,000,000', '100')
    >>> _in_full(0.001), _in_full(1e-5), _in_full(2.5), _in_full(-1.0)
    ('0.001', '1e-05', '2.5', '-1')
    """
    x = float(x)
    if math.isfinite(x) and x.is_integer() and 1e4 <= abs(x) < 1e16:
        return f"{int(x):,}"
    return f"{x:g}"


def bounded_number(c, label: str, *, low: float | None, high: float | None, default: float | None, key: str,
                   name: str | None = None, whole: bool = False, **kwargs) -> float | None:
    """A number box whose value is checked here, not by the browser nor by Streamlit: every number box of the pages.

    Streamlit's own ``min_value``/``max_value`` make the browser refuse a typed value out of range with only a red
    outline, while the page goes on with the old value: a student typing ε = 0 sees results and thinks it worked.
    Here the value reaches the page, and one out of range (or, with ``whole``, a fraction) gets a message under the
    box naming it and what it takes, and the page uses ``default`` meanwhile. The box always holds decimals: Streamlit's
    box of whole numbers converts what it receives to int before the page runs, and NaN raised "cannot convert float
    NaN to integer"; a box of decimals puts its value back for NaN or infinity, and anything else not finite that
    reaches the page is refused here. Returns the value to use (an int with ``whole``). ``value`` (default
    ``default``) is where the box starts; ``default=None`` with ``value=None``: a box that may be left empty (it has a
    ``placeholder``), which gives None.

    The box is given its starting value, not left empty with the value put in the session: a box that leaves the page
    (the Trade-off advisor's, while a new sweep runs) and comes back could then return empty from the browser, and
    the page would refuse a value the visitor never touched.
    """
    start = kwargs.pop("value", default)
    kwargs["step"] = float(kwargs.get("step", 1.0 if whole else 0.01))  # decimals: Streamlit infers its type
    if whole:
        kwargs.setdefault("format", "%.0f")
        from .links import WHOLE

        st.session_state.setdefault(WHOLE, set()).add(key)
    value = c.number_input(label, key=key, value=None if start is None else float(start), **kwargs)
    if value is None and start is None:
        return None  # an optional box left empty
    v = math.nan if value is None else float(value)
    if math.isfinite(v) and (low is None or v >= low) and (high is None or v <= high) and (
            not whole or v.is_integer()):
        return int(v) if whole else v
    rng = (f"from {_in_full(low)} to {_in_full(high)}" if low is not None and high is not None else
           f"at least {_in_full(low)}" if low is not None else f"at most {_in_full(high)}" if high is not None else
           "finite")
    what = f"a whole number {rng}" if whole else rng
    given = "an empty box (or one that is not a number) is not" if value is None else f"{_in_full(v)} is not"
    meanwhile = "leaves it empty" if default is None else f"uses {_in_full(default)}"
    message = f"{name or label} must be {what}; {given}. The page {meanwhile} until it is."
    from .links import REFUSED

    st.session_state.setdefault(REFUSED, set()).add(key)  # a link's value: replaced by the default, with a warning
    c.error(message)
    if st.session_state.get(f"{key}.refused") != given:  # once per refused value: the box may sit out of sight
        st.session_state[f"{key}.refused"] = given
        st.toast(message, icon="⚠️")
    if default is None:
        return None
    return int(default) if whole else float(default)


def epsilon_input(key: str, *, default: float = EPSILON, container=None, label: str = "Epsilon (ε)",
                  disabled: bool = False, help: str | None = None, in_form: bool = False,
                  subject: str | None = None, delta_key: str | None = None, delta: float = 0.0) -> float:
    """ε box with its verdict band under it; ``disabled=True`` keeps it visible but greyed out (``help`` says why).

    Without a ``container`` it goes to the sidebar, or to the stage beside the headline chart in presentation mode.
    ``in_form``: the box is in a ``st.form``, which reports a new value only when submitted, so the verdict names
    the ε it judges (the one last applied) rather than seeming to judge the number being typed. ``subject``: what an
    ε that does not protect whole records is about ("any one record's label"); the verdict then names it and is not
    compared with published deployments, whose ε protect whole records. ``delta_key``: the key of the page's δ box,
    where the guarantee is (ε, δ): the verdict's odds bound then names that δ as an additive slack, as the run's
    verdict does (None: a pure ε guarantee, no δ named, unless ``delta``, a δ the page's runs are stated at without a
    box of their own, is given).
    """
    return applied_epsilon_input(key, default=default, container=container, label=label, disabled=disabled,
                                 help=help, in_form=in_form, subject=subject, delta_key=delta_key, delta=delta)[0]


def applied_epsilon_input(key: str, *, button: str | None = None, button_key: str | None = None,
                          default: float = EPSILON, container=None, label: str = "Epsilon (ε)", disabled: bool = False,
                          help: str | None = None, in_form: bool = False, subject: str | None = None,
                          delta_key: str | None = None, delta: float = 0.0) -> tuple[float, bool]:
    """:func:`epsilon_input` with, in a form, a submit button labelled ``button`` right under the box and above its
    verdict: (ε, whether that button was pressed). The form's own button sits screens below ε at 1280x720 (in the
    sidebar, or on the stage when presenting), and under the verdict's few lines this one was off the first screen
    too. No button when ``button`` is None or the box is disabled (its ε is not used)."""
    c = container or control_area(st.sidebar)
    eps = bounded_number(c, label, low=0.001, high=100.0, default=float(default), key=key, name="ε",
                         value=float(default), step=0.1, format="%.3f", disabled=disabled,
                         help=help or "Privacy budget: smaller is more private; from 0.001 to 100.")
    pressed = bool(button is not None and not disabled and c.form_submit_button(button, type="primary",
                                                                                key=button_key))
    if not disabled:
        verdict_line(eps, container=c, what=f"At the ε last applied, {format_number(eps)}" if in_form else None,
                     subject=subject, delta=delta if delta_key is None else _delta_in_box(delta_key))
    return eps, pressed


def _delta_in_box(key: str) -> float:
    """The δ the box ``key`` (:func:`delta_input`) holds in this run, read before it is drawn (δ sits under ε): its
    value in the session, which a change (or, in a form, a submit) sets before the page reruns; the box's default
    where it has not been drawn yet or holds a value it refuses (and then uses the default for)."""
    value = st.session_state.get(key, DELTA)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return float(DELTA)
    return value if 0.0 <= value <= 0.01 else float(DELTA)


def verdict_text(epsilon: float, *, what: str | None = None, compare: bool = True, short: bool = False,
                 subject: str | None = None, delta: float = 0.0) -> str:
    """The verdict band of ``epsilon`` in words (:mod:`dpcore.teaching.verdict`), and where published deployments sit.

    ``short`` gives the band alone (for under a number in a narrow column); ``subject``: what the ε protects when it
    is not a whole record (then no comparison with published deployments, which protect whole records); ``delta``:
    the δ the ε is stated at, where the page has one (the odds bound then names it as an additive slack).
    """
    v = verdict(epsilon)
    compare = compare and subject is None
    text = (f"{what}: " if what else "") + (v.short() if short else v.sentence(subject or "anyone", delta=delta))
    if epsilon == 0 and not short:  # a calibrated tiny target: the accountant's true (0, δ) bound
        text += "  \n" + ZERO_EPSILON
    return text + ("  \n" + comparison(epsilon) if compare and not short else "")


def verdict_line(epsilon: float, *, container=None, what: str | None = None, compare: bool = True,
                 short: bool = False, subject: str | None = None, delta: float = 0.0) -> None:
    """Write :func:`verdict_text` in body text (not a grey caption) under an ε the page shows."""
    (container or st).markdown(verdict_text(epsilon, what=what, compare=compare, short=short, subject=subject,
                                            delta=delta))


#: The δ box's help: what δ bounds in (ε, δ)-DP (Dwork & Roth 2014, Definition 2.4), and not the misreading "the
#: probability the ε guarantee may fail" it said (the Gaussian's outputs past e^ε are far likelier than δ).
DELTA_HELP = ("The additive slack of (ε, δ)-DP: any outcome may be e^ε times as likely, plus δ (not the chance that "
              "the ε bound fails), from 0 to 0.01; keep it well below 1/n (a warning appears when it is not).")


def delta_input(key: str, *, default: float = DELTA, container=None, disabled: bool = False,
                help: str | None = None) -> float:
    """δ box; ``disabled=True`` keeps it visible but greyed out (with ``help`` saying why)."""
    c = container or st.sidebar
    return float(
        bounded_number(c, "Delta (δ)", low=0.0, high=0.01, default=float(default), key=key, name="δ",
                       value=float(default), format="%.1e", step=1e-6, disabled=disabled,
                       help=help or DELTA_HELP)
    )


#: What a page without data asks for, in the sidebar beside the uploader and again in the main area.
UPLOAD_PROMPT = "Upload a CSV file in the sidebar (the » button at the top left on a phone) to use your own data."
#: The Dataset list's entry for one's own file before any is read. In a form it names no action: the browser keeps
#: showing the entry's label from before the press that reads the file ("Upload a CSV…" beside the file just read)
UPLOAD_OPTION, UPLOAD_OPTION_IN_FORM = "Upload a CSV…", "Your own CSV file…"
#: The same, on a page whose settings stand in a form: the file chosen there is sent, read and offered its label
#: box only when the form's button is pressed
UPLOAD_PROMPT_IN_FORM = ("Choose a CSV file in the sidebar (the » button at the top left on a phone), then press the "
                         "button under the settings: the file is read then, and its label column and other settings "
                         "appear under it.")


def _upload_changed(key: str) -> None:
    """The uploader of ``key`` was changed by the visitor: a new file becomes the session's file; a file taken out
    of the uploader (its ✕) is forgotten on every page."""
    from .uploads import forget_upload, keep_upload

    up = st.session_state.get(key)
    if up is None:
        forget_upload()
    else:
        keep_upload(up.name, up.getvalue())


#: The label box's choice of no label at all (the Clustering page's, ``unlabelled=True``), as a link writes it (not
#: offered for a file that has a column of this very name).
NO_LABEL = "(no label)"
NO_LABEL_TEXT = "No label: cluster the rows only"
NO_LABEL_NOTE = ("No label: every column is a feature and the rows are clustered only; nothing is scored against "
                 "classes.")


def dataset_picker(key: str, *, task: str | None = None, images: bool | None = None, allow_upload: bool = True,
                   container=None, default: str | None = None, warnings_into: list | None = None,
                   in_form: bool = False, exclude: tuple[str, ...] = (), class_shares: bool = True,
                   unlabelled: bool = False):
    """Select box over the registry (plus the visitor's own CSV); returns a Dataset or None (with a message shown).

    A file uploaded on any page is this session's file (:mod:`dpcore.ui.uploads`): every page with an upload
    offers it, first in its list when it fits the page's ``task``, with the label column, task and declared bounds
    chosen for it on another page. ``warnings_into``: a list that receives the upload's warnings instead of their
    being shown here (a page that gathers every warning into one notice). ``in_form``: the picker stands in a
    ``st.form``, which allows no callback and no button but its own (the table of bounds is then offered on the
    pages without a form; what is declared there holds here too). ``exclude``: registry datasets not offered.
    ``class_shares``: offer the box of declared class shares for a classification label; False on a page none of
    whose models release class probabilities (clusterings answer clusters; DP-ERM and logistic regression release
    scores; a PATE student releases labels), where the box would change nothing: shares declared on another page
    are kept for it and a caption says they are not used here. ``unlabelled``: the label box of an upload also
    offers no label (:data:`NO_LABEL`, first, and chosen at first for a file whose last column is not classes),
    which gives a Dataset of task :data:`~dpcore.datasets.csv_upload.UNLABELLED`
    (:func:`~dpcore.datasets.csv_upload.load_csv_unlabelled`): the Clustering page's rows with no classes."""
    from .uploads import BOUNDS_BOX, UPLOAD_NOTE, fits, stored_upload

    def serves(entry: dict | None) -> bool:  # the stored file as last read can serve this page (without a label,
        return fits(entry, task) or (unlabelled and entry is not None)  # any file's rows can be clustered)

    c = container or st.sidebar
    st.session_state.pop(DATASET_PROBLEM, None)
    names = [n for n in dataset_names(task, images=images) if n not in exclude]
    if in_form and allow_upload and st.session_state.get(f"{key}.file") is not None:
        # a file sent with the form's button (a form allows no callback): the session's file before the list below
        # is labelled, which named it "Upload a CSV…" beside the file it had just read
        _upload_changed(f"{key}.file")
    stored = stored_upload() if allow_upload else None
    fitting = serves(stored) and images is not True
    options = names + (["upload"] if allow_upload else [])
    labels = {n: REGISTRY[n].title for n in names}
    labels["upload"] = (f"Your file: {stored['name']}" if fitting else
                        UPLOAD_OPTION_IN_FORM if in_form else UPLOAD_OPTION)
    index = options.index(default) if default in options else 0
    if fitting:  # uploaded on another page of this session: offered first here
        index = options.index("upload")
    choice = c.selectbox("Dataset", options, index=index, format_func=lambda n: labels[n], key=key)
    if choice != "upload":
        from ..datasets import load_dataset

        return load_dataset(choice)
    changed = {} if in_form else dict(on_change=_upload_changed, args=(f"{key}.file",))  # ✕ forgets the file
    up = c.file_uploader("Another CSV file" if stored else "CSV file (header row, numeric features)", type=["csv"],
                         key=f"{key}.file", **changed)
    if up is not None:  # the file in this page's uploader is the session's (kept once: same bytes, same entry)
        _upload_changed(f"{key}.file")
    stored = stored_upload()
    # chosen anyway: read with this page's task. Judged on the file as stored now (uploaded in this very run, or not
    # read yet: its task unknown), not on the one before: a file just uploaded that could not be read was "read as
    # None"
    if stored is not None and not serves(stored) and task is not None:
        c.caption(f"Your file **{stored['name']}** was read as {stored.get('task')}; this page needs a {task} label: "
                  "pick such a column below, or upload another file.")
    if stored is None:
        prompt = UPLOAD_PROMPT_IN_FORM if in_form else UPLOAD_PROMPT
        st.info(prompt)
        st.session_state[DATASET_PROBLEM] = ("info", prompt)
        return None
    data, name = stored["data"], stored["name"]
    c.caption(f"Your file **{name}** {UPLOAD_NOTE}")
    try:
        cols = read_csv_columns(data)
        options = ([NO_LABEL] if unlabelled and NO_LABEL not in cols else []) + cols
        # the label chosen before, unless it was read as another task than this page's (a regression label chosen on
        # the Train page is no class label: without a label its rows can still be clustered)
        kept = stored.get("label") in options and (not unlabelled or stored.get("task") in (None, task, UNLABELLED))
        index = (options.index(stored["label"]) if kept
                 # one column: no feature would stand beside a label, so the rows can only be clustered
                 else 0 if unlabelled and (stored.get("task") not in (None, task) or len(cols) == 1 or
                                           not last_column_holds_classes(data)) else len(options) - 1)
        label = c.selectbox("Label column", options, key=f"{key}.label", index=index,
                            format_func=lambda o: NO_LABEL_TEXT if o == NO_LABEL and o not in cols else o,
                            help="The column of classes the clusters are scored against, or no label: every "
                                 "column a feature, the rows clustered only." if unlabelled else None)
        none = label == NO_LABEL and NO_LABEL not in cols
        others = cols if none else [col for col in cols if col != label]
        drop_key = f"{key}.drop"
        # chosen on another page of this session: kept; a column since chosen as the label is no longer offered
        st.session_state[drop_key] = [col for col in st.session_state.get(drop_key, stored.get("drop", ()))
                                      if col in others]
        drop = c.multiselect("Columns to leave out", others, key=drop_key,
                             help="Columns the models must not use: an identifier, a free-text note. Their cells are "
                                  "never read.")
        kinds = ["auto", "classification", "regression"] if task is None else [task]
        if none:  # no label, no task to choose
            c.caption(NO_LABEL_NOTE)
            kind = kinds[0]
        else:
            kind = c.selectbox("Task", kinds, key=f"{key}.task",
                               index=kinds.index(stored["kind"]) if stored.get("kind") in kinds else 0)
        task_note = c.empty()  # under the Task box: what "auto" made of the label, once the file is read
        categories_key = f"{key}.categories.{name}"
        st.session_state.setdefault(categories_key, stored.get("categories", ""))  # declared on another page: kept
        categories = c.text_area(CATEGORIES_LABEL + " (optional)", key=categories_key, height=100,
                                 placeholder="ward=Cardiology|Oncology|Surgery\nsex=F|M", help=CATEGORIES_HELP)
        bounds_key = f"{key}.{BOUNDS_BOX}"  # not named by the file: the address carries the box, never the name
        st.session_state.setdefault(bounds_key, stored.get("bounds", ""))  # declared on another page: kept
        bounds = c.text_area(  # one per file, as a file's other settings; a line per column fits a phone
            "Declared bounds (optional)", key=bounds_key, placeholder="age=17:90\nhours=1:99\n*=0:1",
            height=120,
            help="The range each column can hold, from what it measures rather than from the rows: "
                 f"{BOUNDS_SYNTAX}. Values outside are clipped; a range much wider than the data squeezes its "
                 "signal. A column left out gets its own smallest and largest value in the file, which leaks privacy "
                 "(a warning names those columns). A range declared for the label makes it a number to predict "
                 "(regression), and sets the noise: the wider the range, the more noise the same ε needs.")
        stored.update(label=label, bounds=bounds, drop=list(drop), categories=categories,
                      kind=kind if task is None and not none else stored.get("kind", "auto"))
        with caught_warnings() as caught:
            ds = (load_csv_unlabelled(data, name=name, bounds=bounds, drop=list(drop), categories=categories) if none
                  else load_csv(data, label_column=label, task=None if kind == "auto" else kind, name=name,
                                bounds=bounds, drop=[col for col in drop if col != label], categories=categories))
        stored["task"] = ds.task  # what the file is, as last read: the pages of other tasks offer it accordingly
        if kind == "auto" and not none and (said := numbers_read_as_classes(ds, label,
                                                                           how="choose Task: regression")):
            task_note.caption(said[0].upper() + said[1:] + ".")
        encoded = category_columns(ds.categories)
        numeric = [f for f in ds.feature_names if not any(f in block for block in encoded.values())]
        if encoded:
            k = sum(map(len, encoded.values()))
            c.caption(f"{_names(encoded)}: {k} declared categor{'y' if k == 1 else 'ies'}, each a 0/1 column "
                      "bounded 0:1 by the declaration.")
        if ds.task == "classification" and not ds.inferred_classes:
            c.caption(f"{_names([label])}: {ds.n_classes} declared classes, in the order declared; "
                      + ("the clusters are scored against them (each matched to one class), none is read from the "
                         "rows." if unlabelled else "every model answers one of them, none is read from the rows."))
        off_list = [w for w in caught if issubclass(getattr(w, "category", type(None)), CategoriesWarning)]
        if warnings_into is None:
            for w in off_list:  # most often a mistyped declaration: said right under it, not folded away
                said = in_page_words(str(w.message))
                c.warning(said[0].upper() + said[1:] + ".")
        if bounds.strip() and not ds.inferred_bounds:
            c.caption(f"Bounds declared for all {len(numeric)} {'numeric ' if encoded else ''}feature column(s)"
                      + (" and the label" if ds.task == "regression" else "") + ": none is read from the rows.")
        if ds.task == "classification" and class_shares:
            ds = _class_shares_box(c, ds, f"{key}.shares.{name}", stored)
        elif ds.task == "classification" and str(stored.get("shares", "")).strip():
            c.caption(SHARES_UNUSED)
        from .bounds import bounds_table

        if in_form:
            c.caption("To declare bounds in a table, open the Train or Trade-off page: they hold here too.")
        else:
            bounds_table(numeric + ([label] if ds.task == "regression" else []), bounds_key, container=c)
        if warnings_into is None:  # one folded notice, leaks first: the page's own output keeps the first screen
            show_warnings([w for w in caught if w not in off_list], fold=True)
        else:
            warnings_into.extend(caught)
        return ds
    except BoundsError as exc:  # the file is fine; what was typed in the bounds box is not
        said = "The declared bounds cannot be used: " + str(exc).removeprefix("bounds: ")
        st.error(said)
        st.session_state[DATASET_PROBLEM] = ("error", said)
        return None
    except CategoriesError as exc:  # the file is fine; what was typed in the categories box is not
        said = "The declared categories cannot be used: " + in_page_words(str(exc).removeprefix("categories: "))
        st.error(said)
        st.session_state[DATASET_PROBLEM] = ("error", said)
        return None
    except ClassSharesError as exc:  # the file is fine; what was typed in the class shares box is not
        said = "The declared class shares cannot be used: " + in_page_words(str(exc).removeprefix(f"{SHARES_LABEL}: "))
        st.error(said)
        st.session_state[DATASET_PROBLEM] = ("error", said)
        return None
    except DPCoreError as exc:
        st.error(in_page_words(str(exc)))
        st.session_state[DATASET_PROBLEM] = ("error", f"The uploaded file {name!r} cannot be used: "
                                                      f"{in_page_words(str(exc))}")
        return None


#: The label of the upload's categories box, as the loader's refusal of an undeclared text column names it.
CATEGORIES_LABEL = "Declared categories"
CATEGORIES_HELP = (
    "The values each column of categories can hold (a ward, a sex, a region, or codes such as 1 to 5), listed from "
    "what the column means (its codebook, the form that collected it), never copied from this file's rows: a value "
    f"only a rare record holds would give that record away. {CATEGORIES_SYNTAX}. Each value becomes one 0/1 "
    "column, bounded 0:1 by the declaration (no bounds to declare for it); a cell that is none of the values is 0 "
    "in all of them, and a warning says how many cells (never which values). Declared for the label column "
    "(diagnosis=healthy|flu|covid), the values are its classes, in that order: every model gives one answer per "
    "class, a class no row holds included, and a row whose label is none of them is refused. A label without a "
    "declaration gets the classes its rows hold, which leaks which classes occur (a warning says so).")
#: The label of the upload's class shares box, also the parameter its messages name.
SHARES_LABEL = "Declared class shares"
SHARES_HELP = (
    "How common each class of the label is, as known from outside the data (a published rate, a registry's "
    f"figure): {CLASS_SHARES_SYNTAX}. The models that give class probabilities (DP-SGD and the same network "
    "trained without privacy, federated learning) then answer the class whose probability is largest relative to its "
    "share, so a rare class a private model would otherwise never answer is found: balanced accuracy rises, plain "
    "accuracy falls (Elkan 2001; Saerens et al. 2002). Label DP (its probabilities are of the noisy labels) and the "
    "models that give scores (DP-ERM, logistic regression) keep answering their most likely class, and say so. It "
    "costs no privacy because the shares are declared, not read from the rows: do not copy them from this file's own "
    "counts, which are private. Empty: each row gets the class of largest probability.")
#: Under an upload on a page none of whose models release class probabilities (the box is not offered there).
SHARES_UNUSED = ("Declared class shares are not used on this page: its models do not give class probabilities, so "
                 "the shares would change none of their answers. They are kept for the other pages.")


class ClassSharesError(DPCoreError):
    """What was typed in the class shares box cannot be used (its cause says why)."""


def _class_shares_box(c, ds, shares_key: str, stored: dict):
    """The upload's class shares box for a classification label: ``ds`` with the shares declared there."""
    st.session_state.setdefault(shares_key, stored.get("shares", ""))  # declared on another page: kept
    text = c.text_area(SHARES_LABEL + " (optional)", key=shares_key, height=120, help=SHARES_HELP,
                       # the classes named only where declared: read from the rows, they are private values
                       placeholder="\n".join(f"{n}=…" for n in (
                           ["CLASS"] * min(ds.n_classes, 6) if ds.inferred_classes else ds.target_names[:6])))
    stored["shares"] = text
    try:
        ds = ds.with_class_shares(text, parameter=SHARES_LABEL)
    except DPCoreError as exc:
        raise ClassSharesError(str(exc)) from exc
    if ds.class_shares:
        c.caption("Answers follow the declared class shares (declared, not read from the rows: no privacy spent).")
    return ds


#: Display names for the columns of the tidy tables pages show (the CSV downloads keep the tidy names).
COLUMN_LABELS = {
    "epoch": "Epoch", "step": "Steps so far", "loss": "Test loss", "accuracy": "Test accuracy",
    "balanced_accuracy": "Balanced accuracy", "mse": "Test MSE",
    "r2": "Test R²", "epsilon": "ε", "train_loss": "Training loss (private rows)", "method": "Method",
    "accuracy_sd": "Accuracy SD", "intra_cluster_variance": "Within / total sum of squares",
    "intra_cluster_variance_sd": "Within / total SD", "n_train": "Training rows", "learner": "Learner",
    "seed": "Seed", "seconds": "Seconds", "sd": "SD across seeds", "noise_multiplier": "Noise multiplier σ",
    "delta": "δ",
}


DASH = "—"
#: How every table shows the epsilon of a run that is not private (an infinite budget).
NOT_PRIVATE = "∞ (not private)"


def format_number(v, digits: int = 3) -> str:
    """``v`` to ``digits`` significant figures as text; a dash for a missing or infinite value.

    >>> format_number(0.123456), format_number(float("nan")), format_number(None), format_number(True)
    ('0.123', '—', '—', 'yes')
    """
    if v is None:
        return DASH
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return f"{f:.{digits}g}" if math.isfinite(f) else DASH


def shown_difference(value: float, reference: float, digits: int = 3) -> float:
    """``value - reference`` as the two read on screen, each rounded to ``digits`` decimals: a tile of 0.910 over one
    of 0.962 says -0.052 (5.2 points), as a student subtracting them finds, not the -0.051 of the unrounded
    0.9104 - 0.9616 beside them.

    >>> shown_difference(0.9104, 0.9616), shown_difference(0.9616, 0.9616), shown_difference(0.12345, 0.1)
    (-0.052, 0.0, 0.023)
    """
    return round(round(value, digits) - round(reference, digits), digits)


def format_noise(v, digits: int = 3) -> str:
    """A noise scale a run used (DP-SGD's or DP-FedAvg's σ, PATE's noise scale) as :func:`format_large` writes it,
    rounded UP at ``digits`` figures (:func:`~dpcore.teaching.verdict.round_epsilon`), as ``python -m dpcore noise``
    writes a calibrated σ: given back as the noise to set ("as set" modes, ``--noise-multiplier``), it never adds
    less noise than the run did, so never spends more ε than the run it was read from.

    >>> format_noise(6.0312), format_noise(9834.2), format_noise(4.0), format_noise(None)
    ('6.04', '9,840', '4', '—')
    """
    try:
        f = None if v is None or isinstance(v, (bool, np.bool_)) else float(v)
    except (TypeError, ValueError):
        f = None
    return format_large(round_epsilon(f, digits) if f is not None and f > 0 else v, digits)


def format_large(v, digits: int = 3) -> str:
    """A noise scale or other large number as text (not an ε: :func:`format_epsilon` rounds those up): from 1,000 up
    thousands separated (a student reads "9.83e+03" as 9.83); else :func:`format_number`.

    >>> format_large(9834.2), format_large(469000.4), format_large(6.0312), format_large(6.0312, 4)
    ('9,830', '469,000', '6.03', '6.031')
    """
    try:
        f = None if v is None or isinstance(v, (bool, np.bool_)) else float(v)
    except (TypeError, ValueError):
        f = None
    if f is not None and math.isfinite(f) and abs(f) >= 1000:
        return f"{float(f'{f:.{digits}g}'):,.0f}"
    return format_number(v, digits)


def format_epsilon(v, digits: int = 3, *, lower_bound: bool = False) -> str:
    """An ε spent or guaranteed as text: ``∞ (not private)`` for an infinite budget, else
    :func:`~dpcore.teaching.verdict.epsilon_text`'s ``digits`` significant figures rounded UP (a privacy number fails
    closed: 1.2341 shows "1.24", never a figure below the one computed); a ``lower_bound`` (an audit's proven ε) is
    rounded down instead. A missing value is a dash, as :func:`format_number` writes it.

    >>> format_epsilon(float("inf")), format_epsilon(1.23456), format_epsilon(9834.2), format_epsilon(384000.0)
    ('∞ (not private)', '1.24', '9,840', '384,000')
    >>> format_epsilon(1.23456, lower_bound=True), format_epsilon(None), format_epsilon(float("nan"))
    ('1.23', '—', '—')
    """
    try:
        f = None if v is None or isinstance(v, (bool, np.bool_)) else float(v)
    except (TypeError, ValueError):
        f = None
    if f == math.inf:
        return NOT_PRIVATE
    if f is None or not math.isfinite(f):
        return format_number(v, digits)
    return epsilon_text(f, digits=digits, lower_bound=lower_bound)


def _header(name) -> str:
    """Sentence case without touching Greek letters (``"ε so far"`` stays, ``"test loss"`` -> ``"Test loss"``)."""
    text = str(name)
    return text[:1].upper() + text[1:] if text[:1].isascii() else text


def _is_epsilon_column(name, header: str) -> bool:
    return "epsilon" in str(name).lower() or "ε" in header


def _is_lower_bound_column(name, header: str) -> bool:
    """An audit's proven ε (``ε proven (95%)``, ``epsilon_lower_bound``): rounded down, where a spent ε rounds up."""
    text = f"{name} {header}".lower()
    return "proven" in text or "lower bound" in text or "lower_bound" in text


def _is_noise_column(name) -> bool:
    """A noise scale a run used (``noise_multiplier``, ``noise_scale``): rounded up, as :func:`format_noise` writes
    it, so that the σ a visitor reads from a table and sets never adds less noise than the run had."""
    return str(name).lower() in ("noise_multiplier", "noise_scale", "sigma")


def _rounded_column(name, header: str, vals: np.ndarray, digits: int) -> list[float]:
    """Finite numbers to ``digits`` significant figures, kept numeric; an ε column by
    :func:`~dpcore.teaching.verdict.round_epsilon` (up for an ε spent, down for a proven lower bound), a noise
    scale's up."""
    if _is_epsilon_column(name, header):
        down = _is_lower_bound_column(name, header)
        return [round_epsilon(v, digits, lower_bound=down) for v in vals]
    if _is_noise_column(name):
        return [round_epsilon(v, digits) if v > 0 else float(v) for v in vals]
    return [float(f"{v:.{digits}g}") for v in vals]


def _cell_format(name, header: str):
    """How a column holding a missing or infinite value writes its numbers: an ε column's as :func:`format_epsilon`
    (rounded down in a proven lower bound's column), others as :func:`format_number`."""
    if _is_noise_column(name):
        return format_noise
    if not _is_epsilon_column(name, header):
        return format_number
    return partial(format_epsilon, lower_bound=_is_lower_bound_column(name, header))


def readable_table(df: pd.DataFrame, *, labels: dict | None = None, digits: int = 4,
                   drop: tuple[str, ...] = ()) -> pd.DataFrame:
    """The one display form of every results table the pages show.

    * headers: ``labels``, then :data:`COLUMN_LABELS`, else the tidy name with spaces for
      underscores; all in sentence case;
    * numbers rounded to ``digits`` significant figures and kept numeric (so the table sorts); an ε column's
      rounded UP (a privacy number fails closed), a proven lower bound's (``ε proven``) down;
      unless the column holds a missing or infinite value: then it is text, with
      :data:`NOT_PRIVATE` for an infinite epsilon and a dash elsewhere (Arrow would print
      "Infinity" / "None");
    * booleans as yes / no; ``drop`` removes internal columns.

    The tidy frame itself (for CSV downloads and tests of the core) is left untouched.
    """
    names = {**COLUMN_LABELS, **(labels or {})}
    out = pd.DataFrame(index=df.index)
    for c in df.columns:
        if c in drop:
            continue
        header = _header(names.get(c, str(c).replace("_", " ")))
        col = df[c]
        if pd.api.types.is_bool_dtype(col):
            out[header] = col.map(format_number)
        elif pd.api.types.is_float_dtype(col):
            vals = col.to_numpy(dtype=float)
            if np.isfinite(vals).all():
                out[header] = _rounded_column(c, header, vals, digits)
            else:
                fmt = _cell_format(c, header)
                out[header] = [fmt(v, digits) for v in vals]
        elif col.dtype == object and col.map(lambda v: isinstance(v, float) and not math.isfinite(v)).any():
            fmt = _cell_format(c, header)
            out[header] = col.map(lambda v, fmt=fmt: fmt(v, digits) if isinstance(v, float) else v)
        else:
            out[header] = col
    return out.reset_index(drop=True)


#: The longest first column :func:`show_frame` pins: about 180 px, half a 390 px phone screen.
PIN_CHARACTERS = 24


#: Pixels a character takes in the grid's 14 px Source Sans (rounded up): narrow, wide and capital letters; the rest
#: (lower case, digits, ε, ∞) take :data:`_CHAR_PX`.
_NARROW_PX, _WIDE_PX, _CAPITAL_PX, _CHAR_PX = 4.0, 11.0, 9.0, 7.0
_NARROW, _WIDE = set(" .,:;'|!()[]ijlrtf-"), set("mwMW%—∞")
#: A grid cell's padding on both sides and the room of the header's sort arrow.
_CELL_PADDING_PX = 28


def column_width(texts) -> int:
    """Pixels a grid column needs to show the longest of ``texts`` whole (an estimate erring wide).

    >>> column_width(["ε claimed", "∞ (no noise)"]) > column_width(["ε claimed", "0.5"])
    True
    """
    def px(text: str) -> float:
        return sum(_NARROW_PX if ch in _NARROW else _WIDE_PX if ch in _WIDE else _CAPITAL_PX if ch.isupper()
                   else _CHAR_PX for ch in text)
    return math.ceil(max((px(str(t)) for t in texts), default=0.0)) + _CELL_PADDING_PX


#: The grid's format for a column of small numbers (:func:`small_numbers`): four significant figures, as
#: :func:`readable_table` rounds them, in powers of ten below 1e-4 ("1.49e-13", "0.000684", "0.994").
SMALL_NUMBER_FORMAT = "%.4g"


def small_numbers(col: pd.Series) -> bool:
    """Whether the grid would cut ``col``'s numbers: a float column holding a number other than 0 below 0.01 in size,
    whose largest is below 10,000 (where :data:`SMALL_NUMBER_FORMAT` would write it in powers of ten). The grid
    writes at most four decimals, then the first digit only: the Attack page's private model, sure a faces canary was
    not its taught label, read "0.0000000000001" in the table for 1.49e-13 under its picture, and "0.0007" for
    0.000684.

    >>> [small_numbers(pd.Series(v)) for v in ([0.994, 1.49e-13], [0.5, 0.25], [0.001, 32170.0])]
    [True, False, False]
    """
    if not pd.api.types.is_float_dtype(col):
        return False
    v = np.abs(col.to_numpy(dtype=float))
    v = v[np.isfinite(v)]
    return bool(v.size) and bool(((v > 0) & (v < 0.01)).any()) and float(v.max()) < 1e4


def show_frame(df: pd.DataFrame, *, key: str | None = None, container=None, height: int | str = "auto",
               wide_from: int = 4) -> None:
    """A display-ready table, full width, no index, its first column pinned while the rest scrolls sideways when
    that column is short (at most ``PIN_CHARACTERS`` characters: a pinned column of long learner names would fill
    a phone's screen and leave no room to scroll the numbers through); a table of ``wide_from`` columns or more says
    on a phone that it scrolls."""
    c = container or st
    config = {}
    first = [str(df.columns[0]), *map(str, df.iloc[:, 0])] if len(df.columns) else []
    pinned = bool(first) and max(map(len, first)) <= PIN_CHARACTERS
    if pinned:
        # sized to its longest cell: the grid's own sizing cut a pinned "∞ (no noise)" to "∞ (no nois"
        config[df.columns[0]] = st.column_config.Column(pinned=True, width=column_width(first))
    for name in df.columns[1:]:  # the grid sized an ε column by its numbers and cut "∞ (not private)" to "∞ (not pri"
        if not pd.api.types.is_numeric_dtype(df[name]) and df[name].isin([NOT_PRIVATE]).any():
            config[name] = st.column_config.Column(width=column_width([str(name), *map(str, df[name])]))
        elif small_numbers(df[name]):
            config[name] = st.column_config.NumberColumn(format=SMALL_NUMBER_FORMAT)
    c.dataframe(df, hide_index=True, width="stretch", height=height, key=key, column_config=config or None)
    if len(df.columns) >= wide_from:
        c.markdown(SCROLL_CUE if pinned else SCROLL_CUE_UNPINNED, unsafe_allow_html=True)


def close_sidebar_on_phone() -> None:
    """Fold the sidebar away on a phone: call it where a sidebar button starts a run, so its result is seen."""
    st.html(_CLOSE_SIDEBAR_ON_PHONE, unsafe_allow_javascript=True)


def show_table(df, *, key: str, labels: dict | None = None, digits: int = 4, drop: tuple[str, ...] = ()) -> None:
    """:func:`show_frame` of :func:`readable_table`."""
    show_frame(readable_table(df, labels=labels, digits=digits, drop=drop), key=key)


#: Rows a plain table shows whole; a longer one scrolls inside :data:`PLAIN_TABLE_HEIGHT` pixels, its header kept.
PLAIN_TABLE_ROWS = 15
#: About the height of :data:`PLAIN_TABLE_ROWS` rows and the header (a 15-epoch history: 481 px at 1280x720).
PLAIN_TABLE_HEIGHT = 480


def show_plain_table(df, *, labels: dict | None = None, digits: int = 4, drop: tuple[str, ...] = (),
                     container=None, wide_from: int | None = None) -> None:
    """:func:`readable_table` drawn as a plain HTML table (``st.table``), for a table on a page a whole class
    draws at once: the browser starts no grid widget for it (on the Train page's finished run, its two grids took
    about a quarter of each tab's drawing), and its numbers select and copy as text. Beyond
    :data:`PLAIN_TABLE_ROWS` rows it scrolls inside a fixed height with its header in place, as the grid did: the
    Train page's 100-epoch regression history was a 3,000-pixel table pushing the rest of the page down.

    Its words wrap, but a column is no narrower than its longest word or number: a table of ``wide_from`` columns or
    more (a page passes it for a table of words beside its numbers) says on a phone that it scrolls sideways, as
    :func:`show_frame` does; the Noisy images comparison's six columns ran past a 390 px screen, unsaid."""
    height = PLAIN_TABLE_HEIGHT if len(df) > PLAIN_TABLE_ROWS else "content"
    out = readable_table(df, labels=labels, digits=digits, drop=drop)
    shown = {c: _plain_number for c in out.columns if out[c].dtype.kind == "f"}  # the numbers stay numbers
    style = out.style.format(shown)
    if shown:  # a number on one line: the Noisy images table's narrow δ column broke 1e-05 into "1e-" and "05" (the
        # cell's text is a paragraph of its own, whose white-space Streamlit sets: a rule on the cell did not reach it)
        style = style.set_table_styles([{"selector": f"td.col{out.columns.get_loc(c)} p",
                                         "props": "white-space: nowrap"} for c in shown])
    c = container or st
    c.table(style, hide_index=True, height=height)
    if wide_from is not None and len(out.columns) >= wide_from:
        c.markdown(SCROLL_CUE_UNPINNED, unsafe_allow_html=True)


def _plain_number(v: float) -> str:
    """A number :func:`readable_table` rounded, written without the padding zeros pandas adds to every float
    (``32170``, ``0.3122`` and ``1``, not ``32170.0000`` and ``1.0000``: digits the rounding does not hold)."""
    if v == 0 or 1e-4 <= abs(v) < 1e15:
        return np.format_float_positional(v, trim="-")
    return f"{v:.6g}"


def show_warnings(caught, *, hide: tuple[str, ...] = (), fold: bool = False) -> None:
    """``st.warning`` once per distinct message of ``caught`` (recorded warnings or plain strings), except those
    starting with one of ``hide`` (which the page says in its own words). ``fold``: all of them in one closed notice
    that says how many (a page on a visitor's file keeps its chart on the first screen)."""
    seen: list[str] = []
    leaks: set[str] = set()
    for w in caught:
        msg = in_page_words(str(getattr(w, "message", w)))
        if msg not in seen and not msg.startswith(tuple(hide)):
            seen.append(msg)
        category = getattr(w, "category", None)
        if isinstance(category, type) and issubclass(category, PrivacyLeakWarning):
            leaks.add(msg)
    if fold and seen:
        seen.sort(key=lambda m: m not in leaks)  # leaks first
        many = f"{len(seen)} warning{'s' if len(seen) > 1 else ''}"
        label = (f"Privacy leak{'s' if len(leaks) > 1 else ''} among {many} — open to read" if leaks else
                 f"{many} about these runs — open to read")
        box = st.expander(label, icon="⚠️")
        for msg in seen:
            box.warning(("**Privacy leak:** " if msg in leaks else "") + msg)
        return
    for msg in seen:
        st.warning(msg)


def majority_accuracy(dataset, seed: int) -> float:
    """Test accuracy of always guessing the training set's most common class (the chance line); ``dataset``: a
    registry name or a Dataset (an upload's, memoised in this session under its digest)."""
    from ..datasets import train_test_split
    from ..learners import run_learner, trivial_learner
    from .uploads import data_key

    return remembered("chance_levels", (data_key(dataset), seed), lambda: run_learner(
        trivial_learner("classification"), train_test_split(dataset, seed=seed), seed=seed).score)


def remembered(store_key: str, key: tuple, compute: Callable[[], Any], *, max_kept: int = 12) -> Any:
    """Memoise ``compute()`` in this visitor's session under ``st.session_state[store_key][key]``.

    Not ``st.cache_data``: runs that draw live progress (bars, charts per epoch) cannot be
    replayed by Streamlit from a cached function into blocks created outside it. The
    oldest entries are dropped beyond ``max_kept``.
    """
    store = st.session_state.setdefault(store_key, {})
    if key not in store:
        remember(store, key, compute(), max_kept=max_kept)
    return store[key]


def remember(store: dict, key: tuple, value: Any, *, max_kept: int = 12) -> None:
    """Keep ``value`` under ``key`` in ``store`` (a session-state dict) as its newest entry, dropping the oldest
    beyond ``max_kept``: a few runs to flip between, not an unbounded store."""
    store.pop(key, None)
    store[key] = value
    while len(store) > max_kept:
        store.pop(next(iter(store)))


def log_ticks(lo: float, hi: float, *, most: int = 12) -> list[float]:
    """Tick values for a log axis from ``lo`` to ``hi`` (both > 0): 1-2-5 values, powers of ten alone when there
    would be more than ``most``, every 1..9 mantissa within less than a decade. A chart library left to itself drops
    labels that collide at large type (a projector's), "1" among them.

    >>> log_ticks(0.18, 5.4)
    [0.2, 0.5, 1.0, 2.0, 5.0]
    >>> log_ticks(0.05, 300.0, most=7)
    [0.1, 1.0, 10.0, 100.0]
    """
    def near(t: float) -> float:
        return float(f"{t:.6g}")  # 0.30000000000000004 -> 0.3

    span = range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
    ticks = [near(m * 10.0**k) for k in span for m in (1, 2, 5) if lo / 1.05 <= m * 10.0**k <= hi * 1.05]
    if len(ticks) > most:  # many decades: powers of ten only
        ticks = [t for t in ticks if math.isclose(math.log10(t), round(math.log10(t)))]
    if len(ticks) < 3:  # less than a decade: every 1..9 mantissa
        ticks = [near(m * 10.0**k) for k in span for m in range(1, 10) if lo / 1.05 <= m * 10.0**k <= hi * 1.05]
    if len(ticks) < 2:
        ticks = sorted({float(f"{lo:.3g}"), float(f"{hi:.3g}")})
    return ticks


def readable_log_ticks(fig, axis: str = "x"):
    """Label a log axis at 1-2-5 values with their full numbers (Plotly alone writes 0.5 as "5").

    Works on every trace of ``fig`` (Plotly figure); returns the figure.
    """

    vals = []
    for tr in fig.data:
        arr = getattr(tr, axis, None)
        if arr is None:
            continue
        try:
            a = np.asarray(arr, dtype=float)
        except (TypeError, ValueError):
            continue
        vals.append(a[np.isfinite(a) & (a > 0)])
    vals = np.concatenate(vals) if vals else np.array([])
    if vals.size == 0:
        return fig
    ticks = log_ticks(float(vals.min()), float(vals.max()))
    update = fig.update_xaxes if axis == "x" else fig.update_yaxes
    update(tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    return fig


def knobs_in_page_words(message: str) -> str:
    """A refusal for the work a run asks for (:class:`~dpcore.runtime.workload.WorkBudgetExceeded`) with each knob
    named by its box on the pages (``epochs=5000`` as “Epochs” = 5000): the message names the library's parameters,
    which a page's visitor never sees. Names that are no learner's knob stay as they are.

    >>> knobs_in_page_words("epochs=5000 asks for about 392 seconds of work; use at most epochs=1529")
    '“Epochs” = 5000 asks for about 392 seconds of work; use at most “Epochs” = 1529'
    """
    labels = _knob_labels()
    return re.sub(r"\b([a-z][a-z0-9_]*)=(?=[0-9.])",
                  lambda m: f"“{labels[m[1]]}” = " if m[1] in labels else m[0], message)


@functools.lru_cache(maxsize=1)
def _knob_labels() -> dict[str, str]:
    """Every registered learner's knob names and the label of their box (the first learner's, where several say it)."""
    from ..learners import learners

    labels: dict[str, str] = {}
    for spec in learners().values():
        for knob in spec.knobs:
            if knob.label:
                labels.setdefault(knob.name, knob.label)
    return labels


def run_guarded(fn: Callable[..., Any], *args, hide_warnings: tuple[str, ...] = (), said: list | None = None,
                **kwargs) -> Any:
    """Call ``fn``; show dpcore errors as ``st.error`` and warnings as ``st.warning``; return None on error.

    A person never sees a traceback for bad input. ``hide_warnings``: message prefixes the page
    already explains in its own words (each warning is shown once either way). ``said``: a list that receives the
    recorded warnings too (a page's report lists them).
    """
    with caught_warnings() as caught:  # this visitor's own, not another's run's (dpcore.runtime.thread_warnings)
        try:
            out = fn(*args, **kwargs)
        except (DPCoreError, ValueError, TypeError) as exc:
            show_warnings(caught, hide=hide_warnings)
            st.error(knobs_in_page_words(str(exc)) if isinstance(exc, WorkBudgetExceeded) else str(exc))
            return None
    show_warnings(caught, hide=hide_warnings)
    if said is not None:
        said.extend(caught)
    return out


def shared_call(key: tuple, compute: Callable[[Callable[[Any], None]], Any], *,
                on_progress: Callable[[Any], None] | None = None, keep: bool = True, here: bool = False,
                quiet: bool = False, done: str = "trained", private: bool | None = None) -> Any:
    """``compute(progress)`` run once for every visitor of this server asking with the same ``key``.

    The work runs on the server's bounded pool (:func:`dpcore.runtime.serving.shared_runs`): a result someone already
    has is shown at once, a run in flight is followed live (``on_progress`` sees its progress events here),
    and while the run waits for a worker a note says how many runs are ahead. The run's warnings are raised
    again in this thread, so :func:`run_guarded` around it shows them to every visitor; its error too.
    ``keep`` and ``here`` go to :meth:`~dpcore.runtime.serving.SharedRuns.get_or_run`; ``quiet``: no caption when the
    result comes from the store (a chart redrawn on every change of the page); ``done``: the verb of the
    caption for a joined run ("trained", "computed"). ``private``: the run is this session's alone, neither kept
    (memory or disk) nor joined by another session; by default, when ``key`` names an uploaded table
    (:func:`dpcore.ui.uploads.holds_upload`: a visitor's file never leaves the session), and the server's log
    names such a run's error by its kind only (its message may quote the file).
    """
    from ..runtime.serving import shared_runs
    from .uploads import holds_upload, private_key

    private = private if private is not None else holds_upload(key)
    if private:
        key, keep = private_key(key), False

    settle()  # a link's value that does not fit is said now, before work is queued for the default in its place
    note = st.empty()

    def queued(ahead: int | None) -> None:
        if ahead is None:  # started: no longer waiting
            note.empty()
            return
        where = (f"{ahead} run{'s' if ahead != 1 else ''} ahead of yours" if ahead else
                 "yours is next")
        note.info(f"Waiting for a free worker ({_runs_at_once(shared_runs().workers)} on this server): {where}. "
                  "Change any input to leave the queue; until yours runs, what is shown below comes from your "
                  "previous settings.")

    def work(progress):
        with caught_warnings() as caught:
            value = compute(progress)
        return value, [(w.category, str(w.message)) for w in caught]

    asking = st.session_state.setdefault(_ASKING, set())
    again = key in asking  # this session asked before and its page was rerun before the answer came
    asking.add(key)
    try:
        (value, said), how = shared_runs().get_or_run(key, work, on_progress=on_progress, on_queued=queued,
                                                      keep=keep, here=here, private=private)
    finally:
        note.empty()
    asking.discard(key)  # answered (not in a finally: a rerun that stops this script leaves it asked)
    for category, message in dict.fromkeys(said):
        warnings.warn(message, category, stacklevel=2)
    if how == "joined" and not again:  # joined its own run (a button pressed twice): no other visitor to speak of
        _say_once(f"Another visitor asked for exactly these inputs first: you followed the same run, {done} once "
                  "for all who asked.")
    elif how == "cached" and not quiet:
        _say_once("These exact inputs were run on this server before: the result is shown from its store of "
                  "finished runs, without running again.")
    return value


#: Session key: the keys of the shared runs this session has asked for and not yet been answered (a page rerun by a
#: second press of its button joins the run its first press started: that is no other visitor's)
_ASKING = "shared.asking"
#: the captions :func:`shared_call` has written in this run of a page (reset by :func:`page_header`)
_said = threading.local()


def _say_once(text: str) -> None:
    """A caption of :func:`shared_call`, once per run of a page: the Federated page follows two runs (the
    non-private reference and the private model) and said "you followed the same run" twice, one under the other."""
    said = getattr(_said, "captions", None)
    if said is not None and text in said:
        return
    st.caption(text)
    if said is not None:
        said.add(text)


def _runs_at_once(workers: int) -> str:
    """"1 run at a time", "2 runs at a time"."""
    return f"{workers} run{'s' if workers != 1 else ''} at a time"
