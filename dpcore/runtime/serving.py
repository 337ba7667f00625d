"""One server, a whole classroom: heavy runs shared by every visitor and queued on a few workers.

A seeded run is a pure function of its inputs (the seed fixes the noise), so when a class of twenty presses
Train on the same defaults the server needs to train once. :class:`SharedRuns` keeps finished results under
their exact inputs (bounded, least recently asked-for first out) and runs new work on at most ``workers``
threads at once, in order of arrival. Every asker, the first included, follows its run from its own thread:
it replays the run's progress events as they come (so each visitor's page draws the same live progress),
hears its place in the queue while it waits, and gets the result, or the run's error, at the end. A run
whose askers have all gone is cancelled: dropped from the queue, or stopped at its next progress event,
instead of finishing for nobody. With a Dask scheduler address (``DPCORE_SCHEDULER``) the runs execute on
that cluster, their progress streamed back (:mod:`dpcore.runtime.remote`). Streamlit-free: the pages reach it through
:func:`dpcore.ui.shared_call`.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pathlib
import pickle
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterator

from ..exceptions import DPValueError, RunCancelled
from . import remote
from .workload import active_budget, max_jobs

__all__ = ["SharedRuns", "RunCancelled", "SHARED_LIBRARIES", "cap_run_threads", "default_run_threads",
           "default_workers", "libraries_loaded", "load_libraries", "run_threads", "shared_runs"]

#: How often a waiting asker is told its place again, unchanged (seconds): a Streamlit page stops a script (its
#: visitor changed an input or left) only when the script calls Streamlit, so the waiting page redraws its note.
REMIND_SECONDS = 1.0
_ENV = "DPCORE_RUN_WORKERS"
_THREADS_ENV = "DPCORE_RUN_THREADS"
#: a Dask scheduler address: the runs then execute on that cluster (:mod:`dpcore.runtime.remote`)
_SCHEDULER_ENV = "DPCORE_SCHEDULER"


#: The dpcore package folder, every source file of which names the stored results (this module is in its runtime/:
#: the folder above; its own folder alone let a restarted server show a result of older training or attack code)
DPCORE_ROOT = pathlib.Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """A digest of every source file of dpcore: it changes with any change to the code that computes a result."""
    return tree_digest(DPCORE_ROOT)


def tree_digest(root: pathlib.Path) -> str:
    """A digest of every ``.py`` file under ``root``, in its subfolders too, and of their paths."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _count_from_env(name: str, what: str) -> int | None:
    """The positive whole number in the environment variable ``name`` (None when unset); a clear error otherwise."""
    env = os.environ.get(name)
    if not env:
        return None
    try:
        n = int(env)
    except ValueError:
        raise DPValueError(f"{name} must be a whole number of {what}, got {env!r}") from None
    if n < 1:
        raise DPValueError(f"{name} must be at least 1, got {n}")
    return n


def default_run_threads(workers: int) -> int:
    """Threads each run's torch and BLAS may use: ``DPCORE_RUN_THREADS`` if set, else the cores left after one for
    the page scripts, shared among the ``workers`` runs (at least one each)."""
    n = _count_from_env(_THREADS_ENV, "threads per run")
    return n if n is not None else max(1, ((os.cpu_count() or 2) - 1) // max(1, int(workers)))


_thread_limits = None  # threadpoolctl's handle, kept so the BLAS cap stays in force


def cap_run_threads(threads: int) -> int:
    """Cap torch's intra-op threads and the BLAS pools (OpenBLAS, MKL, OpenMP) of this process at ``threads``.

    A server calls it once (:func:`shared_runs`): with W runs at once each using ``threads``, the heavy work
    stays on ``W * threads`` cores and the page scripts keep the rest. Returns the cap.
    """
    global _thread_limits
    threads = max(1, int(threads))
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    _thread_limits = threadpool_limits(limits=threads)
    return threads


#: What torch (and its OpenMP and MKL) read, when it loads, for the size of its thread pool.
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def run_threads(threads: int) -> Iterator[int]:
    """Run the block with torch's intra-op threads and the BLAS pools capped at ``threads``, restored after.

    The command line trains under the server's cap (``default_run_threads(default_workers())``): a seeded run
    then gives the page's numbers on the same machine. Reductions split over a different number of threads add
    in another order, and over a whole training run those last-digit differences grow (a small CNN on MNIST 5k
    at epsilon 1 and learning rate 10: 0.538 on one thread, 0.495 on two).

    Torch is not imported for this: a command that never trains a network (k-means, the classical models) does
    not load it. Where it is not loaded yet, the block runs with ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` at
    ``threads``, which torch reads when it loads, so a network trained inside the block gets the same threads.
    """
    from threadpoolctl import threadpool_limits

    threads = max(1, int(threads))
    torch = sys.modules.get("torch")
    if torch is None:
        said = {name: os.environ.get(name) for name in _THREAD_VARIABLES}
        os.environ.update({name: str(threads) for name in _THREAD_VARIABLES})
        try:
            with threadpool_limits(limits=threads):
                yield threads
        finally:
            for name, value in said.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads):
            yield threads
    finally:
        torch.set_num_threads(before)


#: The heavy libraries the pages use (and those dpcore imports inside functions), imported whole by
#: :func:`load_libraries` before any page computes.
SHARED_LIBRARIES = ("numpy", "scipy.special", "scipy.stats", "scipy.optimize", "scipy.integrate", "scipy.fft", "pandas",
                    "joblib", "threadpoolctl", "sklearn.linear_model", "sklearn.cluster", "sklearn.datasets",
                    "sklearn.neural_network", "torch", "dp_accounting", "plotly.graph_objects", "plotly.express",
                    "altair", "PIL.Image", "PIL.ImageOps")
_libraries_lock = threading.Lock()
_libraries_loaded = False


def libraries_loaded() -> bool:
    """Whether :func:`load_libraries` has finished in this process."""
    return _libraries_loaded


def load_libraries(*, packages: tuple[str, ...] = ()) -> None:
    """Import :data:`SHARED_LIBRARIES`, then every module of ``packages``, once per process: the first caller does
    it while any other waits.

    A server runs every visitor's page in its own thread, and Python's imports are not safe to interleave: on a
    fresh server, pages opened at once died with "partially initialized module 'torch' has no attribute 'Tensor'"
    (SciPy looked for torch while another page was importing it), "cannot import name 'clone' from partially
    initialized module 'sklearn.base'" and "deadlock detected by _ModuleLock('dpcore.models')" (two pages importing
    the same modules in different orders). Importing everything in one thread, before any page imports or computes
    anything (:mod:`dpcore.ui.boot`), closes those windows; it costs a fresh server's first visitor a few seconds,
    once.
    """
    global _libraries_loaded
    if _libraries_loaded:
        return
    import importlib
    import pkgutil

    with _libraries_lock:
        if not _libraries_loaded:
            from .memory import keep_freed_memory, prefer_huge_pages

            prefer_huge_pages()  # before torch loads (see dpcore.runtime.memory)
            keep_freed_memory()  # a step's buffers stay in the heap for the next step
            for name in SHARED_LIBRARIES:
                importlib.import_module(name)
            for package in packages:
                root = importlib.import_module(package)
                for info in pkgutil.walk_packages(root.__path__, package + "."):
                    if not info.name.endswith("__main__"):  # the command line's entry point runs when imported
                        importlib.import_module(info.name)
            _libraries_loaded = True


_settings_said = False


def settings_problem() -> str | None:
    """What is wrong with the server's settings in the environment (``DPCORE_RUN_WORKERS``, ``DPCORE_RUN_THREADS``,
    the work budget's ``DPCORE_MAX_RUN_MEMORY``, ``DPCORE_MAX_RUN_SECONDS``, ``DPCORE_WORK_BUDGET``), or None. Said
    once on the server's log the first time it is asked, so an operator sees it at start-up rather than from the
    first student who presses Train."""
    global _settings_said
    try:
        default_run_threads(default_workers())
        active_budget()
    except DPValueError as exc:
        if not _settings_said:
            _settings_said = True
            print(f"dpcore: server settings: {exc}", file=sys.stderr, flush=True)
        return str(exc)
    return None


def server_scheduler() -> str | None:
    """The Dask scheduler the server's operator named (``DPCORE_SCHEDULER``), or None: the only cluster a page sends
    work to (a visitor cannot name another: it would make the server connect anywhere and wait on it)."""
    return os.environ.get(_SCHEDULER_ENV, "").strip() or None


def max_sweep_jobs() -> int:
    """The most worker processes one visitor's sweep may start: the machine's cores (a link asking 8 on 2 cores
    started 8 processes, 3.3 GB); the command line's ``sweep --jobs`` is capped the same way."""
    return max_jobs()


def default_workers() -> int:
    """Runs at once: ``DPCORE_RUN_WORKERS`` if set, else one core fewer than the machine has (at least one),
    so that page scripts keep a core while heavy work runs."""
    n = _count_from_env(_ENV, "runs at once")
    return n if n is not None else max(1, (os.cpu_count() or 2) - 1)


@dataclass
class _Run:
    #: notified, under the store's lock, on every change a follower acts on: a progress event, the run's start, its
    #: place in the queue, its end
    changed: threading.Condition
    done: threading.Event = field(default_factory=threading.Event)
    events: list = field(default_factory=list)
    value: Any = None
    error: BaseException | None = None
    started: bool = False
    followers: int = 0
    future: Any = None
    keep: bool = True  # kept when finished (memory and disk); else only joined while in flight
    private: bool = False  # on a visitor's own data: the log names its error's kind, never its message
    here: bool = False  # on this machine even with a cluster (work that sends its own parts there)


class SharedRuns:
    """Finished runs keyed by their exact inputs, runs in flight joined, new runs queued on ``workers`` threads.

    Examples
    --------
    >>> runs = SharedRuns(max_entries=2, workers=1)
    >>> runs.get_or_run(("square", 3), lambda progress: 3 * 3)
    (9, 'computed')
    >>> runs.get_or_run(("square", 3), lambda progress: 1 / 0)  # the same inputs: not run again
    (9, 'cached')
    """

    def __init__(self, max_entries: int = 64, workers: int | None = None, scheduler: str | None = None,
                 directory: "str | os.PathLike[str] | None" = None, max_files: int = 2000) -> None:
        self.max_entries = int(max_entries)
        #: finished results are also kept here, so they survive a restart of the server (None: memory only)
        self.directory = pathlib.Path(directory) if directory is not None else None
        self.max_files = int(max_files)
        self.workers = default_workers() if workers is None else int(workers)
        #: runs execute on this Dask cluster when a scheduler address is given (else on this machine's threads)
        self.scheduler = scheduler or None
        self._client = None
        if self.scheduler:
            self._client = remote.connect(self.scheduler)
        #: torch/BLAS threads per run, when this process capped them (:func:`cap_run_threads`); None otherwise
        self.run_threads: int | None = None
        #: told one line when a run starts and when it ends (the server's log, :func:`shared_runs`); None: quiet
        self.log: Callable[[str], None] | None = None
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="dpcore-run")
        self._lock = threading.Lock()
        self._done: OrderedDict[Hashable, Any] = OrderedDict()
        self._runs: dict[Hashable, _Run] = {}
        self._queue: list[Hashable] = []  # submitted, not started, in order

    def get_or_run(self, key: Hashable, compute: Callable[[Callable[[Any], None]], Any], *,
                   on_progress: Callable[[Any], None] | None = None,
                   on_queued: Callable[[int], None] | None = None,
                   keep: bool = True, here: bool = False, private: bool = False) -> tuple[Any, str]:
        """``(value, how)``; how is ``"cached"``, ``"joined"`` (someone else had asked first) or ``"computed"``.

        ``compute(progress)`` does the work on a worker thread, calling ``progress(event)`` as it goes. This
        asker's ``on_progress(event)`` sees every event in order, and ``on_queued(ahead)`` the number of
        runs ahead of it while it waits for a worker (again every :data:`REMIND_SECONDS`, and ``None`` once
        the run has started), both in the asker's own thread. An exception from
        either (a visitor who left) stops this asker following; the run is cancelled if nobody else follows.
        ``keep=False``: the finished value is not stored (work with a cache of its own, or holding a visitor's
        upload); the run is still shared while in flight. ``here=True``: the work runs on this machine's worker
        thread even when the store has a cluster (a sweep, which sends its own runs to the cluster). ``private=True``:
        the work is on a visitor's own data (an upload), whose error message may quote it (a file name, a class):
        the server's log, which an operator may keep on disk, names the error's kind only.
        """
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key], "cached"
            found, value = self._read(key) if keep else (False, None)
            if found:  # finished before the server restarted
                self._keep(key, value)
                return value, "cached"
            run = self._runs.get(key)
            how = "joined" if run is not None else "computed"
            if run is None:
                run = self._runs[key] = _Run(threading.Condition(self._lock), keep=keep, here=here, private=private)
                self._queue.append(key)
                run.future = self._pool.submit(self._work, key, run, compute)
            run.followers += 1
        try:
            return self._follow(key, run, on_progress, on_queued), how
        finally:
            with self._lock:
                run.followers -= 1
                if run.followers == 0 and not run.done.is_set() and not run.started and run.future.cancel():
                    self._queue.remove(key)
                    self._runs.pop(key, None)
                    self._queue_moved()

    def _work(self, key: Hashable, run: _Run, compute) -> None:
        with self._lock:
            run.started = True
            self._queue.remove(key)
            waiting = len(self._queue)
            run.changed.notify_all()  # its followers: started
            self._queue_moved()  # the runs behind it: one place nearer
        name, t0 = _run_name(key), time.perf_counter()
        self._say(f"run {name} started ({waiting} waiting)")

        def progress(event) -> None:
            with self._lock:
                if run.followers == 0:
                    raise RunCancelled("nobody follows this run any more")
                run.events.append(event)
                run.changed.notify_all()

        try:
            if self._client is not None and not run.here:
                run.value = remote.run_on_cluster(self._client, compute, progress)
            else:
                run.value = compute(progress)
        except BaseException as exc:  # handed to every follower
            run.error = exc
        followers = 0
        try:
            with self._lock:
                self._runs.pop(key, None)
                if run.error is None and run.keep:
                    self._keep(key, run.value)
                followers = run.followers
            if run.error is None and run.keep:
                self._write(key, run.value)
        finally:  # whatever happens here, no follower is left waiting
            with self._lock:
                run.done.set()
                run.changed.notify_all()
        took = f"{time.perf_counter() - t0:.1f} s"
        if isinstance(run.error, RunCancelled):
            self._say(f"run {name} stopped after {took}: nobody follows it any more")
        elif run.error is not None:
            said = ("(its message is not logged: the run is on a visitor's own data)" if run.private else
                    f"{run.error}")
            self._say(f"run {name} failed after {took}: {type(run.error).__name__}: {said}")
        else:
            self._say(f"run {name} finished in {took}, for {followers} visitor{'s' if followers != 1 else ''}")

    def _say(self, line: str) -> None:
        if self.log is not None:
            try:
                self.log(line)
            except Exception:  # a log that cannot be written never fails a run
                pass

    def _keep(self, key: Hashable, value: Any) -> None:
        self._done[key] = value
        self._done.move_to_end(key)
        while len(self._done) > self.max_entries:
            self._done.popitem(last=False)

    # --- the disk layer: one pickle per result, named by a hash of the inputs' repr ----------------------

    def _path(self, key: Hashable) -> pathlib.Path | None:
        if self.directory is None:
            return None
        text = repr(key)
        if " at 0x" in text:  # an object without a stable repr: its address would change with every start
            return None
        # any change to dpcore's source makes a new name: a restarted server never shows an older code's result
        digest = hashlib.sha256(f"{source_digest()}|{text}".encode()).hexdigest()
        return self.directory / digest[:2] / f"{digest}.pkl"

    def _read(self, key: Hashable) -> tuple[bool, Any]:
        path = self._path(key)
        if path is None or not path.exists():
            return False, None
        try:
            with open(path, "rb") as fh:
                stored_key, value = pickle.load(fh)  # written by this server only (its own cache directory)
        except Exception:  # unreadable or from an older version: computed again, and rewritten
            return False, None
        return (True, value) if stored_key == repr(key) else (False, None)

    def _write(self, key: Hashable, value: Any) -> None:
        path = self._path(key)
        if path is None:
            return
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as fh:
                tmp = fh.name
                pickle.dump((repr(key), value), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)  # never a half-written entry
            tmp = None
            files = sorted(self.directory.glob("*/*.pkl"), key=lambda f: f.stat().st_mtime)
            for old in files[:max(0, len(files) - self.max_files)]:
                old.unlink(missing_ok=True)
        except Exception:  # a result that cannot be pickled, a full disk: it stays in memory only
            pass
        finally:
            if tmp is not None:
                pathlib.Path(tmp).unlink(missing_ok=True)

    def _queue_moved(self) -> None:
        """Wake the followers of every queued run: their places changed. Called with the store's lock held."""
        for queued in self._queue:
            if (waiting := self._runs.get(queued)) is not None:
                waiting.changed.notify_all()

    def _follow(self, key: Hashable, run: _Run, on_progress, on_queued) -> Any:
        """Hand this asker the run's progress and place in the queue as they change, then its value or error.

        The asker sleeps on the run's condition and is woken by the run (an event, its start, its end) or by the
        queue moving; it wakes by itself only to repeat a waiting asker's place every :data:`REMIND_SECONDS`."""
        seen, last_ahead, told = 0, None, -float("inf")
        while True:
            with self._lock:
                while True:
                    new = run.events[seen:]
                    ahead = self._queue.index(key) if key in self._queue else None
                    finished = run.done.is_set()
                    remind = None if ahead is None else REMIND_SECONDS - (time.monotonic() - told)
                    if new or finished or ahead != last_ahead or (remind is not None and remind <= 0):
                        break
                    run.changed.wait(remind)  # None while the run goes: until it has news
            seen += len(new)
            if on_queued is not None and (ahead != last_ahead or ahead is not None):
                on_queued(ahead)  # its place; None once the run has started; the same place again now and then
            last_ahead, told = ahead, time.monotonic()
            if on_progress is not None:
                for event in new:
                    on_progress(event)
            if finished:
                break
        if run.error is not None:
            raise run.error
        return run.value

    def watching(self) -> int:
        """Visitors following a run that has started: each of them redraws its progress as the run goes."""
        with self._lock:
            return sum(run.followers for run in self._runs.values() if run.started)

    def status(self) -> dict:
        """How many runs are queued and running, and how many results are kept."""
        with self._lock:
            return {"queued": len(self._queue), "running": len(self._runs) - len(self._queue),
                    "kept": len(self._done), "workers": self.workers}

    def clear(self) -> None:
        """Forget every finished result, in memory and on disk (runs in flight finish and are kept)."""
        with self._lock:
            self._done.clear()
            if self.directory is not None:
                for entry in self.directory.glob("*/*.pkl"):
                    entry.unlink(missing_ok=True)

    def close(self) -> None:
        """Stop taking runs (those in flight finish) and let go of the cluster, if any."""
        self._pool.shutdown(wait=True)
        if self._client is not None:
            self._client.close()
            self._client = None


def _run_name(key: Hashable) -> str:
    """A run's name on the server's log: its kind (a key's first word) and a short digest of its exact inputs, so
    that the start and the end of one run can be matched without writing a visitor's inputs into the log."""
    kind = key[0] if isinstance(key, tuple) and key and isinstance(key[0], str) else type(key).__name__
    return f"{kind}#{hashlib.sha256(repr(key).encode()).hexdigest()[:6]}"


def _server_log(line: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} dpcore: {line}", file=sys.stderr, flush=True)


_shared: SharedRuns | None = None
_shared_lock = threading.Lock()


def watchers() -> int:
    """Visitors of this server following a run now (0 before the first run: the store is not made here)."""
    store = _shared
    return 0 if store is None else store.watching()


def shared_runs() -> SharedRuns:
    """The one store of this process, shared by every session of a Streamlit server (made on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            from ..sweep.cache import DEFAULT_ROOT, ENV_VAR

            root = pathlib.Path(os.environ.get(ENV_VAR) or DEFAULT_ROOT)  # beside the sweeps' cache
            _shared = SharedRuns(scheduler=server_scheduler(), directory=root / "runs")
            _shared.log = _server_log  # each run's start and end on the server's log
            if _shared.scheduler is None:  # the runs share this machine with the page scripts
                _shared.run_threads = cap_run_threads(default_run_threads(_shared.workers))
        return _shared
