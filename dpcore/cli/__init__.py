"""Command line: ``python -m dpcore COMMAND ...``.

Each command lives in its own module here with ``add_parser(subparsers)``;
the module sets ``func`` on its parser. Add yours to ``_COMMANDS``. Errors
from dpcore (and argparse) become a one-line message and a non-zero exit,
never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import re
import sys
import warnings

from ..exceptions import DPCoreError

_COMMANDS = [
    "dpcore.cli.accounting",
    "dpcore.cli.datasets",
    "dpcore.cli.train",
    "dpcore.cli.cluster",
    "dpcore.cli.sweep",
    "dpcore.cli.audit",
    "dpcore.cli.reproduce",
]


class _Parser(argparse.ArgumentParser):
    """One-line errors; values that start with a minus sign (``-1e-5``, ``-1,0``) read as values, not flags."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # argparse's default only takes -1 or -.5 as a negative number: -1e-5 or -1,0 became "an option"
        self._negative_number_matcher = re.compile(r"^-(\d|\.\d)[\d.eE+,-]*$")

    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m dpcore", description="Differential privacy on real machine learning.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in _COMMANDS:
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name == mod:
                continue
            raise
        m.add_parser(sub)
    return parser


_NOT_A_NUMBER = re.compile(r"^(could not convert string to float|invalid literal for int\(\) with base 10): '(.*)'$")


_KNOB_MESSAGE = re.compile(r"^(\w+) must be ")


def _where_given(message: str, args) -> str | None:
    """The command-line item a knob's message is about (``--set huber_h=abc`` or ``--epochs -1``), if any."""
    m = _KNOB_MESSAGE.match(message)
    if not m:
        return None
    key = m.group(1)
    for item in getattr(args, "set", []) or []:
        k, _, v = item.partition("=")
        if k.strip().replace("-", "_") == key:
            return f"--set {item.strip()}"
    value = getattr(args, key, None)
    if isinstance(value, str):  # a knob flag (they arrive as text)
        return f"--{key.replace('_', '-')} {value}"
    return None


def _with_hint(message: str, args) -> str:
    """``message`` with what to do on the command line, when the library's message cannot know the flag."""
    where = _where_given(message, args)
    if where:
        return f"{where}: {message}"
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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = lambda msg, cat, *a, **k: print(f"warning: {msg}", file=sys.stderr)
            return int(args.func(args) or 0)
    except (DPCoreError, ValueError, TypeError) as exc:
        print(f"error: {_with_hint(str(exc), args)}", file=sys.stderr)
        return 2
    except (OverflowError, FloatingPointError, MemoryError) as exc:  # a value the arithmetic cannot hold
        print(f"error: a value is too large to compute with ({exc}); use smaller values", file=sys.stderr)
        return 2
    except OSError as exc:  # a file or a network address the command was given
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        print(f"error: {exc.strerror or exc}{where}; check the paths and addresses given", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
