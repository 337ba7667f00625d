"""Audit a release step with the worst-case pair of inputs its privacy proof allows.

Softmax output perturbation (the Train page's "output perturbation") releases a trained
network's softmax vector plus Laplace noise of scale 2/epsilon on every coordinate; its
proof says any two softmax vectors are at most 2 apart in L1 norm, so each released
vector is epsilon-DP whatever the training data. The strongest adversary therefore makes
the two neighbouring trainings produce the two vectors furthest apart, one-hot on
different classes (Nasr et al. 2021: an adversary who controls what the model outputs).
This audit releases both vectors many times through the library's own release function,
scores every release by the likelihood ratio of the two noise distributions, and turns
the counts into a Clopper-Pearson epsilon lower bound (every trial is independent, so the
counts are binomial; the threshold is Bonferroni-corrected).

References
----------
Nasr, Song, Thakurta, Papernot, Carlini. Adversary instantiation: lower bounds for
differentially private machine learning. IEEE S&P 2021.
Jagielski, Ullman, Oprea. Auditing differentially private machine learning. NeurIPS 2020.
Dwork, McSherry, Nissim, Smith. Calibrating noise to sensitivity. TCC 2006 (Laplace).
"""
from __future__ import annotations

import time

import numpy as np

from ..rng import as_generator, child_seed
from ..validation import check_epsilon, check_int
from .bounds import check_confidence
from .result import AuditResult, audit_from_scores

__all__ = ["output_perturbation_release_audit"]


def output_perturbation_release_audit(
    *,
    epsilon: float,
    trials: int = 20000,
    n_classes: int = 2,
    confidence: float = 0.95,
    seed: int = 0,
) -> AuditResult:
    """Release two one-hot softmax vectors ``trials`` times each through output perturbation; bound epsilon.

    The release function is :func:`dpcore.training.learners.softmax_output_perturbation`,
    looked up when the audit runs, so the audit tests exactly what the learner releases.

    Examples
    --------
    >>> r = output_perturbation_release_audit(epsilon=1.0, trials=5000)
    >>> 0.0 < r.epsilon_lower_bound <= 1.0
    True
    """
    from ..training import learners as network_learners

    epsilon = check_epsilon(epsilon)
    trials = check_int(trials, "trials", minimum=100, maximum=10_000_000)
    k = check_int(n_classes, "n_classes", minimum=2, maximum=1000)
    confidence = check_confidence(confidence)
    start = time.perf_counter()
    rng = as_generator(seed)
    onehot = np.eye(k)
    release = network_learners.softmax_output_perturbation
    world_d = release(np.repeat(onehot[:1], trials, axis=0), epsilon=epsilon, rng=child_seed(rng))
    world_d2 = release(np.repeat(onehot[1:2], trials, axis=0), epsilon=epsilon, rng=child_seed(rng))

    def log_ratio(z: np.ndarray) -> np.ndarray:
        # log p_D(z) - log p_D'(z) for Lap(2/eps) noise around e_0 and e_1 (only two coordinates differ)
        return (epsilon / 2) * (np.abs(z[:, 0]) + np.abs(z[:, 1] - 1) - np.abs(z[:, 0] - 1) - np.abs(z[:, 1]))

    return audit_from_scores(log_ratio(world_d), log_ratio(world_d2), attack="release: output perturbation",
                             epsilon=epsilon, delta=0.0, confidence=confidence, method="bonferroni",
                             seconds=time.perf_counter() - start)
