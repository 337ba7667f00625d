"""``--dataset NAME`` or ``--data FILE.csv --label COLUMN``: the data every command that trains reads; and
``--seed`` or ``--secure``: how its noise is drawn.

A CSV is read exactly as the pages read an upload (:func:`dpcore.datasets.load_csv`: delimiter sniffing, decimal
commas, refusals naming the column), so the same file gives the same dataset everywhere. ``--drop`` leaves columns
out (an identifier, free text). ``--categories`` declares the values of a column of categories (each becomes one 0/1
column, bounded 0:1), listed from what it means, never read from the rows; declared for the label column, its
values are the label's classes. ``--class-shares`` declares how common
each class of the label is (public knowledge, never read from the rows:
:attr:`~dpcore.datasets.Dataset.class_shares`). ``--bounds`` declares the range of its columns; a column left out
gets the data's own min and max, which leaks privacy: that is said on standard error, naming the columns.

Noise on a registry dataset is seeded (seed 0 unless ``--seed``) so a result can be reproduced; ``--secure`` draws
it from the operating system's cryptographic source onto a grid (:func:`dpcore.rng.secure_noise`). A CSV of one's
own runs in secure mode unless ``--seed`` asks for a reproducible demonstration, because a result on one's own
data is the one most likely to be shared; which mode ran is said on standard error.
"""
from __future__ import annotations

import csv
import pathlib
import sys

from ..exceptions import DatasetError, DPValueError

SEEDED_NOTE = ("note: the noise is seeded (--seed {seed}), so anyone who knows the seed can reproduce it, and it is "
               "drawn in floating point (Mironov 2012): use this result to explore, not to publish. Drop --seed (or "
               "give --secure) for secure noise")
SECURE_NOTE = ("note: secure mode: the noise comes from the operating system's cryptographic source and every "
               "released value lies on a grid that Mironov's floating-point attack (2012) cannot read; each run "
               "draws fresh noise. Give --seed N for a reproducible demonstration instead")


def add_data_flags(p, *, what: str = "registry name, e.g. digits (python -m dpcore datasets lists them)") -> None:
    """``--dataset`` or ``--data`` with ``--label`` and ``--task``."""
    p.add_argument("--dataset", help=what)
    p.add_argument("--data", metavar="FILE.csv", help="your own CSV instead of --dataset: numeric feature columns "
                                                      "(a column of text or codes declared in --categories) and a "
                                                      "label column named by --label")
    p.add_argument("--label", metavar="COLUMN", help="with --data: the column to predict")
    p.add_argument("--task", choices=("classification", "regression"), default=None,
                   help="with --data: what the label is (default: classes when --categories declares them, a "
                        "number to predict (regression) when --bounds declares its range; otherwise guessed: classes "
                        "when the label is text, true/false, or whole numbers with at most 20 values; otherwise a "
                        "number to predict, regression)")
    p.add_argument("--bounds", metavar="SPEC", default=None,
                   help="with --data: the range each feature column (and a regression label) can hold, declared "
                        "rather than read from the private rows, e.g. 'age=17:90,hours=1:99,*=0:1' (* is every "
                        "other feature column; a name with a comma in double quotes, '\"weight, kg\"=30:200'); "
                        "values outside are clipped. Columns left out get the data's own min and max, which leaks "
                        "privacy (said on standard error)")
    p.add_argument("--class-shares", metavar="SPEC", default=None, dest="class_shares",
                   help="with --data and a classification label: each class's share of the rows, declared from what "
                        "is known outside the data (a published rate), e.g. 'fraud=0.07,review=0.05,ok=0.88' (every "
                        "class, summing to 1). Learners that release class probabilities then answer the class of "
                        "largest probability divided by its share, which finds rare classes a private model "
                        "otherwise never answers; declared, not read from the rows, so it costs no privacy")
    p.add_argument("--drop", metavar="COLUMNS", default=None,
                   help="with --data: columns of the file to leave out, e.g. 'patient_id,note' (an identifier, a "
                        "free-text note; a name with a comma in double quotes)")
    p.add_argument("--categories", metavar="SPEC", default=None,
                   help="with --data: the values each column of categories can hold, listed from what the column "
                        "means, never read from the rows (a rare value would give a record away), e.g. "
                        "'ward=Cardiology|Oncology|Surgery,sex=F|M' (codes too: 'ward_code=1|2|3|4|5'). Each value "
                        "becomes one 0/1 column, bounded 0:1; a cell holding none of them is 0 in all of them (their "
                        "number said on standard error). A value with a comma, | or ; goes in double quotes "
                        "('ward=Cardiology|\"Oncology, adult\"'); none holds a double quote. Declared for the "
                        "--label column ('diagnosis=healthy|flu|covid'), the values are its classes, in that order, "
                        "a class no row holds included (a row holding none of them is refused); without it the "
                        "classes are read from the rows, which leaks which occur (said on standard error)")


def add_noise_flags(p, *, seed_help: str = "seed of the train/test split and of the noise") -> None:
    """``--seed N`` (a reproducible demonstration) or ``--secure`` (noise for a real release)."""
    p.add_argument("--seed", type=int, default=None,
                   help=f"{seed_help} (default 0 on a registry dataset; with --data the default is --secure)")
    p.add_argument("--secure", action="store_true",
                   help="secure noise for a real release: drawn from the operating system's cryptographic source "
                        "onto a grid that defeats floating-point attacks; refuses --seed (the split uses seed 0)")


def noise_from_args(args) -> tuple[int | None, bool]:
    """``(seed, secure)`` for ``run_learner``: ``(None, True)`` in secure mode, else ``(seed, False)``.

    Secure when ``--secure`` is given or ``--data`` is given without ``--seed``; ``--secure`` with ``--seed`` is
    refused. The mode is said on standard error for a user's own file.
    """
    if args.secure and args.seed is not None:
        raise DPValueError(f"--secure and --seed {args.seed} contradict each other: secure noise cannot be seeded "
                           "(anyone who knew the seed could subtract it). Drop --seed, or drop --secure for a "
                           "reproducible demonstration")
    secure = bool(args.secure) or (bool(getattr(args, "data", None)) and args.seed is None)
    if getattr(args, "data", None):
        print(SECURE_NOTE if secure else SEEDED_NOTE.format(seed=args.seed), file=sys.stderr)
    return (None, True) if secure else (0 if args.seed is None else args.seed, False)


def dataset_from_args(args, *, unlabelled: bool = False):
    """The registry name, or the :class:`~dpcore.datasets.Dataset` read from ``--data``; refusals name the flag.

    ``unlabelled``: ``--data`` without ``--label`` is a table with no label (the ``cluster`` command's), every
    column not dropped a feature (:func:`~dpcore.datasets.csv_upload.load_csv_unlabelled`)."""
    from ..datasets import load_csv
    from ..datasets.csv_upload import load_csv_unlabelled, numbers_read_as_classes

    if args.data and args.dataset:
        raise DPValueError("give either --dataset or --data, not both")
    if not args.data:
        if args.label or args.task or getattr(args, "bounds", None) or getattr(args, "drop", None) or \
                getattr(args, "class_shares", None) or getattr(args, "categories", None):
            raise DPValueError("--label, --task, --bounds, --categories, --class-shares and --drop go with --data "
                               "FILE.csv; a registry dataset has its own label, columns and declared bounds")
        if not args.dataset:
            raise DPValueError("give --dataset NAME (python -m dpcore datasets lists them) or --data FILE.csv "
                               "--label COLUMN")
        return args.dataset
    if not args.label and not unlabelled:
        raise DPValueError("--data needs --label COLUMN: the column to predict")
    if not args.label and (args.task or getattr(args, "class_shares", None)):
        raise DPValueError("--task and --class-shares describe a label; without --label the rows are clustered "
                           "only: leave them out, or name the --label")
    path = pathlib.Path(args.data)
    if not path.is_file():
        raise DPValueError(f"--data {args.data!r} is not a readable file")
    drop = getattr(args, "drop", None)
    drop = [c for c in next(csv.reader([drop], skipinitialspace=True)) if c.strip()] if drop else []
    categories = getattr(args, "categories", None)
    try:
        if not args.label:
            return load_csv_unlabelled(path.read_bytes(), name=path.stem, bounds=getattr(args, "bounds", None),
                                       drop=drop, categories=categories)
        ds = load_csv(path.read_bytes(), label_column=args.label, task=args.task, name=path.stem,
                      bounds=getattr(args, "bounds", None), drop=drop, categories=categories)
    except DatasetError as exc:
        said = str(exc)
        if said.startswith(("drop ", "categories ", "categories:")):  # said in the flag's own name
            raise type(exc)("--" + said) from None
        if " mistakes in the categories: " in said:
            raise type(exc)(said.replace(" in the categories: ", " in --categories: ", 1)) from None
        raise
    if args.task is None and (said := numbers_read_as_classes(ds, args.label, how="give --task regression")):
        print(f"note: {said}", file=sys.stderr)
    return ds.with_class_shares(getattr(args, "class_shares", None), parameter="--class-shares")
