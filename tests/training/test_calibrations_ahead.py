"""Noise calibrations worked out ahead by a second process give exactly the noise, and the warnings, of calibrating
in this one; a sweep over a fine ladder of epsilons gives the same table with and without them."""
from __future__ import annotations

import time

import pytest

from dpcore.accounting.calibration import dpsgd_noise_multiplier
from dpcore.runtime.ahead import CalibrationsAhead
from dpcore.training import engine


def _wait_for(ahead: CalibrationsAhead, key: tuple, timeout: float = 60.0):
    end = time.time() + timeout
    while time.time() < end:
        if (answer := ahead.answer(key)) is not None:
            return answer
        time.sleep(0.05)
    raise AssertionError(f"no answer for {key} within {timeout} s")


def test_the_other_process_answers_exactly_what_this_one_computes_with_its_warnings():
    keys = [(1.0, 1e-5, 0.01, 1000, "rdp"), (0.5, 1e-5, 0.1, 101, "rdp"), (3.0, 1e-6, 0.05, 400, "pld"),
            (1e9, 1e-5, 0.01, 10, "rdp")]  # the last is met by the least noise searched: a warning says so
    with CalibrationsAhead(keys) as ahead:
        answers = [_wait_for(ahead, k) for k in keys]
    for key, (sigma, said) in zip(keys, answers):
        with _recorded() as here:
            assert sigma == dpsgd_noise_multiplier(*key)  # bit for bit
        assert [(c, m) for c, m in said] == [(w.category, str(w.message)) for w in here]
    assert answers[-1][1] and "least noise searched" in answers[-1][1][0][1]


def _recorded():
    """Every warning raised inside, repeats included."""
    import warnings

    class _Recorder(warnings.catch_warnings):
        def __init__(self):
            super().__init__(record=True)

        def __enter__(self):
            seen = super().__enter__()
            warnings.simplefilter("always")
            return seen
    return _Recorder()


def test_a_key_the_other_process_cannot_calibrate_is_left_to_this_one():
    bad = (1.0, 0.0, 0.01, 100, "rdp")  # delta 0: the Gaussian cannot meet it
    good = (1.0, 1e-5, 0.01, 100, "rdp")
    with CalibrationsAhead([bad, good]) as ahead:
        _wait_for(ahead, good)
        assert ahead.answer(bad) is None
    from dpcore.exceptions import DPValueError

    with pytest.raises(DPValueError, match="delta"):
        dpsgd_noise_multiplier(*bad)


def test_a_fine_epsilon_ladder_trains_the_same_runs_with_its_calibrations_worked_out_ahead(monkeypatch):
    import numpy as np

    from dpcore.sweep import SweepConfig, run_sweep

    values = list(np.geomspace(0.3, 8.0, 12))
    cfg = SweepConfig(dataset="breast_cancer", learners=["dpsgd"], values=values, seeds=1, include_baselines=False,
                      params={"epochs": 2})
    engine._SIGMAS.clear()
    ahead = run_sweep(cfg, n_jobs=1, use_cache=False)
    assert any("worked out by a second process" in n for n in ahead.notes), ahead.notes
    engine._SIGMAS.clear()
    monkeypatch.setattr(engine, "AHEAD_MIN", 10**9)
    here = run_sweep(cfg, n_jobs=1, use_cache=False)
    assert not any("second process" in n for n in here.notes)
    cols = ["value", "seed", "accuracy", "epsilon", "noise_multiplier"]
    a = ahead.table[cols].sort_values(["value", "seed"]).reset_index(drop=True)
    b = here.table[cols].sort_values(["value", "seed"]).reset_index(drop=True)
    assert a.equals(b)  # the same noise multipliers, bit for bit, so the same runs
    assert not engine._AHEAD  # the other process was stopped and forgotten
