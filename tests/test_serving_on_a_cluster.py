"""The classroom's shared runs executed on a Dask cluster: live progress comes back, a run nobody follows stops."""
from __future__ import annotations

import sys
import threading
import time

import pytest

from dpcore.exceptions import DPValueError
from dpcore.runtime.serving import RunCancelled, SharedRuns

distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the worker process cannot import this test file
#: the module's tests share one local cluster (a module fixture): one test process runs them all
pytestmark = pytest.mark.xdist_group("dask-cluster")


def _steps(n: int, name: str):
    """A run of ``n`` steps that records, in a Dask Variable, the last step it reached on the worker."""
    def compute(progress):
        import os

        from distributed import Variable

        reached = Variable(name)
        for i in range(n):
            reached.set(i)
            progress({"step": i, "pid": os.getpid()})
            time.sleep(0.02)
        return {"steps": n, "pid": os.getpid()}
    return compute


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as c:
        yield c


def test_a_shared_run_executes_on_the_cluster_and_streams_its_progress_to_every_asker(cluster):
    import os

    runs = SharedRuns(workers=2, scheduler=cluster.scheduler_address)
    seen: dict[str, list] = {"first": [], "second": []}
    results = {}

    def ask(who):
        results[who] = runs.get_or_run(("steps", 12), _steps(12, "reached-a"), on_progress=seen[who].append)

    first = threading.Thread(target=ask, args=("first",))
    first.start()
    while not seen["first"]:
        time.sleep(0.01)
    ask("second")  # joins the run in flight
    first.join()
    value, how = results["first"]
    assert value["steps"] == 12 and value["pid"] != os.getpid()  # computed in the worker's process
    assert how == "computed" and results["second"][1] == "joined"
    assert [e["step"] for e in seen["first"]] == list(range(12)) == [e["step"] for e in seen["second"]]
    assert runs.get_or_run(("steps", 12), _steps(12, "unused"))[1] == "cached"
    runs.close()


def test_a_run_whose_visitor_leaves_is_stopped_on_the_worker(cluster):
    runs = SharedRuns(workers=1, scheduler=cluster.scheduler_address)

    def leave_after_three(event):
        if event["step"] >= 2:
            raise KeyboardInterrupt("the visitor closed the tab")

    with pytest.raises(KeyboardInterrupt):
        runs.get_or_run(("steps", 500), _steps(500, "reached-b"), on_progress=leave_after_three)
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        reached = distributed.Variable("reached-b", client=client)
        for _ in range(200):  # the worker stops at its next progress call once told
            if runs.status()["running"] == 0:
                break
            time.sleep(0.05)
        assert reached.get() < 499
    assert runs.status() == {"queued": 0, "running": 0, "kept": 0, "workers": 1}
    with pytest.raises(RunCancelled):  # nothing kept: asking again starts afresh, and may be left again
        runs.get_or_run(("steps", 500), _steps(500, "reached-c"),
                        on_progress=lambda e: (_ for _ in ()).throw(RunCancelled("gone")))
    runs.close()


def test_an_unreachable_scheduler_is_a_clear_error():
    with pytest.raises(DPValueError, match="Dask scheduler"):
        SharedRuns(workers=1, scheduler="tcp://127.0.0.1:9")


def test_a_run_on_a_cluster_without_any_worker_fails_with_a_message_instead_of_waiting_for_good():
    from dpcore.runtime.remote import run_on_cluster

    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None) as empty, \
            distributed.Client(empty, set_as_default=False) as client:
        with pytest.raises(DPValueError, match="no worker for 1 s"):
            run_on_cluster(client, _steps(3, "never-started"), lambda event: None, no_worker_seconds=1)


def _needs_dpcore(progress):
    raise ModuleNotFoundError("No module named 'dpcore'", name="dpcore")  # what a worker without the project raises


def test_a_cluster_that_cannot_import_dpcore_is_told_where_to_install_it_and_other_errors_pass_through(cluster):
    from dpcore.runtime.remote import run_on_cluster

    with distributed.Client(cluster, set_as_default=False) as client:
        with pytest.raises(DPValueError, match="cannot import dpcore.*PYTHONPATH.*or unset DPCORE_SCHEDULER"):
            run_on_cluster(client, _needs_dpcore, lambda event: None)
        with pytest.raises(ZeroDivisionError):  # any other failure of the run is the run's own error
            run_on_cluster(client, lambda progress: 1 / 0, lambda event: None)
