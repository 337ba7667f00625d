"""The steps a DP-SGD run takes are the steps its epsilon composes (Abadi et al. 2016, Algorithm 1: T steps of the
Poisson-subsampled Gaussian; Mironov, Talwar & Zhang 2019).

With Poisson sampling an epoch is 1/q steps, which need not be whole: epoch e ends after ceil(e n / L) steps (worked
out here in exact fractions). A run stopped by ``max_epsilon`` ends at the last epoch whose end keeps within it. The
steps counted here are the ones taken (every step's noisy sum reaches the observer, every batch is drawn by the
sampler); each must equal the result's ``steps``, its event's count and each history row's step, and every epsilon
reported must be dp_accounting's RDP accountant's for that many steps, alone and trained together.
"""
from __future__ import annotations

import math
import warnings
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest

from dpcore.exceptions import DPCoreWarning
from dpcore.training import TrainConfig, train
from dpcore.training.batched import TogetherRun, train_together

N, BATCH, SIGMA, DELTA = 100, 30, 1.0, 1e-5  # q = 0.3: an epoch is 3 1/3 steps


def _event(steps: int) -> dp_accounting.DpEvent:
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(BATCH / N, dp_accounting.GaussianDpEvent(SIGMA)), steps)


def _rdp_epsilon(steps: int) -> float:
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(_event(steps))
    return acc.get_epsilon(DELTA)


def _epoch_end(e: int) -> int:
    return math.ceil(Fraction(e * N, BATCH))


@pytest.mark.parametrize("together", [False, True])
def test_a_run_stopped_at_its_budget_took_and_accounted_the_steps_of_its_whole_epochs(together, poisson_draws):
    assert [_epoch_end(e) for e in range(1, 7)] == [4, 7, 10, 14, 17, 20]
    # room for three epochs (10 steps), not four (14)
    budget = 0.5 * (_rdp_epsilon(10) + _rdp_epsilon(14))
    config = TrainConfig(model="linear", epochs=6, batch_size=BATCH, noise_multiplier=SIGMA, max_epsilon=budget,
                         delta=DELTA, seed=0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    taken: list[int] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)  # the stop at max_epsilon is said: known here
        if together:
            (res,) = train_together([TogetherRun(X=X, y=y, config=config, n_outputs=2)],
                                    on_step=lambda step, runs, noisy: taken.append(step))
        else:
            res = train(X, y, config, n_outputs=2, on_step=lambda i, s: taken.append(i))
    assert res.stopped_early and res.steps == 10
    assert taken == list(range(10)) and len(poisson_draws) == 10
    assert res.history["step"].tolist() == [_epoch_end(e) for e in (1, 2, 3)]
    assert res.dp_event == _event(10)
    for step, eps in zip(res.history["step"], res.history["epsilon"]):
        assert eps == pytest.approx(_rdp_epsilon(int(step)), rel=1e-9)
    assert res.epsilon == pytest.approx(_rdp_epsilon(10), rel=1e-9) and res.epsilon <= budget
