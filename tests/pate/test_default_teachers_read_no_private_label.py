"""PATE's default number of teachers (and queries) is a rule in the data's sizes and its DECLARED classes, never in
the classes its private labels happen to hold.

The vote sensitivity that PATE's epsilon rests on (one record changes one teacher's vote; Papernot et al. 2018)
assumes the number of teachers, and so the partition, is the same on neighbouring data sets. A rule that counted the
distinct training labels gave two neighbours (one label replaced, the only training row of its class) a different
number of teachers: every teacher's data changed at once.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from dpcore.datasets import train_test_split
from dpcore.pate.learners import default_queries, default_query_mode, default_teachers


def neighbours():
    """Two training sets that differ in one label: class 2 has a single training row in the first, none in the
    second (that row relabelled 1)."""
    split = train_test_split("iris", seed=0)
    y = np.asarray(split.y_train).copy()
    rows = np.flatnonzero(y == 2)
    y[rows[1:]] = 1
    other = y.copy()
    other[rows[0]] = 1
    return dataclasses.replace(split, y_train=y), dataclasses.replace(split, y_train=other)


def test_neighbours_differing_in_one_label_get_the_same_default_teachers_and_queries():
    a, b = neighbours()
    assert len(np.unique(a.y_train)) != len(np.unique(b.y_train))  # the labels do tell them apart
    assert default_teachers(a) == default_teachers(b)
    assert default_queries(a) == default_queries(b)
    assert default_query_mode(a) == default_query_mode(b)


def test_the_default_counts_the_datasets_declared_classes():
    a, _ = neighbours()
    n = a.X_train.shape[0]
    private = n - round(0.2 * n)
    assert a.n_classes == 3
    assert default_teachers(a, 0.2) == min(250, private // (2 * 3))
