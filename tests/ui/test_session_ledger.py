"""The session's running total: runs compose once each, per data set and protected unit."""
from __future__ import annotations

import math

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
    assert "protect no whole record" in text
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


def test_a_combined_bound_that_cannot_be_stated_says_so_instead_of_a_number():
    from dpcore.accounting import epsilon_of_event

    store: dict = {}
    huge = dp_accounting.GaussianDpEvent(1e-3)
    record_run("digits", ("a",), event=huge, epsilon=epsilon_of_event(huge, delta=1e-5), delta=1e-5,
               neighbouring=Neighbouring.ADD_REMOVE, store=store)
    record_run("digits", ("b",), event=dp_accounting.GaussianDpEvent(5.0), epsilon=1.0, delta=1e-5,
               neighbouring=Neighbouring.REPLACE_ONE, store=store)
    text = session_total_text("digits", "Digits", store=store)
    assert "**Together** they have no bound this page can state" in text and "at most" not in text



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
