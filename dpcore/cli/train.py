"""``train`` command: run any registered learner headless.

With ``--json`` the last line is a JSON object with at least ``accuracy`` (or
``mse``/``r2``), ``epsilon``, ``delta``, ``noise_multiplier`` and ``seconds``.
"""
from __future__ import annotations

import math
import re
import sys

from ..defaults import DELTA, LEARNER
from ..exceptions import DPValueError
from ..learners import get_learner, parse_value, run_learner, trivial_learner
from ..teaching.verdict import epsilon_text, round_epsilon
from . import JSON_HELP, command_help, missing_message, print_json
from .data import add_data_flags, add_noise_flags, dataset_from_args, noise_from_args


def knob_flags(spec_names=None) -> dict:
    """Every knob name of the (given) registered learners -> its help, naming which learners take it.

    The ``train`` command offers each as a ``--flag``; what a value may be is the learner's
    declaration (:class:`~dpcore.learners.Knob`), checked when the run starts. A name that
    means different things to different learners (``model``) lists each meaning.
    """
    from ..learners import learners

    meanings: dict[str, dict[str, list[str]]] = {}
    for name, spec in learners().items():
        if spec_names is not None and name not in spec_names:
            continue
        for knob in spec.knobs:
            text = f"{knob.help} ({knob.describe()})" if knob.help else knob.describe()
            meanings.setdefault(knob.name, {}).setdefault(text, []).append(name)
    return {flag: "; ".join(f"{', '.join(takers)}: {text}" for text, takers in texts.items())
            for flag, texts in sorted(meanings.items())}


#: What ``--set`` cannot carry: the run's privacy and seed, each given by a flag of the command's own.
_NOT_KNOBS = {"epsilon": "--epsilon (--values or --range in a sweep along epsilon, --epsilon-range in report)",
              "delta": "--delta", "seed": "--seed (or --secure)"}


def parse_set(items: list[str]) -> dict:
    """Parse ``--set KEY=VALUE`` items (``-`` in KEY read as ``_``); values become int, float or bool when they can.

    What a value may be is the learner's knob declaration, checked when the run starts
    (``run_learner``, ``SweepConfig``), so every entry point refuses the same values.
    """
    params = {}
    for item in items:
        if "=" not in item:
            raise DPValueError(f"--set expects KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        key = k.strip().replace("-", "_")
        if not key:
            raise DPValueError(f"--set expects KEY=VALUE with a KEY, got {item!r}")
        value = parse_value(v.strip())
        if key in _NOT_KNOBS:  # the learners' check would answer "does not take parameter(s) epsilon"
            raise DPValueError(f"--set {key}=...: {key} is not a learner's knob but the command's own flag: give "
                               f"{_NOT_KNOBS[key]} instead")
        if key in params and params[key] != value:  # neither may quietly win, as with a flag beside --set
            raise DPValueError(f"--set {key}={params[key]} and --set {item.strip()} disagree (the same knob); give "
                               "the value once")
        params[key] = value
    return params


def add_parser(sub) -> None:
    p = sub.add_parser(
        "train", help=command_help("train"),
        description="Train one registered learner on one dataset and print its test metrics and the privacy it "
                    "spent. Options a learner does not take are an error. 'train --list' lists the learners.",
    )
    p.add_argument("--list", action="store_true", help="list the registered learners with a one-line description "
                                                       "and exit")
    add_data_flags(p)
    p.add_argument("--algorithm", default=LEARNER,
                   help=f"learner name (default {LEARNER}, as on the Train page; python -m dpcore train --list shows "
                        "them)")
    p.add_argument("--epsilon", type=float, default=None,
                   help="privacy budget epsilon (default: the learner's, as on the pages; 1.0 for most; ignored by "
                        "non-private learners)")
    p.add_argument("--delta", type=float, default=DELTA, help=f"delta of (epsilon, delta)-DP (default {DELTA:g})")
    add_noise_flags(p)
    p.add_argument("--train-fraction", type=float, default=1.0,
                   help="share of the training rows kept, in (0, 1] (default 1.0)")
    for flag, text in knob_flags().items():
        p.add_argument("--" + flag.replace("_", "-"), dest=flag, default=None, metavar="VALUE", help=text)
    p.add_argument("--lr", dest="lr_alias", default=None, metavar="VALUE", help="alias of --learning-rate")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="any other learner parameter, e.g. --set preprocess=standardize (repeatable)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=_run)


def list_learners(stream=None) -> None:
    """Print every registered learner: name, tasks, private or not, and the first sentence of its description."""
    from ..learners import learners

    out = stream if stream is not None else sys.stdout
    regs = learners()
    width = max(len(n) for n in regs)
    for name, spec in regs.items():
        desc = re.split(r"(?<!\bal)\.\s+(?=[A-Z])", spec.description or spec.title)[0].rstrip(".")
        kind = "private" if spec.private else "non-private"
        print(f"{name:<{width}}  [{kind}; {'/'.join(spec.tasks)}]  {spec.title}: {desc}.", file=out)


def collect_params(args, spec) -> dict:
    """The knob flags given on the command line and the ``--set`` items, as values for ``spec``."""
    params = {}
    alias = getattr(args, "lr_alias", None)
    if alias is not None and args.learning_rate is not None and parse_value(alias) != parse_value(args.learning_rate):
        raise DPValueError(f"--lr {alias} and --learning-rate {args.learning_rate} disagree (the same knob); give the "
                           "value once")
    if alias is not None and args.learning_rate is None:
        args.learning_rate = alias
    for key in knob_flags():
        val = getattr(args, key, None)
        if val is not None:
            params[key] = parse_value(val)
    for key, val in parse_set(args.set).items():
        if key in params and params[key] != val:  # neither may quietly win
            raise DPValueError(f"--{key.replace('_', '-')} {getattr(args, key)} and --set {key}={val} disagree; "
                               "give the value once")
        params[key] = val
    return params


def _run(args) -> int:
    if args.list:
        list_learners()
        return 0
    missing = [] if args.dataset or args.data else ["--dataset"]
    if missing:  # main checks the words typed first; this is for a caller of _run
        raise DPValueError(missing_message("train", missing))
    data = dataset_from_args(args)
    seed, secure = noise_from_args(args)
    spec = get_learner(args.algorithm)
    params = collect_params(args, spec)
    refuse_unused(spec, params)

    said_private = []

    def on_epoch(info):
        if not args.json:
            if not said_private and (private := [k for k in info if k in PRIVATE_STATISTICS]):
                said_private.append(True)
                print(f"note: {', '.join(private)} below {'is a statistic' if len(private) == 1 else 'are statistics'}"
                      " of the private training rows that ε does not cover: a real release would not print it",
                      file=sys.stderr)
            print(progress_line(info), file=sys.stderr)

    note_ignored_epsilon(spec, args.epsilon)
    if args.epsilon is not None and params.get("noise_multiplier") is not None and spec.private:
        print(f"note: --noise-multiplier {params['noise_multiplier']:g} sets the noise, so the run spends the epsilon "
              f"it gives (printed below); --epsilon {args.epsilon:g} is not used", file=sys.stderr)
    if args.train_fraction < 1.0:  # how many rows that is: a model that learnt nothing from 2 rows was told to try a
        # larger epsilon, and the output said nowhere how few rows it trained on
        from ..datasets import train_test_split
        from ..learners import kept_rows

        n = train_test_split(data, seed=0).X_train.shape[0]  # the split's size, whatever its seed
        print(f"note: --train-fraction {args.train_fraction:g} trains on {kept_rows(n, args.train_fraction)} of the "
              f"{n} training rows", file=sys.stderr)
    res = run_learner(
        args.algorithm,
        data,
        epsilon=spec.epsilon_to_aim_at(spec.default_epsilon if args.epsilon is None else args.epsilon, params),
        delta=args.delta,
        seed=seed,
        secure=secure,
        params=params,
        train_fraction=args.train_fraction,
        on_epoch=on_epoch,
    )
    note_spent_more(spec, res, requested=spec.default_epsilon if args.epsilon is None else args.epsilon,
                    noise_set=params.get("noise_multiplier") is not None)
    print_result(res, as_json=args.json, secure=secure, extra={"seed": seed, **trivial_scores(res, data, seed,
                                                                                            args.train_fraction)})
    return 0


def trivial_scores(res, data, seed, train_fraction: float = 1.0) -> dict:
    """What a run's score is measured against, on the same split: the most common training class's accuracy, or
    the training mean's test error (the pages' "chance level" and "mean predictor"; non-private references)."""
    if res.task not in ("classification", "regression"):
        return {}
    ref = run_learner(trivial_learner(res.task), data, seed=0 if seed is None else seed,
                      train_fraction=train_fraction)
    if res.task == "classification":
        return {"majority_class_accuracy": float(ref.metrics["accuracy"])}
    return {"mean_predictor_mse": float(ref.metrics["mse"]), "mean_predictor_r2": float(ref.metrics["r2"])}


def note_spent_more(spec, res, *, requested: float, noise_set: bool) -> None:
    """On stderr: the run spent more than the epsilon asked, because the learner's epsilon is per answer or per
    pixel (a given noise multiplier has its own note)."""
    spent = res.epsilon
    if not spec.private or noise_set or spent is None or not math.isfinite(spent) or spent <= requested * (1 + 1e-6):
        return
    why = res.extras.get("privacy_unit") or spec.wording.unit
    # output perturbation's budget knob: "per-query" (the default) spends epsilon per answer, "total" over them all
    budget = any(k.name == "budget" and "total" in (k.choices or ()) for k in spec.knobs)
    print(f"note: the run spent epsilon {epsilon_text(spent, digits=4)} in all, more than the --epsilon {requested:g} "
          f"given: {why}"
          + (" (--set budget=total makes --epsilon the whole run's)" if budget else ""), file=sys.stderr)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def refuse_unused(spec, params: dict) -> None:
    """Refuse knobs given on the command line that this run would not use (``Knob.when``): ``erm-output
    --n-components 10`` trained on the linear kernel and never said that 10 went unused."""
    problems = []
    for knob, others in spec.unused(spec.check_params(params)):
        needs = " and ".join(f"{_flag(k)} is {' or '.join(map(_plain_value, knob.when[k]))}" for k in knob.when)
        now = ", ".join(f"{_flag(k)} {_plain_value(v)}" for k, v in others.items())
        problems.append(f"{_flag(knob.name)} {_plain_value(params[knob.name])} is used only when {needs}, and this "
                        f"run has {now}")
    if problems:
        raise DPValueError(f"{spec.name}: " + "; ".join(problems) + ": set what it needs, or leave it out")


def _plain_value(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def note_ignored_epsilon(spec, epsilon) -> None:
    """On stderr: ``--epsilon`` was given to a learner that spends no privacy budget (it is not private)."""
    if epsilon is not None and not spec.private:
        print(f"note: {spec.name} is not private, so --epsilon {epsilon:g} is ignored", file=sys.stderr)


def text_line(key: str, value) -> str:
    """``key: value`` for the text output, numbers to 6 significant figures (``--json`` keeps every digit), an
    epsilon's rounded up (``round_epsilon``: never shown below the one spent), a proven ``epsilon_lower_bound`` down;
    a non-private run's epsilon (inf, or None in an audit) says so.

    A mapping is written ``key: value`` pair by pair, a list item by item, and a missing value (JSON's null) as a
    dash, as the pages show it:

    >>> text_line("epsilon", 0.9999995000032698), text_line("tpr_at_fpr", {"0.001": None, "0.01": 0.0398406374})
    ('epsilon: 1.0', 'tpr_at_fpr: 0.001: -, 0.01: 0.0398406')
    >>> text_line("epsilon", 1.2345671), text_line("epsilon_lower_bound", 1.2345679)
    ('epsilon: 1.23457', 'epsilon_lower_bound: 1.23456')
    >>> text_line("noise_multiplier", 6.9067738748), text_line("delta", 1.2345631e-05)
    ('noise_multiplier: 6.90678', 'delta: 1.23457e-05')
    >>> text_line("warnings", ["one", "two"])
    'warnings: one | two'
    """
    if key == "epsilon" and (value is None or str(value) in ("inf", "Infinity")):
        return f"{key}: inf (not private)"
    if "epsilon" in key and isinstance(value, float):  # an epsilon spent rounds up, a proven lower bound down
        return f"{key}: {round_epsilon(value, 6, lower_bound='lower_bound' in key)}"
    if key in ("noise_multiplier", "delta") and isinstance(value, float):  # as `noise` prints it: a sigma given
        # back with --noise-multiplier never has less noise than the run had (so never more epsilon than it spent);
        # a delta, as an epsilon, is never shown below what was spent
        return f"{key}: {round_epsilon(value, 6)}"
    return f"{key}: {_plain(_short(value))}"


def _plain(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in value.items()) or "-"
    if isinstance(value, (list, tuple)):
        return " | ".join(_plain(v) for v in value) or "-"
    return str(value)


def _short(value):
    """Floats (also inside a dict or list) rounded to 6 significant figures; anything else as it is."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_short(v) for v in value)
    return value


#: Progress values computed on the private training rows without noise (the pages fold them away as "not covered
#: by ε"): the progress on stderr says so once.
PRIVATE_STATISTICS = ("train_loss", "clipped_fraction", "max_sent_norm")


def progress_line(info: dict) -> str:
    """One progress event as ``key=value`` pairs; a federated round is counted as ``round=3/100``, not as epochs
    (its event carries ``epoch`` and ``epochs`` too, for the progress hooks that count steps generically).

    >>> progress_line({"epoch": 3, "epochs": 100, "round": 3, "accuracy": 0.51234})
    'round=3/100 accuracy=0.5123'
    >>> progress_line({"epoch": 2, "epochs": 30, "epsilon": 0.25})
    'epoch=2 epochs=30 epsilon=0.25'
    """
    info = dict(info)
    if "round" in info and "epochs" in info:
        info.pop("epoch", None)
        info["round"] = f"{info['round']}/{info.pop('epochs')}"
        info = {"round": info.pop("round"), **info}
    return " ".join(f"{k}={round_epsilon(v, 4) if k == 'epsilon' else v:.4g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in info.items())  # the epsilon spent so far rounds up


def print_result(res, *, as_json: bool, secure: bool = False, extra: dict | None = None) -> None:
    """Print a RunResult: one JSON object on the last line, or ``key: value`` lines; ``noise`` says the mode;
    ``extra`` adds lines (e.g. the neighbouring relation the command chose)."""
    out = {**res.to_json_dict(), **(extra or {}), "noise": "secure" if secure else "seeded"}
    from . import said

    if told := list(dict.fromkeys([*out.get("warnings", []), *said])):  # what stderr said, each once
        out["warnings"] = told
    if as_json:
        print_json(out)
    else:
        for k, v in out.items():
            if k not in _JSON_ONLY:
                print(text_line(k, v))
        if (note := no_guarantee_line(res)) is not None:
            print(note)


def no_guarantee_line(res) -> str | None:
    """For a private run that leaked besides its noise (a privacy-leak warning said on stderr during the command,
    e.g. bounds read from the rows of --data): the line under its result that says its epsilon is no guarantee. The
    warning itself stood above a screen of progress lines, and the result read "epsilon: 1.0" and "protects: each
    whole training record" as if nothing had leaked. None for any other run."""
    from . import leaked

    eps = getattr(res, "epsilon", None)
    if not leaked or eps is None or not math.isfinite(float(eps)):
        return None
    return (f"guarantee: none: the epsilon above holds only once nothing leaks besides the noise, and this run "
            f"leaked: {' | '.join(leaked)}")


#: Keys only the JSON carries: every setting of the run (long) and the warnings (already on stderr).
_JSON_ONLY = ("config", "warnings")
