"""The home page's averaging charts: the refused asks shaded in both, named once; labels apart on a phone and as
large as the axes' when presenting."""
from __future__ import annotations

import json

import pytest

from dpcore.teaching.explain import repeated_answers
from dpcore.ui.explain import averaging_charts


def _marks(chart) -> list[dict]:
    """Every mark of a layered chart's spec, flattened: its properties, ``encoding`` and the ``rows`` it draws."""
    spec = chart.to_dict()
    out, stack = [], [(spec, None)]
    while stack:
        node, data = stack.pop()
        data = (node.get("data") or {}).get("name", data)
        if "layer" in node:
            stack += [(layer, data) for layer in node["layer"]]
        elif "mark" in node:
            out.append({**node["mark"], "encoding": node.get("encoding", {}), "rows": spec["datasets"][data]})
    return out


def _texts(chart) -> list[str]:
    """The texts a chart's text marks show."""
    return [row["text"] for m in _marks(chart) if m["type"] == "text" for row in m["rows"]]


def test_the_refused_band_is_shaded_in_both_charts_and_named_once_and_the_budget_label_sits_under_its_line():
    df = repeated_answers(mechanism="laplace", epsilon=1.0, true_count=3, asks=50, budget=25, seed=0)
    answers, spent = averaging_charts(df, true_count=3, budget=25)
    assert "refused: over budget" in _texts(answers) and "refused: over budget" not in _texts(spent)
    assert [m["type"] for m in _marks(answers)].count("rect") == 1 == [m["type"] for m in _marks(spent)].count("rect")
    budget = next(m for m in _marks(spent) if m["type"] == "text")
    assert budget["baseline"] == "top" and budget["dy"] > 0  # below the dotted line, clear of the band's name
    # at the left end, where the epsilon spent is still low (at the right end the spent line ran through it)
    assert budget["align"] == "left" and budget["x"] == 0
    assert "budget 25" in _texts(spent) and "exact count 3" in _texts(answers)


def test_the_two_charts_share_their_asks_axis_and_without_a_budget_nothing_is_shaded():
    df = repeated_answers(mechanism="laplace", epsilon=1.0, true_count=3, asks=30, budget=None, seed=1)
    answers, spent = averaging_charts(df, true_count=3, budget=None)
    domains = {json.dumps(m["encoding"]["x"]["scale"]) for c in (answers, spent) for m in _marks(c)
               if "scale" in m["encoding"].get("x", {})}
    assert domains == {json.dumps({"domain": [0.5, 30.5], "nice": False})}
    assert not any(m["type"] == "rect" for c in (answers, spent) for m in _marks(c))


def test_the_answers_axis_follows_the_answers_so_a_large_epsilons_close_answers_are_not_squeezed_flat():
    df = repeated_answers(mechanism="laplace", epsilon=5.0, true_count=300, asks=20, budget=None, seed=0)
    answers, _ = averaging_charts(df, true_count=300, budget=None)
    points = next(m for m in _marks(answers) if m["type"] == "point")
    assert points["encoding"]["y"]["scale"] == {"zero": False}


def test_labels_inside_the_charts_take_the_charts_text_size_which_presentation_mode_enlarges(monkeypatch):
    from dpcore.ui import present, vega

    df = repeated_answers(mechanism="laplace", epsilon=1.0, true_count=3, asks=40, budget=25, seed=0)
    answers, spent = averaging_charts(df, true_count=3, budget=25)
    assert not any("fontSize" in m for c in (answers, spent) for m in _marks(c))  # no size fixed in a mark
    drawn = []
    monkeypatch.setattr(vega.st, "vega_lite_chart", lambda spec, **kw: drawn.append(spec))
    for presenting in (False, True):
        monkeypatch.setattr(present, "presentation_mode", lambda p=presenting: p)
        vega.show(answers)
    assert drawn[0]["config"]["text"]["fontSize"] == 12
    assert drawn[1]["config"]["text"]["fontSize"] == vega.PRESENTATION_LABEL_SIZE > 12


@pytest.mark.parametrize("mechanism, epsilon", [("laplace", 1.0), ("laplace", 0.05), ("laplace", 5.0),
                                                ("gaussian", 1.0)])
def test_the_ratio_chart_labels_one_and_its_band_on_its_own_ticks(mechanism, epsilon):
    # presenting (19 px type), Vega-Lite's own log ticks dropped colliding labels: the ratio axis read 4, 2, 0.6,
    # 0.4, 0.2, with no 1, the ratio of two databases that cannot be told apart
    from dpcore.teaching.explain import count_query_densities
    from dpcore.ui.accounting import ratio_figure

    df, summary = count_query_densities(mechanism=mechanism, epsilon=epsilon, delta=1e-5, sensitivity=1.0,
                                        count_d=3, count_d2=2)
    spec = ratio_figure(df, summary).to_dict()
    ticks, (lo, hi) = spec["encoding"]["y"]["axis"]["values"], spec["encoding"]["y"]["scale"]["domain"]
    assert 1.0 in ticks and 3 <= len(ticks) <= 7
    assert all(lo / 1.05 <= t <= hi * 1.05 for t in ticks)
    assert ticks == sorted(ticks)


def test_with_every_answer_refused_the_answers_axis_spans_a_few_people_around_the_count_not_the_count_alone():
    # a budget of 0.5 at ε = 1: no answer released, and the axis spanned the exact count alone, one tick "3.000000"
    df = repeated_answers(mechanism="laplace", epsilon=1.0, true_count=3, asks=50, budget=0.5, seed=0)
    assert not df.released.any()
    answers, _ = averaging_charts(df, true_count=3, budget=0.5)
    points = next(m for m in _marks(answers) if m["type"] == "point")
    assert points["encoding"]["y"]["scale"] == {"domain": [0, 6]}


@pytest.mark.parametrize("epsilon, shown", [(1.5, "4.49"), (5.0, "149"), (0.05, "1.06"), (1.0, "2.72")])
def test_the_ratio_charts_e_to_the_epsilon_is_rounded_up_as_the_tile_above_it_is(epsilon, shown):
    # at ε = 1.5 the home page's tile read e^ε = 4.49 (rounded up, a bound) and the chart's legend 4.48 under it
    from dpcore.teaching.explain import count_query_densities
    from dpcore.teaching.verdict import round_epsilon
    from dpcore.ui.accounting import ratio_figure

    df, summary = count_query_densities(mechanism="laplace", epsilon=epsilon, delta=1e-5, sensitivity=1.0,
                                        count_d=3, count_d2=2)
    tile = f"{round_epsilon(summary['e_epsilon']):.3g}"  # as pages/0_What_epsilon_means.py writes its tile
    names = {row["series"] for row in ratio_figure(df, summary).to_dict()["datasets"].popitem()[1]}
    assert tile == shown and f"eᵋ = {shown}" in names, names
