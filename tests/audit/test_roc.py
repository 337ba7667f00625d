"""ROC, AUC, TPR at low FPR and membership advantage, against scikit-learn and brute force."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics

from dpcore.audit import roc
from dpcore.exceptions import DPCoreError


def _scores(seed: int, n_members: int = 300, n_nonmembers: int = 400, *, ties: bool):
    rng = np.random.default_rng(seed)
    members = rng.normal(0.7, 1.0, n_members)
    nonmembers = rng.normal(0.0, 1.0, n_nonmembers)
    if ties:  # coarse scores: many member/non-member ties
        members, nonmembers = np.round(members, 1), np.round(nonmembers, 1)
    return members, nonmembers


def _sklearn_inputs(members, nonmembers):
    y = np.r_[np.ones(members.size), np.zeros(nonmembers.size)]
    return y, np.r_[members, nonmembers]


@pytest.mark.parametrize("ties", [False, True])
def test_curve_matches_sklearn_roc_curve_at_every_threshold(ties):
    members, nonmembers = _scores(0, ties=ties)
    curve = roc.roc_curve(members, nonmembers)
    fpr, tpr, thresholds = metrics.roc_curve(*_sklearn_inputs(members, nonmembers), drop_intermediate=False)
    np.testing.assert_allclose(curve.fpr, fpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(curve.tpr, tpr, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(curve.thresholds, thresholds)


@pytest.mark.parametrize("ties", [False, True])
def test_auc_matches_sklearn_and_the_mann_whitney_count(ties):
    members, nonmembers = _scores(1, ties=ties)
    auc = roc.roc_auc(members, nonmembers)
    assert auc == pytest.approx(metrics.roc_auc_score(*_sklearn_inputs(members, nonmembers)), abs=1e-12)
    diff = members[:, None] - nonmembers[None, :]
    mann_whitney = (np.sum(diff > 0) + 0.5 * np.sum(diff == 0)) / diff.size
    assert auc == pytest.approx(mann_whitney, abs=1e-12)


def _brute_tpr_at_fpr(members, nonmembers, target):
    best = 0.0
    for t in np.r_[np.inf, members, nonmembers]:
        fp = np.sum(nonmembers >= t)
        if fp <= np.floor(target * nonmembers.size + 1e-9):
            best = max(best, np.mean(members >= t))
    return best


@pytest.mark.parametrize("target", [0.001, 0.01, 0.1, 0.29])
def test_tpr_at_fpr_is_the_best_tpr_with_fpr_at_most_the_target(target):
    members, nonmembers = _scores(2, 300, 1000, ties=True)
    assert roc.tpr_at_fpr(members, nonmembers, target) == _brute_tpr_at_fpr(members, nonmembers, target)


def test_tpr_at_fpr_does_not_interpolate_between_thresholds():
    # the non-member scoring 5 ties with two members: the curve jumps from (0, 0.5) to
    # (0.1, 1.0). At FPR 0.05 only thresholds with no false positive qualify (TPR 0.5);
    # interpolating along the curve would claim 0.75
    members = [10.0, 9.0, 5.0, 5.0]
    nonmembers = [5.0] + [0.0] * 9
    assert roc.tpr_at_fpr(members, nonmembers, 0.05) == 0.5
    curve = roc.roc_curve(members, nonmembers)
    assert np.interp(0.05, curve.fpr, curve.tpr) == pytest.approx(0.75)


def test_tpr_at_fpr_admits_a_target_hit_exactly_despite_rounding():
    # 0.29 * 100 is 28.999999999999996 in floating point; 29 false positives still count
    nonmembers = np.arange(100.0)
    members = np.array([71.0, 50.0])  # flagging >= 71 gives FP = 29
    assert roc.tpr_at_fpr(members, nonmembers, 0.29) == 0.5


def test_tpr_at_fprs_are_keyed_for_json():
    members, nonmembers = _scores(3, ties=False)
    out = roc.tpr_at_fpr(members, nonmembers)
    assert list(out) == ["0.001", "0.01"]
    assert out["0.01"] == roc.tpr_at_fpr(members, nonmembers, 0.01)


def test_advantage_is_the_largest_tpr_minus_fpr():
    members, nonmembers = _scores(4, ties=True)
    brute = max(np.mean(members >= t) - np.mean(nonmembers >= t) for t in np.r_[members, nonmembers])
    assert roc.membership_advantage(members, nonmembers) == pytest.approx(brute, abs=1e-12)


def test_advantage_of_two_gaussians_is_close_to_the_closed_form():
    # N(mu, 1) vs N(0, 1): max TPR - FPR = 2 Phi(mu / 2) - 1
    from scipy import stats

    rng = np.random.default_rng(5)
    members, nonmembers = rng.normal(1.0, 1.0, 20000), rng.normal(0.0, 1.0, 20000)
    assert roc.membership_advantage(members, nonmembers) == pytest.approx(2 * stats.norm.cdf(0.5) - 1, abs=0.02)


def test_an_attack_that_cannot_tell_members_apart_scores_half():
    scores = np.zeros(50)
    curve = roc.roc_curve(scores, scores)
    assert curve.auc == 0.5 and curve.advantage == 0.0 and curve.tpr_at(0.01) == 0.0


@pytest.mark.parametrize(
    "members, nonmembers, match",
    [([], [1.0], "member_scores"), ([1.0], [np.nan], "nonmember_scores"), ([[1.0]], [1.0], "member_scores")],
)
def test_bad_scores_name_the_parameter(members, nonmembers, match):
    with pytest.raises(DPCoreError, match=match):
        roc.roc_curve(members, nonmembers)


@pytest.mark.parametrize("target", [-0.1, 1.5, "low"])
def test_bad_fpr_target_names_fpr(target):
    with pytest.raises(DPCoreError, match="fpr"):
        roc.tpr_at_fpr([1.0], [0.0], target)
