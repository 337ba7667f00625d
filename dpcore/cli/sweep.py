"""``sweep`` command: a privacy-utility sweep from the terminal, written as a tidy CSV.

``python -m dpcore sweep --dataset digits --algorithms dpsgd,erm-objective --axis epsilon
--values 0.1,0.3,1,3,10 --seeds 3 --out results.csv`` draws a progress bar on
stderr, prints the across-seed means on stdout and writes one row per run to
``--out``. ``--scheduler tcp://HOST:8786`` runs on a Dask cluster instead of local
processes. Bad input exits with status 2 and a one-line message.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

from ..defaults import DELTA, EPSILON
from ..exceptions import DPValueError
from ..sweep import AXES, DEFAULT_JOBS, DEFAULT_RANGES, DEFAULT_SEEDS, JOBS_HELP
from ..sweep.summary import neighbouring_note, overspent_note
from ..teaching.verdict import round_epsilon
from . import command_help
from .data import add_data_flags, add_noise_flags, dataset_from_args, noise_from_args
from .train import parse_set

_BAR = 30


def add_parser(sub) -> None:
    p = sub.add_parser("sweep", help=command_help("sweep"))
    add_data_flags(p)
    p.add_argument("--algorithms", "--algorithm", default=None,  # train and audit spell it singular
                   help="comma-separated learner names, e.g. dpsgd,erm-objective (default: the Trade-off "
                        "explorer's selection for the data and axis, e.g. dpsgd,erm-objective for classification)")
    p.add_argument("--axis", default="epsilon",
                   help="epsilon (default), clip_norm, noise_multiplier, learning_rate, train_fraction, "
                        "or another numeric knob the learners take")
    p.add_argument("--values", default=None,
                   help="comma-separated axis values, e.g. 0.1,0.3,1,3,10 (default: the Trade-off explorer's range "
                        "for the axis: " + "; ".join(f"{a} {lo:g} to {hi:g}, {n} values"
                                                     for a, (lo, hi, n) in DEFAULT_RANGES.items()) + ")")
    p.add_argument("--range", dest="value_range", default=None, metavar="MIN,MAX,N",
                   help="N values from MIN to MAX instead of --values (log-spaced for epsilon)")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help=f"repetitions per value (default {DEFAULT_SEEDS})")
    add_noise_flags(p, seed_help="first seed")
    p.add_argument("--epsilon", type=float, default=EPSILON, action=_Given,
                   help=f"fixed epsilon when the axis is not epsilon (default {EPSILON:g})")
    p.add_argument("--delta", type=float, default=DELTA, help=f"delta of (epsilon, delta)-DP (default {DELTA:g})")
    p.add_argument("--train-fraction", type=float, default=1.0, action=_Given,
                   help="share of the training rows each run uses, in (0, 1] (default 1: all of them)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a fixed knob, given to every learner that takes it (repeatable)")
    p.add_argument("--no-baselines", action="store_true", help="skip the non-private and trivial baselines")
    p.add_argument("--jobs", type=int, default=DEFAULT_JOBS, help=JOBS_HELP)
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="run on this Dask scheduler")
    p.add_argument("--cache-dir", default=None,
                   help="run cache (default $DPCORE_CACHE_DIR/sweeps or .dpcore_cache/sweeps for a registry dataset, "
                        "none for --data)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the run cache")
    p.add_argument("--provider", action="append", default=[], metavar="MODULE",
                   help="import this module to register extra learners (also in every worker)")
    p.add_argument("--out", default=None, help="CSV file for the tidy table ('-' or omitted: stdout)")
    p.set_defaults(func=_run, from_cache=_from_cache)


def _floats(text: str, what: str) -> list[float]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    try:
        return [float(t) for t in items]
    except ValueError:
        raise DPValueError(f"{what} must be comma-separated numbers, got {text!r}") from None


def _values(args) -> list[float]:
    from ..sweep import default_values, value_range

    if args.values is not None and args.value_range is not None:
        raise DPValueError("give either --values or --range, not both")
    if args.value_range is not None:
        parts = _floats(args.value_range, "--range")
        if len(parts) != 3 or not float(parts[2]).is_integer():
            raise DPValueError(f"--range expects MIN,MAX,N (N a whole number), got {args.value_range!r}")
        return list(value_range(args.axis, parts[0], parts[1], int(parts[2]), points_name="--range N"))
    if args.values is None:
        return list(default_values(args.axis))  # an axis without a default range says to give --values
    return _floats(args.values, "--values")


class _ProgressBar:
    """A one-line progress bar on stderr (a line per run when stderr is not a terminal)."""

    def __init__(self, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.t0 = time.perf_counter()

    def __call__(self, progress) -> None:
        row = progress.row
        filled = int(round(_BAR * progress.fraction))
        metric = next((k for k in ("accuracy", "mse") if k in row), None)
        what = "baseline" if row["value"] != row["value"] else f"{row['axis']}={row['value']:g}"
        score = f" {metric}={row[metric]:.4g}" if metric else ""
        tag = " (cached)" if progress.cached else ""
        line = (f"[{'#' * filled}{'.' * (_BAR - filled)}] {progress.done}/{progress.total} "
                f"{time.perf_counter() - self.t0:5.1f}s  {row['learner']} {what} seed={row['seed']}{score}{tag}")
        if self.tty:
            self.stream.write("\r\x1b[2K" + line)
            if progress.done == progress.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


#: Flags that change where a sweep's runs are computed or its table is written, not what it is: left out of the key
#: under which the plan of its inputs is remembered.
_NOT_IN_PLAN = ("func", "from_cache", "command", "jobs", "scheduler", "cache_dir", "no_cache", "out", "given")


class _Given(argparse.Action):
    """Store the value and record that the flag was given (its default is then not what the run reads)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.given = (*getattr(namespace, "given", ()), self.dest)


#: The flags that fix a value the axis of the same name sweeps: given with that axis they would be silently unused.
_FIXED_BY_FLAG = {"epsilon": "--epsilon", "train_fraction": "--train-fraction"}


def _fixed_values(args) -> None:
    """Refuse a fixed value given for the quantity the axis sweeps: the axis's values replace it, so it would not be
    used."""
    axis = args.axis.replace("-", "_")
    if axis in _FIXED_BY_FLAG and axis in getattr(args, "given", ()):
        flag = _FIXED_BY_FLAG[axis]
        raise DPValueError(f"{flag} fixes the {axis} when the axis is another one; along --axis {args.axis} the "
                           f"{axis} values are --values (or --range), so {flag} {getattr(args, axis):g} would not "
                           f"be used: drop it, or put it in --values")


def _plan_key(args) -> str | None:
    """The key under which the cache remembers the runs these inputs gave (:meth:`SweepConfig.plan`): the inputs and
    a digest of dpcore's whole source, so a plan is only read back by the code that made it. None where a plan
    cannot stand in for the learner registry: no cache, your own file, extra providers or a cluster, or a registry
    already changed in this process."""
    from ..learners import registry_touched
    from ..sweep.config import tree_digest

    if args.no_cache or args.data or args.provider or args.scheduler or registry_touched():
        return None
    inputs = {k: v for k, v in sorted(vars(args).items()) if k not in _NOT_IN_PLAN}
    doc = json.dumps({"inputs": inputs, "code": tree_digest()}, sort_keys=True, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()


def _from_cache(args) -> int | None:
    """The sweep answered from the disk cache without loading the learners (no torch, no scikit-learn: ``main``
    calls this before the training threads are set up), when these inputs were swept before by this code and every
    run is cached; None otherwise, and the sweep runs as usual (:func:`_run`)."""
    from ..sweep import SweepCache, SweepConfig

    _fixed_values(args)
    key = _plan_key(args)
    cache = SweepCache(args.cache_dir)
    plan = cache.get_plan(key) if key is not None else None
    if plan is None:
        return None
    try:
        config = SweepConfig.from_plan(plan)
    except (KeyError, TypeError, ValueError):  # a plan of another shape: sweep as usual
        return None
    if not all(run.key in cache for run in config.runs()):
        return None
    if args.algorithms is None:
        _say_default_learners(config.learners)
    return _answer(args, config, plan=plan, plan_key=key)


def _say_default_learners(learners) -> None:
    print(f"note: --algorithms not given: sweeping {','.join(learners)}, as the Trade-off explorer starts",
          file=sys.stderr)


def _run(args) -> int:
    from ..sweep import SweepCache, SweepConfig
    from . import said

    _fixed_values(args)
    key = _plan_key(args)  # before anything loads the learners
    data = dataset_from_args(args)
    axis = args.axis.replace("-", "_")
    if args.algorithms is None:  # the page's default selection for this data and axis
        from ..datasets import load_dataset
        from ..sweep.choices import default_learners, sweepable

        ds = load_dataset(data) if isinstance(data, str) else data
        learners = default_learners(sweepable(ds.task, ds.is_image, axis), ds.task,
                                    class_shares=bool(getattr(ds, "class_shares", ())))
        if not learners:
            raise DPValueError(
                f"--axis {args.axis!r}: no registered learner for {ds.name} can be swept along it; the axes are "
                f"{', '.join(AXES)} or a knob a learner takes (python -m dpcore train --list shows the learners, "
                "train --help their knobs); or name the learners with --algorithms")
        _say_default_learners(learners)
    else:
        learners = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    seed, secure = noise_from_args(args)
    warned = len(said)
    config = SweepConfig(
        dataset=data,
        secure=secure,
        learners=learners,
        axis=axis,
        values=_values(args),
        seeds=args.seeds,
        base_seed=seed or 0,
        epsilon=args.epsilon,
        delta=args.delta,
        params=parse_set(args.set),
        train_fraction=args.train_fraction,
        include_baselines=not args.no_baselines,
        providers=tuple(args.provider),
    )
    if key is not None and len(said) == warned and (plan := config.plan()) is not None:
        SweepCache(args.cache_dir).put_plan(key, plan)  # a plan says no warnings: only quiet inputs are remembered
        return _answer(args, config, plan=plan, plan_key=key)
    return _answer(args, config)


def _answer(args, config, *, plan: dict | None = None, plan_key: str | None = None) -> int:
    """Run (or read back) ``config`` with the progress bar and write its table: the same for a sweep that computes
    and one answered from the cache. ``plan``: the sweep's stored plan, whose note on its runs released together
    (kept there by the sweep that computed them, under ``plan_key``) a cached sweep prints without composing the
    runs again (dp_accounting took half a second to import, the cached 24-run sweep's whole budget)."""
    from ..sweep import SweepCache, run_sweep

    if config.sets_noise:
        print("note: noise_multiplier is set, so each run spends the epsilon its sigma gives (the epsilon column); "
              "--epsilon is not used", file=sys.stderr)
    if args.out and args.out != "-":
        parent = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(parent):
            raise DPValueError(f"--out: the directory {parent!r} does not exist")
        if os.path.isdir(args.out):
            raise DPValueError(f"--out: {args.out!r} is a directory; give a file name such as {args.out}/results.csv")
        if not os.access(parent, os.W_OK) or (os.path.exists(args.out) and not os.access(args.out, os.W_OK)):
            raise DPValueError(f"--out: cannot write {args.out!r} (no permission); choose a file you can write")
    # the runs of one's own file stay off the shared cache (the server's pages read it too), as the report's and the
    # pages' do: a run's record there carries its warnings, which may quote a label's cell value
    own = getattr(args, "data", None) is not None and args.cache_dir is None
    if own and not args.no_cache:
        print("note: the runs on your file are not cached on disk (give --cache-dir to keep them)", file=sys.stderr)
    result = run_sweep(config, n_jobs=args.jobs, on_result=_ProgressBar(), cache_dir=args.cache_dir,
                       use_cache=not args.no_cache and not own, scheduler=args.scheduler)
    for note in result.notes:  # what trained together, alone or in this process, and why (a cached run has none)
        print(f"note: {note}", file=sys.stderr)
    if (note := neighbouring_note(result.table, markdown=False, wordings=config.wordings())) is not None:
        print(note.replace("`", ""), file=sys.stderr)
    if (note := overspent_note(result.table, markdown=False, wordings=config.wordings())) is not None:
        print(note, file=sys.stderr)  # a value of 0.1 beside an epsilon spent of 45: which one the run spent
    if args.out and args.out != "-":
        result.table.to_csv(args.out, index=False)
        metric = summary_metric(result)
        if metric != result.metric:
            print(f"note: the means below are of {metric.replace('_', ' ')} (each class's share found right, "
                  "averaged), as the Trade-off explorer draws them where one class is at least 80% of the rows: "
                  "there always answering it scores its share in accuracy; the CSV has both", file=sys.stderr)
        summary = result.summary(metric)
        spent = summary["epsilon_spent"].map(lambda e: round_epsilon(e, 6))  # up, never below the epsilon spent
        summary = summary.round(4).assign(epsilon_spent=spent)
        print(summary.to_string(index=False))
        note = (plan or {}).get(RELEASED_TOGETHER)
        if not isinstance(note, str):  # composed once, then kept with the plan: the same runs compose the same
            note = released_together_note(result.table) or ""
            if plan_key is not None and plan is not None and result.n_computed + result.n_cached == len(result.table):
                SweepCache(args.cache_dir).put_plan(plan_key, {**plan, RELEASED_TOGETHER: note})
        if note:  # the means read several runs each
            print(note, file=sys.stderr)
        print(f"wrote {len(result.table)} runs to {args.out} ({result.n_computed} computed, "
              f"{result.n_cached} from the cache) in {result.seconds:.1f} s", file=sys.stderr)
    else:
        result.table.to_csv(sys.stdout, index=False)
    return 0


#: The key of a sweep plan's note on its runs released together (:func:`released_together_note`).
RELEASED_TOGETHER = "released_together"


def released_together_note(table) -> str | None:
    """What the sweep's private runs on the data spend released together (None without any), said under the summary
    ``--out`` prints: each of its rows is one run's epsilon beside a mean over its seeds, and the sweep trained them
    all on the same rows (without ``--out`` every run is a row of its own). By
    :func:`~dpcore.sweep.summary.composition`, the Trade-off explorer's "ε if every run were released"."""
    from ..sweep.summary import composition, composition_delta_text, composition_unit_text, private_swept, spent_text

    runs = private_swept(table)
    if not len(runs):
        return None
    epsilon, delta, replaced, unit = composition(runs)
    return (f"note: the {len(runs)} private runs of this sweep on the data, released together, spend ε = "
            f"{spent_text(epsilon, infinity='inf')}{composition_delta_text(delta) if epsilon < float('inf') else ''}"
            f"{' for a record replaced' if replaced and unit is not None else ''}{composition_unit_text(unit)} "
            "(dp_accounting's Rényi composition, or their ε added up where smaller); each row's epsilon_spent is one "
            "run's, and its mean reads its seeds' runs")


def summary_metric(result) -> str:
    """The metric the printed means are of: the sweep's own, or balanced accuracy where the trivial baseline
    (always answering the most common training class) scores at least
    :data:`~dpcore.decision.advisor.COMMON_CLASS` in accuracy, as the Trade-off explorer's chart and the advisor
    start (:func:`~dpcore.decision.advisor.chart_metrics`). Read off the runs' table, so a cached sweep loads no data.

    On a 3,000-row 88/7/5 table with declared class shares the means printed DP-SGD at 0.74 below the majority
    class's 0.87 in accuracy, while it found the rare classes (balanced accuracy 0.57 against 0.33).
    """
    from ..decision.advisor import COMMON_CLASS

    table = result.table
    if result.metric != "accuracy" or "balanced_accuracy" not in table or "role" not in table:
        return result.metric
    trivial = table.loc[table.role == "trivial", "accuracy"]
    return "balanced_accuracy" if len(trivial) and float(trivial.mean()) >= COMMON_CLASS else result.metric
