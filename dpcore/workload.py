"""How much work one request may ask of the machine, estimated and refused before anything is allocated.

A shared classroom server must not let one visitor's ``epochs=1000000000`` or ``k=1000`` exhaust its
memory or its cores. Each engine (DP-SGD's :func:`dpcore.training.train`, FedAvg, k-means, the sweep)
estimates the work its inputs ask for as a :class:`Work` (steps, arithmetic, the largest allocation,
model parameters, runs) and calls :func:`check_work` first: what exceeds the active
:class:`WorkBudget` is refused with a message naming the parameter that drives it and the largest
value that fits. While a run goes on, :class:`MemoryGuard` stops it at the next epoch if the process
still grows past the budget's memory.

Two budgets ship: :data:`SERVER` (the pages: about a minute of work and 1.5 GB per run) and
:data:`COMMAND_LINE` (the CLI and library use: a few hours of work, 8 GB). ``dpcore.ui`` switches the
process to the server budget; the environment variable ``DPCORE_WORK_BUDGET`` overrides either, by name
(``server``, ``command-line``) and/or field (``server,memory_bytes=3e9,steps=5e5``).

>>> w = Work(steps=2e9, drivers={"steps": ("epochs", 1e9)})
>>> try:
...     check_work(w, SERVER)
... except WorkBudgetExceeded as e:
...     print(str(e).split(";")[0])
epochs=1000000000 asks for 2e+09 optimiser steps
"""
from __future__ import annotations

import dataclasses
import math
import os
import resource
import sys
import threading
import weakref
from dataclasses import dataclass, field

from .exceptions import DPValueError

_ENV = "DPCORE_WORK_BUDGET"


class WorkBudgetExceeded(DPValueError):
    """A request asks for more work than the active :class:`WorkBudget` allows (nothing was started)."""


@dataclass(frozen=True)
class WorkBudget:
    """The most one request may ask for. Every field is a limit; ``inf`` means none.

    Attributes
    ----------
    name : str
    steps : float
        Optimiser steps of one training run, client updates of one federated run, k-means iterations.
    operations : float
        Arithmetic (multiply-adds), roughly: 1e10 take about a second on two laptop cores.
    memory_bytes : float
        The largest allocation one run makes (the model and its gradients, a distance matrix, a
        participation schedule).
    parameters : float
        Model parameters of one network.
    runs : float
        Runs in one sweep.
    """

    name: str
    steps: float = math.inf
    operations: float = math.inf
    memory_bytes: float = math.inf
    parameters: float = math.inf
    runs: float = math.inf


#: The pages on a shared server: about a minute of work and 1.5 GB per run.
SERVER = WorkBudget("server", steps=200_000, operations=6e11, memory_bytes=1.5e9, parameters=2e7, runs=2_000)
#: The command line and the library: hours of work and 8 GB.
COMMAND_LINE = WorkBudget("command-line", steps=2e7, operations=5e13, memory_bytes=8e9, parameters=5e8,
                          runs=100_000)
BUDGETS = {b.name: b for b in (SERVER, COMMAND_LINE)}

_default = COMMAND_LINE

#: What each field counts, for messages; checked in this order (the model's size before the work it causes).
_UNITS = {"parameters": "model parameters", "memory_bytes": "bytes of memory", "runs": "runs",
          "steps": "optimiser steps", "operations": "arithmetic operations"}


@dataclass(frozen=True)
class Work:
    """What one request asks for, estimated from its inputs alone (0 where it does not apply).

    ``drivers`` names, for each field, the parameter that drives it and that parameter's value,
    assuming the work grows in proportion to it: ``{"steps": ("epochs", 1e9)}``. The refusal then
    says the largest value that fits. A driver given as ``(name, value, power)`` grows as
    ``value ** power`` (a hidden width in a deep network counts twice).
    """

    steps: float = 0.0
    operations: float = 0.0
    memory_bytes: float = 0.0
    parameters: float = 0.0
    runs: float = 0.0
    drivers: dict = field(default_factory=dict)


def parse_budget(text: str) -> WorkBudget:
    """A budget from ``"server"``, ``"command-line"`` or either followed by ``,field=value`` overrides.

    >>> parse_budget("server,memory_bytes=3e9").memory_bytes
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
    """Make ``budget`` the process's budget when the environment gives none (the pages choose the server's)."""
    global _default
    _default = parse_budget(budget) if isinstance(budget, str) else budget
    return _default


def active_budget() -> WorkBudget:
    """The budget in force: ``DPCORE_WORK_BUDGET`` if set, else the process default."""
    env = os.environ.get(_ENV)
    return parse_budget(env) if env else _default


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 1e6 else f"{x:.2g}"


def check_work(work: Work, budget: WorkBudget | None = None) -> None:
    """Refuse ``work`` if any field exceeds ``budget`` (default: :func:`active_budget`).

    Raises
    ------
    WorkBudgetExceeded
        Naming the parameter that drives the excess, what it asks for, what the budget allows and the
        largest value of the parameter that fits.
    """
    budget = budget or active_budget()
    for key, unit in _UNITS.items():
        amount, limit = float(getattr(work, key)), float(getattr(budget, key))
        if not math.isfinite(amount):
            amount = math.inf
        if amount <= limit:
            continue
        driver = work.drivers.get(key)
        fits = ""
        if driver is not None:
            name, value = driver[0], float(driver[1])
            power = driver[2] if len(driver) > 2 else 1
            head = f"{name}={_fmt(value) if value != int(value) else int(value)} asks for"
            if value > 0 and math.isfinite(amount):
                largest = value * (limit / amount) ** (1 / power)
                fits = f"; use at most {name}={int(largest) if largest >= 1 else _fmt(largest)}" \
                    if largest >= 1 else f"; even {name}=1 is too much here: make the data or the model smaller"
        else:
            head = "this request asks for"
        where = "on this shared server" if budget.name == "server" else f"in the {budget.name} budget"
        raise WorkBudgetExceeded(f"{head} {_fmt(amount)} {unit}; at most {_fmt(limit)} are allowed {where}{fits} "
                                 f"(the budget is set by {_ENV})")


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
                f"(the budget is set by {_ENV}); use fewer epochs, a smaller model or fewer rows")

    def close(self) -> None:
        """This run is over: its share leaves the common allowance."""
        with MemoryGuard._lock:
            MemoryGuard._active.discard(self)


__all__ = ["BUDGETS", "COMMAND_LINE", "MemoryGuard", "SERVER", "Work", "WorkBudget", "WorkBudgetExceeded",
           "active_budget", "check_work", "parse_budget", "resident_bytes", "set_default_budget"]
