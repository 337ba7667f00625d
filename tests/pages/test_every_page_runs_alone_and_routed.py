"""Every page file runs on its own (``streamlit run pages/...``, ``AppTest.from_file``) and through the router.

Run alone, a page has no other page to link to: the home page's grid of cards once failed there with
StreamlitPageNotFoundError from ``st.page_link``; it now names the pages without linking
(:func:`dpcore.ui.navigation.page_link`). Only each page's first, default run is made here.
"""
from __future__ import annotations

import pytest

from dpcore.ui.navigation import PAGES

#: Session state that keeps a page's first run small (as a link would): the Federated page otherwise trains a
#: federation on MNIST when it opens, which its own tests cover.
SMALL = {"pages/8_Federated_learning.py": {"fed.dataset": "digits", "fed.rounds": 1}}


def _small(at, path):
    for key, value in SMALL.get(path, {}).items():
        at.session_state[key] = value
    return at


@pytest.mark.parametrize("path", [p.path for p in PAGES], ids=[p.path.split("/")[-1] for p in PAGES])
def test_a_page_runs_alone_without_an_exception(app_page, path):
    at = _small(app_page(path, timeout=180), path).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title, "the page drew no title"


@pytest.mark.parametrize("path", [p.path for p in PAGES], ids=[p.path.split("/")[-1] for p in PAGES])
def test_a_page_runs_through_the_router_without_an_exception(app_page, path):
    at = _small(app_page("app.py", timeout=180), path).run()
    at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title, "the page drew no title"
    assert [link.proto.label for link in at.sidebar.get("page_link")] == [p.title for p in PAGES]  # the menu
