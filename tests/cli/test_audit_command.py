"""``python -m dpcore audit``: the JSON contract on the last line, one-line errors."""
from __future__ import annotations

import json

import pytest

from dpcore.cli import main

KEYS = {"epsilon", "epsilon_lower_bound", "confidence", "auc", "tpr_at_fpr", "attack", "n_members", "n_nonmembers",
        "seconds"}


def _last_json(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_the_default_attack_puts_the_private_learner_beside_its_leaky_twin_on_the_same_canaries(capsys):
    from dpcore.audit.run import DEFAULT_ATTACK, story_canaries

    assert main(["audit", "--dataset", "iris", "--seed", "0", "--json"]) == 0
    out = _last_json(capsys)
    assert out["attack"] == "one-run input canaries" and DEFAULT_ATTACK == "canaries"
    assert out["learner"] == "dpsgd" and out["contrast"]["learner"] == "non-private"
    m = story_canaries("iris")
    assert out["n_members"] + out["n_nonmembers"] == m == out["contrast"]["n_members"] + out["contrast"]["n_nonmembers"]
    assert out["n_members"] == out["contrast"]["n_members"]  # the same coins: the same canaries went in
    assert 0 <= out["epsilon_lower_bound"] <= out["epsilon"] and out["contrast"]["epsilon"] == "inf"
    assert 0 <= out["model_accuracy"] <= 1 and 0 <= out["contrast"]["model_accuracy"] <= 1
    assert set(out["tpr_at_fpr_interval"]) == {"0.001", "0.01"}
    assert main(["audit", "--dataset", "iris", "--seed", "0", "--no-contrast", "--json"]) == 0
    assert "contrast" not in _last_json(capsys)


def test_loss_attack_prints_the_contract(capsys):
    assert main(["audit", "--dataset", "iris", "--algorithm", "dpsgd", "--epsilon", "1", "--seed", "0",
                 "--attack", "loss", "--json"]) == 0
    out = _last_json(capsys)
    assert KEYS <= set(out)
    assert set(out["tpr_at_fpr"]) == {"0.001", "0.01"}
    assert out["attack"] == "loss" and out["confidence"] == 0.95
    assert out["bound_method"] == "one-run-coins"  # Steinke et al.'s bound; "one-run" alone read as the other attack
    assert 0 <= out["model_accuracy"] <= 1 and out["seed"] == 0  # what the attacked model learnt, and how to rerun
    assert out["epsilon"] == pytest.approx(1.0, abs=1e-3)
    assert 0 <= out["epsilon_lower_bound"] <= out["epsilon"]
    assert out["n_members"] + out["n_nonmembers"] == 114  # the training rows of iris's split
    # 57 non-members cannot measure a rate of 1 in 100 (one false alarm is more): null, as the page's dash
    assert out["tpr_at_fpr"] == {"0.001": None, "0.01": None}
    if out["epsilon_lower_bound"] == 0:  # a bound of 0 is no all-clear, and the command says so
        assert any("it does not show the model is safe" in w for w in out["warnings"])
        # with how much a perfect attack on these 114 records would prove
        assert any("on these 114 records the most any attack can prove is" in w for w in out["warnings"])
    assert out["epsilon_lower_bound"] <= out["most_provable"] < 4


def test_the_command_attacks_the_pages_default_pool_not_every_training_row(capsys):
    from dpcore.audit import DEFAULT_POOL_SIZE

    assert main(["audit", "--dataset", "digits", "--algorithm", "erm-output", "--attack", "loss", "--json"]) == 0
    out = _last_json(capsys)
    assert out["n_members"] + out["n_nonmembers"] == DEFAULT_POOL_SIZE  # digits has 1,347 training rows
    assert out["tpr_at_fpr"]["0.01"] is not None and out["tpr_at_fpr"]["0.001"] is None


def test_one_run_gradient_canaries_and_lira_run_from_the_command_line(capsys):
    assert main(["audit", "--dataset", "digits", "--algorithm", "dpsgd", "--attack", "one-run", "--canaries", "200",
                 "--json"]) == 0
    out = _last_json(capsys)
    assert out["attack"] == "one-run gradient canaries" and out["n_members"] + out["n_nonmembers"] == 200
    assert main(["audit", "--dataset", "iris", "--algorithm", "non-private", "--attack", "lira", "--shadows", "4",
                 "--json"]) == 0
    out = _last_json(capsys)
    assert out["attack"] == "lira-online" and out["epsilon"] == "inf"  # JSON has no infinity: as train


@pytest.mark.parametrize("argv, words", [
    (["--algorithm", "erm-output", "--attack", "one-run", "--canary-kind", "gradient"], "canary_kind='input'"),
    (["--algorithm", "dpsgd", "--attack", "lira", "--shadows", "5"], "shadows must be even"),
    # two shadows were trained and then refused with "a fixed variance needs some example with at least two IN shadow
    # models", naming neither --shadows nor what to give
    (["--algorithm", "dpsgd", "--attack", "lira", "--shadows", "2"], "--shadows must be at least 4 for LiRA, got 2"),
    (["--algorithm", "dpsgd", "--attack", "lira-offline", "--shadows", "2"], "--shadows must be at least 4"),
    (["--algorithm", "dpsgd", "--attack", "one-run", "--canaries", "5"], "--canaries must be >= 10"),
    (["--algorithm", "dpsgd", "--epsilon", "-1"], "epsilon"),
    (["--algorithm", "nope"], "unknown learner"),
    (["--algorithm", "dpsgd", "--attack", "loss", "--pool-size", "5"], "--pool-size must be at least 50"),
])
def test_bad_arguments_get_one_line_and_a_nonzero_exit(capsys, argv, words):
    assert main(["audit", "--dataset", "iris", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:") and words in err


@pytest.mark.parametrize(
    "flags,needle",
    [(["--shadows", "4"], "--shadows is read by the lira and lira-offline attack(s), not by --attack canaries"),
     (["--attack", "lira", "--canaries", "50"],
      "--canaries is read by the canaries and one-run attack(s), not by --attack lira"),
     (["--attack", "one-run", "--pool-size", "20"], "--pool-size is read by the loss and lira and lira-offline")],
)
def test_a_flag_the_chosen_attack_does_not_read_is_refused_not_ignored(flags, needle, capsys):
    assert main(["audit", "--dataset", "iris", "--algorithm", "dpsgd", *flags]) == 2
    assert needle in capsys.readouterr().err


def test_input_canaries_by_default_are_capped_at_the_test_rows_and_an_explicit_excess_is_refused(capsys):
    argv = ["audit", "--dataset", "iris", "--algorithm", "erm-output", "--attack", "one-run", "--json"]
    assert main(argv) == 0  # the default 1000 asked for more mislabelled test rows than iris has: it was refused
    out = _last_json(capsys)
    assert main([*argv, "--canaries", "36"]) == 0  # the 36 test rows of the split, every one a canary: the same audit
    same = _last_json(capsys)
    assert (out["auc"], out["n_members"], out["n_nonmembers"]) == (same["auc"], same["n_members"], same["n_nonmembers"])
    assert main([*argv, "--canaries", "1000"]) == 2
    assert "canaries must be <= 36" in capsys.readouterr().err


def test_a_learner_protecting_other_neighbours_is_printed_with_its_reason_and_dpsgd_with_no_empty_line(capsys):
    assert main(["audit", "--dataset", "breast_cancer", "--algorithm", "erm-objective", "--seed", "0",
                 "--attack", "loss"]) == 0
    text = capsys.readouterr().out
    assert "epsilon: inf" in text and "claim_note: its ε = 1 protects against one record replaced" in text
    assert main(["audit", "--dataset", "iris", "--algorithm", "dpsgd", "--seed", "0", "--attack", "loss",
                 "--set", "epochs=2"]) == 0
    assert "claim_note" not in capsys.readouterr().out
