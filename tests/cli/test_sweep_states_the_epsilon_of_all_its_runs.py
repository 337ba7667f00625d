"""``python -m dpcore sweep`` prints each point's mean over its seeds beside one run's epsilon (``epsilon_spent``):
the runs it trained on the data, released together, spend more, which it says as the Trade-off explorer does ("ε if
every run were released").

Recomputed from the Laplace releases the sweep actually drew (:func:`tests.mechanism_spy.draws_made`): DPLloyd's
releases are statistics of all the training rows, each spending sensitivity / scale, and every run on one data set
adds up by basic composition (Dwork et al. 2006), a record in every seed's training rows being in all of them.
"""
from __future__ import annotations

import re

import pytest

from tests.mechanism_spy import draws_made


def test_a_sweep_says_what_all_its_private_runs_spend_together(cli, monkeypatch, tmp_path):
    drawn = draws_made(monkeypatch)
    out = cli("sweep", "--dataset", "iris", "--algorithms", "dplloyd", "--values", "0.5,1", "--seeds", "2",
              "--no-cache", "--jobs", "1", "--out", tmp_path / "runs.csv")
    assert out.returncode == 0, out.stderr
    spent = sum(sensitivity / scale for kind, scale, sensitivity, _ in drawn.additive if kind == "laplace")
    assert spent == pytest.approx(2 * 0.5 + 2 * 1.0)  # 2 values x 2 seeds, as the table's rows
    (said,) = [line for line in out.stderr.splitlines() if "released together" in line]
    total = float(re.search(r"spend ε = ([0-9.,]+)", said).group(1).replace(",", ""))
    assert spent * (1 - 1e-12) <= total <= spent * 1.01  # three figures, rounded up
    assert "4 private runs" in said
