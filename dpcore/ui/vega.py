"""Light charts: Vega-Lite (through Altair) for the page every visitor opens first.

Streamlit draws a Plotly chart only after the browser has fetched and run its Plotly bundle, 4.7 MB of
JavaScript; its Vega-Lite bundle is 0.8 MB. On the home page, in headless Chromium on a 2-core machine, the
first chart was drawn about 2.7 s after the page was opened with Vega-Lite against 4.6-5.0 s with Plotly (a warm
server, nobody else on it), and 6.8-8.2 s against 11-12 s while the same machine served a class of twenty
(``bench/classroom_load.py``'s late-comer). A phone on a classroom's Wi-Fi downloads and parses the same bundles.
So the home page, the one every visitor opens first, draws its charts here, and so does the Train page, which a
whole class follows at once: ten tabs on one 2-core machine each loading Plotly for its live and finished charts
were the wait between a shared run's end and its result on every screen (``bench/classroom_load.py``). The other
pages keep Plotly (their charts are heavier: subplots of sweeps, hover over many series).

The same rules as :mod:`dpcore.ui.palette` hold: Okabe & Ito's colours, every series with its own dash and
marker as well (:func:`series_encoding`), the legend under the plot, and the tests' colour-blindness check reads
these charts too (:func:`dpcore.ui.palette.colour_clashes` takes a Vega-Lite spec).
"""
from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import pandas as pd
import streamlit as st

#: the palette's dash names (Plotly's) as Vega-Lite stroke dashes (pixels on, off, ...)
DASHES = {"solid": [1, 0], "dash": [8, 5], "dot": [2, 4], "dashdot": [8, 4, 2, 4], "longdash": [16, 5],
          "longdashdot": [16, 4, 2, 4]}
#: the palette's marker names as Vega-Lite shapes
SHAPES = {"circle": "circle", "square": "square", "diamond": "diamond", "triangle-up": "triangle-up",
          "triangle-down": "triangle-down", "x": "cross", "cross": "cross", "circle-open": "circle"}
#: the field that names a row's series in a chart's long-form data
FIELD = "series"
#: the colour of axis labels, titles and legends (dark enough for WCAG's 4.5:1 on white; the theme's grey is not)
TEXT = "#333333"
#: axis labels on a projector (presentation mode), in pixels
PRESENTATION_LABEL_SIZE = 15


@dataclass(frozen=True)
class Series:
    """One legend entry: its name and the colour, dash and marker that tell it apart."""

    name: str
    colour: str
    dash: str = "solid"
    #: the marker; None for a line without markers (its legend entry is then a stroke)
    symbol: str | None = "circle"


def series_encoding(series: list[Series], *, markers: bool = False, legend: bool = True) -> dict:
    """``color`` and ``strokeDash`` encodings of :data:`FIELD` for these series, for ``.encode(**...)``; with
    ``markers``, ``shape`` too, for a layer of points or of lines with points (on a line alone Vega-Lite would add a
    point at every row). Layers of one chart share one legend; with one layer's ``shape``, it shows each series'
    marker (a stroke for a series without one).

    The domains and ranges are given in full, so every panel of a chart shares one legend with every entry, in
    this order, under the plot, one entry a row (long names are not cut on a phone).
    """
    names = [s.name for s in series]
    guide = alt.Legend(orient="bottom", direction="vertical", title=None, labelLimit=0, symbolStrokeWidth=2.5,
                       symbolSize=160) if legend else None

    def channel(cls, values):
        return cls(f"{FIELD}:N", scale=alt.Scale(domain=names, range=values), legend=guide, sort=names)

    out = {"color": channel(alt.Color, [s.colour for s in series]),
           "strokeDash": channel(alt.StrokeDash, [DASHES[s.dash] for s in series])}
    if markers:
        out["shape"] = channel(alt.Shape, [SHAPES[s.symbol] if s.symbol else "stroke" for s in series])
    return out


def marked_line(value: float, text: str, colour: str, dash: str, *, below: bool, left: bool = False
                ) -> alt.LayerChart:
    """A horizontal reference line at ``value`` named at its right end (``left``: its left end), above it or
    ``below`` it. The label's size is the chart's text size (:func:`show`: larger when presenting)."""
    frame = pd.DataFrame({"y": [float(value)], "text": [text]})
    rule = alt.Chart(frame).mark_rule(color=colour, strokeDash=DASHES[dash], strokeWidth=2).encode(y="y:Q")
    place = {"align": "left", "x": 0, "dx": 4} if left else {"align": "right", "x": "width"}
    label = alt.Chart(frame).mark_text(baseline="top" if below else "bottom", dy=4 if below else -4,
                                       color=TEXT, **place).encode(y="y:Q", text="text:N")
    return rule + label


def spec(chart) -> dict:
    """``chart``'s Vega-Lite spec as the pages draw it: as wide as its container, its own height for the plot alone
    (Streamlit's default autosize, "fit", would squeeze the plot to make room for the legend and titles inside that
    height), validated once."""
    return chart.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding")).to_dict()


def cached_specs(builder, *args, **kwargs) -> dict | tuple[dict, ...]:
    """The spec(s) of ``builder(*args, **kwargs)`` (a chart or a tuple of charts), computed once per inputs for the
    whole server: building and validating the home page's charts takes about 0.3 s of the interpreter a visit,
    which a class arriving on the same defaults would otherwise pay once per student, beside the runs it waits for.
    """
    return _cached_specs(f"{builder.__module__}.{builder.__qualname__}", builder, args, kwargs)


@st.cache_data(show_spinner=False, max_entries=512)
def _cached_specs(name: str, _builder, args: tuple, kwargs: dict) -> dict | tuple[dict, ...]:
    built = _builder(*args, **kwargs)
    return tuple(spec(c) for c in built) if isinstance(built, tuple) else spec(built)


def show(chart, container=None, *, key: str | None = None, alt_text: str | None = None) -> None:
    """Draw ``chart`` (an Altair chart or a spec from :func:`cached_specs`) the width of ``container`` (the page by
    default), its labels dark enough to read, larger when presenting. ``alt_text`` is what a screen reader announces
    for the chart."""
    from .present import presentation_mode

    drawn = dict(chart) if isinstance(chart, dict) else spec(chart)
    size = PRESENTATION_LABEL_SIZE if presentation_mode() else 12
    drawn["config"] = {**drawn.get("config", {}),
                       "axis": {"labelFontSize": size, "titleFontSize": size + 1, "labelColor": TEXT,
                                "titleColor": TEXT, "tickCount": 8},
                       # Streamlit's theme flushes every axis's end labels inward (labelFlush): on a y axis the top
                       # label then sat under its grid line and the bottom one above it, so on the Train page's short
                       # "ε spent" panel the dotted budget line at 2 and the last epoch's point read above "2.0", an
                       # overspent budget; each label beside its own value (the x axis keeps its flush, inside the
                       # chart's width)
                       "axisY": {"labelFlush": False},
                       "legend": {"labelColor": TEXT, "labelFontSize": size + 1, "titleColor": TEXT},
                       "title": {"color": TEXT, "fontSize": size + 2},
                       "text": {"fontSize": size}}  # labels inside the chart ("budget", "exact count") too
    (container if container is not None else st).vega_lite_chart(spec=drawn, width="stretch", key=key, alt=alt_text)
