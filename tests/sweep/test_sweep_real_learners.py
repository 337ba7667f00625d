"""A tiny sweep over the real ``dpsgd`` and ``erm-objective`` learners (skipped until they are registered)."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.learners import learners
from dpcore.sweep import SweepConfig, run_sweep


@pytest.mark.filterwarnings("ignore::dpcore.exceptions.PrivacyLeakWarning")  # logreg baseline standardises
def test_tiny_real_sweep(tmp_path):
    regs = learners()
    names = [n for n in ("dpsgd", "erm-objective") if n in regs]
    if not names:
        pytest.skip("neither dpsgd nor erm-objective is registered yet")
    params = {"epochs": 2} if "dpsgd" in names else {}
    cfg = SweepConfig(dataset="iris", learners=names, values=[0.5, 4.0], seeds=1, params=params)
    res = run_sweep(cfg, n_jobs=1, cache_dir=tmp_path)
    t = res.table
    swept = t[t.role == "swept"]
    assert len(swept) == 2 * len(names)
    assert swept.accuracy.between(0, 1).all()
    # every private run spent at most its target (calibrated DP-SGD may land a hair below)
    assert (swept.epsilon <= swept.epsilon_target * (1 + 1e-6)).all()
    np.testing.assert_allclose(swept.epsilon, swept.epsilon_target, rtol=0.05)
    assert "majority" in set(t.learner)
    for n in names:
        b = cfg.baseline_for(n)
        if b is not None:
            assert np.isinf(t[t.learner == b].epsilon).all()
    assert run_sweep(cfg, n_jobs=1, cache_dir=tmp_path).n_computed == 0
