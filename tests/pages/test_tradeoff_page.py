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

PAGE = str(ROOT / "views" / "5_Tradeoff_explorer.py")


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


def test_figure_bands_baselines_and_log_axes(fakes):
    from dpcore.sweep import SweepConfig, run_sweep
    from dpcore.ui.sweep import sweep_figure

    cfg = SweepConfig(dataset="diabetes", learners=["fake-dp"], values=[0.5, 2.0, 8.0], seeds=2,
                      providers=("sweep_fake_learners",))
    table = run_sweep(cfg, n_jobs=1).table
    fig = sweep_figure(table, cfg, metric="mse", log_x=True, band="std")
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"  # log-log for MSE (seed 002)
    names = [t.name for t in fig.data if t.showlegend is not False]
    assert names[0] == "Fake DP learner" and any(n.startswith("Fake non-private learner: ") for n in names)
    assert any(n.startswith("Mean predictor (trivial)") for n in names)
    mean_line = next(t for t in fig.data if t.name == "Fake DP learner")
    s = table[table.role == "swept"].groupby("value").mse
    assert list(mean_line.y) == pytest.approx(list(s.mean()))
    upper, lower = fig.data[0], fig.data[1]  # the band: mean +- sample std across the two seeds
    assert list(upper.y) == pytest.approx(list(s.mean() + s.std()))
    assert list(lower.y) == pytest.approx(list(s.mean() - s.std()))
    fig2 = sweep_figure(table, cfg, metric="r2", log_x=False)
    assert fig2.layout.yaxis.type == "linear" and fig2.layout.xaxis.type == "linear"
    assert list(fig2.data[0].y) == pytest.approx(list(table[table.role == "swept"].groupby("value").r2.max()))
