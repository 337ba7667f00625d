"""The command line at the edges of double precision: infinity or a refusal that names the flag, never 0,
never a traceback, a few lines on standard error, and strict JSON."""
from __future__ import annotations

import json
import math

import pytest

from dpcore.cli import main


def _no_infinity_literal(name):
    raise AssertionError(f"--json printed the non-JSON literal {name}")


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert len(err.splitlines()) < 20, err[:2000]
    return code, out, err


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1], parse_constant=_no_infinity_literal)


@pytest.mark.parametrize("argv", [
    ["epsilon", "--noise-multiplier", "1e-160", "--sample-rate", "0.01", "--steps", "100"],
    ["epsilon", "--noise-multiplier", "1e-308", "--sample-rate", "0.01", "--steps", "100"],
    ["epsilon", "--noise-multiplier", "1e-160", "--sample-rate", "0.01", "--steps", "100", "--accountant", "pld"],
])
def test_the_epsilon_of_almost_no_noise_is_infinity(argv, capsys):
    code, out, err = _run(argv, capsys)
    assert code == 0
    assert out.strip().splitlines()[-1] == "inf"
    assert "reported as infinity" in err and "no privacy guarantee can be stated" in err  # the accountant says why


def test_epsilon_json_is_strict_and_names_the_accountant_that_answered(capsys):
    code, out, _ = _run(["epsilon", "--noise-multiplier", "1e-308", "--sample-rate", "1", "--steps", "1",
                         "--accountant", "pld", "--json"], capsys)
    doc = _last_json(out)
    assert code == 0 and doc["epsilon"] == "inf" and doc["accountant"] == "rdp"


def test_a_target_met_at_the_bottom_of_the_search_says_what_it_spends(capsys):
    code, out, err = _run(["noise", "--epsilon", "1e308", "--sample-rate", "0.01", "--steps", "100", "--json"],
                          capsys)
    doc = _last_json(out)
    assert code == 0 and doc["at_search_bound"] is True and doc["noise_multiplier"] == 1e-3
    assert doc["epsilon_spent"] > 1e7 and "least noise searched" in err


def test_training_with_almost_no_noise_reports_infinity_and_the_rdp_accountant(capsys):
    code, out, _ = _run(["train", "--dataset", "iris", "--noise-multiplier", "1e-160", "--accountant", "pld",
                         "--epochs", "2", "--json"], capsys)
    doc = _last_json(out)
    assert code == 0 and doc["epsilon"] == "inf" and doc["accountant"] == "rdp"


def test_federated_training_with_almost_no_noise_reports_infinity(capsys):
    code, out, _ = _run(["train", "--dataset", "iris", "--algorithm", "dp-fedavg", "--noise-multiplier", "1e-160",
                         "--rounds", "3", "--json"], capsys)
    assert code == 0 and _last_json(out)["epsilon"] == "inf"


def test_pate_with_almost_no_noise_is_infinity_without_a_warning_flood(capsys):
    code, out, _ = _run(["train", "--dataset", "iris", "--algorithm", "pate", "--noise-multiplier", "1e-308",
                         "--json"], capsys)
    assert code == 0 and _last_json(out)["epsilon"] == "inf"


@pytest.mark.parametrize("algorithm", ["erm-objective", "erm-output"])
def test_dp_erm_at_an_enormous_epsilon_trains(algorithm, capsys):
    code, out, _ = _run(["train", "--dataset", "iris", "--algorithm", algorithm, "--epsilon", "1e308", "--json"],
                        capsys)
    doc = _last_json(out)
    assert code == 0 and doc["epsilon"] == 1e308 and 0 <= doc["accuracy"] <= 1


def test_dp_sgd_at_an_enormous_target_says_the_search_stopped_and_reports_what_it_spent(capsys):
    code, out, _ = _run(["train", "--dataset", "iris", "--epsilon", "1e308", "--epochs", "3", "--json"], capsys)
    doc = _last_json(out)
    assert code == 0 and doc["noise_multiplier"] == 1e-3 and math.isfinite(doc["epsilon"]) and doc["epsilon"] > 1e5
    assert any("least noise searched" in w for w in doc["warnings"])


@pytest.mark.parametrize("argv,named", [
    (["cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--epsilon", "1e-308"], "epsilon"),
    (["train", "--dataset", "diabetes", "--algorithm", "functional-mechanism", "--l1-norm", "1e-308"], "--l1-norm"),
    (["train", "--dataset", "iris", "--algorithm", "erm-objective", "--intercept-scale", "1"], "--intercept-scale"),
])
def test_extreme_values_are_refused_in_one_line_naming_them(argv, named, capsys):
    code, _, err = _run(argv, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and named in err
    assert "NaN" not in err and "sensitivity must be > 0, got 0.0" not in err


def test_every_json_output_passes_a_strict_parser(capsys):
    code, out, _ = _run(["epsilon", "--noise-multiplier", "1000", "--sample-rate", "0.01", "--steps", "1", "--json"],
                        capsys)
    assert code == 0 and 0 < _last_json(out)["epsilon"] < 0.01
    code, out, _ = _run(["train", "--dataset", "iris", "--algorithm", "majority", "--json"], capsys)
    assert code == 0 and _last_json(out)["epsilon"] == "inf"
