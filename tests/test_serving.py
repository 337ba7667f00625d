"""Runs shared by every visitor of a server: computed once, joined live, queued, cancelled when nobody waits."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

from dpcore.exceptions import DPValueError
from dpcore.runtime import serving
from dpcore.runtime.serving import RunCancelled, SharedRuns, cap_run_threads, default_run_threads, default_workers

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _counting(value, events=(), gate: threading.Event | None = None, calls: list | None = None):
    def compute(progress):
        if calls is not None:
            calls.append(value)
        for e in events:
            if gate is not None:
                gate.wait(5)
            progress(e)
        return value
    return compute


def test_two_visitors_asking_the_same_run_share_one_computation_and_its_progress():
    runs = SharedRuns(workers=2)
    gate, calls, out, seen = threading.Event(), [], {}, {"a": [], "b": []}

    def ask(name):
        out[name] = runs.get_or_run(("train", 1), _counting(42, events=[1, 2, 3], gate=gate, calls=calls),
                                    on_progress=seen[name].append)

    a = threading.Thread(target=ask, args=("a",))
    a.start()
    time.sleep(0.3)  # a's run is waiting at its gate
    b = threading.Thread(target=ask, args=("b",))
    b.start()
    time.sleep(0.3)
    gate.set()
    a.join(5)
    b.join(5)
    assert calls == [42]  # trained once
    assert {out["a"], out["b"]} == {(42, "computed"), (42, "joined")}
    assert seen["a"] == seen["b"] == [1, 2, 3]  # both pages drew every progress event, in order
    assert runs.get_or_run(("train", 1), _counting(0)) == (42, "cached")


def test_watchers_count_the_visitors_following_started_runs_not_queued_ones():
    runs = SharedRuns(workers=1)
    gate = threading.Event()
    threads = [threading.Thread(target=runs.get_or_run, args=("shared", _counting(1, events=[0], gate=gate)))
               for _ in range(3)]
    threads.append(threading.Thread(target=runs.get_or_run, args=("queued", _counting(2))))
    for t in threads:
        t.start()
        time.sleep(0.2)
    assert runs.watching() == 3  # three follow the running one; the queued run's visitor draws nothing yet
    gate.set()
    for t in threads:
        t.join(5)
    assert runs.watching() == 0


def test_the_server_wide_watcher_count_is_zero_before_any_run(monkeypatch):
    monkeypatch.setattr(serving, "_shared", None)
    assert serving.watchers() == 0  # and asking does not make the store (which would cap this process's threads)
    assert serving._shared is None


def test_finished_results_are_bounded_least_recently_asked_first_out():
    runs = SharedRuns(max_entries=2, workers=1)
    calls = []
    for k in (1, 2):
        runs.get_or_run(k, _counting(k, calls=calls))
    runs.get_or_run(1, _counting(1, calls=calls))  # 1 is now the most recent
    runs.get_or_run(3, _counting(3, calls=calls))  # evicts 2
    assert runs.get_or_run(1, _counting(1, calls=calls))[1] == "cached"
    assert runs.get_or_run(2, _counting(2, calls=calls))[1] == "computed"
    assert calls == [1, 2, 3, 2]
    assert runs.status()["kept"] == 2


def test_an_error_reaches_every_asker_and_is_not_kept():
    runs = SharedRuns(workers=1)

    def broken(progress):
        raise DPValueError("epochs must be at most 10")

    with pytest.raises(DPValueError, match="epochs must be at most 10"):
        runs.get_or_run("k", broken)
    assert runs.get_or_run("k", _counting(7)) == (7, "computed")


def test_a_queued_visitor_hears_how_many_runs_are_ahead():
    runs = SharedRuns(workers=1)
    gate = threading.Event()
    heard = {"second": [], "third": []}
    first = threading.Thread(target=runs.get_or_run, args=("first", _counting(1, events=[0], gate=gate)))
    first.start()
    time.sleep(0.3)
    second = threading.Thread(target=runs.get_or_run, args=("second", _counting(2)),
                              kwargs={"on_queued": heard["second"].append})
    second.start()
    time.sleep(0.3)
    third = threading.Thread(target=runs.get_or_run, args=("third", _counting(3)),
                             kwargs={"on_queued": heard["third"].append})
    third.start()
    time.sleep(0.5)
    assert runs.status()["queued"] == 2 and runs.status()["running"] == 1
    gate.set()
    for t in (first, second, third):
        t.join(5)
    assert heard["second"][0] == 0 and heard["second"][-1] is None  # next in line, then started
    assert heard["third"][0] == 1 and heard["third"][-1] is None  # one run ahead, then next, then started
    assert runs.status() == {"queued": 0, "running": 0, "kept": 3, "workers": 1}


class _Left(Exception):
    """A visitor's page stopped (Streamlit raises in the script thread when the visitor reruns or leaves)."""


def test_a_run_nobody_follows_any_more_is_stopped_and_not_kept():
    runs = SharedRuns(workers=1)
    steps, stopped = [], threading.Event()

    def long(progress):
        try:
            for i in range(1000):
                progress(i)
                steps.append(i)
                time.sleep(0.01)
        except RunCancelled:
            stopped.set()
            raise
        return "finished"

    def leave_after_three(event):
        if event >= 3:
            raise _Left

    with pytest.raises(_Left):
        runs.get_or_run("long", long, on_progress=leave_after_three)
    assert stopped.wait(5)
    assert len(steps) < 1000
    assert runs.status()["kept"] == 0


def test_a_queued_run_whose_visitor_left_never_starts():
    runs = SharedRuns(workers=1)
    gate, calls = threading.Event(), []
    first = threading.Thread(target=runs.get_or_run, args=("first", _counting(1, events=[0], gate=gate)))
    first.start()
    time.sleep(0.3)

    def leave(ahead):
        raise _Left

    with pytest.raises(_Left):
        runs.get_or_run("queued", _counting(2, calls=calls), on_queued=leave)
    gate.set()
    first.join(5)
    time.sleep(0.3)
    assert calls == []
    assert runs.status()["queued"] == 0


def test_workers_come_from_the_environment_or_leave_a_core_free(monkeypatch):
    monkeypatch.setenv("DPCORE_RUN_WORKERS", "3")
    assert default_workers() == 3
    monkeypatch.setenv("DPCORE_RUN_WORKERS", "many")
    with pytest.raises(DPValueError, match="DPCORE_RUN_WORKERS must be a whole number"):
        default_workers()
    monkeypatch.setenv("DPCORE_RUN_WORKERS", "0")
    with pytest.raises(DPValueError, match="at least 1"):
        default_workers()
    monkeypatch.delenv("DPCORE_RUN_WORKERS")
    assert default_workers() >= 1


def test_each_run_gets_the_cores_left_after_one_for_the_pages_shared_among_the_workers(monkeypatch):
    monkeypatch.delenv("DPCORE_RUN_THREADS", raising=False)
    monkeypatch.setattr(serving.os, "cpu_count", lambda: 8)
    assert default_run_threads(3) == 2 and default_run_threads(1) == 7 and default_run_threads(7) == 1
    monkeypatch.setattr(serving.os, "cpu_count", lambda: 2)
    assert default_run_threads(1) == 1
    monkeypatch.setenv("DPCORE_RUN_THREADS", "3")
    assert default_run_threads(1) == 3
    monkeypatch.setenv("DPCORE_RUN_THREADS", "all")
    with pytest.raises(DPValueError, match="DPCORE_RUN_THREADS must be a whole number"):
        default_run_threads(1)


def test_capping_run_threads_holds_torch_and_the_blas_pools_to_the_cap():
    import torch
    from threadpoolctl import threadpool_info

    before = torch.get_num_threads()
    try:
        assert cap_run_threads(1) == 1
        assert torch.get_num_threads() == 1
        assert all(pool["num_threads"] == 1 for pool in threadpool_info())
    finally:
        torch.set_num_threads(before)
        serving._thread_limits.restore_original_limits()


def test_finished_results_survive_a_restart_and_a_damaged_entry_is_computed_again(tmp_path):
    calls = []

    def compute(progress):
        calls.append(1)
        return {"accuracy": 0.9}

    first = SharedRuns(workers=1, directory=tmp_path)
    assert first.get_or_run(("train", "iris", 0), compute) == ({"accuracy": 0.9}, "computed")
    first.close()
    restarted = SharedRuns(workers=1, directory=tmp_path)  # a new server process, the same cache directory
    assert restarted.get_or_run(("train", "iris", 0), compute) == ({"accuracy": 0.9}, "cached")
    assert len(calls) == 1
    (entry,) = tmp_path.glob("*/*.pkl")
    entry.write_bytes(b"not a pickle")
    again = SharedRuns(workers=1, directory=tmp_path)
    assert again.get_or_run(("train", "iris", 0), compute) == ({"accuracy": 0.9}, "computed")
    assert len(calls) == 2


def test_a_result_on_disk_is_not_shown_once_the_code_has_changed(tmp_path, monkeypatch):
    calls = []

    def compute(progress):
        calls.append(1)
        return len(calls)

    first = SharedRuns(workers=1, directory=tmp_path)
    assert first.get_or_run(("train", "iris", 0), compute) == (1, "computed")
    first.close()
    monkeypatch.setattr(serving, "source_digest", lambda: "another version of dpcore")
    restarted = SharedRuns(workers=1, directory=tmp_path)
    assert restarted.get_or_run(("train", "iris", 0), compute) == (2, "computed")


def test_the_code_version_naming_stored_results_covers_every_folder_of_dpcore(tmp_path):
    import dpcore

    # the whole package, not the runtime/ folder serving.py sits in: a change to the training or attack code must
    # also retire the results it computed
    assert serving.DPCORE_ROOT == pathlib.Path(dpcore.__file__).resolve().parent
    (tmp_path / "training").mkdir()
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "serving.py").write_text("x = 1\n")
    (tmp_path / "training" / "dpsgd.py").write_text("noise = 1.0\n")
    before = serving.tree_digest(tmp_path)
    (tmp_path / "training" / "dpsgd.py").write_text("noise = 2.0\n")
    assert serving.tree_digest(tmp_path) != before


def test_inputs_without_a_stable_text_are_kept_in_memory_only(tmp_path):
    runs = SharedRuns(workers=1, directory=tmp_path)
    key = ("train", object())  # its repr holds a memory address, different after a restart
    assert runs.get_or_run(key, lambda progress: 1) == (1, "computed")
    assert runs.get_or_run(key, lambda progress: 2) == (1, "cached")
    assert not list(tmp_path.glob("*/*.pkl"))


def test_the_disk_keeps_at_most_max_files_results(tmp_path):
    runs = SharedRuns(workers=1, directory=tmp_path, max_files=3)
    for i in range(6):
        runs.get_or_run(("run", i), lambda progress, i=i: i)
    assert len(list(tmp_path.glob("*/*.pkl"))) == 3


def test_clearing_forgets_the_results_on_disk_too(tmp_path):
    runs = SharedRuns(workers=1, directory=tmp_path)
    runs.get_or_run(("run", 1), lambda progress: 1)
    runs.clear()
    assert not list(tmp_path.glob("*/*.pkl"))
    assert SharedRuns(workers=1, directory=tmp_path).get_or_run(("run", 1), lambda progress: 2) == (2, "computed")


def test_the_command_line_trains_on_the_app_servers_threads_and_restores_them(monkeypatch):
    import torch

    import dpcore.cli.train as cli_train
    from dpcore.cli import main

    monkeypatch.setenv("DPCORE_RUN_THREADS", "1")
    seen, original = [], cli_train.run_learner

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(cli_train, "run_learner", spy)
    before = torch.get_num_threads()
    assert main(["train", "--dataset", "iris", "--algorithm", "dpsgd", "--json"]) == 0
    # what a page's run gets on this server (the run, then the majority class it is measured against)
    assert seen and set(seen) == {default_run_threads(default_workers())} == {1}
    assert torch.get_num_threads() == before


def test_a_bad_server_setting_is_found_before_any_run(monkeypatch):
    from dpcore.runtime.serving import settings_problem

    monkeypatch.setenv("DPCORE_RUN_WORKERS", "two")
    assert "DPCORE_RUN_WORKERS must be a whole number" in settings_problem()
    monkeypatch.setenv("DPCORE_RUN_WORKERS", "1")
    monkeypatch.setenv("DPCORE_RUN_THREADS", "0")
    assert "DPCORE_RUN_THREADS must be at least 1" in settings_problem()
    monkeypatch.delenv("DPCORE_RUN_THREADS")
    monkeypatch.setenv("DPCORE_MAX_RUN_MEMORY", "lots")  # the work budget's settings too
    assert "DPCORE_MAX_RUN_MEMORY takes a number of bytes" in settings_problem()
    monkeypatch.setenv("DPCORE_MAX_RUN_MEMORY", "4GB")
    assert settings_problem() is None


def test_the_uploader_states_the_limit_the_app_reads():
    import pathlib

    import tomllib

    from dpcore.datasets.csv_upload import MAX_CSV_BYTES

    config = tomllib.loads((pathlib.Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 2**20 == MAX_CSV_BYTES  # not Streamlit's 200 MB beside a 50 MiB limit
    assert config["browser"]["gatherUsageStats"] is False


def test_work_not_to_be_kept_is_shared_while_it_runs_and_computed_again_afterwards(tmp_path):
    runs = SharedRuns(workers=2, directory=tmp_path)
    gate, calls, out = threading.Event(), [], {}

    def ask(name):
        out[name] = runs.get_or_run("sweep", _counting(7, events=[1], gate=gate, calls=calls), keep=False)

    threads = [threading.Thread(target=ask, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
        time.sleep(0.3)
    gate.set()
    for t in threads:
        t.join(5)
    assert calls == [7] and {out["a"], out["b"]} == {(7, "computed"), (7, "joined")}  # one run in flight
    assert runs.status()["kept"] == 0 and not list(tmp_path.glob("*/*.pkl"))  # neither in memory nor on disk
    assert runs.get_or_run("sweep", _counting(7, calls=calls), keep=False) == (7, "computed")
    assert calls == [7, 7]


def test_work_marked_to_run_here_stays_on_this_machine_when_the_store_has_a_cluster(monkeypatch):
    runs = SharedRuns(workers=1)
    runs._client = object()  # a cluster the store would otherwise send its runs to
    shipped = []
    monkeypatch.setattr(
        "dpcore.runtime.remote.run_on_cluster", lambda client, compute, progress: shipped.append(1) or -1
    )
    assert runs.get_or_run("sweep", _counting(3), here=True) == (3, "computed")
    assert shipped == []
    assert runs.get_or_run("train", _counting(4)) == (-1, "computed")  # the others still go to the cluster
    assert shipped == [1]
    runs._client = None


def test_the_server_log_says_when_each_run_starts_and_how_it_ended_without_its_inputs():
    runs = SharedRuns(workers=1)
    lines = []
    runs.log = lines.append
    runs.get_or_run(("train", "secret-input"), _counting(1, events=[0]))
    with pytest.raises(ZeroDivisionError):
        runs.get_or_run(("audit", 2), lambda progress: 1 / 0)

    def leave(event):
        raise _Left

    def long(progress):
        for i in range(1000):
            progress(i)
            time.sleep(0.01)

    with pytest.raises(_Left):
        runs.get_or_run(("sweep", 3), long, on_progress=leave)
    deadline = time.time() + 5
    while len(lines) < 6 and time.time() < deadline:
        time.sleep(0.05)
    text = "\n".join(lines)
    assert [line.split(" ", 2)[1] for line in lines] == [lines[0].split()[1]] * 2 + [lines[2].split()[1]] * 2 + [
        lines[4].split()[1]] * 2  # each run's start and end carry the same name
    assert lines[0].startswith("run train#") and "started (0 waiting)" in lines[0]
    assert "finished in" in lines[1] and "for 1 visitor" in lines[1]
    assert lines[3].startswith("run audit#") and "failed after" in lines[3] and "ZeroDivisionError" in lines[3]
    assert lines[5].startswith("run sweep#") and "nobody follows it any more" in lines[5]
    assert "secret-input" not in text


def test_a_waiting_asker_is_reminded_of_its_place_so_a_page_can_notice_its_visitor_left(monkeypatch):
    monkeypatch.setattr(serving, "REMIND_SECONDS", 0.2)
    runs = SharedRuns(workers=1)
    gate = threading.Event()
    first = threading.Thread(target=runs.get_or_run, args=("first", _counting(1, events=[0], gate=gate)))
    first.start()
    time.sleep(0.3)
    heard = []

    def leave_at_the_third_reminder(ahead):
        heard.append(ahead)
        if len(heard) == 3:
            raise _Left

    t0 = time.monotonic()
    with pytest.raises(_Left):
        runs.get_or_run("queued", _counting(2), on_queued=leave_at_the_third_reminder)
    left_after = time.monotonic() - t0
    gate.set()
    first.join(5)
    assert heard == [0, 0, 0] and left_after < 3  # left while the first run still held the worker
    assert runs.status()["queued"] == 0


def test_the_boot_module_every_page_imports_first_loads_every_library_and_dpcore_module_whole():
    """Pages opened at once on a fresh server died of interleaved imports ("partially initialized module 'torch'
    has no attribute 'Tensor'", "... 'sklearn.base'", "deadlock detected by _ModuleLock('dpcore.models')"):
    importing ``dpcore.ui.boot`` must leave every shared library and every dpcore module fully imported."""
    code = (
        "import json, pkgutil, sys\n"
        "import dpcore\n"
        "from dpcore.runtime.serving import SHARED_LIBRARIES\n"
        "before = [m for m in SHARED_LIBRARIES if m in sys.modules]\n"
        "import dpcore.ui.boot\n"
        "names = list(SHARED_LIBRARIES) + [i.name for i in pkgutil.walk_packages(dpcore.__path__, 'dpcore.')\n"
        "                                  if not i.name.endswith('__main__')]\n"
        "missing = [m for m in names if m not in sys.modules]\n"
        "half = [m for m in names if m not in missing and getattr(sys.modules[m].__spec__, '_initializing', False)]\n"
        "print(json.dumps([before, missing, half, hasattr(sys.modules.get('torch'), 'Tensor'), len(names)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    before, missing, half, tensor, n = json.loads(out.stdout.strip().splitlines()[-1])
    assert "torch" not in before and n > 100  # not vacuous: torch and the dpcore modules came with the boot module
    assert missing == [] and half == [] and tensor


def test_every_page_imports_the_boot_module_before_anything_else():
    """A page Streamlit runs on its own (a deep link to a fresh server) imports its libraries before any dpcore
    code runs, so the boot module must be its very first import."""
    import ast

    for page in sorted((ROOT / "pages").glob("*.py")):
        imports = [node for node in ast.parse(page.read_text()).body if isinstance(node, (ast.Import, ast.ImportFrom))
                   and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
        first = imports[0]
        assert isinstance(first, ast.Import) and first.names[0].name == "dpcore.ui.boot", page.name


def test_loading_the_shared_libraries_twice_imports_them_once(monkeypatch):
    import importlib

    monkeypatch.setattr(serving, "_libraries_loaded", False)
    calls = []
    monkeypatch.setattr(importlib, "import_module", lambda name: calls.append(name))
    serving.load_libraries()
    serving.load_libraries()
    assert calls == list(serving.SHARED_LIBRARIES) and serving.libraries_loaded()



def test_a_follower_sleeps_until_its_run_has_news_and_wakes_as_it_finishes():
    # the run's own condition wakes its followers: nobody looks every so often while a run goes quietly, and the end
    # reaches every follower as it comes, not at its next look
    runs = SharedRuns(workers=1)
    gate, started, out, seen, looks = threading.Event(), threading.Event(), {}, [], []

    def quiet(progress):
        started.set()
        gate.wait(30)  # a long stretch without progress
        progress("last")
        return 7

    follower = threading.Thread(target=lambda: out.setdefault("value", runs.get_or_run(
        "quiet", quiet, on_progress=seen.append)))
    follower.start()
    assert started.wait(5)
    changed = runs._runs["quiet"].changed
    sleep = changed.wait
    changed.wait = lambda timeout=None: looks.append(timeout) or sleep(timeout)  # each new sleep of the follower
    time.sleep(1.0)  # five looks had it polled every 0.2 s, as it used to
    looks_while_quiet = len(looks)
    gate.set()
    follower.join(10)
    assert not follower.is_alive()
    assert out["value"] == (7, "computed") and seen == ["last"]
    assert looks_while_quiet <= 1  # at most once more, woken by the run's start


def test_the_server_log_names_a_failed_run_on_a_visitors_own_data_by_its_error_kind_only():
    # a run's error may quote the file (its name, a class of its label); the log is the operator's, often on disk
    runs = SharedRuns(workers=1)
    lines = []
    runs.log = lines.append

    def refuse(progress):
        raise DPValueError("PATE labels queries by a vote over classes; 'ward-7-patients.csv' is regression")

    with pytest.raises(DPValueError):
        runs.get_or_run(("pate", "session", "s1", 1), refuse, keep=False, private=True)
    with pytest.raises(DPValueError):
        runs.get_or_run(("pate", "wine"), refuse)  # a registry dataset's: the whole message, for the operator
    deadline = time.time() + 5  # each run's last line is written after its askers have their answer
    while len(lines) < 4 and time.time() < deadline:
        time.sleep(0.05)
    assert "failed after" in lines[1] and "DPValueError" in lines[1] and "ward-7-patients.csv" not in lines[1]
    assert "ward-7-patients.csv" in lines[3]
