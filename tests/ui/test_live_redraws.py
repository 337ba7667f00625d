"""Live charts and progress bars redraw less often while a class follows runs on one server."""
from __future__ import annotations

import pytest

from dpcore.ui import live


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(live.time, "monotonic", lambda: now[0])
    return now


def _redraws(due, *, seconds: float, step: float, clock) -> int:
    n = 0
    for _ in range(int(seconds / step)):
        clock[0] += step
        n += due()
    return n


def test_a_lone_visitor_sees_a_redraw_every_half_second(monkeypatch, clock):
    monkeypatch.setattr(live, "watchers", lambda: 1)
    assert _redraws(live.Every(live.CHART_SECONDS), seconds=10, step=0.125, clock=clock) == 20


def test_twenty_visitors_each_redraw_twenty_times_less_often_so_the_server_draws_as_much_as_for_one(
        monkeypatch, clock):
    monkeypatch.setattr(live, "watchers", lambda: 20)
    per_visitor = _redraws(live.Every(live.CHART_SECONDS), seconds=100, step=0.125, clock=clock)
    assert per_visitor == 10  # every 10 s
    assert 20 * per_visitor == 200 == 100 / live.CHART_SECONDS  # the server's total: two figures a second


def test_the_last_event_is_always_drawn(monkeypatch, clock):
    monkeypatch.setattr(live, "watchers", lambda: 50)
    due = live.Every(live.CHART_SECONDS)
    assert due()  # the first event is drawn at once
    clock[0] += 0.1
    assert not due()
    assert due(last=True)


def test_no_store_yet_counts_as_one_visitor(monkeypatch, clock):
    monkeypatch.setattr(live, "watchers", lambda: 0)
    assert live.pause(0.5) == 0.5
