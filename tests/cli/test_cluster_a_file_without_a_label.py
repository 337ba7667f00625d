"""``python -m dpcore cluster --data FILE.csv`` without ``--label``: the rows clustered, read without classes."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore.cli import main
from dpcore.models.cluster_rows import NO_ACCURACY_NOTE, SCORE_NOTE


@pytest.fixture
def shop_csv(tmp_path):
    rng = np.random.default_rng(3)
    X = np.r_[rng.normal([20, 50], 3, (50, 2)), rng.normal([60, 20], 3, (50, 2)), rng.normal([40, 80], 3, (50, 2))]
    path = tmp_path / "shop.csv"
    path.write_text("age,spend\n" + "".join(f"{a:.2f},{b:.2f}\n" for a, b in X))
    return path


def _run(capsys, *argv):
    assert main(["cluster", *argv]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_cluster_without_a_label_prints_epsilon_the_score_with_its_note_and_the_centres(shop_csv, capsys):
    out, err = _run(capsys, "--data", str(shop_csv), "--algorithm", "dplloyd", "--k", "3", "--epsilon", "1",
                    "--bounds", "*=0:100", "--json")
    doc = json.loads(out.strip().splitlines()[-1])
    assert doc["task"] == "unlabelled" and doc["rows"] == 150 and doc["k"] == 3
    assert doc["epsilon"] == pytest.approx(1.0) and doc["neighbouring"] == "replace-one"
    assert 0 < doc["intra_cluster_variance"] < doc["random_centres_intra_cluster_variance"]
    assert doc["intra_cluster_variance_note"] == SCORE_NOTE and "ε does not cover" in SCORE_NOTE
    assert doc["accuracy_note"] == NO_ACCURACY_NOTE
    assert "accuracy" not in doc and "random_centres_accuracy" not in doc  # nothing that needs classes
    assert len(doc["centres"]) == 3 and all(set(c) == {"age", "spend"} for c in doc["centres"])
    assert doc["noise"] == "secure"  # a file of one's own: secure noise unless --seed asks otherwise
    assert "secure mode" in err and "ε does not cover" in err
    assert "read from the data itself" not in err  # every column's bounds declared


def test_cluster_without_a_label_in_text_says_the_same_and_warns_of_bounds_read_from_the_rows(shop_csv, capsys):
    out, err = _run(capsys, "--data", str(shop_csv), "--algorithm", "input-perturbation", "--k", "2",
                    "--epsilon", "2", "--seed", "0")
    lines = dict(line.split(": ", 1) for line in out.strip().splitlines())
    assert lines["epsilon"] == "2.0" and lines["intra_cluster_variance_note"] == SCORE_NOTE
    assert lines["centres"].count("age: ") == 2
    assert "read from the data itself" in err and "'age', 'spend'" in err  # the leak, said by name


def test_cluster_without_a_label_is_seeded_reproducibly_and_lloyd_is_said_not_private(shop_csv, capsys):
    argv = ("--data", str(shop_csv), "--algorithm", "dplloyd", "--epsilon", "0.5", "--seed", "4", "--bounds",
            "*=0:100", "--json")
    first = json.loads(_run(capsys, *argv)[0].strip().splitlines()[-1])
    again = json.loads(_run(capsys, *argv)[0].strip().splitlines()[-1])
    assert first["centres"] == again["centres"] and first["k"] == 3  # k defaults to 3 without classes
    lloyd = json.loads(_run(capsys, "--data", str(shop_csv), "--algorithm", "lloyd", "--bounds", "*=0:100",
                            "--json")[0].strip().splitlines()[-1])
    assert lloyd["epsilon"] == "inf" and "dp_event" not in lloyd  # strict JSON's infinity: not private
    assert lloyd["intra_cluster_variance"] < first["random_centres_intra_cluster_variance"]


def test_cluster_with_a_label_keeps_scoring_against_the_classes(shop_csv, tmp_path, capsys):
    labelled = tmp_path / "labelled.csv"
    lines = shop_csv.read_text().splitlines()
    labelled.write_text("\n".join([lines[0] + ",group"] + [f"{row},{i // 50}" for i, row in enumerate(lines[1:])]))
    out, _ = _run(capsys, "--data", str(labelled), "--label", "group", "--algorithm", "dplloyd", "--epsilon", "1",
                  "--seed", "0", "--seeds", "1", "--bounds", "*=0:100", "--json")
    doc = json.loads(out.strip().splitlines()[-1])
    assert doc["task"] == "classification" and "accuracy" in doc and "random_centres_accuracy" in doc


def test_a_label_s_settings_without_a_label_are_refused_by_name(shop_csv, capsys):
    assert main(["cluster", "--data", str(shop_csv), "--algorithm", "dplloyd", "--task", "classification"]) != 0
    assert "--task and --class-shares describe a label" in capsys.readouterr().err
    assert main(["cluster", "--data", str(shop_csv), "--algorithm", "random-centres", "--bounds", "*=0:100"]) != 0
    assert "--algorithm random-centres is not a clustering of the rows" in capsys.readouterr().err
