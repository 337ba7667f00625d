"""Widgets built from a learner's knob declarations: a knob added to a learner appears on its page.

:func:`knob_widget` draws one :class:`~dpcore.learners.Knob` (a number box with its declared
range, a checkbox, a select box or radio with its labelled choices); :func:`knob_widgets`
draws a learner's knobs of one group in order, greys out the ones that do not apply to the
values chosen so far (``Knob.when``), hides image-only knobs on tabular data, and returns the
chosen values. Widget keys are ``f"{prefix}.{knob}.{dataset}"``, so each dataset starts from its own
defaults and keeps what a visitor chose for it (a visitor's file is named ``your_file`` there: the address carries
the keys, never a file's name; :func:`dpcore.ui.uploads.widget_part`).
"""
from __future__ import annotations

import math
from typing import Any, Iterable

import streamlit as st

from ..exceptions import DPValueError
from ..learners import Knob, LearnerSpec, parse_value
from .common import bounded_number
from .uploads import KEPT_KNOBS, widget_part

__all__ = ["knob_key", "knob_widget", "knob_widgets", "knobs_named", "other_knobs", "help_text", "when_text",
           "widget_spec"]


def widget_spec(knob: Knob, *, value: Any, images: bool = True) -> dict:
    """What widget a knob gets and its arguments (pure Python: the tests check every declared knob).

    >>> from dpcore.learners import Knob
    >>> widget_spec(Knob("epochs", "int", low=1, high=100), value=5)["widget"]
    'number_input'
    """
    if knob.kind == "bool":
        return {"widget": "checkbox", "value": bool(value)}
    if knob.kind == "choice":
        options = list(knob.choices_for(images=images))
        index = options.index(value) if value in options else 0
        kind = "radio" if len(options) <= 3 else "selectbox"
        return {"widget": kind, "options": options, "index": index,
                "format_func": lambda c: knob.choice_labels.get(c, str(c))}
    if knob.kind in ("int", "float") and knob.also:
        # a number or one of the words it also takes ("auto"): typed, then read and checked like --set
        return {"widget": "text_input", "value": "" if value is None else str(value)}
    if knob.kind in ("int", "float"):
        lo = knob.low if knob.low is not None else None
        if knob.low_open and lo is not None:
            lo = (lo + 1) if knob.kind == "int" else (lo + (1e-3 if lo == 0 else abs(lo) * 1e-6))
        hi = knob.high
        v = value if value is not None else (lo if lo is not None else 0)
        if knob.kind == "int":
            # a box of decimals shown without decimals, checked as a whole number by bounded_number: Streamlit's
            # box of whole numbers turns what the browser sends into int itself, before the page runs, and NaN made
            # the page die with "cannot convert float NaN to integer" (Hidden layers on the Train page)
            return {"widget": "number_input", "min_value": None if lo is None else float(math.ceil(lo)),
                    "max_value": None if hi is None else float(int(hi)), "value": float(int(v)), "step": 1.0,
                    "format": "%.0f", "whole": True}
        return {"widget": "number_input", "min_value": None if lo is None else float(lo),
                "max_value": None if hi is None else float(hi), "value": float(v), "format": "%g"}
    return {"widget": "text_input", "value": "" if value is None else str(value)}


def knobs_named(spec: LearnerSpec, *names: str) -> list[Knob]:
    """``spec``'s knobs called ``names``, in that order (a page's hand-picked section)."""
    return [spec.knob(n) for n in names]


def other_knobs(spec: LearnerSpec, drawn: Iterable[str]) -> list[Knob]:
    """``spec``'s knobs not in ``drawn``, in declaration order: a page's "More settings", so a knob added to the
    learner shows up on its page without touching the page."""
    seen = set(drawn)
    return [k for k in spec.knobs if k.name not in seen]


def help_text(knob: Knob, note: str = "") -> str | None:
    """The tooltip: the knob's words for a page (else its command-line help) as a sentence, then ``note``."""
    words = knob.page_help or knob.help
    sentence = words[:1].upper() + words[1:] + ("" if words.endswith(".") else ".") if words else ""
    return (sentence + " " + note).strip() or None


def knob_widget(knob: Knob, *, key: str, value: Any, container=None, disabled: bool = False,
                images: bool = True, help: str | None = None, note: str = "") -> Any:
    """Draw ``knob`` with ``value`` preselected; returns the chosen value (checked by the knob). ``help``
    replaces the knob's own tooltip; ``note`` is added to it."""
    c = container or st.sidebar
    spec = widget_spec(knob, value=value, images=images)
    widget = spec.pop("widget")
    help_text_ = help or help_text(knob, note)
    if _restore(key):  # the state gives the value: a default as well would make Streamlit warn
        spec.pop("value", None)
        spec.pop("index", None)
    out = _draw(c, widget, knob, key=key, value=value, disabled=disabled, tip=help_text_, spec=spec)
    st.session_state[_KEPT][key] = st.session_state.get(key)
    return out


#: Where each knob widget's last value is kept for this visitor (see :func:`_restore`).
_KEPT = KEPT_KNOBS


def _restore(key: str) -> bool:
    """Give the widget ``key`` back the value this visitor chose, when Streamlit has forgotten it.

    Streamlit drops the state of a widget that a run does not draw: with one box per dataset, choosing 20
    teachers on digits, looking at iris and coming back would show the default again. True when restored.
    """
    kept = st.session_state.setdefault(_KEPT, {})
    if key not in st.session_state and kept.get(key) is not None:
        st.session_state[key] = kept[key]
        return True
    return False


def _draw(c, widget: str, knob: Knob, *, key: str, value: Any, disabled: bool, tip: str | None, spec: dict) -> Any:
    """The Streamlit widget for ``widget`` (see :func:`widget_spec`), its value checked by the knob."""
    if widget == "checkbox":
        return c.checkbox(knob.label, key=key, disabled=disabled, help=tip, **spec)
    if widget == "radio":  # side by side when the choices' names are short, one per line otherwise
        short = all(len(spec["format_func"](o)) <= 24 for o in spec["options"])
        return c.radio(knob.label, key=key, disabled=disabled, help=tip, horizontal=short, **spec)
    if widget == "selectbox":
        return c.selectbox(knob.label, key=key, disabled=disabled, help=tip, **spec)
    if widget == "number_input":  # the range is checked here, so a value out of it is said, not silently refused
        low, high = spec.pop("min_value", None), spec.pop("max_value", None)
        out = bounded_number(c, knob.label, low=low, high=high, default=value, key=key, disabled=disabled,
                             help=tip, **spec)
        return knob.check(out)
    text = c.text_input(knob.label, key=key, disabled=disabled, help=tip or knob.describe(), **spec)
    try:
        return knob.check(parse_value(text.strip()))
    except DPValueError as exc:  # a typo is answered under the box, and the default is used meanwhile
        c.warning(f"{exc}. Using the default, {value}.")
        return knob.check(value)


def when_text(spec: LearnerSpec, knob: Knob) -> str:
    """"Used only when Model is Small neural network.": ``knob.when`` in the page's words."""
    parts = []
    for name, allowed in knob.when.items():
        other = spec.knob(name)
        if other is None:
            continue
        shown = [other.choice_labels.get(a, "on" if a is True else "off" if a is False else str(a)) for a in allowed]
        parts.append(f"{other.label} is {' or '.join(shown)}" if other.kind != "bool" else
                     f"{other.label} is {'ticked' if True in allowed else 'not ticked'}")
    return f"Used only when {' and '.join(parts)}." if parts else ""


def knob_key(prefix: str, name: str, dataset: str) -> str:
    """The session key of a knob's widget drawn by :func:`knob_widgets` (one per dataset), e.g. for a control drawn
    before it that depends on its value (Streamlit keeps the value from the last run)."""
    return f"{prefix}.{name}.{widget_part(dataset)}"  # a visitor's file by a word, never by its name


def knob_widgets(spec: LearnerSpec, knobs: Iterable[Knob], defaults: dict, *, prefix: str, dataset: str,
                 images: bool, chosen: dict | None = None, container=None, in_form: bool = False,
                 private: bool = True, split=None) -> dict:
    """Draw ``knobs`` of ``spec`` in order; returns ``{name: value}`` for the ones that apply.

    ``defaults`` holds each knob's default for the dataset (``spec.defaults(split)``); a
    knob without one (the learner decides) is skipped. ``chosen`` holds values picked
    further up the page, for ``Knob.when``: a knob that does not apply is greyed out, except
    ``in_form`` (a form redraws only on submit, so a greyed box would stay greyed after the choice
    that enables it), where its help says when it is used instead. With ``private=False`` (a
    non-private run chosen outside the form) the privacy knobs are greyed out and say why. Given the ``split``, a
    knob whose default follows another knob's value (``Knob.default_if``: a CNN's learning rate) starts from that
    default, in a widget of its own for that value, so switching back restores the other default.
    """
    values = dict(chosen or {})
    out = {}
    for knob in knobs:
        if (knob.images and not images) or defaults.get(knob.name) is None:
            continue
        applies = knob.applies(values)
        note = when_text(spec, knob) if in_form and knob.when else ""
        unused = knob.privacy and not private
        if unused:
            note = (note + " " if note else "") + "Not used: a non-private run spends no privacy budget."
        key, default = knob_key(prefix, knob.name, dataset), defaults[knob.name]
        if split is not None and (follow := knob.following(values, split)) is not None:
            key, default = f"{key}.{follow[0]}", follow[1]
        v = knob_widget(knob, key=key, value=default,
                        container=container, disabled=(not applies and not in_form) or unused, images=images,
                        note=note)
        values[knob.name] = v
        if applies:
            out[knob.name] = v
    return out
