"""DP-FedAvg's Gaussian is calibrated to a sum that one client moves by at most S (McMahan et al. 2018, Algorithm 1:
each update clipped to L2 norm S), and local DP's to reports at most 2S apart: every clipped update must have an
exact norm of at most S. The updates are float32; the norm of each row is taken here exactly, with rationals."""
from __future__ import annotations

from fractions import Fraction

import pytest
import torch

from dpcore.federated.fedavg import clip_updates


def exact_square_norms(rows: torch.Tensor) -> list[Fraction]:
    return [sum(Fraction(float(v)) ** 2 for v in row) for row in rows.tolist()]


@pytest.mark.parametrize("clip_norm", [1.0, 0.05, 3.0])
def test_every_clipped_update_has_an_exact_norm_of_at_most_the_clip_norm(clip_norm):
    gen = torch.Generator().manual_seed(0)
    # rows well above the bound (clipped), near it and below it, at the scales local SGD gives
    scales = torch.logspace(-2, 4, 240)[:, None] * clip_norm
    updates = torch.randn(240, 60, generator=gen) * scales / 60 ** 0.5
    clipped, norms = clip_updates(updates, clip_norm=clip_norm)
    bound = Fraction(clip_norm) ** 2
    squares = exact_square_norms(clipped)
    above = [float(s / bound) - 1 for s in squares if s > bound]
    assert not above, f"{len(above)} clipped rows above S (by up to {max(above):.2g} relative)"
    # a clipped row still lands on the sphere (within Opacus's 1e-6 in S / (norm + 1e-6) and the margin of 2**-20),
    # and a row below it is sent as it is
    was_over = norms > clip_norm
    assert was_over.sum() > 100 and (~was_over).sum() > 20
    ratio = torch.tensor([float(s / bound) ** 0.5 for s in squares], dtype=torch.float64)[was_over]
    assert torch.all(ratio > 1 - 1e-6 / clip_norm - 2e-6)
    assert torch.equal(clipped[~was_over], updates[~was_over])
