"""A DP-ERM model's shape and budget split come from the declared classes, not from the private labels.

One-vs-rest trains one model per class at epsilon / k each (Chaudhuri et al. 2011 treat binary problems; k models on
the same rows compose). If k is read from the labels, two neighbouring data sets (one label replaced, the only
training row of its class) release one binary model at epsilon against three at epsilon / 3: told apart with
certainty, which no epsilon covers.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.exceptions import DPValueError, PrivacyLeakWarning
from dpcore.learners import get_learner
from dpcore.models import PrivateERMClassifier
from tests.label_neighbours import one_label_apart


@pytest.mark.parametrize("name", ["erm-output", "erm-objective"])
def test_the_registered_learners_release_the_same_models_on_neighbours_differing_in_one_label(name):
    a, b = one_label_apart()
    assert np.unique(a.y_train).size == 3 and np.unique(b.y_train).size == 2
    run = get_learner(name).run
    ra = run(a, epsilon=1.0, delta=0.0, seed=0, params={})
    rb = run(b, epsilon=1.0, delta=0.0, seed=0, params={})
    assert len(ra.extras["noise_norms"]) == len(rb.extras["noise_norms"]) == 3  # one model per declared class
    assert ra.epsilon == rb.epsilon == 1.0


def test_declared_classes_fix_the_models_and_each_ones_budget():
    a, b = one_label_apart()
    fits = [PrivateERMClassifier(epsilon=0.9, data_norm=20.0, classes=[0, 1, 2], random_state=0)
            .fit(s.X_train, s.y_train) for s in (a, b)]
    assert [f.coef_.shape for f in fits] == [(3, 4), (3, 4)]
    assert [f.epsilon_per_model_ for f in fits] == pytest.approx([0.3, 0.3])
    assert fits[1].predict(b.X_test).max() <= 2


def test_classes_read_from_the_private_labels_are_warned_and_labels_outside_the_declared_ones_refused():
    a, _ = one_label_apart()
    with pytest.warns(PrivacyLeakWarning, match="classes were not declared"):
        PrivateERMClassifier(epsilon=1.0, data_norm=20.0, random_state=0).fit(a.X_train, a.y_train)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # declared: nothing read from the labels
        PrivateERMClassifier(epsilon=1.0, data_norm=20.0, classes=[0, 1, 2], random_state=0).fit(a.X_train, a.y_train)
    with pytest.raises(DPValueError, match=r"outside the declared classes.*classes="):
        PrivateERMClassifier(epsilon=1.0, data_norm=20.0, classes=[0, 1], random_state=0).fit(a.X_train, a.y_train)
    with pytest.raises(DPValueError, match="at least two distinct labels"):
        PrivateERMClassifier(epsilon=1.0, data_norm=20.0, classes=[1, 1], random_state=0).fit(a.X_train, a.y_train)
