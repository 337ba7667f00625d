"""The trade-off chart's baseline lines say when their number is a mean over seeds that differ.

The lesson's Train stop shows the non-private model at seed 0 (MNIST 5k: 0.962); its Trade-off stop, at the same
dataset and seed, swept seeds 0 to 2 and its legend read "Non-private SGD (same model): 0.958", a second number for
the same model with nothing to say why. A baseline every seed agrees on (the majority class, 0.1) needs no such word.
"""
from __future__ import annotations

import pandas as pd

from dpcore.sweep import SweepConfig
from dpcore.ui.sweep import sweep_figure


def _lesson_sweep() -> tuple[pd.DataFrame, SweepConfig]:
    cfg = SweepConfig(dataset="mnist5k", learners=["dpsgd"], values=[0.1, 1.0, 10.0], seeds=3)
    rows = [("dpsgd", "swept", v, s, a) for v, accs in ((0.1, (0.4576, 0.4208, 0.4696)),
                                                         (1.0, (0.9104, 0.9128, 0.908)),
                                                         (10.0, (0.9256, 0.9256, 0.9288)))
            for s, a in enumerate(accs)]
    rows += [("non-private", "baseline", float("nan"), s, a) for s, a in enumerate((0.9616, 0.9544, 0.9592))]
    rows += [("majority", "trivial", float("nan"), s, 0.1) for s in range(3)]
    table = pd.DataFrame(rows, columns=["learner", "role", "value", "seed", "accuracy"])
    table["epsilon"] = [r[2] if r[1] == "swept" else float("inf") for r in rows]
    table["leaks_privacy"] = False
    return table, cfg


def test_a_baseline_over_seeds_that_differ_is_named_their_mean_and_one_they_agree_on_is_not():
    table, cfg = _lesson_sweep()
    names = [t.name for t in sweep_figure(table, cfg, metric="accuracy", mark=1.0).data if t.name]
    assert "Non-private SGD (same model): 0.958, mean of 3 seeds" in names, names
    assert "Majority class (trivial): 0.1" in names, names


def test_a_long_legend_entry_is_broken_into_lines_a_phone_shows_whole():
    # at 390 px the legend showed "Regularised logistic regression / SVM (non-private): 0.977, mean" and cut the rest;
    # Plotly does not wrap a legend entry, so a line of its own takes what runs past about 56 characters
    from dpcore.ui.palette import LEGEND_LINE

    cfg = SweepConfig(dataset="breast_cancer", learners=["erm-objective"], values=[0.1, 1.0], seeds=2)
    rows = [("erm-objective", "swept", v, s, a) for v in (0.1, 1.0) for s, a in enumerate((0.7, 0.9))]
    rows += [("logreg", "baseline", float("nan"), s, a) for s, a in enumerate((0.976, 0.978))]
    table = pd.DataFrame(rows, columns=["learner", "role", "value", "seed", "accuracy"])
    table["epsilon"] = [r[2] if r[1] == "swept" else float("inf") for r in rows]
    table["leaks_privacy"] = False
    names = [t.name for t in sweep_figure(table, cfg, metric="accuracy").data if t.name]
    assert "Regularised logistic regression / SVM (non-private):<br>0.977, mean of 2 seeds" in names, names
    assert all(len(line) <= LEGEND_LINE for n in names for line in n.split("<br>")), names
