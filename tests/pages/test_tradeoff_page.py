"""The trade-off explorer page: a 2-value, 1-seed sweep runs and shows its table; reopening is cached."""
from __future__ import annotations

import pathlib
import sys

import pytest
from streamlit.testing.v1 import AppTest

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT / "tests" / "sweep") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests" / "sweep"))
import sweep_fake_learners  # noqa: E402

PAGE = str(ROOT / "pages" / "5_Tradeoff_explorer.py")


def _run_table(at):
    """The per-run table (the one with a ``cached`` column), or None when none is shown."""
    return next((df.value for df in at.dataframe if "cached" in df.value.columns), None)


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    sweep_fake_learners.register_learners()
    yield
    sweep_fake_learners.unregister_learners()


def _page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception
    at.selectbox(key="sweep.dataset").set_value("iris")
    at.run()
    at.multiselect(key="sweep.learners.epsilon").set_value(["fake-dp"])
    at.number_input(key="sweep.min.epsilon").set_value(0.5)
    at.number_input(key="sweep.max.epsilon").set_value(5.0)
    at.number_input(key="sweep.points.epsilon").set_value(2)
    at.number_input(key="sweep.seeds").set_value(1)
    at.number_input(key="sweep.jobs").set_value(1)  # in-process: the fakes are registered here only
    at.run()
    assert not at.exception and not at.error
    return at


def test_page_runs_a_small_sweep_and_shows_the_table(fakes):
    at = _page()
    assert _run_table(at) is None
    assert any("Press **Run**" in i.value for i in at.info)
    at.button(key="sweep.run").click()
    at.run()
    assert not at.exception and not at.error
    table = _run_table(at)
    swept = table[table.role == "swept"]
    assert sorted(swept.value) == [0.5, 5.0] and set(swept.seed) == {0}
    assert set(table[table.role != "swept"].learner) == {"fake-np", "majority"}
    assert (swept.epsilon < swept.value).all()  # the fake accountant spends 90 % of the target
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Runs"] == "4"
    assert len(at.get("plotly_chart")) == 1

    # reopening the same settings (a fresh session) shows the cached curve without pressing Run
    again = _page()
    table2 = _run_table(again)
    assert table2.cached.all() and len(table2) == 4
    # changing a setting changes the plan: the curve for 3 points is not cached yet
    again.number_input(key="sweep.points.epsilon").set_value(3)
    again.run()
    assert _run_table(again) is None


def test_page_reports_bad_knobs_without_a_traceback(fakes):
    at = _page()
    at.text_area(key="sweep.knobs").set_value("epoch=3")
    at.run()
    assert not at.exception
    assert any("no learner in this sweep takes parameter(s) ['epoch']" in e.value for e in at.error)
