"""The privacy cost of picking the best point of a sweep (Papernot & Steinke 2022)."""
from __future__ import annotations

import json
import math
import warnings

import dp_accounting
import pandas as pd
import pytest

from dpcore.accounting import event_from_json, event_to_json
from dpcore.learners import learners, run_learner
from dpcore.sweep import SweepConfig, run_sweep, tuning_tax


def _sweep(axis, values, learner="dpsgd"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_sweep(SweepConfig(dataset="iris", learners=[learner], axis=axis, values=values, seeds=2,
                                     params={"epochs": 5}), n_jobs=1)


def test_choosing_the_best_clip_norm_costs_the_repeat_and_select_epsilon_of_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    res = _sweep("clip_norm", [0.1, 1.0, 10.0])
    tax = tuning_tax(res.table, delta=1e-5).iloc[0]
    assert tax.candidates == 3
    event = event_from_json(json.loads(res.table[res.table.role == "swept"].event.iloc[0]))
    # independently: dp_accounting's own RDP accountant on its repeat-and-select event (Poisson, mean 3) of one
    # candidate's mechanism, its 2 seeds' runs
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(dp_accounting.SelfComposedDpEvent(event, 2), 3.0,
                                                              math.inf))
    assert tax.search_epsilon == pytest.approx(acc.get_epsilon(1e-5), rel=1e-9)
    # every run released: 3 candidates x 2 seeds, each a model trained on the private rows with noise of its own,
    # composed by dp_accounting's own RDP accountant at the sum of their deltas, far below adding them up (6 runs)
    every = dp_accounting.rdp.RdpAccountant()
    every.compose(event, 6)
    assert tax.composition_epsilon == pytest.approx(every.get_epsilon(6e-5), rel=1e-9)
    assert tax.composition_delta == pytest.approx(6e-5)
    assert tax.run_epsilon < tax.search_epsilon < tax.composition_epsilon < 0.6 * (6 * tax.run_epsilon)


def test_sweeping_epsilon_itself_is_not_one_mechanism_repeated(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    tax = tuning_tax(_sweep("epsilon", [0.5, 2.0]).table, delta=1e-5).iloc[0]
    assert math.isnan(tax.search_epsilon) and "different mechanisms" in tax.note
    # every run's mechanism, seeds too (2 x 2 runs), composed by dp_accounting's RDP accountant at their 4 deltas:
    # below their sum, 5
    table = _sweep("epsilon", [0.5, 2.0]).table
    every = dp_accounting.rdp.RdpAccountant()
    for text in table[table.role == "swept"].event:
        every.compose(event_from_json(json.loads(text)))
    assert tax.composition_epsilon == pytest.approx(every.get_epsilon(4e-5), rel=1e-9)
    assert tax.composition_epsilon < 2 * (0.5 + 2.0)


def test_every_run_released_counts_every_seed_of_a_candidate():
    # 2 candidates x 3 seeds of epsilon 1: the six models were trained on the private rows, each with its own noise,
    # and the curve the choice is read from is their mean; released together they compose to 6, where the column
    # "epsilon if every run were released" read 2 (one run per candidate)
    event = '{"dp_event": "LaplaceDpEvent", "noise_multiplier": 1.0}'
    table = pd.DataFrame({"learner": ["dpsgd"] * 6, "role": ["swept"] * 6, "value": [0.1, 0.1, 0.1, 1.0, 1.0, 1.0],
                          "seed": [0, 1, 2] * 2, "epsilon": [1.0] * 6, "event": [event] * 6})
    table["delta"] = 1e-5
    row = tuning_tax(table, delta=1e-5).iloc[0]
    assert row.candidates == 2 and row.run_epsilon == 1.0
    assert row.composition_epsilon == 6.0 and row.composition_delta == pytest.approx(6e-5)  # basic composition


def test_the_search_repeats_a_candidate_with_all_the_seeds_its_score_reads():
    # 3 candidates x 3 seeds of one Gaussian: each candidate is scored by the mean of 3 models trained on the private
    # rows, so the mechanism a search repeats is those 3 runs. Accounted as one run it read 1.42 at delta 1e-5 where
    # dp_accounting's repeat-and-select of the 3 runs composed gives 2.57
    gaussian = dp_accounting.GaussianDpEvent(5.0)
    event = json.dumps(event_to_json(gaussian))
    table = pd.DataFrame({"learner": ["dpsgd"] * 9, "role": ["swept"] * 9, "value": [0.5] * 3 + [1.0] * 3 + [2.0] * 3,
                          "seed": [0, 1, 2] * 3, "epsilon": [1.0] * 9, "delta": [1e-5] * 9, "event": [event] * 9})
    row = tuning_tax(table, delta=1e-5).iloc[0]
    one, three = (dp_accounting.rdp.RdpAccountant(), dp_accounting.rdp.RdpAccountant())
    one.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(gaussian, 3.0, math.inf))
    three.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(dp_accounting.SelfComposedDpEvent(gaussian, 3), 3.0,
                                                                math.inf))
    assert row.search_epsilon == pytest.approx(three.get_epsilon(1e-5), rel=1e-6)
    assert row.search_epsilon > 1.5 * one.get_epsilon(1e-5)
    # one seed per candidate: the search repeats one run
    single = tuning_tax(table[table.seed == 0], delta=1e-5).iloc[0]
    assert single.search_epsilon == pytest.approx(one.get_epsilon(1e-5), rel=1e-6)


@pytest.mark.parametrize("name", [n for n, s in learners().items() if s.private])
def test_every_private_learners_event_survives_a_json_round_trip(name):
    spec = learners()[name]
    data = "digits" if spec.images_only else ("iris" if "classification" in spec.tasks else "diabetes")
    knobs = {"rounds": 3} if "fedavg" in name else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        event = run_learner(name, data, epsilon=1.0, params=knobs).event
    assert event_from_json(json.loads(json.dumps(event_to_json(event)))) == event


def test_a_search_that_looked_at_a_run_without_a_guarantee_composes_to_infinity():
    # a noise-multiplier sweep whose smallest sigma is beyond the accountant (its epsilon is infinite): the
    # composition of every run looked at was the sum of the finite ones, 1.5, where it is infinite
    event = '{"dp_event": "LaplaceDpEvent", "noise_multiplier": 1.0}'
    table = pd.DataFrame({"learner": ["dpsgd"] * 3 + ["logreg"], "role": ["swept"] * 3 + ["swept"],
                          "value": [1e-170, 1.0, 2.0, 1.0], "seed": 0, "epsilon": [math.inf, 1.0, 0.5, math.inf],
                          "event": [event] * 4})
    tax = tuning_tax(table, delta=1e-5)
    assert tax.learner.tolist() == ["dpsgd"]  # a learner without a finite epsilon anywhere is not private
    row = tax.iloc[0]
    assert row.composition_epsilon == math.inf and row.run_epsilon == math.inf and math.isnan(row.search_epsilon)
    assert "infinite" in row.note


def test_a_sweeps_rows_say_what_their_epsilon_protects_and_its_tuning_tax_says_it_of_the_composition(tmp_path,
                                                                                                     monkeypatch):
    """Each row says its run's unit (whole records, labels only, a client's whole data), from the learner's result:
    a sweep of DP-SGD, label DP and DP-FedAvg composed their ε as if all three protected a record. A learner whose ε
    protects less than a record says so of its composition in the tuning tax."""
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_sweep(SweepConfig(dataset="iris", learners=["dpsgd", "label-dp-rr", "dp-fedavg"], axis="epsilon",
                                    values=[1.0], seeds=1, params={"epochs": 2, "rounds": 2}), n_jobs=1)
    swept = res.table[res.table.role == "swept"].set_index("learner")
    assert swept.unit.to_dict() == {"dpsgd": "records", "label-dp-rr": "labels", "dp-fedavg": "clients"}
    notes = tuning_tax(res.table, delta=1e-5).set_index("learner").note
    assert "the composition is for each record's label only" in notes["label-dp-rr"]
    assert "the composition is for each client's whole data only" in notes["dp-fedavg"]
    assert "composition is for" not in notes["dpsgd"]
    # a federation's neighbour is a client: its curve is not said to protect "one record added or removed"
    from dpcore.sweep.summary import neighbouring_note

    said = neighbouring_note(res.table, markdown=False)
    assert "(one client added or removed)" in said and said.count("one record added or removed") == 1  # DP-SGD's


def test_runs_that_leaked_privacy_compose_to_no_guarantee_as_the_sessions_total_counts_them():
    """preprocess='standardize' scales the features by the private rows' mean and deviation: the runs' epsilons are
    no guarantee, and the session's total (release_of) counts such a run as dp_accounting's non-private event. The
    tuning tax composed 2 candidates x 2 seeds of them to 4."""
    from dpcore.sweep.summary import composition
    from dpcore.ui.ledger import release_of

    event = '{"dp_event": "EpsilonDeltaDpEvent", "epsilon": 1.0, "delta": 0.0}'
    table = pd.DataFrame({"learner": ["erm-objective"] * 4, "role": ["swept"] * 4, "value": [0.01, 0.01, 0.1, 0.1],
                          "seed": [0, 1] * 2, "epsilon": [1.0] * 4, "delta": [0.0] * 4,
                          "neighbouring": ["replace-one"] * 4, "leaks_privacy": [True, False, False, False],
                          "event": [event] * 4})
    assert isinstance(release_of(table.iloc[0].to_dict())["event"], dp_accounting.NonPrivateDpEvent)
    row = tuning_tax(table, delta=1e-5).iloc[0]
    assert row.composition_epsilon == math.inf and math.isnan(row.search_epsilon) and "leaked" in row.note
    assert composition(table).epsilon == math.inf
    assert composition(table.assign(leaks_privacy=False)).epsilon == 4.0  # without the leak, basic composition


def test_federated_runs_of_different_federations_compose_to_no_guarantee():
    """Seeds of a DP-FedAvg sweep deal the records out to other clients: the runs' client-level epsilons summed to
    1 + 1 "for each client", a client no run shares. Of one federation they add up; of two, infinity."""
    from dpcore.sweep.summary import composition

    t = pd.DataFrame({"epsilon": [1.0, 1.0], "delta": [1e-5, 1e-5], "neighbouring": ["add-remove"] * 2,
                      "unit": ["clients"] * 2, "federation": ["5 clients (IID), seed 0", "5 clients (IID), seed 0"]})
    assert composition(t)[:2] == (2.0, 2e-5) and composition(t).unit == "clients"
    t.loc[1, "federation"] = "5 clients (IID), seed 1"
    assert composition(t) == (math.inf, 1.0, False, None)


def test_runs_under_both_relations_compose_for_a_record_replaced_each_read_on_its_own_curve():
    """Ten add/remove runs (Gaussian, ε about 10.6 at δ 1e-5 each) beside a replace-one run: each restated at its own
    δ, (2ε, (1 + e^ε)δ), their deltas passed 1 together and the composition was infinite (the report's defaults
    said "composes to ε = ∞"). Read on each run's own curve at the δ′ that keeps (1 + e^ε)δ′ within its δ, the sum
    is finite at the runs' own deltas, and each run's restated guarantee holds against the exact curve of the
    Gaussian for a record replaced (sensitivity 2: mu = 2/sigma; Dong, Roth & Su 2022, Corollary 2.13)."""
    from scipy.stats import norm

    from dpcore.accounting import EpsilonDeltaDpEvent, epsilon_of_event
    from dpcore.sweep.summary import composition

    sigma, delta = 0.5, 1e-5
    gauss = dp_accounting.GaussianDpEvent(sigma)
    eps = epsilon_of_event(gauss, delta=delta)
    assert (1 + math.exp(eps)) * delta * 10 > 1  # restated at their own delta, ten of them pass 1 together
    text = json.dumps(event_to_json(gauss))
    erm = json.dumps(event_to_json(EpsilonDeltaDpEvent(1.0, 0.0)))
    t = pd.DataFrame({"epsilon": [eps] * 10 + [1.0], "delta": [delta] * 10 + [0.0],
                      "neighbouring": ["add-remove"] * 10 + ["replace-one"], "event": [text] * 10 + [erm]})
    total = composition(t)
    assert total.replaced and total.unit == "records"
    assert math.isfinite(total.epsilon) and total.delta <= 10 * delta * (1 + 1e-9)
    # the ten add/remove runs together, the replace-one run's ε 1 aside: against the exact curve of their composition
    # for a record replaced, ten Gaussians of sensitivity 2 (mu = 2/sigma each, sqrt(10) of it together)
    part = total.epsilon - 1.0
    mu = 2 / sigma * math.sqrt(10)
    assert norm.cdf(-part / mu + mu / 2) - math.exp(part) * norm.cdf(-part / mu - mu / 2) <= total.delta
    # below each run restated on its own curve and the ten added up (326 there, 243 composed)
    from dpcore.accounting import restated_for_replaced

    alone, _, _ = restated_for_replaced(lambda d: epsilon_of_event(gauss, delta=d), eps, delta, "add-remove")
    assert part < 0.8 * 10 * alone
    # without the events, each run is restated at its own delta, as before: no bound
    assert composition(t.drop(columns="event")).epsilon == math.inf
