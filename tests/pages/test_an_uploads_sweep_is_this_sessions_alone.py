"""A sweep of a visitor's file on the Trade-off explorer is that session's alone: two visitors who upload the very
same file and ask for the very same sweep never meet in the server's store of runs, so neither is handed a run
computed from the other's upload, nor told that another visitor asked for these inputs (which says they hold it)."""
from __future__ import annotations

import dpcore.ui.uploads as uploads
from dpcore.runtime.serving import shared_runs

from .test_tradeoff_advisor import _upload_page


def test_two_visitors_sweeping_the_same_file_ask_the_server_under_keys_of_their_own(tmp_path, monkeypatch):
    asked = []
    store = shared_runs()  # the server's one store, which every session asks
    real = store.get_or_run

    def spy(key, compute, **kwargs):
        if key and key[0] == "sweep":
            asked.append((key, kwargs.get("keep", True)))
        return real(key, compute, **kwargs)

    monkeypatch.setattr(store, "get_or_run", spy)
    for visitor in ("first visitor", "second visitor"):  # two visitors, one file, one sweep
        monkeypatch.setattr(uploads, "session_id", lambda v=visitor: v)  # AppTest gives every session one id
        at = _upload_page(tmp_path, monkeypatch)
        at.button(key="sweep.run").click().run()
        assert not at.exception and not at.error
        assert not any("Another visitor" in c.value for c in at.caption)
    assert len(asked) == 2
    (mine, kept_mine), (theirs, kept_theirs) = asked
    assert mine != theirs  # neither joins the other's run in flight
    assert "session" in mine and "session" in theirs  # each names its own session (dpcore.ui.uploads.private_key)
    assert not kept_mine and not kept_theirs  # and neither is kept by the server for anyone
