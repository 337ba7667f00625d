"""Columns of categories declared by the data's owner (``categories=``): one 0/1 feature per declared value, bounded
0:1 by the declaration, never read from the rows; every misuse refused by name; new rows encoded the same way."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore.datasets import as_dataset, load_csv, load_csv_unlabelled
from dpcore.datasets.csv_upload import categories_text, encode_categories, parse_categories
from dpcore.exceptions import (
    BoundsError,
    CategoriesError,
    DatasetError,
    DPCoreWarning,
    DPValueError,
    PrivacyLeakWarning,
)

WARDS = ["Cardiology", "Oncology", "Surgery"]
#: Six rows: a ward (text), a ward code (numbers), an age and a label.
TABLE = ("age,ward,code,y\n"
         "30,Oncology,1,0\n40,Cardiology,3,1\n50,Surgery,2,1\n60,Oncology,1,0\n70, Surgery ,3,1\n80,Cardiology,2,0\n")


def _quiet_load(text=TABLE, *, categories=None, **kw):
    """The table read with the label's classes declared (y=0|1, unless ``categories`` declares them), so nothing is
    read from the rows but what a test leaves undeclared: a PrivacyLeakWarning is an error."""
    declared = parse_categories(categories)
    declared.setdefault("y", ("0", "1"))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*has only .* rows", category=DPCoreWarning)
        warnings.simplefilter("error", PrivacyLeakWarning)
        return load_csv(text, label_column="y", categories=declared, **kw)


def test_each_declared_value_is_one_0_1_column_in_the_place_of_its_column():
    ds = _quiet_load(bounds="age=0:110", categories="ward=Cardiology|Oncology|Surgery, code=1|2|3|4")
    assert ds.feature_names == ("age", "ward=Cardiology", "ward=Oncology", "ward=Surgery",
                                "code=1", "code=2", "code=3", "code=4")
    assert ds.X.tolist() == [
        [30, 0, 1, 0, 1, 0, 0, 0],
        [40, 1, 0, 0, 0, 0, 1, 0],
        [50, 0, 0, 1, 0, 1, 0, 0],
        [60, 0, 1, 0, 1, 0, 0, 0],
        [70, 0, 0, 1, 0, 0, 1, 0],  # " Surgery ": the spaces around a cell are not part of its value
        [80, 1, 0, 0, 0, 1, 0, 0],
    ]
    assert ds.categories == (("ward", tuple(WARDS)), ("code", ("1", "2", "3", "4")))
    # the order is the declaration's, not the rows' nor the alphabet's
    ds = _quiet_load(bounds="age=0:110", drop="code", categories={"ward": ["Surgery", "Cardiology", "Oncology"]})
    assert ds.feature_names == ("age", "ward=Surgery", "ward=Cardiology", "ward=Oncology")
    assert ds.X[:, 1].tolist() == [0, 0, 1, 0, 1, 0]


def test_the_0_1_columns_are_bounded_0_to_1_by_the_declaration_so_nothing_leaks():
    # PrivacyLeakWarning is an error in _quiet_load: none is raised for the 0/1 columns
    ds = _quiet_load(bounds="age=0:110, *=0:10", categories={"ward": WARDS, "code": [1, 2, 3]})
    lo, hi = ds.bounds
    assert lo.tolist() == [0] * 7 and hi.tolist() == [110] + [1] * 6  # a * rule does not widen them
    assert ds.inferred_bounds == ()
    # a pair of bounds for every column leaves them 0:1 too
    ds = _quiet_load(bounds=(0, 200), categories={"ward": WARDS}, drop="code")
    assert ds.bounds[1].tolist() == [200, 1, 1, 1]
    # an undeclared numeric column still leaks, and only it is named
    with pytest.warns(PrivacyLeakWarning, match=r"the bounds of 'age' were read from the data"):
        ds = load_csv(TABLE, label_column="y", categories={"ward": WARDS}, drop="code")
    assert ds.inferred_bounds == ("age",)


def test_a_cell_outside_the_declared_values_is_all_zeros_and_counted_without_its_value():
    with pytest.warns(DPCoreWarning, match=r"hold none of their column's declared categories: 'ward' \(2 of 6 cells\); "
                                           r"each is encoded as 0 in all the 0/1 columns of its column") as caught:
        ds = _quiet_load(bounds="age=0:110", drop="code", categories="ward=Cardiology|Oncology")
    said = " ".join(str(w.message) for w in caught)
    assert "Surgery" not in said
    assert ds.X[:, 1:].tolist() == [[0, 1], [1, 0], [0, 0], [0, 1], [0, 0], [1, 0]]


def test_values_declared_in_another_case_match_no_cell_and_the_warning_says_matching_is_exact_case_included():
    with pytest.warns(DPCoreWarning, match=r"'ward' \(6 of 6 cells\); .*a cell matches a declared value exactly, case "
                                           r"and spelling included \(only the spaces around it are dropped\)$"):
        ds = _quiet_load(bounds="age=0:110", drop="code", categories=" ward = cardiology | oncology | surgery ")
    assert ds.X[:, 1:].sum() == 0


@pytest.mark.parametrize("declared", ["flag=true|false", "flag=True|False", "flag=FALSE|TRUE"])
def test_a_column_of_true_and_false_matches_its_declared_values_in_any_case(declared):
    # pandas reads a file's true/false as truth values: "true" declared as the file writes it matched no cell
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        ds = _quiet_load("flag,y\ntrue,0\nfalse,1\ntrue,0\nfalse,1\n", categories=declared)
    expected = [[1, 0], [0, 1], [1, 0], [0, 1]]
    assert ds.X.tolist() == (expected if "FALSE|TRUE" not in declared else [r[::-1] for r in expected])
    with pytest.raises(CategoriesError, match=r"^categories for 'flag': 'yes' is not true or false, but the column "
                                              r"holds truth values .*declare flag=true\|false$"):
        _quiet_load("flag,y\ntrue,0\nfalse,1\n", categories="flag=yes|no")


def test_numbers_declared_as_categories_match_their_cells_by_number():
    ds = _quiet_load("code,y\n1,0\n2.0,1\n3,0\n", categories={"code": [1, 2, 3]})
    assert ds.X.tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    # the same codes written as text (new rows from a form) encode as the file's numbers do
    encoded, unknown = encode_categories(pd.DataFrame({"code": ["1.0", " 02", "3", "x"]}), "code=1|2|3")
    assert encoded.to_numpy().tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]] and unknown == {"code": 1}
    encoded, unknown = encode_categories(pd.DataFrame({"code": [1.0, 5.0]}), "code=1|2")
    assert encoded.to_numpy().tolist() == [[1, 0], [0, 0]] and unknown == {"code": 1}


@pytest.mark.parametrize("kw, error, says", [
    (dict(categories="wards=Cardiology|Oncology"), CategoriesError,
     r"^categories name column\(s\) 'wards' that the file does not have; its columns: age, ward, code, y$"),
    (dict(categories={"ward": []}), CategoriesError,
     r"^categories for 'ward': no value is declared; list the values the column can hold \(ward=VALUE\|VALUE\)"),
    (dict(categories="ward="), CategoriesError, r"^categories for 'ward': no value is declared"),
    (dict(categories="ward=Oncology|Surgery|Oncology"), CategoriesError,
     r"^categories for 'ward': the value 'Oncology' is listed twice; list each value once$"),
    (dict(categories="ward=Oncology||Surgery"), CategoriesError, r"^categories for 'ward': an empty value"),
    (dict(categories="code=1|1.0|2"), CategoriesError,
     r"^categories for 'code': '1', '1.0' are the same number; list each value once$"),
    (dict(categories="code=one|two"), CategoriesError,
     r"^categories for 'code': 'one' is not a number, but the column holds numbers; declare the numbers it can "
     r"hold \(code=1\|2\|3\)$"),
    (dict(categories="ward=Cardiology|Oncology|Surgery", drop=["ward"]), CategoriesError,
     r"^'ward' is both left out \(drop=, --drop on the command line, 'Columns to leave out' on the pages\) and "
     r"declared as categories: .* remove it from one of the two$"),
    (dict(categories="y=0|1", task="regression"), CategoriesError,
     r"^categories name the label column 'y', which is a regression label here: declared categories of the label are "
     r"its classes; declare a regression label's range in the bounds instead, e.g. y=LOW:HIGH \(bounds= in load_csv, "
     r"--bounds on the command line, 'Declared bounds' on the pages\), or make it classification \(task= in load_csv, "
     r"--task on the command line, 'Task' on the pages\)$"),
    (dict(categories="ward=Cardiology|Oncology|Surgery", bounds="ward=0:1"), BoundsError,
     r"^bounds name 'ward', declared as categories: each category is one 0/1 column, bounded 0:1 by the "
     r"declaration; remove those bounds$"),
    (dict(categories="ward=Cardiology|Oncology|Surgery", bounds="warden=0:1"), BoundsError,
     r"its columns: age, ward, y$"),  # the file's columns (those not left out), not the 0/1 columns
    (dict(categories={"ward": "Cardiology"}), CategoriesError,
     r"^categories for 'ward' must be a list of the values the column can hold, e.g. \{'ward': \['A', 'B'\]\}"),
    (dict(categories=["ward"]), CategoriesError, r"^categories must be a mapping \{column: \[value, \.\.\.\]\} or "
                                                 r"text"),
], ids=["unknown-column", "empty-list", "empty-text", "duplicate", "empty-value", "same-number", "text-for-numbers",
        "dropped-and-declared", "label", "bounds-of-declared", "bounds-unknown", "text-not-list", "not-a-mapping"])
def test_a_declaration_that_cannot_be_used_is_refused_saying_which_parameter_and_what_to_do(kw, error, says):
    kw.setdefault("drop", [] if "code" in str(kw.get("categories")) else ["code"])
    with pytest.raises(error, match=says):
        _quiet_load(**kw)
    assert issubclass(error, DatasetError)


def test_several_mistakes_in_the_text_are_said_at_once():
    with pytest.raises(CategoriesError, match=r"^2 mistakes in the categories: \(1\) cannot read 'ward'.*\(2\) "
                                              r"the column 'sex' is given twice\.$"):
        parse_categories("ward, sex=F|M, sex=F")


def test_an_undeclared_text_column_is_refused_telling_how_to_declare_it_without_quoting_a_cell():
    with pytest.raises(DatasetError) as info:
        _quiet_load(bounds="age=0:110", drop="code")
    said = str(info.value)
    assert "categories. Declare the values 'ward' can hold as categories (categories= in load_csv, --categories on " \
           "the command line, 'Declared categories' on the pages), e.g. ward=VALUE|VALUE|VALUE" in said
    assert not any(w in said for w in WARDS)


@pytest.mark.parametrize("text", ["ward=Cardiology|Oncology|Surgery, sex=F|M",
                                  'ward = Cardiology | Oncology ;\n"weight, kg"=1|2|3.5\n',
                                  "age group=0-17|18-64|65+, stage=I|II|III|IV"])
def test_the_text_form_reads_back_what_it_writes(text):
    declared = parse_categories(text)
    assert parse_categories(categories_text(declared)) == declared
    assert parse_categories(declared) == declared  # the mapping form of the same declaration
    assert parse_categories(" \n ") == {} and parse_categories(None) == {}


def test_the_text_form_reads_quoted_names_and_drops_spaces_around_values():
    assert parse_categories('"weight, kg"=1|2, ward= Cardiology | Oncology ') == {
        "weight, kg": ("1", "2"), "ward": ("Cardiology", "Oncology")}
    assert parse_categories({"code": [1, 2.0, 2.5], "flag": [True, False]}) == {
        "code": ("1", "2", "2.5"), "flag": ("True", "False")}
    with pytest.raises(CategoriesError, match=r"holds a double quote or a new line and cannot be written as text"):
        categories_text({"ward": ['A "B"']})


def test_a_value_holding_a_comma_is_declared_in_double_quotes_and_written_back_so():
    declared = parse_categories('ward=Cardiology|"Oncology, adult"|" Surgery; day | night ", sex=F|M')
    assert declared == {"ward": ("Cardiology", "Oncology, adult", "Surgery; day | night"), "sex": ("F", "M")}
    assert categories_text(declared) == 'ward=Cardiology|"Oncology, adult"|"Surgery; day | night"\nsex=F|M'
    assert parse_categories(categories_text(declared)) == declared
    ds = _quiet_load("age,ward,y\n30,\"Oncology, adult\",0\n40,Cardiology,1\n", bounds="age=0:110",
                     categories='ward=Cardiology|"Oncology, adult"')
    assert ds.X[:, 1:].tolist() == [[0, 1], [1, 0]]
    with pytest.raises(CategoriesError, match=r"the double quote in .* is not closed or is inside a value"):
        parse_categories('ward=A|x"B"')


@pytest.mark.parametrize("text, says", [
    ("ward=Cardiology,Oncology,Surgery, sex=F|M",
     r"^categories for 'ward': 'Oncology', 'Surgery' come after a comma with no COLUMN= before them: separate the "
     r"values of one column with \|, not commas \(ward=Cardiology\|Oncology\|Surgery\); put a value that holds a "
     r"comma in double quotes"),
    ("ward=Cardiology|Oncology, adult|Surgery",
     r"^categories for 'ward': 'adult\|Surgery' comes after a comma .* put a value that holds a comma in double "
     r"quotes \(\"Oncology, adult\"\)$"),
])
def test_values_of_one_column_separated_by_commas_are_said_once_with_the_column_they_follow(text, says):
    with pytest.raises(CategoriesError, match=says):
        parse_categories(text)


def test_a_constant_declared_column_is_warned_of_by_its_name_and_an_absent_value_is_not_said():
    rows = "a,ward,y\n" + "".join(f"{i},Oncology,{i % 2}\n" for i in range(6))
    with pytest.warns(DPCoreWarning, match=r"^'ward' holds the same value on every row") as caught:
        _quiet_load(rows, bounds="a=0:10", categories="ward=Cardiology|Oncology|Surgery")
    said = " ".join(str(w.message) for w in caught)
    assert "=" not in said.split("leave it out")[0] and not any(w in said for w in WARDS)
    # two wards in the rows, one declared ward in none: nothing is said of the absent one
    rows = "a,ward,y\n" + "".join(f"{i},{WARDS[i % 2]},{i % 2}\n" for i in range(6))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _quiet_load(rows, bounds="a=0:10", categories="ward=Cardiology|Oncology|Surgery")
    assert not any("Surgery" in str(w.message) or "same value" in str(w.message) for w in caught)


def test_a_table_without_a_label_and_a_dataframe_take_the_same_declaration():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        ds = load_csv_unlabelled(TABLE, drop=["y", "code"], bounds="age=0:110", categories={"ward": WARDS})
    assert ds.feature_names == ("age", "ward=Cardiology", "ward=Oncology", "ward=Surgery")
    assert ds.categories == (("ward", tuple(WARDS)),) and ds.bounds[1].tolist() == [110, 1, 1, 1]
    frame = pd.DataFrame({"age": [30, 40, 50, 60], "ward": ["Oncology", "Surgery", "Oncology", "Cardiology"],
                          "y": [0, 1, 0, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        ds = as_dataset(frame, "y", bounds="age=0:110", categories="ward=Cardiology|Oncology|Surgery")
    assert ds.X[:, 1:].tolist() == [[0, 1, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]]
    with pytest.raises(TypeError, match="categories= describe your own data"):
        as_dataset("iris", categories={"ward": WARDS})


def test_a_released_model_encodes_new_rows_by_the_declared_categories():
    from dpcore.learners import run_learner

    rng = np.random.default_rng(0)
    ward = rng.choice(WARDS, 60)
    frame = pd.DataFrame({"age": rng.integers(20, 80, 60), "ward": ward, "y": (ward == "Oncology").astype(int)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        result = run_learner("logreg", frame, label="y", bounds="age=0:110", categories={"ward": WARDS})
    model = result.model
    assert model.categories == (("ward", tuple(WARDS)),)
    new = pd.DataFrame({"ward": ["Oncology", "Surgery", "Cardiology"], "age": [30, 40, 50]})
    # the raw column, encoded by the declaration, answers as the 0/1 columns given directly do
    encoded = pd.DataFrame([[30, 0, 1, 0], [40, 0, 0, 1], [50, 1, 0, 0]], columns=list(result.model.feature_names))
    assert model.predict(new).tolist() == model.predict(encoded).tolist() == [1, 0, 0]
    with pytest.warns(DPCoreWarning, match=r"some cells of the new rows hold none of their column's declared "
                                           r"categories: 'ward' \(1 of 1 cells\)") as caught:
        model.predict(pd.DataFrame({"age": [30], "ward": ["Neurology"]}))
    assert "Neurology" not in str(caught[0].message)
    with pytest.raises(DatasetError, match=r"^'ward' has missing values \(1 of 2 cells\)"):
        model.predict(pd.DataFrame({"age": [30, 40], "ward": ["Oncology", None]}))
    # new rows without the declared column, or as an array holding text, are refused by the column's name
    with pytest.raises(DPValueError, match=r"^X lacks the feature column\(s\) 'ward' the model was trained on "
                                           r"\(declared categories: give 'ward' as the file held it"):
        model.predict(pd.DataFrame({"age": [30]}))
    for rows in ([[30, "Oncology"]], [{"age": 30, "ward": "Oncology"}]):
        with pytest.raises(DPValueError, match=r"^X holds values that are not numbers: pass the new rows as a pandas "
                                               r"DataFrame .*declared categories \('ward'\) hold their values as "
                                               r"text$"):
            model.predict(rows)
