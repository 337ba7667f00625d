"""The audits have power: they pass the library's mechanisms and catch deliberately broken ones.

A broken variant is built here, in the test, by patching one line of the real code path
(the noise of a DP-SGD step, its clipping, the scale of output perturbation's Laplace
noise) while the learner keeps reporting the epsilon it was asked for. An audit that
cannot tell the broken run from the real one would be worthless.
"""
from __future__ import annotations

import warnings

import pytest
import torch

import dpcore.training.learners as network_learners
import dpcore.training.step as dp_step
from dpcore.audit import gradient_canary_audit, input_canary_audit, output_perturbation_release_audit


@pytest.fixture
def noiseless_dpsgd(monkeypatch):
    """DP-SGD whose steps add no noise (while epsilon is still calibrated and reported as if they did)."""
    init = dp_step.PrivateGradient.__init__

    def without_noise(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.noise.std = 0.0  # the step's Gaussian draws nothing

    monkeypatch.setattr(dp_step.PrivateGradient, "__init__", without_noise)


@pytest.fixture
def unclipped_dpsgd(monkeypatch):
    """DP-SGD that never clips: every per-example gradient enters the sum at full size."""
    monkeypatch.setattr(dp_step, "clip_factors", lambda norms, clip_norm, scale=1.0: torch.full_like(norms, scale))


def test_gradient_canary_audit_passes_real_dpsgd():
    audit = gradient_canary_audit("digits", epsilon=2.0, canaries=500, seed=0)
    assert audit.result.epsilon == pytest.approx(2.0, abs=1e-3)
    assert 0.0 <= audit.result.epsilon_lower_bound <= 2.0


def test_gradient_canary_audit_catches_dpsgd_without_noise(noiseless_dpsgd):
    audit = gradient_canary_audit("digits", epsilon=2.0, canaries=500, seed=0)
    assert audit.result.epsilon == pytest.approx(2.0, abs=1e-3)  # the broken run still claims epsilon = 2
    assert audit.result.epsilon_lower_bound > 2.0
    assert audit.result.auc == pytest.approx(1.0)


#: A tiny C and small batches on raw pixels: clipping is then all that keeps a canary's large gradient
#: (uniform noise images, norm ~ 8 against C = 0.01) from dominating the steps it is sampled in.
CLIP_PARAMS = {"clip_norm": 0.01, "features": "pixels", "learning_rate": 1.0, "ema": 0.0, "batch_size": 32,
               "epochs": 40, "accountant": "rdp"}


def test_input_canary_audit_passes_real_dpsgd_with_a_tiny_clip_norm():
    audit = input_canary_audit("dpsgd", "digits", epsilon=1.0, canaries=200, canary_style="random",
                               params=CLIP_PARAMS, seed=0)
    assert audit.result.epsilon_lower_bound <= 1.0


def test_input_canary_audit_catches_dpsgd_without_clipping(unclipped_dpsgd):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit = input_canary_audit("dpsgd", "digits", epsilon=1.0, canaries=200, canary_style="random",
                                   params=CLIP_PARAMS, seed=0)
    assert audit.result.epsilon == pytest.approx(1.0, abs=1e-3)
    assert audit.result.epsilon_lower_bound > 1.0


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_release_audit_passes_output_perturbation_and_is_nearly_tight(epsilon):
    result = output_perturbation_release_audit(epsilon=epsilon, trials=20000, seed=1)
    assert 0.6 * epsilon < result.epsilon_lower_bound <= epsilon


def test_release_audit_catches_output_perturbation_with_a_tenth_of_the_noise(monkeypatch):
    real = network_learners.softmax_output_perturbation

    def tenth_of_the_noise(proba, *, epsilon, rng):
        return real(proba, epsilon=10 * epsilon, rng=rng)  # Laplace scale 2 / (10 eps): a tenth

    monkeypatch.setattr(network_learners, "softmax_output_perturbation", tenth_of_the_noise)
    result = output_perturbation_release_audit(epsilon=1.0, trials=20000, seed=1)
    assert result.epsilon_lower_bound > 1.0
