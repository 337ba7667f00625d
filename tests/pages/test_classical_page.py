import pathlib

from streamlit.testing.v1 import AppTest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_classical_page_runs_and_reacts():
    at = AppTest.from_file(str(ROOT / "views/4_Classical_models.py"), default_timeout=120)
    at.run()
    assert not at.exception
    assert len(at.metric) >= 3
    first = at.dataframe[0].value
    assert {"Output perturbation (Alg. 1)", "Objective perturbation (Alg. 2)", "Majority class (trivial)"} <= set(first["Method"])
    at.selectbox(key="classical.dataset").set_value("diabetes")
    at.run()
    assert not at.exception
    df = at.dataframe[0].value
    assert "Test R²" in df.columns and "Functional mechanism" in set(df["Method"])
    assert not at.error


def test_classical_page_private_tuning_option():
    at = AppTest.from_file(str(ROOT / "views/4_Classical_models.py"), default_timeout=120)
    at.run()
    at.select_slider(key="classical.lam").set_value("tune")
    at.number_input(key="classical.seeds").set_value(1)
    at.run()
    assert not at.exception and not at.error
    assert {"Output perturbation (Alg. 1)", "Objective perturbation (Alg. 2)"} <= set(at.dataframe[0].value["Method"])


def test_classical_page_default_scaling_is_private_and_switch_changes_table():
    at = AppTest.from_file(str(ROOT / "views/4_Classical_models.py"), default_timeout=120)
    at.run()
    assert at.radio(key="classical.preprocess").value == "log-bounds"
    before = at.dataframe[0].value
    at.radio(key="classical.preprocess").set_value("bounds")
    at.run()
    assert not at.exception and not at.error
    after = at.dataframe[0].value
    assert not before["Test accuracy"].equals(after["Test accuracy"])
