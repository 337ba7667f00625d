"""AppTest of the Train page: runs a tiny configuration end to end and shows the final metrics."""
from __future__ import annotations

import pathlib
import re

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.ui.training import CONFUSION_ALT, HISTORY_ALT
from tests.pages.conftest import panel_titles, vega_chart

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _app(dataset: str | None = None):
    """The Train page, on its default dataset (the lesson's, dpcore/teaching/lesson.py) or on ``dataset``."""
    at = AppTest.from_file(str(ROOT / "pages" / "2_Train_a_network.py"), default_timeout=120)
    if dataset is not None:
        at.session_state["train.dataset"] = dataset
    at.run()
    assert not at.exception
    return at


def _train_iris(at, epochs: int):
    """Pick iris, set its epochs and press Train (the page's quickest real run)."""
    at.selectbox(key="train.dataset").set_value("iris").run()
    at.number_input(key="train.epochs.iris").set_value(epochs).run()
    return at.button(key="train.run").click().run()


def test_train_page_runs_dpsgd_and_shows_metrics():
    at = _app()
    _train_iris(at, 3)
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert "ε spent (whole records)" in labels and "Test accuracy (private)" in labels
    eps = next(m for m in at.metric if m.label == "ε spent (whole records)").value
    assert float(eps) <= 1.0
    hist = at.table[0].value
    assert len(hist) == 3 and hist["ε"].iloc[-1] <= 1.0


def test_the_history_tables_balanced_accuracy_column_is_said_in_words_under_it():
    at = _train_iris(_app(), 2)
    assert not at.exception
    assert "Test balanced accuracy" in at.table[0].value.columns
    assert any(c.value.startswith("Test balanced accuracy: for each class, the share of its test rows predicted "
                                  "right") for c in at.caption)


def test_changing_epsilon_changes_the_result():
    at = _app()
    _train_iris(at, 2)
    first = next(m for m in at.metric if m.label == "ε spent (whole records)").value
    at.number_input(key="train.epsilon").set_value(4.0).run()
    at.button(key="train.run").click().run()
    assert not at.exception
    second = next(m for m in at.metric if m.label == "ε spent (whole records)").value
    assert float(second) > float(first)


def test_label_dp_shows_confusion_matrix():
    at = _app()
    at.selectbox(key="train.dataset").set_value("iris").run()
    at.selectbox(key="train.algorithm").set_value("label-dp-rr").run()
    at.button(key="train.run").click().run()
    assert not at.exception
    assert any("Confusion" in s.value for s in at.header)
    # every test row in one cell of the drawn matrix, true classes down and predicted across in iris's order
    spec, cells = vega_chart(at, CONFUSION_ALT)
    n_test = int(next(found.group(1) for m in at.markdown if (found := re.search(r"(\d+) test rows", m.value))))
    assert sum(c["rows"] for c in cells) == n_test and len(cells) == 9
    iris = ["setosa", "versicolor", "virginica"]
    assert [spec["layer"][0]["encoding"][ch]["sort"] for ch in ("y", "x")] == [iris, iris]
    assert [spec["layer"][0]["encoding"][ch]["title"] for ch in ("y", "x")] == ["true class", "predicted class"]


def test_the_train_page_draws_its_charts_with_vega_lite_only_so_a_browser_never_fetches_the_plotly_bundle():
    at = _app()
    _train_iris(at, 3)
    assert not at.exception
    charts = at.get("vega_lite_chart")
    assert len(charts) == 2 and not at.get("plotly_chart")  # the history and the confusion matrix
    assert all(c.proto.alt for c in charts)  # each with a text alternative for screen readers
    # the history chart draws the run's history: the table's accuracy and ε, epoch by epoch
    spec, rows = vega_chart(at, HISTORY_ALT)
    assert panel_titles(spec) == ["Test loss", "Test accuracy", "ε spent"]
    table = at.table[0].value
    drawn = [r for r in rows if "epoch" in r]
    assert [r["accuracy"] for r in drawn] == pytest.approx(table["Test accuracy"].tolist(), abs=1e-3)  # rounded
    assert [r["epsilon"] for r in drawn] == pytest.approx(table["ε"].tolist(), abs=1e-3)


def test_output_perturbation_states_the_total_budget():
    at = _app()
    at.selectbox(key="train.dataset").set_value("iris").run()
    at.selectbox(key="train.algorithm").set_value("output-perturbation").run()
    assert any("m·ε" in i.value for i in at.info)
    at.button(key="train.run").click().run()
    assert not at.exception
    assert any("test answers released" in m.value and "in total" in m.value for m in at.markdown)
    # a test query at eps = 1 each (36 of them): the total is flagged as a nominal guarantee, and labelled as such
    assert any(m.label == "ε (all answers released)" and float(m.value) >= 10 for m in at.metric)
    eps = next(m.value for m in at.metric if m.label == "ε (all answers released)")  # the band beside it:
    assert any(w.value.startswith(f"Nominal guarantee only: ε = {eps} ") for w in at.warning)


def test_label_dp_epsilon_is_labelled_labels_only():
    at = _app()
    at.selectbox(key="train.dataset").set_value("iris").run()
    at.selectbox(key="train.algorithm").set_value("label-dp-laplace").run()
    at.button(key="train.run").click().run()
    assert not at.exception
    assert any(m.label == "ε (labels only)" for m in at.metric)
    assert not any("almost no formal protection" in w.value for w in at.warning)  # eps = 1 per label: not flagged


def test_session_total_composes_the_trainings_of_this_session():
    """Two DP-SGD runs on iris: the caption's total is dp_accounting's composition of both events (RDP, at the
    sum of their deltas), below the sum of their epsilons; showing a run again does not count it twice."""
    import re

    import dp_accounting

    at = _app()
    _train_iris(at, 2)
    assert any("1 private training** on Iris" in c.value for c in at.caption)
    at.number_input(key="train.epsilon").set_value(4.0).run()
    at.button(key="train.run").click().run()
    at.button(key="train.run").click().run()  # same inputs: the stored run is shown again
    assert not at.exception
    caption = next(c for c in at.caption if "Session total" in c.value)
    text = caption.value
    assert "2 private trainings" in text and "non-private baselines" in text
    assert "compose" in caption.proto.help  # how: in the caption's help, the caption itself read at a glance
    outs = list(at.session_state["train.results"].values())
    acc = dp_accounting.rdp.RdpAccountant(orders=[1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64))
                                          + [64, 80, 96, 128, 160, 192, 256, 384, 512, 1024])
    for o in outs:
        acc.compose(o["event"])
    expect = min(acc.get_epsilon(sum(o["delta"] for o in outs)), sum(o["epsilon"] for o in outs))
    shown = float(re.search(r"ε = ([0-9.]+)", text).group(1))
    assert shown == pytest.approx(expect, rel=2e-3)
    assert shown < sum(o["epsilon"] for o in outs)


def test_a_run_beyond_the_servers_budget_is_refused_before_it_starts(monkeypatch):
    monkeypatch.setenv("DPCORE_WORK_BUDGET", "server,steps=40")
    monkeypatch.setattr("dpcore.training.engine.resolve_noise_multiplier",
                        lambda *a, **k: pytest.fail("the run started before its work was checked"))
    at = _app()
    _train_iris(at, 50)
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "“Epochs” = 50 asks for" in errors and "use at most “Epochs” = " in errors and "per run" in errors
    assert "Test accuracy (private)" not in [m.label for m in at.metric]


def test_a_second_visitor_asking_the_same_run_gets_it_without_training_again(monkeypatch):
    import dpcore.ui.training as training

    calls = []
    real = training.train_with_baseline

    def counted(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "train_with_baseline", counted)
    first, second = _train_iris(_app(), 3), _train_iris(_app(), 3)  # two sessions, the same inputs
    assert not first.exception and not second.exception
    assert calls == ["dpsgd"]  # trained once for both
    assert [m.value for m in first.metric] == [m.value for m in second.metric]
    third = _train_iris(_app(), 4)  # other inputs: a run of its own
    assert not third.exception and calls == ["dpsgd", "dpsgd"]


def test_the_page_opens_on_the_lessons_dataset_and_its_headline_chart_draws_the_non_private_model_beside_the_run():
    from dpcore.teaching.lesson import DATASET, EPSILON, SEED

    at = _app()
    assert at.selectbox(key="train.dataset").value == DATASET
    assert at.number_input(key="train.epsilon").value == EPSILON and at.number_input(key="train.seed").value == SEED
    _train_iris(at, 3)
    assert not at.exception
    base = float(next(m for m in at.metric if m.label == "Test accuracy (non-private)").value)
    _, rows = vega_chart(at, HISTORY_ALT)
    assert f"non-private {base:.3g}" in [r["text"] for r in rows if "text" in r]


def test_a_model_answering_one_class_is_said_once_by_the_class_name():
    # at ε 0.01 on iris DP-SGD answers 'versicolor' for every test row; the page said so twice, once by the class's
    # name and once by its index ("the trained model answers class 1 for every evaluation row")
    at = _app()
    at.selectbox(key="train.dataset").set_value("iris").run()
    at.number_input(key="train.epsilon").set_value(0.01).run()
    at.button(key="train.run").click().run()
    assert not at.exception
    single = [w.value for w in at.warning if "single class" in w.value or "answers class" in w.value]
    assert len(single) == 1 and "'versicolor'" in single[0], single
