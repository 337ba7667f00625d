"""``--dataset NAME`` or ``--data FILE.csv --label COLUMN``: the data every command that trains reads.

A CSV is read exactly as the pages read an upload (:func:`dpcore.datasets.load_csv`: delimiter sniffing, decimal
commas, refusals naming the column), so the same file gives the same dataset everywhere. Its feature bounds are
read from the data, which leaks privacy, and the noise is seeded: both are said on standard error, because a
result on one's own data is the one most likely to be shared.
"""
from __future__ import annotations

import pathlib
import sys

from ..exceptions import DPValueError

SEEDED_NOTE = ("note: the noise is seeded (--seed {seed}), so anyone who knows the seed can reproduce it, and it is "
               "drawn in floating point (Mironov 2012): use this result to explore, not to publish. A statistic for "
               "release: dpcore.mechanisms.secure.SecureLaplace")


def add_data_flags(p, *, what: str = "registry name, e.g. digits (python -m dpcore datasets lists them)") -> None:
    """``--dataset`` or ``--data`` with ``--label`` and ``--task``."""
    p.add_argument("--dataset", help=what)
    p.add_argument("--data", metavar="FILE.csv", help="your own CSV instead of --dataset: numeric feature columns "
                                                      "and a label column named by --label")
    p.add_argument("--label", metavar="COLUMN", help="with --data: the column to predict")
    p.add_argument("--task", choices=("classification", "regression"), default=None,
                   help="with --data: what the label is (default: guessed; integer or text labels with at most 20 "
                        "values are classes)")


def dataset_from_args(args):
    """The registry name, or the :class:`~dpcore.datasets.Dataset` read from ``--data``; refusals name the flag."""
    from ..datasets import load_csv

    if args.data and args.dataset:
        raise DPValueError("give either --dataset or --data, not both")
    if not args.data:
        if args.label or args.task:
            raise DPValueError("--label and --task go with --data FILE.csv; a registry dataset has its own label")
        if not args.dataset:
            raise DPValueError("give --dataset NAME (python -m dpcore datasets lists them) or --data FILE.csv "
                               "--label COLUMN")
        return args.dataset
    if not args.label:
        raise DPValueError("--data needs --label COLUMN: the column to predict")
    path = pathlib.Path(args.data)
    if not path.is_file():
        raise DPValueError(f"--data {args.data!r} is not a readable file")
    data = load_csv(path.read_bytes(), label_column=args.label, task=args.task, name=path.stem)
    print(SEEDED_NOTE.format(seed=getattr(args, "seed", 0)), file=sys.stderr)
    return data
