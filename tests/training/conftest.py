"""Fixtures shared by the training tests."""
from __future__ import annotations

import pytest

from dpcore.training.sampling import PoissonSampler


@pytest.fixture
def poisson_draws(monkeypatch):
    """Every Poisson batch drawn while the test runs, in order: (records in the population, records in the batch)."""
    seen: list[tuple[int, int]] = []
    draw = PoissonSampler.draw

    def counted(self):
        out = draw(self)
        seen.append((self.n, out.size))
        return out

    monkeypatch.setattr(PoissonSampler, "draw", counted)
    return seen
