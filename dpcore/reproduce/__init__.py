"""Published results reproduced live: the paper's numbers beside ours, with the setup's differences.

>>> from dpcore.reproduce import reproduction_names
>>> "abadi2016-accountant" in reproduction_names()
True

``python -m dpcore reproduce --list`` lists them; ``python -m dpcore reproduce NAME`` runs one.
"""
from ..serving import source_digest
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

#: Results a server keeps (in memory and on disk) under another tag were computed by other code: never shown.
CODE_TAG = source_digest()

__all__ = ["CODE_TAG", "REPRODUCTIONS", "Check", "Outcome", "Reproduction", "ReproductionResult", "get_reproduction",
           "reproduction_names", "run_reproduction"]
