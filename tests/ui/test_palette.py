"""The colour-blind check catches the charts it is meant to catch, and the app's palette passes it."""
from __future__ import annotations

import itertools

import numpy as np
import plotly.graph_objects as go
import pytest

from dpcore.ui import palette


def _two_lines(c1: str, c2: str, **second) -> go.Figure:
    fig = go.Figure()
    fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines+markers", name="a", line=dict(color=c1))
    fig.add_scatter(x=[0, 1], y=[1, 0], mode="lines+markers", name="b", line=dict(color=c2, **second))
    return fig


def test_red_beside_green_in_the_same_style_is_caught():
    # the Noisy images chart's old pair: matplotlib's red and green become one olive for a deuteranope
    problems = palette.colour_clashes(_two_lines("#d62728", "#2ca02c"))
    assert len(problems) == 1 and "look alike to a deuteranope" in problems[0]


def test_red_beside_green_passes_once_the_dash_differs():
    assert palette.colour_clashes(_two_lines("#d62728", "#2ca02c", dash="dash")) == []


def test_a_series_left_to_the_theme_colour_is_caught():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], name="no colour"))
    assert palette.colour_clashes(fig) == ["series 'no colour' has no colour of its own"]


def test_deuteranopia_simulation_keeps_grey_and_merges_red_with_green():
    # Machado et al. (2009): achromatic colours are fixed points; pure red and green land close together
    assert np.allclose(palette.deuteranopia("#808080"), [128, 128, 128], atol=1.5)
    red, green = palette.deuteranopia("#FF0000"), palette.deuteranopia("#00FF00")
    assert np.linalg.norm(red - green) < 0.5 * np.linalg.norm([255.0, -255.0, 0.0])  # red and green collapse ...
    seen_apart = np.linalg.norm(palette.deuteranopia(palette.VERMILLION) - palette.deuteranopia(palette.BLUE))
    assert seen_apart > 150  # ... while the palette's vermillion and blue stay far apart
    assert np.linalg.norm(palette.deuteranopia("#d62728") - palette.deuteranopia("#2ca02c")) < palette.ALIKE


@pytest.mark.parametrize("i,j", list(itertools.combinations(range(8), 2)))
def test_every_pair_of_series_styles_differs_in_more_than_colour(i, j):
    a, b = palette.series_style(i), palette.series_style(j)
    assert a["color"] != b["color"] and (a["dash"] != b["dash"] or a["symbol"] != b["symbol"])


def test_the_palette_first_five_colours_stay_apart_for_a_deuteranope():
    seen = [palette.deuteranopia(c) for c in palette.SERIES_COLOURS[:5]]
    for a, b in itertools.combinations(seen, 2):
        assert np.linalg.norm(a - b) >= palette.ALIKE


def test_a_legend_beside_the_plot_is_reported_and_one_below_is_not():
    fig = _two_lines(palette.BLUE, palette.VERMILLION)
    assert palette.legend_problems(fig)
    assert palette.legend_problems(palette.legend_below(fig)) == []


def test_two_narrow_bands_side_by_side_keep_their_names_apart_and_wide_ones_stay_in_line():
    import plotly.graph_objects as go

    from dpcore.ui.palette import epsilon_bands

    inside = epsilon_bands(go.Figure(), (0.1, 3000), labels_above=False)  # 1-4 and 4-10 are narrow here
    pads = {s.label.text: s.label.padding for s in inside.layout.shapes}
    assert pads["moderate"] != pads["weak"] and pads["strong"] == pads["nominal"] == pads["moderate"]
    above = epsilon_bands(go.Figure(), (0.1, 20), labels_above=True)  # room for every name on one line
    assert {a.yshift for a in above.layout.annotations} == {0}


def test_the_picture_quality_panels_are_stacked_and_name_the_bands_once_above_them_not_on_a_gridline():
    import pandas as pd

    from dpcore.ui.images import quality_figure

    df = pd.DataFrame([{"kind": k, "epsilon": e, "psnr_db": 10.0, "ssim": 0.5}
                       for k in ("laplace-pixel", "dppix") for e in (0.1, 1.0, 10.0, 100.0)])
    fig = quality_figure(df)
    names = [(a.text, a.xref) for a in fig.layout.annotations]
    for band in ("strong", "moderate", "weak", "nominal"):
        assert names.count((band, "x")) == 1  # once, over the stacked panels (side by side they ran together)
    assert fig.layout.xaxis.domain == fig.layout.xaxis2.domain  # one above the other, each the chart's width
    assert all(a.yref == "paper" and a.y == 1.0 and a.yanchor == "bottom" for a in fig.layout.annotations)
    assert not any(s.label.text for s in fig.layout.shapes)  # none inside the plot, where gridlines cross them


# --- the same rules for Vega-Lite charts (the home page's, dpcore.ui.vega) ------------------------------------------

def _vega_two_lines(c1: str, c2: str, *, dash2: str = "solid", orient: str = "bottom") -> dict:
    import altair as alt
    import pandas as pd

    from dpcore.ui import vega

    series = [vega.Series("a", c1), vega.Series("b", c2, dash2)]
    rows = pd.DataFrame({"x": [0, 1, 0, 1], "y": [0, 1, 1, 0], vega.FIELD: ["a", "a", "b", "b"]})
    spec = alt.Chart(rows).mark_line().encode(x="x:Q", y="y:Q", **vega.series_encoding(series)).to_dict()
    spec["encoding"]["color"]["legend"]["orient"] = orient
    return spec


def test_red_beside_green_in_the_same_style_is_caught_on_a_vega_lite_chart():
    problems = palette.colour_clashes(_vega_two_lines("#d62728", "#2ca02c"))
    assert len(problems) == 1 and "'a' and 'b' look alike to a deuteranope" in problems[0]
    assert palette.colour_clashes(_vega_two_lines("#d62728", "#2ca02c", dash2="dash")) == []


def test_a_vega_lite_legend_beside_the_plot_and_theme_colours_are_caught():
    import altair as alt
    import pandas as pd

    assert palette.legend_problems(_vega_two_lines(palette.BLUE, palette.ORANGE)) == []
    assert palette.legend_problems(_vega_two_lines(palette.BLUE, palette.ORANGE, orient="right")) == [
        "the legend sits beside the plot; put it below (orient bottom)"]
    themed = alt.Chart(pd.DataFrame({"x": [0, 1], "y": [0, 1], "s": ["a", "b"]})).mark_line().encode(
        x="x:Q", y="y:Q", color="s:N").to_dict()
    assert palette.colour_clashes(themed) == ["series 's' has no colour of its own"]


def test_the_home_pages_vega_lite_charts_pass_the_checks():
    from dpcore.teaching.explain import count_query_densities, repeated_answers
    from dpcore.ui.accounting import densities_figure, ratio_figure
    from dpcore.ui.explain import averaging_charts, posterior_figure

    df, summary = count_query_densities(mechanism="gaussian", epsilon=1.0, delta=1e-5, sensitivity=1.0, count_d=3,
                                        count_d2=2)
    answers = repeated_answers(mechanism="laplace", epsilon=1.0, true_count=3, asks=50, budget=25, seed=0)
    charts = [densities_figure(df, summary, count_d=3, count_d2=2), ratio_figure(df, summary),
              *averaging_charts(answers, true_count=3, budget=25), posterior_figure(epsilon=1.0, prior=0.5)]
    for chart in charts:
        spec = chart.to_dict()
        assert palette._series(spec), "no series read from the chart"
        assert palette.colour_clashes(spec) == [] and palette.legend_problems(spec) == []
