"""Every ε shown as spent or guaranteed rounds UP at its shown precision, never to nearest (a privacy number fails
closed); an audit's proven lower bound rounds DOWN (rounding it up would overstate what the attack proved).

The reference is exact decimal arithmetic on the float's own value (``decimal.Decimal(x)`` holds a float exactly),
independent of :func:`~dpcore.teaching.verdict.round_epsilon`'s quantize: the shown figure, read back as a decimal,
is compared with the computed ε digit for digit.
"""
from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from dpcore.teaching.verdict import EPSILON_TOLERANCE, epsilon_text, round_epsilon
from dpcore.ui.common import format_epsilon, readable_table


def _shown(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def _last_digit(x: float, digits: int) -> Decimal:
    """One unit in the ``digits``-th significant figure of ``x``."""
    return Decimal(1).scaleb(Decimal(x).adjusted() - digits + 1)


def _random_epsilons(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 10.0 ** rng.uniform(-4, 7, size=n)  # from 0.0001 to ten million, every decade alike


@pytest.mark.parametrize("digits", [3, 4])
def test_a_shown_spent_epsilon_is_never_below_the_computed_one_and_within_one_last_digit(digits):
    for x in _random_epsilons(5000, seed=digits):
        x = float(x)
        shown = _shown(epsilon_text(x, digits=digits))
        assert shown >= Decimal(x) * (1 - Decimal(EPSILON_TOLERANCE)), (x, shown)
        assert shown - Decimal(x) < _last_digit(x, digits), (x, shown)
        assert len(shown.normalize().as_tuple().digits) <= digits, (x, shown)


def test_a_shown_proven_lower_bound_is_never_above_the_computed_one_and_within_one_last_digit():
    for x in _random_epsilons(5000, seed=7):
        x = float(x)
        for shown in (_shown(epsilon_text(x, lower_bound=True)), _shown(format_epsilon(x, lower_bound=True)),
                      Decimal(round_epsilon(x, lower_bound=True))):
            assert shown <= Decimal(x), (x, shown)
            assert Decimal(x) - shown < _last_digit(x, 3), (x, shown)


@pytest.mark.parametrize("computed,shown", [(1.2341, "1.24"), (1.2349, "1.24"), (0.31601, "0.317"),
                                            (2390.4, "2,400"), (999.6, "1,000"), (9834.2, "9,840"),
                                            (1234567.0, "1,240,000"), (0.000123401, "0.000124")])
def test_rounding_up_at_three_significant_figures(computed, shown):
    assert epsilon_text(computed) == shown
    assert format_epsilon(computed) == shown


@pytest.mark.parametrize("computed,shown", [(0.9999995, "1"), (2.0000000000004, "2"), (1.9999999999996, "2"),
                                            (8.0, "8"), (0.5, "0.5"), (3000.0000000001, "3,000")])
def test_floating_noise_does_not_turn_an_exact_epsilon_up(computed, shown):
    assert epsilon_text(computed) == shown


def test_an_epsilon_just_past_the_tolerance_rounds_up():
    assert epsilon_text(2.0 * (1 + 1e-7)) == "2.01"


def test_infinity_and_zero_are_shown_as_they_are():
    assert epsilon_text(math.inf) == "∞"
    assert format_epsilon(math.inf) == "∞ (not private)"
    assert round_epsilon(math.inf) == math.inf
    assert epsilon_text(0.0) == "0"
    assert epsilon_text(0.0, lower_bound=True) == "0"


def test_a_lower_bound_and_its_claim_are_never_shown_crossed():
    """A proven ε just under its claim must not read above it: the bound rounds down, the claim up."""
    for claim in _random_epsilons(2000, seed=11):
        bound = float(claim) * (1 - 1e-6)
        assert _shown(format_epsilon(bound, lower_bound=True)) <= _shown(format_epsilon(float(claim)))


def test_a_table_rounds_its_spent_epsilon_up_and_its_proven_epsilon_down():
    df = pd.DataFrame({"epsilon": [1.23441, 0.316011], "ε proven (95%)": [1.23449, 0.316999],
                       "accuracy": [0.123449, 0.5]})
    out = readable_table(df, digits=3)
    assert out["ε"].tolist() == [1.24, 0.317]
    assert out["ε proven (95%)"].tolist() == [1.23, 0.316]
    assert out["Test accuracy"].tolist() == [0.123, 0.5]  # not an ε: to nearest, as before


def test_a_table_with_an_infinite_epsilon_writes_the_finite_ones_rounded_up():
    out = readable_table(pd.DataFrame({"epsilon_spent": [1.23441, math.inf]}), digits=3)
    assert out.iloc[:, 0].tolist() == ["1.24", "∞ (not private)"]
