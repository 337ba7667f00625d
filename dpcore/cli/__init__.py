"""Command line: ``python -m dpcore COMMAND ...``.

Each command lives in its own module here with ``add_parser(subparsers)``;
the module sets ``func`` on its parser. Add yours to ``_COMMANDS``. Errors
from dpcore (and argparse) become a one-line message and a non-zero exit,
never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from ..exceptions import DPCoreError

_COMMANDS = [
    "dpcore.cli.accounting",
    "dpcore.cli.datasets",
    "dpcore.cli.train",
    "dpcore.cli.cluster",
    "dpcore.cli.sweep",
]


class _Parser(argparse.ArgumentParser):
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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = lambda msg, cat, *a, **k: print(f"warning: {msg}", file=sys.stderr)
            return int(args.func(args) or 0)
    except DPCoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
