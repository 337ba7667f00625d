"""The bounds table: filled from the bounds box, written back to it, and a public row without its ends refused."""
from __future__ import annotations

import types

import pandas as pd

from dpcore.datasets import load_csv
from dpcore.ui import bounds as ui_bounds
from dpcore.ui.bounds import FROM_DATA, PUBLIC, table_rows, table_to_text


def test_the_table_is_filled_from_the_box_and_a_star_rule_fills_the_columns_it_covers():
    t = table_rows(["age", "income", "visits"], "age=18:100\n*=0:50")
    assert t.to_dict("list") == {"column": ["age", "income", "visits"], "lower": [18.0, 0.0, 0.0],
                                 "upper": [100.0, 50.0, 50.0], "source": [PUBLIC, PUBLIC, PUBLIC]}
    assert set(table_rows(["age"], "").source) == {FROM_DATA}


def test_the_text_written_back_declares_exactly_the_public_rows_and_the_loader_reads_it():
    table = pd.DataFrame({"column": ["age", "weight, kg", "visits"], "lower": [18, 30.25, 1.0],
                          "upper": [100, 1234567.5, 9.0], "source": [PUBLIC, PUBLIC, FROM_DATA]})
    text, missing = table_to_text(table)
    assert missing == []
    csv = 'age,"weight, kg",visits,y\n20,70,3,0\n60,80,4,1\n40,90,5,0\n30,75,2,1\n'
    ds = load_csv(csv, label_column="y", bounds=text)
    assert ds.inferred_bounds == ("visits",)  # the row read from the data is the one flagged
    assert ds.bounds[1][1] == 1234567.5  # no precision lost on the way


def test_a_public_row_without_both_ends_is_refused_and_the_box_left_alone(monkeypatch):
    state = {"k": "age=18:100"}
    monkeypatch.setattr(ui_bounds, "st", types.SimpleNamespace(session_state=state))
    table = pd.DataFrame({"column": ["age"], "lower": [18.0], "upper": [None], "source": [PUBLIC]})
    ui_bounds._apply("k", table, "k.problem")
    assert state["k"] == "age=18:100" and "'age' is marked public but has no upper end" in state["k.problem"]
    table.loc[0, "upper"] = 99.0
    ui_bounds._apply("k", table, "k.problem")
    assert state["k"] == "age=18:99" and "k.problem" not in state
