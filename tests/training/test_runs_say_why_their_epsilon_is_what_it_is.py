"""Every run says why its epsilon is infinity, or the RDP accountant's, in its own warnings and result: the second
run of a process (the next visitor of a server shared by a class) as the first did, and a run over many epochs once."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.learners import run_learner
from dpcore.runtime.thread_warnings import caught
from dpcore.training import TrainConfig, train

INFINITY = "reported as infinity"
HANDED_OVER = "from the RDP accountant instead"


def _said(seen, text: str) -> list[str]:
    return [str(w.message) for w in seen if text in str(w.message)]


@pytest.mark.parametrize("params,text", [
    ({"noise_multiplier": 1e-160}, INFINITY),
    ({"noise_multiplier": 1e-6, "accountant": "pld"}, HANDED_OVER),
], ids=["a-noise-too-small-for-any-guarantee", "a-pld-grid-too-large"])
def test_two_dpsgd_runs_in_one_process_each_say_why_and_keep_it_in_their_result(params, text):
    for seed in (0, 1):
        with caught() as seen:
            res = run_learner("dpsgd", "iris", seed=seed, params={**params, "epochs": 40})
        assert len(_said(seen, text)) == 1, seed  # once for 40 epochs, each read by the odometer
        assert _said(seen, text)[0] in res.extras["warnings"]  # a run served from a cache says it too
        if text == INFINITY:
            assert res.epsilon == float("inf")
        else:
            assert res.extras["accountant"] == "rdp"


def test_a_run_with_its_own_noise_keeps_the_odometers_reason_once_among_its_warnings():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    config = TrainConfig(model="linear", epochs=30, batch_size=20, noise_multiplier=1e-160, max_epsilon=1e9)
    with caught() as seen:
        res = train(X, y, config, n_outputs=2)
    assert len(_said(seen, INFINITY)) == 1
    assert [w for w in res.warnings if INFINITY in w] == _said(seen, INFINITY)
