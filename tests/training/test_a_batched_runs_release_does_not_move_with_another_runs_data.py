"""Runs trained together (dpcore.training.batched) share one batched computation, never each other's data: what run
k releases at every step (its noisy clipped sum, as a white-box auditor reads it) and its final weights are a
function of its own rows, seed and settings only (Abadi et al. 2016, Algorithm 1, run by run). Changing the rows of
another run of the batch by a record replaced with an extreme one must leave them the same to the last bit (every
batch and shape of the computation stays as it was). A record added changes that run's sample rate, its batches and
so the padding of the steps it shares a block with: the other runs' numbers may then differ by the rounding of sums
taken over longer padded rows (the padding adds exact zeros), never by more (1e-5 of their size here; one record's
clipped gradient moves a sum by up to C). Checked for twin runs (same seed, rows and rate: one batch drawn for both, in
a block of their own) and for a run computed in one block with the changed run (its rows gathered, padded and
multiplied beside the other run's), on both dense models."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from dpcore.exceptions import DPCoreWarning
from dpcore.training import TrainConfig
from dpcore.training.batched import TogetherRun, train_together

RNG = np.random.default_rng(0)
X_A = RNG.normal(size=(120, 8)).astype(np.float32)
Y_A = (X_A[:, 0] > 0).astype(int)
X_B = RNG.normal(size=(90, 8)).astype(np.float32)
Y_B = (X_B[:, 1] > 0).astype(int)
X_REPLACED, Y_REPLACED = X_B.copy(), Y_B.copy()
X_REPLACED[5], Y_REPLACED[5] = 100.0 * X_B[5], 1 - Y_B[5]
X_ADDED = np.vstack([X_B, 50.0 * RNG.normal(size=(1, 8)).astype(np.float32)])
Y_ADDED = np.append(Y_B, 1)


def _others_released(X_other, y_other, model: str):
    """The noisy sums and final weights of runs 0 and 2 (twins: seed 1, the same rows and rate) and run 3 (computed in
    one block with run 1) beside run 1 on ``(X_other, y_other)``."""
    common = dict(model=model, hidden=16, epochs=2, batch_size=30)
    configs = [TrainConfig(noise_multiplier=1.0, clip_norm=0.7, seed=1, **common),
               TrainConfig(model=model, hidden=16, epochs=3, batch_size=20, noise_multiplier=0.5, clip_norm=2.0,
                           momentum=0.5, seed=2),
               TrainConfig(noise_multiplier=2.0, clip_norm=3.0, ema=0.9, seed=1, **common),
               TrainConfig(noise_multiplier=0.8, clip_norm=1.0, seed=3, **common)]
    data = [(X_A, Y_A), (X_other, y_other), (X_A, Y_A), (X_A, Y_A)]
    sums: dict[int, list[torch.Tensor]] = {0: [], 2: [], 3: []}

    def seen(step, runs, noisy):
        for j, k in enumerate(runs):
            if k in sums:
                sums[k].append(noisy[j].clone())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        results = train_together([TogetherRun(X, y, c, n_outputs=2) for (X, y), c in zip(data, configs)],
                                 on_step=seen)
    return sums, [results[k].state for k in sums]


@pytest.mark.parametrize("model", ["linear", "mlp"])
def test_a_runs_noisy_sums_and_weights_do_not_move_with_another_runs_rows(model):
    sums, states = _others_released(X_B, Y_B, model)
    assert len(sums[0]) == len(sums[2]) == len(sums[3]) == 8
    for X_other, y_other, exact in ((X_REPLACED, Y_REPLACED, True), (X_ADDED, Y_ADDED, False)):
        other_sums, other_states = _others_released(X_other, y_other, model)
        for k in sums:
            assert len(other_sums[k]) == len(sums[k])
            for a, b in zip(sums[k], other_sums[k]):
                assert torch.equal(a, b) if exact else torch.allclose(a, b, rtol=1e-5, atol=1e-5 * float(a.norm())), \
                    f"run {k}'s noisy sum moved with another run's rows"
        for state, other in zip(states, other_states):
            for key in state:
                assert np.array_equal(state[key], other[key]) if exact else np.allclose(state[key], other[key],
                                                                                          rtol=1e-5, atol=1e-6)
