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
"""
from __future__ import annotations
