"""The same sweep through a Dask cluster (joblib's Dask backend) equals the local one."""
from __future__ import annotations

import pandas as pd
import pytest

from dpcore.cli import main
from dpcore.sweep import SweepConfig, run_sweep

distributed = pytest.importorskip("distributed")


def test_local_cluster_equals_local(fakes, tmp_path, call_log):
    cfg = SweepConfig(dataset="wine", learners=["fake-dp"], values=[0.3, 3.0], seeds=2,
                      providers=("sweep_fake_learners",), params={"call_log": call_log.path})
    local = run_sweep(cfg, n_jobs=1, cache_dir=tmp_path / "local")
    n_local = call_log()
    # a real worker process: the fake learners reach it through the config's provider module
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        events = []
        remote = run_sweep(cfg, scheduler=cluster.scheduler_address, cache_dir=tmp_path / "dask",
                           on_result=events.append)
        # the command line's --scheduler goes the same way
        out = tmp_path / "cli.csv"
        assert main(["sweep", "--dataset", "wine", "--algorithms", "fake-dp", "--values", "0.3,3", "--seeds", "2",
                     "--provider", "sweep_fake_learners", "--set", f"call_log={call_log.path}", "--no-cache",
                     "--scheduler", cluster.scheduler_address, "--out", str(out)]) == 0
    assert call_log() == 3 * n_local  # every run computed again on the worker, twice
    cli = pd.read_csv(out)
    assert len(cli) == len(local.table)
    pd.testing.assert_series_equal(cli.accuracy, local.table.accuracy, check_names=False)
    assert len(events) == len(local.table)
    cols = ["seconds", "cached"]
    pd.testing.assert_frame_equal(local.table.drop(columns=cols), remote.table.drop(columns=cols))
    # the results were cached on this machine: reopening needs no cluster
    again = run_sweep(cfg, cache_dir=tmp_path / "dask")
    assert again.n_computed == 0
