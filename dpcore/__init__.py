"""dpcore: differential privacy on real machine learning, with no Streamlit inside.

Sub-packages: ``mechanisms`` (Laplace, Gaussian, randomized response,
exponential, and their secure versions), ``accounting`` (over Google's
dp_accounting), ``datasets`` (offline registry, CSV upload, your own DataFrame or
arrays), ``learners`` (one interface to every learner), ``training`` (DP-SGD on
the built-in networks or your own ``nn.Module``), ``models`` (scikit-learn style
private estimators), ``audit`` (membership attacks and epsilon lower bounds) and
one package per other private learner. ``dpcore.ui`` is the only place that
imports Streamlit.

The names below are importable from ``dpcore`` itself; each is loaded on first
use (PEP 562), so ``import dpcore`` imports neither torch nor pandas.

>>> import dpcore
>>> dpcore.dpsgd_epsilon(noise_multiplier=1.5, sample_rate=0.04, steps=2250, delta=1e-5) > 7
True
"""
from __future__ import annotations

import importlib

from .exceptions import BudgetExceededError, DPCoreError, DPCoreWarning, PrivacyLeakWarning

__version__ = "0.1.0"

#: Every name of the top-level API and the sub-package that defines it (loaded on first use).
_WHERE = {
    # learners: any registered learner on a registry name, a Dataset, a DataFrame or arrays
    "run_learner": "learners",
    "learner_names": "learners",
    "RunResult": "learners",
    # your own data
    "as_dataset": "datasets",
    "load_csv": "datasets",
    "load_dataset": "datasets",
    "Dataset": "datasets",
    "BoundedScaler": "datasets",
    # DP-SGD, on the built-in networks or your own module
    "train": "training",
    "TrainConfig": "training",
    "TrainResult": "training",
    "SUPPORTED_LAYERS": "training",
    # accounting
    "PrivacyLedger": "accounting",
    "Neighbouring": "accounting",
    "calibrate": "accounting",
    "calibrate_noise_multiplier": "accounting",  # DP-SGD's noise for a target epsilon
    "dpsgd_epsilon": "accounting",
    "dpsgd_event": "accounting",
    "epsilon_of_event": "accounting",
    # mechanisms
    "Laplace": "mechanisms",
    "Gaussian": "mechanisms",
    "RandomizedResponse": "mechanisms",
    "SecureLaplace": "mechanisms",
    "SecureGaussian": "mechanisms",
    # scikit-learn estimators
    "PrivateERMClassifier": "models",
    # auditing your own model: dpcore.audit.audit(model_or_scores, members, non_members) (the name ``audit`` at the
    # top level is the sub-package)
    "AuditResult": "audit",
}
_SUBPACKAGES = ("accounting", "audit", "datasets", "federated", "images", "learners", "mechanisms", "models", "pate",
                "reproduce", "sweep", "training", "validation", "rng", "defaults")


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # the public names and the sub-packages, as a tab completion offers them (not this module's own imports)
    return sorted({*__all__, *_SUBPACKAGES, "exceptions"})


__all__ = ["BudgetExceededError", "DPCoreError", "DPCoreWarning", "PrivacyLeakWarning", "__version__", *_WHERE]
