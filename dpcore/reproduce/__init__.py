"""Published results reproduced live: the paper's numbers beside ours, with the setup's differences.

>>> from dpcore.reproduce import reproduction_names
>>> "abadi2016-accountant" in reproduction_names()
True

``python -m dpcore reproduce --list`` lists them; ``python -m dpcore reproduce NAME`` runs one.
"""
import hashlib
import pathlib

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


def _code_tag() -> str:
    """A digest of dpcore's source: it changes with any change to an entry or to a learner it runs."""
    h = hashlib.sha256()
    root = pathlib.Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


#: Results a server keeps (in memory and on disk) under another tag were computed by other code: never shown.
CODE_TAG = _code_tag()

__all__ = ["CODE_TAG", "REPRODUCTIONS", "Check", "Outcome", "Reproduction", "ReproductionResult", "get_reproduction",
           "reproduction_names", "run_reproduction"]
