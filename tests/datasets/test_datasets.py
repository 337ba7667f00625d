"""Every dataset loads offline with its documented shape; splits are deterministic; CSV upload errors are clear."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore.datasets import REGISTRY, dataset_names, load_csv, load_dataset, read_csv_columns, train_test_split
from dpcore.datasets.transforms import clip_rows_to_norm, scale_to_unit_interval
from dpcore.exceptions import DatasetError, DPCoreError, DPCoreWarning, DPValueError, PrivacyLeakWarning

EXPECTED = {
    # name: (n, features, classes or 0, image shape)
    "iris": (150, 4, 3, None),
    "wine": (178, 13, 3, None),
    "breast_cancer": (569, 30, 2, None),
    "digits": (1797, 64, 10, (8, 8)),
    "diabetes": (442, 10, 0, None),
    "mnist5k": (5000, 784, 10, (28, 28)),
    "adult": (30162, 104, 2, None),
    "faces": (200, 625, 2, (25, 25)),
}


def test_registry_names_are_the_documented_ones():
    assert list(REGISTRY) == list(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_dataset_loads_with_documented_shape(name):
    n, d, k, shape = EXPECTED[name]
    ds = load_dataset(name)
    assert ds.X.shape == (n, d)
    assert ds.y.shape == (n,)
    assert ds.n_classes == k
    assert ds.image_shape == shape
    assert np.all(np.isfinite(ds.X))
    assert ds.title == REGISTRY[name].title  # the picker and a run's report name the set alike
    lo, hi = ds.bounds
    assert lo.shape == hi.shape == (d,)
    assert np.all(lo < hi)
    # the declared bounds contain the data
    assert np.all(ds.X >= lo - 1e-9) and np.all(ds.X <= hi + 1e-9)
    if ds.task == "classification":
        assert set(np.unique(ds.y)) == set(range(k))
    assert not ds.X.flags.writeable  # cached arrays cannot be mutated by a caller


def test_image_sets_have_pixel_bounds():
    assert load_dataset("digits").bounds[1].max() == 16
    assert load_dataset("mnist5k").bounds[1].max() == 255
    assert load_dataset("faces").bounds[1].max() == 1.0
    assert dataset_names(images=True) == ["digits", "mnist5k", "faces"]
    assert dataset_names("regression") == ["diabetes"]


def test_unknown_dataset():
    with pytest.raises(DPCoreError, match="unknown dataset 'mnist'"):
        load_dataset("mnist")


def test_split_is_deterministic_and_stratified():
    a = train_test_split("iris", seed=3)
    b = train_test_split("iris", seed=3)
    c = train_test_split("iris", seed=4)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    assert not np.array_equal(a.X_test, c.X_test)
    assert a.X_train.shape[0] + a.X_test.shape[0] == 150
    # stratified: each class has the same share in the test set
    assert np.bincount(a.y_test).tolist() == [12, 12, 12]
    r = train_test_split("diabetes", test_size=0.2, seed=0)
    assert r.X_test.shape[0] == round(0.2 * 442)


def test_split_rejects_bad_test_size():
    with pytest.raises(DPCoreError, match="test_size"):
        train_test_split("iris", test_size=1.0)


CSV = "a,b,label\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n"


def test_csv_loader_happy_path():
    assert read_csv_columns(CSV.encode()) == ["a", "b", "label"]
    with pytest.warns(PrivacyLeakWarning):
        ds = load_csv(CSV.encode(), label_column="label")
    assert ds.task == "classification"
    assert ds.X.shape == (4, 2)
    assert ds.target_names == ("x", "y")
    assert ds.y.tolist() == [0, 1, 0, 1]


def test_csv_regression_guess():
    text = "a,y\n" + "\n".join(f"{i},{i * 0.37:.3f}" for i in range(30))
    with pytest.warns(PrivacyLeakWarning):
        ds = load_csv(text, label_column="y")
    assert ds.task == "regression" and ds.label_range[1] > 10


def test_text_labels_are_classes_whatever_their_number():
    text = "a,label\n" + "\n".join(f"{i},c{i % 30}" for i in range(300))  # 30 text classes: more than 20
    with pytest.warns(PrivacyLeakWarning):
        ds = load_csv(text, label_column="label")
    assert ds.task == "classification" and len(ds.target_names) == 30


def test_number_classes_keep_their_numeric_order():
    text = "a,digit\n" + "\n".join(f"{i},{i % 12}" for i in range(120))
    with pytest.warns(PrivacyLeakWarning):
        ds = load_csv(text, label_column="digit", task="classification")
    assert ds.target_names == tuple(str(k) for k in range(12))  # not '0', '1', '10', '11', '2', ...
    assert [ds.target_names[c] for c in ds.y[:12]] == [str(k) for k in range(12)]


def test_a_continuous_label_read_as_classes_is_refused_with_the_count_and_a_hint_to_use_regression():
    text = "a,price\n" + "\n".join(f"{i},{i * 0.37 + 0.01:.3f}" for i in range(300))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(DatasetError, match="300 distinct values in 300 rows.*choose regression"):
            load_csv(text, label_column="price", task="classification")


@pytest.mark.parametrize(
    "text,label,match",
    [
        ("", "label", "empty"),
        ("a,b,label\n", "label", "no data rows"),
        ("a,b,label\n1,,x\n3,4,y\n", "label", "missing values in column\\(s\\) 'b' \\(1 of 2 rows\\); remove"),
        ("a,b,label\n1,z,x\n3,4,y\n", "label",
         "must be numeric; these are not: 'b'\\. 'b' holds numbers, but 1 of its 2 cells is not one \\(line 2 of the "
         "file\\): correct or remove it\\. To leave a column out: drop= \\(--drop on the command line"),
        ("a,b,label\n1,z,x\n3,w,y\n", "label", "'b' is text with 2 categories\\. Declare the values 'b' can hold as "
                                             "categories \\(categories= in load_csv, --categories on the command "
                                             "line, 'Declared categories' on the pages\\), e\\.g\\. "
                                             "b=VALUE\\|VALUE\\|VALUE, listed from what the column means, never "
                                             "read from the rows"),
        ("a,b,label\n1,$1250,x\n3,$980.5,y\n", "label",  # not told to encode a currency as categories
         "these are not: 'b'\\. 'b' holds numbers written with a currency sign, a percent sign or a unit \\(as in "
         "\\$1250, 12% or 70kg\\): write the bare numbers .* To leave a column out"),
        ("a,b,label\n1,12%,x\n3,7.5%,y\n", "label", "'b' holds numbers written with a currency sign, a percent sign"),
        ("a,b,label\n1,3A,x\n3,4B,y\n", "label", "'b' is text with 2 categories\\. Declare"),  # a code, no unit
        ("a,b,label\n1,2,x\n3,4,x\n", "label", "single class 'x'; it needs"),  # plain, not np.str_('x')
        ("a,b,label\n1,2,x\n3,4,y\n", "target", "is not a column"),
        ("label\nx\ny\n", "label", "at least one feature"),
        ("label,x,label\n1,2,3\n4,5,6\n", "label", "names the column\\(s\\) 'label' more than once"),
        ("a,label\n1,inf\n2,3.5\n3,1.25\n", "label", "regression label column 'label' holds infinite"),
        ("a,label\n1e308,x\n-1e308,y\n", "label", "column\\(s\\) 'a' hold values beyond 1e\\+15"),
        ("a,b,label\n1,-inf,x\n3,4,y\n", "label", "infinite values in feature column\\(s\\) 'b'; remove"),
    ],
)
def test_csv_loader_bad_inputs(text, label, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(DatasetError, match=match):
            load_csv(text.encode(), label_column=label)


@pytest.mark.parametrize(
    "text",
    ["a;b;label\n1;2;x\n3;4;y\n", "a\tb\tlabel\n1\t2\tx\n3\t4\ty\n", "a;b;label\n1,0;2,0;x\n3,0;4,0;y\n",
     "\ufeffa,b,label\n1,2,x\n3,4,y\n", "a, b, label\n1, 2, x\n3, 4, y\n", "a; b; label\n1,0; 2,0; x\n3,0; 4,0; y\n"],
    ids=["semicolons", "tabs", "semicolons-with-decimal-commas", "byte-order-mark", "a-space-after-each-comma",
         "a-space-after-each-semicolon-and-decimal-commas"],
)
def test_csv_in_other_spreadsheet_dialects_reads_the_same_columns(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        ds = load_csv(text.encode(), label_column="label")
    assert ds.feature_names == ("a", "b")
    np.testing.assert_allclose(ds.X, [[1.0, 2.0], [3.0, 4.0]])
    assert ds.target_names == ("x", "y")


def test_transforms_use_declared_bounds_and_warn_when_clipping():
    with pytest.warns(DPCoreWarning, match="outside the declared bounds"):
        out = scale_to_unit_interval(np.array([[0.0], [5.0], [20.0]]), (0.0, 10.0))
    np.testing.assert_allclose(out.ravel(), [0.0, 0.5, 1.0])
    rows = clip_rows_to_norm(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), [1.0, 0.5])


def test_binary_upload_says_it_is_not_text():
    blob = b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00\xff\xfe\x8f\x92" * 20  # looks like an .xlsx (zip)
    with pytest.raises(DatasetError, match=r"not UTF-8 text .*save it as CSV \(UTF-8\)"):
        read_csv_columns(blob)


def _warned(text: str, csv: str, **kw) -> list[str]:
    """The warnings containing ``text`` that loading ``csv`` raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_csv(csv, **kw)
    return [str(w.message) for w in caught if text in str(w.message)]


def test_a_column_holding_one_value_on_every_row_is_named_with_what_to_do_and_not_its_value():
    # a one-country table's country code was read as a feature without a word: the owner never learnt it was useless
    rows = "\n".join(f"{20 + i * 7 % 50},44,{i * 37 % 101},{i % 2}" for i in range(40))
    said = _warned("same value on every row", "age,country_code,score,y\n" + rows, label_column="y",
                   bounds="*=0:200")
    assert len(said) == 1 and said[0].startswith("'country_code' holds the same value on every row")
    assert "Columns to leave out" in said[0] and "--drop" in said[0] and "44" not in said[0]
    rows = "\n".join(f"{20 + i * 7 % 50},{i % 3},{i % 2}" for i in range(40))
    assert not _warned("same value on every row", "age,visits,y\n" + rows, label_column="y", bounds="*=0:200")


def test_a_column_that_numbers_the_rows_is_warned_about_and_an_ordinary_one_is_not():
    rows = "\n".join(f"{100001 + i},{20 + i * 7 % 50},{i * 37 % 101},{i % 2}" for i in range(40))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_csv("patient_id,age,score,y\n" + rows, label_column="y", bounds="*=0:200000")
    said = [str(w.message) for w in caught if "row identifier" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("'patient_id' looks like a row identifier")
    rows = "\n".join(f"{i * 13 % 97},{1900 + i},{i % 2}" for i in range(40))  # 'paid' ends in "id"; years count up
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_csv("paid,year,y\n" + rows, label_column="y", bounds="paid=0:100, year=1800:2100")
    assert not [w for w in caught if "row identifier" in str(w.message)]
    # 'score' holds a different whole number on every row too, but neither its name nor its order says id


def test_a_latin_1_csv_is_told_to_be_saved_as_utf_8_not_asked_whether_it_is_a_zip():
    text = "ville,température,label\nSète,21.5,1\nBrügge,12.0,0\n".encode("latin-1")
    with pytest.raises(DatasetError, match=r"text in another encoding than UTF-8 \(Latin-1") as err:
        read_csv_columns(text)
    assert "zip" not in str(err.value)
    with pytest.raises(DatasetError, match=r"UTF-16 text"):
        read_csv_columns("a,label\n1,x\n".encode("utf-16"))


def test_a_tiny_upload_is_warned_that_its_test_accuracy_says_little():
    with pytest.warns(DPCoreWarning, match="only 8 rows.*about 2.*steps of 1/2"):
        load_csv("a,label\n" + "\n".join(f"{i},{'xy'[i % 2]}" for i in range(8)), label_column="label")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        load_csv("a,label\n" + "\n".join(f"{i % 50},{'xy'[i % 2]}" for i in range(200)), label_column="label")


BOUNDED = "age,hours,income\n25,40,1\n38,50,0\n52,45,1\n61,20,0\n"


def test_declared_bounds_are_the_datasets_bounds_and_nothing_is_said_to_leak():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        ds = load_csv(BOUNDED, label_column="income", bounds="age=17:90, hours=0:99", categories="income=0|1")
    assert ds.bounds[0].tolist() == [17.0, 0.0] and ds.bounds[1].tolist() == [90.0, 99.0]
    assert ds.inferred_bounds == () and ds.inferred_classes == ()


def test_declared_bounds_do_not_move_with_one_private_rows_extreme_value_and_inferred_ones_do():
    neighbour = BOUNDED.replace("61,20,0", "89,20,0")  # one row's age changed
    for text in (BOUNDED, neighbour):
        assert load_csv(text, label_column="income", bounds="*=0:100").bounds[1].tolist() == [100.0, 100.0]
    with pytest.warns(PrivacyLeakWarning):
        a = load_csv(BOUNDED, label_column="income").bounds[1]
    with pytest.warns(PrivacyLeakWarning):
        b = load_csv(neighbour, label_column="income").bounds[1]
    assert a[0] == 61.0 and b[0] == 89.0  # the inferred range reveals that row's value


def test_only_the_columns_left_undeclared_are_named_in_the_leak_warning():
    with pytest.warns(PrivacyLeakWarning, match="bounds of 'hours' were read from the data") as caught:
        load_csv(BOUNDED, label_column="income", bounds={"age": (17, 90)})
    assert "'age'" not in str(caught[0].message)


def test_values_outside_the_declared_bounds_are_clipped_with_a_warning():
    with pytest.warns(DPCoreWarning, match="2 value\\(s\\) lay outside the declared bounds and were clipped to "
                                           "them: 'age' \\(2\\); widen"):
        ds = load_csv(BOUNDED, label_column="income", bounds="age=30:60, hours=0:99")
    assert ds.X[:, 0].tolist() == [30.0, 38.0, 52.0, 60.0]


def test_a_regression_labels_declared_range_is_its_label_range_and_clips_it():
    text = "a,price\n" + "\n".join(f"{i},{i * 1.5:.1f}" for i in range(30))
    with pytest.warns(DPCoreWarning, match="of the label 'price' lay outside"):
        ds = load_csv(text, label_column="price", task="regression", bounds="a=0:30, price=0:40")
    assert ds.label_range == (0.0, 40.0) and ds.y.max() == 40.0
    with pytest.warns(PrivacyLeakWarning, match="bounds of 'price' were read.*e.g. price=LOW:HIGH"):
        load_csv(text, label_column="price", task="regression", bounds="*=0:30")  # features declared, label not
    with pytest.warns(PrivacyLeakWarning, match=r"e.g. a=LOW:HIGH, and price=LOW:HIGH for the label, which \* does"):
        load_csv(text, label_column="price", task="regression")


@pytest.mark.parametrize("spec,match", [
    ("age=17-90", "cannot read 'age=17-90'"),
    ("age=a:b", "'a:b' is not two numbers"),
    ("age=90:17", "low end 90 is not below the high end 17"),
    ("age=1:2, age=3:4", "'age' is given twice"),
    ("weight=0:200", "column\\(s\\) 'weight' that the file does not have; its columns: age, hours, income"),
    ({"age": (0, float("inf"))}, "must be finite"),
])
def test_bad_declared_bounds_are_refused_naming_the_column(spec, match):
    with pytest.raises(DatasetError, match=match):
        load_csv(BOUNDED, label_column="income", bounds=spec)


def test_a_declared_label_range_makes_the_label_a_number_to_predict_and_classes_refuse_it():
    # the task is the declaration's, not a guess from the rows (whole numbers 0/1 would be guessed classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert load_csv(BOUNDED, label_column="income", bounds="income=0:1").task == "regression"
    with pytest.raises(DatasetError, match="label column 'income' holds classes"):
        load_csv(BOUNDED, label_column="income", task="classification", bounds="income=0:1")


def test_a_column_whose_name_holds_a_comma_is_declared_in_double_quotes():
    text = 'age,"weight, kg",y\n30,70,0\n40,80,1\n50,90,0\n60,100,1\n'
    with pytest.warns(PrivacyLeakWarning, match='e.g. "weight, kg"=LOW:HIGH'):
        load_csv(text, label_column="y", bounds="age=0:120")  # the hint quotes the name it asks for
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # every column declared: nothing read from the rows
        ds = load_csv(text, label_column="y", bounds='age=0:120, "weight, kg"=30:200', categories="y=0|1")
    assert not ds.inferred_bounds and list(ds.bounds[1]) == [120.0, 200.0]


def test_every_mistake_of_a_bounds_box_is_named_at_once():
    with pytest.raises(DatasetError) as err:
        load_csv(BOUNDED, label_column="income", bounds="age=90:17, hours=a:b\nweight 0:1")
    said = str(err.value)
    assert said.startswith("3 mistakes in the bounds:")
    # in the box's order
    assert "(1) bounds for 'age': the low end 90 is not below the high end 17" in said
    assert "(2) bounds for 'hours': 'a:b' is not two numbers" in said and "(3) cannot read 'weight 0:1'" in said


def test_a_declared_range_far_wider_than_its_values_is_warned_about_and_a_fitting_one_is_not():
    with pytest.warns(DPCoreWarning, match=r"'hours' \(0 to 3000 declared\)") as caught:
        load_csv(BOUNDED, label_column="income", bounds="age=17:90, hours=0:3000")
    assert not any("'age'" in str(w.message) for w in caught)
    # the hours' own spread (their largest less their smallest, two records' values) is not said: the pages show it
    said = " ".join(str(w.message) for w in caught if "wider than the values" in str(w.message))
    assert said and "across the file" not in said and not re.search(r"\b30\b", said)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_csv(BOUNDED, label_column="income", bounds="age=17:90, hours=0:99")
    assert not [w for w in caught if "wider than the values" in str(w.message)]  # ranges that fit: nothing to say


def _owner_table(extra: dict[str, list[str]], n: int = 40) -> bytes:
    """A CSV of ``n`` rows: two numeric features, the ``extra`` text columns and a label."""
    rows = ["a,b," + ",".join(extra) + ",label"]
    for i in range(n):
        cells = [f'"{v[i]}"' if "," in v[i] else v[i] for v in extra.values()]
        rows.append(f"{i % 7},{i % 5}," + ",".join(cells) + f",{'x' if i % 2 else 'y'}")
    return "\n".join(rows).encode()


@pytest.mark.parametrize("column, says", [
    ([f"{1000 + 37 * i:,}.5" for i in range(40)], "holds numbers written with a comma \\(a thousands separator"),
    ([f"{i},{i % 10}" for i in range(40)], "holds numbers written with a comma .* a decimal comma"),
    ([f"P{100000 + 37 * i}" for i in range(40)], "holds a different text on every row, like a record identifier.*"
                                                 "drop the column"),
    ([("Cardiology", "Oncology", "Neurology")[i % 3] for i in range(40)],
     "is text with 3 categories\\. Declare the values 'c' can hold as categories .*listed from what the "
     "column means.* Or drop it"),
    # notes that repeat now and then (not an identifier) were told to be encoded as categories
    ([f"back pain, seen on day {i % 25}" for i in range(40)],
     "holds free text \\(words, 25 different texts in 40 rows\\): no learner here reads text.*drop the "
     "column\\. To leave"),
], ids=["thousands-separator", "decimal-comma", "text-identifier", "categories", "free-text"])
def test_a_text_feature_column_is_refused_saying_what_it_holds_without_quoting_a_cell(column, says):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(DatasetError, match=f"these are not: 'c'\\. 'c' {says}") as info:
            load_csv(_owner_table({"c": column}), label_column="label")
    assert not any(cell in str(info.value) for cell in column)


def test_missing_cells_are_counted_per_column_and_an_empty_column_is_named_to_drop():
    with pytest.raises(DatasetError, match=r"missing values in column\(s\) 'b' \(1 of 2 rows\); remove or fill"):
        load_csv(b"a,b,label\n1,,x\n3,4,y\n", label_column="label")
    with pytest.raises(DatasetError, match=r"^column 'b' is empty in every row of the CSV: drop it\. To leave a "
                                           r"column out: drop= \(--drop on the command line"):
        load_csv(b"a,b,label\n1,,x\n3,,y\n", label_column="label")
    # left out, the columns' cells are never read: the empty one, and one whose text would be refused
    ds = load_csv(b"id,a,b,label\nP1,1,,x\nP2,3,,y\n", label_column="label", drop=["b", "id"], bounds="a=0:5")
    assert ds.feature_names == ("a",) and ds.X.ravel().tolist() == [1.0, 3.0]
    with pytest.raises(DatasetError, match=r"^drop names column\(s\) 'c' that the file does not have"):
        load_csv(b"a,b,label\n1,2,x\n3,4,y\n", label_column="label", drop="c")
    with pytest.raises(DatasetError, match=r"^drop names the label column 'label'"):
        load_csv(b"a,b,label\n1,2,x\n3,4,y\n", label_column="label", drop=["label"])


def test_a_file_with_one_row_per_class_is_refused_at_its_split_saying_each_class_needs_two():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = load_csv(b"a,b,label\n1,2,x\n3,4,y\n", label_column="label")
    with pytest.raises(DPValueError, match="every class of its label has a single row, and a class needs at least two"):
        train_test_split(ds, seed=0)


def test_a_quote_never_closed_is_named_by_its_row_in_plain_words():
    """pandas says "Error tokenizing data. C error: EOF inside string starting at row 4"; the owner reads which data
    row opened a quote that nothing closes, and what to do."""
    with pytest.raises(DatasetError, match=r"quoted value that starts on data row 4 is never closed.*close the quote"):
        load_csv('a,b,y\n1,2,0\n3,4,1\n5,6,0\n7,"8,1\n9,9,1\n', label_column="y", bounds="*=0:10")


def test_a_label_column_of_one_class_says_which_box_to_change_and_what_to_use_instead():
    # the message named the column and its one class, and stopped there: the pages showed it in the main area with
    # nothing to do about it (the label is chosen in the sidebar's "Label column", and may just be the wrong column)
    with pytest.raises(DatasetError, match="has a single class '1'; it needs at least two") as info:
        load_csv(b"age,score,label\n30,1.5,1\n40,2.5,1\n50,3.5,1\n60,4.5,1\n", label_column="label")
    said = str(info.value)
    assert "'Label column' on the pages" in said and "--label on the command line" in said
    assert "a file with rows of more than one class" in said
    # a DataFrame given to run_learner or as_dataset names its label by label=, which the message says beside
    # load_csv's own label_column= (it named load_csv's alone)
    from dpcore.datasets import as_dataset

    with pytest.raises(DatasetError, match=r"label= in run_learner and as_dataset, label_column= in load_csv"):
        as_dataset(pd.DataFrame({"age": [30, 40, 50], "label": ["x", "x", "x"]}), label="label", bounds="*=0:99")
