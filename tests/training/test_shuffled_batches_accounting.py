"""Shuffled fixed-size batches are accounted without amplification: one Gaussian mechanism per epoch.

No amplification by sampling is proven for shuffled batches, and reporting them as Poisson samples can understate
epsilon (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang, "How private are DP-SGD implementations?", ICML
2024). Whatever the order, an epoch puts each record in exactly one batch; with one record replaced (its slot kept)
the clipped sum moves by at most 2C against noise sigma*C. Epochs compose: E Gaussians of sensitivity 2C are
mu-GDP with mu = 2 sqrt(E) / sigma, whose exact privacy curve is
delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle & Wang 2018; Dong, Roth & Su 2022).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from dpcore.accounting import shuffled_dpsgd_event
from dpcore.exceptions import DPCoreWarning
from dpcore.training import ShuffleSampler, TrainConfig, train


def _exact_gaussian_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon of a mu-GDP mechanism at ``delta`` (the closed form above, solved for epsilon)."""
    def excess(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) - delta
    return brentq(excess, 0.0, 200.0, xtol=1e-12)


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
@pytest.mark.parametrize("sigma, epochs", [(1.0, 1), (4.0, 5), (20.0, 30)])
def test_shuffled_run_reports_at_least_the_exact_epsilon_of_one_gaussian_per_epoch(sigma, epochs, accountant):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        res = train(X, y, TrainConfig(model="linear", epochs=epochs, batch_size=25, noise_multiplier=sigma,
                                      sampling="shuffle", accountant=accountant, delta=1e-5), n_outputs=2)
    exact = _exact_gaussian_epsilon(2.0 * math.sqrt(epochs) / sigma, 1e-5)
    assert res.steps == epochs * 5  # 120 records in batches of 25: 5 steps an epoch, the last one short
    assert res.epsilon >= exact * (1 - 1e-9)  # never below the truth
    assert res.epsilon <= exact * (1.02 if accountant == "pld" else 1.35)  # and not a loose bound either
    assert res.dp_event == shuffled_dpsgd_event(noise_multiplier=sigma, epochs=epochs)


def test_shuffled_run_spends_more_than_the_poisson_figure_it_used_to_report():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        shuffled, poisson = (train(X, y, TrainConfig(model="linear", epochs=4, batch_size=12, noise_multiplier=2.0,
                                                     sampling=s), n_outputs=2) for s in ("shuffle", "poisson"))
    assert shuffled.epsilon > 2 * poisson.epsilon


def test_shuffled_run_calibrated_to_a_target_meets_it_and_says_how():
    X, y = _data()
    with pytest.warns(DPCoreWarning, match="no proven amplification"):
        res = train(X, y, TrainConfig(model="linear", epochs=3, batch_size=30, target_epsilon=2.0,
                                      sampling="shuffle"), n_outputs=2)
    exact = _exact_gaussian_epsilon(2.0 * math.sqrt(3) / res.noise_multiplier, res.delta)
    assert 1.9 < res.epsilon <= 2.0 and exact <= 2.0


def test_stop_at_epsilon_counts_shuffled_epochs():
    X, y = _data()
    one = _exact_gaussian_epsilon(2.0 / 4.0, 1e-5)
    budget = _exact_gaussian_epsilon(2.0 * math.sqrt(2.5) / 4.0, 1e-5)  # room for two epochs, not three
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        res = train(X, y, TrainConfig(model="linear", epochs=6, batch_size=25, noise_multiplier=4.0,
                                      sampling="shuffle", max_epsilon=budget), n_outputs=2)
    assert res.stopped_early and res.steps == 2 * 5
    assert one < res.epsilon <= budget


def test_each_record_is_in_one_batch_an_epoch_whatever_the_data():
    """What the per-epoch accounting rests on: the order is drawn from the seed alone and visits each slot once."""
    a, b = ShuffleSampler(23, batch_size=5, rng=9), ShuffleSampler(23, batch_size=5, rng=9)
    for _ in range(3):
        epoch_a, epoch_b = list(a.batches(5)), list(b.batches(5))
        counts = np.bincount(np.concatenate(epoch_a), minlength=23)
        assert counts.tolist() == [1] * 23
        assert all(np.array_equal(x, z) for x, z in zip(epoch_a, epoch_b))


def test_a_shuffled_dpsgd_result_names_replace_one_neighbours():
    from dpcore.learners import run_learner

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        shuffled = run_learner("dpsgd", "breast_cancer", epsilon=1.0, seed=0, params={"sampling": "shuffle",
                                                                                    "epochs": 2})
        poisson = run_learner("dpsgd", "breast_cancer", epsilon=1.0, seed=0, params={"epochs": 2})
    assert shuffled.to_json_dict()["neighbouring"] == "replace-one"
    assert poisson.to_json_dict()["neighbouring"] == "add-remove"
    assert 0.99 < shuffled.epsilon <= 1.0 and shuffled.noise_multiplier >= 1.999 * poisson.noise_multiplier
