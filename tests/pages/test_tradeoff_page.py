"""The trade-off explorer page: a 2-value, 1-seed sweep runs and shows its table; reopening is cached.

Also: privacy-leak warnings are shown (fresh and from the cache), a knob of the wrong type or a failing
run leaves no stale chart, the tables are readable, regression data defaults to the functional mechanism.
"""
from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest
from streamlit.testing.v1 import AppTest

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT / "tests" / "sweep") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests" / "sweep"))
import sweep_fake_learners  # noqa: E402

PAGE = str(ROOT / "pages" / "5_Tradeoff_explorer.py")


def _run_table(at):
    """The displayed per-run table (the one with a "From cache" column), or None when none is shown."""
    return next((df.value for df in at.dataframe if "From cache" in df.value.columns), None)


def _result(at):
    """The SweepResult the page keeps in its session (numbers, not display strings)."""
    store = at.session_state["sweep.results"]
    return list(store.values())[-1]


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    sweep_fake_learners.register_learners()
    yield
    sweep_fake_learners.unregister_learners()


def _page(dataset: str = "iris", learners=("fake-dp",), points: int = 2, knobs: str = "") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception
    at.selectbox(key="sweep.dataset").set_value(dataset)
    at.run()
    ms = next(m for m in at.multiselect if m.key.startswith("sweep.learners."))
    ms.set_value(list(learners))
    at.number_input(key="sweep.min.epsilon").set_value(0.5)
    at.number_input(key="sweep.max.epsilon").set_value(5.0)
    at.number_input(key="sweep.points.epsilon").set_value(points)
    at.number_input(key="sweep.seeds").set_value(1)
    at.number_input(key="sweep.jobs").set_value(1)  # in-process: the fakes are registered here only
    at.text_area(key="sweep.knobs").set_value(knobs)
    at.run()
    assert not at.exception
    return at


def test_page_runs_a_small_sweep_and_shows_the_table(fakes):
    at = _page()
    assert not at.error
    assert _run_table(at) is None
    assert any("Press **Run**" in i.value for i in at.info)
    assert not [r for r in at.radio if r.key == "sweep.metric"]  # one metric: no single-option radio
    at.button(key="sweep.run").click()
    at.run()
    assert not at.exception and not at.error
    table = _result(at).table
    swept = table[table.role == "swept"]
    assert sorted(swept.value) == [0.5, 5.0] and set(swept.seed) == {0}
    assert set(table[table.role != "swept"].learner) == {"fake-np", "majority"}
    assert (swept.epsilon < swept.value).all()  # the fake accountant spends 90 % of the target
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Runs"] == "4"
    assert len(at.get("plotly_chart")) == 1
    # accuracies read to three decimals, as on every other page (0.500, never 0.5)
    scores = [v for k, v in metrics.items() if k != "Runs"]
    assert len(scores) == 3 and all(re.fullmatch(r"[01]\.\d{3}", v) for v in scores), scores

    # readable display: titles, no None / inf / nan cells, no code-style headers
    shown = _run_table(at)
    assert "Fake DP learner" in set(shown["Learner"]) and "cached" not in shown.columns
    # plain, its learners' names wrapping: a grid of it ran past a 1280 px page
    summary = next(t.value for t in at.table if "Mean Accuracy" in t.value.columns)
    for df in (shown, summary):
        cells = {str(v) for v in df.to_numpy().ravel()}
        assert not cells & {"None", "nan", "inf", "Infinity", "NaN"}
        assert not any("_" in c for c in df.columns)
    assert "—" in set(summary["ε"]) and "∞" in set(summary["ε spent"])
    assert all(re.fullmatch(r"[01]\.\d{3}", v) for v in summary["Mean Accuracy"]), list(summary["Mean Accuracy"])
    # the short headers a laptop's width asks for are said in words under the table
    said = " ".join(c.value for c in at.caption)
    assert "Std (standard deviation)" in said and {"Std", "Min", "Max"} <= set(summary.columns)

    # reopening the same settings (a fresh session) shows the cached curve without pressing Run
    again = _page()
    table2 = _result(again).table
    assert table2.cached.all() and len(table2) == 4
    # changing a setting changes the plan: the curve for 3 points is not cached yet
    again.number_input(key="sweep.points.epsilon").set_value(3)
    again.run()
    assert _run_table(again) is None


def test_page_reports_bad_knobs_without_a_traceback(fakes):
    at = _page(knobs="epoch=3")
    assert any("no learner in this sweep takes parameter(s) ['epoch']" in e.value for e in at.error)
    at.text_area(key="sweep.knobs").set_value("epochs=abc")  # a knob of the wrong type fails before any run
    at.run()
    assert not at.exception
    assert any("epochs must be a whole number" in e.value for e in at.error)
    at.text_area(key="sweep.knobs").set_value("epochs=1000000000")  # beyond the declared range: refused, no run
    at.run()
    assert any("epochs must be a whole number from 1 to 10000, got 1000000000" in e.value for e in at.error)
    assert not at.get("plotly_chart") and not at.info


def test_a_fixed_knob_with_no_name_is_refused_as_the_line_it_is(fakes):
    # '=3' was refused as "no learner in this sweep takes parameter(s) ['']", the list of every knob after it, where
    # the command line's --set =3 says a KEY is missing
    at = _page(knobs="epochs=3\n=3")
    assert not at.exception
    said = [e.value for e in at.error]
    assert any("with a key before '='; got '=3'" in e for e in said) and not any("['']" in e for e in said)


def test_a_failing_run_leaves_no_chart_and_no_run_prompt(fakes):
    at = _page(knobs="fail=true")
    at.button(key="sweep.run").click()
    at.run()
    assert not at.exception
    assert any("asked to fail" in e.value for e in at.error)
    assert not at.get("plotly_chart")
    assert not any("Press **Run**" in i.value for i in at.info)


def test_leak_warning_is_shown_fresh_and_from_the_cache(tmp_path, monkeypatch):
    """preprocess=standardize on erm-objective leaks: a row-level flag and a visible st.warning, twice."""
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = _page("breast_cancer", ("erm-objective",), points=1, knobs="preprocess=standardize")
    at.button(key="sweep.run").click()
    at.run()
    assert not at.exception and not at.error
    table = _result(at).table
    assert table.set_index("learner").loc["erm-objective", "leaks_privacy"]
    assert table.set_index("learner").loc["logreg", "leaks_privacy"]

    def leak_texts(app):
        return [w.value for w in app.warning if "Privacy leak" in w.value]

    texts = leak_texts(at)
    assert texts and "DP-ERM, objective perturbation" in texts[0] and "logreg" not in texts[0].split(":")[0]
    assert "Regularised logistic regression" in texts[0]  # the baseline raised the same message: both named
    shown = _run_table(at).set_index("Learner")["Leaks privacy"]
    assert shown.loc["DP-ERM, objective perturbation (Chaudhuri et al. Alg. 2)"].startswith("⚠")
    assert shown.loc["Majority class (trivial)"] == ""
    # a single value (0.5): the x-axis is a readable range around it, not -0.5..1
    xaxis = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["xaxis"]
    assert xaxis["range"] == pytest.approx([0.25, 0.75]) and xaxis["tickvals"] == [0.5]

    again = _page("breast_cancer", ("erm-objective",), points=1, knobs="preprocess=standardize")
    assert _result(again).table.cached.all()
    assert leak_texts(again) == texts


def test_learners_whose_epsilon_protects_different_neighbours_are_not_passed_off_as_one_unit(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = _page("iris", ("dpsgd", "erm-objective"), points=1)
    at.button(key="sweep.run").click()
    at.run()
    assert not at.exception
    swept = _result(at).table.query("role == 'swept'").set_index("learner")
    assert swept.loc["dpsgd", "neighbouring"] == "add-remove" and swept.loc["erm-objective", "neighbouring"] == (
        "replace-one")  # the exported CSV says it per run
    note = next(i.value for i in at.info if "Two meanings of ε" in i.value)
    assert "DP-SGD" in note and "one record added or removed" in note and "one record replaced by another" in note
    # the δ grows too, as the session's total restates it (a note saying "at most 2ε" alone contradicted it)
    assert "gives at most (2ε, (1 + e^ε)δ) under replace-one" in note
    # in words on the page, as in the note (the identifiers add-remove / replace-one are the CSV's)
    assert set(_run_table(at)["Neighbours"]) == {"one record added or removed", "one record replaced by another", "—"}


def test_regression_defaults_and_no_better_than_trivial_note(fakes):
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert set(next(m for m in at.multiselect if m.key.startswith("sweep.learners.")).value) == {
        "dpsgd", "erm-objective"}
    at.selectbox(key="sweep.dataset").set_value("diabetes")
    at.run()
    ms = next(m for m in at.multiselect if m.key.startswith("sweep.learners."))
    assert ms.value == ["functional-mechanism", "ssp"]  # reset, and the learners made for regression
    assert [r for r in at.radio if r.key == "sweep.metric"]  # two metrics (MSE, R²): the radio is shown

    # a learner that is never better than the trivial line gets a visible note
    at2 = _page(knobs="noise_multiplier=10000")
    at2.button(key="sweep.run").click()
    at2.run()
    assert not at2.exception
    assert any("no better than the trivial predictor" in w.value and "Fake DP learner" in w.value
               for w in at2.warning)


def test_figure_bands_baselines_and_log_axes(fakes):
    from dpcore.sweep import SweepConfig, run_sweep
    from dpcore.ui.sweep import sweep_figure

    cfg = SweepConfig(dataset="diabetes", learners=["fake-dp"], values=[0.5, 2.0, 8.0], seeds=2,
                      providers=("sweep_fake_learners",))
    table = run_sweep(cfg, n_jobs=1).table
    fig = sweep_figure(table, cfg, metric="mse", log_x=True, band="std")
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"  # log-log for MSE
    names = [t.name for t in fig.data if t.showlegend is not False]
    assert names[0] == "Fake DP learner" and any(n.startswith("Fake non-private learner: ") for n in names)
    assert any(n.startswith("Mean predictor (trivial)") for n in names)
    mean_line = next(t for t in fig.data if t.name == "Fake DP learner")
    s = table[table.role == "swept"].groupby("value").mse
    assert list(mean_line.y) == pytest.approx(list(s.mean()))
    upper, lower = fig.data[0], fig.data[1]  # the band: mean +- sample std across the two seeds
    assert list(upper.y) == pytest.approx(list(s.mean() + s.std()))
    assert list(lower.y) == pytest.approx(list(s.mean() - s.std()))
    ticks = [float(t) for t in fig.layout.yaxis.ticktext]  # round numbers on the log MSE axis, at least two
    assert len(ticks) >= 2 and all(float(f"{t:.1g}") == t for t in ticks)
    fig2 = sweep_figure(table, cfg, metric="r2", log_x=False)
    assert fig2.layout.yaxis.type == "linear" and fig2.layout.xaxis.type == "linear"
    assert list(fig2.data[0].y) == pytest.approx(list(table[table.role == "swept"].groupby("value").r2.max()))


@pytest.mark.parametrize("log_x", [True, False])
def test_single_value_gets_a_readable_range(fakes, log_x):
    from dpcore.sweep import SweepConfig, run_sweep
    from dpcore.ui.sweep import sweep_figure

    cfg = SweepConfig(dataset="iris", learners=["fake-dp"], values=[1.0], seeds=1, providers=("sweep_fake_learners",))
    table = run_sweep(cfg, n_jobs=1).table
    fig = sweep_figure(table, cfg, metric="accuracy", log_x=log_x)
    lo, hi = fig.layout.xaxis.range
    if log_x:
        assert lo == pytest.approx(-0.477, abs=1e-3) and hi == pytest.approx(0.477, abs=1e-3)  # 1/3 .. 3
    else:
        assert (lo, hi) == pytest.approx((0.5, 1.5))
    assert list(fig.layout.xaxis.tickvals) == [1.0]
    baseline = next(t for t in fig.data if t.name and t.name.startswith("Majority"))
    span = [10 ** lo, 10 ** hi] if log_x else [lo, hi]
    assert list(baseline.x) == pytest.approx(span)  # the baselines cross the whole visible range


def test_leaky_learner_is_marked_in_the_legend(fakes):
    from dpcore.sweep import SweepConfig, run_sweep
    from dpcore.ui.sweep import sweep_figure

    cfg = SweepConfig(dataset="iris", learners=["fake-dp"], values=[1.0, 2.0], seeds=1, params={"warn": True},
                      providers=("sweep_fake_learners",))
    with pytest.warns(Warning):
        table = run_sweep(cfg, n_jobs=1).table
    fig = sweep_figure(table, cfg, metric="accuracy")
    assert any(t.name == "Fake DP learner ⚠ leaks privacy" for t in fig.data)


def test_knob_list_is_readable(fakes):
    from dpcore.ui.sweep import knobs_markdown

    text = knobs_markdown(["fake-dp", "fake-fixed"])
    assert "- **Fake DP learner**: `clip_norm` (a number > 0 and <= 1e+06)" not in text  # ranges read naturally
    assert "- **Fake DP learner**: `clip_norm` (a number from 0 (excluded) to 1e+06)" in text
    assert "`epochs` (a whole number from 1 to 10000)" in text
    assert "- **Fake pure-DP learner without knobs**: `call_log` (a text value)" in text


def test_leak_column_flags_private_rows_only():
    import pandas as pd

    from dpcore.ui.sweep import display_summary

    summ = pd.DataFrame({"learner": ["erm-objective", "logreg"], "role": ["swept", "baseline"],
                         "value": [1.0, float("nan")], "mean": [0.9, 0.95], "std": [0.01, 0.0],
                         "min": [0.89, 0.95], "max": [0.91, 0.95], "n": [2, 2],
                         "epsilon_spent": [1.0, float("inf")], "leaks_privacy": [True, True]})
    out = display_summary(summ, metric="accuracy", axis="epsilon")
    assert list(out.columns[:3]) == ["Learner", "Kind", "Leaks privacy"]
    assert out["Leaks privacy"].tolist() == ["⚠ yes: ε is not a guarantee", ""]  # a baseline has nothing to leak
    no_private_leak = display_summary(summ.assign(leaks_privacy=[False, True]), metric="accuracy", axis="epsilon")
    assert "Leaks privacy" not in no_private_leak.columns


def test_many_log_values_get_full_number_ticks(fakes):
    # 25 values from 0.01 to 100: Plotly's own minor labels would read "0.01 2 5 0.1 2 5 ..."
    import numpy as np

    from dpcore.sweep import SweepConfig, run_sweep
    from dpcore.ui.sweep import sweep_figure

    cfg = SweepConfig(dataset="iris", learners=["fake-dp"], values=list(np.geomspace(0.01, 100, 25)), seeds=1,
                      providers=("sweep_fake_learners",))
    fig = sweep_figure(run_sweep(cfg, n_jobs=1).table, cfg, metric="accuracy", log_x=True)
    text = list(fig.layout.xaxis.ticktext)
    assert text[0] == "0.01" and text[-1] == "100" and "0.1" in text and "2" not in text[:3]
    assert all(float(t) == v for t, v in zip(text, fig.layout.xaxis.tickvals))


def _dpsgd_on_iris_along(axis: str, tmp_path, monkeypatch, *, check=None, **ranges) -> AppTest:
    """The page swept along ``axis`` with real DP-SGD on iris (3 epochs, 1 seed, in process), after Run.
    ``ranges`` sets the range boxes (``min=0.5``); ``check(at)`` looks at the sidebar once the axis is chosen."""
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.run()
    at.selectbox(key="sweep.dataset").set_value("iris")
    at.run()
    at.selectbox(key="sweep.axis").set_value(axis)
    at.run()
    if check is not None:
        check(at)
    ms = next(m for m in at.multiselect if m.key.startswith("sweep.learners."))
    ms.set_value(["dpsgd"])
    for box, value in ranges.items():
        at.number_input(key=f"sweep.{box}.{axis}").set_value(value)
    at.number_input(key="sweep.seeds").set_value(1)
    at.number_input(key="sweep.jobs").set_value(1)
    at.text_area(key="sweep.knobs").set_value("epochs=3")
    at.run()
    at.button(key="sweep.run").click()
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_clip_norm_sweep_shows_what_choosing_its_best_point_costs(tmp_path, monkeypatch):
    at = _dpsgd_on_iris_along("clip_norm", tmp_path, monkeypatch)
    tax = next(df.value for df in at.dataframe if "Candidates tried" in df.value.columns)
    row = tax.iloc[0]
    assert row["Candidates tried"] >= 2
    private_search = "ε had the search been private (a random number of candidates, best kept)"
    one, search, all_runs = (float(row[c]) for c in ("ε of one run (the largest)", private_search,
                                                      "ε if every run were released (composition)"))
    assert one < search < all_runs
    # off the ε axis the chart says the ε spent (a flat curve hid that every point was weak): every run here is
    # calibrated to the same target, so the legend says it once rather than "ε 1" on every marker
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert not [a["text"] for a in chart["layout"].get("annotations", []) if a["text"].startswith("ε ")]
    assert [t["name"] for t in chart["data"] if t.get("showlegend") is not False][0] == (
        "DP-SGD (Abadi et al. 2016)<br>every run spent ε 1")


def test_secure_noise_on_the_tradeoff_explorer_runs_every_sweep_run_in_secure_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = _page(learners=("erm-output",))
    at.toggle(key="sweep.seed.secure_demo").set_value(True).run()
    assert not at.exception
    assert not [n for n in at.sidebar.number_input if n.key == "sweep.seed"]
    assert any("differ in their noise only" in c.value for c in at.sidebar.caption)
    at.button(key="sweep.run").click().run()
    assert not at.exception and not at.error
    result = _result(at)
    assert result.config.secure and all(r.secure for r in result.config.runs())


def test_a_noise_sweep_fixes_no_epsilon_and_names_its_best_point(tmp_path, monkeypatch):
    def no_epsilon_box(at):
        assert not [n for n in at.number_input if n.key == "sweep.epsilon"]  # σ, not ε, sets each run's budget
        assert any("No fixed ε when sweeping σ" in c.value for c in at.sidebar.caption)

    at = _dpsgd_on_iris_along("noise_multiplier", tmp_path, monkeypatch, check=no_epsilon_box, min=0.5, max=4.0,
                              points=3)
    table = _result(at).table
    swept = table[table.role == "swept"].sort_values("value")
    assert swept.epsilon.is_monotonic_decreasing and swept.epsilon_target.isna().all()
    assert set(_run_table(at)["ε target"]) == {"—"}
    best = swept.loc[swept.accuracy.idxmax()]  # one seed: the mean is the run
    label, value = next((m.label, m.value) for m in at.metric if m.label.startswith("Best swept"))
    assert label == f"Best swept: σ = {best.value:.3g}" and value == f"{best.accuracy:.3f}"


def test_the_best_swept_epsilon_is_named_rounded_up_never_below_what_its_runs_spent(tmp_path, monkeypatch):
    # a Min typed as 0.12345 was named "Best swept: ε = 0.123" while DP-SGD's runs there spent just under 0.12345
    at = _dpsgd_on_iris_along("epsilon", tmp_path, monkeypatch, min=0.12345, max=0.12345, points=1)
    spent = _result(at).table.query("role == 'swept'").epsilon.max()
    assert 0.1235 > spent > 0.123
    label = next(m.label for m in at.metric if m.label.startswith("Best swept"))
    assert label == "Best swept: ε = 0.124", label


def test_a_visitor_cannot_name_a_cluster_or_start_more_processes_than_cores(monkeypatch):
    import os

    monkeypatch.delenv("DPCORE_SCHEDULER", raising=False)
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    assert not [t for t in at.text_input if "scheduler" in str(t.key)]  # a visitor's address made the server wait
    top = max(1, os.cpu_count() or 1)
    at.number_input(key="sweep.jobs").set_value(top + 1).run()  # refused under the box, by name, not kept
    assert any(e.value.startswith(f"Parallel worker processes must be a whole number from 1 to {top}; {top + 1} is")
               for e in at.error)
    assert any("DPCORE_SCHEDULER" in c.value for c in at.caption)


def test_points_within_the_seeds_spread_of_the_best_are_named_beside_it():
    import pandas as pd

    from dpcore.sweep.summary import tied_with_best

    swept = pd.DataFrame({"learner": ["dpsgd"] * 4, "value": [0.316, 1.0, 3.16, 10.0],
                          "mean": [0.754, 0.750, 0.748, 0.70], "std": [0.01, 0.006, 0.002, 0.01]})
    best = swept.iloc[0]
    assert [r.value for r in tied_with_best(swept, best)] == [1.0, 3.16]  # 0.70 is further than either spread
    one_seed = swept.assign(std=0.0)
    assert tied_with_best(one_seed, one_seed.iloc[0]) == []  # no spread to judge by


def test_points_of_a_learner_spending_more_than_the_epsilon_on_the_axis_carry_the_epsilon_they_spent(fakes):
    # output perturbation's ε is per released answer: at ε = 0.5 on the axis, its m test answers spend m/2
    from dpcore.sweep import SweepConfig, run_sweep
    from dpcore.sweep.summary import overspent_note
    from dpcore.ui.sweep import spent_label, sweep_figure

    cfg = SweepConfig(dataset="iris", learners=["output-perturbation", "fake-dp"], values=[0.5, 2.0], seeds=1,
                      providers=("sweep_fake_learners",))
    table = run_sweep(cfg, n_jobs=1, use_cache=False).table
    op = table[table.learner == "output-perturbation"].sort_values("value")
    answers = json.loads(op.event.iloc[0])["count"]
    assert list(op.epsilon) == pytest.approx([0.5 * answers, 2.0 * answers])
    fig = sweep_figure(table, cfg, metric="accuracy")
    line = next(t for t in fig.data if t.name == "Laplace on the softmax outputs")
    labels = [a for a in fig.layout.annotations if a.text.startswith("ε ")]
    # one per point of output perturbation, in its colour; the fake learner spends 90 % of its ε: nothing to say
    assert [a.text for a in labels] == [spent_label(e) for e in op.epsilon]
    assert {a.font.color for a in labels} == {line.line.color}
    note = overspent_note(table)
    assert note.startswith("**ε spent exceeds the ε given.** Laplace on the softmax outputs: its ε protects")
    assert f"composes the ε it is given {answers} times" in note
    assert f"ε = 0.5 spends ε = {0.5 * answers:.3g} in all, 2 spends {2 * answers:.3g}" in note
    assert "Fake DP learner" not in note
    assert overspent_note(table[table.learner != "output-perturbation"]) is None


def test_a_calibration_that_spends_just_under_its_target_gets_no_label_and_no_note():
    import pandas as pd

    from dpcore.sweep import SweepConfig
    from dpcore.sweep.summary import overspent_note
    from dpcore.ui.sweep import sweep_figure

    cfg = SweepConfig(dataset="iris", learners=["dpsgd"], values=[1.0, 2.0], seeds=1, include_baselines=False)
    table = pd.DataFrame({"learner": "dpsgd", "role": "swept", "value": [1.0, 2.0], "seed": 0, "accuracy": 0.8,
                          "epsilon": [0.9999, 2.0 * (1 + 1e-12)], "epsilon_target": [1.0, 2.0], "leaks_privacy": False})
    fig = sweep_figure(table, cfg, metric="accuracy")
    assert not [a for a in fig.layout.annotations if a.text.startswith("ε ")]
    assert overspent_note(table) is None


def test_the_page_says_once_why_output_perturbation_spends_more_than_its_axis_epsilon(fakes):
    at = _page(learners=("output-perturbation",))
    at.button(key="sweep.run").click()
    at.run()
    assert not at.exception and not at.error
    table = _result(at).table
    said = [w.value for w in at.warning if "ε spent exceeds the ε given" in w.value]
    assert len(said) == 1 and "Laplace on the softmax outputs" in said[0] and "per released answer" in said[0]
    spent = table[(table.role == "swept") & (table.value == 5.0)].epsilon.iloc[0]
    assert f"5 spends {spent:.3g}" in said[0]
    best = next(m for m in at.metric if m.label.startswith("Best swept"))
    assert best.label.startswith("Best swept: ε = ") and ", spent " in best.label


def test_the_best_swept_label_writes_the_epsilon_spent_rounded_up():
    """Output perturbation's 450 answers at ε = 20 spend 9,034.2: the label wrote ":.3g", "9.03e+03", an ε below the
    one spent; it now writes it as every ε spent is written, rounded up."""
    from dpcore.ui.sweep import best_swept_label, spent_label

    label = best_swept_label("ε", 20.0, 9034.2)
    assert label == "Best swept: ε = 20, spent 9,040" and spent_label(9034.2) == "ε 9,040"
    assert float(label.rsplit(" ", 1)[1].replace(",", "")) >= 9034.2
    assert best_swept_label("σ", 1.25, None) == "Best swept: σ = 1.25"


def test_the_best_swept_point_is_never_one_that_spent_far_more_than_its_axis_epsilon(fakes):
    # digits, DP-SGD beside output perturbation: "Best swept: ε = 20, spent 9e+03" was the latter's point, 450
    # answers at ε = 20 each, which the advisor under the same chart does not count
    at = _page(learners=("fake-dp", "output-perturbation"))
    at.button(key="sweep.run").click()
    at.run()
    assert not at.exception and not at.error
    summ = _result(at).summary("accuracy")
    swept = summ[summ.role == "swept"]
    top = swept.sort_values("mean", ascending=False).iloc[0]
    assert top.learner == "output-perturbation"  # the overspent point is the highest: the case this checks
    fair = swept[swept.learner == "fake-dp"].sort_values("mean", ascending=False).iloc[0]
    best = next(m for m in at.metric if m.label.startswith("Best swept"))
    assert best.label == f"Best swept: ε = {fair.value:.3g}" and best.value == f"{fair['mean']:.3g}"
    assert "spent far more than the ε on the axis left out" in best.help


def _digits_like_sweep():
    """DP-SGD, DP-ERM and output perturbation on digits, ε 0.1 to 20 (the means of a 3-seed run, seed 0): output
    perturbation spends 450 times the ε on the axis, and its point at ε = 20 sits among DP-SGD's and the baselines."""
    import pandas as pd

    from dpcore.sweep import SweepConfig

    values = [0.1, 0.37606, 1.41421, 5.3183, 20.0]
    means = {"dpsgd": [0.324, 0.812, 0.916, 0.931, 0.930], "erm-objective": [0.065, 0.075, 0.11, 0.319, 0.786],
             "output-perturbation": [0.094, 0.112, 0.18, 0.593, 0.958]}
    rows = [{"learner": name, "role": "swept", "value": v, "seed": 0, "accuracy": m,
             "epsilon": v * (450 if name == "output-perturbation" else 1), "epsilon_target": v, "leaks_privacy": False}
            for name, ms in means.items() for v, m in zip(values, ms)]
    rows += [{"learner": name, "role": role, "value": float("nan"), "seed": 0, "accuracy": m,
              "epsilon": float("inf"), "epsilon_target": float("nan"), "leaks_privacy": False}
             for name, role, m in (("non-private", "baseline", 0.959), ("logreg", "baseline", 0.962),
                                   ("majority", "trivial", 0.102))]
    cfg = SweepConfig(dataset="digits", learners=list(means), values=values, seeds=1)
    return pd.DataFrame(rows), cfg


def test_spent_labels_read_as_whole_numbers_with_thousands_separated():
    from dpcore.ui.sweep import spent_label, sweep_figure

    table, cfg = _digits_like_sweep()
    labels = [a.text for a in sweep_figure(table, cfg, metric="accuracy").layout.annotations if a.text[0] == "ε"]
    # was "ε 2.39e+03", "ε 9e+03"; rounded up, as every ε spent is shown (169.2 reads 170, 2393.2 reads 2,400)
    assert labels == ["ε 45", "ε 170", "ε 637", "ε 2,400", "ε 9,000"]
    assert [spent_label(e) for e in (4.5, 0.31623, 709.9, 2634.0, 1234567.0)] == [
        "ε 4.5", "ε 0.317", "ε 710", "ε 2,640", "ε 1,240,000"]


def test_the_note_under_the_chart_writes_the_epsilon_spent_as_the_labels_do():
    from dpcore.sweep.summary import overspent_note
    from dpcore.ui.sweep import sweep_figure

    table, cfg = _digits_like_sweep()
    labels = [a.text for a in sweep_figure(table, cfg, metric="accuracy").layout.annotations if a.text[0] == "ε"]
    note = overspent_note(table)
    assert "ε = 0.1 spends ε = 45 in all, 20 spends 9,000" in note  # was "9e+03", beside a label "ε 9,000"
    assert labels[-1] == "ε 9,000"


@pytest.mark.parametrize("size", [(740, 320), (285, 215)], ids=["desktop", "phone"])
def test_spent_labels_sit_inside_the_plot_and_off_every_marker(size):
    # "ε 9e+03" sat on DP-SGD's point at ε 20, and on a phone "ε 710" ran past the right edge
    import math

    import numpy as np

    from dpcore.ui.sweep import sweep_figure

    table, cfg = _digits_like_sweep()
    fig = sweep_figure(table, cfg, metric="accuracy")
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range  # set: the labels are placed for them

    def px(x, y):
        return (x - x0) / (x1 - x0) * size[0], (y - y0) / (y1 - y0) * size[1]

    markers = [px(math.log10(x), y) for t in fig.data if "markers" in (t.mode or "") for x, y in zip(t.x, t.y)]
    labels = [a for a in fig.layout.annotations if a.text[0] == "ε"]
    assert len(labels) == 5
    for a in labels:
        left, bottom = np.add(px(a.x, a.y), (a.xshift, a.yshift))
        right, top = left + 6 * len(a.text), bottom + 13  # 11 px text: at most ~6 px a character
        assert 0 <= left and right <= size[0] and 0 <= bottom and top <= size[1], a.text
        for mx, my in markers:  # no marker (8-10 px) under any part of a label
            assert not (left - 4 < mx < right + 4 and bottom - 4 < my < top + 4), (a.text, mx, my)


@pytest.mark.parametrize("log_x", [True, False])
def test_the_class_epsilon_is_a_dash_dotted_line_named_in_the_legend_inside_the_swept_range_only(fakes, log_x):
    from dpcore.sweep import SweepConfig, run_sweep
    from dpcore.ui.sweep import sweep_figure

    cfg = SweepConfig(dataset="iris", learners=["fake-dp"], values=[0.5, 2.0, 8.0], seeds=1,
                      providers=("sweep_fake_learners",))
    table = run_sweep(cfg, n_jobs=1).table
    fig = sweep_figure(table, cfg, metric="accuracy", log_x=log_x, mark=2.0)
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert len(lines) == 1 and lines[0].x0 == lines[0].x1 == 2.0 and lines[0].line.dash == "dashdot"
    # named in the legend with the line's own look, not written on the plot, where it sat on the trivial baseline
    named = [t for t in fig.data if t.name == "your ε = 2"]
    assert len(named) == 1 and named[0].line.dash == "dashdot" and named[0].line.color == lines[0].line.color
    assert not [a for a in fig.layout.annotations if a.text.startswith("your ε")]
    for outside in (0.1, 20.0, None):  # out of the range, or none: nothing drawn
        fig = sweep_figure(table, cfg, metric="accuracy", log_x=log_x, mark=outside)
        assert not [s for s in fig.layout.shapes if s.type == "line"]
        assert not [t for t in fig.data if (t.name or "").startswith("your ε")]


def test_a_live_chart_before_any_learners_point_spans_every_swept_value_and_the_fractions_scale(fakes):
    import math

    from dpcore.sweep import SweepConfig, run_sweep
    from dpcore.ui.sweep import sweep_figure

    cfg = SweepConfig(dataset="iris", learners=["fake-dp"], values=[0.1, 1.0, 10.0], seeds=1,
                      providers=("sweep_fake_learners",))
    table = run_sweep(cfg, n_jobs=1).table
    first = table[table["learner"] != "fake-dp"]  # the baselines finish first: no point of the learner yet
    assert not first.empty
    fig = sweep_figure(first, cfg, metric="accuracy", log_x=True, mark=1.0)
    lo, hi = fig.layout.xaxis.range
    assert lo < math.log10(0.1) and hi > math.log10(10.0)  # 10 keeps its tick: padded as a marker is
    assert tuple(fig.layout.yaxis.range) == (0.0, 1.05)  # not Plotly's -0.9 to 1.1 around a lone baseline
    assert [t.name for t in fig.data if (t.name or "").startswith("your ε")] == ["your ε = 1"]
    full = sweep_figure(table, cfg, metric="accuracy", log_x=True)
    assert full.layout.yaxis.range is None or tuple(full.layout.yaxis.range) != (0.0, 1.05)  # fitted to the points


def test_the_page_marks_the_epsilon_a_link_carries_and_says_when_it_lies_outside_the_range(fakes):
    at = _page()
    at.number_input(key="sweep.mark").set_value(30.0)  # as the lesson's link from the Attack page fills it in
    at.run()
    at.button(key="sweep.run").click()
    at.run()
    assert not at.exception and not at.error
    assert any("Your ε = 30 lies outside the swept range" in c.value for c in at.caption)


def _clip_norm_sweep(spent):
    """DP-SGD on iris along the clip norm at a target ε 4: each point spent ``spent[i]``."""
    import pandas as pd

    from dpcore.sweep import SweepConfig

    values = [0.1, 1.0, 10.0]
    cfg = SweepConfig(dataset="iris", learners=["dpsgd"], axis="clip_norm", values=values, epsilon=4.0, seeds=1,
                      include_baselines=False)
    table = pd.DataFrame({"learner": "dpsgd", "role": "swept", "value": values, "seed": 0,
                          "accuracy": [0.6, 0.8, 0.7], "epsilon": spent, "epsilon_target": 4.0,
                          "leaks_privacy": False})
    return table, cfg


def test_a_sweep_at_one_spent_epsilon_says_it_once_in_the_legend_not_on_every_point():
    from dpcore.ui.sweep import sweep_figure

    table, cfg = _clip_norm_sweep([4.0, 4.0, 4.0])
    fig = sweep_figure(table, cfg, metric="accuracy")
    assert not [a for a in fig.layout.annotations if a.text.startswith("ε ")]  # was "ε 4" on every marker
    named = [t.name for t in fig.data if t.showlegend is not False]
    assert named == ["DP-SGD (Abadi et al. 2016)<br>every run spent ε 4"]  # a line of its own: fits a phone


def test_points_that_spent_different_epsilons_off_the_epsilon_axis_keep_their_own_labels():
    from dpcore.ui.sweep import sweep_figure

    table, cfg = _clip_norm_sweep([1.5, 4.0, 9.0])  # a σ sweep at fixed steps: ε moves with the noise
    fig = sweep_figure(table, cfg, metric="accuracy")
    assert sorted(a.text for a in fig.layout.annotations if a.text.startswith("ε ")) == ["ε 1.5", "ε 4", "ε 9"]
    assert [t.name for t in fig.data if t.showlegend is not False] == ["DP-SGD (Abadi et al. 2016)"]


def test_one_swept_point_names_its_epsilon_alone_not_the_range_maximum(tmp_path, monkeypatch):
    # with Points = 1 the sweep runs the minimum alone, and beside its chart of ε = 0.1 the page read "to ε = 10:
    # ●●○○ Weak guarantee"
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["sweep.dataset"] = "iris"
    at.run()
    said = [m.value for m in at.markdown if m.value.startswith("From ε = 0.1")]
    assert said and "to ε = 10" in said[0]  # five points: both ends
    at.number_input(key="sweep.points.epsilon").set_value(1).run()
    assert not at.exception
    said = [m.value for m in at.markdown if "ε = 0.1" in m.value and "Strong privacy" in m.value]
    assert said and "ε = 10" not in said[0] and "minimum alone" in said[0]
