"""Shared test set-up: small thread pools so the suite behaves on a 2-core machine, a cache of its own per test
process (its finished shared runs one folder of the whole run), and results computed once for the whole run
(:func:`computed_once`) however many processes run it.

``python -m pytest`` runs the tests in parallel processes (pytest-xdist, ``-n logical`` in pytest.ini): tests that
must share a process (one server for a module, say) are marked ``@pytest.mark.xdist_group("name")``.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import pathlib
import pickle
import shutil
import tempfile

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# large tensors on huge pages, as the command line and the app run (dpcore.runtime.memory): before torch loads
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
# and freed memory kept for the next step, as they run too: in every test process from the start, so that what the
# allocator does not hang on which process happened to run the doctest that turns it on
from dpcore.runtime.memory import keep_freed_memory  # noqa: E402

keep_freed_memory()
# finished runs and sweeps are cached on disk: each test process (each xdist worker, gw0, gw1, ...) gets a fresh
# cache of its own, never the project's; its runs/ folder is one folder of the whole test run, which no test clears
# (_finished_runs_shared_by_the_test_processes, _fresh_shared_runs), and its sweeps/ stay its own
_CACHE = tempfile.mkdtemp(prefix=f"dpcore-test-cache-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-")
os.environ["DPCORE_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

ROOT = pathlib.Path(__file__).resolve().parents[1]


def pytest_collection_finish(session):
    """Once the test modules and dpcore's (for its doctests) are imported, what they made (torch, pandas,
    Streamlit, scikit-learn: millions of objects that live as long as the process) is moved out of the garbage
    collector's view (:func:`gc.freeze`): each full collection during the tests (a few dozen per process, and
    pytest's own at the end) then walks only what the tests made, not those objects again. Nothing a test makes is
    frozen: its garbage is collected as before."""
    import gc

    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True, scope="session")
def _torch_threads():
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass
    yield


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture
def cli(capsys):
    """``cli("train", "--json", ...)`` runs ``python -m dpcore ...``'s ``main`` in this process and returns a
    ``CompletedProcess`` (exit code, stdout, stderr): the same command as from a shell without the seconds spent
    importing torch again. tests/test_cli.py checks the shell's own process."""
    import subprocess

    from dpcore.cli import main

    def run(*args: str) -> subprocess.CompletedProcess:
        try:
            code = main([str(a) for a in args])
        except SystemExit as stop:  # argparse's own errors
            code = stop.code
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code or 0, captured.out, captured.err)

    return run


@pytest.fixture(autouse=True, scope="session")
def _apptest_without_repeated_overheads():
    """Three costs Streamlit's ``AppTest`` pays again at every run, taken once per test process instead; what a page
    run does and shows is unchanged. Only where a collected module has imported AppTest (other runs do not load
    Streamlit for it).

    - Each new AppTest scans the metadata of every installed distribution for Streamlit components (0.1 s of CPU
      with 160 distributions; several hundred AppTests in the suite): what is installed does not change during a
      test run, so the first scan's answer is kept.
    - Each run compiles the page's script afresh (its own ``ScriptCache``; ``ast`` parse and Streamlit's "magic"
      rewrite): the code object is kept per file path and exact source text, as a server keeps it between reruns.
    - While a run goes on, the test's thread woke every millisecond to look through every event the run had sent
      so far (one per element drawn) for its end, taking the interpreter's lock from the run each time: it now
      sleeps until the run says it has ended (the same event, noted as it is sent), with the same timeout and error.
    """
    import sys

    if "streamlit.testing.v1" not in sys.modules:
        yield
        return
    import threading

    try:  # Streamlit 1.67's internals; a version without them keeps its AppTest as it is (slower, not wrong)
        from streamlit import config
        from streamlit.components.v2 import manifest_scanner
        from streamlit.runtime.scriptrunner.script_cache import ScriptCache
        from streamlit.runtime.scriptrunner.script_runner import ScriptRunnerEvent
        from streamlit.testing.v1 import local_script_runner

        scan, get_bytecode = manifest_scanner.scan_component_manifests, ScriptCache.get_bytecode
        runner_init, wait = local_script_runner.LocalScriptRunner.__init__, local_script_runner.require_widgets_deltas
    except (ImportError, AttributeError):
        yield
        return
    found: list = []
    compiled: dict = {}

    def scanned_once(max_workers=None):
        if not found:
            found.append(tuple(scan(max_workers)))
        return list(found[0])

    def compiled_once(self, script_path):
        path = os.path.abspath(script_path)
        with open(path, "rb") as f:
            key = (path, f.read(), config.get_option("runner.magicEnabled"))
        if key not in compiled:
            compiled[key] = get_bytecode(self, script_path)
        return compiled[key]

    def noting_the_end(self, *args, **kwargs):
        runner_init(self, *args, **kwargs)
        ended = self._dpcore_tests_ended = threading.Event()  # connected before the run's thread starts

        def note(sender, event, **_):
            if event == ScriptRunnerEvent.SHUTDOWN:
                ended.set()

        self.on_event.connect(note, weak=False)

    def wait_for_the_end(runner, timeout: float = 3) -> None:
        ended = getattr(runner, "_dpcore_tests_ended", None)
        if ended is None:  # a runner made before the patch
            return wait(runner, timeout)
        if ended.wait(timeout):
            return
        runner.request_stop()  # past the timeout: as Streamlit stops the run and says so
        runner.join()
        raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")

    manifest_scanner.scan_component_manifests = scanned_once
    ScriptCache.get_bytecode = compiled_once
    local_script_runner.LocalScriptRunner.__init__ = noting_the_end
    local_script_runner.require_widgets_deltas = wait_for_the_end
    yield
    manifest_scanner.scan_component_manifests = scan
    ScriptCache.get_bytecode = get_bytecode
    local_script_runner.LocalScriptRunner.__init__ = runner_init
    local_script_runner.require_widgets_deltas = wait


@pytest.fixture(autouse=True)
def _restore_main_module():
    """AppTest runs page scripts as ``__main__``; restore it so process-spawning tests
    (Dask nannies, multiprocessing) do not re-run a page script in their children."""
    import sys

    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    yield
    sys.modules["__main__"] = main
    if main is not None and main_file is not None and getattr(main, "__file__", None) != main_file:
        main.__file__ = main_file


@pytest.fixture(autouse=True)
def _restore_work_budget():
    """Pages switch the process to the shared server's work budget; each test starts from the library's."""
    from dpcore.runtime.workload import COMMAND_LINE, set_default_budget

    yield
    set_default_budget(COMMAND_LINE)


@pytest.fixture(autouse=True, scope="session")
def _finished_runs_shared_by_the_test_processes(tmp_path_factory):
    """The server's store of finished runs keeps them on disk in ``$DPCORE_CACHE_DIR/runs``, as a restarted server
    reads them back (:class:`dpcore.runtime.serving.SharedRuns`): every test process's ``runs`` folder is one folder
    of the test run (a link to it), so a page's default run is trained once for the whole run, not once per xdist
    worker, and what the browser test's Streamlit server (started with its worker's environment) trained is read
    by the page tests too. The runs are seeded and stored under their exact inputs and dpcore's source digest, so a
    result read from there is the one this process would compute. Only runs computed without patches get there:
    a test that patches keeps its runs in a folder of its own (:func:`_fresh_shared_runs`). The sweeps' cache stays
    each process's own."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's directory, shared by its workers
    shared = root / "finished-runs"
    shared.mkdir(exist_ok=True)
    link = pathlib.Path(_CACHE) / "runs"
    if not link.exists():
        link.symlink_to(shared, target_is_directory=True)
    yield


@pytest.fixture(autouse=True)
def _fresh_shared_runs(request):
    """The server's store of finished runs (:func:`dpcore.runtime.serving.shared_runs`) is kept from test to test in one
    test process, as a server keeps it from visitor to visitor: a page's default run is trained once per process,
    not once per test that opens the page (and once per test run, :func:`_finished_runs_shared_by_the_test_processes`).
    A test that monkeypatches, or is marked ``fresh_runs``, starts from an empty store whose disk is an empty
    folder of its own, and leaves an empty store behind: its runs are computed under its patches, and what it
    computed is never shown to another test, in this process or another."""
    from dpcore.runtime.serving import shared_runs

    fresh = "monkeypatch" in request.fixturenames or request.node.get_closest_marker("fresh_runs") is not None
    if not fresh:
        yield
        return
    store = shared_runs()
    kept, own = store.directory, tempfile.mkdtemp(prefix="dpcore-test-fresh-runs-")
    store.directory = pathlib.Path(own) if kept is not None else None
    store.clear()
    yield
    store.clear()
    store.directory = kept
    shutil.rmtree(own, ignore_errors=True)


@pytest.fixture(scope="session")
def computed_once(tmp_path_factory):
    """``computed_once(key, compute)``: ``compute()``'s value, computed once for the whole test run.

    For seeded work that several tests look at (a reproduction entry, a trained model): the first process to ask
    computes it while holding a lock, the others (xdist workers) wait and read its pickled value from the run's
    shared temporary directory, so each is computed once, not once per test or per worker. ``key`` is a text
    naming the work and every input it depends on. Never for work a test monkeypatches."""
    import filelock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's directory, shared by its workers (each worker's own is popen-gwN inside it)
    root = root / "computed-once"
    root.mkdir(exist_ok=True)
    here: dict = {}

    def get(key: str, compute):
        if key not in here:
            path = root / f"{hashlib.sha256(key.encode()).hexdigest()[:20]}.pkl"
            with filelock.FileLock(f"{path}.lock"):
                if path.exists():
                    here[key] = pickle.loads(path.read_bytes())
                else:
                    here[key] = compute()
                    path.write_bytes(pickle.dumps(here[key], protocol=pickle.HIGHEST_PROTOCOL))
        return here[key]

    return get
