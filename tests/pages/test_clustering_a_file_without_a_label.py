"""The Clustering page on an uploaded table with no class label: its rows clustered by the three methods and read
by what needs no classes, in this session alone."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.accounting import epsilon_of_event
from dpcore.models.cluster_rows import NO_ACCURACY_NOTE, SCORE_NOTE
from dpcore.runtime.serving import shared_runs
from dpcore.ui.common import NO_LABEL
from dpcore.ui.models import UPLOAD_RUNS
from dpcore.ui.uploads import UPLOAD_KEY, holds_upload

from .conftest import page

PICKER = "cluster.dataset"


def _features_only(n: int = 60) -> bytes:
    rng = np.random.default_rng(11)
    X = np.r_[rng.normal([20, 50], 3, (n, 2)), rng.normal([60, 20], 3, (n, 2)), rng.normal([40, 80], 3, (n, 2))]
    return ("age,spend\n" + "".join(f"{a:.2f},{b:.2f}\n" for a, b in X)).encode()


def _uploaded(data: bytes = b"", name: str = "shop.csv", bounds: str = "age=0:100\nspend=0:100", *, before=None):
    at = page("pages/3_Clustering.py", timeout=300).run()
    if before is not None:  # the page's first view (iris, a registry dataset: shared and kept as it should be)
        before()
    at.selectbox(key=PICKER).set_value("upload").run()
    at.get("file_uploader")[0].set_value((name, data or _features_only(), "text/csv")).run()
    if bounds:
        at.text_area(key=f"{PICKER}.bounds.your_file").set_value(bounds).run()
    assert not at.exception, at.exception
    return at


def _said(at) -> str:
    return " ".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [w.value for w in at.warning])


@pytest.fixture
def private_store(tmp_path, monkeypatch):
    """The sweeps' cache and the server's store of finished runs both under ``tmp_path``, to see what lands there."""
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(shared_runs(), "directory", tmp_path)
    return tmp_path


def test_a_file_of_features_only_is_clustered_without_classes_on_the_page():
    at = _uploaded()
    label = at.selectbox(key=f"{PICKER}.label")
    assert label.value == NO_LABEL and label.options[0] == "No label: cluster the rows only"  # first, and chosen
    assert not at.error, [e.value for e in at.error]
    names = [m.label for m in at.metric]
    assert names == ["DPLloyd, ε 1", "Input perturbation, ε 1", "Lloyd, not private", "Random centres, ε 0"]
    said = _said(at)
    assert NO_ACCURACY_NOTE in said and SCORE_NOTE in said
    assert "Input perturbation (" in said and "no tighter than random centres" in said  # ε 1 swamps its records
    intro = next(m.value for m in at.markdown if "An uploaded table with no class column" in m.value)
    assert "Hungarian" not in said.replace(intro, "")  # the folded intro aside: no matching
    assert not any("classes" in w.value and "k = " in w.value for w in at.warning)  # no k vs classes warning
    assert not any("accuracy" in m.label.lower() for m in at.metric)
    assert any("k starts at 3, a default" in c.value for c in at.sidebar.caption)
    assert at.toggle(key="cluster.seed.secure_upload").value is True  # an upload: secure noise by default
    metrics, centres = (d.value for d in at.dataframe if "Method" in d.value.columns)
    assert list(metrics["Method"]) == ["DPLloyd", "Input perturbation", "Lloyd (non-private)",
                                       "Random centres (no data used)"]
    assert list(metrics["ε"]) == ["1", "1", "∞ (not private)", "0"]
    assert (centres["Method"] == "DPLloyd").sum() == 3 and {"Age", "Spend"} <= set(centres.columns)
    lloyd = centres[centres["Method"] == "Lloyd (non-private)"][["Age", "Spend"]].astype(float).to_numpy()
    assert np.allclose(sorted(map(tuple, np.round(lloyd, -1))), [(20, 50), (40, 80), (60, 20)])  # in the columns' units
    assert len(at.get("plotly_chart")) == 3  # the rows coloured by cluster, one picture per method
    at.number_input(key="cluster.k.your_file.rows").set_value(4).run()
    centres = [d.value for d in at.dataframe if "Cluster" in d.value.columns][0]
    assert not at.exception and (centres["Method"] == "DPLloyd").sum() == 4


def test_the_dplloyd_run_on_the_upload_spends_the_epsilon_the_page_reports():
    at = _uploaded()
    at.number_input(key="cluster.epsilon").set_value(0.4).run()
    assert not at.exception
    runs = [v for k, v in at.session_state[UPLOAD_RUNS].items() if k[0] == "cluster_rows_demo" and k[3] == 0.4]
    assert len(runs) == 1
    dplloyd = runs[0]["runs"]["dplloyd"]
    assert dplloyd.epsilon == pytest.approx(0.4)
    assert epsilon_of_event(dplloyd.dp_event, delta=0.0, neighbouring="replace-one") == pytest.approx(0.4)
    metrics = [d.value for d in at.dataframe if "Method" in d.value.columns][0].set_index("Method")
    assert metrics.loc["DPLloyd", "ε"] == "0.4"


def test_choosing_a_label_column_keeps_the_accuracy_reading():
    rows = _features_only().decode().splitlines()
    labelled = "\n".join([rows[0] + ",segment"] + [f"{r},{'abc'[i // 60]}" for i, r in enumerate(rows[1:])])
    at = _uploaded(labelled.encode(), name="segments.csv")
    assert at.selectbox(key=f"{PICKER}.label").value == "segment"  # a last column of classes: the label, as today
    assert [m.label for m in at.metric][:3] == ["Lloyd (non-private) accuracy", "DPLloyd accuracy",
                                                "Input perturbation accuracy"]
    at.selectbox(key=f"{PICKER}.label").set_value(NO_LABEL).run()
    assert any("'segment' is text" in e.value and "drop it" in e.value for e in at.error)  # now a feature: said
    at.multiselect(key=f"{PICKER}.drop").set_value(["segment"]).run()
    assert not at.exception and not at.error and NO_ACCURACY_NOTE in _said(at)
    assert [d.value for d in at.dataframe if "Cluster" in d.value.columns][0].shape[0] == 9


def test_columns_without_declared_bounds_are_read_from_the_rows_with_the_leak_warning():
    at = _uploaded(bounds="age=0:100")
    assert not at.exception and not at.error
    leaks = [w.value for w in at.warning if w.value.startswith("**Privacy leak:**")]
    assert any("'spend'" in w and "read from the data itself" in w for w in leaks)
    assert not any("'age'" in w for w in leaks)  # declared: not read from the rows
    assert len(at.metric) == 4  # and the rows are clustered all the same


def test_an_unlabelled_upload_s_runs_are_neither_kept_by_the_server_nor_reached_by_another_session(
        private_store, monkeypatch):
    import dpcore.ui.cluster_rows as rows_ui

    calls = []
    real = rows_ui.cluster_rows_demo_of
    monkeypatch.setattr(rows_ui, "cluster_rows_demo_of", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    def forget_iris():
        shared_runs().clear()
        for path in private_store.rglob("*.pkl"):
            path.unlink()

    mine = _uploaded(before=forget_iris)
    first = len(calls)  # once on the rows' own bounds, once more when the bounds are declared
    assert first == 2 and mine.session_state[UPLOAD_RUNS]
    # nothing on disk, nothing in the store of finished runs every visitor reads
    assert [p for p in private_store.rglob("*") if p.is_file()] == []
    assert [k for k in list(shared_runs()._done) if holds_upload(k) or (isinstance(k, tuple) and "session" in k[:2])
            ] == []
    theirs = page("pages/3_Clustering.py", timeout=300).run()
    assert not theirs.exception
    assert UPLOAD_KEY not in theirs.session_state and UPLOAD_RUNS not in theirs.session_state
    assert not any("shop.csv" in str(o) for o in theirs.selectbox(key=PICKER).options)
    same_file = _uploaded()  # another visitor with the very same file: computed again, never handed the first's
    assert len(calls) == 2 * first
    assert same_file.session_state[UPLOAD_RUNS] is not mine.session_state[UPLOAD_RUNS]


def test_each_release_on_the_file_adds_to_the_sessions_total_once():
    """Both private methods release centres of the same private rows, and each change of a setting releases again:
    the session's total on the file counts every release once (the same inputs shown again are the same release)."""
    at = _uploaded()
    total = [c.value for c in at.caption if c.value.startswith("**Session total.**")]
    assert len(total) == 1 and "**2 private trainings** on your file" in total[0] and "ε = 2**" in total[0], total
    at.number_input(key="cluster.epsilon").set_value(0.5).run()
    at.number_input(key="cluster.epsilon").set_value(1.0).run()  # back to the first inputs: nothing new released
    total = [c.value for c in at.caption if c.value.startswith("**Session total.**")][0]
    assert "**4 private trainings** on your file" in total and "ε = 3**" in total, total


def test_a_file_of_one_column_is_clustered_without_a_label_not_refused_for_having_no_feature_beside_it():
    # one column of a few whole numbers, read as the label: "the CSV needs at least one feature column besides the
    # label column", while "no label" was in the list and is the only way its rows can be used
    rng = np.random.default_rng(5)
    values = np.r_[rng.integers(1, 4, 40), rng.integers(8, 11, 40), rng.integers(16, 19, 40)]
    at = _uploaded(("rooms\n" + "".join(f"{v}\n" for v in values)).encode(), name="rooms.csv",
                   bounds="rooms=0:20")
    assert at.selectbox(key=f"{PICKER}.label").value == NO_LABEL
    assert not at.error, [e.value for e in at.error]
    assert [m.label for m in at.metric][:3] == ["DPLloyd, ε 1", "Input perturbation, ε 1", "Lloyd, not private"]
    assert any(m.value.startswith("**Your rows (120 rows, 1 column) at ε = 1**") for m in at.markdown)


def test_a_labels_declared_classes_are_said_to_score_the_clusters_not_to_be_answered():
    rows = _features_only().decode().splitlines()
    labelled = "\n".join([rows[0] + ",segment"] + [f"{r},{'abc'[i // 60]}" for i, r in enumerate(rows[1:])])
    at = _uploaded(labelled.encode(), name="segments.csv")
    at.text_area(key=f"{PICKER}.categories.segments.csv").set_value("segment=a|b|c").run()
    said = " ".join(c.value for c in at.caption)
    assert "3 declared classes, in the order declared; the clusters are scored against them" in said
    assert "every model answers" not in said


def test_a_new_file_starts_from_the_default_number_of_clusters_not_the_one_chosen_for_the_file_before():
    at = _uploaded()
    at.number_input(key="cluster.k.your_file.rows").set_value(5).run()
    assert at.number_input(key="cluster.k.your_file.rows").value == 5
    other = _features_only(40).decode().replace("age,spend", "height,weight")
    at.get("file_uploader")[0].set_value(("other.csv", other.encode(), "text/csv")).run()
    at.text_area(key=f"{PICKER}.bounds.your_file").set_value("height=0:100\nweight=0:100").run()
    assert not at.exception, at.exception
    assert at.number_input(key="cluster.k.your_file.rows").value == 3  # set for the file before: forgotten
