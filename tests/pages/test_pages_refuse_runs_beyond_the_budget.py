"""A page's run that asks for more than one run's budget is refused by name before any of it starts
(without it, the Federated page with Adult, 500 rounds and 100 local epochs ran 261 s; the Classical page with
100,000 random features and 20 seeds ran for minutes, each fit alone fitting the budget)."""
from __future__ import annotations

import re

import pytest

from .conftest import page


def _never(what: str):
    def fail(*args, **kwargs):
        pytest.fail(f"{what} ran before the work was checked")
    return fail


def test_the_federated_page_refuses_500_rounds_of_100_local_epochs_on_adult_before_any_client_exists(monkeypatch):
    monkeypatch.setattr("dpcore.federated.fedavg.partition_clients", _never("the client split"))
    at = page("pages/8_Federated_learning.py")
    at.session_state["fed.dataset"], at.session_state["fed.rounds"] = "adult", 500  # as a link would set them
    at.session_state["fed.local_epochs.adult"] = 100
    at.run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    # in the page's words: its boxes' labels, not the library's parameter names (rounds=500 and local_epochs=100)
    assert re.search(r"“Rounds” = 500 and “Local epochs” = 100 ask for about \d+ seconds of work; at most 120 are "
                     r"allowed per run; use at most “Rounds” = \d+ or “Local epochs” = \d+", errors), errors
    assert not at.get("progress")  # no "Training …" bar left standing above the refusal


def test_the_classical_charts_refuse_20_seeds_of_100000_random_features_before_any_fit(monkeypatch):
    from dpcore.runtime.workload import WorkBudgetExceeded
    from dpcore.ui.models import classical_sweep

    monkeypatch.setattr("dpcore.models.erm.RandomFourierFeatures", _never("the random features"))
    more = tuple((learner, "n_components", 100_000) for learner in ("erm-output", "erm-objective", "logreg"))
    with pytest.raises(WorkBudgetExceeded, match=r"seeds=20 and n_components=100000 ask for about .* seconds of "
                                                 r"work; at most 120 are allowed per run; use at most "
                                                 r"n_components=\d+"):
        classical_sweep("breast_cancer", ("erm-output", "erm-objective"), "logreg", "rff", "auto",
                        (0.1, 0.5, 1.0, 2.0, 5.0, 10.0), 20, 0, "log-bounds", more)


def test_the_clustering_charts_refuse_seeds_of_runs_that_together_ask_too_much(monkeypatch):
    from dpcore.runtime.workload import WorkBudgetExceeded
    from dpcore.ui.models import cluster_sweep

    monkeypatch.setattr("dpcore.models.kmeans.su_count_fraction", _never("DPLloyd"))
    with pytest.raises(WorkBudgetExceeded, match=r"seeds=10 and k=\d+ and iterations=\d+ ask for"):
        cluster_sweep("adult", 300, 300, (0.1, 1.0, 10.0), 10, 0)
