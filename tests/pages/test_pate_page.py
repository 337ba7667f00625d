"""The PATE page runs a small configuration, shows its metrics, and reacts to the teacher count."""
from __future__ import annotations

import pathlib

from streamlit.testing.v1 import AppTest

PAGE = str(pathlib.Path(__file__).resolve().parents[2] / "views/7_PATE.py")


def _metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def _submit(at):
    next(b for b in at.button if b.label == "Run PATE").click()
    return at.run()


def test_pate_page_runs_and_reacts():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    assert not at.error
    labels = {m.label for m in at.metric}
    assert {"ε spent (data-independent)", "Student accuracy", "Mean teacher accuracy", "Noisy-label accuracy"} <= labels
    assert float(_metric(at, "ε spent (data-independent)")) <= 10.0 + 1e-9
    split = at.dataframe[0].value
    assert list(split.part) == ["private (teachers)", "public (student)", "test"]
    votes = at.dataframe[1].value  # the numbers behind the vote histogram of the chosen query
    assert votes.loc[votes.winner == "✔", "noisy"].item() == votes.noisy.max()
    before = _metric(at, "Mean teacher accuracy")

    at.number_input(key="pate.teachers").set_value(5)
    at.number_input(key="pate.queries").set_value(40)
    _submit(at)
    assert not at.exception
    assert _metric(at, "Mean teacher accuracy") != before  # fewer teachers, more data each
    assert _metric(at, "Queries answered") == "40"


def test_pate_page_bad_input_is_an_error_not_a_traceback():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.number_input(key="pate.queries").set_value(5000)  # more than the public pool
    _submit(at)
    assert not at.exception
    assert any("queries=5000" in e.value for e in at.error)


def test_pate_page_data_dependent_epsilon_is_labelled_and_smaller():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.checkbox(key="pate.dd").check()
    _submit(at)
    assert not at.exception
    dd = float(_metric(at, "ε DATA-DEPENDENT"))
    assert dd <= float(_metric(at, "ε spent (data-independent)")) + 1e-9
    assert "epsilon_data_dependent" in at.dataframe[2].value.columns
