"""Score functions: logit scaling, loss threshold and LiRA against independent computations
and on synthetic Gaussians where the optimal (likelihood-ratio) test is known."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from dpcore.audit import attacks, roc
from dpcore.exceptions import DPCoreError


# ---------------------------------------------------------------- logit-scaled confidence
def test_logit_confidence_of_true_label_probabilities_is_the_log_odds():
    p = np.array([0.01, 0.3, 0.5, 0.97])
    np.testing.assert_allclose(attacks.logit_confidence(p), np.log(p) - np.log1p(-p), rtol=1e-12)


def test_logit_confidence_of_class_vectors_uses_the_true_label():
    rng = np.random.default_rng(0)
    probs = special.softmax(rng.normal(size=(6, 4)), axis=1)
    labels = np.array([0, 1, 2, 3, 0, 2])
    expected = [np.log(probs[i, y]) - np.log(probs[i].sum() - probs[i, y]) for i, y in enumerate(labels)]
    np.testing.assert_allclose(attacks.logit_confidence(probs, labels), expected, rtol=1e-10)


def test_logit_confidence_agrees_with_logits_and_stays_finite_at_certainty():
    rng = np.random.default_rng(1)
    logits = rng.normal(scale=3.0, size=(3, 5, 4))  # shadows x examples x classes
    labels = np.array([1, 0, 3, 2, 2])
    from_logits = attacks.logit_confidence_from_logits(logits, labels)
    from_probs = attacks.logit_confidence(special.softmax(logits, axis=-1), labels)
    assert from_logits.shape == (3, 5)
    np.testing.assert_allclose(from_probs, from_logits, rtol=1e-9, atol=1e-9)
    # a probability rounded to exactly 1 is clipped, not infinite; logits stay exact
    assert np.isfinite(attacks.logit_confidence([1.0, 0.0])).all()
    assert attacks.logit_confidence([1.0])[0] == pytest.approx(np.log(1 / attacks.PROBABILITY_FLOOR))
    assert attacks.logit_confidence_from_logits([[1000.0, 0.0, 0.0]], [0])[0] == pytest.approx(1000.0 - np.log(2))


def test_logit_confidence_sums_other_classes_instead_of_subtracting_from_one():
    # 1 - (1 - 1e-13) is off by ~1e-3 relative in floating point; the other class's 1e-13 is exact
    phi = attacks.logit_confidence([[1.0 - 1e-13, 1e-13]], [0])
    assert phi[0] == pytest.approx(np.log(1e13), rel=1e-12)
    assert attacks.logit_confidence([1.0 - 1e-13])[0] != pytest.approx(np.log(1e13), rel=1e-6)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: attacks.logit_confidence([1.2]), "probabilities"),
        (lambda: attacks.logit_confidence([[0.5, 0.5]], [2]), "labels"),
        (lambda: attacks.logit_confidence([[0.5, 0.5]], [0.5]), "labels"),
        (lambda: attacks.logit_confidence([[0.5, 0.5]], [0, 1]), "labels"),
        (lambda: attacks.logit_confidence([0.5], floor=0), "floor"),
        (lambda: attacks.logit_confidence_from_logits([1.0, 2.0], [0]), "logits"),
        (lambda: attacks.negative_squared_error([1.0, 2.0], [1.0, 2.0, 3.0]), "predictions"),
    ],
)
def test_bad_inputs_name_the_parameter(call, match):
    with pytest.raises(DPCoreError, match=match):
        call()


def test_loss_and_squared_error_scores_are_negated_losses():
    np.testing.assert_array_equal(attacks.loss_threshold_scores([0.5, 2.0]), [-0.5, -2.0])
    np.testing.assert_array_equal(attacks.negative_squared_error([1.0, 3.0], [2.0, 3.0]), [-1.0, -0.0])


def test_loss_threshold_separates_an_overfit_models_members():
    # members' losses are lower: the loss-threshold attack (Yeom et al. 2018) has AUC > 0.5
    rng = np.random.default_rng(2)
    member_loss, nonmember_loss = rng.exponential(0.2, 500), rng.exponential(1.0, 500)
    auc = roc.roc_auc(attacks.loss_threshold_scores(member_loss), attacks.loss_threshold_scores(nonmember_loss))
    assert auc == pytest.approx(1 / 1.2, abs=0.03)  # P[Exp(5) < Exp(1)] = 5/6


# ------------------------------------------------------------------- LiRA, exact formulas
def _independent_fit(values, mask, fixed):
    """Per-example Gaussian fit with plain loops (np.var with ddof=1, pooled by hand)."""
    n = values.shape[1]
    means = np.array([values[mask[:, j], j].mean() for j in range(n)])
    if fixed:
        ss = sum(np.sum((values[mask[:, j], j] - means[j]) ** 2) for j in range(n))
        dof = sum(mask[:, j].sum() - 1 for j in range(n))
        return means, np.full(n, np.sqrt(ss / dof))
    return means, np.array([np.std(values[mask[:, j], j], ddof=1) for j in range(n)])


def _shadow_world(seed, n_shadows=8, n_examples=30):
    rng = np.random.default_rng(seed)
    member = np.zeros((n_shadows, n_examples), dtype=bool)
    for j in range(n_examples):  # each example IN for exactly half the shadows
        member[rng.permutation(n_shadows)[: n_shadows // 2], j] = True
    conf = rng.normal(size=(n_shadows, n_examples)) + 2.0 * member
    return conf, member, rng.normal(1.0, 1.5, n_examples)


@pytest.mark.parametrize("fixed", [False, True])
def test_online_lira_is_the_gaussian_log_likelihood_ratio(fixed):
    conf, member, target = _shadow_world(3)
    mu_in, s_in = _independent_fit(conf, member, fixed)
    mu_out, s_out = _independent_fit(conf, ~member, fixed)
    expected = stats.norm.logpdf(target, mu_in, s_in) - stats.norm.logpdf(target, mu_out, s_out)
    got = attacks.lira_online_scores(conf, member, target, fixed_variance=fixed)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize("fixed", [False, True])
def test_offline_lira_is_minus_log_of_the_one_sided_out_p_value(fixed):
    conf, member, target = _shadow_world(4)
    mu_out, s_out = _independent_fit(conf, ~member, fixed)
    expected = -np.log(stats.norm.sf((target - mu_out) / s_out))
    got = attacks.lira_offline_scores(conf, member, target, fixed_variance=fixed)
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-12)
    # with no membership given, every shadow counts as OUT
    all_out = attacks.lira_offline_scores(conf, None, target, fixed_variance=fixed)
    mu, s = _independent_fit(conf, np.ones_like(member), fixed)
    np.testing.assert_allclose(all_out, -stats.norm.logsf(target, mu, s), rtol=1e-10)


def test_offline_lira_keeps_ranking_far_in_the_tail():
    # P[Z < phi] rounds to 1 beyond ~8 standard deviations; -log P[Z > phi] still orders them
    conf = np.array([[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]])
    scores = attacks.lira_offline_scores(conf, None, [10.0, 20.0, 30.0])
    assert np.all(np.diff(scores) > 0) and np.all(np.isfinite(scores))


# ------------------------------------------- LiRA on synthetic Gaussians (known optimum)
def _gaussian_population(seed, n_examples=2000, n_shadows=64, gap=1.0, sigma=1.0):
    """phi_j ~ N(mu_j + gap * IN, sigma^2) with example-specific mu_j (some examples are
    hard, some easy), so a global threshold is far from the optimal per-example test."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 2.0, n_examples)
    member = rng.random((n_shadows, n_examples)) < 0.5
    shadows = rng.normal(mu + gap * member, sigma)
    target_in = rng.random(n_examples) < 0.5
    target = rng.normal(mu + gap * target_in, sigma)
    optimal = stats.norm.logpdf(target, mu + gap, sigma) - stats.norm.logpdf(target, mu, sigma)
    return shadows, member, target, target_in, optimal, mu


def _auc(scores, is_member):
    return roc.roc_auc(scores[is_member], scores[~is_member])


def test_online_lira_approaches_the_optimal_likelihood_ratio_test():
    shadows, member, target, target_in, optimal, _ = _gaussian_population(5)
    lira = attacks.lira_online_scores(shadows, member, target, fixed_variance=True)
    assert stats.spearmanr(lira, optimal).statistic > 0.97  # 32 IN and 32 OUT shadows per example
    best = _auc(optimal, target_in)
    assert _auc(lira, target_in) == pytest.approx(best, abs=0.01)
    # a global threshold on phi (the loss attack's analogue) ignores per-example difficulty
    assert _auc(target, target_in) < best - 0.1


def test_per_example_variance_lira_is_close_with_enough_shadows():
    shadows, member, target, target_in, optimal, _ = _gaussian_population(6, n_examples=1000, n_shadows=128)
    lira = attacks.lira_online_scores(shadows, member, target)
    assert _auc(lira, target_in) == pytest.approx(_auc(optimal, target_in), abs=0.02)


def test_offline_lira_ranks_like_the_exact_one_sided_test():
    shadows, member, target, target_in, _, mu = _gaussian_population(7)
    offline = attacks.lira_offline_scores(shadows, member, target, fixed_variance=True)
    exact_z = target - mu  # the exact one-sided statistic with the true OUT mean and variance
    assert stats.spearmanr(offline, exact_z).statistic > 0.97
    assert _auc(offline, target_in) > _auc(target, target_in) + 0.1


def test_equal_variance_lira_is_monotone_in_the_confidence_like_the_optimal_test():
    # with equal IN and OUT variances the log-likelihood ratio of two Gaussians is linear
    # in phi with slope (mu_in - mu_out) / sigma^2: same ranking as phi itself
    conf = np.array([[3.0], [1.0], [0.0], [-2.0]])
    member = np.array([[True], [True], [False], [False]])
    grid = np.linspace(-5, 5, 21)
    scores = np.array([attacks.lira_online_scores(conf, member, [x], fixed_variance=True)[0] for x in grid])
    assert np.all(np.diff(scores) > 0)
    slope = (2.0 - (-1.0)) / 2.0  # means 2 and -1, pooled variance (2 + 2) / 2
    np.testing.assert_allclose(np.diff(scores), slope * np.diff(grid), rtol=1e-10)


def test_lira_errors_name_shadow_membership_and_suggest_the_fix():
    conf = np.zeros((4, 3))
    member = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 0, 0]], dtype=bool)
    with pytest.raises(DPCoreError, match="example 1 no IN shadow"):
        attacks.lira_online_scores(conf, member, np.zeros(3))
    member[0, 1] = True
    with pytest.raises(DPCoreError, match="fixed_variance=True"):
        attacks.lira_online_scores(conf, member, np.zeros(3))
    with pytest.raises(DPCoreError, match="shadow_membership"):
        attacks.lira_online_scores(conf, member[:, :2], np.zeros(3))
    with pytest.raises(DPCoreError, match="target_confidences"):
        attacks.lira_online_scores(conf, member, np.zeros(2))
    with pytest.raises(DPCoreError, match="shadow_membership"):
        attacks.lira_online_scores(conf, None, np.zeros(3))
    with pytest.raises(TypeError, match="shadow_membership"):
        attacks.lira_online_scores(conf, np.full((4, 3), 2), np.zeros(3))


def test_pool_capacity_is_the_pool_an_oversized_request_gets():
    from dpcore.audit import membership_audit, pool_capacity

    capacity = pool_capacity("iris")
    assert capacity == 114  # iris: 150 rows less the 36 held out for testing
    for seed in (0, 3):  # the split's sizes, and so the cap, do not depend on the seed
        a = membership_audit("non-private", "iris", epsilon=1.0, pool_size=10_000, attack="loss", seed=seed)
        assert a.result.n_members + a.result.n_nonmembers == capacity
