"""The Clustering, Classical-models and Trade-off sweeps are heavy work of the server: they wait for a free worker
of its bounded run queue, are computed once for every visitor asking the same, and stop when nobody waits."""
from __future__ import annotations

import threading
import time

import pytest

from dpcore.runtime import serving
from dpcore.runtime.serving import SharedRuns

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture
def one_worker(monkeypatch):
    """The server's run store with a single worker (as on a 2-core machine), fresh for the test."""
    runs = SharedRuns(workers=1)
    monkeypatch.setattr(serving, "_shared", runs)
    yield runs
    runs.close()


@pytest.fixture
def counted_runs(monkeypatch):
    """Every learner run of the Clustering and Classical sweeps, counted: their cost estimates (dpcore.ui.models) and
    their runs (through the sweep engine)."""
    import dpcore.sweep.batching as batching
    import dpcore.ui.models as models

    calls = []
    real = models.run_learner

    def run_learner(name, *args, **kwargs):
        calls.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(models, "run_learner", run_learner)
    monkeypatch.setattr(batching, "run_learner", run_learner)  # where the sweep engine makes each run
    return calls


def _occupy(runs: SharedRuns) -> tuple[threading.Thread, threading.Event]:
    """A run holding the only worker until the returned gate is set."""
    gate = threading.Event()
    busy = threading.Thread(target=runs.get_or_run, args=("train", lambda progress: gate.wait(30)))
    busy.start()
    time.sleep(0.3)
    return busy, gate


def test_a_clustering_sweep_waits_for_a_free_worker_and_is_computed_once_for_two_visitors(one_worker, counted_runs):
    from dpcore.ui.models import cluster_sweep, queued_sweep

    busy, gate = _occupy(one_worker)
    out = {}
    args = ("iris", 3, None, (0.5, 2.0), 1, 0, "replace-one", ())

    def visit(name):
        out[name] = queued_sweep(cluster_sweep, *args, what="the sweep")

    visitors = [threading.Thread(target=visit, args=(n,)) for n in "ab"]
    for v in visitors:
        v.start()
    time.sleep(0.6)
    assert counted_runs == []  # nothing runs beside the run that holds the worker
    assert one_worker.status()["queued"] == 1  # the two visitors wait for one sweep
    gate.set()
    for t in (busy, *visitors):
        t.join(60)
    # each learner's cost estimated once before any run (stopped at its first work check), then Lloyd once and the
    # two private methods at each ε: once in all for both visitors
    assert len(counted_runs) == 3 + 1 * (1 + 2 * 2)
    assert out["a"].equals(out["b"])
    assert len(queued_sweep(cluster_sweep, *args, what="the sweep")) == len(out["a"])  # from the store
    assert len(counted_runs) == 8


def test_a_classical_sweep_whose_visitors_all_left_stops(one_worker, counted_runs, monkeypatch):
    import dpcore.sweep.batching as batching
    from dpcore.runtime.serving import RunCancelled
    from dpcore.ui.models import classical_sweep

    counted = batching.run_learner

    def slow(*args, **kwargs):  # 70 runs of 0.05 s: the visitor leaves long before the sweep could end
        time.sleep(0.05)
        return counted(*args, **kwargs)

    monkeypatch.setattr(batching, "run_learner", slow)

    class Left(Exception):
        pass

    def leave_after_two(event):
        if event.done >= 2:
            raise Left

    stopped = threading.Event()

    def sweep(progress):
        try:
            return classical_sweep("breast_cancer", ("erm-output", "erm-objective"), "logreg", "none", "auto",
                                   (0.1, 0.5, 1.0, 2.0, 5.0, 10.0), 5, 0, progress=progress)
        except RunCancelled:
            stopped.set()
            raise

    with pytest.raises(Left):
        one_worker.get_or_run(("classical_sweep", "left"), sweep, on_progress=leave_after_two)
    assert stopped.wait(30)
    assert len(counted_runs) < 5 * (2 * 6 + 2)  # stopped long before its 70 runs
    assert one_worker.status()["kept"] == 0


def test_each_sweep_reports_its_runs_in_order_up_to_its_total():
    from dpcore.ui.models import RunsDone, classical_sweep, cluster_sweep, size_sweep

    for sweep, args in (
        (cluster_sweep, ("iris", 3, None, (1.0,), 2, 0)),
        (classical_sweep, ("iris", ("erm-output",), "logreg", "none", "auto", (0.5, 1.0), 2, 0)),
        (size_sweep, ("iris", "erm-output", "logreg", "none", "auto", 1.0, (0.5, 1.0), 1, 0)),
    ):
        seen = []
        sweep(*args, progress=seen.append)
        total = seen[0].total
        assert seen == [RunsDone(i, total) for i in range(1, total + 1)], sweep.__name__


def test_two_visitors_pressing_run_on_the_same_tradeoff_sweep_follow_one_computation(one_worker, monkeypatch,
                                                                                      tmp_path):
    import streamlit as st

    import dpcore.sweep.engine as engine
    from dpcore.sweep import SweepConfig
    from dpcore.ui.sweep import run_live

    gate, runs_made = threading.Event(), []
    real = engine.execute_run

    def execute_run(run, **kwargs):
        gate.wait(30)
        runs_made.append(run.key)
        return real(run, **kwargs)

    monkeypatch.setattr(engine, "execute_run", execute_run)
    config = SweepConfig(dataset="iris", learners=("erm-output",), values=(0.5, 2.0), seeds=1)
    out = {}

    def press_run(name):
        out[name] = run_live(config, n_jobs=1, scheduler=None, progress_slot=st.empty(), chart_slot=st.empty(),
                             metric="accuracy", log_x=True, band="minmax", cache_dir=tmp_path)

    visitors = [threading.Thread(target=press_run, args=(n,)) for n in "ab"]
    for v in visitors:
        v.start()
        time.sleep(0.3)
    assert one_worker.status() == {"queued": 0, "running": 1, "kept": 0, "workers": 1}  # one sweep, two followers
    gate.set()
    for v in visitors:
        v.join(60)
    assert len(runs_made) == len(set(runs_made)) == len(config.runs())  # each run once, not once per visitor
    assert out["a"].table.equals(out["b"].table)
    assert one_worker.status()["kept"] == 0  # the sweep's own cache keeps it (it may hold an upload)
