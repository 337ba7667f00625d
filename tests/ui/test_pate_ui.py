"""The PATE page's plain-language warnings."""
from __future__ import annotations

from types import SimpleNamespace

from dpcore.ui.pate import pate_warnings


def _result(teacher: float, vote: float):
    return SimpleNamespace(partition_sizes=[72] * 250, config=SimpleNamespace(teachers=250),
                           teacher_mean_accuracy=teacher, ensemble_accuracy=vote)


def test_weak_teachers_whose_vote_is_good_are_not_called_useless():
    # UCI Adult's defaults: one teacher 0.756, the noiseless vote 0.830, the most common class 0.751
    assert pate_warnings(_result(0.756, 0.830), n_classes=2, chance=0.751) == []


def test_a_vote_barely_above_the_most_common_class_is_said():
    (msg,) = pate_warnings(_result(0.756, 0.760), n_classes=2, chance=0.751)
    assert "barely better" in msg and "0.760 vs 0.751" in msg
