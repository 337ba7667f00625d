import json
import pathlib
import re

from streamlit.testing.v1 import AppTest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_clustering_page_runs_and_reacts():
    at = AppTest.from_file(str(ROOT / "pages/3_Clustering.py"), default_timeout=120)
    at.run()
    assert not at.exception
    assert len(at.metric) == 3
    assert any("noisy grid histogram for its start (40% of ε" in c.value for c in at.caption)  # iris: the hybrid
    before = at.dataframe[0].value.copy()
    at.number_input(key="cluster.seeds").set_value(1)
    at.number_input(key="cluster.epsilon").set_value(0.2)
    at.run()
    assert not at.exception
    after = at.dataframe[0].value
    assert list(after["Method"]) == ["Lloyd (non-private)", "DPLloyd", "Input perturbation",
                                     "Random centres (no data used)"]
    assert (after["ε"].iloc[1:3] == "0.2").all() and after["ε"].iloc[0] == "∞ (not private)"
    assert after["ε"].iloc[3] == "0"  # the reference spends nothing: its centres come from the bounds alone
    priv = after["Method"].isin(["DPLloyd", "Input perturbation"])
    wss = "Within / total sum of squares"
    assert not after.loc[priv, wss].equals(before.loc[priv, wss])
    assert len(at.dataframe) == 2  # metrics table and the epsilon sweep table
    sweep = json.loads(at.get("plotly_chart")[-1].proto.spec)
    # the runs above the chart, placed on it and named in the legend: written at the line's foot, the name sat on
    # input perturbation's curve running along the bottom (0.333 on Iris), struck through by its dashes
    assert [t["name"] for t in sweep["data"] if t.get("name", "").startswith("your ε")] == ["your ε = 0.2"]
    lines = [sh for sh in sweep["layout"]["shapes"]  # at ε = 0.2 (data units), not at log10(0.2)
             if sh["type"] == "line" and sh["line"].get("dash") == "dash"]
    assert len(lines) == 1 and lines[0]["x0"] == lines[0]["x1"] == 0.2
    assert not [a["text"] for a in sweep["layout"]["annotations"] if "your ε" in a["text"]]
    # the random centres' line is named in the legend too, not written across the curves
    named = [t["name"] for t in sweep["data"] if t.get("name", "").startswith("random centres")]
    assert len(named) == 1 and re.fullmatch(r"random centres \(no data used\): \d\.\d\d ± \d\.\d\d", named[0]), named
    assert not [a["text"] for a in sweep["layout"]["annotations"] if "random centres" in a["text"]]


def test_the_metric_choice_names_each_score_as_the_tables_and_the_chart_title_do():
    at = AppTest.from_file(str(ROOT / "pages/3_Clustering.py"), default_timeout=120)
    at.session_state["cluster.seeds"] = 1
    at.run()
    assert not at.exception
    radio = at.radio(key="cluster.metric")
    shown = list(radio.options)  # as the page writes them
    assert shown == ["Accuracy", "Within / total sum of squares"]  # not "Normalised intra-cluster variance"
    for name in shown[1:]:
        assert name in at.dataframe[0].value.columns and name in at.dataframe[1].value.columns
    radio.set_value("intra_cluster_variance").run()
    assert not at.exception
    assert [h.value for h in at.header if h.value.endswith("vs ε")] == ["Within / total sum of squares vs ε"]


def test_the_pictures_axes_pc_1_and_pc_2_are_said_in_words():
    at = AppTest.from_file(str(ROOT / "pages/3_Clustering.py"), default_timeout=120)
    at.session_state["cluster.seeds"] = 1
    at.run()
    assert not at.exception
    assert any("the two directions along which they spread most (PC 1 and PC 2" in c.value for c in at.caption)


def test_clustering_page_follows_the_dataset_and_states_the_relation():
    at = AppTest.from_file(str(ROOT / "pages/3_Clustering.py"), default_timeout=180)
    at.run()
    assert any("replacing one record" in c.value and "ε/2-DP under add/remove" in c.value for c in at.caption)
    at.number_input(key="cluster.seeds").set_value(1)
    at.selectbox(key="cluster.dataset").set_value("breast_cancer")
    at.run()
    assert not at.exception and not at.error
    assert at.number_input(key="cluster.k.breast_cancer").value == 2  # k follows the number of classes
    assert not any("classes one to one" in w.value for w in at.warning)
    # 30 features: no grid, sphere packing and 3 rounds, said as such (the iris text would be wrong here)
    assert any("sphere packing for its start" in c.value and "3 rounds of noisy" in c.value for c in at.caption)
    at.number_input(key="cluster.k.breast_cancer").set_value(4)
    at.radio(key="cluster.neighbouring").set_value("add-remove")
    at.run()
    assert not at.exception
    assert any("classes one to one" in w.value for w in at.warning)
    assert any("only 2ε-DP" in c.value for c in at.caption)


def test_a_k_larger_than_the_training_rows_is_said_once_and_the_sweep_is_not_run_for_it():
    at = AppTest.from_file(str(ROOT / "pages/3_Clustering.py"), default_timeout=120)
    at.run()
    at.number_input(key="cluster.k.iris").set_value(1000).run()
    assert not at.exception
    assert len(at.error) == 1  # the sweep below ran the same settings and said it a second time
    assert "larger than the number of training rows n=114" in at.error[0].value


def test_the_headline_reads_the_mean_over_the_seeds_and_the_pictures_one_run():
    # iris at ε = 1: seed 0's DPLloyd lands within random centres' spread (0.694) where seeds 0 to 2 average 0.843;
    # the numbers a class reads first are the mean, computed here run by run, and the single run is said as such
    import warnings

    import numpy as np

    from dpcore.datasets import train_test_split
    from dpcore.learners import run_learner

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = {s: run_learner("dplloyd", train_test_split("iris", seed=s), epsilon=1.0, seed=s,
                               params={"k": 3, "neighbouring": "replace-one"}) for s in range(3)}
    mean = np.mean([r.metrics["accuracy"] for r in runs.values()])
    at = AppTest.from_file(str(ROOT / "pages/3_Clustering.py"), default_timeout=120)
    at.run()
    assert not at.exception
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["DPLloyd accuracy"] == f"{mean:.3f}"
    table = at.dataframe[0].value.set_index("Method")
    assert float(table.loc["DPLloyd", "Test accuracy"]) == round(runs[0].metrics["accuracy"], 4)  # the pictures' run
    assert any(c.value.startswith("Mean of 3 seeds (0 to 2)") for c in at.caption)
    reading = next(m.value for m in at.markdown if m.value.startswith("**Random centres"))
    assert f"DPLloyd ({mean:.3f}) scores above it" in reading
    assert "On seed 0 alone (the pictures below), DPLloyd" in reading and "within random centres' spread" in reading
    # presenting, the pictures fill the stage: each says its own run's score and the mean the headline reads
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")[:3]]
    assert f"this run {runs[0].metrics['accuracy']:.3f} · 3-seed mean {mean:.3f}" in titles[1]
    at.number_input(key="cluster.seeds").set_value(1).run()  # one seed: the headline is that run, said plainly
    assert {m.label: m.value for m in at.metric}["DPLloyd accuracy"] == f"{runs[0].metrics['accuracy']:.3f}"
    assert not any(c.value.startswith("Mean of") for c in at.caption)
