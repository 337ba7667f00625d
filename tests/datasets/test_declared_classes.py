"""A classification label's classes declared by the data's owner (``categories="diagnosis=healthy|flu|covid"``), not
read from the rows: which classes occur is a fact about the private rows (a class only one record holds appears or
vanishes with that record, and with it the width of every model's output, which no ε covers). Declared, they are
exactly the classes, in the order declared, a class no row holds kept; a row whose label is none of them is refused;
read from the rows, they are said to leak and every private run on them is marked as leaking."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore.datasets import as_dataset, load_csv
from dpcore.exceptions import CategoriesError, PrivacyLeakWarning
from dpcore.learners import run_learner

DECLARED = "diagnosis=healthy|flu|covid, ward=A|B"


def _frame(n: int = 120, *, covid: int = 0, seed: int = 0) -> pd.DataFrame:
    """``n`` patients, healthy or flu by their temperature; the first ``covid`` of them have covid."""
    rng = np.random.default_rng(seed)
    temp = rng.uniform(36, 41, n)
    frame = pd.DataFrame({"temp": temp.round(2), "ward": rng.choice(["A", "B"], n),
                          "diagnosis": np.where(temp > 38.5, "flu", "healthy")})
    frame.loc[: covid - 1, "diagnosis"] = "covid"
    return frame


def _load(frame: pd.DataFrame, categories=DECLARED, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # declared bounds, categories and classes: nothing leaks
        return load_csv(frame, label_column="diagnosis", bounds="temp=30:45", categories=categories, **kw)


def test_declared_classes_are_the_label_s_classes_in_the_declared_order_even_those_no_row_holds():
    ds = _load(_frame())
    assert ds.task == "classification" and ds.n_classes == 3
    assert ds.target_names == ("healthy", "flu", "covid") and ds.classes == ("healthy", "flu", "covid")
    assert ds.inferred_classes == () and ds.inferred_bounds == ()
    frame = _frame()
    assert ds.y.tolist() == [("healthy", "flu", "covid").index(d) for d in frame.diagnosis]
    assert ds.feature_names == ("temp", "ward=A", "ward=B")  # the label is no feature
    assert ds.categories == (("ward", ("A", "B")),)


@pytest.mark.parametrize("learner", ["erm-objective", "pate", "majority"])
def test_every_model_has_one_output_per_declared_class_when_the_rows_hold_none_of_one(learner):
    frame = _frame()
    assert "covid" not in set(frame.diagnosis)
    res = run_learner(learner, frame, label="diagnosis", bounds="temp=30:45", categories=DECLARED, epsilon=1.0,
                      seed=0)
    assert res.test_outputs.values.shape[1] == 3
    if res.model is not None and res.model.classes:
        assert res.model.classes == ("healthy", "flu", "covid")
        assert set(res.model.predict(frame.drop(columns="diagnosis").head(20))) <= {"healthy", "flu", "covid"}


def test_neighbours_differing_by_the_only_record_of_a_class_get_the_same_classes_when_declared():
    with_one, without = _frame(covid=1), _frame(covid=1).iloc[1:]  # remove the one covid patient
    a, b = _load(with_one), _load(without)
    assert a.target_names == b.target_names == ("healthy", "flu", "covid")
    widths = [run_learner("erm-objective", ds, epsilon=1.0, seed=0).test_outputs.values.shape[1] for ds in (a, b)]
    assert widths == [3, 3]
    # read from the rows, the class list itself tells whether that one patient is in the data
    with pytest.warns(PrivacyLeakWarning):
        read_a = load_csv(with_one, label_column="diagnosis", bounds="temp=30:45", categories="ward=A|B")
    with pytest.warns(PrivacyLeakWarning):
        read_b = load_csv(without, label_column="diagnosis", bounds="temp=30:45", categories="ward=A|B")
    assert read_a.n_classes == 3 and read_b.n_classes == 2


def test_classes_read_from_the_rows_are_said_to_leak_naming_the_label_and_how_to_declare_them():
    with pytest.warns(PrivacyLeakWarning, match=r"the classes of the label 'diagnosis' were read from the data "
                                                 r"itself, which leaks privacy .* \(categories= in load_csv, "
                                                 r"--categories on the command line, 'Declared categories' on the "
                                                 r"pages\), e.g. diagnosis=CLASS\|CLASS\|CLASS$") as caught:
        ds = load_csv(_frame(), label_column="diagnosis", bounds="temp=30:45", categories="ward=A|B")
    assert ds.inferred_classes == ("diagnosis",) and ds.inferred_bounds == ()
    said = " ".join(str(w.message) for w in caught)
    assert "healthy" not in said and "flu" not in said  # no class is named
    # a regression label has no classes to read
    frame = _frame().assign(score=lambda d: d.temp * 2).drop(columns="diagnosis")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        reg = load_csv(frame, label_column="score", bounds="temp=30:45, score=60:90", categories="ward=A|B")
    assert reg.task == "regression" and reg.inferred_classes == ()


def test_runs_on_classes_read_from_the_rows_are_marked_as_leaking_and_declared_ones_are_not(tmp_path):
    from dpcore.sweep import SweepConfig, dataset_fingerprint, run_sweep
    from dpcore.ui.training import train_with_baseline
    from dpcore.ui.uploads import inferred_bounds_note, leaks_bounds

    with pytest.warns(PrivacyLeakWarning):
        read = load_csv(_frame(), label_column="diagnosis", bounds="temp=30:45", categories="ward=A|B")
    declared = _load(_frame(), categories="diagnosis=flu|healthy, ward=A|B")  # the classes the rows hold, declared
    assert read.target_names == declared.target_names and np.array_equal(read.y, declared.y)
    # the same arrays, but not the same data for a cache: a run on the one leaked, on the other not
    assert dataset_fingerprint(read) != dataset_fingerprint(declared)
    params = {"preprocess": "bounds"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [train_with_baseline(ds, "dpsgd", {"model": "linear", "epochs": 1}, epsilon=1.0, delta=1e-5, seed=0)
                for ds in (read, declared)]
        tables = [run_sweep(SweepConfig(dataset=ds, learners=["erm-objective"], values=[1.0], seeds=1,
                                        params=params), n_jobs=1, cache_dir=tmp_path).table.set_index("learner")
                  for ds in (read, declared)]
    assert [r["leaks_privacy"] for r in runs] == [True, False]
    assert [bool(t.loc["erm-objective", "leaks_privacy"]) for t in tables] == [True, False]
    assert "classes of the label 'diagnosis' were read from the uploaded rows" in tables[0].loc["erm-objective",
                                                                                               "warnings"]
    assert not tables[0].loc["majority", "leaks_privacy"]  # no ε to qualify
    # the pages' note above every result, and the session's total (leaks_bounds)
    note = inferred_bounds_note(read)
    assert note.startswith("**Not yet a guarantee:** the classes of the label 'diagnosis' were read from its rows")
    assert "*Declared categories* box (diagnosis=CLASS|CLASS|" in note and "bounds" not in note
    assert leaks_bounds(read) and not leaks_bounds(declared) and inferred_bounds_note(declared) is None
    # the decision report says whether the class list was declared, never a class
    from dpcore.decision.report import data_shape

    shapes = [data_shape(ds) for ds in (read, declared)]
    assert shapes[0]["class_list"].startswith("read from the data (leaks")
    assert shapes[1]["class_list"] == "declared by the data's owner"
    assert not any(c in str(shapes) for c in ("healthy", "flu"))


def test_a_label_none_of_the_declared_classes_is_refused_saying_the_column_and_how_many_rows():
    frame = _frame(covid=3)
    with pytest.raises(CategoriesError) as info:
        _load(frame, categories="diagnosis=healthy|flu, ward=A|B")
    said = str(info.value)
    assert said.startswith("the label 'diagnosis' holds none of its declared classes in 3 of 120 rows: every row's "
                           "label must be one of them")
    assert "diagnosis=CLASS|CLASS|..." in said and "covid" not in said  # the owner's view: a count, no value
    # matched as a feature's declared values are: case and spelling included, spaces around a cell dropped
    frame = _frame().assign(diagnosis=lambda d: " " + d.diagnosis + " ")
    assert _load(frame).target_names == ("healthy", "flu", "covid")
    with pytest.raises(CategoriesError, match=r"in 120 of 120 rows"):
        _load(_frame(), categories="diagnosis=Healthy|Flu, ward=A|B")


def test_a_misspelt_declared_class_is_named_in_the_refusal_in_the_owner_s_words_never_a_row_s_value():
    with pytest.raises(CategoriesError) as info:
        _load(_frame(covid=3), categories="diagnosis=healthy|flue|covid, ward=A|B")
    said = str(info.value)
    assert "the declared class 'flue' matches no row: check its spelling and case" in said
    assert "'flu'" not in said  # the cells the rows hold stay out of the message
    with pytest.raises(CategoriesError) as info:
        _load(_frame(), categories="diagnosis=Healthy|Flu|covid, ward=A|B")
    assert "the declared classes 'Healthy', 'Flu' and 'covid' match no row: check their spelling and case" in str(
        info.value)
    # every declared class matched by some row, a class left out: nothing to name, the count says it
    with pytest.raises(CategoriesError) as info:
        _load(_frame(covid=3), categories="diagnosis=healthy|flu, ward=A|B")
    assert "matches no row" not in str(info.value) and "match no row" not in str(info.value)


def test_a_declared_label_forced_to_regression_is_refused_naming_where_to_set_its_range_or_its_task():
    """The page said "declare a regression label's range in the bounds (...), or choose classification", naming
    neither the page's boxes nor the command line's flags."""
    from dpcore.ui.common import in_page_words

    frame = _frame().assign(diagnosis=lambda d: np.where(d.diagnosis == "flu", 2, 1))
    with pytest.raises(CategoriesError) as info:
        _load(frame, categories="diagnosis=1|2, ward=A|B", task="regression")
    said = str(info.value)
    assert said.startswith("categories name the label column 'diagnosis', which is a regression label here")
    assert ("e.g. diagnosis=LOW:HIGH (bounds= in load_csv, --bounds on the command line, 'Declared bounds' on the "
            "pages), or make it classification (task= in load_csv, --task on the command line, 'Task' on the pages)"
            ) in said
    assert in_page_words(said).endswith("e.g. diagnosis=LOW:HIGH (the 'Declared bounds' box), or make it "
                                        "classification (the 'Task' box)")


@pytest.mark.parametrize("categories, error", [
    ("diagnosis=healthy, ward=A|B", r"^categories for the label 'diagnosis' declare a single class; a label needs "
                                    r"at least two"),
    ("diagnosis=healthy|healthy, ward=A|B", r"^categories for 'diagnosis': the value 'healthy' is listed twice"),
])
def test_a_declaration_of_classes_that_cannot_be_used_is_refused_by_name(categories, error):
    with pytest.raises(CategoriesError, match=error):
        _load(_frame(), categories=categories)


def test_numbers_declared_as_classes_stay_numbers_and_take_the_declared_order():
    frame = _frame().assign(stage=lambda d: np.where(d.diagnosis == "flu", 2, 0)).drop(columns="diagnosis")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        ds = as_dataset(frame, "stage", bounds="temp=30:45", categories={"ward": ["A", "B"], "stage": [2, 1, 0]})
    assert ds.target_names == ("2", "1", "0") and ds.classes == (2, 1, 0)
    assert ds.y.tolist() == [0 if s == 2 else 2 for s in frame.stage]
    res = run_learner("erm-objective", ds, epsilon=5.0, seed=0)
    assert set(res.model.predict(frame.drop(columns="stage"))) <= {0, 1, 2}
    assert res.test_outputs.values.shape[1] == 3
    # a declaration of the label makes it classes, whatever the guess would have been; a regression is refused
    with pytest.raises(CategoriesError, match=r"which is a regression label here"):
        as_dataset(frame, "stage", bounds="temp=30:45", categories="stage=0|1|2, ward=A|B", task="regression")


def test_a_class_shares_mistake_names_no_class_read_from_an_uploads_rows():
    """Classes read from the rows of a file (no declaration) are values of its records: a rare one points to a
    person. A mistake in the class shares says what was typed and how many classes there are, never the others;
    declared, the classes are the owner's words and are named."""
    import io

    import pytest

    from dpcore.datasets import load_csv
    from dpcore.exceptions import DPCoreError

    text = "age,outcome\n" + "".join(f"{30 + i % 50},{'home' if i % 20 else 'icu_transfer'}\n" for i in range(200))
    read = load_csv(io.StringIO(text), label_column="outcome", bounds="age=0:120")
    with pytest.raises(DPCoreError) as exc:
        read.with_class_shares("home=0.9, icu=0.1")
    said = str(exc.value)
    assert "'icu' is not a class" in said and "no share for 1 of the label's 2 classes" in said
    assert "icu_transfer" not in said and "declare them as categories" in said
    declared = load_csv(io.StringIO(text), label_column="outcome", bounds="age=0:120",
                        categories="outcome=home|icu_transfer")
    with pytest.raises(DPCoreError, match="its classes are 'home', 'icu_transfer'"):
        declared.with_class_shares("home=0.9, icu=0.1")
