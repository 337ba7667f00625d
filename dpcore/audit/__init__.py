"""Privacy attacks and audits: how much does a trained model leak, and what epsilon does that prove?

Streamlit-free mathematics, each module with its paper:

- :mod:`~dpcore.audit.roc`: ROC curve, AUC, TPR at low FPR (Carlini et al. 2022),
  membership advantage (Yeom et al. 2018).
- :mod:`~dpcore.audit.attacks`: score functions: loss threshold (Yeom et al. 2018),
  logit-scaled confidence and LiRA online/offline (Carlini et al. 2022).
- :mod:`~dpcore.audit.bounds`: an epsilon lower bound from attack counts with
  Clopper-Pearson confidence (Jagielski et al. 2020; Nasr et al. 2021), with an honest
  threshold choice (split or Bonferroni).
- :mod:`~dpcore.audit.one_run`: auditing with one training run (Steinke, Nasr &
  Jagielski 2023).
- :mod:`~dpcore.audit.theory`: the best test possible against an (eps, delta) claim
  (Kairouz et al. 2015) or against the composed mechanism itself, from dp_accounting's
  privacy loss distribution (Dong, Roth & Su 2019).
- :mod:`~dpcore.audit.result`: :class:`AuditResult`, what a page or the CLI shows.

Your own model: :func:`~dpcore.audit.own.audit` (``audit(model_or_scores, members, non_members, epsilon=...)``)
runs a loss-threshold attack on any fitted model (torch module, scikit-learn estimator, a run's ``model``) or on
scores you computed, and returns an :class:`AuditResult`.

Audits of the library's own learners, trained for real:

- :mod:`~dpcore.audit.membership`: loss-threshold and LiRA attacks on any registered
  learner, shadow models included, bounded by the one-run theorem.
- :mod:`~dpcore.audit.canaries`: one-run audits with white-box gradient canaries (DP-SGD)
  and black-box mislabelled input canaries (any learner).
- :mod:`~dpcore.audit.release`: output perturbation's release step against its worst-case
  pair of answers.
- :mod:`~dpcore.audit.run`: one entry point; the default audit puts mislabelled canaries into the
  full training set and attacks a private learner beside its non-private twin; the ε ladder.
"""
from __future__ import annotations

import importlib

#: Where each public name lives. Imported on first use (PEP 562), so that a page needing one light module
#: (the home page's floating-point attack) does not import torch with the audits that train models.
_WHERE = {
    "lira_offline_scores": "attacks",
    "lira_online_scores": "attacks",
    "logit_confidence": "attacks",
    "logit_confidence_from_logits": "attacks",
    "loss_threshold_scores": "attacks",
    "negative_squared_error": "attacks",
    "EpsilonBound": "bounds",
    "clopper_pearson_lower": "bounds",
    "clopper_pearson_upper": "bounds",
    "epsilon_lower_bound": "bounds",
    "epsilon_lower_bound_from_scores": "bounds",
    "CANARY_KINDS": "canaries",
    "CanaryAudit": "canaries",
    "gradient_canary_audit": "canaries",
    "input_canary_audit": "canaries",
    "ATTACKS": "membership",
    "MembershipAudit": "membership",
    "example_statistic": "membership",
    "membership_audit": "membership",
    "pool_capacity": "membership",
    "DEFAULT_POOL_SIZE": "membership",
    "DEFAULT_SHADOWS": "membership",
    "MIN_POOL_SIZE": "membership",
    "POOL_SIZES": "membership",
    "membership_claim": "membership",
    "OneRunAudit": "one_run",
    "default_guess_counts": "one_run",
    "one_run_audit": "one_run",
    "one_run_epsilon_lower_bound": "one_run",
    "one_run_guesses": "one_run",
    "one_run_p_value": "one_run",
    "output_perturbation_release_audit": "release",
    "audit": "own",
    "per_example_losses": "own",
    "AuditResult": "result",
    "audit_from_scores": "result",
    "DEFAULT_FPRS": "roc",
    "RocCurve": "roc",
    "fpr_key": "roc",
    "membership_advantage": "roc",
    "roc_auc": "roc",
    "roc_curve": "roc",
    "tpr_at_fpr": "roc",
    "AUDIT_KINDS": "run",
    "DEFAULT_ATTACK": "run",
    "DEFAULT_CONFIDENCE": "run",
    "LADDER_EPSILONS": "run",
    "contrast_learner": "run",
    "epsilon_ladder": "run",
    "leaky_network_params": "run",
    "run_audit": "run",
    "story_canaries": "run",
    "gaussian_tradeoff_tpr": "theory",
    "max_advantage": "theory",
    "max_tpr_at_fpr": "theory",
    "pld_max_tpr_at_fpr": "theory",
}


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))

__all__ = list(_WHERE)
