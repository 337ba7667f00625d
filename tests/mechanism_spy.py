"""The sensitivities a learner calibrates its noise to, read where it builds its mechanism: a spy subclass put in
place of the mechanism class in the learner's module records each ``sensitivity`` it is made with."""
from __future__ import annotations


def sensitivities_made(monkeypatch, module, name: str) -> list:
    """Replace ``module.<name>`` (a mechanism class taking ``epsilon`` and ``sensitivity``) with a subclass that
    records every sensitivity it is made with, in the list returned (filled as the learner runs)."""
    made: list = []
    base = getattr(module, name)

    class Spy(base):
        def __init__(self, *, epsilon, sensitivity):
            made.append(sensitivity)
            super().__init__(epsilon=epsilon, sensitivity=sensitivity)

    monkeypatch.setattr(module, name, Spy)
    return made
