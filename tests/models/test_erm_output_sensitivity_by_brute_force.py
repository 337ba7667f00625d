"""Output perturbation's sensitivity, checked on neighbouring data sets rather than by its formula.

Chaudhuri, Monteleoni & Sarwate (2011), Corollary 8: with rows of norm at most 1, a loss with |l'| <= 1 and the
regulariser (Lambda/2)||f||^2, the minimiser of J moves by at most 2 / (n Lambda) in L2 when ONE record is replaced
(n fixed). Algorithm 1 calibrates its noise to that. Here the minimisers of neighbouring data sets are computed and
their distance measured: it never exceeds the sensitivity the private fit calibrates to, and for the Huber SVM it
reaches 2 / (n Lambda) (two replacements in the loss's linear piece, along a direction no other row curves), so a
sensitivity of 1 / (n Lambda), a factor 2 forgotten, would understate what one record does and is caught.
"""
from __future__ import annotations

import numpy as np
import pytest

import dpcore.models.erm as erm
from dpcore.models import ERMClassifier, PrivateERMClassifier
from tests.mechanism_spy import sensitivities_made


def minimiser(X, y, *, model: str, lam: float) -> np.ndarray:
    """argmin J on rows already of norm <= 1 (no intercept, no rescaling): the point Algorithm 1 perturbs."""
    est = ERMClassifier(regularization=lam, model=model, huber_h=0.5, data_norm=1.0, fit_intercept=False)
    return est.fit(X, y).coef_[0]


def calibrated_sensitivity(monkeypatch, X, y, *, model: str, lam: float) -> float:
    """The L2 sensitivity the private output-perturbation fit calibrates its noise to, on these rows."""
    made = sensitivities_made(monkeypatch, erm, "L2LaplaceVector")
    PrivateERMClassifier(epsilon=1.0, regularization=lam, perturbation="output", model=model, huber_h=0.5,
                         data_norm=1.0, fit_intercept=False, random_state=0).fit(X, y)
    (sensitivity,) = made
    return sensitivity


def axis_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n - 1 rows on the first axis, classes by sign; row 0 is the one to replace (on the second axis)."""
    rng = np.random.default_rng(1)
    y = np.where(rng.random(n) < 0.5, 1, 0)
    X = np.zeros((n, 2))
    X[:, 0] = 0.9 * np.where(y == 1, 1.0, -1.0)
    X[0] = [0.0, 1.0]
    y[0] = 1
    return X, y


def test_the_huber_svm_minimiser_moves_by_exactly_the_corollary_8_bound_and_no_more(monkeypatch):
    n, lam = 200, 0.05
    X, y = axis_data(n)
    other = X.copy()
    other[0] = [0.0, -1.0]  # the same label, the opposite direction: both margins 0, in the linear piece
    moved = np.linalg.norm(minimiser(X, y, model="svm", lam=lam) - minimiser(other, y, model="svm", lam=lam))
    sensitivity = calibrated_sensitivity(monkeypatch, X, y, model="svm", lam=lam)
    assert moved <= sensitivity
    assert moved == pytest.approx(2.0 / (n * lam), rel=1e-6)  # the bound is attained here
    assert moved > 1.9 / (n * lam)  # a sensitivity of 1 / (n Lambda) would cover half of it


@pytest.mark.parametrize("model", ["logreg", "svm"])
def test_no_replaced_record_moves_the_minimiser_beyond_the_calibrated_sensitivity(monkeypatch, model):
    n, lam = 120, 0.02
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 3))
    X *= 0.999 / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]  # norms within 1, rounding too
    y = (X[:, 0] - 0.5 * X[:, 2] > 0).astype(int)
    base = minimiser(X, y, model=model, lam=lam)
    sensitivity = calibrated_sensitivity(monkeypatch, X, y, model=model, lam=lam)
    # candidate replacements of row 0: the unit axes both ways and random unit rows, with either label
    candidates = [np.eye(3)[j] * s for j in range(3) for s in (1.0, -1.0)]
    candidates += list(rng.normal(size=(10, 3)))
    moved = []
    for row in candidates:
        for label in (0, 1):
            X2, y2 = X.copy(), y.copy()
            X2[0], y2[0] = 0.999 * row / np.linalg.norm(row), label
            moved.append(np.linalg.norm(minimiser(X2, y2, model=model, lam=lam) - base))
    assert max(moved) <= sensitivity
    assert max(moved) > 0.2 / (n * lam)  # the search did move it: the check is not vacuous
