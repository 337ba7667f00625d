"""``cluster`` command: private or plain k-means on a registered dataset.

``python -m dpcore cluster --dataset iris --algorithm dplloyd --k 3 --epsilon 1 --seed 0 --json``
prints the Train command's JSON contract (accuracy after Hungarian matching,
intra_cluster_variance, epsilon, delta, noise_multiplier, seconds), for DPLloyd the neighbouring
relation its ε protects, and the reference a clustering is read against: the accuracy of k centres drawn at
random in the declared bounds (``random_centres_accuracy`` ± ``random_centres_accuracy_sd``; no data used), with
``no_better_than_random_centres`` when a private run is within that spread. Its defaults are the Clustering
page's (DPLloyd on replace-one, as there), and so is its reading: ``--seeds`` (3) runs the same settings on seeds
``seed`` to ``seed + seeds - 1``, each its own split and noise, and prints ``accuracy_mean`` ± ``accuracy_sd`` over
them beside random centres on the same splits (``random_centres_accuracy_mean``), the numbers the page's headline
shows; ``accuracy`` and ``epsilon`` stay the first seed's run, the one the page's pictures draw, and
``epsilon_over_seeds`` is the seeds' runs together (basic composition on the one data set: the mean reads every run,
as the page's session total counts every seed's release).

``--data FILE.csv`` without ``--label`` clusters a table with no label (every column not ``--drop``-ped a feature,
``--bounds`` as for any file): every row, one run (:func:`dpcore.models.cluster_rows.cluster_rows`), read without
classes: ``epsilon`` spent, ``intra_cluster_variance`` (within / total sum of squares of the rows, a statistic of
the private rows that ε does not cover: ``intra_cluster_variance_note``), random centres' on the same rows
(``random_centres_intra_cluster_variance`` ± ``_sd``, no data used to place them) and the ``centres`` in the
columns' own units; no accuracy (``accuracy_note`` says why).
"""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from ..accounting import PrivacyLedger
from ..datasets import REGISTRY
from ..datasets.csv_upload import UNLABELLED
from ..defaults import EPSILON
from ..exceptions import DPValueError
from ..learners import get_learner, learner_names, run_learner
from ..models.cluster_rows import DEFAULT_K, NO_ACCURACY_NOTE, SCORE_NOTE, cluster_rows, random_centres_on_rows
from ..models.cluster_rows import METHODS as ROW_METHODS
from ..models.kmeans import RandomCentresReference
from ..models.learners import CLUSTER_COMPARISON_NEIGHBOURING, CLUSTER_SEEDS
from ..rng import noise_mode
from ..teaching.verdict import epsilon_text
from ..validation import check_int
from . import JSON_HELP, command_help, print_json
from .data import add_data_flags, add_noise_flags, dataset_from_args, noise_from_args
from .train import note_ignored_epsilon, parse_set, print_result, text_line


def add_parser(sub) -> None:
    p = sub.add_parser("cluster", help=command_help("cluster"))
    add_data_flags(p, what="registry name of a classification dataset, e.g. iris")
    p.description = ("--data FILE.csv without --label clusters a table with no label: every row, every column not "
                     "dropped a feature; it prints epsilon, the within / total sum of squares and the centres")
    p.add_argument("--algorithm", required=True, choices=learner_names(family="clustering"))
    p.add_argument("--k", type=int, default=None,
                   help="number of clusters (default: number of classes; 3 for a --data file without --label)")
    p.add_argument("--epsilon", type=float, default=None,
                   help=f"default {EPSILON:g}; lloyd is not private and takes none")
    p.add_argument("--iterations", type=int, default=None,
                   help=f"DPLloyd only: {get_learner('dplloyd').knob('iterations').help}")
    p.add_argument("--neighbouring", choices=("add-remove", "replace-one"), default=None,
                   help=f"DPLloyd only: what ε protects (default {CLUSTER_COMPARISON_NEIGHBOURING}, as on the "
                        "Clustering page, like for like with input perturbation; add-remove is Su et al.'s)")
    add_noise_flags(p)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="any other knob of the algorithm, as the Clustering page's More settings, e.g. init=uniform or "
                        "count_fraction=0.3 (repeatable; python -m dpcore train --help lists each learner's knobs)")
    p.add_argument("--seeds", type=int, default=CLUSTER_SEEDS,
                   help=f"how many seeds the accuracy is averaged over, each its own split and noise (default "
                        f"{CLUSTER_SEEDS}, as on the Clustering page; the first seed's run is printed too, and the "
                        "epsilon of every seed's run together, epsilon_over_seeds, which the mean reads)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=_run)


#: The knobs this command has flags of its own for: given with --set, they are refused with the flag to use.
_OWN_FLAGS = ("k", "iterations", "neighbouring")


def _run(args) -> int:
    given = parse_set(args.set)
    if own := [key for key in _OWN_FLAGS if key in given]:
        raise DPValueError(f"--set {own[0]}=...: {own[0]} has a flag of its own here; give --{own[0]} "
                           f"{given[own[0]]} instead")
    params = get_learner(args.algorithm).check_params(given)  # an unknown knob or a bad value refused by name
    if args.k is not None:
        params["k"] = args.k
    if args.iterations is not None:
        params["iterations"] = args.iterations
    extra = {}
    if get_learner(args.algorithm).knob("neighbouring") is not None:  # DPLloyd: add/remove or replace-one
        params["neighbouring"] = extra["neighbouring"] = args.neighbouring or CLUSTER_COMPARISON_NEIGHBOURING
    elif args.neighbouring is not None:
        print(f"note: --neighbouring applies to dplloyd only; {args.algorithm} ignores it", file=sys.stderr)
    data = dataset_from_args(args, unlabelled=True)
    if getattr(data, "task", None) == UNLABELLED:
        return _run_unlabelled(args, data, params, extra)
    task = REGISTRY[data].task if isinstance(data, str) else data.task
    if task != "classification":  # k-means itself needs no label, but its accuracy is read against the classes
        fix = ("e.g. " + ", ".join(n for n, d in REGISTRY.items() if d.task == "classification")
               if isinstance(data, str) else "give a --label of classes (and --task classification)")
        raise DPValueError(f"{f'--dataset {data}' if isinstance(data, str) else '--data'}: cluster needs a "
                           f"classification dataset (the clusters are scored against its classes), and this one is "
                           f"{task}; {fix}")
    seed, secure = noise_from_args(args)
    seeds = check_int(args.seeds, "--seeds", minimum=1)
    note_ignored_epsilon(spec := get_learner(args.algorithm), args.epsilon)
    epsilon = (EPSILON if args.epsilon is None else args.epsilon) if spec.private else None
    first = 0 if seed is None else seed  # secure noise: the splits from seed 0 on, as the page draws them
    with warnings.catch_warnings(record=True) as told:  # said below, the judgement against random centres by the
        warnings.simplefilter("always")  # mean over the seeds where there are several, as the page reads it
        runs = [run_learner(args.algorithm, data, epsilon=epsilon, seed=seed, secure=secure, params=params)]
        with noise_mode(secure):  # the other seeds' splits; their noise from the OS too in secure mode, as on the page
            runs += [run_learner(args.algorithm, data, epsilon=epsilon, seed=s, params=params)
                     for s in range(first + 1, first + seeds)]
    res = runs[0]
    ref = res.extras["random_centres"]  # k centres drawn at random in the bounds, scored on the same test rows
    extra.update(random_centres_accuracy=round(ref.accuracy, 6), random_centres_accuracy_sd=round(ref.accuracy_sd, 6),
                 random_centres=f"k centres drawn uniformly in the declared bounds, {ref.draws} draws, no data used")
    if spec.private and ref.covers(res.metrics["accuracy"]):
        extra["no_better_than_random_centres"] = True
    said, accuracy = "its accuracy", res.metrics["accuracy"]
    if seeds > 1:  # the page's headline: the mean over the seeds, against random centres on the same splits
        scores = np.array([r.metrics["accuracy"] for r in runs])
        ref = RandomCentresReference.averaged([r.extras["random_centres"] for r in runs])
        extra.update(seeds=seeds, accuracy_mean=round(float(scores.mean()), 6),
                     accuracy_sd=round(float(scores.std(ddof=1)), 6),
                     random_centres_accuracy_mean=round(ref.accuracy, 6),
                     random_centres_accuracy_sd_mean=round(ref.accuracy_sd, 6))
        extra["no_better_than_random_centres_over_seeds"] = bool(spec.private and ref.covers(float(scores.mean())))
        if spec.private:  # the mean reads every seed's run on this data: its epsilon is theirs together
            extra["epsilon_over_seeds"] = _over_seeds(runs)
        said, accuracy = f"its mean accuracy over {seeds} seeds", float(scores.mean())
    for w in told:
        message = str(w.message)
        if seeds > 1 and _NO_BETTER_THAN_RANDOM in message and not ref.covers(accuracy):
            # one seed's judgement, which the page qualifies: 'On seed 0 alone ... which the mean over seeds evens out'
            judged = [str(first + i) for i, r in enumerate(runs) if r.extras.get("no_better_than_trivial")]
            message = (f"on seed{'s' if len(judged) > 1 else ''} {', '.join(judged)} of {first} to "
                       f"{first + seeds - 1} alone, {message} Over the {seeds} seeds its mean accuracy, "
                       f"{accuracy:.3f}, is above random centres' spread ({ref.accuracy:.3f} ± "
                       f"{ref.accuracy_sd:.3f}): one seed's noise and split, which the mean evens out.")
        warnings.warn(message, w.category, stacklevel=1)
    if spec.private and ref.covers(accuracy):
        print(f"note: {args.algorithm}: {said}, {accuracy:.3f}, is within the spread of random centres "
              f"({ref.accuracy:.3f} ± {ref.accuracy_sd:.3f}, no data used): no better than a clustering that never "
              "looked at the data", file=sys.stderr)
    print_result(res, as_json=args.json, secure=secure, extra={**extra, "seed": seed})
    if seeds > 1 and not args.json:
        spent = (f"; epsilon {epsilon_text(extra['epsilon_over_seeds'], digits=4)} for the {seeds} seeds' runs "
                 "together (the mean reads them all)" if "epsilon_over_seeds" in extra else "")
        print(f"over seeds {first} to {first + seeds - 1}: accuracy {extra['accuracy_mean']:.4f} ± "
              f"{extra['accuracy_sd']:.4f}; random centres {ref.accuracy:.4f} ± {ref.accuracy_sd:.4f}{spent}")
    return 0


def _over_seeds(runs) -> float:
    """The epsilon of the seeds' runs on one data set together, composed by a ledger under their relation (basic
    composition of their pure releases, Dwork et al. 2006): a record in every seed's training rows is in all of
    them, and the mean accuracy over the seeds reads every run. Infinity where a run leaked besides its noise
    (bounds read from the rows), as the pages' session total counts it."""
    from . import leaked

    if leaked:
        return math.inf
    ledger = PrivacyLedger(delta=sum(float(r.delta) for r in runs), neighbouring=runs[0].neighbouring)
    for r in runs:
        ledger.spend(r)
    return float(ledger.epsilon)


#: The learners' judgement of one clustering run against random centres (dpcore.learners.judge_against_trivial).
_NO_BETTER_THAN_RANDOM = "is no more accurate on the test rows than centres drawn at random"


def _run_unlabelled(args, data, params: dict, extra: dict) -> int:
    """``cluster --data FILE.csv`` with no ``--label``: one run on every row, read without classes."""
    if args.algorithm not in ROW_METHODS:
        raise DPValueError(f"--algorithm {args.algorithm} is not a clustering of the rows; without --label choose "
                           f"one of {', '.join(ROW_METHODS)} (random centres' score is printed beside each, as "
                           "random_centres_intra_cluster_variance)")
    seed, secure = noise_from_args(args)
    spec = get_learner(args.algorithm)
    note_ignored_epsilon(spec, args.epsilon)
    epsilon = (EPSILON if args.epsilon is None else args.epsilon) if spec.private else None
    k = params.pop("k", DEFAULT_K)
    res = cluster_rows(data, args.algorithm, k=k, epsilon=epsilon, params=params, seed=seed)
    ref = random_centres_on_rows(data, k)
    names = list(data.feature_names)
    out = {"learner": args.algorithm, "dataset": data.name, "task": UNLABELLED, "rows": data.n_samples, "k": res.k,
           "epsilon": res.epsilon, "delta": 0.0, **extra,
           "intra_cluster_variance": round(res.within_total, 6), "intra_cluster_variance_note": SCORE_NOTE,
           "random_centres_intra_cluster_variance": round(ref.intra_cluster_variance, 6),
           "random_centres_intra_cluster_variance_sd": round(ref.intra_cluster_variance_sd, 6),
           "random_centres": f"k centres drawn uniformly in the declared bounds, {ref.draws} draws, no data used",
           "centres": [{n: float(v) for n, v in zip(names, c)} for c in res.centres],
           "accuracy_note": NO_ACCURACY_NOTE, "seed": seed, "noise": "secure" if secure else "seeded"}
    if res.dp_event is not None:
        out["dp_event"] = str(res.dp_event)
    print(f"note: {SCORE_NOTE}", file=sys.stderr)
    from . import said

    if told := list(dict.fromkeys(said)):
        out["warnings"] = told
    if args.json:
        print_json(out)
    else:
        for key, value in out.items():
            if key != "warnings":
                print(text_line(key, value))
    return 0
