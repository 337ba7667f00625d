"""A sweep's network runs trained together (:func:`dpcore.training.batched.train_together`), the rest alone.

The runs of a sweep that train the same dense network (a learner of the ``"network"`` family, on the ``linear``
or ``mlp`` model, seeded) differ only in their seed, budget, clip norm, learning rate...: they train as one
batched computation, in this process, and every other run goes to the worker processes as before. That is the
``dpsgd`` runs, the non-private baselines, and the networks the label-DP and output-perturbation learners train
without privacy (their noise, on the labels before training or on the outputs after, is the learner's own code,
which runs again when the run is served); DP-SGD runs and non-private runs train in separate batches. Each run's
row is still made by the learner itself (:func:`~dpcore.sweep.engine.execute_run`), so its cache entry, its
table row and its warnings are those of the run trained alone:

1. *capture*: the learner runs up to its training call and stops there, handing over its training problem
   (features, labels, :class:`~dpcore.training.TrainConfig`; :func:`dpcore.training.batched.capturing`);
2. *train*: the problems that share a network train together, each run with its own generators, samples,
   noise and odometer (run k equals the run trained alone);
3. *serve*: the learner runs again and receives its problem and trained result instead of training
   (:func:`dpcore.training.batched.serving`), and builds its row, predictions and warnings as always.

What was batched, and why the other runs were not, is logged (logger ``dpcore.sweep``) and kept in
:attr:`SweepResult.notes <dpcore.sweep.engine.SweepResult>`.
"""
from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..learners import get_learner, run_learner
from ..runtime.thread_warnings import caught as caught_warnings
from ..runtime.workload import WorkBudgetExceeded
from ..validation import delta_checked
from .config import RunSpec, load_providers

logger = logging.getLogger("dpcore.sweep")

#: Fewer runs than this that share a network train alone: a batch of one gains nothing.
MIN_BATCH = 2


def learner_call(run: RunSpec):
    """The learner call of one run, exactly as a sweep makes it (``run_learner`` with the run's settings)."""
    return run_learner(
        run.learner, run.dataset, epsilon=get_learner(run.learner).epsilon_to_aim_at(run.epsilon, dict(run.params)),
        delta=run.delta, seed=None if run.secure else run.seed, secure=run.secure,
        params=dict(run.params), train_fraction=run.train_fraction, test_size=run.test_size,
    )


@dataclass
class _Entry:
    run: RunSpec
    problem: Any
    fit_key: tuple
    result: Any = None
    as_made: bool = False  # the problem's arrays as training_problem made them (see offer)


@dataclass
class BatchPlan:
    """Which runs train together (``groups``, each one batch) and which alone: ``alone``, known from the learner
    alone, and ``refused``, known once the run's training problem was captured; ``notes`` say it in words."""

    groups: list[list[_Entry]]
    alone: list[RunSpec]
    notes: list[str]
    refused: list[RunSpec] = dataclasses.field(default_factory=list)
    #: runs that trained in full while their problem was looked for (a learner that never reaches dpcore's trainer),
    #: with their rows: kept, not trained again
    done: list[tuple[RunSpec, dict]] = dataclasses.field(default_factory=list)

    @property
    def batched(self) -> int:
        return sum(len(g) for g in self.groups)


def _torch_present() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def plan_batches(runs: list[RunSpec], *, enabled: bool = True, why_off: str = "",
                 start_alone: Callable[[list[RunSpec]], None] | None = None,
                 on_problem: Callable[[Any], None] | None = None,
                 execute: Callable[[RunSpec], dict] | None = None,
                 on_row: Callable[[RunSpec, dict], None] | None = None) -> BatchPlan:
    """Capture the training problems of the network runs and group those that can train together.

    ``start_alone(runs)``, if given, is called with the runs that train alone whatever their settings (other
    learners, secure mode) before any problem is captured, so that they can start at once; ``on_problem(pb)`` with
    each problem that will train in a batch, as it is captured. With ``execute`` (the sweep's run-to-row function) a
    run whose learner trains without reaching dpcore's trainer gives its row while it is looked at: handed to
    ``on_row(run, row)`` at once, or kept in the plan's ``done``."""
    if not enabled:
        notes = [f"every run trained alone: {why_off}"] if runs and why_off else []
        return BatchPlan([], list(runs), notes)
    reasons: Counter = Counter()
    alone: list[RunSpec] = []
    groups: dict[tuple, list[_Entry]] = {}
    splits: dict[str, list] = {}  # the distinct X_train, y_train, X_test, y_test seen: shared by their runs
    torch_ok = None
    candidates = []
    for run in runs:
        load_providers(run.providers)
        spec = get_learner(run.learner)
        if spec.family == "network" and torch_ok is None:
            torch_ok = _torch_present()
        if spec.family != "network" or not torch_ok:
            reasons[(run.learner, "not a network learner (only networks trained by dpcore.training train "
                                  "together)")] += 1
            alone.append(run)
            continue
        if run.secure:
            reasons[(run.learner, "secure mode (runs train together with seeded noise only)")] += 1
            alone.append(run)
            continue
        candidates.append(run)
    if start_alone is not None and candidates and alone:
        start_alone(list(alone))
    started = start_alone is not None and bool(candidates and alone)
    refused: list[RunSpec] = []
    done: list[tuple[RunSpec, dict]] = []
    for run in candidates:
        entry, why, row = _capture(run, execute)
        if row is not None:
            reasons[(run.learner, why + "; each trained once, while the sweep looked for its problem")] += 1
            if on_row is not None:
                on_row(run, row)
            else:
                done.append((run, row))
            continue
        if entry is None:
            reasons[(run.learner, why)] += 1
            refused.append(run)
            continue
        from ..training.batched import TogetherRun, together_key, why_not_together

        pb = entry.problem
        if (why := why_not_together(pb.config)) is not None:
            reasons[(run.learner, why)] += 1
            refused.append(run)
            continue
        entry.problem = _shared(pb, splits, as_made=entry.as_made)
        if on_problem is not None:
            on_problem(entry.problem)
        key = together_key(TogetherRun(pb.X_train, pb.y_train, pb.config, n_outputs=pb.n_outputs))
        groups.setdefault(key, []).append(entry)
    out: list[list[_Entry]] = []
    notes = []
    for g in groups.values():
        if len(g) < MIN_BATCH:
            reasons[(g[0].run.learner, "no other run of the sweep shares its network")] += len(g)
            refused.extend(e.run for e in g)
            continue
        waves = _waves(g)
        out.extend(waves)
        c = g[0].problem.config
        net = "softmax/linear regression" if c.model == "linear" else f"MLP {c.depth}x{c.hidden} {c.activation}"
        how_trained = f"{'DP-SGD' if c.private else 'no privacy'}, {'Adam' if c.optimizer == 'adam' else 'SGD'}"
        n_data = len({id(e.problem.X_train) for e in g})
        how = "in one batch" if len(waves) == 1 else \
            f"in {len(waves)} batches (the first seed's {len(waves[0])} first, so that a first curve comes early)"
        who = [f"{n} {learner}" for learner, n in Counter(e.run.learner for e in g).items()]
        who = who[0] if len(who) == 1 else ", ".join(who[:-1]) + " and " + who[-1]
        trainings = sum(len(_distinct(w)[0]) for w in waves)
        shared = "" if trainings == len(g) else \
            f", {trainings} distinct trainings: runs that differ only after training share one"
        notes.append(f"{who} runs train together {how} ({net}, {how_trained}, "
                     f"{n_data} data split{'s' if n_data != 1 else ''}{shared})")
    for (learner, why), count in reasons.items():
        notes.append(f"{count} {learner} run{'s' if count != 1 else ''} trained alone: {why}")
    if not started:  # nothing started early: every run that trains alone goes together
        alone, refused = alone + refused, []
    return BatchPlan(out, alone, notes, refused, done)


def _waves(group: list[_Entry]) -> list[list[_Entry]]:
    """A group's batches: the runs of its first seed (a sweep's runs come seed by seed, so these make a first
    curve across the values), then all the others together; one batch when that would leave a batch of one."""
    first = [e for e in group if e.run.seed == group[0].run.seed]
    rest = [e for e in group if e.run.seed != group[0].run.seed]
    if len(first) < MIN_BATCH or len(rest) < MIN_BATCH:
        return [group]
    return [first, rest]


def _distinct(group: list[_Entry]) -> tuple[list, list[int]]:
    """The distinct training problems of ``group`` (same rows, labels and configuration: output perturbation at
    several epsilons trains one network per seed, its noise comes after), and the position of each entry's."""
    firsts: dict[tuple, int] = {}
    problems, which = [], []
    for e in group:
        pb = e.problem
        ident = (id(pb.X_train), id(pb.y_train), id(pb.X_test), id(pb.y_test), pb.n_outputs, pb.config)
        if ident not in firsts:
            firsts[ident] = len(problems)
            problems.append(pb)
        which.append(firsts[ident])
    return problems, which


def _capture(run: RunSpec, execute: Callable[[RunSpec], dict] | None = None) -> tuple[_Entry | None, str, dict | None]:
    """Run the learner up to its training call: its problem, or None and why not, and the run's row when the
    learner trained to its end without reaching the trainer (through ``execute``, if given)."""
    from ..training.batched import Captured, capturing

    row = None
    with caught_warnings(), np.errstate(all="ignore"):  # said again when the run is served (step 3)
        try:
            with capturing():
                if execute is None:
                    learner_call(run)
                else:
                    row = execute(run)
        except Captured as got:
            return _Entry(run, got.problem, got.fit_key, as_made=got.as_made), "", None
        except Exception:  # noqa: BLE001 - the run, trained alone, reports its own error with its name
            return None, "its settings fail before training (the run alone says why)", None
    return None, "it did not reach the network trainer (dpcore.training)", row


def _shared(pb, splits: dict[str, Any], *, as_made: bool = False):
    """``pb`` with each of its arrays replaced by an equal one seen before, so runs on one split share its rows (and
    label-DP runs, whose noisy labels differ, still share the features). ``as_made``: two copies of one split's
    kept features (:func:`~dpcore.training.learners.copied_from`), both as made, are equal without comparing them
    (comparing Adult's features took most of a sweep's set-up)."""
    from ..training.learners import copied_from

    changes = {}
    for name in ("X_train", "y_train", "X_test", "y_test"):
        a = getattr(pb, name)
        seen = splits.setdefault(name, [])
        # id of the kept array -> (that array, the copy of it shared): holding the kept array keeps its id its own
        # while the plan is made (the features' cache lets go of a split's arrays after 16 others)
        made = splits.setdefault(f"{name}, as made", {})
        source = copied_from(a) if as_made else None
        kept = made.get(id(source)) if source is not None else None
        same = kept[1] if kept is not None and kept[0] is source else None
        if same is None:
            same = next((b for b in seen if _equal(a, b)), None)
        if source is not None and (kept is None or kept[0] is not source):
            made[id(source)] = (source, a if same is None else same)
        if same is None:
            seen.append(a)
        else:
            changes[name] = same
    return dataclasses.replace(pb, **changes) if changes else pb


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.array_equal``, after a look at every 97th value: the splits of other seeds differ there, and comparing
    a large training set in full with each of them took most of a sweep's set-up (0.8 s for Adult's 10 splits)."""
    if a is b:
        return True
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    fa, fb = a.reshape(-1), b.reshape(-1)
    return bool(np.array_equal(fa[::97], fb[::97])) and bool(np.array_equal(a, b))


def run_batches(plan: BatchPlan, execute: Callable[[RunSpec], dict], finish: Callable[[RunSpec, dict], None], *,
                between: Callable[[], None] | None = None, lanes: int = 1) -> list[RunSpec]:
    """Train each group of ``plan`` together (in ``lanes`` threads) and hand every run's row to ``finish``; the runs
    of a group that failed as a batch are returned, to be run alone (where a failing run reports its own error).
    ``between()`` is called after every row (the sweep hands over the rows of the runs training alone meanwhile)."""
    from ..training.batched import TogetherRun, lanes_used, serving, train_together

    failed: list[RunSpec] = []
    in_lanes: list[int] = []  # runs trained in each batch that used more than one lane
    for group in plan.groups:
        if between is not None:
            between()
        problems, which = _distinct(group)
        together = [TogetherRun(pb.X_train, pb.y_train, pb.config, pb.X_test, pb.y_test, pb.n_outputs)
                    for pb in problems]
        try:
            results = None
            try:
                # the runs' own warnings are issued again as each is served below, inside its own row
                with caught_warnings(), delta_checked(), np.errstate(all="ignore"):
                    results = train_together(together, lanes=lanes)
            except WorkBudgetExceeded as exc:  # e.g. memory: each lane holds its own stack at once
                if lanes == 1:
                    raise
                note = f"{len(group)} runs went over the work allowed in {lanes} lanes ({exc}); tried again in one"
                plan.notes.append(note)
                logger.info(note)
            if results is None:  # tried again out of the handler, once the lanes' tensors are freed
                with caught_warnings(), delta_checked(), np.errstate(all="ignore"):
                    results = train_together(together, lanes=1)
        except Exception as exc:  # noqa: BLE001 - the runs go alone, where each reports what fails
            note = f"{len(group)} runs could not train in a batch ({type(exc).__name__}: {exc}); trained alone"
            plan.notes.append(note)
            logger.info(note)
            failed.extend(e.run for e in group)
            continue
        if (used := lanes_used()) > 1:
            in_lanes.append(used)
        for entry, j in zip(group, which):
            result = dataclasses.replace(results[j])  # each run its own result object (a learner may amend it)
            with serving(entry.fit_key, entry.problem, result):
                row = execute(entry.run)
            finish(entry.run, row)
            if between is not None:
                between()
    if in_lanes:
        n = len(in_lanes)
        note = (f"{n} batch{'es' if n != 1 else ''} shared among {max(in_lanes)} threads of this process (lanes); "
                "the others had too little work a step for more than one")
        plan.notes.append(note if n < len(plan.groups) else note.split(";")[0])
        logger.info(plan.notes[-1])
    return failed


__all__ = ["BatchPlan", "MIN_BATCH", "learner_call", "plan_batches", "run_batches"]
