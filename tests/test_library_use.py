"""dpcore as a data scientist uses it: your DataFrame or arrays, a model that predicts, its event, the audit of
your own model, bounds in one format, and the pitfalls answered."""
from __future__ import annotations

import pathlib
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import dpcore
from dpcore.accounting import PrivacyLedger, epsilon_of_event
from dpcore.datasets import BoundedScaler, as_dataset, load_csv, scale_to_unit_interval, standardize_with_bounds
from dpcore.exceptions import BoundsError, DatasetError, DPCoreWarning, DPValueError
from dpcore.mechanisms import Laplace, SecureGaussian, SecureLaplace  # noqa: F401 - importable from the face
from dpcore.models import PrivateERMClassifier, SSPRegressor


def _frame(n=240, seed=0):
    g = np.random.default_rng(seed)
    df = pd.DataFrame({"age": g.uniform(20, 80, n), "income": g.uniform(0, 100, n)})
    df["buys"] = np.where(df["age"] + 0.5 * df["income"] > 75, "yes", "no")
    return df


BOUNDS = {"age": (18, 90), "income": (0, 100)}


def test_run_learner_on_a_dataframe_returns_a_model_that_predicts_new_rows_with_its_event():
    df = _frame()
    res = dpcore.run_learner("dpsgd", df, label="buys", bounds=BOUNDS, epsilon=2.0,
                             params={"epochs": 20, "batch_size": 32, "model": "linear"})
    assert res.dataset == "data" and res.epsilon <= 2.0 + 1e-9
    assert epsilon_of_event(res.event, delta=res.delta, neighbouring=res.neighbouring) == pytest.approx(res.epsilon)
    new = _frame(50, seed=1)
    predicted = res.model.predict(new.drop(columns="buys"))
    assert set(predicted) <= {"yes", "no"}
    assert np.mean(predicted == new["buys"].to_numpy()) > 0.7
    assert res.model.dp_event == res.event
    assert np.array_equal(res.predict(new[["income", "age"]]), predicted)  # columns picked by name


def test_run_learner_on_arrays_keeps_the_labels_as_given():
    g = np.random.default_rng(0)
    X = g.normal(size=(300, 3))
    y = np.where(X[:, 0] > 0, 8, 5)
    res = dpcore.run_learner("dpsgd", (X, y), bounds=(-4, 4), params={"epochs": 20, "noise_multiplier": 0.8,
                                                                      "batch_size": 32, "model": "linear"})
    assert set(res.model.classes_) == {5, 8}
    assert np.mean(res.model.predict(X) == y) > 0.8
    same = dpcore.run_learner("dpsgd", X, y, bounds=(-4, 4), params={"epochs": 20, "noise_multiplier": 0.8,
                                                                     "batch_size": 32, "model": "linear"})
    assert same.epsilon == res.epsilon and same.metrics == res.metrics


def test_a_torch_module_given_to_run_learner_is_refused_with_the_way_to_train_it():
    # it was refused as "model must be one of 'linear', 'mlp', 'cnn', got Linear(...)", with no word of train()
    from torch import nn

    X = np.random.default_rng(0).uniform(size=(40, 3))
    with pytest.raises(DPValueError, match=r"params\['model'\] is a torch module.*dpcore\.train\(X, y, .*"
                                           r"model=your_module\).*BoundedScaler"):
        dpcore.run_learner("dpsgd", (X, (X[:, 0] > 0.5).astype(int)), bounds=(0, 1), params={"model": nn.Linear(3, 2)})

def test_bounds_take_one_set_of_forms_everywhere():
    df = _frame(60)
    forms = [BOUNDS, "age=18:90, income=0:100", ([18, 0], [90, 100])]
    for bounds in forms:
        ds = load_csv(df, label_column="buys", bounds=bounds)
        np.testing.assert_array_equal(ds.bounds[0], [18, 0])
        np.testing.assert_array_equal(ds.bounds[1], [90, 100])
        np.testing.assert_allclose(standardize_with_bounds(df[["age", "income"]], bounds),
                                   standardize_with_bounds(df[["age", "income"]].to_numpy(), ([18, 0], [90, 100])))
    with pytest.raises(BoundsError, match=r"bounds must be a mapping .*or a pair \(low, high\)"):
        load_csv(df, label_column="buys", bounds=(1, 2, 3))
    with pytest.raises(BoundsError, match="no range for column.*'income'"):
        standardize_with_bounds(df[["age", "income"]], {"age": (18, 90)})


def test_standardize_with_bounds_says_how_many_rows_it_clipped():
    X = np.array([[0.5, 2.0], [0.2, 0.3], [3.0, 0.1]])
    with pytest.warns(DPCoreWarning, match=r"2 of 3 rows \(2 values\) lay outside the declared bounds"):
        standardize_with_bounds(X, (0, 1))
    with pytest.warns(DPCoreWarning, match="every row was"):
        standardize_with_bounds(X + 5, (0, 1))


def test_bounded_scaler_reads_no_statistic_of_the_rows_and_works_in_a_pipeline():
    df = _frame()
    X, y = df[["age", "income"]], df["buys"]
    scaler = BoundedScaler(bounds=BOUNDS).fit(X)
    np.testing.assert_allclose(scaler.transform(pd.DataFrame({"age": [18.0, 90.0], "income": [50.0, 0.0]})),
                               [[-1.0, 0.0], [1.0, -1.0]])
    shifted = BoundedScaler(bounds=BOUNDS).fit(X * 0 + 1000)  # what it learns does not depend on the values
    np.testing.assert_array_equal(shifted.lower_, scaler.lower_)
    pipe = make_pipeline(BoundedScaler(bounds=BOUNDS), PrivateERMClassifier(epsilon=5.0, data_norm=2**0.5,
                                                                                 random_state=0)).fit(X, y)
    assert pipe.score(X, y) > 0.6
    assert make_pipeline(BoundedScaler(bounds=BOUNDS), LogisticRegression()).fit(X, y).score(X, y) > 0.9


def test_private_erm_classifier_reports_an_event_a_ledger_spends():
    df = _frame()
    clf = PrivateERMClassifier(epsilon=0.7, data_norm=2**0.5, random_state=0).fit(
        BoundedScaler(bounds=BOUNDS).fit_transform(df[["age", "income"]]), df["buys"])
    ledger = PrivacyLedger(delta=1e-5, budget=1.0, neighbouring="replace-one")  # the paper's relation
    assert clf.neighbouring_ == "replace_one" and ledger.spend(clf) == pytest.approx(0.7)


def test_a_ledger_checks_what_a_results_epsilon_protects_before_composing_it():
    """A guarantee for a record replaced (objective perturbation, shuffled batches) says nothing about a record added
    or removed: an add/remove ledger refuses it, where composing its event as it was read 1.0 for two runs at 0.5 whose
    valid total is larger. A replace-one ledger takes both kinds, an add/remove run at (2ε, (1 + e^ε)δ)."""
    import torch

    df = _frame()
    erm = dpcore.run_learner("erm-objective", df, label="buys", bounds=BOUNDS, epsilon=0.5)
    sgd = dpcore.run_learner("dpsgd", df, label="buys", bounds=BOUNDS, epsilon=0.5,
                             params={"model": "linear", "epochs": 2})
    clf = PrivateERMClassifier(epsilon=0.7, data_norm=2**0.5, random_state=0).fit(
        BoundedScaler(bounds=BOUNDS).fit_transform(df[["age", "income"]]), df["buys"])
    X, y = np.zeros((20, 2)), np.arange(20) % 2
    poisson, shuffled = (dpcore.train(X, y, dpcore.TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0,
                                                               sampling=s), model=torch.nn.Linear(2, 2))
                         for s in ("poisson", "shuffle"))
    add_remove = PrivacyLedger(delta=1e-5)
    assert add_remove.spend(sgd) == pytest.approx(sgd.epsilon) and add_remove.spend(poisson) > sgd.epsilon
    for result in (erm, clf, shuffled):
        with pytest.raises(DPValueError, match="protects one record replaced, and this ledger counts one record "
                                               r"added or removed.*PrivacyLedger\(neighbouring='replace-one'\)"):
            add_remove.epsilon_if(result)
        with pytest.raises(DPValueError, match="protects one record replaced"):
            add_remove.spend(result)
    assert len(add_remove) == 2  # nothing refused was recorded
    replace_one = PrivacyLedger(delta=1e-4, neighbouring="replace-one")
    assert replace_one.spend(erm) == pytest.approx(0.5)
    assert replace_one.spend(sgd) == pytest.approx(0.5 + 2 * sgd.epsilon)  # (2ε, (1 + e^ε)δ), basic composition
    with pytest.warns(DPCoreWarning):
        baseline = dpcore.run_learner("non-private", df, label="buys", bounds=BOUNDS, params={"epochs": 1})
    assert replace_one.spend(baseline) == float("inf")  # a release with no guarantee leaves the total without one


def test_a_ledger_of_whole_records_refuses_a_label_dp_run_whose_epsilon_protects_only_labels():
    """Label DP trains on the features in the clear: its ε protects each record's label, not the record. A replace-one
    ledger composed it with the record-level runs (objective perturbation at 0.5 and label DP at 1.0 read 1.5 for a
    record replaced), where a whole record has no guarantee; it is refused by name, and a ledger of labels
    (unit='labels') composes it, with any record-level run (a label changed is a record replaced)."""
    df = _frame()
    erm = dpcore.run_learner("erm-objective", df, label="buys", bounds=BOUNDS, epsilon=0.5)
    labels = dpcore.run_learner("label-dp-rr", df, label="buys", bounds=BOUNDS, epsilon=1.0,
                                params={"model": "linear", "epochs": 1})
    assert (erm.unit, labels.unit) == ("records", "labels")
    records = PrivacyLedger(delta=1e-5, neighbouring="replace-one")
    records.spend(erm)
    refused = r"protects each record's label, and this ledger counts each record,.*PrivacyLedger\(unit='labels'"
    with pytest.raises(DPValueError, match=refused):
        records.spend(labels)
    assert len(records) == 1
    label_ledger = PrivacyLedger(delta=1e-5, neighbouring="replace-one", unit="labels")
    assert label_ledger.spend(labels) == pytest.approx(labels.epsilon)
    assert label_ledger.spend(erm) == pytest.approx(labels.epsilon + erm.epsilon)
    with pytest.raises(DPValueError, match="unit must be"):
        PrivacyLedger(delta=1e-5, unit="rows")


def test_a_ledger_given_something_that_is_not_an_event_says_so():
    ledger = PrivacyLedger(delta=1e-5)
    with pytest.raises(TypeError, match=r"expected a dp_accounting DpEvent, got str: spend a mechanism .*"
                                        r"EpsilonDeltaDpEvent\(epsilon, delta\)"):
        ledger.epsilon_if("laplace")
    assert len(ledger) == 0


def test_a_ledger_given_an_estimator_not_yet_fitted_says_to_fit_it():
    # it said "expected a dp_accounting DpEvent, got PrivateERMClassifier", as if an estimator could not be spent
    from sklearn.base import clone

    ledger = PrivacyLedger(delta=1e-5, neighbouring="replace-one")
    for unfitted in (dpcore.PrivateERMClassifier(epsilon=1.0), clone(dpcore.PrivateERMClassifier(epsilon=1.0))):
        with pytest.raises(TypeError, match=r"^PrivateERMClassifier is not fitted.*fit it first, then spend it"):
            ledger.spend(unfitted)
    assert len(ledger) == 0


@pytest.mark.filterwarnings("ignore::dpcore.exceptions.PrivacyLeakWarning")
def test_a_ledger_given_a_fitted_pipeline_or_search_says_what_to_spend_instead():
    # a fitted Pipeline or GridSearchCV holds no event of its own: spending the search's best estimator alone would
    # count its refit and not the fits of every candidate and fold
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    g = np.random.default_rng(0)
    X = g.normal(size=(120, 2))
    y = (X[:, 0] > 0).astype(int)
    ledger = PrivacyLedger(delta=1e-5, neighbouring="replace-one")
    clf = dpcore.PrivateERMClassifier(epsilon=1.0, data_norm=2.0, random_state=0)
    pipe = make_pipeline(BoundedScaler(bounds=(-3, 3)), clf)
    with pytest.raises(TypeError, match=r"^Pipeline is not fitted"):
        ledger.spend(pipe)
    with pytest.raises(TypeError, match=r"^a Pipeline holds no event of its own: spend its private estimator"):
        ledger.spend(pipe.fit(X, y))
    search = GridSearchCV(clf, {"epsilon": [0.5, 1.0]}, cv=2).fit(X, y)
    with pytest.raises(TypeError, match=r"^GridSearchCV fitted one model per candidate and fold.*EpsilonDeltaDpEvent"):
        ledger.spend(search)
    with pytest.raises(TypeError, match=r"^LogisticRegression holds no dp_event_: it is not one of dpcore's private"):
        ledger.spend(LogisticRegression().fit(X, y))
    assert len(ledger) == 0 and ledger.spend(pipe[-1]) == pytest.approx(1.0)


def test_a_non_private_learner_given_an_epsilon_says_it_is_a_reference():
    with pytest.warns(DPCoreWarning, match=r"'logreg' is a non-private reference: it ignores epsilon=1.0 .*"
                                           r"erm-objective"):
        res = dpcore.run_learner("logreg", "iris", epsilon=1.0)
    assert res.epsilon == float("inf")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        dpcore.run_learner("logreg", "iris")  # not given one: nothing to say


def test_secure_laplace_on_a_vector_of_separate_answers_adds_the_noise_asked():
    from dpcore.mechanisms.additive import secure_grid

    values = np.zeros(100_000)
    one_query = Laplace(epsilon=1.0).randomise(values, rng="secure")
    answers = Laplace(epsilon=1.0).randomise(values, rng="secure", per_coordinate=True)
    # each answer's own grid (2**-10 for sensitivity 1), and the noise asked: mean |Laplace(b)| = b, within 1.5%
    # (the mean of 100,000 draws has sd 0.3%; the grid adds at most 0.1%)
    assert np.all(np.mod(answers, 2.0**-10) == 0)
    assert abs(float(np.mean(np.abs(answers))) - 1.0) < 0.015
    # one query of 100,000 coordinates: a grid 2**14 times finer, paid for by a larger scale
    assert np.all(np.mod(one_query, 2.0**-24) == 0) and not np.all(np.mod(one_query, 2.0**-10) == 0)
    assert secure_grid(sensitivity=1.0, scale=1.0, coordinates=1, norm=1).scale_increase < 1.001
    assert secure_grid(sensitivity=1.0, scale=1.0, coordinates=100_000, norm=1).scale_increase > 1.005


def test_audit_your_own_model_and_your_own_scores():
    from dpcore.audit import AuditResult, audit

    df = _frame(400)
    X, y = df[["age", "income"]], df["buys"]
    members, non_members = (X[:200], y[:200]), (X[200:], y[200:])
    model = make_pipeline(BoundedScaler(bounds=BOUNDS), LogisticRegression()).fit(*members)
    res = audit(model, members, non_members, epsilon=float("inf"), rng=0)
    assert isinstance(res, AuditResult) and 0.3 < res.auc < 0.7  # a well-generalising model leaks little
    g = np.random.default_rng(0)
    with pytest.warns(DPCoreWarning, match="the claim is refuted"):
        leaky = audit(None, g.normal(2, 1, 1000), g.normal(0, 1, 1000), epsilon=0.1, delta=1e-5, rng=0)
    assert leaky.epsilon_lower_bound > 0.1 and leaky.refutes_claim  # refutes a claim of 0.1
    with pytest.raises(DPValueError, match="not among the model's classes"):
        audit(model, (X[:5], ["maybe"] * 5), non_members)


def test_as_dataset_refuses_labels_given_twice_or_missing():
    X = np.zeros((10, 2))
    with pytest.raises(TypeError, match="give the labels once"):
        as_dataset((X, np.arange(10) % 2), np.arange(10) % 2)
    with pytest.raises(ValueError, match="give the labels"):
        as_dataset(X)
    with pytest.raises(TypeError, match="describe your own data"):
        as_dataset("iris", "target")
    with pytest.raises(DPValueError, match=re.escape("releases no model")):
        dpcore.run_learner("output-perturbation", "iris", params={"epochs": 1}).predict(np.zeros((1, 4)))


def test_a_column_the_messages_say_to_leave_out_is_left_out_with_drop_where_your_data_goes_in():
    # the refusals of a text column or a missing value advise drop=, which run_learner and as_dataset did not take
    df = _frame().assign(note="free text", city=lambda d: np.where(d.age > 50, "paris", "lyon"))
    df.loc[3, "city"] = None
    with pytest.raises(ValueError, match=r"drop="):
        as_dataset(df, "buys", bounds=BOUNDS)
    assert as_dataset(df, "buys", bounds=BOUNDS, drop=["note", "city"]).feature_names == ("age", "income")
    res = dpcore.run_learner("erm-objective", df, label="buys", bounds=BOUNDS, drop=["note", "city"], epsilon=1.0)
    assert res.model.feature_names == ("age", "income")
    X = np.column_stack([df.age, df.income, np.full(len(df), np.nan)])
    assert as_dataset(X, df["buys"].to_numpy(), bounds=(0, 100), drop="x2").feature_names == ("x0", "x1")
    with pytest.raises(TypeError, match="describe your own data"):
        as_dataset("iris", drop="sepal length (cm)")


def test_a_csv_files_path_is_your_data_where_a_dataframe_is(tmp_path, monkeypatch):
    # a path was read as a registry name ("the registry dataset 'my.csv' carries its own"; a Path: "X must be a 2-D
    # array, got shape ()")
    path = tmp_path / "my.csv"
    _frame().to_csv(path, index=False)
    expected = as_dataset(_frame(), "buys", bounds=BOUNDS, name="my.csv")
    for source in (path, str(path)):
        ds = as_dataset(source, "buys", bounds=BOUNDS)
        assert ds.name == "my.csv" and ds.feature_names == expected.feature_names
        np.testing.assert_array_equal(ds.X, expected.X)
        np.testing.assert_array_equal(ds.y, expected.y)
    monkeypatch.chdir(tmp_path)
    res = dpcore.run_learner("erm-objective", "my.csv", label="buys", bounds=BOUNDS, epsilon=1.0)
    assert res.dataset == "my.csv" and set(res.model.predict(_frame(5, seed=1).drop(columns="buys"))) <= {"yes", "no"}
    with pytest.raises(ValueError, match=r"my\.csv.*label='column'"):
        as_dataset(path)
    with pytest.raises(ValueError, match=r"no file 'other\.csv'.*registry"):
        as_dataset("other.csv", "buys")
    with pytest.raises(ValueError, match=r"unknown dataset 'irsi'.*iris.*or give a CSV file's path"):
        as_dataset("irsi")


def test_numbers_in_an_object_array_are_read_as_numbers_and_numbers_as_text_are_named_so():
    # df[[...]].to_numpy() of mixed columns gives an object array; its number columns were refused as "'x0' holds
    # numbers, but 0 of its 240 cells are not (line  of the file)"
    df = _frame()
    X = df[["age", "income"]].astype(object).to_numpy()
    assert X.dtype == object
    ds = as_dataset(X, df["buys"].to_numpy(), bounds=(0, 100))
    np.testing.assert_array_equal(ds.X, as_dataset(df[["age", "income"]].to_numpy(), df["buys"].to_numpy(),
                                                   bounds=(0, 100)).X)
    as_text = df.assign(age=df.age.map("{:.3f}".format))
    with pytest.raises(ValueError, match=r"'age' holds numbers stored as text.*pd\.to_numeric") as err:
        as_dataset(as_text, "buys", bounds=BOUNDS)
    assert "0 of its" not in str(err.value)


def test_true_false_columns_hold_zero_to_one_by_their_type_without_a_leak_warning(tmp_path):
    # pd.get_dummies gives bool columns; their bounds were read from the rows with a PrivacyLeakWarning, when the
    # type itself says 0 to 1 (a column all False would have had the range 0 to 0 of its rows)
    df = _frame()
    df["city"] = np.where(df.age > 50, "paris", "lyon")
    df["smoker"] = np.zeros(len(df), dtype=bool)
    encoded = pd.get_dummies(df, columns=["city"])
    assert encoded["city_paris"].dtype == bool
    encoded.to_csv(tmp_path / "encoded.csv", index=False)
    for data in (encoded, tmp_path / "encoded.csv"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", dpcore.PrivacyLeakWarning)
            ds = as_dataset(data, "buys", bounds=BOUNDS, categories="buys=no|yes")
        assert ds.inferred_bounds == ()
        bools = [ds.feature_names.index(c) for c in ("smoker", "city_lyon", "city_paris")]
        assert ds.bounds[0][bools].tolist() == [0.0] * 3 and ds.bounds[1][bools].tolist() == [1.0] * 3
    with pytest.warns(dpcore.PrivacyLeakWarning, match=r"'age'"):  # a number column is still read, and said
        as_dataset(encoded, "buys", bounds={"income": (0, 100)})


def test_refusals_of_your_arrays_speak_of_your_data_not_of_a_csv_file_or_a_column_you_never_named():
    # an array's infinite value was "the CSV has infinite values", a NaN label "missing values in column(s) 'label'
    # ... or leave the column out", and a frame of one row "the CSV needs at least two data rows"
    X = np.random.default_rng(0).normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(float)
    with pytest.raises(ValueError, match=r"^the DataFrame has infinite values in feature column\(s\) 'x1'") as err:
        as_dataset(np.where(np.arange(2) == 1, np.inf, X), y, bounds=(-3, 3))
    y_nan = y.copy()
    y_nan[[3, 7]] = np.nan
    with pytest.raises(ValueError, match=r"^the labels have missing values \(2 of 50 rows\); remove those rows") as err:
        as_dataset(X, y_nan, bounds=(-3, 3))
    assert "leave the column out" not in str(err.value)
    with pytest.raises(ValueError, match=r"^the label column 'buys' has missing values \(1 of 240 rows\)"):
        as_dataset(_frame().assign(buys=lambda d: d.buys.where(d.index != 5)), "buys", bounds=BOUNDS)
    with pytest.raises(ValueError, match=r"^the DataFrame needs at least two data rows"):
        as_dataset(X[:1], y[:1], bounds=(-3, 3))


def test_the_released_model_refuses_rows_with_missing_or_text_values_by_column():
    # a NaN row was answered ('no' for every row of NaN ages), and a text cell was numpy's "could not convert"
    res = dpcore.run_learner("dpsgd", _frame(), label="buys", bounds=BOUNDS, params={"epochs": 2})
    new = _frame(10, seed=1).drop(columns="buys")
    with pytest.raises(DPValueError, match=r"^X has missing or infinite values in column\(s\) 'age' \(2 of 10 "
                                           r"rows\)"):
        res.model.predict(new.assign(age=np.where(np.arange(10) < 2, np.nan, new.age)))
    with pytest.raises(DPValueError, match=r"column\(s\) 'income' \(1 of 10 rows\)"):
        res.predict(np.where(np.arange(2) == 1, np.where(np.arange(10) == 4, np.inf, 0.5)[:, None], new.to_numpy()))
    with pytest.raises(DPValueError, match=r"^X's column\(s\) 'income' hold text"):
        res.model.predict_proba(new.assign(income="high"))
    assert len(res.model.predict(new)) == 10


#: Learners that release a model, with small settings; the rest release answers only (or, for PATE, a student
#: the result does not keep).
RELEASED = [("dpsgd", "iris", {"epochs": 2}), ("non-private", "iris", {"epochs": 2}),
            ("label-dp-rr", "iris", {"epochs": 2}), ("erm-objective", "breast_cancer", {}),
            ("logreg", "wine", {}), ("dp-fedavg", "iris", {"rounds": 3}), ("ssp", "diabetes", {}),
            ("linreg", "diabetes", {}), ("dpsgd", "diabetes", {"epochs": 2}), ("dplloyd", "iris", {})]


@pytest.mark.parametrize("name, dataset, params", RELEASED, ids=[f"{n}-{d}" for n, d, _ in RELEASED])
def test_the_released_model_answers_the_test_rows_as_the_run_did(name, dataset, params):
    from dpcore.datasets import train_test_split

    split = train_test_split(dataset, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dpcore.run_learner(name, split, params=params)
    predicted = res.model.predict(split.X_test)  # raw rows, in the data's units
    outputs = res.test_outputs
    if outputs.kind == "value":
        np.testing.assert_allclose(predicted, outputs.values, rtol=1e-5, atol=1e-5 * np.abs(outputs.values).max())
    elif outputs.kind == "cluster":
        np.testing.assert_array_equal(predicted, outputs.values.argmax(1))
    else:
        names = np.asarray(split.dataset.target_names)
        np.testing.assert_array_equal(predicted, names[outputs.values.argmax(1)])
    assert (res.model.dp_event is None) == (res.event is None)


def test_a_sweep_takes_your_own_dataframe_with_its_label_and_bounds_and_keeps_it_off_the_disk(tmp_path):
    from dpcore.sweep import SweepConfig, run_sweep

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(200, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=(X[:, 0] > 5).astype(int))
    cfg = SweepConfig(dataset=df, label="y", bounds={"*": (0, 10)}, learners=["erm-objective"], values=[1.0, 4.0],
                      seeds=1, include_baselines=False)
    res = run_sweep(cfg, n_jobs=1, cache_dir=tmp_path)
    assert sorted(res.table["value"]) == [1.0, 4.0]
    assert res.table["accuracy"].between(0, 1).all()
    assert not any(tmp_path.rglob("*.pkl")) and not any(p.is_file() for p in tmp_path.rglob("*"))
    with pytest.raises(DPValueError, match="label and bounds are for your own DataFrame"):
        SweepConfig(dataset="iris", label="y", learners=["erm-objective"], values=[1.0])


def test_a_warning_about_your_data_names_your_line_not_the_librarys():
    df = _frame(60)
    for call in (lambda: dpcore.as_dataset(df, "buys"),  # bounds read from the rows
                 lambda: dpcore.run_learner("logreg", df, label="buys", bounds={"*": (0, 1e6)}),  # loose bounds
                 lambda: dpcore.as_dataset(df, "buys", bounds={"age": (18, 50), "income": (0, 100)}),  # clipped
                 lambda: dpcore.as_dataset(df.drop(columns="buys"), "income", task="regression",  # label clipped
                                           bounds={"age": (18, 90), "income": (0, 50)}),
                 lambda: dpcore.train(np.zeros((20, 2)), np.arange(20) % 2,  # delta above 1/n, the run stopped
                                      dpcore.TrainConfig(epochs=2, batch_size=5, noise_multiplier=0.5, delta=0.1,
                                                         max_epsilon=1.0)),
                 lambda: dpcore.dpsgd_epsilon(noise_multiplier=1e-300, sample_rate=0.1, steps=10, delta=1e-5),
                 lambda: dpcore.run_learner("dpsgd", df, label="buys", bounds=BOUNDS, epsilon=1e9,  # least noise
                                            params={"epochs": 1}),
                 lambda: scale_to_unit_interval([[20.0]], (0.0, 10.0)),  # a value past the bounds, clipped
                 lambda: BoundedScaler(bounds=(0.0, 10.0)).fit([[1.0]]).transform([[20.0]]),  # the same, in a pipeline
                 lambda: SSPRegressor(epsilon=1.0, delta=1e-5, random_state=0).fit(  # bounds read from the rows
                     np.eye(4), np.arange(4.0))):
        with pytest.warns(Warning) as said:
            call()
        assert {pathlib.Path(w.filename).name for w in said} == {pathlib.Path(__file__).name}


def test_a_ledger_given_a_released_model_points_to_the_runs_result_not_its_bare_event():
    # a run's released model holds the run's event but not what it protects: the ledger said "pass its event,
    # .dp_event", whose objective-perturbation guarantee (a record replaced) an add/remove ledger then composed as it
    # was, the total the check on a run's result refuses
    df = _frame()
    erm = dpcore.run_learner("erm-objective", df, label="buys", bounds=BOUNDS, epsilon=0.5)
    with pytest.raises(TypeError, match=r"got ReleasedModel: spend the run's result \(ledger.spend\(run\)\)"):
        PrivacyLedger(delta=1e-5).spend(erm.model)


def test_tab_completion_on_dpcore_offers_the_public_names_and_sub_packages_not_its_own_imports():
    import dpcore

    names = dir(dpcore)
    assert {"run_learner", "train", "PrivacyLedger", "audit", "accounting", "__version__"} <= set(names)
    assert "importlib" not in names and "annotations" not in names


def test_a_printed_ledger_shows_what_it_spent():
    # it printed as <dpcore.accounting.ledger.PrivacyLedger object at 0x...>
    from dpcore.mechanisms import Gaussian, Laplace

    ledger = PrivacyLedger(delta=0.0, budget=3.0)
    ledger.spend(Laplace(epsilon=0.5))
    ledger.spend(Laplace(epsilon=1.0))
    assert repr(ledger) == ("PrivacyLedger(epsilon=1.5, delta=0, spent=2, budget=3, neighbouring='add_remove', "
                            "accountant='rdp')")
    pure = PrivacyLedger(delta=0.0)
    with pytest.warns(DPCoreWarning, match="delta = 0"):
        pure.spend(Gaussian(epsilon=0.5, delta=1e-5))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # printing says no reason again: it is in caveats
        assert repr(pure).startswith("PrivacyLedger(epsilon=inf, delta=0, spent=1,")


def test_clustering_rows_without_labels_through_run_learner_names_the_way_that_takes_no_labels():
    df = pd.DataFrame(np.random.default_rng(0).uniform(0, 1, (60, 2)), columns=["a", "b"])
    for data in (df, df.to_numpy()):
        with pytest.raises(DatasetError, match=r"needs label=.*cluster_rows\(load_csv_unlabelled.*DPLloydKMeans"):
            dpcore.run_learner("dplloyd", data, epsilon=1.0, bounds="*=0:1")
    # the way it names works on the same rows
    from dpcore.datasets.csv_upload import load_csv_unlabelled
    from dpcore.models.cluster_rows import cluster_rows

    assert cluster_rows(load_csv_unlabelled(df, bounds="*=0:1"), "dplloyd", k=3, epsilon=1.0).epsilon == 1.0


def test_an_epsilon_given_with_noise_set_directly_is_said_not_to_be_used_when_the_run_spent_more():
    # run_learner("dpsgd", df, epsilon=3, params={"noise_multiplier": 1.0}) spent epsilon 40 without a word: the noise
    # set directly makes epsilon the run's outcome, not its target, and the 3 asked for was silently dropped
    df = _frame()
    params = {"epochs": 20, "batch_size": 32, "model": "linear"}
    with pytest.warns(DPCoreWarning, match=r"epsilon=1 was not used: params set noise_multiplier=0\.5, so the run "
                                           r"spent the epsilon that noise gives, \d+(\.\d+)? \(result\.epsilon\), more "
                                           r"than epsilon\. Leave noise_multiplier out"):
        loud = dpcore.run_learner("dpsgd", df, label="buys", bounds=BOUNDS, epsilon=1.0,
                                  params={**params, "noise_multiplier": 0.5})
    assert loud.epsilon > 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        # within the epsilon given, or no epsilon given: nothing to say
        assert dpcore.run_learner("dpsgd", df, label="buys", bounds=BOUNDS, epsilon=100.0,
                                  params={**params, "noise_multiplier": 0.5}).epsilon == loud.epsilon
        dpcore.run_learner("dpsgd", df, label="buys", bounds=BOUNDS, params={**params, "noise_multiplier": 0.5})
    spec = dpcore.learners.get_learner("dpsgd")
    assert spec.epsilon_to_aim_at(1.0, {"noise_multiplier": 0.5}) is None and spec.epsilon_to_aim_at(1.0, {}) == 1.0


def test_a_data_frame_with_a_missing_cell_is_refused_by_its_column_name_in_the_scaler_and_the_estimators():
    # the estimators validate through scikit-learn, whose array has numbered columns: "in column(s) 1" for 'income'
    df = pd.DataFrame({"age": [20.0, 30.0, 40.0], "income": [1.0, np.nan, 3.0]})
    named = r"X contains NaN or infinite values in column\(s\) 'income' \(1 of 3 rows\)"
    with pytest.raises(DPValueError, match=named):
        BoundedScaler(bounds={"age": (0, 100), "income": (0, 10)}).fit(df)
    with pytest.raises(DPValueError, match=named):
        PrivateERMClassifier(epsilon=1.0, data_norm=1.0).fit(df, [0, 1, 0])


def test_the_epsilon_a_run_spent_past_the_one_given_is_said_rounded_up(monkeypatch):
    # said to 4 figures to nearest, a run that spent 1.00004 where epsilon=1 was given read 'spent ... 1
    # (result.epsilon), more than epsilon': an epsilon shown below the one spent, and equal to the one it passed
    import dataclasses

    from dpcore.learners import _LEARNERS

    spec = dpcore.learners.get_learner("dpsgd")
    real = spec.run

    def run(split, **kw):
        result = real(split, **kw)
        object.__setattr__(result, "epsilon", 1.00004)
        return result

    monkeypatch.setitem(_LEARNERS, "dpsgd", dataclasses.replace(spec, run=run))
    with pytest.warns(DPCoreWarning, match=r"spent the epsilon that noise gives, 1\.001 \(result\.epsilon\)"):
        dpcore.run_learner("dpsgd", _frame(), label="buys", bounds=BOUNDS, epsilon=1.0,
                           params={"epochs": 1, "batch_size": 32, "model": "linear", "noise_multiplier": 5.0})
