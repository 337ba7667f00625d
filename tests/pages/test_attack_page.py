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
    assert list(table["Model"])[1].endswith("(no privacy)")
    private, plain = table.iloc[0], table.iloc[1]
    assert float(private["ε lower bound (95%)"]) <= float(_metric(at, "ε claimed"))
    assert plain["AUC"] > private["AUC"]
    assert plain["AUC"] > 0.55  # the non-private model visibly leaks
    assert abs(private["AUC"] - 0.5) < 0.06  # DP at epsilon = 1 sits near the diagonal
    assert len(at.get("plotly_chart")) == 1


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
