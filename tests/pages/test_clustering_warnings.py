"""The Clustering page's warnings come with the result: a second visitor served from the cache sees them too,
once each, naming the method as the page does."""
from __future__ import annotations

from tests.pages.conftest import page

PAGE = "pages/3_Clustering.py"


def _warnings(at):
    return [w.value for w in at.warning if "no more accurate" in w.value]


def test_a_weak_method_is_said_to_the_first_visitor_and_to_the_next_one_served_from_the_cache():
    first = page(PAGE).run()
    first.selectbox(key="cluster.dataset").set_value("breast_cancer").run()  # DPLloyd at ε = 1 matches the benign share
    said = _warnings(first)
    assert said and len(said) == len(set(said))
    assert not any(w.startswith(("dplloyd", "input-perturbation", "lloyd")) for w in said)
    second = page(PAGE).run()  # a new session: the same inputs come from st.cache_data
    second.selectbox(key="cluster.dataset").set_value("breast_cancer").run()
    assert _warnings(second) == said
