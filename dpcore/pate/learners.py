"""Registers ``pate`` with the shared learner registry (CLI, sweeps, pages).

``params`` (all optional): ``aggregator`` ("gnmax" | "lnmax"), ``teachers`` (default: up to 50,
keeping ~20 private examples per teacher), ``queries`` (default: up to 100, at most the public pool),
``noise_multiplier`` (the noise on each vote count: GNMax sigma or LNMax Laplace scale
1/gamma, in votes; without it the noise is calibrated so the answered queries cost
``epsilon``), ``public_fraction``, ``teacher_model`` / ``student_model`` ("logreg" | "mlp"),
``data_dependent`` (GNMax only; reported in ``extras``, not itself private),
``accountant`` ("rdp" | "pld"), ``baseline``.
"""
from __future__ import annotations

from ..learners import register
from ..learners.base import LearnerSpec, RunResult, TestOutputs
from .analysis import PATE_NEIGHBOURING
from .pipeline import PateConfig, run_pate

_PARAMS = ("aggregator", "teachers", "queries", "noise_multiplier", "public_fraction", "teacher_model",
           "student_model", "data_dependent", "accountant", "baseline")


def _defaults(split, public_fraction: float) -> tuple[int, int]:
    """Default teachers / queries that fit the data: at most 50 teachers with >= ~20 examples each,
    at most 100 queries and never more than the public pool (explicit values are never changed)."""
    n = split.X_train.shape[0]
    n_public = int(round(float(public_fraction) * n))
    return max(1, min(50, (n - n_public) // 20)), max(1, min(100, n_public))


def _run_pate(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    p = dict(params)
    noise = p.pop("noise_multiplier", None)
    default_teachers, default_queries = _defaults(split, p.get("public_fraction", 0.2))
    cfg = PateConfig(
        aggregator=str(p.pop("aggregator", "gnmax")),
        teachers=p.pop("teachers", default_teachers),
        queries=p.pop("queries", default_queries),
        noise_scale=noise,
        target_epsilon=None if noise is not None else epsilon,
        delta=delta,
        public_fraction=p.pop("public_fraction", 0.2),
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
        params=_PARAMS,
        baseline=None,
        description="Private Aggregation of Teacher Ensembles (Papernot et al. 2017/2018): teachers on disjoint "
                    "private partitions, GNMax/LNMax noisy votes label public queries, a student learns from them.",
    )
)
