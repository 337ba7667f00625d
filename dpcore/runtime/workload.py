"""How much work one run may ask of the machine, estimated and refused before anything is allocated.

A shared classroom server must not let one visitor's ``epochs=1000000000`` or ``k=1000`` exhaust its
memory or its cores, and a command typed with one zero too many should say so at once rather than run
for an hour. Each engine (DP-SGD's :func:`dpcore.training.train`, FedAvg, k-means, DP-ERM's random
features, the sweep) estimates the work its inputs ask for as a :class:`Work` (steps, arithmetic, the
largest allocation, model parameters, runs) and calls :func:`check_work` first: what exceeds the
:class:`WorkBudget` is refused with a message naming the parameter(s) that drive it and the largest
value of each that fits. While a run goes on, :class:`MemoryGuard` stops it at the next epoch if the
process still grows past the budget's memory.

One work model gives both the time and the memory: a run's estimated seconds are its steps times the
fixed cost of one step of its engine plus its arithmetic over the engine's throughput
(:attr:`Work.seconds`; each engine passes its own two constants, measured on this project's 2-core
machine and written beside its estimate). One budget, :data:`RUN` (about two minutes of estimated work
and 2 GB per run), holds every run a page or the command line starts. The operator raises it with
``DPCORE_MAX_RUN_SECONDS`` and ``DPCORE_MAX_RUN_MEMORY`` (``4e9``, ``4GB``, ``3.5GiB``), or any field with
``DPCORE_WORK_BUDGET`` (``run,memory_bytes=3e9,runs=5000``).

>>> w = Work(steps=2e9, step_seconds=1e-3, drivers={"seconds": ("epochs", 1e9)})
>>> try:
...     check_work(w, RUN)
... except WorkBudgetExceeded as e:
...     print(str(e).split(";")[0])
epochs=1000000000 asks for about 2e+06 seconds of work
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
import resource
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Callable

from ..exceptions import DPValueError

_ENV = "DPCORE_WORK_BUDGET"
_MEMORY_ENV = "DPCORE_MAX_RUN_MEMORY"
_SECONDS_ENV = "DPCORE_MAX_RUN_SECONDS"


class WorkBudgetExceeded(DPValueError):
    """A request asks for more work than the active :class:`WorkBudget` allows (nothing was started)."""


@dataclass(frozen=True)
class WorkBudget:
    """The most one run may ask for. Every field is a limit; ``inf`` means none.

    Attributes
    ----------
    name : str
    seconds : float
        Estimated wall time of one run (:attr:`Work.seconds`).
    memory_bytes : float
        The largest allocation one run makes (the model and its gradients, a distance matrix, a
        participation schedule, a random-feature projection).
    parameters : float
        Model parameters of one network.
    runs : float
        Runs in one sweep.
    steps, operations : float
        Optional finer limits on optimiser steps and arithmetic (none in :data:`RUN`: the seconds cover both).
    """

    name: str
    steps: float = math.inf
    operations: float = math.inf
    memory_bytes: float = math.inf
    parameters: float = math.inf
    runs: float = math.inf
    seconds: float = math.inf


#: Arithmetic operations per second on this project's 2-core machine: torch's (matrix products, convolutions) and
#: numpy's on large arrays (elementwise passes and memory-bound products: k-means distances, L-BFGS over features).
TORCH_THROUGHPUT, NUMPY_THROUGHPUT = 1e10, 2e9

#: Every run a page or the command line starts: about two minutes of estimated work and 2 GB.
RUN = WorkBudget("run", seconds=120.0, memory_bytes=2e9, parameters=2e7, runs=2_000)
#: The pages and the command line share :data:`RUN` (a budget of the command line's own once allowed
#: hours and 8 GB, a third of the machine); the two names stay for callers and for ``DPCORE_WORK_BUDGET=server``.
SERVER = COMMAND_LINE = RUN
BUDGETS = {"run": RUN, "server": RUN, "command-line": RUN}

_default = RUN

#: What each field counts, for messages; checked in this order (the model's size before the work it causes).
_UNITS = {"parameters": "model parameters", "memory_bytes": "bytes of memory", "runs": "runs",
          "steps": "optimiser steps", "operations": "arithmetic operations", "seconds": "seconds of work"}
#: The variable that raises each field's limit, named in a refusal.
_RAISED_BY = {"memory_bytes": _MEMORY_ENV, "seconds": _SECONDS_ENV}


@dataclass(frozen=True)
class Work:
    """What one run asks for, estimated from its inputs alone (0 where it does not apply).

    ``step_seconds`` is the fixed cost of one step of the engine (a torch step's overhead, a Lloyd round's
    passes) and ``throughput`` the arithmetic operations it does per second: :attr:`seconds` is
    ``steps * step_seconds + operations / throughput``.

    ``drivers`` names, for each field (``"seconds"`` included), the parameter(s) that drive it and their
    values, assuming the work grows in proportion to each: ``{"seconds": ("epochs", 1e9)}`` or a list of
    such tuples (``[("rounds", 10000), ("local_epochs", 100)]``). The refusal then says the largest value of
    each that fits. A driver given as ``(name, value, power)`` grows as ``value ** power`` (a hidden width in a
    deep network counts twice).
    """

    steps: float = 0.0
    operations: float = 0.0
    memory_bytes: float = 0.0
    parameters: float = 0.0
    runs: float = 0.0
    drivers: dict = field(default_factory=dict)
    step_seconds: float = 0.0
    throughput: float = TORCH_THROUGHPUT
    extra_seconds: float = 0.0
    #: ``resize(name, value) -> Work``: the same request with driver ``name`` set to ``value``, so that a refusal
    #: names the largest value that really fits (found by bisection) rather than a proportional guess
    resize: Callable[[str, float], "Work"] | None = field(default=None, compare=False, repr=False)

    @property
    def seconds(self) -> float:
        """The run's estimated wall time: its steps' fixed cost and its arithmetic (and ``extra_seconds``, the
        time of work estimated elsewhere, :func:`total_work`)."""
        return float(self.steps) * self.step_seconds + float(self.operations) / self.throughput + self.extra_seconds

    def repeated(self, times: int, driver: tuple | None = None) -> "Work":
        """The work of ``times`` such runs one after another: the time adds up, the memory does not.

        ``driver`` (e.g. ``("seeds", 20)``) joins the drivers of the time, so a refusal also says how
        many repetitions fit.
        """
        drivers = {k: _as_list(v) for k, v in self.drivers.items()}
        drivers["seconds"] = ([driver] if driver is not None else []) + _time_drivers(self)
        return dataclasses.replace(self, steps=self.steps * times, operations=self.operations * times,
                                   extra_seconds=self.extra_seconds * times, drivers=drivers, resize=None)


def _as_list(driver) -> list:
    """A field's drivers as a list of ``(name, value[, power])`` tuples."""
    if not driver:
        return []
    return list(driver) if isinstance(driver, list) else [driver]


def _time_drivers(work: Work) -> list:
    """The parameters that drive a run's time: declared for ``"seconds"``, else those of its steps and arithmetic."""
    if "seconds" in work.drivers:
        return _as_list(work.drivers["seconds"])
    out = []
    for key in ("steps", "operations"):
        out += [d for d in _as_list(work.drivers.get(key)) if d[0] not in [o[0] for o in out]]
    return out


def parse_bytes(text: str, name: str = _MEMORY_ENV) -> float:
    """A number of bytes from ``"2e9"``, ``"4GB"``, ``"3.5GiB"`` or ``"500MB"``.

    >>> parse_bytes("4GB"), parse_bytes("1GiB"), parse_bytes("3e9")
    (4000000000.0, 1073741824.0, 3000000000.0)
    """
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([kKmMgGtT]i?[bB]?|[bB])?\s*", str(text))
    units = {"": 1, "b": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
    try:
        if m is None:
            raise ValueError
        number = float(m.group(1))
        unit = (m.group(2) or "").lower()
        scale = (1024.0 ** ("kmgt".index(unit[0]) + 1)) if unit[1:2] == "i" else units[unit[:1]]
    except (ValueError, KeyError):
        raise DPValueError(f"{name} takes a number of bytes such as 4e9 or 4GB, got {text!r}") from None
    if not (number > 0 and math.isfinite(number)):
        raise DPValueError(f"{name} must be a number of bytes > 0, got {text!r}")
    return number * scale


def parse_budget(text: str) -> WorkBudget:
    """A budget from ``"run"`` (or ``"server"``, ``"command-line"``: the same one) followed by ``,field=value``
    overrides.

    >>> parse_budget("run,memory_bytes=3e9").memory_bytes
    3000000000.0
    """
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    base = _default
    if parts and "=" not in parts[0]:
        name = parts.pop(0).replace("_", "-")
        if name not in BUDGETS:
            raise DPValueError(f"{_ENV}: unknown budget {name!r}; use one of {', '.join(BUDGETS)}")
        base = BUDGETS[name]
    fields = {f.name for f in dataclasses.fields(WorkBudget)} - {"name"}
    changes = {}
    for item in parts:
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in fields:
            raise DPValueError(f"{_ENV}: unknown field {key!r}; use {', '.join(sorted(fields))}")
        try:
            number = float(value)
        except ValueError:
            raise DPValueError(f"{_ENV}: {key} takes a number, got {value!r}") from None
        if not number > 0:
            raise DPValueError(f"{_ENV}: {key} must be > 0, got {value!r}")
        changes[key] = number
    return dataclasses.replace(base, **changes)


def set_default_budget(budget: WorkBudget | str) -> WorkBudget:
    """Make ``budget`` the process's budget when the environment gives none (tests choose small ones)."""
    global _default
    _default = parse_budget(budget) if isinstance(budget, str) else budget
    return _default


def active_budget() -> WorkBudget:
    """The budget in force: ``DPCORE_WORK_BUDGET`` if set, else the process default, with
    ``DPCORE_MAX_RUN_MEMORY`` and ``DPCORE_MAX_RUN_SECONDS`` over it when set."""
    env = os.environ.get(_ENV)
    budget = parse_budget(env) if env else _default
    changes = {}
    if memory := os.environ.get(_MEMORY_ENV, "").strip():
        changes["memory_bytes"] = parse_bytes(memory)
    if seconds := os.environ.get(_SECONDS_ENV, "").strip():
        try:
            changes["seconds"] = float(seconds)
        except ValueError:
            raise DPValueError(f"{_SECONDS_ENV} takes a number of seconds, got {seconds!r}") from None
        if not changes["seconds"] > 0:
            raise DPValueError(f"{_SECONDS_ENV} must be a number of seconds > 0, got {seconds!r}")
    return dataclasses.replace(budget, **changes) if changes else budget


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 1e6 else f"{x:.2g}"


def _value_text(value: float) -> str:
    return str(int(value)) if value == int(value) else _fmt(value)


def check_work(work: Work, budget: WorkBudget | None = None) -> None:
    """Refuse ``work`` if any field exceeds ``budget`` (default: :func:`active_budget`).

    Inside :func:`estimating` it records ``work`` and stops the run there instead (nothing was allocated yet).

    Raises
    ------
    WorkBudgetExceeded
        Naming the parameter(s) that drive the excess, what they ask for, what the budget allows and the
        largest value of each that fits.
    """
    probe = getattr(_probing, "works", None)
    if probe is not None:
        probe.append(work)
        raise _Estimated()
    budget = budget or active_budget()
    for key, unit in _UNITS.items():
        amount, limit = float(getattr(work, key)), float(getattr(budget, key))
        if not math.isfinite(amount):
            amount = math.inf
        if amount <= limit:
            continue
        drivers = _time_drivers(work) if key == "seconds" else _as_list(work.drivers.get(key))
        if not drivers and key in ("steps", "operations"):
            drivers = _time_drivers(work)
        fits = []
        for driver in drivers:
            name, value = driver[0], float(driver[1])
            power = driver[2] if len(driver) > 2 else 1
            if value > 0 and math.isfinite(amount):
                largest = value * (limit / amount) ** (1 / power)
                if work.resize is not None and float(value).is_integer():
                    largest = _largest_fitting(work.resize, name, key, limit, int(value))
                if largest >= 1:
                    fits.append(f"{name}={int(largest)}" if float(value).is_integer() else f"{name}={_fmt(largest)}")
        if drivers:
            names = [f"{d[0]}={_value_text(float(d[1]))}" for d in drivers]
            head = f"{' and '.join(names)} {'asks' if len(names) == 1 else 'ask'} for"
        else:
            head = "this request asks for"
        about = "about " if key == "seconds" else ""
        if fits:
            tail = f"; use at most {' or '.join(fits)}"
        elif drivers:
            tail = "; even 1 is too much here: make the data or the model smaller"
        else:
            tail = ""
        raised = _RAISED_BY.get(key, _ENV)
        per = "in one sweep" if key == "runs" else "per run"
        raise WorkBudgetExceeded(f"{head} {about}{_fmt(amount)} {unit}; at most {_fmt(limit)} are allowed {per}{tail} "
                                 f"(an operator can raise the limit with {raised})")


def _largest_fitting(resize, name: str, key: str, limit: float, value: int) -> int:
    """The largest whole value of driver ``name`` below ``value`` whose work's ``key`` is within ``limit`` (0: none)."""
    def fits(v: int) -> bool:
        try:
            return float(getattr(resize(name, v), key)) <= limit
        except DPValueError:  # a value the engine itself refuses
            return False

    lo, hi = 0, value
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


class _Estimated(BaseException):
    """Stops a run at its first :func:`check_work` inside :func:`estimating` (a BaseException: a learner's own
    ``except Exception`` does not swallow it)."""


_probing = threading.local()


@contextlib.contextmanager
def estimating():
    """Runs inside the block stop at their first :func:`check_work`, before anything is allocated; the list it
    yields collects the :class:`Work` each asked for. A caller that repeats a run (seeds, a grid of epsilons)
    adds them up and checks the total before starting any (:func:`estimate_of`)."""
    before = getattr(_probing, "works", None)
    _probing.works = works = []
    try:
        yield works
    finally:
        _probing.works = before


def estimate_of(run) -> Work | None:
    """The :class:`Work` that ``run()`` asks for at its first :func:`check_work` (None when it ran to its end
    without asking: cheap work, done already)."""
    return run_or_estimate(run)[1]


def run_or_estimate(run):
    """``run()`` unless it asks for work first: ``(its value, None)`` when it ran to its end without asking (cheap
    work, done: keep the value), ``(None, Work)`` when it stopped at its first :func:`check_work`."""
    with estimating() as works:
        try:
            return run(), None
        except _Estimated:
            return None, works[0]


def total_work(works, *, times: int = 1, driver: tuple | None = None) -> Work:
    """The work of ``works`` run one after another, the whole list ``times`` times: the seconds add up, the
    memory is the largest one run holds. A refusal names ``driver`` (e.g. ``("seeds", 20)``) and the drivers
    of the costliest run (the knob that costs most).
    """
    works = [w for w in works if w is not None]
    if not works:
        return Work()
    costliest = max(works, key=lambda w: w.seconds)
    largest = max(works, key=lambda w: w.memory_bytes)
    one = Work(extra_seconds=sum(w.seconds for w in works), memory_bytes=largest.memory_bytes,
               parameters=max(w.parameters for w in works),
               drivers={"seconds": _time_drivers(costliest), "memory_bytes": largest.drivers.get("memory_bytes", []),
                        "parameters": largest.drivers.get("parameters", [])})
    return one.repeated(times, driver)


def max_jobs() -> int:
    """The most worker processes one sweep may start on this machine: its cores."""
    return max(1, os.cpu_count() or 1)


def resident_bytes() -> float:
    """This process's resident memory now (Linux ``/proc``; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return float(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return float(peak if sys.platform == "darwin" else peak * 1024)


class MemoryGuard:
    """Stops a run that grows past its share of memory, at the next point it checks.

    Created at the start of a run; :meth:`check` (called once per epoch or round) raises
    :class:`WorkBudgetExceeded` when the process has grown by more than ``budget.memory_bytes`` per run
    in progress since the oldest of them started. On a server several visitors' runs share one process,
    so the allowance is shared too: ten runs together may grow by ten shares, and a run is stopped only
    when the runs as a whole hold more than their shares (the estimate :func:`check_work` made first
    keeps an honest run well inside its share). The run ends with a message; the server carries on.
    """

    _active: "weakref.WeakSet[MemoryGuard]" = weakref.WeakSet()
    _lock = threading.Lock()

    def __init__(self, budget: WorkBudget | None = None, *, what: str = "this run"):
        self.budget = budget or active_budget()
        self.what = what
        self.start = resident_bytes()
        with MemoryGuard._lock:
            MemoryGuard._active.add(self)

    def check(self) -> None:
        with MemoryGuard._lock:
            guards = list(MemoryGuard._active) or [self]
        start = min(g.start for g in guards)
        grown = resident_bytes() - start
        allowed = self.budget.memory_bytes * len(guards)
        if grown > allowed:
            with MemoryGuard._lock:
                MemoryGuard._active.discard(self)
            share = f"{_fmt(self.budget.memory_bytes)} allowed per run"
            if len(guards) > 1:
                share += f" ({len(guards)} runs in progress)"
            raise WorkBudgetExceeded(
                f"{self.what} was stopped: memory grew by {_fmt(grown)} bytes, more than the {share} "
                f"(an operator can raise it with {_MEMORY_ENV}); use fewer epochs, a smaller model or fewer rows")

    def close(self) -> None:
        """This run is over: its share leaves the common allowance."""
        with MemoryGuard._lock:
            MemoryGuard._active.discard(self)


__all__ = ["BUDGETS", "COMMAND_LINE", "MemoryGuard", "NUMPY_THROUGHPUT", "RUN", "SERVER", "TORCH_THROUGHPUT", "Work",
           "WorkBudget", "WorkBudgetExceeded", "active_budget", "check_work", "estimate_of", "estimating",
           "max_jobs", "parse_budget", "parse_bytes", "resident_bytes", "set_default_budget", "total_work"]
