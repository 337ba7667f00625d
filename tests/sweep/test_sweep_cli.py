"""``python -m dpcore sweep``: the CSV it writes, its progress bar, its one-line errors."""
from __future__ import annotations

import io
import subprocess
import sys

import pandas as pd
import pytest

from dpcore.cli import main


def _argv(tmp_path, *extra):
    return ["sweep", "--dataset", "iris", "--algorithms", "fake-dp,fake-fixed", "--values", "0.3,1,3",
            "--seeds", "2", "--provider", "sweep_fake_learners", "--jobs", "1",
            "--cache-dir", str(tmp_path / "cache"), *extra]


def test_cli_writes_the_tidy_table(fakes, tmp_path, capsys):
    out = tmp_path / "results.csv"
    assert main(_argv(tmp_path, "--set", "epochs=2", "--delta", "1e-6", "--out", str(out))) == 0
    err = capsys.readouterr()
    t = pd.read_csv(out)
    swept = t[t.role == "swept"]
    assert len(swept) == 2 * 3 * 2 and swept.groupby(["learner", "value", "seed"]).size().eq(1).all()
    assert set(t[t.role != "swept"].learner) == {"fake-np", "majority"}
    assert (swept[swept.learner == "fake-dp"].delta == 1e-6).all()
    assert "16/16" in err.err and "wrote 16 runs" in err.err  # the progress bar reached the end
    assert "fake-dp" in err.out and "mean" in err.out  # the summary on stdout
    # a second call reads everything from the cache
    assert main(_argv(tmp_path, "--set", "epochs=2", "--delta", "1e-6", "--out", str(out))) == 0
    assert "(0 computed, 16 from the cache)" in capsys.readouterr().err
    assert pd.read_csv(out).cached.all()


def test_cli_range_and_stdout(fakes, tmp_path, capsys):
    argv = ["sweep", "--dataset", "iris", "--algorithms", "fake-dp", "--range", "0.1,10,3", "--seeds", "1",
            "--provider", "sweep_fake_learners", "--jobs", "1", "--no-cache", "--no-baselines"]
    assert main(argv) == 0
    t = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert sorted(t.value.unique()) == [0.1, 1.0, 10.0] and set(t.role) == {"swept"}
    assert main(argv[:5] + ["--range", "1,2"] + argv[7:]) == 2
    assert "--range expects MIN,MAX,N" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--values", ""], "range is empty"),
        (["--values", "0.5,-1"], "epsilon value must be > 0"),
        (["--values", "a,b"], "--values must be comma-separated numbers"),
        (["--seeds", "0"], "seeds must be at least 1"),
        (["--algorithms", "nope"], "unknown learner 'nope'"),
        (["--axis", "clip_norm"], "'fake-fixed' does not take 'clip_norm'"),
        (["--set", "epochs"], "--set expects KEY=VALUE"),
        (["--range", "1,2,3"], "either --values or --range, not both"),
        # a fixed value of the quantity the axis sweeps was silently unused
        (["--epsilon", "2"], "--epsilon 2 would not be used"),
        (["--axis", "train_fraction", "--train-fraction", "0.5"], "--train-fraction 0.5 would not be used"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(fakes, tmp_path, capsys, extra, message):
    argv = _argv(tmp_path)
    for i in range(0, len(extra), 2):  # later flags override earlier ones in argparse
        argv += extra[i:i + 2]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and message in err and len(err.splitlines()) == 1


def test_cli_in_a_subprocess_exits_nonzero(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "dpcore", "sweep", "--dataset", "iris", "--algorithms", "majority",
                           "--axis", "train_fraction", "--values", "0.5,1", "--seeds", "0"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    expected = "error: seeds must be at least 1 (the number of repetitions per value), got 0"
    assert proc.stderr.strip().splitlines() == [expected]


def test_a_noise_sweep_says_epsilon_is_not_used_and_aims_at_none(tmp_path, capsys):
    argv = ["sweep", "--dataset", "iris", "--algorithms", "dpsgd", "--axis", "noise_multiplier", "--values", "1,4",
            "--seeds", "1", "--set", "epochs=2", "--jobs", "1", "--no-cache", "--no-baselines", "--epsilon", "1"]
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "--epsilon is not used" in out.err
    t = pd.read_csv(io.StringIO(out.out))
    assert t.epsilon_target.isna().all() and t.sort_values("value").epsilon.is_monotonic_decreasing


def test_a_sweep_of_learners_protecting_different_neighbours_says_so_on_stderr(tmp_path, capsys):
    argv = ["sweep", "--dataset", "iris", "--algorithms", "dpsgd,erm-objective", "--values", "1", "--seeds", "1",
            "--set", "epochs=2", "--jobs", "1", "--no-cache", "--no-baselines"]
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "two meanings of epsilon on one axis" in out.err and "one record replaced by another" in out.err
    t = pd.read_csv(io.StringIO(out.out))
    assert set(t[t.role == "swept"].neighbouring) == {"add-remove", "replace-one"}
    alone = ["sweep", "--dataset", "iris", "--algorithms", "dpsgd", "--values", "1", "--seeds", "1",
             "--set", "epochs=2", "--jobs", "1", "--no-cache", "--no-baselines"]
    assert main(alone) == 0 and "two meanings" not in capsys.readouterr().err


def test_a_sweep_whose_runs_spend_more_than_their_epsilon_says_so_beside_its_summary(tmp_path, capsys):
    # output perturbation: ε per released answer, every test answer released; the summary's "value" 0.5 sits beside
    # an epsilon_spent many times larger, and stderr says why, once
    out = tmp_path / "op.csv"
    argv = ["sweep", "--dataset", "iris", "--algorithms", "output-perturbation", "--values", "0.5,2", "--seeds", "1",
            "--jobs", "1", "--no-cache", "--no-baselines", "--out", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    t = pd.read_csv(out)
    answers = round(t.epsilon.iloc[0] / 0.5)
    notes = [line for line in err.splitlines() if "exceeds the epsilon given" in line]
    assert len(notes) == 1 and notes[0].startswith("note: epsilon spent exceeds the epsilon given: Laplace on the "
                                                   "softmax outputs")
    assert f"composes the ε it is given {answers} times" in notes[0] and f"0.5 spends epsilon = {0.5 * answers:.3g}" \
        in notes[0]


def test_a_sweep_says_on_stderr_which_runs_trained_together_and_why_the_others_trained_alone(tmp_path, capsys):
    argv = ["sweep", "--dataset", "digits", "--algorithms", "dpsgd", "--values", "1,2", "--seeds", "1",
            "--jobs", "1", "--no-baselines", "--set", "epochs=1", "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert any("2 dpsgd runs train together in one batch" in n for n in notes), notes
    assert main([*argv, "--set", "model=cnn"]) == 0  # the CNN does not batch: the note says why
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert any("2 dpsgd runs trained alone: model='cnn'" in n for n in notes), notes
    assert main([*argv, "--set", "model=cnn"]) == 0  # answered from the cache: nothing trained, nothing to say
    assert not [line for line in capsys.readouterr().err.splitlines() if "trained" in line or "train together" in line]
