"""Published results reproduced live: the paper's numbers beside ours, with the setup's differences.

>>> from dpcore.reproduce import reproduction_names
>>> "abadi2016-accountant" in reproduction_names()
True

``python -m dpcore reproduce --list`` lists them; ``python -m dpcore reproduce NAME`` runs one.
"""
from . import entries  # noqa: F401  (registers the entries)
from .registry import (
    REPRODUCTIONS,
    Check,
    Outcome,
    Reproduction,
    ReproductionResult,
    get_reproduction,
    reproduction_names,
    run_reproduction,
)

__all__ = ["REPRODUCTIONS", "Check", "Outcome", "Reproduction", "ReproductionResult", "get_reproduction",
           "reproduction_names", "run_reproduction"]
