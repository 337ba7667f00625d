"""NaN or infinity in a number box or in a link never reaches the computation and never kills a page.

The Train page with the MLP and Hidden layers set to NaN died with "ValueError: cannot convert float NaN to integer"
(Streamlit's box of whole numbers converted it before the page ran): knob boxes of whole numbers hold decimals and
are checked as whole numbers by the page, and a link's NaN is refused by name like any other bad value.
"""
from __future__ import annotations

import pytest

from tests.pages.conftest import page


def _train_page():
    at = page("pages/2_Train_a_network.py")
    at.run()
    assert not at.exception
    at.selectbox(key="train.dataset").set_value("iris").run()
    at.radio(key="train.model.iris").set_value("mlp").run()
    return at


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 2.5])
def test_hidden_layers_set_to_a_non_whole_number_keeps_the_train_page_alive_on_a_whole_number(bad):
    at = _train_page()
    at.number_input(key="train.depth.iris").set_value(bad).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    if bad == 2.5:  # reaches the page: refused by name
        assert "Hidden layers must be a whole number from 1 to 8; 2.5 is not" in errors
    at.number_input(key="train.epochs.iris").set_value(2).run()
    at.button(key="train.run").click().run()  # the page trains with the default depth meanwhile
    assert not at.exception
    assert "Test accuracy (private)" in [m.label for m in at.metric]


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_a_link_giving_a_knob_nan_or_infinity_is_named_in_its_warning(bad):
    at = page("app.py")
    at.switch_page("pages/2_Train_a_network.py")
    at.query_params["train.depth.iris"] = bad
    at.run()
    assert not at.exception
    assert any("train.depth.iris" in w.value for w in at.warning)
