"""The privacy budget (and the learner) a run starts from, everywhere: every page's ε and δ boxes, every command's
``--epsilon`` and ``--delta``, and the library's functions when they are not given one.

ε = 1 is the top of the verdict's "strong" band (ε ≤ 1), below the budgets deployments have published (Apple's
emoji statistics, ε 4 per day; the US Census 2020 housing-unit data, ε 2.47), as the app's verdict lines compare.
δ = 1e-5 is below one over the number of rows of every registry dataset (the largest, Adult, has 30,162), the usual
rule for δ (Dwork & Roth 2014, Section 2.3: δ much smaller than 1/n).
"""
from __future__ import annotations

#: ε of a run unless told otherwise (a learner may declare its own, ``LearnerSpec.default_epsilon``).
EPSILON = 1.0
#: δ of (ε, δ)-DP runs unless told otherwise.
DELTA = 1e-5
#: The learner a run trains unless told otherwise: the first choice of the Train and Attack pages, and the
#: ``--algorithm`` of ``train`` and ``audit``.
LEARNER = "dpsgd"



class _DefaultSeed(int):
    """The seed a function uses when none is given: 0, and told apart from a 0 the caller passed (``is``), so
    ``secure=True`` alone is not refused as a seeded request."""

    def __repr__(self) -> str:
        return "0"


#: The seed of a run unless told otherwise (``SEED is seed`` says that none was given).
SEED = _DefaultSeed(0)

__all__ = ["DELTA", "EPSILON", "LEARNER", "SEED"]
