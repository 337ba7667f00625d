"""Run a sweep: in parallel processes (joblib/loky) or on a Dask cluster, streamed, cached on disk.

Each finished run is written to the disk cache and handed to ``on_result`` the
moment it arrives (``joblib.Parallel(return_as="generator_unordered")``), so a
page redraws its chart while the sweep is running, a reopened sweep is read back
at once, and an interrupted one only computes what is missing.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import queue
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from ..datasets.csv_upload import _names
from ..exceptions import DPCoreError, DPTypeError, DPValueError, PrivacyLeakWarning, user_stacklevel, warning_class
from ..learners import get_learner, learners
from ..runtime.thread_warnings import caught as caught_warnings
from ..runtime.workload import (
    Work,
    WorkBudget,
    active_budget,
    check_work,
    max_jobs,
    run_or_estimate,
    set_default_budget,
)
from .batching import learner_call, plan_batches, run_batches
from .cache import SweepCache
from .config import RunSpec, SweepConfig, load_providers

#: Metric columns put first, in this order, when present.
_METRIC_ORDER = ("accuracy", "mse", "r2")
_ROLE_ORDER = {"swept": 0, "baseline": 1, "trivial": 2}
#: Columns every row has, in table order (metric columns go after ``seed``).
ID_COLUMNS = ("learner", "role", "dataset", "axis", "value", "seed")
TAIL_COLUMNS = ("epsilon", "epsilon_target", "delta", "neighbouring", "unit", "federation", "noise_multiplier",
                "seconds", "cached", "leaks_privacy", "warnings", "leak_warnings", "event")
#: Separator between several warnings of one run in the ``warnings`` column.
WARNING_SEP = " | "
#: Seconds to wait for a Dask scheduler to answer before giving up with a clear error.
DASK_CONNECT_TIMEOUT = 10.0
#: Local worker processes unless told otherwise (the page's "Parallel worker processes", ``sweep --jobs``): one
#: per core of the 2-core laptops the app is meant for.
DEFAULT_JOBS = 2
#: What ``--jobs`` means, for every command that sweeps.
JOBS_HELP = (f"local worker processes (default {DEFAULT_JOBS}); the network learners' runs train together in this "
             "process, and so do runs too small to be worth starting the workers")
#: A worker process takes about 3 s to start on a 2-core laptop (it imports torch, scikit-learn and SciPy before its
#: first run): runs whose estimated work adds up to less than this train in this process instead, when no worker is
#: running yet (a command line's sweep, a server's first one) ...
IN_PROCESS_SECONDS = 3.0
#: ... and to less than this when the workers are running already (they wait 300 s for more work, joblib's
#: ``idle_worker_timeout``): handing a run over to them costs little then.
IN_PROCESS_SECONDS_WARM = 0.5
_WORKERS_IDLE_SECONDS = 240.0
_LOG = logging.getLogger("dpcore.sweep")


class SweepRunError(DPCoreError):
    """One run of a sweep failed; the message says which run and why."""


@dataclass(frozen=True)
class SweepProgress:
    """What ``on_result`` receives for every finished (or cache-read) run.

    Attributes
    ----------
    row : dict
        The run's table row (same columns as :attr:`SweepResult.table`).
    done, total : int
        Runs finished so far (cached ones included) and runs in the sweep.
    cached : bool
        The row came from the disk cache.
    """

    row: Mapping[str, Any]
    done: int
    total: int
    cached: bool

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


@dataclass(frozen=True, eq=False)
class SweepResult:
    """A finished sweep.

    Attributes
    ----------
    config : SweepConfig
    table : DataFrame
        Tidy: one row per run with columns ``learner, role, dataset, axis, value, seed``,
        the metrics (``accuracy``, or ``mse`` and ``r2``, plus any other the learners
        report), ``epsilon`` (the privacy each run actually spent, from its
        :class:`~dpcore.learners.RunResult`; ``inf`` for baselines), ``epsilon_target``
        (the budget it was given), ``delta``, ``neighbouring`` (what one ε protects: ``add-remove`` or
        ``replace-one``; empty without a guarantee), ``unit`` (what of the data it protects:
        ``records``, ``labels``, ``images`` or ``clients``, :data:`~dpcore.accounting.UNITS`), ``federation`` (a
        federated run's simulated federation, :func:`~dpcore.federated.fedavg.federation_of`; empty otherwise),
        ``noise_multiplier``,
        ``seconds`` and ``cached``, then ``leaks_privacy`` (True when the run raised a
        :class:`~dpcore.exceptions.PrivacyLeakWarning`: its ``epsilon`` is not a
        guarantee), ``warnings`` (every warning the run raised, joined by
        ``" | "``; empty when none) and ``leak_warnings`` (those of them that are leaks). They are rebuilt from the
        cached row, so a
        sweep read back from the cache carries them too. ``role`` is ``"swept"``, ``"baseline"``
        (non-private counterpart) or ``"trivial"`` (majority class / mean; for a sweep of clusterings, random
        centres, which read no training row: ``epsilon`` 0); baselines have ``value`` NaN.
    n_cached, n_computed : int
        How many runs were read from the cache and how many were computed.
    seconds : float
        Wall time of the whole sweep.
    notes : tuple of str
        How the runs were computed, in words: which trained together in one batch and why the others trained
        alone (:mod:`dpcore.sweep.batching`); also logged by the ``dpcore.sweep`` logger.
    """

    config: SweepConfig
    table: pd.DataFrame
    n_cached: int
    n_computed: int
    seconds: float
    notes: tuple = ()

    @property
    def metric(self) -> str:
        return self.config.metric

    def summary(self, metric: str | None = None) -> pd.DataFrame:
        """Mean, std, min and max of ``metric`` across seeds per learner and value (see :func:`summarize`)."""
        from .summary import summarize

        return summarize(self.table, metric or self.metric)


def _limit_threads() -> None:
    """One thread per worker: two processes on two cores must not each start a full thread pool."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def _calibrate_ahead(want: Callable, pb) -> None:
    """Hand a captured problem's noise calibration, if it has one, to :func:`calibrating_ahead`'s ``want``."""
    from ..training.engine import planned_steps  # a captured network problem: torch is imported already

    c = pb.config
    if c.private and c.noise_multiplier is None and c.target_epsilon is not None \
            and c.sampling == "poisson":
        q, ends = planned_steps(c, pb.X_train.shape[0])
        want((c.target_epsilon, c.delta, q, ends[-1], c.accountant))


def execute_run(run: RunSpec, *, limit_threads: bool = False) -> dict:
    """Run one :class:`RunSpec` and return its row (the function each worker calls).

    Imports the run's provider modules first, so learners registered outside
    ``dpcore`` exist in a fresh worker process. Warnings raised by the learner are
    returned in the row's ``_warnings`` entry, to be re-issued in the caller.

    Raises
    ------
    SweepRunError
        Naming the learner, axis value and seed, with the learner's own message.
    """
    if limit_threads:
        _limit_threads()
    load_providers(run.providers)
    t0 = time.perf_counter()
    with caught_warnings() as caught:  # this run's own (a server runs others in other threads)
        try:
            res = learner_call(run)
        except Exception as exc:  # noqa: BLE001 - re-raised with the run named
            where = "baseline" if math.isnan(run.value) else f"{run.axis}={run.value:g}"
            # a DPCoreError already says what to do in plain words; anything else is a bug: keep its type
            detail = str(exc) if isinstance(exc, DPCoreError) else f"{type(exc).__name__}: {exc}"
            if isinstance(exc, (ZeroDivisionError, OverflowError, FloatingPointError)):
                detail = (f"{where} is too extreme to compute with in double precision ({type(exc).__name__}: "
                          f"{exc or 'no detail'}); sweep a narrower range of {run.axis}")
            raise SweepRunError(f"run {run.learner!r} ({where}, seed={run.seed}) failed: {detail}") from exc
    if limit_threads:
        _limit_threads()  # the learner may have imported torch just now
    row: dict[str, Any] = {
        "learner": run.learner,
        "role": run.role,
        "dataset": res.dataset,
        "axis": run.axis,
        "value": run.value,
        "seed": run.seed,
    }
    for k, v in res.metrics.items():
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            row[k] = float(v)
    row["epsilon"] = float(res.epsilon)
    # a non-private learner was given no budget: leave its target empty rather than show a fake one
    row["epsilon_target"] = float(run.epsilon) if get_learner(run.learner).private else float("nan")
    # what the run released (RunResult.release): its delta; what one ε protects, one record added or removed or one
    # replaced (empty for a run without a guarantee), and of what (whole records, labels, images, a client's whole
    # data, and which federation's clients); its dp_accounting event as JSON text, so a cached run still composes
    # (e.g. into a tuning search)
    released = res.release()
    row["delta"] = released["delta"]
    for key in ("neighbouring", "unit", "federation"):
        row[key] = released[key]
    row["noise_multiplier"] = float("nan") if res.noise_multiplier is None else float(res.noise_multiplier)
    row["seconds"] = float(res.seconds) if res.seconds else time.perf_counter() - t0
    row["event"] = released["event"]
    seen: dict[str, str] = {}
    for w in caught:
        seen.setdefault(str(w.message), f"{w.category.__module__}.{w.category.__qualname__}")
    inferred = getattr(run.dataset, "inferred_bounds", ())
    if inferred and get_learner(run.learner).private:  # the upload said so once; each private row says it too
        seen.setdefault(f"the bounds of {_names(inferred, at_most=5)} were read from the uploaded rows, so the ε of "
                        "these runs is not a guarantee: declare the bounds",
                        f"{PrivacyLeakWarning.__module__}.PrivacyLeakWarning")
    classes = getattr(run.dataset, "inferred_classes", ())
    if classes and get_learner(run.learner).private:  # which classes occur is a fact of the rows, as bounds are
        seen.setdefault(f"the classes of the label {_names(classes)} were read from the uploaded rows, so the ε of "
                        "these runs is not a guarantee: declare the classes",
                        f"{PrivacyLeakWarning.__module__}.PrivacyLeakWarning")
    row["_warnings"] = [[cat, msg] for msg, cat in seen.items()]
    return row


def _reissue(rows: Iterable[Mapping[str, Any]], already: set) -> None:
    """Warn once per (learner, message): two learners raising the same text are both named."""
    for row in rows:
        for cat, msg in row.get("_warnings", ()) or ():
            if (row["learner"], msg) not in already:
                already.add((row["learner"], msg))
                warnings.warn(f"{row['learner']}: {msg}", warning_class(cat), stacklevel=user_stacklevel())


def _is_leak(category: str) -> bool:
    return issubclass(warning_class(category), PrivacyLeakWarning)


def _warning_columns(row: Mapping[str, Any]) -> dict:
    caught = row.get("_warnings", ()) or ()
    return {
        "leaks_privacy": any(_is_leak(cat) for cat, _ in caught),
        "warnings": WARNING_SEP.join(msg for _, msg in caught),
        "leak_warnings": WARNING_SEP.join(msg for cat, msg in caught if _is_leak(cat)),  # which of them leak
    }


def _is_leak_of(row, msg: str) -> bool:
    """Whether ``msg`` is one of the row's privacy leaks (a table of older code has no ``leak_warnings``: there any
    warning of a leaking row counts)."""
    leaks = getattr(row, "leak_warnings", None)
    if isinstance(leaks, str):
        return msg in leaks.split(WARNING_SEP)
    return bool(getattr(row, "leaks_privacy", False))


def table_warnings(table: pd.DataFrame) -> list[dict]:
    """The distinct warnings of a sweep table, each with the learners that raised it.

    Returns
    -------
    list of dict
        ``{"message": str, "learners": [names in table order], "leak": bool,
        "private": bool, "where": {axis value: (runs that raised it, runs)}, "everywhere": bool}``, privacy
        leaks first. ``where`` counts, at each axis value, the runs of those learners that raised it and all their
        runs there (baselines, which have no axis value, are left out); ``everywhere`` is True when every run of
        those learners raised it. ``leak`` is True when a run raised it
        as a :class:`~dpcore.exceptions.PrivacyLeakWarning`; ``private`` when one of
        those learners is a private learner (one that claims an epsilon) rather than a
        non-private baseline.
        De-duplicated by message, never by learner: the same text from the private
        learner and from its non-private baseline names both.

    Examples
    --------
    >>> t = pd.DataFrame({"learner": ["a", "b", "a"], "role": ["swept", "baseline", "swept"],
    ...                   "leaks_privacy": [True, True, True], "warnings": ["x", "x", "x"]})
    >>> table_warnings(t)
    [{'message': 'x', 'learners': ['a', 'b'], 'leak': True, 'private': True, 'where': {}, 'everywhere': True}]
    """
    if table.empty or "warnings" not in table.columns:
        return []
    found: dict[str, dict] = {}
    raised: dict[str, set] = {}  # message -> the rows that raised it
    for i, row in enumerate(table.itertuples(index=False)):
        text = row.warnings if isinstance(row.warnings, str) else ""
        for msg in filter(None, text.split(WARNING_SEP)):
            w = found.setdefault(msg, {"message": msg, "learners": [], "leak": False, "private": False,
                                       "where": {}, "everywhere": True})
            raised.setdefault(msg, set()).add(i)
            value = getattr(row, "value", float("nan"))
            if isinstance(value, (int, float)) and not math.isnan(value):
                w["where"][value] = w["where"].get(value, 0) + 1
            if row.learner not in w["learners"]:
                w["learners"].append(row.learner)
            if _is_leak_of(row, msg):
                w["leak"] = True
                spec = learners().get(row.learner)
                private = spec.private if spec is not None else row.role == "swept"
                w["private"] = w["private"] or private
    for msg, w in found.items():
        theirs = table.learner.isin(w["learners"])
        w["everywhere"] = len(raised[msg]) == int(theirs.sum())
        w["where"] = {v: (k, int((theirs & (table.value == v)).sum())) for v, k in sorted(w["where"].items())}
    return sorted(found.values(), key=lambda w: (not w["leak"], not w["private"]))


def build_table(config: SweepConfig, rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The tidy table of ``rows`` in a stable order: role, learner (as configured), value, seed."""
    rows = [{**{k: v for k, v in r.items() if not k.startswith("_")}, **_warning_columns(r)} for r in rows]
    order = {name: i for i, name in enumerate(config.learners + config.baselines())}
    df = pd.DataFrame(rows)
    if df.empty:
        metrics = ["accuracy"] if config.task == "classification" else ["mse", "r2"]
        return pd.DataFrame(columns=list(ID_COLUMNS) + metrics + list(TAIL_COLUMNS))
    metrics = [c for c in _METRIC_ORDER if c in df.columns]
    metrics += sorted(c for c in df.columns if c not in ID_COLUMNS + TAIL_COLUMNS and c not in metrics)
    df = df.reindex(columns=list(ID_COLUMNS) + metrics + list(TAIL_COLUMNS))
    if config.sets_noise:  # σ is given, not calibrated: no run aimed at an ε, each spends what its σ gives
        df["epsilon_target"] = np.nan
    df["_r"] = df["role"].map(_ROLE_ORDER)
    df["_l"] = df["learner"].map(order)
    df = df.sort_values(["_r", "_l", "value", "seed"], na_position="first", kind="stable")
    df = df.drop(columns=["_r", "_l"]).reset_index(drop=True)
    df["seed"] = df["seed"].astype(int)
    df["cached"] = df["cached"].astype(bool)
    df["leaks_privacy"] = df["leaks_privacy"].astype(bool)
    df["warnings"] = df["warnings"].fillna("").astype(str)
    return df


def _check_jobs(n_jobs: int, *, local: bool = True) -> int:
    """``n_jobs`` checked; more local processes than the machine has cores are capped at its cores, with a warning
    (``--jobs 1000`` on 2 cores started 43 processes and 10.5 GB, and each process adds the libraries' memory
    without adding any speed)."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)):
        raise DPTypeError(f"n_jobs must be an integer, got {n_jobs!r}")
    n_jobs = int(n_jobs)
    if n_jobs == 0 or n_jobs < -1:
        raise DPValueError(f"n_jobs must be >= 1 (or -1 for every core), got {n_jobs}")
    cores = max_jobs()
    if local and n_jobs > cores:
        warnings.warn(f"n_jobs={n_jobs} (--jobs) is more worker processes than this machine's {cores} "
                      f"core{'s' if cores != 1 else ''}: using {cores}", stacklevel=user_stacklevel())
        n_jobs = cores
    return n_jobs


def from_upload(config: SweepConfig) -> bool:
    """True when the sweep's data is an uploaded file: its results stay in memory, off the disk cache."""
    return getattr(config.dataset, "source", "") == "upload"


def _as_planned(row: Mapping[str, Any], run: RunSpec) -> dict:
    """A cached row as this sweep's run: its results, under this sweep's role, axis, value and seed. The cache key
    leaves out what does not change a run (a baseline's run is the same whatever axis a sweep follows), so a row
    cached by another sweep carried that sweep's axis (a sweep along epsilon listed its baselines under clip_norm)."""
    return {**row, "learner": run.learner, "role": run.role, "axis": run.axis, "value": run.value,
            "seed": run.seed, "cached": True}


def cached_result(config: SweepConfig, *, cache_dir: "str | os.PathLike[str] | None" = None) -> SweepResult | None:
    """The sweep read entirely from the disk cache, or None if any run is missing (nothing is computed)."""
    t0 = time.perf_counter()
    cache = SweepCache(cache_dir)
    rows = []
    for run in config.runs():
        row = cache.get(run.key)
        if row is None:
            return None
        rows.append(_as_planned(row, run))
    return SweepResult(config, build_table(config, rows), len(rows), 0, time.perf_counter() - t0)


def run_sweep(
    config: SweepConfig,
    *,
    n_jobs: int = DEFAULT_JOBS,
    on_result: Callable[[SweepProgress], None] | None = None,
    cache_dir: "str | os.PathLike[str] | None" = None,
    use_cache: bool | None = None,
    scheduler: str | None = None,
    batch: bool = True,
    lanes: int | None = None,
) -> SweepResult:
    """Run every run of ``config`` that is not cached, in parallel, and return the tidy table.

    Parameters
    ----------
    config : SweepConfig
    n_jobs : int, default 2
        Worker processes (joblib's loky backend; each worker uses one thread).
        1 runs in this process. Ignored with ``scheduler``.
    on_result : callable, optional
        Called with a :class:`SweepProgress` for every run as it finishes (cached
        runs first). Exceptions it raises stop the sweep; finished runs stay cached.
    cache_dir : path, optional
        Cache directory; default ``$DPCORE_CACHE_DIR/sweeps`` or ``.dpcore_cache/sweeps``.
    use_cache : bool, optional
        False: neither read nor write the cache. The default reads and writes it, except for an uploaded dataset
        (:func:`from_upload`): results computed from a visitor's file are never written to disk.
    scheduler : str, optional
        Address of a Dask scheduler (``"tcp://10.0.0.5:8786"``): the runs go through
        joblib's Dask backend on that cluster. Its workers need ``dpcore`` (and any
        ``config.providers``) importable. The cache stays on this machine.
    batch : bool, default True
        Train the network learners' runs that share a dense network together (DP-SGD, the non-private baseline,
        output perturbation, label DP; each kind in its own batches), as one batched computation in this process
        (:mod:`dpcore.sweep.batching`; each run equals the run trained alone with its seed, up to float
        rounding); the other runs go to the worker processes, or train in this process when their estimated work
        is below what starting the workers costs (:data:`IN_PROCESS_SECONDS`). False: every run alone. With
        ``scheduler`` every run goes to the cluster alone. :attr:`SweepResult.notes` says what was batched and
        what trained where.
    lanes : int, optional
        Threads of this process the batched runs are shared among (:func:`~dpcore.training.batched.train_together`);
        default ``n_jobs`` (every core for -1), at most the machine's cores. A server whose cores are a class's
        passes 1.

    Returns
    -------
    SweepResult

    Examples
    --------
    >>> import tempfile
    >>> cfg = SweepConfig(dataset="iris", learners=["majority"], axis="train_fraction",
    ...                   values=[0.5, 1.0], seeds=1, include_baselines=False)
    >>> res = run_sweep(cfg, n_jobs=1, cache_dir=tempfile.mkdtemp())
    >>> res.table[["learner", "value", "seed"]].to_dict("records")
    [{'learner': 'majority', 'value': 0.5, 'seed': 0}, {'learner': 'majority', 'value': 1.0, 'seed': 0}]

    References
    ----------
    .. [1] joblib, "Parallel: return_as='generator_unordered'", https://joblib.readthedocs.io
    .. [2] Dask, "joblib integration", https://ml.dask.org/joblib.html
    """
    if not isinstance(config, SweepConfig):
        raise DPTypeError(f"config must be a SweepConfig, got {type(config).__name__}")
    n_jobs = _check_jobs(n_jobs, local=scheduler is None)
    if lanes is None:
        lanes = min(max_jobs(), max_jobs() if n_jobs == -1 else n_jobs)
    elif isinstance(lanes, bool) or not isinstance(lanes, (int, np.integer)):
        raise DPTypeError(f"lanes must be a whole number >= 1 (threads for the batched runs), got "
                          f"{type(lanes).__name__} {lanes!r}")
    elif lanes < 1:
        raise DPValueError(f"lanes must be a whole number >= 1 (threads for the batched runs), got {lanes!r}")
    lanes = min(int(lanes), max_jobs())  # more threads than cores only take turns
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise DPValueError(
            f"scheduler must be a Dask scheduler address such as 'tcp://127.0.0.1:8786', got {scheduler!r}")
    t0 = time.perf_counter()
    runs = config.runs()
    total = len(runs)
    budget = active_budget()  # the workers hold each run to the caller's budget (the pages': the server's)
    check_work(Work(runs=total, drivers={"runs": _runs_driver(config)}), budget)
    if use_cache is None:
        use_cache = not from_upload(config)
    cache = SweepCache(cache_dir) if use_cache else None
    rows: list[dict] = []
    missing: list[RunSpec] = []
    warned: set = set()
    for run in runs:
        row = cache.get(run.key) if cache is not None else None
        if row is None:
            missing.append(run)
        else:
            rows.append(_as_planned(row, run))
    _reissue(rows, warned)
    if on_result is not None:
        for i, row in enumerate(rows, 1):
            on_result(SweepProgress(row, i, total, True))
    n_cached = len(rows)

    def finish(run: RunSpec, row: dict) -> None:
        if cache is not None:
            cache.put(run.key, row)
        row = {**row, "cached": False}
        rows.append(row)
        _reissue([row], warned)
        if on_result is not None:
            on_result(SweepProgress(row, len(rows), total, False))

    notes: list[str] = []
    if missing:
        alone: _Background | None = None

        def start_alone(runs: list[RunSpec]) -> None:
            # the runs that train alone start in the worker processes at once; the batches train here meanwhile,
            # and every row is handed to ``finish`` on this thread (a page's callback draws from its own thread).
            # Runs too small to be worth a worker's start train here first.
            def to_workers(rest: list[RunSpec]) -> None:
                nonlocal alone
                alone = _Background(lambda done: _run_loky(rest, n_jobs, done, budget, in_memory=from_upload(config)))

            _train_alone(runs, n_jobs, notes, finish, to_workers)
            trained_here.update(id(r) for r in runs)  # finished here, or given to the workers

        # with a second lane, the private runs' noise calibrations are worked out in a second process meanwhile
        ahead = contextlib.ExitStack()
        if lanes > 1 and batch and scheduler is None:  # else no run trains in a batch here, none is handed over
            from ..accounting.ahead import calibrating_ahead  # dp_accounting: only a sweep that computes loads it

            # about one calibration per swept value of a network learner (sigma for each epsilon); secure runs
            # train alone (why_not_together), and hand the second process nothing
            swept = {(r.learner, r.value) for r in missing if r.role == "swept" and not r.secure
                     and get_learner(r.learner).family == "network"}
            want = ahead.enter_context(calibrating_ahead(expected=len(swept)))
        else:
            want = None
        try:
            trained_here: set[int] = set()
            plan = plan_batches(missing, enabled=batch and scheduler is None, start_alone=start_alone,
                                why_off="a Dask scheduler was given" if scheduler is not None else "",
                                on_problem=None if want is None else functools.partial(_calibrate_ahead, want),
                                execute=execute_run, on_row=finish)
            for note in plan.notes:
                _LOG.info(note)
            plan.notes.extend(notes)  # what start_alone said; from here on one list, which the batches add to
            notes = plan.notes
            if alone is None:
                missing = [r for r in plan.alone + plan.refused if id(r) not in trained_here]
                missing += run_batches(plan, execute_run, finish, lanes=int(lanes))
            else:
                missing = plan.refused + run_batches(plan, execute_run, finish, lanes=int(lanes),
                                                     between=lambda: alone.deliver(finish))
                alone.deliver(finish, wait=True)
            if want is not None and (used := want.used()):
                _say(notes, f"{used} noise calibration{'s' if used != 1 else ''} worked out ahead in a second process "
                            "while this one read its runs and trained")
        finally:
            ahead.close()
            if alone is not None:
                alone.stop()
    if missing:
        if scheduler is not None:
            _say(notes, f"{len(missing)} run{'s' if len(missing) != 1 else ''} trained on the Dask cluster")
            _run_dask(missing, scheduler, finish, budget)
        else:
            _train_alone(missing, n_jobs, notes, finish,
                         lambda rest: _run_loky(rest, n_jobs, finish, budget, in_memory=from_upload(config)))
    return SweepResult(config, build_table(config, rows), n_cached, len(rows) - n_cached, time.perf_counter() - t0,
                       tuple(notes))


_workers_used = [-math.inf]  # time.monotonic() when the local worker processes last finished work


def _say(notes: list[str], note: str) -> None:
    notes.append(note)
    _LOG.info(note)


def _in_workers(runs: list[RunSpec], n_jobs: int) -> str:
    """The note for ``runs`` handed to the local worker processes (as many as :func:`_run_loky` starts)."""
    workers = min(n_jobs if n_jobs > 0 else (os.cpu_count() or 1), len(runs))
    return (f"{len(runs)} run{'s' if len(runs) != 1 else ''} trained in {workers} worker "
            f"process{'es' if workers != 1 else ''}")


def _train_alone(runs: list[RunSpec], n_jobs: int, notes: list[str], finish: Callable[[RunSpec, dict], None],
                 to_workers: Callable[[list[RunSpec]], None]) -> None:
    """Train ``runs`` one by one: in this process when their estimated work is below what starting the workers
    would cost (:data:`IN_PROCESS_SECONDS`), else ``to_workers(runs)``. Estimating a run goes as far as its first
    :func:`~dpcore.runtime.workload.check_work`; a learner that never asks is run to its end by then, and its row
    is kept, not computed again. Says where the runs trained in ``notes``."""
    here, done = _probe(runs, n_jobs, notes)
    for run in runs:
        if id(run) in done:
            finish(run, done[id(run)])
    rest = [r for r in runs if id(r) not in done]
    if here:
        for run in rest:
            finish(run, execute_run(run))
    else:
        if done:
            _say(notes, f"{len(done)} run{'s' if len(done) != 1 else ''} trained in this process while "
                        f"{'their' if len(done) != 1 else 'its'} work was estimated (the learner does not declare it)")
        if rest:
            _say(notes, _in_workers(rest, n_jobs))
            to_workers(rest)


def _probe(runs: list[RunSpec], n_jobs: int, notes: list[str]) -> tuple[bool, dict[int, dict]]:
    """Whether ``runs`` train in this process rather than in worker processes (their estimated work, each
    learner's own :class:`~dpcore.runtime.workload.Work` or the time it took when it finished without asking, is
    below what starting the workers would cost), and the rows of those that finished while being estimated."""
    done: dict[int, dict] = {}
    if n_jobs == 1 or not runs:
        return True, done
    warm = time.monotonic() - _workers_used[0] < _WORKERS_IDLE_SECONDS
    limit = IN_PROCESS_SECONDS_WARM if warm else IN_PROCESS_SECONDS
    total = 0.0
    for run in runs:
        t0 = time.perf_counter()
        try:
            row, work = run_or_estimate(functools.partial(execute_run, run))
        except Exception:  # noqa: BLE001 - the run fails; it says why when it runs again, where it belongs
            row, work = None, None
        if row is not None:
            done[id(run)] = row
        total += work.seconds if work is not None else time.perf_counter() - t0
        if total > limit:
            return False, done
    note = (f"{len(runs)} run{'s' if len(runs) != 1 else ''} trained in this process (about {total:.1f} s of work, "
            f"less than handing {'it' if len(runs) == 1 else 'them'} to {'the' if warm else 'new'} worker processes "
            "would cost)")
    notes.append(note)
    _LOG.info(note)
    return True, done


class _Stopped(Exception):
    """The caller of a :class:`_Background` gave up (an error, or its callback raised): stop dispatching."""


class _Background:
    """``work(done)`` in a thread of its own; each ``done(run, row)`` it calls is queued, and :meth:`deliver` hands
    the rows (and its error, if it fails) to the caller's ``finish`` on the caller's thread."""

    def __init__(self, work: Callable[[Callable[[RunSpec, dict], None]], None]) -> None:
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._ended = False  # the work's last item was handed over
        self._thread = threading.Thread(target=self._main, args=(work,), name="dpcore-sweep-alone", daemon=True)
        self._thread.start()

    def _main(self, work) -> None:
        try:
            work(self._done)
        except _Stopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, raised there
            self._queue.put(("error", exc))
        finally:
            self._queue.put(("end", None))

    def _done(self, run: RunSpec, row: dict) -> None:
        if self._stop.is_set():
            raise _Stopped
        self._queue.put(("row", (run, row)))

    def deliver(self, finish: Callable[[RunSpec, dict], None], *, wait: bool = False) -> None:
        """Hand the rows that arrived to ``finish``; with ``wait``, until the work is over."""
        while not self._ended:
            try:
                kind, item = self._queue.get(block=wait)
            except queue.Empty:
                return
            if kind == "row":
                finish(*item)
            elif kind == "error":
                self._stop.set()
                raise item
            else:
                self._ended = True

    def stop(self) -> None:
        self._stop.set()


def _runs_driver(config: SweepConfig) -> tuple[str, int]:
    """The sweep input that multiplies its runs most, for the refusal: the axis values or the seeds."""
    values, seeds = len(config.values), int(config.seeds)
    return ("values", values) if values >= seeds else ("seeds", seeds)


def _key_and_row(run: RunSpec, limit_threads: bool, budget: WorkBudget) -> tuple[str, dict]:
    set_default_budget(budget)
    return run.key, execute_run(run, limit_threads=limit_threads)


def _consume(parallel, missing: list[RunSpec], finish, limit_threads: bool, where: str,
             budget: WorkBudget) -> None:
    import joblib

    by_key = {r.key: r for r in missing}
    gen = parallel(joblib.delayed(_key_and_row)(r, limit_threads, budget) for r in missing)
    it = iter(gen)
    try:
        while True:
            try:
                key, row = next(it)
            except StopIteration:
                break
            except DPCoreError:
                raise
            except Exception as exc:  # noqa: BLE001 - a dead worker, an unreachable module...
                detail = " ".join(str(exc).split())  # one line, for the CLI and st.error
                raise SweepRunError(
                    f"the sweep failed in {where}: {type(exc).__name__}: {detail} Finished runs are cached; "
                    "run the sweep again to resume."
                ) from exc
            finish(by_key[key], row)  # the caller's callback may raise: that stops the sweep as is
    finally:
        close = getattr(gen, "close", None)
        if close is not None:
            close()


#: joblib's loky executor is one per process and is resized (killing running tasks) when a call asks
#: for a different size; a dashboard serves several visitors from threads, so their sweeps take turns.
_LOKY_LOCK = threading.Lock()


def _run_loky(missing: list[RunSpec], n_jobs: int, finish, budget: WorkBudget, *, in_memory: bool = False) -> None:
    import joblib

    workers = min(n_jobs if n_jobs > 0 else (os.cpu_count() or 1), len(missing))
    # joblib hands arrays over 1 MB to the workers through files in a temporary folder; an upload's rows go through
    # the pipe instead (max_nbytes=None), so no copy of them is written anywhere
    extra = {"max_nbytes": None} if in_memory else {}
    with _LOKY_LOCK, joblib.parallel_config(backend="loky", inner_max_num_threads=1):
        parallel = joblib.Parallel(n_jobs=workers, return_as="generator_unordered", **extra)
        try:
            _consume(parallel, missing, finish, True, f"the local worker processes (n_jobs={workers})", budget)
        finally:
            _workers_used[0] = time.monotonic()


def _run_dask(missing: list[RunSpec], scheduler: str, finish, budget: WorkBudget) -> None:
    import joblib

    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - dask[distributed] is a dependency
        raise DPValueError("scheduler= needs the 'distributed' package: pip install 'dask[distributed]'") from None
    from ..runtime.remote import check_scheduler

    check_scheduler(scheduler, timeout=DASK_CONNECT_TIMEOUT)  # at once, before a Client whose failure costs 20 s
    try:
        client = Client(scheduler, timeout=f"{DASK_CONNECT_TIMEOUT}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise DPValueError(
            f"could not connect to the Dask scheduler at {scheduler!r} ({exc}); start one with "
            "`dask scheduler` (and `dask worker ADDRESS` on each machine) and pass its tcp://host:port"
        ) from None
    try:
        with joblib.parallel_config(backend="dask", client=client, wait_for_workers_timeout=30):
            parallel = joblib.Parallel(n_jobs=-1, return_as="generator_unordered")
            _consume(parallel, missing, finish, True,
                     f"the Dask cluster at {scheduler} (its workers need dpcore and the providers importable)", budget)
    finally:
        client.close()


__all__ = [
    "ID_COLUMNS",
    "TAIL_COLUMNS",
    "SweepProgress",
    "SweepResult",
    "SweepRunError",
    "build_table",
    "cached_result",
    "from_upload",
    "WARNING_SEP",
    "execute_run",
    "run_sweep",
    "table_warnings",
]
