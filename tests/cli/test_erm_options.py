"""DP-ERM options on the command line: --model/--kernel say what they accept, bad values exit 2 with a hint."""
from __future__ import annotations

import json

import pytest

from dpcore.cli import build_parser, main

BC = ["train", "--dataset", "breast_cancer", "--epsilon", "1", "--json"]


def _train_help() -> dict[str, str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return {a.dest: a.help for a in sub.choices["train"]._actions}


def _accuracy(capsys, *args: str) -> float:
    assert main([*BC, *args]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out.splitlines()[-1])["accuracy"]


def _error(capsys, *args: str) -> str:
    assert main(list(args)) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0]


def test_help_names_the_values_erm_accepts():
    helps = _train_help()
    assert "erm-output, erm-objective, logreg: logreg (logistic regression) or svm" in helps["model"]
    assert "'logistic' for 'logreg', 'huber-svm' for 'svm'" in helps["model"]
    assert "none (linear) or rff" in helps["kernel"] and "'linear' for 'none', 'rbf' for 'rff'" in helps["kernel"]


@pytest.mark.parametrize("flag,alias,canonical", [("--model", "logistic", "logreg"), ("--model", "huber-svm", "svm"),
                                                  ("--kernel", "linear", "none"), ("--kernel", "rbf", "rff")])
def test_documented_aliases_run_the_same_model(capsys, flag, alias, canonical):
    args = ["--algorithm", "erm-objective", "--model", "svm"] if flag == "--kernel" else ["--algorithm", "erm-output"]
    assert _accuracy(capsys, *args, flag, alias) == _accuracy(capsys, *args, flag, canonical)


@pytest.mark.parametrize("flag,value,needle", [
    ("--model", "tree", "model must be 'logreg' or 'svm' (also accepted: 'logistic' for 'logreg', 'huber-svm' for "
                        "'svm'), got 'tree'"),
    ("--kernel", "poly", "kernel must be 'none' or 'rff' (also accepted: 'linear' for 'none', 'rbf' for 'rff'), "
                         "got 'poly'"),
])
def test_unknown_model_or_kernel_lists_the_valid_values(capsys, flag, value, needle):
    assert needle in _error(capsys, *BC, "--algorithm", "erm-objective", flag, value)


def test_a_tiny_train_fraction_keeps_a_row_of_each_class_and_trains(capsys):
    # seed 1 used to keep two breast-cancer rows of the same class, and the run died on "y has a single class"
    assert main([*BC, "--algorithm", "erm-objective", "--train-fraction", "0.001", "--seed", "1"]) == 0
    assert 0 <= json.loads(capsys.readouterr().out.strip().splitlines()[-1])["accuracy"] <= 1


@pytest.mark.parametrize("algorithm", ["erm-output", "erm-objective"])
@pytest.mark.parametrize("value,needle", [
    ("0", "--set huber_h=0: huber_h must be a number from 0 (excluded) to 1e+06, got 0"),
    ("-1", "huber_h must be a number from 0 (excluded) to 1e+06, got -1"),
    ("inf", "huber_h must be a number from 0 (excluded) to 1e+06, got inf")])
def test_huber_h_must_be_positive(capsys, algorithm, value, needle):
    err = _error(capsys, *BC, "--algorithm", algorithm, "--model", "svm", "--set", f"huber_h={value}")
    assert needle in err and "divide by zero" not in err


@pytest.mark.parametrize("item,needle", [
    ("regularization=0", "regularization must be a number from 0 (excluded) to 1e+06 or 'auto', got 0"),
    ("data_norm=-1", "data_norm must be a number from 0 (excluded) to 1e+06, got -1")])
def test_other_erm_numbers_are_checked(capsys, item, needle):
    assert needle in _error(capsys, *BC, "--algorithm", "erm-output", "--set", item)


def test_regularization_tune_points_to_set_tune(capsys):
    err = _error(capsys, *BC, "--algorithm", "erm-objective", "--set", "regularization=tune")
    assert err.startswith("error: --set regularization=tune: regularization must be a number from 0 (excluded) to "
                          "1e+06 or 'auto', got 'tune'")
    assert "to choose Λ privately use tune=true (the private ERM learners take it)" in err
    # the sweep parses --set the same way
    err = _error(capsys, "sweep", "--dataset", "breast_cancer", "--algorithms", "erm-objective", "--values", "1",
                 "--set", "regularization=tune", "--no-cache")
    assert "use tune=true" in err


def test_regularization_auto_and_private_tuning_still_run(capsys):
    assert 0 <= _accuracy(capsys, "--algorithm", "erm-objective", "--set", "regularization=auto") <= 1
    assert 0 <= _accuracy(capsys, "--algorithm", "erm-objective", "--set", "tune=true") <= 1


@pytest.mark.parametrize("item,needle", [
    ("huber_h=abc", "--set huber_h=abc: huber_h must be a number from 0 (excluded) to 1e+06, got 'abc'"),
    ("n-components=x", "--set n-components=x: n_components must be a whole number from 1 to 100000, got 'x'")])
def test_set_value_that_is_not_a_number_names_the_key(capsys, item, needle):
    assert _error(capsys, *BC, "--algorithm", "erm-objective", "--set", item) == f"error: {needle}"


def test_tune_on_the_non_private_model_warns_instead_of_being_ignored(capsys):
    assert main([*BC, "--algorithm", "logreg", "--set", "tune=true"]) == 0
    err = capsys.readouterr().err
    assert "warning: tune=true selects Λ privately and applies to the private learners only" in err
    assert "regularization='auto'" in err
