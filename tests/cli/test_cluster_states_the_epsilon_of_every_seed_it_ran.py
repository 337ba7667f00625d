"""``python -m dpcore cluster --seeds N`` prints the mean accuracy of N private runs on the same data (each seed its own
split and noise, as the Clustering page's headline, whose session total counts every seed's release): the epsilon of
what it printed is theirs together, not one run's.

Recomputed here from the Laplace releases the command actually drew (:func:`tests.mechanism_spy.draws_made`): each
release of the counts or the sums of all the training rows spends sensitivity / scale, and the runs on one data set add
up by basic composition (Dwork et al. 2006; Su et al. 2016 for DPLloyd's rounds). A record is in the training rows of
every seed's split or of some: the total is what the record in all of them spends.
"""
from __future__ import annotations

import json

import pytest

from tests.mechanism_spy import draws_made


def _cluster(cli, monkeypatch, algorithm: str, *more: str):
    drawn = draws_made(monkeypatch)
    out = cli("cluster", "--dataset", "iris", "--algorithm", algorithm, "--epsilon", "0.5", "--seed", "0", *more,
              "--json")
    assert out.returncode == 0, out.stderr
    return drawn, json.loads(out.stdout.strip().splitlines()[-1]), out


@pytest.mark.parametrize("algorithm, per_record", [("dplloyd", False), ("input-perturbation", True)])
def test_the_mean_over_seeds_states_the_epsilon_of_every_seeds_run(cli, monkeypatch, algorithm, per_record):
    drawn, got, _ = _cluster(cli, monkeypatch, algorithm, "--seeds", "3")
    releases = [sensitivity / scale for kind, scale, sensitivity, _ in drawn.additive if kind == "laplace"]
    # input perturbation releases each record once per run (one row of a table per record): a run's epsilon is one
    # release's; DPLloyd's releases are statistics of all the rows: a run's epsilon is their sum
    spent = sum(releases) if not per_record else len(releases) * max(releases)
    assert got["seeds"] == 3 and got["epsilon"] == pytest.approx(0.5)  # the first seed's run, as before
    assert got["epsilon_over_seeds"] >= spent * (1 - 1e-12)
    assert got["epsilon_over_seeds"] <= spent * (1 + 1e-9)
    assert spent == pytest.approx(3 * 0.5)


def test_one_seed_states_no_other_total(cli, monkeypatch):
    _, got, _ = _cluster(cli, monkeypatch, "dplloyd", "--seeds", "1")
    assert "epsilon_over_seeds" not in got and got["epsilon"] == pytest.approx(0.5)


def test_the_text_output_says_the_total_beside_the_mean(cli, monkeypatch):
    drawn = draws_made(monkeypatch)
    out = cli("cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--epsilon", "0.5", "--seed", "0", "--seeds",
              "3")
    assert out.returncode == 0, out.stderr
    total = sum(sensitivity / scale for _, scale, sensitivity, _ in drawn.additive)
    line = next(line for line in out.stdout.splitlines() if line.startswith("over seeds 0 to 2"))
    assert f"epsilon {total:.4g} for the 3 seeds' runs together" in line


def test_runs_that_leaked_besides_their_noise_state_no_total(cli, tmp_path):
    # bounds read from the rows of --data: no run's epsilon is a guarantee, and neither is their total (infinite, as
    # the pages' session total counts such a run)
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.uniform(0, 5, 120), "b": rng.uniform(0, 5, 120)})
    frame["y"] = (frame.a > 2.5).astype(int)
    frame.to_csv(tmp_path / "rows.csv", index=False)
    out = cli("cluster", "--data", tmp_path / "rows.csv", "--label", "y", "--categories", "y=0|1", "--algorithm",
              "dplloyd", "--epsilon", "0.5", "--seed", "0", "--seeds", "3", "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["epsilon_over_seeds"] == "inf"
