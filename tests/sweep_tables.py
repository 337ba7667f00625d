"""Sweep tables written by hand, for tests of what is read from a sweep (the advisor, its report): every learner at
every ε and seed, beside its non-private references and the trivial predictor."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpcore.sweep import SweepConfig, SweepResult


def sweep_with_references(swept: dict[str, float], references: dict[str, float], *, trivial: float = 0.33,
                          values=(1.0, 10.0), seeds: int = 3, step: float = 0.001, dataset="iris",
                          **config) -> SweepResult:
    """A sweep of the learners ``swept`` (name -> accuracy, ``step`` more for each seed after the first) at
    ``values`` on ``dataset``, every run spending the ε it was given, beside the non-private ``references`` (name
    -> accuracy) and the majority class at ``trivial``; ``config``: more of :class:`SweepConfig` (``secure``)."""
    config = SweepConfig(dataset=dataset, learners=tuple(swept), values=tuple(values), seeds=seeds, **config)
    rows = []
    for s in range(seeds):
        for name, score, role in (*((n, a, "baseline") for n, a in references.items()),
                                  ("majority", trivial, "trivial")):
            rows.append({"learner": name, "role": role, "value": np.nan, "seed": s, "accuracy": score,
                         "epsilon": math.inf, "warnings": "", "leaks_privacy": False, "event": ""})
        for name, score in swept.items():
            for v in values:
                rows.append({"learner": name, "role": "swept", "value": v, "seed": s, "accuracy": score + step * s,
                             "epsilon": v, "warnings": "", "leaks_privacy": False, "event": ""})
    return SweepResult(config, pd.DataFrame(rows), 0, len(rows), 0.0)
