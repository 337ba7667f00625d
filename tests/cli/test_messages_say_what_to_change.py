"""Refusals on the command line name the flag the user typed and say what to change."""
from __future__ import annotations

import pytest

from dpcore.cli import main, missing_flags


def _error(argv, capsys) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals exit
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_a_flag_is_not_read_as_the_abbreviation_of_a_longer_one(capsys):
    # argparse took --epsilon for --epsilon-range, and its error named the flag the user never typed
    err = _error(["report", "--dataset", "iris", "--epsilon", "-2"], capsys)
    assert "unrecognized arguments: --epsilon -2" in err
    # the longer flag is named only as the suggestion it is, never as the flag read
    assert err.count("--epsilon-range") == err.count("did you mean --epsilon-range?") == 1


def test_a_needed_flag_counts_only_when_spelt_whole():
    assert missing_flags("train", ["--dataset", "iris"]) == []
    assert missing_flags("train", ["--data=x.csv"]) == []
    assert missing_flags("train", ["--dat", "iris"]) == ["--dataset (or --data)"]


@pytest.mark.parametrize("command,given", [("epsilon", ["--noise-multiplier", "1"]), ("noise", ["--epsilon", "1"])])
def test_zero_steps_are_refused_by_both_accounting_commands_naming_steps(command, given, capsys):
    err = _error([command, *given, "--sample-rate", "0.01", "--steps", "0"], capsys)
    assert err.startswith("error: --steps must be at least 1") and "got 0" in err


@pytest.mark.parametrize("command,given", [("epsilon", ["--noise-multiplier", "1"]), ("noise", ["--epsilon", "1"])])
@pytest.mark.parametrize("epochs,says", [("inf", "more noisy steps than can be counted"),
                                         ("1e308", "more noisy steps than can be counted"),
                                         ("1e-320", "less than one noisy step")])
def test_epochs_that_make_no_countable_steps_are_refused_naming_epochs(command, given, epochs, says, capsys):
    # ceil(epochs / q) of infinity raised an OverflowError, worded only as "a value is too large or too small";
    # a subnormal number of epochs made 0 steps, refused as "steps must be >= 1", a flag not given
    err = _error([command, *given, "--sample-rate", "0.01", "--epochs", epochs], capsys)
    assert err.startswith("error: --epochs") and says in err and "OverflowError" not in err


def _tiny_csv(tmp_path) -> str:
    path = tmp_path / "tiny.csv"
    path.write_text("a,b,label\n1,2,0\n2,3,1\n3,1,0\n4,4,1\n")
    return str(path)


@pytest.mark.parametrize("attack", ["loss", "lira", "lira-offline"])
def test_a_pool_attack_on_a_tiny_csv_names_pool_size_and_says_how_many_rows_it_needs(attack, tmp_path, capsys):
    # the loss attack said "nonmember_scores is empty", LiRA "use a larger pool_size"
    err = _error(["audit", "--data", _tiny_csv(tmp_path), "--label", "label", "--seed", "0", "--attack", attack],
                 capsys)
    assert err.startswith("error: --pool-size must be at least 50") and "pool_size" not in err
    assert "this data has 4 rows" in err and err.endswith("use data with at least 67 rows")


@pytest.mark.parametrize("kind, says", [("gradient", "give --canaries 10 or more"),
                                        ("input", "holds 2 test rows: use data with at least 40 rows")])
def test_fewer_than_ten_one_run_canaries_say_what_to_give_or_that_the_data_is_too_small(kind, says, tmp_path, capsys):
    err = _error(["audit", "--data", _tiny_csv(tmp_path), "--label", "label", "--seed", "0", "--attack", "one-run",
                  "--canaries", "2", "--canary-kind", kind], capsys)
    assert err.startswith("error: --canaries must be >= 10, got 2") and says in err


def test_fewer_than_ten_mislabelled_canaries_on_ample_data_say_how_many_to_give(capsys):
    err = _error(["audit", "--dataset", "iris", "--seed", "0", "--canaries", "2"], capsys)
    assert err.startswith("error: --canaries must be >= 10, got 2") and "give --canaries 10 or more" in err


def test_more_shadows_than_pool_records_name_shadows_and_pool_size(capsys):
    err = _error(["audit", "--dataset", "iris", "--seed", "0", "--attack", "lira", "--pool-size", "60",
                  "--shadows", "64"], capsys)  # the pool was cut to no record: "use a larger pool_size"
    assert err.startswith("error: --shadows must be <= 60, got 64") and "give --shadows 60 or fewer" in err
    assert err.endswith("or a larger --pool-size")


def test_too_many_canaries_for_the_test_rows_say_how_many_fit(capsys):
    err = _error(["audit", "--dataset", "iris", "--seed", "0", "--canaries", "500"], capsys)
    assert "--canaries must be <= 36, got 500" in err and "give --canaries 36 or fewer" in err


@pytest.mark.parametrize("command", ["sweep", "report"])
def test_the_learner_flag_takes_the_singular_spelling_train_and_audit_use(command):
    from dpcore.cli import build_parser

    args = build_parser(command).parse_args([command, "--dataset", "iris", "--algorithm", "dpsgd"])
    assert args.algorithms == "dpsgd"  # it was accepted as an abbreviation of --algorithms; now said outright


def test_the_default_canaries_on_a_file_too_small_for_them_say_the_file_is_too_small_not_a_flag_it_never_gave(
        tmp_path, capsys):
    # it said "--canaries must be <= 1, got 10" to a visitor who had given no --canaries
    err = _error(["audit", "--data", _tiny_csv(tmp_path), "--label", "label", "--seed", "0"], capsys)
    assert err.startswith("error: this data is too small for an audit with mislabelled canaries")
    assert "--canaries must" not in err and err.endswith("use data with at least 40 rows")


def _label_of_many_whole_numbers(tmp_path) -> str:
    """A CSV whose label holds 30 different whole numbers (30 classes, or a count): read as regression unless told."""
    path = tmp_path / "codes.csv"
    path.write_text("a,b,code\n" + "".join(f"{i % 7},{i % 5},{i % 30}\n" for i in range(120)))
    return str(path)


@pytest.mark.parametrize("command", [["train", "--algorithm"], ["audit", "--algorithm"], ["sweep", "--algorithms"]])
def test_a_learner_refused_for_the_guessed_task_of_a_file_names_task_and_the_guess(command, tmp_path, capsys):
    # a label of 30 class codes was refused with "dataset 'codes' is regression; the learners for it: ...", never
    # saying that the task was guessed from the label's values, nor that --task classification overrules the guess
    err = _error([*command, "erm-objective", "--data", _label_of_many_whole_numbers(tmp_path), "--label", "code",
                  "--seed", "0"], capsys)
    assert "is regression" in err and "without --task the label 'code' of --data was read as regression" in err
    assert err.endswith("give --task classification)")


def test_a_regression_learner_refused_for_a_label_guessed_to_be_classes_names_task_regression(tmp_path, capsys):
    err = _error(["train", "--algorithm", "linreg", "--data", _tiny_csv(tmp_path), "--label", "label", "--seed", "0"],
                 capsys)
    assert "was read as classification" in err and err.endswith("give --task regression)")


def test_a_task_given_is_not_called_a_guess(tmp_path, capsys):
    err = _error(["train", "--algorithm", "linreg", "--data", _tiny_csv(tmp_path), "--label", "label", "--task",
                  "classification", "--seed", "0"], capsys)
    assert "is classification" in err and "--task" not in err


@pytest.mark.parametrize("argv, asked, fits", [
    (["report", "--dataset", "iris", "--json", "--points", "1000"], "--points 1000 asks for", "use at most --points "),
    (["sweep", "--dataset", "iris", "--range", "0.1,10,1000"], "--range MIN,MAX,1000 asks for",
     "use at most --range MIN,MAX,"),
    (["sweep", "--dataset", "iris", "--values", ",".join(str(1 + i) for i in range(1000))], "1000 --values asks for",
     "use at most "),
    (["sweep", "--dataset", "iris", "--values", "1,2", "--seeds", "1000"], "--seeds 1000 asks for",
     "use at most --seeds ")])
def test_a_sweep_of_too_many_runs_names_the_flag_given_and_the_largest_that_fits(argv, asked, fits, capsys):
    # report --points 1000 was refused with "values=1000 asks for 1e+04 runs; ... use at most values=199": a name
    # the command has no flag for
    err = _error(argv, capsys)
    assert err.startswith(f"error: {asked}") and fits in err and "values=" not in err and "seeds=" not in err


def test_a_train_fraction_says_how_many_training_rows_the_run_trains_on(cli):
    # --train-fraction 0.001 of iris trained on 2 rows, and the run said only that DP-SGD 'predicts the single class
    # ... try a larger epsilon': nowhere how few rows it had seen
    out = cli("train", "--dataset", "iris", "--train-fraction", "0.001", "--seed", "0")
    assert out.returncode == 0
    assert "note: --train-fraction 0.001 trains on 2 of the 114 training rows" in out.stderr
    whole = cli("train", "--dataset", "iris", "--seed", "0")
    assert "--train-fraction" not in whole.stderr


def test_a_knob_set_twice_with_two_values_is_refused_not_taken_from_the_last(capsys):
    # --set epochs=2 --set epochs=3 trained with 3 and said nothing, as the Trade-off page's Fixed knobs box did
    err = _error(["train", "--dataset", "iris", "--algorithm", "dpsgd", "--set", "epochs=2", "--set", "epochs=3"],
                 capsys)
    assert "--set epochs=2 and --set epochs=3 disagree" in err
    from dpcore.exceptions import DPValueError
    from dpcore.ui.sweep import parse_knobs

    with pytest.raises(DPValueError, match="fixed knobs give epochs twice"):
        parse_knobs("epochs=2\nepochs=3")
    assert parse_knobs("epochs=2, epochs=2") == {"epochs": 2}  # the same value twice says one thing


@pytest.mark.parametrize("argv,flag", [
    (["train", "--dataset", "iris", "--algorithm", "dpsgd", "--set", "epsilon=2"], "--epsilon"),
    (["sweep", "--dataset", "iris", "--algorithms", "erm-output", "--values", "1", "--set", "delta=0.1"], "--delta"),
    (["cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--set", "seed=1"], "--seed"),
])
def test_set_of_epsilon_delta_or_seed_names_the_commands_own_flag(argv, flag, capsys):
    # train said "learner 'dpsgd' does not take parameter(s) epsilon", sweep "set 'delta' with the sweep's own
    # delta= argument", a library's wording with no flag to use
    err = _error(argv, capsys)
    assert err.startswith(f"error: --set {argv[-1].split('=')[0]}=") and f"give {flag}" in err


@pytest.mark.parametrize("value", ["-inf", "-Infinity", "-nan"])
def test_minus_infinity_is_read_as_a_value_and_refused_by_its_flag(value, capsys):
    # argparse read -inf as a flag: "argument --noise-multiplier: expected one argument"
    err = _error(["epsilon", "--noise-multiplier", value, "--sample-rate", "0.1", "--steps", "10"], capsys)
    assert "expected one argument" not in err and "noise_multiplier must be" in err
