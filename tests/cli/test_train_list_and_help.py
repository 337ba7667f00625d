"""``python -m dpcore train --list`` lists the learners; every train option has help; missing flags are clear."""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

from dpcore.cli import build_parser, main
from dpcore.learners import learners

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_train_list_prints_every_learner_with_a_description(capsys):
    assert main(["train", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    regs = learners()
    assert len(out) == len(regs)
    for line, (name, spec) in zip(out, regs.items()):
        assert line.split()[0] == name
        assert spec.title in line and ("[private;" in line) == spec.private
        assert len(line) > len(name) + len(spec.title) + 10  # a description follows the title
    # "et al." does not end the one-line description early
    rr = next(line for line in out if line.startswith("label-dp-rr "))
    assert "Ghazi et al. 2021" in rr


def test_train_list_in_a_subprocess():
    out = subprocess.run([sys.executable, "-m", "dpcore", "train", "--list"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^dpsgd\s+\[private; classification/regression\]\s+DP-SGD", out.stdout, re.M)


def test_train_without_a_dataset_is_a_clear_error_and_without_an_algorithm_trains_the_pages_default(capsys):
    assert main(["train"]) == 2
    err = capsys.readouterr().err
    assert "train needs --dataset (or --data)," in err and "--algorithm" not in err.split(",")[0]
    assert main(["train", "--dataset", "iris", "--epochs", "1", "--json"]) == 0  # DP-SGD, as the Train page
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["learner"] == "dpsgd"
    assert main(["train", "--dataset", "nosuch"]) == 2  # the real mistake is said first
    assert "unknown dataset 'nosuch'" in capsys.readouterr().err


def test_a_command_missing_its_data_or_naming_an_unknown_dataset_says_so_before_importing_torch():
    # a bare `train` used to take 5 s (torch and every learner) to say what it needs
    code = ("import sys; from dpcore.cli import main; rc = main(sys.argv[1:]); "
            "print(rc, 'torch' in sys.modules, file=sys.stderr)")
    for argv, needs in ((["train", "--algorithm", "dpsgd"], "train needs --dataset (or --data),"),
                        (["sweep", "--seeds", "2"], "sweep needs --dataset (or --data),"),
                        (["cluster", "--dataset=iris"], "cluster needs --algorithm,"),
                        (["audit"], "audit needs --dataset (or --data),"),
                        (["train", "--dataset", "irsi", "--algorithm", "dpsgd"], "unknown dataset 'irsi'; choose one")):
        out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT,
                             timeout=120)
        assert needs in out.stderr and out.stderr.strip().endswith("2 False"), (argv, out.stderr)


def test_cluster_missing_its_learner_says_a_file_needs_no_label_to_be_clustered(capsys):
    assert main(["cluster", "--data", "rows.csv"]) == 2
    err = capsys.readouterr().err
    assert "cluster needs --algorithm," in err
    assert "--data FILE.csv reads your own file, with --label COLUMN to score the clusters against its classes" in err


def test_every_train_option_has_help_text():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    train = sub.choices["train"]
    missing = [a.option_strings for a in train._actions if a.option_strings and not a.help]
    assert missing == []


def test_train_still_runs_a_learner(capsys):
    assert main(["train", "--dataset", "iris", "--algorithm", "majority", "--json"]) == 0
    assert '"accuracy"' in capsys.readouterr().out.splitlines()[-1]


def test_the_help_of_a_non_private_optimiser_knob_names_its_own_default():
    from dpcore.learners import get_learner
    from dpcore.training.learners import NONPRIVATE_DEFAULTS

    helps = {k.name: k.help for k in get_learner("non-private").knobs}
    assert helps["batch_size"].endswith(f"(default without DP-SGD: {NONPRIVATE_DEFAULTS['batch_size']})")
    assert helps["momentum"].endswith("(default without DP-SGD: 0)")  # not the batch size and steps of the recipe
    assert "600 steps" in helps["epochs"] and "600 steps" not in helps["ema"]


def test_a_knob_of_a_network_trained_without_dp_sgd_states_one_default_its_own():
    """The non-private network's learning rate read "step size (default: the dataset preset's; the Small CNN starts
    from its own, smaller one) (default without DP-SGD: 0.01)": two defaults, the first DP-SGD's. It trains at
    0.01 (NONPRIVATE_DEFAULTS) whatever the preset, the CNN's included."""
    from dpcore.learners import get_learner

    for name, own in (("non-private", "(default without DP-SGD: 0.01)"), ("output-perturbation", "(default without "
                      "DP-SGD: 0.01)"), ("label-dp-rr", "(default here: 0.003;")):
        helps = {k.name: k.help for k in get_learner(name).knobs}
        assert helps["learning_rate"].count("(default") == 1
        assert own in helps["learning_rate"] and "preset" not in helps["learning_rate"], (name, helps)
    # DP-SGD keeps its own: the dataset preset's
    assert "(default: the dataset preset's;" in {k.name: k.help for k in get_learner("dpsgd").knobs}["learning_rate"]
