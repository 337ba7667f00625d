"""A page run that did not come through the router reruns through it, whatever the server's mode already is."""
from __future__ import annotations

import types

import pytest

from dpcore.ui import navigation


class _Rerun(Exception):
    pass


@pytest.fixture
def page_run(monkeypatch):
    """A fake script run whose main script is ``main``; returns a function telling whether the page reran."""
    import streamlit.runtime.scriptrunner_utils.script_run_context as src
    from streamlit.runtime.pages_manager import PagesManager

    state: dict = {}
    monkeypatch.setattr(navigation.st, "session_state", state)
    monkeypatch.setattr(PagesManager, "uses_pages_directory", False, raising=False)  # another visitor switched it

    def rerun():
        raise _Rerun

    monkeypatch.setattr(navigation.st, "rerun", rerun)

    def reran(main) -> bool:
        monkeypatch.setattr(src, "get_script_run_ctx", lambda: types.SimpleNamespace(main_script_path=str(main)))
        try:
            navigation.route_through_app()
        except _Rerun:
            return True
        return False

    reran.state = state
    return reran


def test_a_page_run_alone_in_the_apps_server_reruns_through_the_router_even_after_the_mode_was_switched(page_run):
    # several visitors deep-linked a fresh server: the first switched the process to routing; the others, already
    # running their pages alone, must still rerun (they stayed without the menu)
    assert page_run(navigation.APP_PATH)


def test_a_page_run_through_the_router_or_as_its_own_main_script_does_not_rerun(page_run):
    with navigation.routed():
        assert not page_run(navigation.APP_PATH)
    assert not page_run(navigation.APP_PATH.parent / "pages" / "7_PATE.py")  # AppTest or `streamlit run page.py`


def test_a_page_that_cannot_reach_the_router_stops_rerunning_after_three_tries(page_run):
    assert [page_run(navigation.APP_PATH) for _ in range(5)] == [True, True, True, False, False]
