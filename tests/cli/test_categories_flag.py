"""``--categories 'ward=Cardiology|Oncology|Surgery'``: a column of text in the user's file, declared on the command
line, is one 0/1 feature per declared value, as ``load_csv(categories=...)`` reads it."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore.cli import main

WARDS = ("Cardiology", "Oncology", "Surgery")


@pytest.fixture
def wards_csv(tmp_path):
    rng = np.random.default_rng(3)
    ward = rng.choice(WARDS, 60)
    lines = ["age,ward,y"] + [f"{a},{w},{int(w == 'Oncology')}" for a, w in zip(rng.integers(20, 80, 60), ward)]
    path = tmp_path / "wards.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _last_json(capsys):
    captured = capsys.readouterr()
    return json.loads(captured.out.strip().splitlines()[-1]), captured.err


def test_train_on_a_file_with_a_declared_column_of_text_learns_from_it_and_leaks_no_bounds(wards_csv, capsys):
    argv = ["train", "--data", str(wards_csv), "--label", "y", "--algorithm", "logreg", "--seed", "0", "--json",
            "--bounds", "age=0:110"]
    assert main(argv) == 2  # undeclared, the text column is refused, telling how to declare it
    err = capsys.readouterr().err
    assert "--categories on the command line" in err and not any(w in err for w in WARDS)
    assert main([*argv, "--categories", "ward=Cardiology|Oncology|Surgery, y=0|1"]) == 0
    out, err = _last_json(capsys)
    assert out["accuracy"] == 1.0  # the label is ward == Oncology: learnt from the 0/1 columns
    assert "read from the data itself" not in err and "leaks" not in err
    assert main([*argv, "--categories", "ward=Cardiology|Surgery"]) == 0  # Oncology undeclared: all zeros, counted
    _, err = _last_json(capsys)
    assert "none of their column's declared categories: 'ward' (" in err and "Oncology" not in err


def test_the_labels_classes_read_from_the_file_are_said_to_leak_and_declared_ones_leak_nothing(wards_csv, capsys):
    argv = ["train", "--data", str(wards_csv), "--label", "y", "--algorithm", "erm-objective", "--seed", "0",
            "--bounds", "age=0:110"]
    assert main([*argv, "--categories", "ward=Cardiology|Oncology|Surgery"]) == 0
    captured = capsys.readouterr()
    assert "warning: the classes of the label 'y' were read from the data itself" in captured.err
    assert "e.g. y=CLASS|CLASS|CLASS" in captured.err
    assert captured.out.strip().splitlines()[-1].startswith("guarantee: none: the epsilon above holds only once")
    # declared (2 a class no row holds), nothing leaks
    assert main([*argv, "--categories", "ward=Cardiology|Oncology|Surgery, y=0|1|2", "--json"]) == 0
    _, err = _last_json(capsys)
    assert "read from the data itself" not in err and "guarantee: none" not in err
    assert main([*argv, "--categories", "ward=Cardiology|Oncology|Surgery, y=0|2"]) == 2  # no row may be none
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [next(e for e in err if e.startswith("error: "))]
    assert "the label 'y' holds none of its declared classes in " in err[0]


def test_cluster_takes_the_declaration_on_a_file_without_a_label(wards_csv, capsys):
    assert main(["cluster", "--data", str(wards_csv), "--drop", "y", "--bounds", "age=0:110", "--categories",
                 "ward=Cardiology|Oncology|Surgery", "--algorithm", "dplloyd", "--seed", "0", "--json"]) == 0
    assert "read from the data itself" not in capsys.readouterr().err


@pytest.mark.parametrize("argv, words", [
    (["--dataset", "iris", "--categories", "ward=a|b"], "--categories, --class-shares and --drop go with --data"),
    (["--data", "{csv}", "--label", "y", "--categories", "wards=a|b"], "--categories name column(s) 'wards' that"),
    (["--data", "{csv}", "--label", "y", "--categories", "ward=Oncology|Oncology"],
     "--categories for 'ward': the value 'Oncology' is listed twice"),
    (["--data", "{csv}", "--label", "y", "--task", "regression", "--categories", "y=0|1"],
     "--categories name the label column 'y', which is a regression label here"),
    (["--data", "{csv}", "--label", "y", "--categories", "ward=A, ward=B"], "--categories: the column 'ward' is given "
                                                                             "twice"),
    (["--data", "{csv}", "--label", "y", "--categories", "ward, sex=F|F"], "2 mistakes in --categories: (1) cannot "
                                                                            "read 'ward'"),
    (["--data", "{csv}", "--label", "y", "--categories", "ward=Oncology|Surgery", "--drop", "ward"],
     "'ward' is both left out (drop=, --drop on the command line, 'Columns to leave out' on the pages) and "
     "declared as categories"),
])
def test_a_bad_declaration_is_a_one_line_error_naming_the_flag(wards_csv, capsys, argv, words):
    argv = [a.format(csv=wards_csv) for a in argv]
    assert main(["train", "--algorithm", "logreg", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and words in err[0]


@pytest.mark.parametrize("command", ["train", "sweep", "audit", "report", "cluster"])
def test_every_command_reading_a_file_offers_the_flag_with_an_example(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "--categories SPEC" in said and "'ward=Cardiology|Oncology|Surgery,sex=F|M'" in said


def test_the_task_s_help_says_how_the_task_is_guessed_as_the_loader_guesses_it(capsys):
    """``--task``'s help: classes when --categories declares them (a label of 0.5 and 1.5, which alone is a
    number to predict), when the label is text (however many values), true/false, or whole numbers with at most
    20 values; regression otherwise. It said "integer or text labels with at most 20 values", silent on the
    declaration, and ``--data`` said "numeric feature columns" beside a flag declaring text ones."""
    import warnings

    import pandas as pd

    from dpcore.datasets import load_csv

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert ("(default: classes when --categories declares them, a number to predict (regression) when --bounds "
            "declares its range; otherwise guessed: classes when the label is text, true/false, or whole numbers with "
            "at most 20 values; otherwise a number to predict, regression)") in said
    assert "numeric feature columns (a column of text or codes declared in --categories)" in said
    x = np.linspace(0, 1, 60)

    def task(y, **kw):
        with warnings.catch_warnings():  # the label's range or classes read from the rows: said, not checked here
            warnings.simplefilter("ignore")
            return load_csv(pd.DataFrame({"x": x, "y": y}), label_column="y", bounds="x=0:1", **kw).task

    halves = np.where(x > 0.5, 1.5, 0.5)
    assert task(halves) == "regression" and task(halves, categories="y=0.5|1.5") == "classification"
    assert task([f"c{i % 25}" for i in range(60)]) == "classification"  # text: however many values
    assert task(x > 0.5) == "classification" and task(np.arange(60) % 20) == "classification"
    assert task(np.arange(60) % 21) == "regression"
    # a declared range says the label is a number to predict, whatever its rows hold: 20 whole values or 21 (the
    # guess, which reads the rows, would have made the first classes, and the bounds then refused them)
    for values in (np.arange(60) % 20, np.arange(60) % 21):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            declared = load_csv(pd.DataFrame({"x": x, "y": values}), label_column="y", bounds="x=0:1, y=0:20")
        assert declared.task == "regression" and declared.label_range == (0.0, 20.0)
        assert not declared.inferred_bounds and not declared.inferred_classes
