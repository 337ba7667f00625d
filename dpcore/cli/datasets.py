"""``datasets`` command: list the offline registry."""
from __future__ import annotations

from ..datasets import REGISTRY, load_dataset
from . import command_help


def add_parser(sub) -> None:
    p = sub.add_parser("datasets", help=command_help("datasets"))
    p.set_defaults(func=_run)


def _run(args) -> int:
    print(f"{'name':<14} {'task':<15} {'n':>6} {'features':>8} {'classes':>7}  source")
    for name, info in REGISTRY.items():
        d = load_dataset(name)
        classes = str(d.n_classes) if d.task == "classification" else "-"
        print(f"{name:<14} {d.task:<15} {d.n_samples:>6} {d.n_features:>8} {classes:>7}  {info.source}")
    return 0
