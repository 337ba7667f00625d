"""What each classical estimator hands its noise, read where it hands it over, moves by at most the sensitivity that
noise is calibrated to when one record changes: DPLloyd's counts and sums (Su et al. 2016; add/remove or
replace-one), the functional mechanism's coefficients (Zhang et al. 2012; replace-one) and SSP's statistics (Wang
2018; add/remove, L2). The records are taken at and beyond the corners of the declared box, the worst case; the
statistics are those the estimator computed (its box map, clipping and row bounds included), not a re-derivation.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpcore.models.kmeans as kmeans
import dpcore.models.linear as linear
import dpcore.models.ssp as ssp


def _recorded(monkeypatch, module, name: str, replay: list | None = None, answers: list | None = None) -> list:
    """Replace ``module.<name>`` with a subclass recording ``(sensitivity, values)`` of every release, and what it
    answered in ``answers``. With ``replay``, the first ``len(replay)`` releases answer what is in it (the other data
    set's answers)."""
    made: list = []
    base = getattr(module, name)
    base = getattr(base, "spied", base)  # a spy put in place before: spy on the mechanism itself

    class Spy(base):
        spied = base

        def randomise(self, values, *, rng=None):
            made.append((self.sensitivity, np.array(values, dtype=float, copy=True)))
            out = super().randomise(values, rng=rng)
            if replay is not None and len(made) <= len(replay):
                out = replay[len(made) - 1]
            if answers is not None:
                answers.append(out)
            return out

    monkeypatch.setattr(module, name, Spy)
    return made


def _corner(rng, lo, hi):
    """A record at a corner of the box, or beyond it (the estimator must clip it back)."""
    return np.where(rng.random(lo.size) < 0.5, lo, hi) * rng.choice([1.0, 3.0], lo.size)


def _box(rng, d):
    return -rng.uniform(0.0, 5.0, d), rng.uniform(0.1, 5.0, d)


@pytest.mark.parametrize("neighbouring", ["add-remove", "replace-one"])
@pytest.mark.parametrize("l1_norm", ["auto", None])
def test_dplloyds_counts_and_sums_move_by_at_most_their_sensitivities(monkeypatch, neighbouring, l1_norm):
    rng = np.random.default_rng(0)
    worst = {"count": 0.0, "sum": 0.0}
    for _ in range(40):
        d = int(rng.integers(1, 6))
        lo, hi = _box(rng, d)
        X = rng.uniform(lo, hi, (30, d))
        if neighbouring == "add-remove":
            X2 = np.vstack([X, _corner(rng, lo, hi)])
        else:
            X2 = X.copy()
            X2[rng.integers(30)] = _corner(rng, lo, hi)
        runs = []
        for data in (X, X2):
            made = _recorded(monkeypatch, kmeans, "Laplace")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the record beyond the box is clipped with a warning
                # a start that reads no data, from the same seed: the round's centres are the same on both
                kmeans.DPLloydKMeans(3, epsilon=1.0, bounds=(lo, hi), init="uniform", iterations=1,
                                     l1_norm=l1_norm, neighbouring=neighbouring, random_state=5).fit(data)
            runs.append(made)
        (s_count, c1), (s_sum, s1) = runs[0]
        (_, c2), (_, s2) = runs[1]
        worst["count"] = max(worst["count"], np.abs(c1 - c2).sum() / s_count)
        worst["sum"] = max(worst["sum"], np.abs(s1 - s2).sum() / s_sum)
    # (the sums moved by a record compared here through floating-point sums: a unit in the last place)
    assert worst["count"] <= 1.0 and worst["sum"] <= 1.0 + 1e-12
    assert worst["count"] == 1.0 and worst["sum"] > 0.8  # the bounds are (nearly) reached: the check is sharp


@pytest.mark.parametrize("l1_norm", ["auto", None, 0.7])
def test_the_functional_mechanisms_coefficients_move_by_at_most_their_sensitivities(monkeypatch, l1_norm):
    rng = np.random.default_rng(1)
    worst = [0.0, 0.0, 0.0]  # quadratic, intercept, linear
    for _ in range(40):
        d = int(rng.integers(1, 6))
        lo, hi = _box(rng, d)
        X, y = rng.uniform(lo, hi, (20, d)), rng.uniform(-2.0, 3.0, 20)
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(20)
        X2[i], y2[i] = _corner(rng, lo, hi), rng.choice([-2.0, 3.0]) * rng.choice([1.0, 2.0])
        runs = []
        for data in ((X, y), (X2, y2)):
            made = _recorded(monkeypatch, linear, "Laplace")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                linear.FunctionalMechanismRegressor(epsilon=1.0, bounds_X=(lo, hi), bounds_y=(-2.0, 3.0),
                                                    l1_norm=l1_norm, random_state=1).fit(*data)
            runs.append(made)
        for k, ((s, a), (_, b)) in enumerate(zip(*runs)):
            worst[k] = max(worst[k], np.abs(a - b).sum() / s)
    assert max(worst) <= 1.0 + 1e-12
    assert min(worst) > 0.5


@pytest.mark.parametrize("data_norm", [0.3, 1.0, 2.5])
def test_ssps_statistics_move_by_at_most_their_l2_sensitivities_when_a_record_is_added(monkeypatch, data_norm):
    rng = np.random.default_rng(2)
    worst: dict[int, float] = {}
    for _ in range(30):
        d = int(rng.integers(1, 5))
        lo, hi = _box(rng, d)
        X, y = rng.uniform(lo, hi, (25, d)), rng.uniform(-2.0, 3.0, 25)
        X2, y2 = np.vstack([X, _corner(rng, lo, hi)]), np.r_[y, rng.choice([-2.0, 3.0])]
        answers: list = []
        runs = []
        for data in ((X, y), (X2, y2)):
            # the count and the sums are released first and fix the public centre; the second data set is answered
            # the first's, so the statistics after them are compared about the same centre (adaptive composition)
            made = _recorded(monkeypatch, ssp, "NoiseMultiplierGaussian", replay=answers[:3] if runs else None,
                             answers=None if runs else answers)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ssp.SSPRegressor(epsilon=1.0, delta=1e-5, bounds_X=(lo, hi), bounds_y=(-2.0, 3.0),
                                 data_norm=data_norm, adaptive=True, random_state=3).fit(*data)
            runs.append(made)
        for k, ((s, a), (_, b)) in enumerate(zip(*runs)):
            worst[k] = max(worst.get(k, 0.0), float(np.linalg.norm(np.atleast_1d(a - b))) / s)
    assert len(worst) == 6  # n, sum x, sum y, X^T X, X^T y, the smallest eigenvalue
    assert max(worst.values()) <= 1.0 + 1e-12  # (the sums' norms computed here in floating point)
    # the bounds are reached, but for the smallest eigenvalue, which moves by R^2 only along its own direction
    assert min(worst[k] for k in range(5)) > 0.8


def test_input_perturbations_released_records_move_by_at_most_their_sensitivity_when_one_is_replaced(monkeypatch):
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(40):
        d = int(rng.integers(1, 6))
        lo, hi = _box(rng, d)
        X = rng.uniform(lo, hi, (20, d))
        X2 = X.copy()
        i = rng.integers(20)
        X[i] = np.where(rng.random(d) < 0.5, lo, hi)  # a corner, replaced by the opposite one (or beyond it)
        X2[i] = np.where(X[i] == lo, hi, lo) * rng.choice([1.0, 3.0], d)
        runs = []
        for data in (X, X2):
            made = _recorded(monkeypatch, kmeans, "Laplace")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kmeans.InputPerturbationKMeans(2, epsilon=1.0, bounds=(lo, hi), n_init=1, random_state=0).fit(data)
            runs.append(made)
        [(s, a)], [(_, b)] = runs
        worst = max(worst, np.abs(a - b).sum() / s)
    assert worst == pytest.approx(1.0)  # opposite corners: the whole L1 sensitivity 2 d, and never more
    assert worst <= 1.0
