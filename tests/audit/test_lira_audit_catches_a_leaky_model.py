"""The likelihood-ratio attack, run end to end (shadow models, their halves, the target's statistic), finds the
members of a model trained without privacy: an audit that could not would pass any mechanism, however broken.

LiRA's score functions are checked against the optimal test elsewhere (tests/audit/test_attacks.py); this checks the
pipeline around them: which shadows saw which record, and the target scored against them (Carlini et al. 2022,
Algorithm 1, online and offline). A network trained without noise for 20 epochs on 100 pool records of digits is
leaky (its members' confidence stands out); the audit must certify a positive epsilon with 95% confidence, and its
AUC must be well above one half. The run is seeded, so the test is deterministic; at seeds 0-2 the certified
epsilon was 0.49-0.69 online and 0.45-0.91 offline, AUC 0.71-0.80 (the bounds asserted leave room below those).
"""
from __future__ import annotations

import warnings

import pytest

from dpcore.audit import membership_audit


@pytest.mark.parametrize("attack", ["lira-online", "lira-offline"])
def test_lira_certifies_leakage_from_a_model_trained_without_privacy(attack):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a non-private target is warned about where it is run
        audit = membership_audit("non-private", "digits", epsilon=1.0, attack=attack, pool_size=100, shadows=4,
                                 params={"epochs": 20}, seed=0)
    assert audit.shadows == 4 and audit.result.epsilon == float("inf")  # no claim: nothing it must stay under
    assert audit.result.auc > 0.65
    assert audit.result.epsilon_lower_bound > 0.3


@pytest.mark.parametrize(("shadows", "pooled"), [(16, True), (62, True), (64, False)])
def test_lira_pools_the_variance_over_the_records_only_when_the_shadow_models_are_few(monkeypatch, shadows, pooled):
    # Carlini et al. 2022: one variance for all examples with few shadow models, each example's own with many (64
    # shadows: every record IN for 32 and OUT for 32); the old code pooled it whatever the number
    import dpcore.audit.membership as membership

    asked = []
    real = membership.lira_online_scores

    def spy(*args, **kwargs):
        asked.append(kwargs["fixed_variance"])
        return real(*args, **kwargs)

    monkeypatch.setattr(membership, "lira_online_scores", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit = membership_audit("non-private", "iris", epsilon=1.0, attack="lira-online", shadows=shadows,
                                 params={"epochs": 1}, seed=0)
    assert asked == [pooled] and audit.shadows == shadows
