"""Registers ``pate`` with the shared learner registry (CLI, sweeps, pages).

``params`` (all optional, declared in :data:`PATE_KNOBS`): ``aggregator`` ("gnmax" | "lnmax"), ``teachers``
(default: up to 50, keeping ~20 private examples per teacher), ``queries`` (default: up to 50, at most the public
pool),
``noise_multiplier`` (the noise on each vote count: GNMax sigma or LNMax Laplace scale
1/gamma, in votes; without it the noise is calibrated so the answered queries cost
``epsilon``), ``public_fraction``, ``teacher_model`` / ``student_model`` ("logreg" | "mlp"),
``data_dependent`` (GNMax only; reported in ``extras``, not itself private),
``accountant`` ("rdp" | "pld"), ``baseline``.
"""
from __future__ import annotations

from ..learners import register
from ..learners.base import LearnerSpec, RunResult, TestOutputs
from ..learners.knobs import Knob
from .aggregation import AGGREGATORS
from .analysis import PATE_NEIGHBOURING
from .pipeline import PateConfig, run_pate

PUBLIC_FRACTION = 0.2


def default_teachers(split, public_fraction: float = PUBLIC_FRACTION) -> int:
    """At most 50 teachers, each with about 20 private examples or more."""
    n = split.X_train.shape[0]
    return max(1, min(50, (n - int(round(public_fraction * n))) // 20))


def default_queries(split, public_fraction: float = PUBLIC_FRACTION) -> int:
    """At most 50 answered queries, never more than the public pool."""
    return max(1, min(50, int(round(public_fraction * split.X_train.shape[0]))))


#: PATE's knobs. The defaults (epsilon 5, 50 teachers, 50 queries on the larger sets) were chosen on the
#: agreement of the noisy labels with the public pool's true labels (validation, not test rows).
PATE_KNOBS = (
    Knob("aggregator", "choice", default="gnmax", choices=AGGREGATORS, privacy=True, label="Aggregator",
         help="gnmax (Gaussian noise on the vote counts, Papernot et al. 2018) or lnmax (Laplace, 2017)"),
    Knob("teachers", "int", low=1, high=10_000, privacy=True, label="Teachers", default_from=default_teachers,
         help="teachers on disjoint private partitions (default: at most 50, ~20 examples each)"),
    Knob("queries", "int", low=1, high=100_000, privacy=True, label="Queries answered",
         default_from=default_queries, help="public examples labelled by the noisy vote; each one spends privacy"),
    Knob("noise_multiplier", "float", low=0.0, low_open=True, high=1e6, log=True, privacy=True,
         label="Noise scale in votes", help="GNMax sigma or LNMax 1/gamma, in votes; omitted: calibrated from "
                                            "epsilon"),
    Knob("public_fraction", "float", default=PUBLIC_FRACTION, low=0.0, low_open=True, high=0.9,
         label="Public share of the training part", help="share of the training rows used as the student's "
                                                         "unlabelled public data"),
    Knob("teacher_model", "choice", default="logreg", choices=("logreg", "mlp"), label="Teacher model",
         help="logreg or mlp"),
    Knob("student_model", "choice", default="logreg", choices=("logreg", "mlp"), label="Student model",
         help="logreg or mlp"),
    Knob("data_dependent", "bool", default=False, advanced=True, label="Data-dependent ε (GNMax)",
         help="also report the data-dependent epsilon (not itself private)"),
    Knob("accountant", "choice", default="rdp", choices=("rdp", "pld"), privacy=True, advanced=True,
         label="Accountant", help="rdp or pld"),
    Knob("baseline", "bool", default=False, advanced=True, label="Non-private baseline",
         help="also train one non-private model on all private rows, for comparison"),
)


def _run_pate(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    p = dict(params)
    noise = p.pop("noise_multiplier", None)
    public = p.pop("public_fraction", PUBLIC_FRACTION)
    cfg = PateConfig(
        aggregator=str(p.pop("aggregator", "gnmax")),
        teachers=p.pop("teachers", None) or default_teachers(split, public),
        queries=p.pop("queries", None) or default_queries(split, public),
        noise_scale=noise,
        target_epsilon=None if noise is not None else epsilon,
        delta=delta,
        public_fraction=public,
        teacher_model=str(p.pop("teacher_model", "logreg")),
        student_model=str(p.pop("student_model", "logreg")),
        data_dependent=bool(p.pop("data_dependent", False)),
        accountant=str(p.pop("accountant", "rdp")),
        baseline=bool(p.pop("baseline", False)),
        seed=seed,
    )
    r = run_pate(split, cfg, on_epoch=on_epoch)
    metrics = {
        "accuracy": r.student_accuracy,
        "teacher_accuracy": r.teacher_mean_accuracy,
        "ensemble_accuracy": r.ensemble_accuracy,
        "label_accuracy": r.label_accuracy,
    }
    if cfg.baseline:
        metrics["nonprivate_accuracy"] = r.nonprivate_accuracy
    extras = {
        "aggregator": cfg.aggregator,
        "teachers": cfg.teachers,
        "queries": cfg.queries,
        "epsilon_pure": r.epsilon_pure,
        "epsilon_data_dependent": r.epsilon_data_dependent,
        "split_sizes": r.split_sizes,
        "teacher_seconds": r.teacher_seconds,
        "predictions": r.student_predictions,
    }
    return RunResult("pate", split.dataset.name, split.task, metrics, r.epsilon, r.delta,
                     noise_multiplier=r.noise_scale, seconds=r.seconds, history=r.history, extras=extras,
                     event=r.dp_event, neighbouring=PATE_NEIGHBOURING,
                     test_outputs=TestOutputs.from_labels(r.student_predictions, split.n_classes))


register(
    LearnerSpec(
        "pate",
        "PATE (teachers, noisy votes, student)",
        ("classification",),
        True,
        _run_pate,
        knobs=PATE_KNOBS,
        baseline=None,
        default_epsilon=5.0,
        description="Private Aggregation of Teacher Ensembles (Papernot et al. 2017/2018): teachers on disjoint "
                    "private partitions, GNMax/LNMax noisy votes label public queries, a student learns from them.",
    )
)
