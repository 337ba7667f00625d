"""Small deterministic fake learners for the sweep tests.

Importable by module name (``sweep_fake_learners``: pytest puts this directory on
``sys.path`` and loky/Dask workers inherit it), so they pickle and can be
registered in worker processes through ``SweepConfig(providers=...)``, which
calls :func:`register_learners`. Every call appends a line to the file named by
the ``call_log`` parameter, so tests can count how many runs were computed,
across processes.
"""
from __future__ import annotations

import math
import os
import time
import warnings

import numpy as np

from dpcore.exceptions import PrivacyLeakWarning
from dpcore.learners import (
    _LEARNERS,  # test-only cleanup
    Knob,
    LearnerSpec,
    RunResult,
    register,
)
from dpcore.learners.metrics import score
from dpcore.rng import as_generator

NAMES = ("fake-dp", "fake-np", "fake-fixed")
#: The fake accountant spends this share of the target budget (so "spent" != "target" in tests).
SPENT_SHARE = 0.9


def _log(params, name: str, epsilon: float, seed: int) -> None:
    path = params.get("call_log")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{name},{epsilon!r},{seed},{params.get('clip_norm')},{params.get('epochs')}\n")


def _predict(split, quality: float, rng: np.random.Generator):
    """Predictions whose quality in [0, 1] interpolates between a constant and the truth."""
    n = split.y_test.shape[0]
    if split.task == "classification":
        classes, counts = np.unique(split.y_train, return_counts=True)
        pred = np.full(n, classes[np.argmax(counts)])
        right = rng.random(n) < quality
        return np.where(right, split.y_test, pred)
    mean = float(np.mean(split.y_train))
    return mean + quality * (np.asarray(split.y_test, dtype=float) - mean) + (1 - quality) * rng.normal(0, 1, n)


def _fake_dp(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    _log(params, "fake-dp", epsilon, seed)
    if params.get("fail") == "user":
        from dpcore.exceptions import DPValueError

        raise DPValueError("asked to fail politely; pick another value")
    if params.get("fail"):
        raise ValueError("asked to fail")
    if params.get("crash_unless_pid") and os.getpid() != params["crash_unless_pid"]:
        os._exit(3)  # a worker process dying (out of memory, segfault...)
    if params.get("sleep"):
        time.sleep(float(params["sleep"]))
    if params.get("warn"):
        warnings.warn("bounds were inferred from the data", PrivacyLeakWarning, stacklevel=2)
    clip = float(params.get("clip_norm", 1.0))
    sigma = float(params.get("noise_multiplier", 1.0))
    epochs = int(params.get("epochs", 1))
    quality = (1 - math.exp(-epsilon * clip / sigma)) * (1 - 0.5 ** epochs)
    rng = as_generator(seed)
    pred = _predict(split, quality, rng)
    return RunResult("fake-dp", split.dataset.name, split.task, score(split, pred), SPENT_SHARE * epsilon, delta,
                     noise_multiplier=sigma)


def _fake_np(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    _log(params, "fake-np", epsilon, seed)
    pred = _predict(split, 1 - 0.5 ** int(params.get("epochs", 1)), as_generator(seed))
    return RunResult("fake-np", split.dataset.name, split.task, score(split, pred), float("inf"), 0.0)


def _fake_fixed(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    _log(params, "fake-fixed", epsilon, seed)
    pred = _predict(split, 1 - math.exp(-epsilon), as_generator(seed))
    return RunResult("fake-fixed", split.dataset.name, split.task, score(split, pred), epsilon, 0.0)


#: Knobs the fakes declare, as a real learner does (the sweep checks values against them).
_CLIP = Knob("clip_norm", "float", low=0.0, low_open=True, high=1e6)
_SIGMA = Knob("noise_multiplier", "float", low=0.0, low_open=True, high=1e4)
_LR = Knob("learning_rate", "float", low=0.0, low_open=True, high=1000.0)
_EPOCHS = Knob("epochs", "int", low=1, high=10_000, shared=True)
_LOG = Knob("call_log", "str", shared=True)  # every run of a sweep logs its call, the baselines too


def register_learners() -> None:
    tasks = ("classification", "regression")
    register(LearnerSpec("fake-dp", "Fake DP learner", tasks, True, _fake_dp, baseline="fake-np",
                         knobs=(_CLIP, _SIGMA, _LR, _EPOCHS, _LOG, Knob("sleep", "float", low=0.0, high=60.0),
                                Knob("fail", "choice", choices=(True, False, "user")), Knob("warn", "bool"),
                                Knob("crash_unless_pid", "int", low=0))))
    register(LearnerSpec("fake-np", "Fake non-private learner", tasks, False, _fake_np, knobs=(_LR, _EPOCHS, _LOG)))
    register(LearnerSpec("fake-fixed", "Fake pure-DP learner without knobs", tasks, True, _fake_fixed,
                         knobs=(_LOG,), uses_delta=False))


def unregister_learners() -> None:
    for name in NAMES:
        _LEARNERS.pop(name, None)
