"""The Trade-off explorer's advisor panel and report download, and what an upload leaves behind: one notice of
warnings above the chart, and nothing on disk."""
from __future__ import annotations

import math
import pathlib

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "5_Tradeoff_explorer.py")


def _csv() -> bytes:
    rng = np.random.default_rng(7)
    X = rng.integers(1_000_000, 9_999_999, size=(200, 3))
    y = (X[:, 0] + rng.normal(0, 1.5e6, 200) > 5.5e6).astype(int)
    lines = ["spend,visits,tenure,churned"] + [f"{a},{b},{c},{t}" for (a, b, c), t in zip(X, y)]
    return ("\n".join(lines) + "\n").encode()


def _upload_page(tmp_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.run()
    at.selectbox(key="sweep.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("customers.csv", _csv(), "text/csv")).run()
    assert not at.exception
    _small_sweep(at)
    assert not at.exception
    return at


def _small_sweep(at) -> None:
    """Objective perturbation alone, at ε 1 and 10, two seeds, in this process."""
    ms = next(m for m in at.multiselect if m.key.startswith("sweep.learners."))
    ms.set_value(["erm-objective"])
    at.number_input(key="sweep.min.epsilon").set_value(1.0)
    at.number_input(key="sweep.max.epsilon").set_value(10.0)
    at.number_input(key="sweep.points.epsilon").set_value(2)
    at.number_input(key="sweep.seeds").set_value(2)
    at.number_input(key="sweep.jobs").set_value(1)
    at.run()


def _holds(node, kind: str) -> bool:
    return getattr(node, "type", "") == kind or any(_holds(c, kind) for c in getattr(node, "children", {}).values())


def _main_order(at) -> list[str]:
    """The kinds of the main area's top-level elements in page order, a block named "expander" when it holds one."""
    return ["expander" if _holds(node, "expander") else getattr(node, "type", type(node).__name__)
            for node in at.main.children.values()]


def test_an_uploads_sweep_shows_one_notice_above_the_chart_the_advisor_and_writes_nothing(tmp_path, monkeypatch):
    at = _upload_page(tmp_path, monkeypatch)
    # before the run: the file's warnings (bounds read from the rows) are already one folded notice
    assert any(e.label.startswith("Privacy leak") for e in at.expander)
    assert "stay in this session only" in " ".join(i.value for i in at.info)
    at.button(key="sweep.run").click().run()
    assert not at.exception and not at.error
    notices = [e for e in at.expander if "open to read" in e.label]
    assert len(notices) == 1 and notices[0].label.startswith("Privacy leak")
    inside = [w.value for w in notices[0].warning]
    assert inside and "Privacy leak" in inside[0]  # leaks first
    # the notice sits above the chart, and no other warning does
    order = _main_order(at)
    assert order.index("expander") < order.index("plotly_chart")
    assert "warning" not in order[:order.index("plotly_chart")]
    assert at.get("download_button") and any(
        "Download the report" in b.proto.label for b in at.get("download_button"))
    said = " ".join([s.value for s in at.success] + [w.value for w in at.warning])
    assert "ε = " in said or "No ε from 1 to 10" in said
    assert list(tmp_path.rglob("*.json")) == []  # neither the sweep's cache nor the server's store of runs


def _advised_at_level(tmp_path, monkeypatch, level: float) -> AppTest:
    """The page on iris after a small sweep, its advisor asked for accuracy at least ``level`` (no cache kept)."""
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.run()
    at.selectbox(key="sweep.dataset").set_value("iris").run()
    _small_sweep(at)
    at.button(key="sweep.run").click().run()
    at.radio(key="sweep.advisor.kind").set_value("level").run()
    at.number_input(key="sweep.advisor.level").set_value(level).run()
    return at


def test_the_advisor_answers_a_level_from_a_registry_sweep_and_refuses_nan_in_its_boxes(tmp_path, monkeypatch):
    at = _advised_at_level(tmp_path, monkeypatch, 0.5)
    assert not at.exception
    assert any(s.value.startswith("**ε = ") and "Strong privacy" in s.value or "Moderate" in s.value
               or "Weak" in s.value for s in at.success)
    at.number_input(key="sweep.advisor.level").set_value(0.999).run()
    assert any("No ε from 1 to 10 meets the need (accuracy at least 0.999)" in w.value for w in at.warning)
    assert any("itself a release" in e.label for e in at.expander)
    # the advisor's boxes, drawn only after a sweep (tests/pages/test_every_number_box_refuses_nan.py tries the
    # page's others): NaN is said under the box, never a traceback
    for key in ("sweep.advisor.level", "sweep.advisor.lo", "sweep.advisor.hi"):
        before = at.number_input(key=key).value
        at.number_input(key=key).set_value(float("nan")).run()
        assert not at.exception, key
        after = at.number_input(key=key).value  # a number put back by the box, or NaN refused by name
        assert (after is not None and math.isfinite(after)) or any(
            "must be" in e.value and "not a number" in e.value for e in at.error), key
        at.number_input(key=key).set_value(before).run()


def test_a_link_to_an_upload_based_sweep_restores_the_view_and_the_advisors_need_once_the_file_is_given():
    from .conftest import page

    at = page("app.py")
    at.switch_page("pages/5_Tradeoff_explorer.py")
    params = {"sweep.dataset": '"upload"', "sweep.min.epsilon": "1.0", "sweep.max.epsilon": "10.0",
              "sweep.points.epsilon": "2", "sweep.seeds": "2", "sweep.advisor.kind": '"level"',
              "sweep.advisor.level": "0.7", "sweep.dataset.bounds.your_file": '"*=1000000:9999999"'}
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception and not at.warning  # waiting for the file: nothing judged yet
    at.get("file_uploader")[0].set_value(("customers.csv", _csv(), "text/csv")).run()
    assert not at.exception
    assert at.number_input(key="sweep.min.epsilon").value == 1.0
    assert at.number_input(key="sweep.points.epsilon").value == 2
    assert at.number_input(key="sweep.seeds").value == 2
    assert at.text_area(key="sweep.dataset.bounds.your_file").value == "*=1000000:9999999"
    # the address carries no class of the label (a class is a label value): declared again in the session
    at.text_area(key="sweep.dataset.categories.customers.csv").set_value("churned=0|1").run()
    assert not any(e.label.startswith("Privacy leak") for e in at.expander)  # every bound and class declared
    ms = next(m for m in at.multiselect if m.key.startswith("sweep.learners."))
    ms.set_value(["erm-objective"])
    at.number_input(key="sweep.jobs").set_value(1)
    at.run()
    at.button(key="sweep.run").click().run()
    assert not at.exception
    assert at.radio(key="sweep.advisor.kind").value == "level"
    assert at.number_input(key="sweep.advisor.level").value == 0.7


def test_the_attack_at_the_recommended_epsilon_says_what_a_blind_guess_catches_and_what_it_does_not_prove(
        tmp_path, monkeypatch):
    from dpcore.decision.report import ATTACK_CAVEAT

    at = _upload_page(tmp_path, monkeypatch)
    at.button(key="sweep.run").click().run()
    at.radio(key="sweep.advisor.kind").set_value("level").run()
    at.number_input(key="sweep.advisor.level").set_value(0.5).run()
    assert at.success, "a need of accuracy 0.5 is met on this file"
    at.button(key="sweep.advisor.attack").click().run()
    assert not at.exception and not at.error
    said = next(m.value for m in at.markdown if m.value.startswith("**What an attacker learned"))
    assert "(a blind guess catches 1 %)" in said or "too few non-members" in said
    assert said.endswith(ATTACK_CAVEAT)


def test_on_a_file_where_one_class_is_most_rows_the_chart_and_the_advisor_judge_by_balanced_accuracy_first(
        tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + rng.normal(0, 0.3, 300) > 1.6).astype(int)  # about 1 row in 20 is a case
    lines = ["a,b,c,sepsis"] + [f"{a:.3f},{b:.3f},{c:.3f},{'yes' if t else 'no'}" for (a, b, c), t in zip(X, y)]
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    at.selectbox(key="sweep.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("sepsis.csv", ("\n".join(lines) + "\n").encode(), "text/csv")).run()
    at.text_area(key="sweep.dataset.bounds.your_file").set_value("*=-4:4").run()
    _small_sweep(at)
    assert at.radio(key="sweep.metric").value == "balanced_accuracy"  # first of two
    assert at.radio(key="sweep.metric").options[0].startswith("Balanced accuracy") and len(
        at.radio(key="sweep.metric").options) == 2
    at.button(key="sweep.run").click().run()
    assert not at.exception
    judged = at.radio(key="sweep.advisor.judged")
    assert judged.value == "balanced_accuracy"
    assert judged.options == ["Balanced accuracy (each class counts equally)", "Accuracy"]
    said = " ".join([s.value for s in at.success] + [w.value for w in at.warning])
    assert "balanced accuracy" in said
    judged.set_value("accuracy").run()  # the owner may still ask for accuracy
    assert not at.exception and at.number_input(key="sweep.advisor.gap").label == "Gap (points of accuracy)"


def test_the_advisors_attack_trains_a_model_that_joins_the_sessions_total(tmp_path, monkeypatch):
    """The button says it "trains one more model": a model trained on the data for real, whose attack is shown. The
    session total counted the sweep's runs and not that model; it now counts it, once, under the advisor's name."""
    at = _advised_at_level(tmp_path, monkeypatch, 0.5)
    assert at.success, "a need of accuracy 0.5 is met on iris"

    def total():
        return next(c.value for c in at.caption if c.value.startswith("**Session total.**"))

    assert "**4 private trainings** on Iris" in total() and "advisor" not in total()
    at.button(key="sweep.advisor.attack").click().run()
    assert not at.exception and not at.error
    assert any(m.value.startswith("**What an attacker learned") for m in at.markdown)
    text = total()
    assert "**5 private trainings** on Iris" in text
    assert "Trade-off explorer 5 (4 for the chart's points, 1 for the advisor's attacked model)" in text
    at.run()  # shown again: the same model, not a new one
    assert "**5 private trainings** on Iris" in total()


def test_the_downloaded_table_of_an_uploads_sweep_names_no_class_of_the_file(tmp_path, monkeypatch):
    # each run's warnings quote the class a model answered for every row ("the most common training class
    # ('ZEBRANO')"), a cell of the file's label: the downloaded report left such values out, the table kept them
    import streamlit as st

    downloads: dict[str, bytes] = {}
    draw = st.download_button

    def keep(label, data, *args, **kwargs):
        downloads[label] = data
        return draw(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", keep)
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, (300, 3))
    y = np.where(X[:, 0] + rng.normal(0, 3, 300) > 5, "ZEBRAYES", "ZEBRANO")
    text = "a,b,c,outcome\n" + "".join(f"{r[0]:.2f},{r[1]:.2f},{r[2]:.2f},{t}\n" for r, t in zip(X, y))
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    at.selectbox(key="sweep.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("zoo.csv", text.encode(), "text/csv")).run()
    # seeded noise: an upload's sweep draws secure noise by default, fresh at every run, and the model at ε 0.01
    # answered one class for every row in only some of them (the table then had no such warning to keep)
    at.toggle(key="sweep.seed.secure_upload").set_value(False).run()
    _small_sweep(at)
    at.number_input(key="sweep.min.epsilon").set_value(0.01)  # a model that answers one class for every row
    at.run()
    at.button(key="sweep.run").click().run()
    assert not at.exception
    said = " ".join(w.value for e in at.expander for w in e.warning)
    assert "ZEBRANO" in said  # the visitor's own page names the class (their data, their session)
    table = downloads["Download the table (CSV)"].decode()
    assert "most common training class" in table  # the warning is kept, without the class
    assert "ZEBRA" not in table
    assert "ZEBRA" not in downloads["Download the report"].decode()


def test_the_advisor_says_how_the_report_commands_default_sweep_differs_from_the_pages(tmp_path, monkeypatch):
    # the caption said "`python -m dpcore report` runs the same advisor from the command line", whose own sweep is
    # 7 ε values and 5 seeds by default: run as told, it answered from another sweep than the page's 2 and 2
    from dpcore.decision.advisor import ADVISOR_POINTS, ADVISOR_SEEDS

    at = _advised_at_level(tmp_path, monkeypatch, 0.5)
    said = next(c.value for c in at.caption if "`python -m dpcore report`" in c.value)
    assert f"{ADVISOR_POINTS} ε values and {ADVISOR_SEEDS} seeds by default" in said
    assert "where this sweep has 2 and 2 (`--points 2 --seeds 2` for the same)" in said


def test_once_the_advisors_attack_has_run_its_button_is_gone_from_that_very_run(tmp_path, monkeypatch):
    # a hospital's owner pressed "Attack a model trained at ε = 1", read the attack's paragraph, and still saw the
    # button offering to train the model it had just trained, as if the press had not been taken
    at = _advised_at_level(tmp_path, monkeypatch, 0.5)
    assert [b for b in at.button if b.key == "sweep.advisor.attack"]
    at.button(key="sweep.advisor.attack").click().run()
    assert not at.exception and any(m.value.startswith("**What an attacker learned") for m in at.markdown)
    assert not [b for b in at.button if b.key == "sweep.advisor.attack"]


def test_a_regression_level_beyond_its_scale_is_refused_under_its_box(tmp_path, monkeypatch):
    # 'R² at least 50' and 'MSE at most -5' were taken, and the advisor answered 'No ε ... meets the need' after
    # judging every ε; the command line's --need refuses both
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.run()
    at.selectbox(key="sweep.dataset").set_value("diabetes").run()
    ms = next(m for m in at.multiselect if m.key.startswith("sweep.learners."))
    ms.set_value(["ssp"])
    for key, value in (("sweep.min.epsilon", 1.0), ("sweep.max.epsilon", 10.0), ("sweep.points.epsilon", 2),
                       ("sweep.seeds", 2), ("sweep.jobs", 1)):
        at.number_input(key=key).set_value(value)
    at.run()
    at.button(key="sweep.run").click().run()
    at.radio(key="sweep.advisor.kind").set_value("level").run()
    for metric, value, says, need in (("r2", 50.0, "The R² level must be at most 1; 50 is not.", "R² at least 50"),
                                      ("mse", -5.0, "The MSE level must be at least 0; -5 is not.", "MSE at most -5")):
        at.radio(key="sweep.advisor.metric").set_value(metric).run()
        at.number_input(key=f"sweep.advisor.level.{metric}").set_value(value).run()
        assert not at.exception
        assert any(says in e.value for e in at.error), [e.value for e in at.error]
        assert not any(need in w.value for w in [*at.warning, *at.success])
