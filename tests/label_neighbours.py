"""Two neighbouring training sets of iris that differ in one label, where a class lives or dies with it: a learner
that reads its classes from the private labels releases something different for each (the tests of PATE's defaults
and of DP-ERM's declared classes)."""
from __future__ import annotations

import dataclasses

import numpy as np

from dpcore.datasets import train_test_split


def one_label_apart():
    """iris's training part with class 2 reduced to one row, and the same with that row relabelled 1."""
    split = train_test_split("iris", seed=0)
    y = np.asarray(split.y_train).copy()
    rows = np.flatnonzero(y == 2)
    y[rows[1:]] = 1
    other = y.copy()
    other[rows[0]] = 1
    return dataclasses.replace(split, y_train=y), dataclasses.replace(split, y_train=other)
