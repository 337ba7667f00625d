"""The Clustering page's readings come with the result: a second visitor served from the cache sees them too, once
each, naming the method as the page does. "No better than random centres" is said once, in the paragraph under the
numbers (with the numbers), not again as a warning above them."""
from __future__ import annotations

from tests.pages.conftest import page

PAGE = "pages/3_Clustering.py"


def _readings(at):
    return [m.value for m in at.markdown if "no better than random centres" in m.value]


def test_a_weak_method_is_said_to_the_first_visitor_and_to_the_next_one_served_from_the_cache():
    first = page(PAGE).run()
    first.selectbox(key="cluster.dataset").set_value("breast_cancer").run()  # DPLloyd at ε = 1 matches the benign share
    said = _readings(first)
    assert len(said) == 1 and "DPLloyd (" in said[0]
    assert not any("than centres drawn at random" in w.value for w in first.warning)  # not said twice
    assert not any(w.value.startswith(("dplloyd", "input-perturbation", "lloyd")) for w in first.warning)
    second = page(PAGE).run()  # a new session: the same inputs come from st.cache_data
    second.selectbox(key="cluster.dataset").set_value("breast_cancer").run()
    assert _readings(second) == said
