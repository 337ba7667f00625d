"""The home page's averaging chart: its labels stay apart on a phone-width chart."""
from __future__ import annotations

from dpcore.explain import repeated_answers
from dpcore.ui.explain import averaging_figure


def test_the_refused_band_is_named_once_and_the_budget_label_sits_under_its_line():
    df = repeated_answers(mechanism="laplace", epsilon=1.0, true_count=3, asks=50, budget=25, seed=0)
    fig = averaging_figure(df, true_count=3, budget=25)
    texts = [a.text for a in fig.layout.annotations]
    assert texts.count("refused: over budget") == 1  # once, in the answers' panel, not over the ε panel's labels
    budget = next(a for a in fig.layout.annotations if a.text == "budget 25")
    assert budget.yanchor == "top"  # below the dotted line; the band's label is above it, top left
    assert len(fig.layout.shapes) == 4  # the band over both panels, the exact count and the budget lines
