"""``--data FILE.csv --label COLUMN``: train, cluster, sweep and audit read the user's own file like the pages do."""
from __future__ import annotations

import json

import pytest
from sklearn.datasets import load_iris

from dpcore.cli import main
from dpcore.datasets import load_csv


@pytest.fixture
def iris_csv(tmp_path):
    frame = load_iris(as_frame=True).frame.rename(columns={"target": "species"})
    path = tmp_path / "my flowers.csv"
    frame.to_csv(path, sep=";", decimal=",", index=False)  # a spreadsheet's export, read by the pages' sniffing
    return path


def _last_json(capsys):
    captured = capsys.readouterr()
    return json.loads(captured.out.strip().splitlines()[-1]), captured.err


def test_train_on_a_csv_with_a_seed_equals_training_on_the_same_dataset_loaded_as_the_page_does(iris_csv, capsys):
    assert main(["train", "--data", str(iris_csv), "--label", "species", "--algorithm", "dpsgd", "--epochs", "2",
                 "--seed", "0", "--json"]) == 0
    out, err = _last_json(capsys)
    from dpcore.learners import run_learner

    with pytest.warns(Warning):
        same = run_learner("dpsgd", load_csv(iris_csv.read_bytes(), label_column="species", name="my flowers"),
                           epsilon=1.0, delta=1e-5, seed=0, params={"epochs": 2})
    assert out["accuracy"] == pytest.approx(same.to_json_dict()["accuracy"]) and out["dataset"] == "my flowers"
    assert "read from the data itself" in err  # the bounds leak, said once
    assert "seeded" in err and "not to publish" in err  # and the noise is reproducible, said too
    assert out["noise"] == "seeded"


def test_a_csv_without_a_seed_runs_in_secure_mode_and_says_so(iris_csv, capsys):
    runs = []
    for _ in range(2):
        assert main(["train", "--data", str(iris_csv), "--label", "species", "--algorithm", "erm-output",
                     "--epsilon", "0.3", "--json"]) == 0
        out, err = _last_json(capsys)
        assert out["noise"] == "secure" and "secure mode" in err and "--seed N" in err
        runs.append(out)
    assert main(["train", "--data", str(iris_csv), "--label", "species", "--algorithm", "erm-output",
                 "--epsilon", "0.3", "--secure", "--seed", "3"]) == 2
    assert "--secure and --seed 3 contradict" in capsys.readouterr().err


def test_secure_flag_on_a_registry_dataset_draws_from_the_secure_source_and_plain_runs_do_not(capsys, monkeypatch):
    from dpcore.rng import SecureRandom

    drawn = []
    real = SecureRandom.words
    monkeypatch.setattr(SecureRandom, "words", staticmethod(lambda n: drawn.append(n) or real(n)))
    argv = ["train", "--dataset", "breast_cancer", "--algorithm", "label-dp-laplace", "--epsilon", "0.2", "--json"]
    assert main([*argv, "--secure"]) == 0
    assert _last_json(capsys)[0]["noise"] == "secure" and drawn  # the labels' noise came from the OS
    drawn.clear()
    assert main(argv) == 0
    assert _last_json(capsys)[0]["noise"] == "seeded" and not drawn


@pytest.mark.parametrize("argv", [
    ["cluster", "--algorithm", "dplloyd", "--json"],
    ["sweep", "--algorithms", "erm-objective", "--values", "1", "--seeds", "1"],
    ["audit", "--algorithm", "erm-objective", "--json"],
])
def test_cluster_sweep_and_audit_read_the_file_too_in_secure_mode_unless_seeded(iris_csv, tmp_path, capsys, argv):
    extra = ["--out", str(tmp_path / "sweep.csv")] if argv[0] == "sweep" else []
    assert main([*argv, "--data", str(iris_csv), "--label", "species", *extra]) == 0
    assert "secure mode" in capsys.readouterr().err
    assert main([*argv, "--data", str(iris_csv), "--label", "species", "--seed", "1", *extra]) == 0
    assert "seeded (--seed 1)" in capsys.readouterr().err


@pytest.mark.parametrize("argv, words", [
    (["--data", "{csv}"], "--label"),
    (["--data", "{csv}", "--label", "colour"], "'colour' is not a column"),
    (["--data", "{missing}", "--label", "species"], "not a readable file"),
    (["--dataset", "iris", "--data", "{csv}", "--label", "species"], "either --dataset or --data"),
    (["--dataset", "iris", "--label", "species"], "go with --data"),
    (["--dataset", "iris", "--bounds", "a=0:1"], "go with --data"),
    (["--dataset", "iris", "--drop", "a"], "go with --data"),
    (["--dataset", "iris", "--class-shares", "0=0.3,1=0.3,2=0.4"], "go with --data"),
    (["--data", "{csv}", "--label", "species", "--bounds", "*=0:8", "--categories", "species=0|1|2",
      "--class-shares", "0=0.5,1=0.5"], "--class-shares: no share for the class '2'"),
    (["--data", "{csv}", "--label", "species", "--bounds", "*=0:8", "--categories", "species=0|1|2",
      "--class-shares", "0=0.3,1=0.3,2=0,3=0.4"], "2 mistakes in --class-shares"),
    (["--data", "{csv}", "--label", "species", "--drop", "petal width"], "--drop names column(s) 'petal width'"),
    (["--data", "{csv}", "--label", "species", "--drop", "species"], "--drop names the label column 'species'"),
    (["--data", "{csv}", "--label", "species", "--bounds", "petal width=0:3"], "'petal width' that the file"),
    (["--data", "{csv}", "--label", "species", "--bounds", "*=3:0"], "not below the high end"),
    (["--label", "species"], "train needs --dataset"),
    (["--data", "{ragged}", "--label", "y"], "line 4 of the file has 4 values, but the rows before it have 3"),
    # the command line has no upload: the message says what the file needs, as on the page
    (["--data", "{empty}", "--label", "y"], "the CSV file is empty: it needs a header row and at least two data rows"),
])
def test_bad_data_flags_are_one_line_errors_naming_the_flag(iris_csv, tmp_path, capsys, argv, words):
    (ragged := tmp_path / "ragged.csv").write_text("a,b,y\n1,2,0\n2,3,1\n4,5,1,9\n")
    (empty := tmp_path / "empty.csv").write_text("")
    argv = [a.format(csv=iris_csv, missing=tmp_path / "nope.csv", ragged=ragged, empty=empty) for a in argv]
    assert main(["train", "--algorithm", "dpsgd", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and words in err[0]


def test_declared_bounds_silence_the_leak_note_and_move_the_model_with_the_declared_range(iris_csv, capsys):
    argv = ["train", "--data", str(iris_csv), "--label", "species", "--algorithm", "erm-output", "--seed", "0",
            "--json"]
    assert main(argv) == 0
    inferred, err = _last_json(capsys)
    assert "read from the data itself" in err
    assert main([*argv, "--bounds", "*=0:8", "--categories", "species=0|1|2"]) == 0
    declared, err = _last_json(capsys)
    assert "read from the data itself" not in err and "leaks" not in err
    assert declared["accuracy"] != inferred["accuracy"]  # the declared range, not the data's, scaled the features
    assert main([*argv, "--bounds", "sepal length (cm)=4:8"]) == 0
    _, err = _last_json(capsys)  # one column declared: the note names the three others, not it
    assert "'sepal width (cm)'" in err and "'sepal length (cm)'" not in err


def test_drop_leaves_columns_out_before_anything_is_read(iris_csv, tmp_path, capsys):
    frame = load_iris(as_frame=True).frame.rename(columns={"target": "species"})
    frame.insert(0, "flower_id", [f"F{1000 + i}" for i in range(len(frame))])  # text, a different one on every row
    frame.insert(1, "note, free text", ["picked in the rain" if i % 7 else None for i in range(len(frame))])
    path = tmp_path / "labelled flowers.csv"
    frame.to_csv(path, index=False)
    argv = ["train", "--data", str(path), "--label", "species", "--algorithm", "logreg", "--seed", "0", "--json"]
    assert main(argv) == 2  # the note's empty cells and the identifier stop it, and the message says how to go on
    assert "--drop on the command line" in capsys.readouterr().err
    assert main([*argv, "--drop", 'flower_id,"note, free text"']) == 0
    out, _ = _last_json(capsys)
    assert main(["train", "--data", str(iris_csv), "--label", "species", "--algorithm", "logreg", "--seed", "0",
                 "--json"]) == 0
    assert out["accuracy"] == _last_json(capsys)[0]["accuracy"]  # the same rows as the file without those columns


def test_a_count_label_guessed_to_be_classes_is_said_with_how_to_choose_regression_and_codes_are_not(tmp_path,
                                                                                                    capsys):
    import numpy as np

    rng = np.random.default_rng(5)
    x = rng.normal(size=(300, 2))
    visits = rng.poisson(4 + np.exp(x[:, 0]))  # a count with at most 20 values: guessed to be classes
    path = tmp_path / "shop.csv"
    path.write_text("x1,x2,visits,code\n" + "".join(f"{a:.3f},{b:.3f},{v},{int(a > 0) + int(b > 0)}\n"
                                                  for (a, b), v in zip(x, visits)))
    base = ["train", "--data", str(path), "--algorithm", "majority", "--seed", "0", "--bounds", "*=-4:4"]
    assert main(base + ["--label", "visits", "--drop", "code"]) == 0
    err = capsys.readouterr().err
    k = np.unique(visits).size
    assert f"note: the label 'visits' holds {k} different whole numbers, so it is read as {k} classes" in err
    assert "it is a quantity to predict: give --task regression\n" in err
    assert main(base + ["--label", "visits", "--drop", "code", "--task", "classification"]) == 0
    assert "read as" not in capsys.readouterr().err  # chosen, not guessed: nothing to say
    assert main(base + ["--label", "code", "--drop", "visits"]) == 0
    assert "read as" not in capsys.readouterr().err  # three codes 0/1/2 are categories


def test_declared_class_shares_change_the_answers_not_the_run_and_the_json_says_which_rule(tmp_path, capsys):
    """--class-shares: DP-SGD's answers follow argmax(p / shares); its epsilon and noise are the same."""
    from dpcore.datasets.shares import EXAMPLE_SHARES as SHARES
    from dpcore.datasets.shares import example_rare_class_table as imbalanced_table

    path = tmp_path / "status.csv"
    imbalanced_table().to_csv(path, index=False)
    argv = ["train", "--data", str(path), "--label", "status", "--bounds", "*=-5:5", "--algorithm", "dpsgd",
            "--epsilon", "1", "--seed", "0", "--json"]
    assert main(argv) == 0
    plain, _ = _last_json(capsys)
    assert main([*argv, "--class-shares", SHARES]) == 0
    declared, err = _last_json(capsys)
    assert declared["decision_rule"] == "declared class shares" and "decision_rule" not in plain
    # the shares as --class-shares takes them back, and the run's setting as numbers, not a tuple's text
    assert declared["class_shares"] == "fraud=0.07, ok=0.88, review=0.05"
    assert declared["config"]["class_shares"] == [0.07, 0.88, 0.05] and "class_shares" not in plain
    assert (declared["epsilon"], declared["noise_multiplier"], declared["steps"]) == \
        (plain["epsilon"], plain["noise_multiplier"], plain["steps"])
    assert plain["balanced_accuracy"] == pytest.approx(1 / 3)
    assert declared["balanced_accuracy"] > plain["balanced_accuracy"] + 0.15


def test_a_run_whose_bounds_were_read_from_the_file_ends_by_saying_its_epsilon_is_no_guarantee(iris_csv, capsys):
    # the leak was said once on stderr, above a screen of progress lines; the result's own lines then read
    # "epsilon: 1.0" and "protects: each whole training record" as if nothing had leaked
    for command in (["train", "--algorithm", "dpsgd", "--epochs", "2"], ["cluster", "--algorithm", "dplloyd"]):
        assert main([*command, "--data", str(iris_csv), "--label", "species", "--seed", "0"]) == 0
        last = capsys.readouterr().out.strip().splitlines()[-2:]
        assert any(line.startswith("guarantee: none: the epsilon above holds only once nothing leaks") and
                   "read from the data itself" in line for line in last), (command, last)
    bounds = "sepal length (cm)=0:10,*=0:10"  # every bound declared: nothing leaked, nothing to add
    assert main(["train", "--algorithm", "dpsgd", "--epochs", "2", "--data", str(iris_csv), "--label", "species",
                 "--seed", "0", "--bounds", bounds, "--categories", "species=0|1|2"]) == 0
    assert "guarantee: none" not in capsys.readouterr().out
    assert main(["train", "--algorithm", "logreg", "--data", str(iris_csv), "--label", "species",
                 "--seed", "0"]) == 0  # not private: its epsilon already says so
    assert "guarantee: none" not in capsys.readouterr().out


def test_a_sweep_of_ones_own_file_writes_nothing_to_the_shared_run_cache_unless_a_cache_dir_is_given(
        iris_csv, tmp_path, capsys, monkeypatch):
    # the sweeps' cache is shared with the server's pages; a run's record there carries its warnings, which quote a
    # label's cell value ("the most common training class ('setosa')"): the runs of one's own file stay off it, as
    # the report command's and the pages' do
    shared = tmp_path / "shared"
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(shared))
    argv = ["sweep", "--data", str(iris_csv), "--label", "species", "--algorithms", "erm-objective", "--values", "1",
            "--seeds", "1", "--seed", "0", "--out", str(tmp_path / "sweep.csv")]
    assert main(argv) == 0
    assert not [p for p in shared.rglob("*") if p.is_file()]
    assert "not cached on disk (give --cache-dir to keep them)" in capsys.readouterr().err
    kept = tmp_path / "mine"
    assert main([*argv, "--cache-dir", str(kept)]) == 0  # asked for by name: kept there
    assert [p for p in kept.rglob("*.json")]
