"""Every step of a whole DP-SGD run adds fresh noise N(0, sigma^2 C^2) to its clipped sum (Abadi et al. 2016,
Algorithm 1), for the sigma and C the run reports and accounts.

The step's own unit tests (tests/training/test_step.py) check PrivateGradient given a sigma; these check what
``train()`` and ``train_together()`` actually release, whatever they hand the step. A step whose Poisson batch is
empty releases the noise alone: its noisy sum, read by the white-box observer, is exactly the noise. With a
sample rate of 1/200 about a third of the steps are empty, and the sampler's draws (counted here) say which.

Checks, each with a false-alarm probability below 1e-7 (so the file's below 1e-6):
* the sum of squares of the K noise coordinates over (sigma C)^2 lies in the central 1 - 1e-7 interval of
  chi-square(K) (scipy's quantiles); half the noise gives a quarter of that sum, far outside;
* the noise of consecutive empty steps is uncorrelated: their summed coordinate products over (sigma C)^2 is a sum
  of M products of independent standard normals (variance M), held to 5.4 standard deviations (a normal tail of
  7e-8; the sum of thousands of such products is normal to well within that); noise drawn again from the same seed
  at every step correlates fully.

A run given a target epsilon instead of sigma adds the noise of the least sigma that meets the target: that sigma is
found here by bisection on dp_accounting's own RDP accountant for the run's event (Poisson rate q, its steps), and
the run's sigma must meet the target by that accountant and lie within 1e-4 of the bisection's; its empty steps must
carry noise of std sigma C (27,000 coordinates: a variance read to within 4.6 %, so noise of a sigma 5 % off fails).
"""
from __future__ import annotations

import math
import warnings

import dp_accounting
import numpy as np
import pytest
import torch
from scipy import stats

from dpcore.exceptions import DPCoreWarning
from dpcore.training import TrainConfig, train
from dpcore.training.batched import TogetherRun, train_together

FALSE_ALARM = 1e-7


def _sizes(draws: list[tuple[int, int]]) -> list[int]:
    """The size of every Poisson batch drawn (the ``poisson_draws`` fixture's), in order."""
    return [size for _, size in draws]


def _data(n=200, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    return X, (X[:, 0] > 0).astype(int)


CONFIG = TrainConfig(model="linear", epochs=2, batch_size=1, noise_multiplier=3.0, clip_norm=0.5, seed=0)


def _check_pure_noise(noise: list[torch.Tensor], std: float) -> None:
    Z = torch.stack(noise).double().numpy() / std  # one row per empty step
    assert Z.shape[0] >= 50, f"only {Z.shape[0]} empty steps"
    k = Z.size
    total = float(np.square(Z).sum())
    lo, hi = stats.chi2.ppf(FALSE_ALARM / 2, k), stats.chi2.isf(FALSE_ALARM / 2, k)
    assert lo <= total <= hi, (f"the noise of {Z.shape[0]} empty steps has variance {total / k:.4f} (sigma C)^2, "
                               f"outside [{lo / k:.4f}, {hi / k:.4f}]")
    products = float((Z[:-1] * Z[1:]).sum())
    z = stats.norm.isf(FALSE_ALARM / 2)
    assert abs(products) <= z * math.sqrt(Z[:-1].size), \
        f"consecutive steps' noise correlates: {products / Z[:-1].size:.3f}"


def test_a_training_run_adds_fresh_noise_of_std_sigma_c_at_every_step(poisson_draws):
    X, y = _data()
    sums: list[torch.Tensor] = []
    res = train(X, y, CONFIG, n_outputs=2, on_step=lambda i, s: sums.append(s.detach().clone()))
    assert res.noise_multiplier == 3.0 and len(sums) == len(_sizes(poisson_draws)) == res.steps == 400
    _check_pure_noise([s for s, b in zip(sums, _sizes(poisson_draws)) if b == 0], std=3.0 * 0.5)


def test_a_run_trained_together_adds_fresh_noise_of_std_sigma_c_at_every_step(poisson_draws):
    X, y = _data()
    sums: list[torch.Tensor] = []

    def seen(step, runs, noisy):
        assert runs == [0]
        sums.append(noisy[0].detach().clone())

    (res,) = train_together([TogetherRun(X=X, y=y, config=CONFIG, n_outputs=2)], on_step=seen)
    assert res.noise_multiplier == 3.0 and len(sums) == len(_sizes(poisson_draws)) == res.steps == 400
    _check_pure_noise([s for s, b in zip(sums, _sizes(poisson_draws)) if b == 0], std=3.0 * 0.5)


@pytest.mark.parametrize("together", [False, True])
def test_every_record_of_a_run_moves_its_steps_sum_by_at_most_the_clip_norm(together, poisson_draws):
    """Without noise (sigma = 0: a run of infinite epsilon) the released sum is the clipped sum itself: each record's
    gradient clipped to C (Abadi et al. 2016, Algorithm 1), so a step of b records moves by at most b C, and a record
    whose gradient is longer than C moves it by exactly C."""
    X, y = _data()
    X = X * 10.0  # most gradients of the linear model are longer than C = 0.5 (and stay so: tiny steps)
    config = TrainConfig(model="linear", epochs=1, batch_size=1, noise_multiplier=0.0, clip_norm=0.5,
                         learning_rate=1e-6, seed=0)
    sums: list[torch.Tensor] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)  # sigma = 0 is said to give no privacy: known here
        if together:
            train_together([TogetherRun(X=X, y=y, config=config, n_outputs=2)],
                           on_step=lambda step, runs, noisy: sums.append(noisy[0].detach().clone()))
        else:
            train(X, y, config, n_outputs=2, on_step=lambda i, s: sums.append(s.detach().clone()))
    assert len(sums) == len(_sizes(poisson_draws)) == 200
    norms = np.array([float(s.double().norm()) for s in sums])
    b = np.array(_sizes(poisson_draws))
    assert np.all(norms <= b * 0.5 * (1 + 1e-5)), "a step's sum moved by more than its records' clip norms"
    # the clip bites: most one-record steps are a gradient far longer than C, cut to exactly C
    single = norms[b == 1]
    assert single.size >= 50 and np.mean(np.isclose(single, 0.5, rtol=1e-4)) > 0.5


def _rdp_epsilon(sigma: float, q: float, steps: int, delta: float) -> float:
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
    return acc.get_epsilon(delta)


def _least_sigma(target: float, q: float, steps: int, delta: float) -> float:
    """The least sigma whose event spends at most ``target`` by dp_accounting's RDP accountant (bisection in log
    sigma to a relative width of 1e-6)."""
    lo, hi = 0.1, 100.0
    while hi / lo > 1 + 1e-6:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if _rdp_epsilon(mid, q, steps, delta) > target else (lo, mid)
    return hi


@pytest.mark.parametrize("together", [False, True])
def test_a_run_calibrated_to_a_target_adds_the_noise_of_the_least_sigma_meeting_it(together, poisson_draws):
    X, y = _data(d=100)
    config = CONFIG.replace(noise_multiplier=None, target_epsilon=2.0)
    sums: list[torch.Tensor] = []
    if together:
        (res,) = train_together([TogetherRun(X=X, y=y, config=config, n_outputs=2)],
                                on_step=lambda step, runs, noisy: sums.append(noisy[0].detach().clone()))
    else:
        res = train(X, y, config, n_outputs=2, on_step=lambda i, s: sums.append(s.detach().clone()))
    q, steps = 1 / 200, 400
    assert res.sample_rate == pytest.approx(q) and res.steps == steps == len(sums) == len(_sizes(poisson_draws))
    sigma = res.noise_multiplier
    assert _rdp_epsilon(sigma, q, steps, res.delta) <= 2.0
    assert sigma == pytest.approx(_least_sigma(2.0, q, steps, res.delta), rel=1e-4)
    assert res.epsilon == pytest.approx(_rdp_epsilon(sigma, q, steps, res.delta), rel=1e-9) and res.epsilon <= 2.0
    _check_pure_noise([s for s, b in zip(sums, _sizes(poisson_draws)) if b == 0], std=sigma * 0.5)
