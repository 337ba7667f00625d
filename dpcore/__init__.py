"""dpcore: differential privacy on real machine learning, with no Streamlit inside.

Sub-packages: ``mechanisms`` (Laplace, Gaussian, randomized response,
exponential), ``accounting`` (over Google's dp_accounting), ``datasets``
(offline registry and CSV upload), and one package per private learner.
``dpcore.ui`` is the only place that imports Streamlit.
"""
from .exceptions import BudgetExceededError, DPCoreError, DPCoreWarning, PrivacyLeakWarning

__version__ = "0.1.0"

__all__ = ["BudgetExceededError", "DPCoreError", "DPCoreWarning", "PrivacyLeakWarning", "__version__"]
