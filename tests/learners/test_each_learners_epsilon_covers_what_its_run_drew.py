"""Every private learner's reported epsilon covers what its run actually drew, recomputed from the draws alone.

The accountants are checked against independent references elsewhere; these check what reaches them. A run through
:func:`~dpcore.learners.run_learner` (the split, the declared defaults and knobs, as the command line and the pages
run it) is watched where its randomness is drawn (:func:`tests.mechanism_spy.draws_made`): every Laplace or Gaussian
release with its scale and sensitivity, every noisy sum, every randomized-response draw, every Poisson batch with the
rate it was drawn at, every shuffled epoch, every federated participation schedule. The epsilon of what was drawn is
then computed here (in the seeded mode, and for some in the secure mode, where every draw comes from the operating
system's source), from that record and the public facts of the data (its training rows, its pixel range), by
dp_accounting's RDP accountant on the project's orders (Mironov 2017; Mironov, Talwar & Zhang 2019 for the
Poisson-subsampled Gaussian of DP-SGD, Abadi et al. 2016, and of DP-FedAvg, McMahan et al. 2018), by the exact
composition of Gaussian mechanisms (Dong, Roth & Su 2019: mu-GDP; Balle & Wang 2018, Theorem 8, for its epsilon) or
by basic composition of pure releases (Dwork et al. 2006; parallel composition where each record is in one release,
McSherry 2009).

The reported epsilon must be at least that (fail closed) and not far above it: where the learner's own analysis is
tighter than RDP (SSP, the Gaussian image mechanism) the exact Gaussian composition is the floor, and the RDP figure
of the same draws the ceiling. A tampered record (one step more, a larger sampling rate, less noise, one more
participation) must fail the same comparison, so the checks can fail.
"""
from __future__ import annotations

import copy
import math
import warnings
from fractions import Fraction
from types import SimpleNamespace

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from dpcore.accounting.accountants import RDP_ORDERS
from dpcore.datasets import as_dataset, load_dataset, train_test_split
from dpcore.exceptions import DPCoreWarning
from dpcore.learners import run_learner
from tests.mechanism_spy import draws_made

SEED = 0
DELTA = 1e-5


def _tiny_upload():
    """Twenty rows of your own, with declared bounds and classes: 15 training rows, not divisible by the batch."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.uniform(0, 1, 20), "b": rng.uniform(0, 1, 20)})
    frame["y"] = (frame.a > 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)  # so few rows test on about five: said, and known here
        return as_dataset(frame, "y", bounds="a=0:1,b=0:1", categories="y=0|1")


TINY = _tiny_upload()


def _rdp(events, delta: float = DELTA) -> float:
    acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    for event in events:
        acc.compose(event)
    return acc.get_epsilon(delta)


def _exact_gaussian(mus, delta: float = DELTA) -> float:
    """The exact epsilon at ``delta`` of Gaussian releases with sensitivity / std ``mus`` composed: one Gaussian of
    ``mu = sqrt(sum mu_i^2)`` (Dong, Roth & Su 2019), whose delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 -
    eps/mu) (Balle & Wang 2018, Theorem 8), solved for eps."""
    mu = math.sqrt(sum(m * m for m in mus))

    def excess(eps):
        return stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu) - delta

    return 0.0 if excess(0.0) <= 0 else optimize.brentq(excess, 0.0, 10.0 * mu * mu + 50.0, xtol=1e-14, rtol=1e-14)


def _rows(name: str) -> tuple[int, int]:
    """(training rows, test rows) of ``name``'s split at the seed the runs use: what DP-SGD samples from and what
    output perturbation answers."""
    split = train_test_split(name, seed=SEED)
    return split.X_train.shape[0], split.X_test.shape[0]


# ------------------------------------------------------------------------------------------------ recomputations
# Each takes the record of one run and the run's result, checks the record against the knobs and the data, and gives
# (the epsilon of what was drawn, a ceiling the report must stay under).


def _dpsgd(drawn, result, data: str, params: dict):
    n_train, _ = _rows(data)
    batch = params["batch_size"]
    steps = len(drawn.poisson)
    assert steps == len(drawn.sums) == result.extras["steps"]  # one noisy sum per batch drawn
    assert {n for n, _ in drawn.poisson} == {n_train}  # sampled from the training rows, not all rows
    (rate,) = {r for _, r in drawn.poisson}
    assert rate <= batch / n_train <= rate + 2.0**-52  # the knob's batch over the training rows
    (sigma,) = {std / sensitivity for std, sensitivity, _ in drawn.sums}
    if not result.extras["stopped_early"]:  # epoch e ends after ceil(e n / L) steps, here in exact fractions
        assert steps == math.ceil(Fraction(params["epochs"] * n_train, batch))
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(sigma)), steps)
    eps = _rdp([event])
    if params.get("accountant") != "pld":
        return eps, eps * (1 + 1e-9)
    # the PLD accountant's pessimistic estimate on a finer grid than the run's is a tighter upper bound: the floor
    pld = dp_accounting.pld.PLDAccountant(value_discretization_interval=5e-5)  # half the run's grid
    pld.compose(event)
    return pld.get_epsilon(DELTA), eps


def _dpsgd_shuffled(drawn, result, data: str, params: dict):
    n_train, _ = _rows(data)
    per_epoch = math.ceil(Fraction(n_train, params["batch_size"]))
    assert {(n, b) for n, b, _ in drawn.shuffled} == {(n_train, params["batch_size"])}
    assert all(steps <= per_epoch for _, _, steps in drawn.shuffled)
    epochs = len(drawn.shuffled)  # one permutation per epoch begun
    assert sum(steps for _, _, steps in drawn.shuffled) == len(drawn.sums) == result.extras["steps"]
    (sigma,) = {std / sensitivity for std, sensitivity, _ in drawn.sums}
    # each record is in one batch of an epoch; replaced, it moves that batch's clipped sum by 2C: one Gaussian of
    # multiplier sigma / 2 per epoch
    eps = _rdp([dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / 2), epochs)])
    return eps, eps * (1 + 1e-9)


def _pure_sum(drawn, result, data: str, params: dict):
    """Each release a statistic of all the rows: their epsilons add up."""
    assert not drawn.sums and not drawn.rr
    eps = sum(sensitivity / scale for kind, scale, sensitivity, _ in drawn.additive if kind == "laplace")
    assert all(kind == "laplace" for kind, *_ in drawn.additive)
    return eps, eps * (1 + 1e-12)


def _per_record(drawn, result, data: str, params: dict):
    """One release of all the training rows, a row each (parallel composition): each record's release's epsilon."""
    n_train, _ = _rows(data)
    ((kind, scale, sensitivity, shape),) = drawn.additive
    assert kind == "laplace" and shape[0] == n_train
    return sensitivity / scale, sensitivity / scale * (1 + 1e-12)


def _answers(drawn, result, data: str, params: dict):
    """Output perturbation: every test row's answer released, each at sensitivity / scale."""
    _, n_test = _rows(data)
    ((kind, scale, sensitivity, shape),) = drawn.additive
    assert kind == "laplace" and shape[0] == n_test
    eps = n_test * sensitivity / scale
    return eps, eps * (1 + 1e-12)


def _randomized_response(drawn, result, data: str, params: dict):
    n_train, _ = _rows(data)
    ((p_change, k, n),) = drawn.rr
    assert n == n_train and k == train_test_split(data, seed=SEED).n_classes
    eps = math.log((1 - p_change) * (k - 1) / p_change)  # P(keep) / P(a given other answer)
    return eps, eps * (1 + 1e-9)


def _gaussians(drawn, result, data: str, params: dict):
    """Gaussian releases of statistics of all the rows: their exact composition is the floor, RDP the ceiling."""
    assert not drawn.sums and all(kind == "gaussian" for kind, *_ in drawn.additive)
    mus = [sensitivity / scale for _, scale, sensitivity, _ in drawn.additive]
    return _exact_gaussian(mus), _rdp([dp_accounting.GaussianDpEvent(1 / m) for m in mus])


def _pate(drawn, result, data: str, params: dict):
    """The noisy vote histograms: a row per query, sqrt 2 in L2 (2 in L1) when one teacher changes its vote; the
    confident aggregator's checks on each query's largest count, 1."""
    events = []
    for kind, scale, sensitivity, shape in drawn.additive:
        queries = shape[0]
        assert queries == result.extras["queries"]
        if kind == "gaussian":
            events.append(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(scale / sensitivity),
                                                            queries))
        else:
            basic = queries * sensitivity / scale
            rdp = _rdp([dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(scale / sensitivity),
                                                          queries)])
            return min(basic, rdp), min(basic, rdp) * (1 + 1e-9)
    eps = _rdp(events)
    return eps, eps * (1 + 1e-9)


def _dp_fedavg(drawn, result, data: str, params: dict):
    ((schedule, rate),) = drawn.schedules
    rounds = schedule.shape[0]
    assert rounds == params["rounds"] == len(drawn.sums)  # the server noises every round, an empty one too
    (sigma,) = {std / sensitivity for std, sensitivity, _ in drawn.sums}
    assert rate <= params["client_fraction"]
    event = dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(sigma))
    eps = _rdp([dp_accounting.SelfComposedDpEvent(event, rounds)])
    return eps, eps * (1 + 1e-9)


def _local_dp_fedavg(drawn, result, data: str, params: dict):
    ((schedule, _),) = drawn.schedules
    # each round's sampled clients noise their own updates: one row each
    assert [shape[0] for _, _, shape in drawn.sums] == [int(k) for k in schedule.sum(axis=1) if k > 0]
    (sigma,) = {std / sensitivity for std, sensitivity, _ in drawn.sums}
    busiest = int(schedule.sum(axis=0).max())
    # a client's update replaced moves its row by 2S: multiplier sigma / 2, as often as the busiest client sent one
    eps = _rdp([dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / 2), busiest)])
    return eps, eps * (1 + 1e-9)


def _noisy_images(drawn, result, data: str, params: dict):
    """One release per training image (parallel composition over images); a whole image replaced moves every pixel
    by the pixel range R: h w R in L1 (every Laplace variant, DP-Pix's cell sums too), R sqrt(h w) in L2."""
    ds = load_dataset(data)
    h, w = ds.image_shape
    lo, hi = ds.bounds
    R = float(np.max(hi) - np.min(lo))  # every pixel is clipped into the declared range before its noise
    n_train, _ = _rows(data)
    assert len(drawn.additive) == n_train
    ((kind, scale),) = {(kind, scale) for kind, scale, _, _ in drawn.additive}
    if kind == "laplace":
        floor = ceiling = h * w * R / scale
    else:
        mu = R * math.sqrt(h * w) / scale
        floor, ceiling = _exact_gaussian([mu]), _rdp([dp_accounting.GaussianDpEvent(1 / mu)])
    if drawn.rr:
        label, _ = _randomized_response(drawn, result, data, params)
        floor, ceiling = floor + label, ceiling + label
    return floor, ceiling * (1 + 1e-12)


CASES = {
    # DP-SGD: n not divisible by the batch (a last partial step), one epoch, a calibrated sigma, a stop at max_epsilon
    "dpsgd-partial-epochs": ("dpsgd", "breast_cancer", {"epochs": 2, "batch_size": 100, "noise_multiplier": 1.0,
                                                         "model": "linear"}, _dpsgd),
    "dpsgd-calibrated": ("dpsgd", "breast_cancer", {"epochs": 1, "batch_size": 50, "model": "linear"}, _dpsgd),
    "dpsgd-max-epsilon": ("dpsgd", "breast_cancer", {"epochs": 6, "batch_size": 100, "noise_multiplier": 1.0,
                                                      "max_epsilon": 7.0, "model": "linear"}, _dpsgd),
    "dpsgd-pld": ("dpsgd", "breast_cancer", {"epochs": 2, "batch_size": 100, "noise_multiplier": 1.0,
                                              "accountant": "pld", "model": "linear"}, _dpsgd),
    "dpsgd-tiny-upload": ("dpsgd", TINY, {"epochs": 2, "batch_size": 4, "noise_multiplier": 1.5}, _dpsgd),
    "dpsgd-shuffled": ("dpsgd", "breast_cancer", {"epochs": 2, "batch_size": 100, "noise_multiplier": 2.0,
                                                   "sampling": "shuffle", "model": "linear"}, _dpsgd_shuffled),
    "output-perturbation": ("output-perturbation", "iris", {"epochs": 2}, _answers),
    "output-perturbation-total": ("output-perturbation", "iris", {"epochs": 2, "budget": "total"}, _answers),
    "label-dp-laplace": ("label-dp-laplace", "iris", {"epochs": 2}, _per_record),
    "label-dp-laplace-regression": ("label-dp-laplace", "diabetes", {"epochs": 2}, _per_record),
    "label-dp-rr": ("label-dp-rr", "iris", {"epochs": 2}, _randomized_response),
    "functional-mechanism": ("functional-mechanism", "diabetes", {}, _pure_sum),
    "ssp": ("ssp", "diabetes", {}, _gaussians),
    "dplloyd-grid": ("dplloyd", "iris", {}, _pure_sum),
    "dplloyd-rounds": ("dplloyd", "iris", {"init": "sphere_packing", "iterations": 4}, _pure_sum),
    "input-perturbation": ("input-perturbation", "iris", {}, _per_record),
    "pate-gnmax": ("pate", "digits", {"aggregator": "gnmax"}, _pate),
    "pate-lnmax": ("pate", "digits", {"aggregator": "lnmax"}, _pate),
    "pate-confident": ("pate", "digits", {"aggregator": "confident"}, _pate),
    "dp-fedavg": ("dp-fedavg", "iris", {"rounds": 12, "client_fraction": 0.3}, _dp_fedavg),
    "fedavg-local-dp": ("fedavg-local-dp", "iris", {"rounds": 12}, _local_dp_fedavg),
    "noisy-input": ("noisy-input", "faces", {}, _noisy_images),
    "noisy-input-labels": ("noisy-input", "faces", {"label_share": 0.2}, _noisy_images),
    "noisy-input-pixels": ("noisy-input", "faces", {"budget": "pixel"}, _noisy_images),
    "noisy-input-dppix": ("noisy-input", "faces", {"mechanism": "dppix"}, _noisy_images),
    "noisy-input-gaussian": ("noisy-input", "faces", {"mechanism": "gaussian"}, _noisy_images),
}

_RUNS: dict = {}


def _run(case: str, secure: bool = False):
    """The result of ``case`` and the record of what it drew (each run once per test process); ``secure``: in the
    secure mode, every draw from the operating system's source (the split at seed 0, as here)."""
    if (case, secure) not in _RUNS:
        learner, data, params, _ = CASES[case]
        with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # shuffled batches, a stop at max_epsilon: said, and known here
            drawn = draws_made(mp)
            result = run_learner(learner, data, seed=None if secure else SEED, delta=DELTA, params=params,
                                 secure=secure)
        _RUNS[case, secure] = (result, drawn)
    return _RUNS[case, secure]


def _covers(reported: float, floor: float, ceiling: float) -> bool:
    return floor * (1 - 1e-9) <= reported <= ceiling


@pytest.mark.parametrize("case", list(CASES))
def test_the_reported_epsilon_covers_what_the_run_drew(case):
    result, drawn = _run(case)
    floor, ceiling = CASES[case][3](drawn, result, CASES[case][1], CASES[case][2])
    assert _covers(result.epsilon, floor, ceiling), (result.epsilon, floor, ceiling)
    assert result.delta in (0.0, DELTA)  # the delta asked for, or none (pure epsilon)


@pytest.mark.parametrize("case", ["dpsgd-partial-epochs", "dpsgd-shuffled", "pate-confident", "dp-fedavg",
                                  "fedavg-local-dp", "label-dp-rr", "ssp", "noisy-input-dppix"])
def test_in_the_secure_mode_the_reported_epsilon_covers_what_the_run_drew(case):
    result, drawn = _run(case, secure=True)
    floor, ceiling = CASES[case][3](drawn, result, CASES[case][1], CASES[case][2])
    assert _covers(result.epsilon, floor, ceiling), (result.epsilon, floor, ceiling)


def test_a_run_stopped_at_max_epsilon_stopped_inside_it_after_whole_epochs():
    result, drawn = _run("dpsgd-max-epsilon")
    n_train, _ = _rows("breast_cancer")
    assert result.extras["stopped_early"] and 0 < result.epsilon <= 7.0
    assert len(drawn.poisson) in {math.ceil(Fraction(e * n_train, 100)) for e in range(1, 6)}


# Each tamper changes a copy of the record (and of the result's extras where the record must agree with them), as if
# the run had drawn more than it reported.

def _more_steps(drawn, extras):
    drawn.poisson.append(drawn.poisson[-1])
    drawn.sums.append(drawn.sums[-1])
    extras["steps"] += 1


def _larger_rate(drawn, extras):
    drawn.poisson[:] = [(n, min(1.0, 1.1 * r)) for n, r in drawn.poisson]


def _less_noise(drawn, extras):
    drawn.sums[:] = [(0.9 * std, sensitivity, shape) for std, sensitivity, shape in drawn.sums]
    drawn.additive[:] = [(kind, 0.9 * scale, sensitivity, shape) for kind, scale, sensitivity, shape in drawn.additive]


def _one_more_release(drawn, extras):
    drawn.additive.append(drawn.additive[-1])


def _one_more_epoch(drawn, extras):
    drawn.shuffled.append(drawn.shuffled[-1])
    drawn.sums.extend(drawn.sums[:drawn.shuffled[-1][2]])
    extras["steps"] += drawn.shuffled[-1][2]


def _one_more_participation(drawn, extras):
    ((schedule, rate),) = drawn.schedules
    busiest = int(np.argmax(schedule.sum(axis=0)))
    idle = int(np.flatnonzero(~schedule[:, busiest])[0])
    more = schedule.copy()
    more[idle, busiest] = True
    drawn.schedules[:] = [(more, rate)]
    std, sensitivity, shape = drawn.sums[0]  # the rows noised each round follow the schedule
    drawn.sums[:] = [(std, sensitivity, (int(k), shape[1])) for k in more.sum(axis=1) if k > 0]


def _more_rounds(drawn, extras):
    ((schedule, rate),) = drawn.schedules
    drawn.schedules[:] = [(np.vstack([schedule, schedule[-1:]]), rate)]
    drawn.sums.append(drawn.sums[-1])


@pytest.mark.parametrize("case, tamper", [
    ("dpsgd-partial-epochs", _more_steps),
    ("dpsgd-max-epsilon", _more_steps),
    ("dpsgd-partial-epochs", _larger_rate),
    ("dpsgd-calibrated", _larger_rate),
    ("dpsgd-calibrated", _less_noise),
    ("dpsgd-pld", _less_noise),
    ("dpsgd-tiny-upload", _more_steps),
    ("dpsgd-shuffled", _one_more_epoch),
    ("dpsgd-shuffled", _less_noise),
    ("output-perturbation", _less_noise),
    ("label-dp-laplace", _less_noise),
    ("functional-mechanism", _one_more_release),
    ("ssp", _less_noise),
    ("dplloyd-rounds", _one_more_release),
    ("input-perturbation", _less_noise),
    ("pate-gnmax", _less_noise),
    ("pate-lnmax", _less_noise),
    ("pate-confident", _less_noise),
    ("dp-fedavg", _less_noise),
    ("fedavg-local-dp", _one_more_participation),
    ("noisy-input", _less_noise),
    ("noisy-input-gaussian", _less_noise),
])
def test_a_record_of_more_than_the_run_spent_fails_the_comparison(case, tamper):
    result, drawn = _run(case)
    broken, reported = copy.deepcopy(drawn), SimpleNamespace(epsilon=result.epsilon, extras=dict(result.extras))
    tamper(broken, reported.extras)
    learner, data, params, recompute = CASES[case]
    try:
        floor, ceiling = recompute(broken, reported, data, params)
    except AssertionError:  # the record no longer matches the knobs or the data (a rate not batch / training
        return  # rows, more steps than the epochs take): caught before any epsilon
    assert not _covers(result.epsilon, floor, ceiling)


def test_more_rounds_than_the_knob_are_caught():
    result, drawn = _run("dp-fedavg")
    broken = copy.deepcopy(drawn)
    _more_rounds(broken, {})
    with pytest.raises(AssertionError):
        _dp_fedavg(broken, result, "iris", CASES["dp-fedavg"][2])
