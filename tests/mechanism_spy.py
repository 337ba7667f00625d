"""The budgets and sensitivities a learner calibrates its noise to, read where it builds its mechanism: a spy
subclass put in place of the mechanism class in the learner's module records what it is made with."""
from __future__ import annotations


def _spy(monkeypatch, module, name: str, record) -> list:
    """Replace ``module.<name>`` (a mechanism class taking ``epsilon`` and ``sensitivity``) with a subclass that
    appends ``record(epsilon, sensitivity)`` to the list returned each time it is made (filled as the learner runs)."""
    made: list = []
    base = getattr(module, name)

    class Spy(base):
        def __init__(self, *, epsilon, sensitivity):
            made.append(record(epsilon, sensitivity))
            super().__init__(epsilon=epsilon, sensitivity=sensitivity)

    monkeypatch.setattr(module, name, Spy)
    return made


def sensitivities_made(monkeypatch, module, name: str) -> list:
    """Every ``sensitivity`` ``module.<name>`` is made with while the learner runs."""
    return _spy(monkeypatch, module, name, lambda epsilon, sensitivity: sensitivity)


def mechanisms_made(monkeypatch, module, name: str) -> list:
    """Every ``(epsilon, sensitivity)`` ``module.<name>`` is made with while the learner runs."""
    return _spy(monkeypatch, module, name, lambda epsilon, sensitivity: (epsilon, sensitivity))
