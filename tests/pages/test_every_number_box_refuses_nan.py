"""Every number box on every page, set to NaN, never kills the page: the computation gets a number, never NaN.

Streamlit's box of whole numbers converts what the browser sends to int before the page runs, so NaN in the
Federated page's Rounds, a Seed box or the Accountant's n raised "cannot convert float NaN to integer".
Every box now goes through :func:`dpcore.ui.common.bounded_number`. Each page runs its first, default run once
(plus what reveals its hidden boxes); then each box in turn is set to NaN, checked, and given back its value. Every
box holds decimals, and Streamlit puts a decimal box's value back for NaN; should NaN ever reach the page, it is
refused by name (the message checked here). A box that may be left empty (Federated rounds, empty: "from ε") reads
NaN as empty, which is what Streamlit hands on.
"""
from __future__ import annotations

import math

import pytest

from dpcore.ui.navigation import PAGES
from tests.pages.test_every_page_runs_alone_and_routed import SMALL

#: Session state that shows boxes a page's first run hides (DPLloyd's rounds appear when its default is off).
REVEAL = {"pages/3_Clustering.py": {"cluster.auto_iter": False}}
#: Pages that draw no number box (checked: a box added there is tried like the others).
NO_BOX = {"pages/10_Papers_reproduced.py", "pages/11_Glossary.py"}


def _refusals(at) -> list[str]:
    return [e.value for e in at.error if "until it is." in e.value]


def _apply(at, box) -> None:
    """Run with the box's new value: a box in a form counts once its form is submitted, as in a browser."""
    if box.form_id:
        next(b for b in at.button if b.form_id == box.form_id).click()
    at.run()


@pytest.mark.parametrize("path", [p.path for p in PAGES], ids=[p.path.split("/")[-1] for p in PAGES])
def test_nan_in_any_number_box_is_refused_by_name_and_the_page_goes_on(app_page, path):
    at = app_page(path, timeout=180)
    for key, value in {**SMALL.get(path, {}), **REVEAL.get(path, {})}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # a greyed-out box cannot be typed in (the Train page's hidden layers while the model is not a network)
    boxes = [(box.key, box.label, box.value) for box in at.number_input if not box.proto.disabled]
    assert bool(boxes) != (path in NO_BOX), [b[0] for b in boxes]
    for key, label, before in boxes:
        _apply(at, at.number_input(key=key).set_value(math.nan))
        assert not at.exception, (key, [e.value for e in at.exception])
        if at.number_input(key=key).proto.placeholder:  # a box that may be left empty (Federated rounds: "from ε")
            assert at.number_input(key=key).value is None  # Streamlit hands NaN on as an empty box: its meaning
            _apply(at, at.number_input(key=key).set_value(before))
            continue
        after = at.number_input(key=key).value
        said = _refusals(at)
        # either the box kept a number (Streamlit put it back) or the page said why it did not take NaN
        assert (after is not None and math.isfinite(after)) or said, f"{label!r} ({key}) took NaN without a word"
        assert not said or ("must be" in said[0] and "not a number" in said[0]), said
        _apply(at, at.number_input(key=key).set_value(before))  # back: the next box is tried on the default page
        assert not _refusals(at), f"{label!r} ({key}): the message stayed after the value was put back"


def test_no_page_draws_a_number_box_of_its_own(root):
    # a box drawn with st.number_input directly would bring back Streamlit's conversion of NaN to int
    files = [p for folder in ("pages", "dpcore/ui") for p in sorted((root / folder).glob("*.py"))]
    own = [f"{path.relative_to(root)}:{n}" for path in files if path.name != "common.py"
           for n, line in enumerate(path.read_text().splitlines(), 1) if "number_input(" in line]
    assert not own, own
