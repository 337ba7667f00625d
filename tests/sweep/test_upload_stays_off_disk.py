"""A sweep of an uploaded file writes nothing to the sweeps' cache: results computed from a visitor's file stay in
memory, never on disk."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.datasets import load_csv
from dpcore.sweep import SweepConfig, from_upload, run_sweep


def _upload():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(80, 2))
    text = "a,b,y\n" + "\n".join(f"{a:.4f},{b:.4f},{int(a > 0)}" for a, b in x)
    return load_csv(text, label_column="y", bounds="*=-5:5")


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_sweep_of_an_upload_leaves_the_cache_empty(tmp_path, jobs):
    config = SweepConfig(dataset=_upload(), learners=("erm-objective",), values=(1.0, 10.0), seeds=1)
    assert from_upload(config)
    res = run_sweep(config, n_jobs=jobs, cache_dir=tmp_path)
    assert len(res.table) == 4 and res.n_cached == 0
    assert list(tmp_path.rglob("*")) == []


def test_a_registry_sweep_is_still_cached(tmp_path):
    config = SweepConfig(dataset="iris", learners=("majority",), axis="train_fraction", values=(1.0,), seeds=1,
                         include_baselines=False)
    assert not from_upload(config)
    run_sweep(config, n_jobs=1, cache_dir=tmp_path)
    assert len(list(tmp_path.rglob("*.json"))) == 1
