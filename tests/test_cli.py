"""The command line: golden numbers on the last line, one-line errors, no tracebacks."""
from __future__ import annotations

import json
import math
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def round_up_6(value: float) -> float:
    """``value`` rounded up at 6 significant figures, as the accountant commands print it."""
    from dpcore.teaching.verdict import round_epsilon

    return round_epsilon(value, 6)


def run(*args: str) -> subprocess.CompletedProcess:
    """``python -m dpcore ARGS`` in a new process, as from a shell."""
    return subprocess.run([sys.executable, "-m", "dpcore", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


@pytest.mark.parametrize("accountant,expected", [("rdp", 7.33), ("pld", 6.77)])
def test_epsilon_golden(accountant, expected, cli):
    out = cli("epsilon", "--noise-multiplier", "1.5", "--sample-rate", "0.04", "--steps", "2250", "--delta", "1e-5",
              "--accountant", accountant)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip().splitlines()[-1]) == pytest.approx(expected, abs=0.01)


def test_the_readmes_accountant_commands_print_the_numbers_their_comments_give(cli):
    # the README said "# 7.32933 (RDP)" where the command prints 7.32934: the last figure is rounded up, so that an
    # epsilon spent is never printed below the one computed
    import re
    import shlex

    lines = [line for line in (ROOT / "README.md").read_text().splitlines()
             if re.match(r"python -m dpcore (epsilon|noise) .*#[^0-9#]*[0-9]", line)]
    assert len(lines) >= 3
    for line in lines:
        command, comment = line.split("#", 1)
        out = cli(*shlex.split(command)[3:])
        assert out.returncode == 0, out.stderr
        expected = re.match(r"\s*[^0-9]*([0-9.]+)", comment).group(1)
        printed = out.stdout.strip().splitlines()[-1]
        shown = printed if "--json" not in command else f"{round_up_6(json.loads(printed)['epsilon']):.6g}"
        assert shown == expected, line

def test_noise_inverts_epsilon(cli):
    out = cli("noise", "--epsilon", "7.33", "--delta", "1e-5", "--sample-rate", "0.04", "--steps", "2250")
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip().splitlines()[-1]) == pytest.approx(1.5, abs=0.01)


def test_noise_with_pld_at_a_small_target_is_below_rdp_and_the_epsilon_command_confirms_it(cli):
    args = ("--epsilon", "0.1", "--sample-rate", "0.01", "--epochs", "100")
    sigma = {a: float(cli("noise", *args, "--accountant", a).stdout.split()[-1]) for a in ("rdp", "pld")}
    assert sigma["pld"] < sigma["rdp"]  # it was 75.5 against 34.0: calibrated on the grid for epsilon 1
    out = cli("epsilon", "--noise-multiplier", str(sigma["pld"]), "--sample-rate", "0.01", "--epochs", "100",
              "--accountant", "pld")
    assert 0.099 <= float(out.stdout.split()[-1]) <= 0.1  # on the grid for the budget, as `noise` (it said 0.1009)


def test_an_epsilon_pld_could_not_compute_names_the_accountant_that_did(cli):
    out = cli("epsilon", "--noise-multiplier", "1e-9", "--sample-rate", "0.01", "--steps", "100", "--accountant", "pld",
              "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["accountant"] == "rdp" and "RDP accountant instead" in got["warnings"][0]


def test_each_command_of_a_process_says_once_why_its_number_is_infinity_or_rdps(capsys):
    """In one process (a script calling main twice), each command says the reason for its own number, once: a
    calibration's answer and the epsilon it reports explain the same hand-over to RDP, a run's odometer its
    infinity after every epoch."""
    from dpcore.cli import main

    noise = ["noise", "--epsilon", "1e300", "--sample-rate", "0.01", "--steps", "100", "--accountant", "pld"]
    train = ["train", "--dataset", "iris", "--algorithm", "dpsgd", "--epochs", "30", "--set", "noise_multiplier=1e-160"]
    for argv, text in [(noise, "from the RDP accountant instead"), (noise, "from the RDP accountant instead"),
                       (train, "reported as infinity"), (train, "reported as infinity")]:
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert sum(text in line for line in err.splitlines()) == 1, (argv[0], err)


def test_an_infinite_epsilon_is_explained_in_one_line_whether_or_not_the_accountant_said_why(monkeypatch, capsys):
    import dpcore.cli.accounting as accounting_cli
    from dpcore.cli import main

    common = ["--sample-rate", "0.01", "--steps", "100"]
    assert main(["epsilon", "--noise-multiplier", "1e-160", *common]) == 0  # the accountant's warning says why
    out = capsys.readouterr()
    assert out.out.strip().splitlines()[-1] == "inf"
    assert len(out.err.strip().splitlines()) == 1 and "overflows double precision" in out.err
    # an infinity the accountant gave without a reason: the command's own note says what it means
    monkeypatch.setattr(accounting_cli, "dpsgd_accounting", lambda **kwargs: (math.inf, "rdp"))
    assert main(["epsilon", "--noise-multiplier", "1", *common]) == 0
    err = capsys.readouterr().err
    assert err.strip() == accounting_cli.INFINITE_EPSILON_NOTE


def test_datasets_lists_registry(cli):
    out = cli("datasets")
    assert out.returncode == 0
    for name in ["iris", "wine", "breast_cancer", "digits", "diabetes", "mnist5k", "adult", "faces"]:
        assert name in out.stdout
    assert "30162" in out.stdout


def test_train_json_contract_with_a_baseline(capsys):
    from dpcore.cli import main

    assert main(["train", "--dataset", "iris", "--algorithm", "majority", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in ["accuracy", "epsilon", "delta", "noise_multiplier", "seconds"]:
        assert key in obj


@pytest.mark.parametrize(
    "args,needle",
    [
        (["epsilon", "--noise-multiplier", "-1", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5"],
         "noise_multiplier must be > 0"),
        (["epsilon", "--noise-multiplier", "1", "--sample-rate", "2", "--steps", "10", "--delta", "1e-5"],
         "sample_rate must be in (0, 1]"),
        (["noise", "--epsilon", "0", "--delta", "1e-5", "--sample-rate", "0.1", "--steps", "10"],
         "epsilon must be > 0"),
        (["epsilon", "--noise-multiplier", "abc"], "error:"),
        (["train", "--dataset", "nope", "--algorithm", "majority"], "unknown dataset"),
        (["train", "--dataset", "iris", "--algorithm", "nope"], "unknown learner"),
        (["frobnicate"], "error:"),
        ([], "error: give a command: epsilon, noise, datasets, train, cluster, sweep, audit, reproduce, report"),
        (["sweep", "--dataset", "iris", "--algorithm", "dpsgd", "--axis", "epsilon", "--values", "1", "--out", "/"],
         "'/' is a directory; give a file name"),
        (["train", "--dataset", "diabetes", "--algorithm", "erm-objective"],  # says which learners do fit
         "but dataset 'diabetes' is regression; the learners for it: "),
        (["cluster", "--dataset", "diabetes", "--algorithm", "dplloyd"],  # not the regression learners' list
         "--dataset diabetes: cluster needs a classification dataset (the clusters are scored against its classes)"),
        (["sweep", "--dataset", "iris", "--axis", "nosuch"],  # a misspelt axis, not a missing --algorithms
         "--axis 'nosuch': no registered learner for iris can be swept along it; the axes are epsilon, clip_norm"),
        (["epsilon", "--noise-multiplier", "1e308", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5"],
         "noise_multiplier must be at most 1e+12"),
        (["noise", "--epsilon", "1", "--sample-rate", "0.01", "--epochs", "-1"], "--epochs must be > 0, got -1"),
        (["train", "--dataset", "iris", "--lr", "0.1", "--learning-rate", "0.5"],
         "--lr 0.1 and --learning-rate 0.5 disagree"),
        (["train", "--dataset", "iris", "--k", "3"], "does not take parameter(s) k; it takes accountant, activation,"),
        (["reproduce", "--all", "abadi2016-accountant"], "give an entry's name (abadi2016-accountant) or --all"),
        (["audit", "--dataset", "iris", "--algorithm", "erm-output", "--attack", "one-run", "--canary-kind",
          "gradient"], "--canary-kind input"),
    ],
)
def test_bad_arguments_give_one_line_and_nonzero_exit(args, needle, cli):
    out = cli(*args)  # in this process an uncaught exception fails the test; the shell's is checked below
    assert out.returncode != 0
    assert needle in out.stderr
    assert len([line for line in out.stderr.strip().splitlines() if line.startswith("error")]) == 1


def test_a_learner_of_the_other_task_is_answered_with_the_learners_that_fit(cli):
    said = cli("train", "--dataset", "diabetes", "--algorithm", "erm-objective").stderr
    fit = said.split("the learners for it: ")[1].strip().split(", ")  # in the order they registered
    assert {"mean", "dpsgd", "ssp", "functional-mechanism"} <= set(fit)
    assert not {"erm-objective", "majority", "pate"} & set(fit)  # classification only


def test_bad_arguments_from_the_shell_exit_nonzero_with_one_line_and_no_traceback():
    out, needle = run("frobnicate"), "error:"
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert needle in out.stderr
    assert len([line for line in out.stderr.strip().splitlines() if line.startswith("error")]) == 1


def test_arithmetic_overflow_anywhere_is_one_line_naming_what_to_do(monkeypatch, capsys):
    import dpcore.cli.accounting as accounting_cli
    from dpcore.cli import main

    def overflow(**kwargs):
        raise OverflowError("math range error")

    monkeypatch.setattr(accounting_cli, "dpsgd_accounting", overflow)
    code = main(["epsilon", "--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == ("error: a value is too large or too small to compute with (OverflowError: math range "
                           "error); use less extreme values")
    # with an extreme value given, the message names it
    code = main(["epsilon", "--noise-multiplier", "1e-200", "--sample-rate", "0.1", "--steps", "10"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--noise-multiplier 1e-200 is beyond what the computation can hold" in err


@pytest.mark.parametrize("args", [["--help"], [], ["frobnicate"]])
def test_help_and_a_mistyped_command_answer_without_importing_the_learners(args):
    """Only the module of the command given is imported: the top-level help, a missing command and a mistyped one
    answer without loading torch or dp_accounting (seconds of importing otherwise)."""
    code = ("import sys\nfrom dpcore.cli import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'dp_accounting', 'sklearn') if m in sys.modules))" % (args,))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr


def test_every_command_is_listed_with_its_help_and_builds_its_own_options():
    from dpcore.cli import COMMANDS, build_parser

    sub = next(a for a in build_parser("")._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)
    for name in COMMANDS:
        parser = next(a for a in build_parser(name)._actions if a.dest == "command").choices[name]
        assert parser.get_default("func") is not None, name  # the real parser, not the listing's
        assert sub._choices_actions[list(COMMANDS).index(name)].help == COMMANDS[name][1]


def test_an_epsilon_of_zero_for_finite_noise_is_explained_as_zero_delta_dp(capsys):
    """Past sigma ~ 1e4 (q = 0.01, 100 steps) the RDP conversion gives exactly 0: a true (0, delta) guarantee that
    must not read as perfect privacy, and 'noise' for any smaller target lands on that jump."""
    from dpcore.cli import main

    common = ["--delta", "1e-5", "--sample-rate", "0.01", "--steps", "100"]
    assert main(["epsilon", "--noise-multiplier", "1e5", *common]) == 0
    out = capsys.readouterr()
    assert out.out.strip().splitlines()[-1] == "0" and "(0, δ) guarantee, not perfect privacy" in out.err
    assert main(["noise", "--epsilon", "1e-5", *common]) == 0
    assert "no smaller noise reaches epsilon 1e-05" in capsys.readouterr().err
    assert main(["noise", "--epsilon", "1", *common]) == 0
    assert capsys.readouterr().err == ""


def test_an_audit_pool_larger_than_the_training_rows_is_capped_with_a_note(capsys):
    from dpcore.cli import main

    assert main(["audit", "--dataset", "iris", "--algorithm", "non-private", "--attack", "loss",
                 "--pool-size", "100000", "--json"]) == 0
    out = capsys.readouterr()
    assert "--pool-size 100000 is more than the 114 training rows" in out.err
    result = json.loads(out.out.strip().splitlines()[-1])
    assert result["n_members"] + result["n_nonmembers"] == 114


def test_a_non_private_run_says_it_is_not_private_and_that_a_given_epsilon_is_ignored(capsys):
    from dpcore.cli import main

    assert main(["cluster", "--dataset", "iris", "--algorithm", "lloyd", "--epsilon", "5"]) == 0
    out = capsys.readouterr()
    assert "lloyd is not private, so --epsilon 5 is ignored" in out.err
    assert "epsilon: inf (not private)" in out.out.splitlines()
    assert main(["audit", "--dataset", "iris", "--algorithm", "majority"]) == 0
    assert "epsilon: inf (not private)" in capsys.readouterr().out.splitlines()  # not "epsilon: None"
    assert main(["cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--seed", "0"]) == 0
    out = capsys.readouterr()
    assert "ignored" not in out.err and "epsilon: 1.0" in out.out.splitlines()


def test_cluster_reports_random_centres_and_says_a_run_within_their_spread_is_no_better(capsys):
    from dpcore.cli import main

    argv = ["cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--epsilon", "0.001", "--seed", "0", "--json",
            "--seeds", "1"]
    assert main(argv) == 0
    out = capsys.readouterr()
    got = json.loads(out.out.strip().splitlines()[-1])
    assert got["accuracy"] == pytest.approx(0.611, abs=1e-3) and got["no_better_than_random_centres"] is True
    assert got["random_centres_accuracy"] == pytest.approx(0.633, abs=1e-3)  # the page's reference, same test rows
    assert "within the spread of random centres (0.633 ± 0.105, no data used)" in out.err
    assert main([*argv[:6], "10", "--seed", "0", "--json"]) == 0
    assert "no_better_than_random_centres" not in json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_cluster_reads_the_mean_over_the_seeds_the_clustering_page_shows(capsys):
    # seed 0 of DPLloyd on iris at ε 1 is within random centres' spread (0.694); seeds 0 to 2 average 0.843, the
    # Clustering page's headline: the command prints both, the mean computed here run by run
    import numpy as np

    from dpcore.cli import main
    from dpcore.datasets import train_test_split
    from dpcore.learners import run_learner
    from dpcore.models.kmeans import random_centres_reference

    assert main(["cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--seed", "0", "--json"]) == 0
    got = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    runs = [run_learner("dplloyd", "iris", epsilon=1.0, seed=s, params={"neighbouring": "replace-one"})
            for s in range(3)]
    scores = [r.metrics["accuracy"] for r in runs]
    assert got["seeds"] == 3 and got["accuracy"] == pytest.approx(scores[0])
    assert got["accuracy_mean"] == pytest.approx(np.mean(scores), abs=1e-6)
    assert got["accuracy_sd"] == pytest.approx(np.std(scores, ddof=1), abs=1e-6)
    refs = [random_centres_reference(sp.X_test, sp.y_test, 3, bounds=sp.dataset.bounds)
            for sp in (train_test_split("iris", seed=s) for s in range(3))]
    assert got["random_centres_accuracy_mean"] == pytest.approx(np.mean([r.accuracy for r in refs]), abs=1e-6)
    assert got["no_better_than_random_centres"] is True and got["no_better_than_random_centres_over_seeds"] is False


def test_a_dpsgd_run_reports_enough_to_recompute_its_epsilon_and_to_rerun_it(capsys):
    from dpcore.accounting import dpsgd_epsilon
    from dpcore.cli import main

    argv = ["train", "--dataset", "iris", "--algorithm", "dpsgd", "--epochs", "3", "--seed", "4", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["seed"] == 4 and out["neighbouring"] == "add-remove" and out["config"]["epochs"] == 3
    again = dpsgd_epsilon(noise_multiplier=out["noise_multiplier"], sample_rate=out["sample_rate"],
                          steps=out["steps"], delta=out["delta"], accountant=out["accountant"])
    assert again == pytest.approx(out["epsilon"], rel=1e-3)  # the accountant named is the one that ran
    assert main([*argv, "--delta", "0.5"]) == 0  # a warning on stderr is in the JSON too
    told = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["warnings"]
    assert any("delta=0.5 is larger than 1/n" in w for w in told)


def test_a_value_given_twice_or_a_given_epsilon_that_the_noise_overrides_is_said(capsys):
    from dpcore.cli import main

    assert main(["train", "--dataset", "iris", "--algorithm", "dpsgd", "--lr", "1", "--set", "learning_rate=2"]) == 2
    assert "--learning-rate 1 and --set learning_rate=2 disagree" in capsys.readouterr().err
    assert main(["train", "--dataset", "iris", "--algorithm", "dpsgd", "--epochs", "1", "--epsilon", "1",
                 "--noise-multiplier", "1"]) == 0
    err = capsys.readouterr().err
    assert "--epsilon 1 is not used" in err
    assert err.count("train_loss below is a statistic of the private training rows that ε does not cover") == 1
    assert main(["sweep", "--dataset", "iris", "--jobs", "0"]) == 2
    assert "error: --jobs 0: n_jobs must be >= 1" in capsys.readouterr().err


def test_a_reader_that_stops_early_is_not_an_error():
    listing = subprocess.Popen([sys.executable, "-m", "dpcore", "train", "--list"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    listing.stdout.close()  # as `| head` does once it has its lines; here before the first (the import takes 4 s)
    assert listing.wait(timeout=120) == 0 and "error" not in listing.stderr.read()


def test_epsilon_takes_opacus_style_batch_size_and_epochs_and_agrees_with_opacus(capsys):
    from opacus.accountants import RDPAccountant

    from dpcore.cli import main

    assert main(["epsilon", "--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size", "60000",
                 "--epochs", "60", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sample_rate"] == 256 / 60000 and out["steps"] == 14063  # ceil(60 epochs / q)
    opacus = RDPAccountant()
    opacus.history = [(1.1, 256 / 60000, 14063)]
    assert out["epsilon"] == pytest.approx(opacus.get_epsilon(1e-5), rel=1e-3)  # 2.597
    assert main(["noise", "--epsilon", "1", "--sample-rate", "0.01", "--batch-size", "5", "--steps", "4"]) == 2
    assert "not both" in capsys.readouterr().err


def _leave_with(code: int, stdout) -> subprocess.CompletedProcess:
    """A process that writes to its (buffered) standard output, then leaves as ``python -m dpcore`` does."""
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONUNBUFFERED"}
    prog = f"import sys; sys.stdout.write('row\\n'); from dpcore.__main__ import _exit_now; _exit_now({code})"
    return subprocess.run([sys.executable, "-c", prog], stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                          env=env, timeout=60)


def test_a_reader_that_stopped_early_leaves_the_commands_exit_status_as_it_was():
    import os

    read, write = os.pipe()
    os.close(read)  # `... | head -1` has read its line and gone: the last flush meets a closed pipe
    try:
        ok, failed = _leave_with(0, write), _leave_with(2, write)
    finally:
        os.close(write)
    assert (ok.returncode, ok.stderr) == (0, "")  # as main() answers a closed pipe met earlier
    assert failed.returncode == 2


@pytest.mark.skipif(not pathlib.Path("/dev/full").exists(), reason="needs /dev/full")
def test_output_that_cannot_be_written_says_so_and_exits_nonzero():
    with open("/dev/full", "w") as full:
        out = _leave_with(0, full)
    assert out.returncode == 1
    assert "could not be written" in out.stderr and "Traceback" not in out.stderr


def test_a_command_started_with_its_output_closed_leaves_as_python_would():
    import os

    for fd in (1, 2):  # `python -m dpcore datasets >&-` (a cron job's closed output), then 2>&-
        out = subprocess.run([sys.executable, "-m", "dpcore", "datasets"], cwd=ROOT, timeout=120,
                             preexec_fn=lambda fd=fd: os.close(fd))
        assert out.returncode == 0


@pytest.mark.parametrize("args,meant", [
    (["epsilon", "--noise-multiplier", "1", "--sample-rate", "0.01", "--stpes", "10"], "--steps"),
    (["train", "--dataset", "iris", "--epoch", "3"], "--epochs"),
    (["train", "--dataset", "iris", "--learning_rate", "0.1"], "--learning-rate"),
    (["cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--eps", "2"], "--epsilon"),
    (["audit", "--dataset", "iris", "--atack", "loss"], "--attack"),
    (["report", "--dataset", "iris", "--epsilon-rnage", "1,2"], "--epsilon-range"),
])
def test_a_mistyped_flag_is_refused_with_the_flag_it_is_closest_to(cli, args, meant):
    out = cli(*args)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    line = out.stderr.strip()
    assert line.count("\n") == 0 and "unrecognized arguments" in line
    assert f"did you mean {meant}?" in line and f"python -m dpcore {args[0]} --help" in line


def test_a_flag_with_no_near_name_is_refused_with_where_the_options_are(cli):
    out = cli("datasets", "--zzz")
    assert out.returncode == 2
    assert "did you mean" not in out.stderr and "python -m dpcore datasets --help" in out.stderr


def _readme_texts() -> str:
    return (ROOT / "README.md").read_text() + (ROOT / "docs" / "lesson.md").read_text()


def test_the_readmes_list_of_registered_learners_is_the_registrys():
    import re

    from dpcore.learners import get_learner, learner_names

    paragraph = _readme_texts().split("Registered learners (`python -m dpcore train --algorithm NAME`):", 1)[1]
    listed = re.findall(r"`([a-z0-9-]+)`", paragraph.split(".\n", 1)[0])
    # dpcore's own learners: a test in the same process may have registered learners of its own
    own = [n for n in learner_names() if get_learner(n).run.__module__.startswith("dpcore.")]
    assert sorted(listed) == sorted(own)  # random-centres was missing


def test_every_command_line_the_readme_shows_parses_and_every_flag_it_names_exists():
    import argparse
    import re
    import shlex

    from dpcore.cli import build_parser

    parser = build_parser()
    lines = [line for line in _readme_texts().splitlines() if line.startswith("python -m dpcore ")]
    assert len(lines) >= 20
    for line in lines:
        args = shlex.split(re.split(r"\s+#", line)[0])[3:]
        _, unknown = parser.parse_known_args(args)  # exits on a bad value or a missing required flag
        assert not unknown, line
    # a flag named in prose (`--pool-size`, `train --algorithm erm-output --n-components 10`) is a command's, a bench
    # script's or Streamlit's
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    known = {o for p in sub.choices.values() for a in p._actions for o in a.option_strings}
    known |= {m for f in (ROOT / "bench").glob("*.py") for m in re.findall(r'"(--[a-z][a-z0-9-]*)"', f.read_text())}
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*(?![\w.-])", _readme_texts()))
    assert named - known == set()


@pytest.mark.parametrize("value", ["-1", "0", "nan"])
def test_the_noise_command_refuses_a_bad_epsilon_by_its_own_flag(value, capsys):
    """``noise --epsilon -1`` said "target_epsilon must be > 0", the calibration's parameter, not the flag typed."""
    from dpcore.cli import main

    assert main(["noise", "--epsilon", value, "--sample-rate", "0.01", "--epochs", "2"]) != 0
    err = capsys.readouterr().err
    assert "--epsilon must" in err and "target_epsilon" not in err
