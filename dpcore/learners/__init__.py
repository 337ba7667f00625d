"""Registry of learners: one interface for every private (and baseline) learner.

Learner modules register themselves with :func:`register`; the registry imports
the provider modules listed in ``_PROVIDERS`` lazily, so ``import dpcore`` stays
light (no torch import until a learner is needed).

>>> "majority" in learner_names()
True
"""
from __future__ import annotations

import importlib
import time
import warnings
from typing import Any, Mapping

import numpy as np

from ..datasets import Dataset, Split, train_test_split
from ..exceptions import DPCoreWarning, DPValueError
from ..rng import as_generator
from ..validation import check_delta, check_epsilon, check_fraction, check_int
from .base import EpochCallback, LearnerSpec, RunResult, TestOutputs
from .knobs import Knob, Wording, parse_value

_LEARNERS: dict[str, LearnerSpec] = {}

# Modules that call register(...) at import. Add yours here.
_PROVIDERS = [
    "dpcore.learners.trivial",
    "dpcore.training.learners",
    "dpcore.models.learners",
    "dpcore.pate.learners",
    "dpcore.federated.learners",
    "dpcore.images.learners",
]
_loaded = False


def register(spec: LearnerSpec) -> LearnerSpec:
    """Add ``spec`` to the registry (idempotent for the same name)."""
    _LEARNERS[spec.name] = spec
    return spec


def _load_providers() -> None:
    global _loaded
    if _loaded:
        return
    for mod in _PROVIDERS:
        importlib.import_module(mod)
    _loaded = True


def learners() -> dict[str, LearnerSpec]:
    """All registered learners by name."""
    _load_providers()
    return dict(_LEARNERS)


def learner_names(task: str | None = None) -> list[str]:
    return [n for n, s in learners().items() if task is None or task in s.tasks]


def get_learner(name: str) -> LearnerSpec:
    regs = learners()
    if name not in regs:
        raise DPValueError(f"unknown learner {name!r}; choose one of {', '.join(sorted(regs))}")
    return regs[name]


def subsample_train(split: Split, fraction: float, seed: int) -> Split:
    """Keep a deterministic ``fraction`` of the training rows (for accuracy vs training-set size)."""
    fraction = check_fraction(fraction, "train_fraction")
    if fraction >= 1.0:
        return split
    rng = as_generator(seed + 7919)
    n = split.X_train.shape[0]
    k = max(2, int(round(fraction * n)))
    idx = np.sort(rng.choice(n, size=k, replace=False))
    return Split(
        dataset=split.dataset,
        X_train=split.X_train[idx],
        y_train=split.y_train[idx],
        X_test=split.X_test,
        y_test=split.y_test,
        seed=split.seed,
        test_size=split.test_size,
    )


def run_learner(
    name: str,
    data: "str | Dataset | Split",
    *,
    epsilon: float = 1.0,
    delta: float = 1e-5,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    train_fraction: float = 1.0,
    test_size: float = 0.25,
    on_epoch: EpochCallback | None = None,
) -> RunResult:
    """Run a registered learner on a dataset name, a Dataset or a Split.

    The split is deterministic in ``seed``; ``train_fraction`` keeps that share
    of the training rows (the test rows are unchanged).
    """
    spec = get_learner(name)
    seed = check_int(seed, "seed", minimum=0)
    params = dict(params or {})
    if spec.private:
        epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if isinstance(data, Split):
        split = data
    else:
        split = train_test_split(data, test_size=test_size, seed=seed)
    if split.task not in spec.tasks:
        raise DPValueError(
            f"learner {name!r} handles {' and '.join(spec.tasks)}, but dataset {split.dataset.name!r} is {split.task}"
        )
    if spec.images_only and not split.dataset.is_image:
        raise DPValueError(f"learner {name!r} needs image data; {split.dataset.name!r} is tabular")
    params = spec.check_params(params)  # unknown names and bad values refused here, before any work
    params = {**spec.fixed_defaults(), **params}  # the declared defaults: the same for the CLI, sweeps and pages
    split = subsample_train(split, train_fraction, seed)
    if spec.private and spec.uses_delta and delta > 0:
        check_delta(delta, n=split.X_train.shape[0])  # warns when delta > 1/n
    t0 = time.perf_counter()
    result = spec.run(split, epsilon=epsilon, delta=delta, seed=seed, params=params, on_epoch=on_epoch)
    if result.seconds == 0.0:
        object.__setattr__(result, "seconds", time.perf_counter() - t0)
    _say_if_single_class(spec, split, result)
    return result


def _say_if_single_class(spec: LearnerSpec, split: Split, result: RunResult) -> None:
    """Warn, and record in ``extras["single_class"]``, when a classifier answers one class for every test row.

    Such a model's accuracy is the share of that class among the test rows, not anything learnt; the
    majority baseline does it by design and is not flagged.
    """
    outputs = result.test_outputs
    if (split.task != "classification" or spec.name == "majority" or outputs is None
            or outputs.kind not in ("probability", "score") or np.unique(split.y_test).size < 2):
        return
    predicted = np.unique(np.argmax(outputs.values, axis=1))
    if predicted.size != 1:
        return
    names = split.dataset.target_names
    label = names[int(predicted[0])] if int(predicted[0]) < len(names) else int(predicted[0])
    result.extras["single_class"] = str(label)
    why = "The noise may have drowned what it learnt: try a larger epsilon" if spec.private else "Try"
    warnings.warn(  # no per-run numbers in the text, so a sweep's many runs give one message per learner
        f"{spec.name} predicts the single class {str(label)!r} for every test row: its accuracy is that class's "
        f"share of the test rows, not skill. {why}, more epochs or rounds, or knobs suited to this dataset "
        "(learning rate, regularisation)", DPCoreWarning, stacklevel=2)


__all__ = [
    "EpochCallback",
    "LearnerSpec",
    "RunResult",
    "TestOutputs",
    "Knob",
    "Wording",
    "parse_value",
    "register",
    "learners",
    "learner_names",
    "get_learner",
    "run_learner",
    "subsample_train",
]
