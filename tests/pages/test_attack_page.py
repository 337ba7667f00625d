"""The "Attack the model" page: a private model beside its non-private twin, attacked for real."""
from __future__ import annotations

from tests.pages.conftest import page

PATH = "pages/9_Attack_the_model.py"


def _metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def test_default_attack_shows_leakage_without_privacy_and_none_with_it():
    at = page(PATH).run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["Model"])[1] == "Non-private SGD (same model)"  # its name says it: no "(no privacy)" after it
    private, plain = table.iloc[0], table.iloc[1]
    assert float(private["ε lower bound (95%)"]) <= float(_metric(at, "ε claimed"))
    assert plain["AUC"] > private["AUC"]
    assert plain["AUC"] > 0.55  # the non-private model visibly leaks
    assert abs(private["AUC"] - 0.5) < 0.06  # DP at epsilon = 1 sits near the diagonal
    assert len(at.get("plotly_chart")) == 1
    # the region bounds true rates; a curve measured on a few hundred records may cross it by chance, and the page
    # says so instead of promising that no curve leaves it
    said = " ".join(m.value for m in at.markdown)
    assert "No attack can leave" not in said and "can step outside the region by chance" in said


def test_one_run_gradient_canary_audit_runs_from_the_page():
    at = page(PATH).run()
    at.radio(key="audit.attack").set_value("one-run")
    at.select_slider(key="audit.canaries").set_value(200)
    at.dataframe  # noqa: B018 (the form is submitted by the run below)
    at.button[0].click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert len(table) == 1  # white-box canaries only exist in DP-SGD's gradients: no non-private row
    assert table.iloc[0]["Members / non-members"].replace(" ", "").count("/") == 1
    assert float(table.iloc[0]["ε lower bound (95%)"]) <= float(_metric(at, "ε claimed"))


def test_a_pool_larger_than_the_dataset_is_said_and_unmeasurable_rates_are_left_empty():
    at = page(PATH)
    at.session_state["audit.dataset"] = "iris"  # 114 training rows, 60 non-members
    at.run()
    assert not at.exception, at.exception
    assert any("114 training rows, fewer than the 1,000" in i.value for i in at.info)
    table = at.dataframe[0].value
    assert set(table["TPR at 0.1% FPR"]) == {"—"} and set(table["TPR at 1% FPR"]) == {"—"}
    assert _metric(at, "Caught at 1% FPR") == "—"
    assert any("cannot be measured" in c.value for c in at.caption)


def test_a_model_that_learnt_nothing_is_not_passed_off_as_one_that_leaks_nothing():
    at = page(PATH)
    at.session_state["audit.eps"] = 0.01  # DP-SGD on MNIST 5k learns nothing at this ε
    at.session_state["audit.pool"] = 200
    at.run()
    assert not at.exception, at.exception
    accuracy = float(_metric(at, "Model accuracy").rstrip("%")) / 100
    assert accuracy <= 0.11  # about the most common class's share
    reading = next(m.value for m in at.markdown if m.value.startswith("**The attack-based reading:**"))
    assert "could not prove any leak" in reading and "the model learnt nothing" in reading
    assert f"{accuracy:.1%}" in reading and "Non-private SGD (same model)" in reading


def test_the_attack_page_and_the_audit_command_start_from_the_same_pool():
    from dpcore.audit import DEFAULT_POOL_SIZE

    at = page(PATH).run()
    assert at.select_slider(key="audit.pool").value == DEFAULT_POOL_SIZE
    table = at.dataframe[0].value
    members, nonmembers = (int(v) for v in table.iloc[0]["Members / non-members"].split("/"))
    assert members + nonmembers == DEFAULT_POOL_SIZE
    assert _metric(at, "Model accuracy").endswith("%")
