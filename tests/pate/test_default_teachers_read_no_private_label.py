"""PATE's default number of teachers (and queries) is a rule in the data's sizes and its DECLARED classes, never in
the classes its private labels happen to hold.

The vote sensitivity that PATE's epsilon rests on (one record changes one teacher's vote; Papernot et al. 2018)
assumes the number of teachers, and so the partition, is the same on neighbouring data sets. A rule that counted the
distinct training labels gave two neighbours (one label replaced, the only training row of its class) a different
number of teachers: every teacher's data changed at once.
"""
from __future__ import annotations

import numpy as np

from dpcore.pate.learners import default_queries, default_query_mode, default_teachers
from tests.label_neighbours import one_label_apart


def test_neighbours_differing_in_one_label_get_the_same_default_teachers_and_queries():
    a, b = one_label_apart()
    assert len(np.unique(a.y_train)) != len(np.unique(b.y_train))  # the labels do tell them apart
    assert default_teachers(a) == default_teachers(b)
    assert default_queries(a) == default_queries(b)
    assert default_query_mode(a) == default_query_mode(b)


def test_the_default_counts_the_datasets_declared_classes():
    a, _ = one_label_apart()
    n = a.X_train.shape[0]
    private = n - round(0.2 * n)
    assert a.n_classes == 3
    assert default_teachers(a, 0.2) == min(250, private // (2 * 3))
