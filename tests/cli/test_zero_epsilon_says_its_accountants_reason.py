"""An ε of exactly 0 for finite noise is a (0, δ) guarantee; the command line says why in the terms of the accountant
that computed it: the Rényi conversion's, or the privacy loss distribution's (its δ at ε = 0 is the total variation
distance between the outputs)."""
from __future__ import annotations

import pytest

from dpcore.teaching.verdict import ZERO_EPSILON


@pytest.mark.parametrize("accountant, says, not_said", [("pld", "total variation distance", "Rényi"),
                                                        ("rdp", "Rényi divergence falls below δ²", "total variation")])
def test_a_zero_epsilon_is_explained_by_the_accountant_that_computed_it(cli, accountant, says, not_said):
    # with --accountant pld the note said 'the Rényi conversion gives exactly 0 once the Rényi divergence falls below
    # δ²', a reason of the accountant not used
    out = cli("epsilon", "--noise-multiplier", "1e9", "--sample-rate", "0.01", "--steps", "100", "--accountant",
              accountant)
    assert out.returncode == 0 and out.stdout.strip().splitlines()[-1] == "0"
    note = next(line for line in out.stderr.splitlines() if line.startswith("note: ε = 0 here is a (0, δ) guarantee"))
    assert says in note and not_said not in note


def test_where_the_accountant_is_not_known_both_reasons_are_given():
    assert "Rényi divergence falls below δ²" in ZERO_EPSILON and "total variation distance" in ZERO_EPSILON
