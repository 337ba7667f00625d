"""Warnings are caught per thread: a server's visitors never see, nor take, each other's runs' warnings."""
from __future__ import annotations

import threading
import warnings

import pytest

from dpcore.runtime.thread_warnings import caught, ignored


def _in_thread(fn) -> threading.Thread:
    t = threading.Thread(target=fn)
    t.start()
    return t


def test_a_thread_catching_warnings_gets_only_its_own_while_another_thread_warns():
    run_started, visitor_waiting, run_done = threading.Event(), threading.Event(), threading.Event()
    got = {}

    def run():  # a shared run on the server's worker thread
        with caught() as seen:
            run_started.set()
            visitor_waiting.wait(5)
            for _ in range(3):  # repeats reach the run every time
                warnings.warn("the run's own warning", stacklevel=1)
        got["run"] = [str(w.message) for w in seen]
        run_done.set()

    def waiting_visitor():  # another visitor's page, waiting in its own block while that run goes on
        run_started.wait(5)
        with caught() as seen:
            visitor_waiting.set()
            run_done.wait(5)
        got["visitor"] = [str(w.message) for w in seen]

    threads = [_in_thread(run), _in_thread(waiting_visitor)]
    for t in threads:
        t.join(5)
    assert got["visitor"] == []  # with catch_warnings(record=True) it got the run's three, and the run none
    assert got["run"] == ["the run's own warning"] * 3


def test_ignoring_a_warning_in_one_thread_leaves_other_threads_warnings_alone():
    inside, done = threading.Event(), threading.Event()

    def quiet_run():
        with ignored(UserWarning, "converge"):
            inside.set()
            done.wait(5)

    t = _in_thread(quiet_run)
    inside.wait(5)
    with caught() as seen:
        warnings.warn("converged badly", stacklevel=1)
    done.set()
    t.join(5)
    assert [str(w.message) for w in seen] == ["converged badly"]


def test_an_ignored_block_drops_only_what_it_names_and_an_inner_catch_still_records():
    with caught() as outer:
        with ignored(UserWarning, r".*converge"):
            warnings.warn("did not converge", stacklevel=1)  # dropped
            warnings.warn("single class", stacklevel=1)  # passes to the outer block
            with caught() as inner:
                warnings.warn("did not converge", stacklevel=1)
    assert [str(w.message) for w in outer] == ["single class"]
    assert [str(w.message) for w in inner] == ["did not converge"]


def test_outside_every_block_python_warnings_behave_as_before():
    filters, hook = list(warnings.filters), warnings._showwarnmsg_impl
    with caught():
        warnings.warn("inside", stacklevel=1)
    assert warnings.filters == filters and warnings._showwarnmsg_impl is hook
    with pytest.warns(UserWarning, match="outside"):  # pytest's own recorder still sees warnings
        warnings.warn("outside", stacklevel=1)


def test_nested_blocks_that_have_caught_nothing_yet_close_as_themselves():
    with caught() as outer:
        with caught() as inner:  # equal to the outer while both are empty
            pass
        warnings.warn("after the inner block", stacklevel=1)
    assert inner == [] and [str(w.message) for w in outer] == ["after the inner block"]
