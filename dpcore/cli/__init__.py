"""Command line: ``python -m dpcore COMMAND ...``.

Each command lives in its own module here with ``add_parser(subparsers)``;
the module sets ``func`` on its parser. Add yours to ``COMMANDS`` with its
one-line help. Only the module of the command given is imported, so
``--help`` and a mistyped command answer at once instead of after importing
torch and dp_accounting. Errors from dpcore (and argparse) become a one-line
message and a non-zero exit, never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import sys
import warnings

from ..exceptions import DPCoreError, PrivacyLeakWarning

#: command -> (the module that adds its parser, its one-line help); a module may add several commands
COMMANDS = {
    "epsilon": ("dpcore.cli.accounting", "epsilon spent by DP-SGD (Poisson-subsampled Gaussian)"),
    "noise": ("dpcore.cli.accounting", "noise multiplier needed for a target epsilon"),
    "datasets": ("dpcore.cli.datasets", "list the offline datasets"),
    "train": ("dpcore.cli.train", "train a registered learner and print its metrics"),
    "cluster": ("dpcore.cli.cluster", "k-means: DPLloyd, input perturbation or plain Lloyd"),
    "sweep": ("dpcore.cli.sweep", "sweep learners along epsilon (or another knob) over seeds; write a CSV"),
    "audit": ("dpcore.cli.audit", "attack a trained learner (membership inference, one-run canaries) and bound its "
                                  "epsilon"),
    "reproduce": ("dpcore.cli.reproduce", "papers reproduced live: published numbers beside ours"),
    "report": ("dpcore.cli.report", "the smallest epsilon that meets what you need, as a self-contained HTML "
                                    "decision report"),
}

#: The commands that train: they run with the app server's torch/BLAS threads per run (dpcore.runtime.serving), so
#: that a seeded run prints the numbers a page shows for the same inputs on the same machine.
TRAINING_COMMANDS = ("train", "cluster", "sweep", "audit", "reproduce", "report")


#: What a command cannot start without: groups of flags, one of each to be given. ``main`` checks the words typed
#: before the command's module (and torch) is imported, so a bare ``train`` answers at once, not after 5 s.
NEEDS = {
    "train": (("--dataset", "--data"),),
    "cluster": (("--dataset", "--data"), ("--algorithm",)),
    "sweep": (("--dataset", "--data"),),
    "audit": (("--dataset", "--data"),),
    "report": (("--dataset", "--data"),),
}
_EXAMPLE = {"train": "--dataset digits --algorithm dpsgd", "cluster": "--dataset iris --algorithm dplloyd",
            "sweep": "--dataset digits", "audit": "--dataset digits",
            "report": "--dataset breast_cancer --out report.html"}
_NO_NEEDS = ("-h", "--help", "--list")  # these answer without the data


def missing_flags(command: str, given) -> list[str]:
    """The groups of ``NEEDS[command]`` with no flag in ``given`` (spelt whole: the parsers take no abbreviation),
    each written "--dataset (or --data)"."""
    names = {g.split("=", 1)[0] for g in given if g.startswith("--")}
    return [group[0] + "".join(f" (or {flag})" for flag in group[1:]) for group in NEEDS.get(command, ())
            if not names.intersection(group)]


def missing_message(command: str, missing: list[str]) -> str:
    """One line: what ``command`` needs, an example, and where to look."""
    hint = ("python -m dpcore train --list shows the learners; --data FILE.csv --label COLUMN trains on your own file"
            if command == "train" else
            # cluster reads a file without a label too: its rows clustered, no accuracy to score
            "python -m dpcore datasets lists the datasets; --data FILE.csv reads your own file, with --label COLUMN "
            "to score the clusters against its classes" if command == "cluster" else
            "python -m dpcore datasets lists the datasets; --data FILE.csv --label COLUMN reads your own file")
    return f"{command} needs {' and '.join(missing)}, e.g. {_EXAMPLE[command]} ({hint})"


#: The warnings said on stderr during the command that is running, in order (``main`` fills it).
said: list[str] = []
#: Those of them that are privacy leaks (:class:`~dpcore.exceptions.PrivacyLeakWarning`): a run's epsilon is then no
#: guarantee, which its result's lines say again (:func:`dpcore.cli.train.print_result`).
leaked: list[str] = []

#: How every ``--json`` output writes numbers JSON has no literal for (one convention, for every command).
JSON_CONVENTION = ('--json prints strict JSON: an infinite value (an epsilon with no guarantee, a non-private run) is '
                   'the string "inf" (or "-inf"), a value that is not a number is null')

#: The help of every command's ``--json`` flag that prints a result.
JSON_HELP = "print the result as JSON on the last line (strict JSON: infinity as \"inf\", not a number as null)"


def strict_json(value):
    """``value`` with infinities as ``"inf"``/``"-inf"`` and NaN as None (numpy numbers as Python's), recursively:
    what :func:`print_json` prints, so that ``json.loads`` of any ``--json`` line never meets ``Infinity``.

    >>> strict_json({"epsilon": float("inf"), "xs": [1.5, float("nan")]})
    {'epsilon': 'inf', 'xs': [1.5, None]}
    """
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()  # a numpy scalar
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    return value


def print_json(doc) -> None:
    """Print ``doc`` as one line of strict JSON (see :data:`JSON_CONVENTION`): the one ``--json`` writer."""
    print(json.dumps(strict_json(doc), allow_nan=False))


def command_help(name: str) -> str:
    """The one-line help of command ``name`` (its module's parser uses it too)."""
    return COMMANDS[name][1]


class _Parser(argparse.ArgumentParser):
    """One-line errors; values that start with a minus sign (``-1e-5``, ``-1,0``) read as values, not flags; no
    abbreviated flags (``report --epsilon -2`` was read as ``--epsilon-range``, and its error named that flag)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        # argparse's default only takes -1 or -.5 as a negative number: -1e-5 or -1,0 became "an option", and -inf
        # "expected one argument" (a value that names no flag and says nothing of what to change)
        self._negative_number_matcher = re.compile(r"^-((\d|\.\d)[\d.eE+,-]*|inf(inity)?|nan)$", re.IGNORECASE)

    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"error: {message}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``command`` given, "" for none) one in which only that command's module is imported and
    the other commands are listed by name and help."""
    parser = _Parser(prog="python -m dpcore", description="Differential privacy on real machine learning.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    wanted = {mod for mod, _ in COMMANDS.values()} if command is None else {COMMANDS.get(command, ("",))[0]}
    added: set[str] = set()
    for name, (mod, text) in COMMANDS.items():
        if mod not in wanted:
            sub.add_parser(name, help=text)
        elif mod not in added:
            added.add(mod)
            importlib.import_module(mod).add_parser(sub)
    return parser


def _unknown_dataset(argv: list[str]) -> str | None:
    """The registry's refusal of a ``--dataset`` name it does not hold, or None (no name given, or a known one)."""
    given = [a.split("=", 1)[1] for a in argv if a.startswith("--dataset=")]
    given += [b for a, b in zip(argv, argv[1:]) if a == "--dataset"]
    if not given:
        return None
    from ..datasets import REGISTRY, load_dataset

    if given[-1] in REGISTRY:
        return None
    try:
        load_dataset(given[-1])
    except DPCoreError as exc:
        return str(exc)
    return None


def _command_in(argv: list[str]) -> str:
    """The command named in ``argv`` (its first item that is not an option), or "" if none is."""
    return next((a for a in argv if not a.startswith("-")), "")


_NOT_A_NUMBER = re.compile(r"^(could not convert string to float|invalid literal for int\(\) with base 10): '(.*)'$")


_KNOB_MESSAGE = re.compile(r"^(\w+) must be ")
#: The library's name of a value -> the command line's flag (without --) where they differ.
_LIBRARY_NAMES = {"n_jobs": "jobs"}


def _where_given(message: str, args) -> str | None:
    """The command-line item a knob's message is about (``--set huber_h=abc`` or ``--epochs -1``), if any."""
    m = _KNOB_MESSAGE.match(message)
    if not m:
        return None
    key = m.group(1)
    if key in _LIBRARY_NAMES:  # a command's own flag under another name
        return f"--{_LIBRARY_NAMES[key]} {getattr(args, _LIBRARY_NAMES[key], '')}".rstrip()
    for item in getattr(args, "set", []) or []:
        k, _, v = item.partition("=")
        if k.strip().replace("-", "_") == key:
            return f"--set {item.strip()}"
    value = getattr(args, key, None)
    if isinstance(value, str):  # a knob flag (they arrive as text)
        return f"--{key.replace('_', '-')} {value}"
    return None


#: A sweep refused for its number of runs (:func:`dpcore.sweep.run_sweep`): ``values=1000 asks for 2e+04 runs``.
_SWEEP_RUNS = re.compile(r"^(values|seeds)=\d+ asks for ")


def _sweep_flag(name: str, args) -> str | None:
    """How the command line gives the sweep input ``name`` ("values" or "seeds"), a template of its number ``{n}``;
    None where it has no flag for it."""
    if name == "seeds":
        return "--seeds {n}" if hasattr(args, "seeds") else None
    if hasattr(args, "points"):  # report: the ε values are --points between the ends of --epsilon-range
        return "--points {n}"
    if getattr(args, "value_range", None) is not None:
        return "--range MIN,MAX,{n}"
    return "{n} --values" if getattr(args, "values", None) is not None else None


#: A learner refused for the task of the data (:func:`dpcore.learners.run_learner`, a sweep's configuration).
_WRONG_TASK = re.compile(r"handles .*, but dataset .* is (classification|regression)\b")
#: How ``--data``'s task is guessed when ``--task`` is not given (as :func:`dpcore.datasets.load_csv` guesses it).
_GUESSED = {"regression": "numbers with more than 20 different values, or not whole, are a quantity to predict",
            "classification": "text, or whole numbers with at most 20 different values, are classes"}


def _with_hint(message: str, args) -> str:
    """``message`` with what to do on the command line, when the library's message cannot know the flag."""
    where = _where_given(message, args)
    if where:
        return f"{where}: {message}"
    if (m := _SWEEP_RUNS.match(message)) and (flag := _sweep_flag(m.group(1), args)):
        # the sweep's own names (values=, seeds=) for what the command line calls --points, --range N or --values
        return re.sub(rf"\b{m.group(1)}=(\d+)", lambda n: flag.format(n=n.group(1)), message)
    wrong = _WRONG_TASK.search(message)
    if wrong and getattr(args, "data", None) and getattr(args, "label", None) and getattr(args, "task", "") is None:
        # the task was the command's guess from the label's values, which the user can overrule with --task
        task = wrong.group(1)
        other = "classification" if task == "regression" else "regression"
        return (f"{message} (without --task the label {args.label!r} of --data was read as {task}: {_GUESSED[task]}; "
                f"if it holds {'classes' if other == 'classification' else 'a quantity to predict'}, give --task "
                f"{other})")
    m = _NOT_A_NUMBER.match(message)
    if m:  # a learner called float() / int() on a --set value
        bad = [item.strip() for item in getattr(args, "set", []) if item.partition("=")[2].strip() == m.group(2)]
        if bad:
            kind = "a whole number" if m.group(1).startswith("invalid literal") else "a number"
            return f"--set {bad[0]}: {bad[0].partition('=')[0].strip()} takes {kind}"
    if "single class" in message:  # few training rows left, e.g. by a small --train-fraction
        fraction = getattr(args, "train_fraction", 1.0)
        if fraction < 1.0:
            return f"{message} (--train-fraction {fraction:g} keeps few training rows; use a larger --train-fraction)"
        if str(getattr(args, "axis", "")).replace("-", "_") == "train_fraction":
            return f"{message} (a small train_fraction keeps few training rows; sweep larger --values)"
    return message


def _extreme_values(argv: list[str]) -> list[str]:
    """The ``--flag value`` pairs of ``argv`` whose number is beyond 1e100 or within 1e-100 of 0."""
    out = []
    for flag, value in zip(argv, argv[1:]):
        try:
            v = abs(float(value.partition("=")[2] if flag == "--set" else value))
        except ValueError:
            continue
        if flag.startswith("--") and (v > 1e100 or 0 < v < 1e-100):
            out.append(f"{flag} {value}")
    return out


def arithmetic_message(exc: BaseException, argv: list[str]) -> str:
    """What to say when a run's arithmetic failed (an overflow, a division by zero, memory): what failed and which
    of the values given are extreme enough to be the cause.

    >>> print(arithmetic_message(OverflowError(), ["train", "--epsilon", "1e308"]))  # doctest: +ELLIPSIS
    a value is too large or too small to compute with (OverflowError); --epsilon 1e308 is beyond what the ...
    """
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, MemoryError):
        return f"not enough memory for this run ({what}); use smaller sizes"
    extreme = _extreme_values(argv)
    hint = (f"{', '.join(extreme)} {'is' if len(extreme) == 1 else 'are'} beyond what the computation can hold: use "
            "a less extreme value") if extreme else "use less extreme values"
    return f"a value is too large or too small to compute with ({what}); {hint}"


def unrecognized_message(parser: argparse.ArgumentParser, command: str, unknown: list[str]) -> str:
    """argparse's "unrecognized arguments" with, for each mistyped flag, the command's flag it is closest to (the one
    it begins, or the likeliest typo), and where the options are listed.

    >>> print(unrecognized_message(build_parser("epsilon"), "epsilon", ["--stpes", "10"]))  # doctest: +ELLIPSIS
    unrecognized arguments: --stpes 10; --stpes: did you mean --steps? (python -m dpcore epsilon --help lists ...)
    """
    import difflib

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices.get(command)
    known = [o for a in (sub._actions if sub is not None else ()) for o in a.option_strings
             if o.startswith("--") and o != "--help"]

    def closest(flag: str) -> list[str]:
        begun = [k for k in known if k.startswith(flag)]  # an abbreviation, which the parsers do not take
        return begun[:3] or difflib.get_close_matches(flag, known, n=1, cutoff=0.7)

    flags = [u.split("=", 1)[0] for u in unknown if u.startswith("--") and len(u) > 2]  # not a bare "--"
    hints = [f"{flag}: did you mean {' or '.join(close)}?" for flag in flags if (close := closest(flag))]
    return (f"unrecognized arguments: {' '.join(unknown)}" + "".join(f"; {h}" for h in hints)
            + f" (python -m dpcore {command} --help lists its options)")


#: What a command's ``--list`` also reads (``reproduce --list --json`` lists as JSON).
_LIST_READS = {"reproduce": ("json",)}


def _beside_list(parser: argparse.ArgumentParser, args) -> str | None:
    """The refusal of options given beside ``--list``, which lists and runs nothing (``reproduce --all --list``
    listed the entries and silently ran none), or None."""
    if not getattr(args, "list", False):
        return None
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[args.command]
    reads = ("list", "command", "func", *_LIST_READS.get(args.command, ()))
    given = [a.option_strings[0] if a.option_strings else f"the {a.dest} {getattr(args, a.dest)!r}"
             for a in sub._actions if a.dest not in reads and a.dest != "help"
             and getattr(args, a.dest, None) != a.default]
    if not given:
        return None
    return (f"--list only lists, and runs nothing, so {' and '.join(given)} would not be used; give --list alone, "
            f"or leave it out to run")


def main(argv: list[str] | None = None) -> int:
    from ..runtime.memory import keep_freed_memory, prefer_huge_pages

    prefer_huge_pages()  # before torch loads, or never (see dpcore.runtime.memory)
    keep_freed_memory()  # a step's buffers stay in the heap for the next step (see dpcore.runtime.memory)
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # a newcomer's first try: the commands, not argparse's "arguments are required: COMMAND"
        print("error: give a command: " + ", ".join(COMMANDS) + " (python -m dpcore --help says what each does; "
              "python -m dpcore COMMAND --help its options)", file=sys.stderr)
        return 2
    command = _command_in(argv)
    if command in NEEDS and not any(a in _NO_NEEDS for a in argv):
        missing = missing_flags(command, argv)
        if missing:
            print(f"error: {missing_message(command, missing)}", file=sys.stderr)
            return 2
        if (unknown := _unknown_dataset(argv)) is not None:  # a typo answered in 0.6 s, not after torch's 5 s
            print(f"error: {unknown}", file=sys.stderr)
            return 2
    parser = build_parser(command)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # argparse's own parse_args would stop here too, with no hint of the flag meant
        parser.error(unrecognized_message(parser, args.command, unknown))
    if (beside := _beside_list(parser, args)) is not None:
        print(f"error: {beside}", file=sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            said.clear()
            leaked.clear()

            def show(msg, *_args, **_kwargs):
                if str(msg) in said:  # each text once per command, as Python's own filter says it once per place
                    return  # (a calibration and the epsilon it reports may both explain the same number)
                said.append(str(msg))  # a command's JSON carries them too (print_result)
                if isinstance(msg, PrivacyLeakWarning):
                    leaked.append(str(msg))
                print(f"warning: {msg}", file=sys.stderr)

            # Python's last step, where dpcore.runtime.thread_warnings hands on what no block of the thread catches
            warnings._showwarnmsg_impl = lambda msg: show(msg.message)
            if args.command not in TRAINING_COMMANDS:
                return int(args.func(args) or 0)
            # a command may answer from its cache, with nothing to train: then neither torch nor the threads
            if (from_cache := getattr(args, "from_cache", None)) is not None and (code := from_cache(args)) is not None:
                return int(code)
            from ..runtime.serving import default_run_threads, default_workers, run_threads

            with run_threads(default_run_threads(default_workers())):  # the app server's threads: its numbers
                return int(args.func(args) or 0)
    except (DPCoreError, ValueError, TypeError) as exc:
        print(f"error: {_with_hint(str(exc), args)}", file=sys.stderr)
        return 2
    except (OverflowError, ZeroDivisionError, FloatingPointError, MemoryError) as exc:  # values the arithmetic
        # cannot hold: name the extreme values given, the likely cause
        print(f"error: {arithmetic_message(exc, argv)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader stopped early (`... | head`): nothing went wrong here
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Python's own advice, so the exit flush does not fail
        return 0
    except OSError as exc:  # a file or a network address the command was given
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        print(f"error: {exc.strerror or exc}{where}; check the paths and addresses given", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
