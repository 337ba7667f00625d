"""Links that restore a view: every page's inputs in the URL's query string, written on change, read on load.

A teacher sets up a page and sends the address; whoever opens it sees the same dataset, ε and knobs. After each
run the router (``app.py``) writes the current page's input values (:func:`write_view`) as JSON in the query
string, ``?cluster.epsilon=0.5&cluster.dataset="wine"``; the first run of a page in a session reads them back
(:func:`restore_view`, called by ``page_header`` before any widget exists), so the widgets start from them.

A value that no longer fits (an ε above the box's maximum, a dataset that was renamed, a mangled number) is not
a traceback: Streamlit puts such a widget back to its default, :func:`check_view` notices the difference and
the page is drawn again with a warning naming the input. A list that names some options no longer offered keeps
the others, and the warning names those left out. A name that is no page's input (``?epsilon=2``, typed without
the page's prefix) is named in the warning too. Buttons, uploads and anything that is not a plain value (numbers,
text, true/false, lists of them) never go into a link.
"""
from __future__ import annotations

import json
import math
import threading
from typing import Any

import streamlit as st

#: query parameters that are not inputs of a page (the presentation switch; Streamlit's own embedding options)
RESERVED = ("present", "embed", "embed_options")
#: Session key of what keeps a page from its data, ``(kind, message)`` (set by
#: :func:`dpcore.ui.common.dataset_picker`): :func:`stop_page` says it in the main area, since on a phone the
#: sidebar where the picker stands is folded away.
DATASET_PROBLEM = "dataset.problem"
_RESTORED = "link.restored"  # {key: value} read from the link in this run, checked after it
_PROBLEMS = "link.problems"  # inputs of the link that could not be used, shown on the next run
_LOADED = "link.loaded"  # pages whose link has been read in this session
_PROBLEM_VALUES = "link.problem_values"  # {key: the link's value} of those inputs, quoted in the warning
_LEFT_OUT = "link.left_out"  # {key: the options of a list the widget does not offer}; the rest of the list is kept
_SHOWN = "link.shown"  # what this run's warning said, said again if the page is drawn again for a later finding
_UNCHECKED = "link.unchecked"  # a link was read by a run that has not reached check_view (yet, or ever)
REFUSED = "link.refused"  # inputs whose own check refused their value in this run (dpcore.ui.common.bounded_number)
#: Session key: the keys of number boxes that take whole numbers (their boxes hold decimals; a link shows 60000).
WHOLE = "links.whole"
#: widget value kinds that are a momentary action or a file, never part of a view
_NOT_A_VIEW = {"trigger_value", "string_trigger_value", "json_trigger_value", "file_uploader_state_value",
               "chat_input_value"}
#: Inputs that never go into a link, by a fragment of their key: the values declared for an uploaded file's columns
#: of categories (the upload panel's box, ``train.dataset.categories.mine.csv``) and the shares declared for its
#: label's classes (``train.dataset.shares.mine.csv``, which names every class). A category is a cell value (a
#: ward's name, which a rare record may be alone to hold), so is a class (a rare diagnosis), and a link is made to be
#: passed on, so the address carries none, as the decision report names none; the declarations stay in the session
#: for its other pages.
OFF_LINKS = (".categories.", ".shares.")


def _plain(value: Any) -> bool:
    """A value a link may set: text, true/false or a finite number, or a list of them (``NaN`` and ``Infinity``,
    which JSON readers accept, are refused: no box of the app takes them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if isinstance(value, (bool, int, float, str)):
        return True
    return isinstance(value, (list, tuple)) and all(_plain(v) and not isinstance(v, (list, tuple)) for v in value)


def _widget_metadata(key: str):
    """Streamlit's own record of the widget ``key`` (its value kind, its deserializer), or None when it is not a
    widget. The one place these internals are read: a Streamlit without them gives None, and nothing breaks."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        state = get_script_run_ctx().session_state._state
        widget_id = state._key_id_mapper.get_id_from_key(key, None)
        return state._new_widget_state.widget_metadata.get(widget_id) if widget_id else None
    except Exception:
        return None


def _widget_kind(key: str) -> str | None:
    """The kind of value the widget ``key`` holds, or None when it is not a widget."""
    meta = _widget_metadata(key)
    return None if meta is None else meta.value_type


def _drawn_this_run(key: str) -> bool:
    """Whether the widget ``key`` was drawn in this run (a widget of an earlier view, such as a knob of another
    dataset, keeps its record but is not part of what the page shows now)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        ctx = get_script_run_ctx()
        widget_id = ctx.session_state._state._key_id_mapper.get_id_from_key(key, None)
        return widget_id is not None and widget_id in ctx.shared.widget_ids_this_run
    except Exception:  # a Streamlit without these internals: judge by the widget's record alone
        return _widget_kind(key) is not None


def view_values(prefix: str) -> dict[str, Any]:
    """The current page's inputs (widget keys starting with ``prefix``, drawn in this run) that a link can
    carry."""
    out = {}
    whole = st.session_state.get(WHOLE, set())
    for key in list(st.session_state.keys()):
        if not isinstance(key, str) or not key.startswith(prefix) or any(part in key for part in OFF_LINKS):
            continue
        value = st.session_state[key]
        kind = _widget_kind(key)
        if kind is not None and kind not in _NOT_A_VIEW and _plain(value) and _drawn_this_run(key):
            if key in whole and isinstance(value, float) and value.is_integer():
                value = int(value)
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def write_view(prefix: str) -> None:
    """Put the page's inputs in the address bar (the presentation switch and other reserved keys are kept)."""
    wanted = {k: json.dumps(v, ensure_ascii=False) for k, v in sorted(view_values(prefix).items())}
    for k in RESERVED:
        if k in st.query_params:
            wanted[k] = st.query_params[k]
    if dict(st.query_params) != wanted:
        st.query_params.from_dict(wanted)


def restore_view(prefix: str) -> None:
    """On a page's first run in this session, start its widgets from the link's values (before they exist)."""
    loaded = st.session_state.setdefault(_LOADED, set())
    if prefix in loaded:
        if st.session_state.pop(_UNCHECKED, False):
            # the run that read the link was stopped before its end, by the visitor changing an input: the values
            # now differ from the link's because the visitor chose so, not because a widget refused them
            st.session_state.pop(_RESTORED, None)
        return
    loaded.add(prefix)
    restored = {}
    for key in st.query_params.keys():
        if key in RESERVED:
            continue
        if not key.startswith(prefix):
            if not _of_some_page(key):  # a hand-typed ?epsilon=2: said, not dropped in silence
                st.session_state.setdefault(_PROBLEMS, []).append(key)
                st.session_state.setdefault(_PROBLEM_VALUES, {})[key] = st.query_params[key]
            continue  # another page's input (the address can lag behind a page switch): not this page's to judge
        raw = st.query_params[key]
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw  # a hand-typed word without quotes
        if not _plain(value):
            st.session_state.setdefault(_PROBLEMS, []).append(key)
            continue
        if isinstance(value, list) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                     for v in value):
            # a list of numbers is a multiselect of decimals (the ε values), and Streamlit's drops a typed 10 that
            # is not its option 10.0: whole numbers typed by hand are read as the decimals they mean
            value = [float(v) for v in value]
        st.session_state[key] = value
        restored[key] = value
    st.session_state[_RESTORED] = restored
    st.session_state[_UNCHECKED] = True


def _of_some_page(key: str) -> bool:
    """Whether ``key`` carries the prefix of one of the app's pages."""
    from .navigation import PAGES

    return any(p.keys and key.startswith(p.keys) for p in PAGES)


def _left_out(value: Any, kept: Any) -> list | None:
    """The items of the link's list that the widget dropped, when it kept the others (a multiselect offered
    ``["dpsgd", "nope"]`` keeps ``["dpsgd"]``); None when that is not what happened."""
    if not isinstance(value, list) or not isinstance(kept, (list, tuple)) or not kept:
        return None
    mine = [json.dumps(_norm(v)) for v in kept]
    if len(mine) >= len(value) or not set(mine) <= {json.dumps(_norm(v)) for v in value}:
        return None
    return [v for v in value if json.dumps(_norm(v)) not in mine]


def check_view(*, stopped: bool = False) -> bool:
    """After the run: the inputs the link set but a widget did not keep; True when the page must be redrawn.

    ``stopped``: the page ended early (:func:`stop_page`, e.g. waiting for an uploaded file), so inputs it did not
    draw are not judged yet: their values wait in the session for their widgets, which start from them once drawn,
    and are judged on the run that draws them (a value the widget then refuses is warned about like any other).
    """
    st.session_state.pop(_UNCHECKED, None)
    restored = st.session_state.pop(_RESTORED, {})
    refused = st.session_state.pop(REFUSED, set())
    bad, waiting, left_out = [], {}, {}
    for key, value in restored.items():
        if key in refused or _fraction_for_a_whole_number(key, value):
            # out of the box's range (its message says so), or 5000.5 in a box of whole numbers, which shows 5000
            # while the page computes with 5000.5: the default, and the link's warning
            st.session_state.pop(key, None)
            bad.append(key)
        elif not _drawn_this_run(key):
            if stopped:
                waiting[key] = value
                continue
            st.session_state.pop(key, None)  # no input of this page has that name (any more)
            bad.append(key)
        elif (dropped := _left_out(value, st.session_state.get(key))) is not None:
            left_out[key] = dropped  # the options it offers stay chosen; the warning names the others
        elif key not in st.session_state or json.dumps(_norm(st.session_state[key])) != json.dumps(_norm(value)):
            # the widget did not keep the value (a multiselect drops unknown options, leaving none): forget it, so
            # the redrawn widget shows its default, as the warning says
            st.session_state.pop(key, None)
            bad.append(key)
    if waiting:
        st.session_state[_RESTORED] = waiting
    if bad:
        st.session_state.setdefault(_PROBLEMS, []).extend(bad)
        st.session_state.setdefault(_PROBLEM_VALUES, {}).update({k: restored[k] for k in bad})
    if left_out:
        st.session_state.setdefault(_LEFT_OUT, {}).update(left_out)
    shown = st.session_state.pop(_SHOWN, None) if (bad or left_out) else None
    if shown:  # the redrawn page says what this run said too (a name that is no input...)
        keys, values, lists = shown
        st.session_state[_PROBLEMS] = keys + st.session_state.get(_PROBLEMS, [])
        st.session_state[_PROBLEM_VALUES] = {**values, **st.session_state.get(_PROBLEM_VALUES, {})}
        st.session_state[_LEFT_OUT] = {**lists, **st.session_state.get(_LEFT_OUT, {})}
    return bool(bad or left_out)


def settle() -> None:
    """Before heavy work (:func:`dpcore.ui.common.shared_call`): judge the link's values of the inputs drawn so far,
    and if one did not fit, draw the page again at once with the warning, instead of after the work has run for a
    value the visitor never asked for. The inputs drawn later are judged at the end of the run, as usual."""
    if not st.session_state.get(_RESTORED):
        return
    if check_view(stopped=True):
        st.rerun()
    if st.session_state.get(_RESTORED):  # still waiting for inputs drawn after the work
        st.session_state[_UNCHECKED] = True


def _fraction_for_a_whole_number(key: str, value: Any) -> bool:
    """Whether the link gave a box of whole numbers a value that is not one (Streamlit keeps and returns it: the box
    shows 5000 while the page computes with 5000.5)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return False
    from streamlit.proto.NumberInput_pb2 import NumberInput

    serde = getattr(getattr(_widget_metadata(key), "deserializer", None), "__self__", None)
    return getattr(serde, "data_type", None) == NumberInput.INT


def abandon_view() -> bool:
    """A run that failed right after reading a link: drop the link's values; True when there were any."""
    st.session_state.pop(_UNCHECKED, None)
    restored = st.session_state.pop(_RESTORED, {})
    if not restored:
        return False
    for key in restored:
        st.session_state.pop(key, None)
    st.session_state.setdefault(_PROBLEMS, []).extend(restored)
    return True


def _norm(v: Any) -> Any:
    """A value as compared with the link's: tuples as lists, numbers as floats (a link's [1, 10] is the multiselect's
    [1.0, 10.0])."""
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def show_link_problems() -> None:
    """The warning for the inputs a link could not set (called by ``page_header``, once)."""
    bad = st.session_state.pop(_PROBLEMS, [])
    values = st.session_state.pop(_PROBLEM_VALUES, {})
    lists = st.session_state.pop(_LEFT_OUT, {})
    st.session_state[_SHOWN] = (list(bad), dict(values), dict(lists))
    if bad:
        keys = list(dict.fromkeys(bad))
        names = ", ".join(f"`{k}`" + (f" (`{_short_value(values[k])}`)" if k in values else "") for k in keys)
        many = len(keys) > 1
        prefix = getattr(_run, "prefix", None)
        hint = (f" This page's inputs are named `{prefix}…` (change one on the page to see its name in the address)."
                if prefix and any(not k.startswith(prefix) for k in keys) else "")
        st.warning(f"This link's value{'s' if many else ''} for {names} {'are' if many else 'is'} not valid here "
                   f"(out of range, outdated or mistyped): showing the default{'s' if many else ''} instead." + hint)
    for key, dropped in lists.items():
        st.warning(f"This link's `{key}` names {', '.join(f'`{_short_value(v)}`' for v in dropped)}, which "
                   f"{'is' if len(dropped) == 1 else 'are'} not offered here (outdated or mistyped): left out, the "
                   "rest of its choices kept.")


def _short_value(value: Any, limit: int = 40) -> str:
    """The link's value as it was written, cut to ``limit`` characters (a link may carry thousands)."""
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --- one page run: what the router does before and after it --------------------------------------------------

_run = threading.local()


def begin_page(prefix: str) -> None:
    """Before the page runs (the router): read the link, say what of an earlier link could not be used."""
    _run.prefix = prefix
    restore_view(prefix)
    show_link_problems()


def finish_page(*, stopped: bool = False) -> None:
    """After the page, or where it stops early (:func:`stop_page`, ``stopped=True``): check the link, write the
    view, draw the lesson's next stop (:mod:`dpcore.ui.lesson`) and the sidebar's glossary. Does nothing when the
    page runs without the router (a test, ``streamlit run pages/...``)."""
    prefix = getattr(_run, "prefix", None)
    if prefix is None:
        return
    _run.prefix = None
    if check_view(stopped=stopped):
        st.rerun()  # a value of the link did not fit: draw the page again, with the warning
    write_view(prefix)
    from .lesson import show_next_stop
    from .navigation import sidebar_glossary

    show_next_stop(prefix)  # a stop of the lesson links the next one, with the dataset, ε and seed on screen

    sidebar_glossary()


def stop_page() -> None:
    """``st.stop()`` for a page: the page ends here, but its view still goes into the address bar. What the
    dataset picker needs (a file, or a fix to one) is said here in the main area too."""
    problem = st.session_state.pop(DATASET_PROBLEM, None)
    if problem is not None:
        kind, message = problem
        (st.error if kind == "error" else st.info)(message)
    finish_page(stopped=True)
    st.stop()
