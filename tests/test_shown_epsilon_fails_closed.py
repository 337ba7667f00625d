"""Every ε shown as spent or guaranteed rounds UP at its shown precision, never to nearest (a privacy number fails
closed); an audit's proven lower bound rounds DOWN (rounding it up would overstate what the attack proved).

The reference is independent of :func:`~dpcore.teaching.verdict.round_epsilon`'s quantize: the shown figure, read
back as a float, is compared with the computed float, and its distance from it with one unit in its last figure in
exact decimals (``decimal.Decimal(x)`` holds a float exactly).
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


def _read(text: str) -> float:
    """The shown figure read back as a float: the value a reader (or a parser) takes from it."""
    return float(text.replace(",", ""))


def _last_digit(x: float, digits: int) -> Decimal:
    """One unit in the ``digits``-th significant figure of ``x``."""
    return Decimal(1).scaleb(Decimal(x).adjusted() - digits + 1)


def _random_epsilons(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 10.0 ** rng.uniform(-4, 7, size=n)  # from 0.0001 to ten million, every decade alike


@pytest.mark.parametrize("digits", [3, 4, 5, 6])  # 6: a noisy image's label epsilon (1713.1222 read '1,713')
def test_a_shown_spent_epsilon_is_never_below_the_computed_one_and_within_one_last_digit(digits):
    for x in _random_epsilons(5000, seed=digits):
        x = float(x)
        text = epsilon_text(x, digits=digits)
        shown = _shown(text)
        assert _read(text) >= x * (1 - EPSILON_TOLERANCE), (x, text)
        assert abs(shown - Decimal(x)) < _last_digit(x, digits), (x, text)
        assert len(shown.normalize().as_tuple().digits) <= digits, (x, shown)


def test_a_shown_proven_lower_bound_is_never_above_the_computed_one_and_within_one_last_digit():
    for x in _random_epsilons(5000, seed=7):
        x = float(x)
        for text in (epsilon_text(x, lower_bound=True), format_epsilon(x, lower_bound=True),
                     repr(round_epsilon(x, lower_bound=True))):
            assert _read(text) <= x, (x, text)
            assert abs(Decimal(x) - _shown(text)) < _last_digit(x, 3), (x, text)


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


@pytest.mark.parametrize("lower_bound", [False, True])
def test_rounding_a_rounded_epsilon_again_changes_nothing(lower_bound):
    """A table re-rounds at 4 figures what a page rounded at 3: 3.34 is stored as 3.33999..., and flooring that
    exact binary value again showed 3.339 (the Attack page's table beside a tile reading 3.34)."""
    for x in _random_epsilons(3000, seed=13):
        once = round_epsilon(float(x), 3, lower_bound=lower_bound)
        assert round_epsilon(once, 3, lower_bound=lower_bound) == once
        assert round_epsilon(once, 4, lower_bound=lower_bound) == once


def test_infinity_and_zero_are_shown_as_they_are():
    assert epsilon_text(math.inf) == "∞"
    assert format_epsilon(math.inf) == "∞ (not private)"
    assert round_epsilon(math.inf) == math.inf
    assert epsilon_text(0.0) == "0"
    assert epsilon_text(0.0, lower_bound=True) == "0" and epsilon_text(-0.0) == "0"


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
    # a proven ε the page already rounded down (3.34, the float 3.33999...) is not floored once more to 3.339
    proven = pd.DataFrame({"ε proven (95%)": [round_epsilon(3.3404, lower_bound=True)]})
    assert readable_table(proven).iloc[0, 0] == 3.34
    assert out["Test accuracy"].tolist() == [0.123, 0.5]  # not an ε: to nearest, as before


def test_a_table_with_an_infinite_epsilon_writes_the_finite_ones_rounded_up():
    out = readable_table(pd.DataFrame({"epsilon_spent": [1.23441, math.inf]}), digits=3)
    assert out.iloc[:, 0].tolist() == ["1.24", "∞ (not private)"]
