import pathlib

from streamlit.testing.v1 import AppTest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_clustering_page_runs_and_reacts():
    at = AppTest.from_file(str(ROOT / "views/3_Clustering.py"), default_timeout=120)
    at.run()
    assert not at.exception
    assert len(at.metric) == 3
    before = at.dataframe[0].value.copy()
    at.number_input(key="cluster.seeds").set_value(1)
    at.number_input(key="cluster.epsilon").set_value(0.2)
    at.run()
    assert not at.exception
    after = at.dataframe[0].value
    assert set(after["Method"]) == {"Lloyd (non-private)", "DPLloyd", "Input perturbation"}
    assert (after["ε"].iloc[1:] == "0.2").all() and after["ε"].iloc[0] == "∞ (not private)"
    priv = after["Method"] != "Lloyd (non-private)"
    assert not after.loc[priv, "Within / total sum of squares"].equals(before.loc[priv, "Within / total sum of squares"])
    assert len(at.dataframe) == 2  # metrics table and the epsilon sweep table
