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

Audits of the library's own learners, trained for real:

- :mod:`~dpcore.audit.membership`: loss-threshold and LiRA attacks on any registered
  learner, shadow models included, bounded by the one-run theorem.
- :mod:`~dpcore.audit.canaries`: one-run audits with white-box gradient canaries (DP-SGD)
  and black-box mislabelled input canaries (any learner).
- :mod:`~dpcore.audit.release`: output perturbation's release step against its worst-case
  pair of answers.
"""
from __future__ import annotations

from .attacks import (
    lira_offline_scores,
    lira_online_scores,
    logit_confidence,
    logit_confidence_from_logits,
    loss_threshold_scores,
    negative_squared_error,
)
from .bounds import (
    EpsilonBound,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    epsilon_lower_bound_from_scores,
)
from .canaries import CANARY_KINDS, CanaryAudit, gradient_canary_audit, input_canary_audit
from .membership import ATTACKS, MembershipAudit, example_statistic, membership_audit, pool_capacity
from .one_run import (
    OneRunAudit,
    default_guess_counts,
    one_run_audit,
    one_run_epsilon_lower_bound,
    one_run_guesses,
    one_run_p_value,
)
from .release import output_perturbation_release_audit
from .result import AuditResult, audit_from_scores
from .roc import DEFAULT_FPRS, RocCurve, fpr_key, membership_advantage, roc_auc, roc_curve, tpr_at_fpr
from .run import AUDIT_KINDS, run_audit
from .theory import gaussian_tradeoff_tpr, max_advantage, max_tpr_at_fpr, pld_max_tpr_at_fpr

__all__ = [
    "ATTACKS",
    "AUDIT_KINDS",
    "run_audit",
    "CANARY_KINDS",
    "CanaryAudit",
    "MembershipAudit",
    "example_statistic",
    "gradient_canary_audit",
    "input_canary_audit",
    "membership_audit",
    "pool_capacity",
    "output_perturbation_release_audit",
    "DEFAULT_FPRS",
    "AuditResult",
    "EpsilonBound",
    "OneRunAudit",
    "RocCurve",
    "audit_from_scores",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "default_guess_counts",
    "epsilon_lower_bound",
    "epsilon_lower_bound_from_scores",
    "fpr_key",
    "gaussian_tradeoff_tpr",
    "lira_offline_scores",
    "lira_online_scores",
    "logit_confidence",
    "logit_confidence_from_logits",
    "loss_threshold_scores",
    "max_advantage",
    "max_tpr_at_fpr",
    "membership_advantage",
    "negative_squared_error",
    "one_run_audit",
    "one_run_epsilon_lower_bound",
    "one_run_guesses",
    "one_run_p_value",
    "pld_max_tpr_at_fpr",
    "roc_auc",
    "roc_curve",
    "tpr_at_fpr",
]
