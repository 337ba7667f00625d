"""The session's running total: runs compose once each, per data set and protected unit."""
from __future__ import annotations

import math
import re

import dp_accounting
import pytest

from dpcore.accounting import Neighbouring, dpsgd_epsilon, dpsgd_event
from dpcore.ui.ledger import record_run, session_ledger, session_total_text


def _dpsgd(steps: int):
    return dpsgd_event(noise_multiplier=1.2, sample_rate=0.05, steps=steps)


def test_runs_compose_once_each_and_per_data_set():
    store: dict = {}
    kw = dict(delta=1e-5, neighbouring=Neighbouring.ADD_REMOVE, store=store)
    e1 = dpsgd_epsilon(noise_multiplier=1.2, sample_rate=0.05, steps=200, delta=1e-5)
    assert record_run("digits", ("a",), event=_dpsgd(200), epsilon=e1, **kw)
    assert not record_run("digits", ("a",), event=_dpsgd(200), epsilon=e1, **kw)  # shown again: not a new release
    assert record_run("digits", ("b",), event=_dpsgd(200), epsilon=e1, **kw)
    assert record_run("iris", ("c",), event=_dpsgd(200), epsilon=e1, **kw)
    assert not record_run("digits", ("d",), event=None, epsilon=math.inf, **kw)  # not private: nothing to compose
    runs = session_ledger("digits", store=store)
    assert len(runs.ledger) == 2 and runs.delta == pytest.approx(2e-5)
    # two identical runs = one run of twice the steps, read at the sum of the deltas
    assert runs.epsilon == pytest.approx(
        dpsgd_epsilon(noise_multiplier=1.2, sample_rate=0.05, steps=400, delta=2e-5), rel=1e-12)
    assert runs.epsilon < 2 * e1


def test_pure_runs_add_up_and_labels_are_kept_apart():
    store: dict = {}
    lap = dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1.0), 3)  # 3 answers at eps = 1
    rr = dp_accounting.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=10)  # ln 11 per label
    record_run("iris", ("op",), event=lap, epsilon=3.0, delta=0.0, neighbouring=Neighbouring.ADD_REMOVE, store=store)
    record_run("iris", ("op2",), event=lap, epsilon=3.0, delta=0.0, neighbouring=Neighbouring.ADD_REMOVE, store=store)
    record_run("iris", ("rr",), event=rr, epsilon=math.log(11), delta=0.0, neighbouring=Neighbouring.REPLACE_ONE,
               unit="labels", store=store)
    assert session_ledger("iris", store=store).epsilon == pytest.approx(6.0)
    text = session_total_text("iris", "Iris", store=store)
    assert "**2 private trainings** on Iris" in text and "ε = 6**" in text
    assert "label-DP training** protected only each record's label (ε = 2.398" in text
    assert "it used the rest of each record in the clear, so it protects no whole record" in text
    assert session_total_text("digits", "Digits", store=store) is None


def test_the_sessions_total_delta_is_written_rounded_up_as_its_epsilon_is():
    """The deltas add up (1e-5 + 2.34e-5 = 3.34e-5): written at two figures, 3.4e-05, never 3.3e-05 (a delta spent,
    shown below the one computed, would overstate the guarantee as a rounded-down epsilon would)."""
    store: dict = {}
    for key, delta in (("a", 1e-5), ("b", 2.34e-5)):
        record_run("digits", (key,), event=_dpsgd(100), delta=delta, neighbouring=Neighbouring.ADD_REMOVE, store=store,
                   epsilon=dpsgd_epsilon(noise_multiplier=1.2, sample_rate=0.05, steps=100, delta=delta))
    text = session_total_text("digits", "Digits", store=store)
    assert "δ = 3.4e-05" in text and "3.3e-05" not in text


def _gdp_delta(mu: float, eps: float) -> float:
    """The exact delta(eps) of mu-GDP (Dong, Roth & Su 2022, Corollary 2.13): the reference below."""
    from scipy.stats import norm

    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def test_runs_under_both_relations_get_one_bound_for_a_record_replaced_that_holds():
    """An add/remove run and a shuffled (replace-one) run on the same data: dp_accounting cannot compose them as they
    are, and their two totals added as they are would understate what both released. The bound stated for both is
    checked against the exact curve of the two Gaussians for a record replaced (a sum of clipped terms moves by up
    to twice the clip norm when one record is replaced: mu = 2/sigma for the add/remove run, 2 sqrt(E)/sigma for the
    E shuffled epochs)."""
    import re

    from dpcore.accounting import epsilon_of_event, shuffled_dpsgd_event

    s1, s2, epochs, delta = 3.0, 8.0, 2, 1e-5
    store: dict = {}
    gauss = dp_accounting.GaussianDpEvent(s1)
    e1 = epsilon_of_event(gauss, delta=delta)
    record_run("digits", ("poisson",), event=gauss, epsilon=e1, delta=delta, neighbouring=Neighbouring.ADD_REMOVE,
               store=store)
    shuffled = shuffled_dpsgd_event(noise_multiplier=s2, epochs=epochs)
    e2 = epsilon_of_event(shuffled, delta=delta, neighbouring=Neighbouring.REPLACE_ONE)
    record_run("digits", ("shuffled",), event=shuffled, epsilon=e2, delta=delta,
               neighbouring=Neighbouring.REPLACE_ONE, store=store)
    text = session_total_text("digits", "Digits", store=store)
    m = re.search(r"\*\*Together\*\*, the 2 trainings are at most \*\*ε = ([0-9.]+), δ = ([0-9.e+-]+)\*\* for each "
                  r"record replaced", text)
    assert m, text
    mu = math.sqrt((2 / s1) ** 2 + epochs * (2 / s2) ** 2)
    assert _gdp_delta(mu, float(m[1])) <= float(m[2])
    # the two totals added as they were (no restating of the add/remove one) would not hold
    assert _gdp_delta(mu, e1 + e2) > 2 * delta


def test_a_large_add_remove_total_is_restated_for_a_record_replaced_at_the_runs_own_delta():
    """An add/remove total of ε about 13 beside a replace-one run: read at its own δ, group privacy stretched its δ
    1 + e^13 times, past 1, and the caption said "no bound" (at ε 11 it said δ 0.67). Read on the ledger's curve at
    a smaller δ′, the bound keeps the runs' own δ, and it holds against the exact curve of the two Gaussians for a
    record replaced (sensitivity 2 for the add/remove run: mu = 2/sigma)."""
    import re

    from dpcore.accounting import epsilon_of_event

    s1, s2, delta = 0.45, 4.0, 1e-5
    store: dict = {}
    loose = dp_accounting.GaussianDpEvent(s1)
    e1 = epsilon_of_event(loose, delta=delta)
    assert 12 < e1 < 14 and (1 + math.exp(e1)) * delta > 1  # restated at its own delta: no bound
    record_run("digits", ("a",), event=loose, epsilon=e1, delta=delta, neighbouring=Neighbouring.ADD_REMOVE,
               store=store)
    tight = dp_accounting.GaussianDpEvent(s2)
    e2 = epsilon_of_event(tight, delta=delta, neighbouring=Neighbouring.REPLACE_ONE)
    record_run("digits", ("b",), event=tight, epsilon=e2, delta=delta, neighbouring=Neighbouring.REPLACE_ONE,
               store=store)
    text = session_total_text("digits", "Digits", store=store)
    m = re.search(r"\*\*Together\*\*, the 2 trainings are at most \*\*ε = ([0-9.]+), δ = ([0-9.e+-]+)\*\* for each "
                  r"record replaced", text)
    assert m, text
    eps, said_delta = float(m[1]), float(m[2])
    assert said_delta <= 2 * delta  # the two runs' own deltas, not 1 + e^ε times one of them
    mu = math.sqrt((2 / s1) ** 2 + (2 / s2) ** 2)
    assert _gdp_delta(mu, eps) <= said_delta


def test_a_combined_bound_that_cannot_be_stated_says_so_and_why_instead_of_a_number():
    """An add/remove total too large to restate for a record replaced (its δ times 1 + e^ε passes 1) is said as
    that, not as "a total is infinite, or ..." (it was not infinite); an infinite total is said as infinite."""
    from dpcore.accounting import epsilon_of_event

    store: dict = {}
    huge = dp_accounting.GaussianDpEvent(1e-3)
    record_run("digits", ("a",), event=huge, epsilon=epsilon_of_event(huge, delta=1e-5), delta=1e-5,
               neighbouring=Neighbouring.ADD_REMOVE, store=store)
    record_run("digits", ("b",), event=dp_accounting.GaussianDpEvent(5.0), epsilon=1.0, delta=1e-5,
               neighbouring=Neighbouring.REPLACE_ONE, store=store)
    text = session_total_text("digits", "Digits", store=store)
    # the two kinds of neighbour in one sentence, each with its own total (not two sentences naming the data twice)
    assert re.match(r"This session has run \*\*2 private trainings\*\* on Digits, under two kinds of neighbour: 1 "
                    r"counting one record added or removed \(\*\*ε = [0-9,.]+, δ = 1e-05\*\* for each record\) and 1 "
                    r"counting one record replaced \(\*\*ε = [0-9.]+, δ = 1e-05\*\* for each record\)\.", text), text
    assert text.count("on Digits") == 1
    assert "**Together: no bound** (for a record replaced, the add-or-remove total's δ grows 1 + e^ε times, " \
           "past 1)." in text and "at most" not in text and "infinite" not in text
    record_run("digits", ("c",), event=dp_accounting.NonPrivateDpEvent(), epsilon=math.inf, delta=0.0,
               neighbouring=Neighbouring.REPLACE_ONE, store=store)  # a run with no guarantee beside them
    assert "**Together: no bound**, a total above being infinite." in session_total_text(
        "digits", "Digits", store=store)



def test_a_private_run_whose_epsilon_is_infinite_makes_the_sessions_total_infinite():
    # DP-SGD with sigma set to 1e-200 on the Train page: its epsilon is infinite (no guarantee), and it was left out
    # of the session's total, which said "2 private trainings ... ε = 5.09" for the two finite runs beside it
    store: dict = {}
    kw = dict(delta=1e-5, neighbouring=Neighbouring.ADD_REMOVE, store=store)
    e1 = dpsgd_epsilon(noise_multiplier=1.2, sample_rate=0.05, steps=200, delta=1e-5)
    record_run("digits", ("a",), event=_dpsgd(200), epsilon=e1, **kw)
    record_run("digits", ("b",), event=_dpsgd(200), epsilon=e1, **kw)
    with pytest.warns(Warning):  # the ledger says why it reads infinity
        assert record_run("digits", ("c",), event=dpsgd_event(noise_multiplier=1e-200, sample_rate=1.0, steps=2),
                          epsilon=math.inf, **kw)
    runs = session_ledger("digits", store=store)
    assert runs.epsilon == math.inf
    text = session_total_text("digits", "Digits", store=store)
    assert "**3 private trainings**" in text and "ε = ∞" in text


def _sweep_table(rows: list[dict]):
    """A sweep table as the engine writes it (dpcore.sweep.engine): the event as JSON text, the relation spelled,
    empty for a baseline."""
    import json

    import pandas as pd

    from dpcore.accounting import event_to_json

    return pd.DataFrame([{"learner": r["learner"], "value": r.get("value", float("nan")), "seed": r.get("seed", 0),
                          "role": r.get("role", "swept"),
                          "event": json.dumps(event_to_json(r["event"])) if r.get("event") is not None else "",
                          "epsilon": r["epsilon"], "delta": r.get("delta", 0.0),
                          "neighbouring": r.get("neighbouring", ""), "unit": r.get("unit", "records"),
                          "leaks_privacy": r.get("leaks", False)} for r in rows])


def test_runs_of_two_pages_on_one_data_set_compose_into_one_total():
    """A DP-SGD training on the Train page (its result mapping) and a chart of two output-perturbation runs on the
    Classical models page (a sweep's rows, their events stored as JSON): one total on the data, dp_accounting's
    composition of all three events, said with how many runs came from each page."""
    from dpcore.accounting import epsilon_of_event
    from dpcore.ui.ledger import record_release, record_releases, sweep_releases

    store: dict = {}
    train = {"event": _dpsgd(200), "neighbouring": Neighbouring.ADD_REMOVE, "unit": "records", "delta": 1e-5,
             "epsilon": dpsgd_epsilon(noise_multiplier=1.2, sample_rate=0.05, steps=200, delta=1e-5)}
    assert record_release("breast_cancer", ("train", 1), train, page="Train a network", source="the trained model",
                          store=store)
    lap = [dp_accounting.LaplaceDpEvent(1.0), dp_accounting.LaplaceDpEvent(0.5)]  # epsilon 1 and 2 (add/remove)
    table = _sweep_table([
        {"learner": "erm-output", "value": 1.0, "event": lap[0], "epsilon": 1.0, "neighbouring": "add-remove"},
        {"learner": "erm-output", "value": 2.0, "event": lap[1], "epsilon": 2.0, "neighbouring": "add-remove"},
        {"learner": "non-private", "role": "baseline", "epsilon": math.inf},  # not private: never recorded
    ])
    assert record_releases("breast_cancer", ("classical_sweep",), sweep_releases(table), page="Classical models",
                           source="the ε chart's points", store=store) == 2
    runs = session_ledger("breast_cancer", store=store)
    assert len(runs.ledger) == 3 and runs.delta == pytest.approx(1e-5)
    composed = dp_accounting.ComposedDpEvent([_dpsgd(200), *lap])
    assert runs.epsilon == pytest.approx(min(epsilon_of_event(composed, delta=1e-5), train["epsilon"] + 3.0))
    text = session_total_text("breast_cancer", "Breast cancer", store=store)
    assert "**3 private trainings** on Breast cancer" in text
    assert ("Where the 3 runs come from: Train a network 1 (the trained model); Classical models 2 (the ε chart's "
            "points). Each point of a chart, for each seed and learner, is a private training of its own.") in text


def test_many_runs_from_one_page_say_what_on_the_page_made_them():
    """The Clustering page at its defaults records 54 runs with no click: 6 for the result at the top and 48 for the
    points of its chart of accuracy against ε. The caption said "54 private trainings" and an ε of 238.8 without a
    word of where they came from; it now counts them by what made them, and says a chart's point is a training."""
    store: dict = {}
    kw = dict(event=dp_accounting.LaplaceDpEvent(1.0), epsilon=1.0, delta=0.0,
              neighbouring=Neighbouring.REPLACE_ONE, store=store, page="Clustering")
    for i in range(6):
        record_run("iris", ("demo", i), source="the result at the top", **kw)
    for i in range(48):
        record_run("iris", ("sweep", i), source="the ε chart's points", **kw)
    text = session_total_text("iris", "Iris", store=store)
    assert "**54 private trainings** on Iris" in text
    assert ("Where the 54 runs come from: Clustering 54 (6 for the result at the top, 48 for the ε chart's "
            "points). Each point of a chart, for each seed and learner, is a private training of its "
            "own.") in text


def test_one_run_or_runs_that_are_no_charts_points_say_no_chart():
    """One training says no "where from" (the sentence before it says it); two runs of one race say where they came
    from without calling them a chart's points."""
    store: dict = {}
    kw = dict(event=dp_accounting.LaplaceDpEvent(1.0), epsilon=1.0, delta=0.0,
              neighbouring=Neighbouring.REPLACE_ONE, store=store)
    record_run("digits", ("a",), page="Train a network", source="the trained model", **kw)
    assert "come from" not in session_total_text("digits", "Digits", store=store)
    record_run("digits", ("b",), page="Noisy images", source="the noisy-image classifier and DP-SGD", **kw)
    record_run("digits", ("c",), page="Noisy images", source="the noisy-image classifier and DP-SGD", **kw)
    text = session_total_text("digits", "Digits", store=store)
    assert ("Where the 3 runs come from: Train a network 1 (the trained model); Noisy images 2 (the noisy-image "
            "classifier and DP-SGD).") in text and "Each point of a chart" not in text


def test_a_federated_run_keeps_its_own_total_beside_the_records_one():
    """DP-FedAvg protects a client's whole data: recorded on the same data set, it never adds to the records'
    total (a record added changes what its client holds), and is said apart, with its own epsilon."""
    from dpcore.ui.ledger import record_release, record_releases, sweep_releases

    store: dict = {}
    e1 = dpsgd_epsilon(noise_multiplier=1.2, sample_rate=0.05, steps=200, delta=1e-5)
    record_release("digits", ("train",), {"event": _dpsgd(200), "epsilon": e1, "delta": 1e-5,
                                          "neighbouring": Neighbouring.ADD_REMOVE, "unit": "records"},
                   page="Train a network", store=store)
    fed = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(
        0.1, dp_accounting.GaussianDpEvent(1.0)), 50)
    from dpcore.accounting import epsilon_of_event

    e_fed = epsilon_of_event(fed, delta=1e-5)
    record_release("digits", ("fedavg",), {"dp_event": fed, "epsilon": e_fed, "delta": 1e-5,
                                           "neighbouring": Neighbouring.ADD_REMOVE, "unit": "clients"},
                   page="Federated learning", store=store)
    table = _sweep_table([{"learner": "dp-fedavg", "value": 0.3, "event": fed, "epsilon": e_fed, "delta": 1e-5,
                           "neighbouring": "add-remove", "unit": "clients"}])
    record_releases("digits", ("sweep",), sweep_releases(table), page="Federated learning", store=store)
    records = session_ledger("digits", store=store)
    assert len(records.ledger) == 1 and records.epsilon == pytest.approx(e1)  # untouched by the federation
    clients = session_ledger("digits", unit="clients", store=store)
    assert len(clients.ledger) == 2 and clients.epsilon > e_fed
    text = session_total_text("digits", "Digits", store=store)
    assert "**1 private training** on Digits" in text
    assert "**2 federated trainings** protected each client's whole data (ε = " in text
    assert "one client added or removed): a record added changes what its client holds, so they add to no total of " \
           "records." in text


def test_a_run_shown_again_is_not_counted_twice():
    """The same chart re-shown (a rerun of the page, or read back from the server's store, where its numbers come
    back as numpy scalars) and the same run recorded again: one release each."""
    import numpy as np

    from dpcore.ui.ledger import record_release, record_releases, sweep_releases

    store: dict = {}
    lap = dp_accounting.LaplaceDpEvent(1.0)
    table = _sweep_table([{"learner": "erm-output", "value": 1.0, "seed": s, "event": lap, "epsilon": 1.0,
                           "neighbouring": "replace-one"} for s in (0, 1)])
    assert record_releases("iris", ("chart", 1), sweep_releases(table), store=store) == 2
    again = table.astype({"seed": np.int64, "value": np.float64})
    assert record_releases("iris", ("chart", 1), sweep_releases(again), store=store) == 0
    out = {"event": lap, "epsilon": 1.0, "delta": 0.0, "neighbouring": Neighbouring.REPLACE_ONE}
    assert record_release("iris", ("train", 7), out, store=store)
    assert not record_release("iris", ("train", 7), out, store=store)
    assert session_ledger("iris", neighbouring="replace-one", store=store).epsilon == pytest.approx(3.0)


def test_a_run_that_leaked_or_kept_no_event_fails_closed():
    """A run whose features were standardised with the private rows' statistics has no guarantee, whatever its
    accountant said: the total becomes infinite. A private row whose event was not kept composes as the (ε, δ) it
    stated (basic composition), never as nothing."""
    from dpcore.ui.ledger import record_releases, sweep_releases

    store: dict = {}
    lap = dp_accounting.LaplaceDpEvent(1.0)
    table = _sweep_table([
        {"learner": "erm-output", "value": 1.0, "event": None, "epsilon": 1.5, "delta": 1e-6,
         "neighbouring": "replace-one"},
        {"learner": "erm-output", "value": 2.0, "event": lap, "epsilon": 1.0, "neighbouring": "replace-one"},
    ])
    record_releases("iris", ("a",), sweep_releases(table), store=store)
    runs = session_ledger("iris", neighbouring="replace-one", store=store)
    assert runs.epsilon == pytest.approx(2.5) and len(runs.ledger) == 2
    leaky = _sweep_table([{"learner": "erm-output", "value": 1.0, "event": lap, "epsilon": 1.0,
                           "neighbouring": "replace-one", "leaks": True}])
    record_releases("iris", ("b",), sweep_releases(leaky), store=store)
    assert runs.epsilon == math.inf
    assert "ε = ∞" in session_total_text("iris", "Iris", store=store)


def test_the_total_of_whole_records_is_said_first_whatever_ran_first():
    """The Noisy images page trains on noisy images (the images alone) before DP-SGD (whole records): the caption
    still opens with the records' total, the one every other page adds to."""
    from dpcore.ui.ledger import record_release

    store: dict = {}
    record_release("digits", ("noisy-input",), {"event": dp_accounting.LaplaceDpEvent(1.0), "epsilon": 1.0,
                                                "delta": 0.0, "neighbouring": Neighbouring.REPLACE_ONE,
                                                "unit": "images"}, store=store)
    record_release("digits", ("dpsgd",), {"event": _dpsgd(100), "delta": 1e-5, "unit": "records",
                                          "neighbouring": Neighbouring.ADD_REMOVE,
                                          "epsilon": dpsgd_epsilon(noise_multiplier=1.2, sample_rate=0.05, steps=100,
                                                                   delta=1e-5)}, store=store)
    text = session_total_text("digits", "Digits", store=store)
    assert text.startswith("This session has run **1 private training** on Digits")
    assert "**1 noisy-image release** protected only each record's image" in text


def test_a_train_page_run_on_bounds_read_from_the_rows_makes_the_total_infinite():
    """The Train page's result said its accountant's ε only: a run on an upload whose bounds were read from its own
    rows (a leak no ε covers) was recorded in the session's total as a guarantee. It now says it leaked
    (``leaks_privacy``), and the total has no bound; with every bound declared it composes as before."""
    import numpy as np
    import pandas as pd

    from dpcore.datasets import load_csv
    from dpcore.ui.ledger import record_release
    from dpcore.ui.training import train_with_baseline

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})
    df["y"] = (df.a + df.b > 0).astype(int)
    params = {"model": "linear", "epochs": 1}
    with pytest.warns(Warning):
        read = train_with_baseline(load_csv(df, label_column="y"), "dpsgd", params, epsilon=1.0, delta=1e-5, seed=0)
    declared = train_with_baseline(load_csv(df, label_column="y", bounds="*=-5:5", categories="y=0|1"), "dpsgd",
                                   params, epsilon=1.0, delta=1e-5, seed=0)
    assert read["leaks_privacy"] and not declared["leaks_privacy"]
    store: dict = {}
    record_release("up", ("declared",), declared, store=store)
    assert math.isfinite(session_ledger("up", store=store).epsilon)
    record_release("up", ("read",), read, store=store)
    assert session_ledger("up", store=store).epsilon == math.inf


def test_federated_runs_of_different_federations_keep_totals_apart():
    """Two federated runs dealt out with different seeds protect different clients: the session keeps one total per
    federation, names each, and says the totals do not add up."""
    store: dict = {}
    event = dp_accounting.GaussianDpEvent(2.0)
    for seed in (0, 1):
        record_run("digits", ("fed", seed), event=event, epsilon=1.0, delta=1e-5, neighbouring=Neighbouring.ADD_REMOVE,
                   unit="clients", federation=f"5 clients (IID), the 1347 training rows dealt out with seed {seed}",
                   store=store)
    assert len(store) == 2
    text = session_total_text("digits", "Digits", store=store)
    assert text.count("1 federated training** (federation of 5 clients (IID)") == 2
    assert "their totals do not add up into one" in text


def test_runs_whose_deltas_add_past_one_are_not_capped_at_the_sum_of_their_epsilons():
    """Basic composition states the sum of the epsilons at the sum of the deltas: past 1 it says nothing, and the
    total (stated at delta 0.999) must not borrow it. Two (0.1, 0.6) runs: no bound, not epsilon 0.2 at 0.999."""
    from dpcore.accounting import EpsilonDeltaDpEvent

    store: dict = {}
    for key in ("a", "b"):
        record_run("iris", (key,), event=EpsilonDeltaDpEvent(0.1, 0.6), epsilon=0.1, delta=0.6,
                   neighbouring=Neighbouring.ADD_REMOVE, store=store)
    runs = session_ledger("iris", store=store)
    assert runs.delta == 0.999 and runs.epsilon == math.inf
    record_run("digits", ("a",), event=EpsilonDeltaDpEvent(0.1, 0.3), epsilon=0.1, delta=0.3,
               neighbouring=Neighbouring.ADD_REMOVE, store=store)
    record_run("digits", ("b",), event=EpsilonDeltaDpEvent(0.1, 0.3), epsilon=0.1, delta=0.3,
               neighbouring=Neighbouring.ADD_REMOVE, store=store)
    assert session_ledger("digits", store=store).epsilon == pytest.approx(0.2)  # below 1 the sum holds as before


def test_recording_a_gaussian_run_says_nothing_of_the_ledgers_own_delta_of_zero():
    # the session's ledger is read at the session's delta; its own reading at delta = 0 (infinity for Gaussian noise)
    # is nobody's number, so its reason is not warned to the visitor
    import warnings

    store: dict = {}
    eps = dpsgd_epsilon(noise_multiplier=1.2, sample_rate=0.05, steps=200, delta=1e-5)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        record_run("digits", ("a",), event=_dpsgd(200), epsilon=eps, delta=1e-5, neighbouring=Neighbouring.ADD_REMOVE,
                   store=store)
    assert [str(w.message) for w in seen] == []
    assert session_ledger("digits", store=store).epsilon == pytest.approx(eps)
