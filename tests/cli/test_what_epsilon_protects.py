"""``train`` says what its epsilon protects (whole records, labels only, images only, a client) and says so when a run
spends more than the --epsilon given (per released answer, per pixel)."""
from __future__ import annotations

import json

import pytest

from dpcore.cli import main


def _run(capsys, *args) -> tuple[dict, str]:
    assert main(["train", *args, "--seed", "0", "--json"]) == 0
    out = capsys.readouterr()
    return json.loads(out.out.strip().splitlines()[-1]), out.err


def test_label_dp_says_it_protects_labels_only(capsys):
    out, _ = _run(capsys, "--dataset", "iris", "--algorithm", "label-dp-rr", "--set", "epochs=2")
    assert out["protects"].startswith("each record's label only") and out["neighbouring"] == "replace-one"


def test_dp_sgd_protects_whole_records_and_a_non_private_learner_claims_nothing(capsys):
    out, _ = _run(capsys, "--dataset", "iris", "--algorithm", "dpsgd", "--set", "epochs=2")
    assert out["protects"] == "each whole training record (features and label)"
    out, _ = _run(capsys, "--dataset", "iris", "--algorithm", "majority")
    assert "protects" not in out


def test_noisy_input_says_its_labels_are_not_protected_unless_they_get_a_share(capsys):
    out, _ = _run(capsys, "--dataset", "digits", "--algorithm", "noisy-input")
    assert out["protects"] == "each training image only; the labels are used as they are (not protected)"
    out, _ = _run(capsys, "--dataset", "digits", "--algorithm", "noisy-input", "--set", "label_share=0.5")
    assert out["protects"] == "each training image and its label"


def test_output_perturbation_says_it_spent_epsilon_per_answer(capsys):
    out, err = _run(capsys, "--dataset", "iris", "--algorithm", "output-perturbation", "--set", "epochs=2")
    assert out["epsilon"] == 36.0  # 36 test answers (seed 0) at the default ε 1 each
    assert "spent epsilon 36 in all, more than the --epsilon 1 given" in err and "budget=total" in err
    out, err = _run(capsys, "--dataset", "iris", "--algorithm", "output-perturbation", "--set", "epochs=2",
                    "--set", "budget=total")
    assert out["epsilon"] == 1.0 and "spent epsilon" not in err


def test_train_says_what_its_score_is_measured_against(capsys):
    assert main(["train", "--dataset", "iris", "--seed", "0", "--set", "epochs=2", "--json"]) == 0
    got = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert got["majority_class_accuracy"] == pytest.approx(1 / 3, abs=0.02)  # three balanced species
    assert main(["train", "--dataset", "diabetes", "--seed", "0", "--set", "epochs=2"]) == 0
    text = capsys.readouterr().out
    assert "mean_predictor_mse: " in text and "mean_predictor_r2: " in text


@pytest.mark.parametrize("algorithm, unit", [("label-dp-rr", "labels"), ("dp-fedavg", "clients"), ("dpsgd", "records")])
def test_a_script_builds_the_ledger_of_a_runs_json(capsys, algorithm, unit):
    """The JSON said what ε protects in words only ("each record's label only; ..."): a script composing the runs it
    printed had to parse prose to choose PrivacyLedger(unit=...). It now says the unit as the ledger takes it."""
    from dpcore.accounting import PrivacyLedger

    out, _ = _run(capsys, "--dataset", "iris", "--algorithm", algorithm, "--set", "epochs=2" if algorithm != "dp-fedavg"
                  else "rounds=2")
    assert out["unit"] == unit
    ledger = PrivacyLedger(delta=1e-3, unit=out["unit"], neighbouring=out["neighbouring"])
    assert ledger.neighbouring.spelling == out["neighbouring"]
