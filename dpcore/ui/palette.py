"""One colour-blind-safe palette for every chart, each series also told apart by dash or marker.

The colours are Okabe & Ito's (2008) eight, chosen to stay distinct under the common colour-vision deficiencies.
Colour alone still is not enough (a projector washes colours out, a printout may be grey), so every series of a
chart also gets its own dash and marker: :func:`series_style` hands out the three together.

:func:`colour_clashes` is the check the tests run over every figure the pages draw: it simulates deuteranopia
(the most common deficiency) with the matrix of Machado, Oliveira & Fernandes (2009, severity 1) and reports
every pair of series that then look alike and share their dash and marker as well.

References
----------
Okabe, Ito. Color universal design (CUD): how to make figures and presentations that are friendly to colorblind
people. 2008.
Machado, Oliveira, Fernandes. A physiologically-based model for simulation of color vision deficiency. IEEE TVCG
2009.
"""
from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

#: Okabe & Ito (2008)
BLACK, ORANGE, SKY_BLUE, GREEN, YELLOW, BLUE, VERMILLION, PURPLE = (
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
GREY = "#7F7F7F"  # reference lines (chance, the diagonal, non-private baselines drawn dashed)
#: the order series take colours in (yellow last: it is faint on white)
SERIES_COLOURS = (BLUE, VERMILLION, GREEN, ORANGE, PURPLE, SKY_BLUE, BLACK, YELLOW)
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
MARKERS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down")


def series_style(i: int) -> dict[str, str]:
    """Colour, dash and marker of the ``i``-th series of a chart (all three differ from the neighbours')."""
    return {"color": SERIES_COLOURS[i % len(SERIES_COLOURS)], "dash": DASHES[i % len(DASHES)],
            "symbol": MARKERS[i % len(MARKERS)]}


def line_and_marker(i: int, *, width: float = 2.5, size: float = 8) -> dict[str, Any]:
    """``line=`` and ``marker=`` keyword arguments of a ``go.Scatter`` for the ``i``-th series."""
    s = series_style(i)
    return {"line": {"color": s["color"], "dash": s["dash"], "width": width},
            "marker": {"color": s["color"], "symbol": s["symbol"], "size": size}}


#: the characters of one legend line that fit a 390 px phone beside the entry's symbol (Plotly's 12 px type): the
#: trade-off chart's "Regularised logistic regression / SVM (non-private): 0.977, mean of 3 seeds" ran past its edge
LEGEND_LINE = 56


def legend_lines(text: str, width: int = LEGEND_LINE) -> str:
    """``text`` broken at spaces into lines of at most ``width`` characters, joined by ``<br>`` (Plotly's legend does
    not wrap an entry); the lines it already has are kept.

    >>> legend_lines("Regularised logistic regression / SVM (non-private): 0.977, mean of 3 seeds")
    'Regularised logistic regression / SVM (non-private):<br>0.977, mean of 3 seeds'
    """
    import textwrap

    return "<br>".join(part for line in text.split("<br>")
                       for part in (textwrap.wrap(line, width, break_long_words=False) or [line]))


def legend_below(fig, *, y: float = -0.22):
    """Put the legend in a row under the plot (a right-hand legend squeezes a phone's plot to a sliver)."""
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=y, x=0, xanchor="left"))
    return fig


#: the tint behind each verdict band on an ε axis (light: the curves stay the figure's subject)
BAND_TINTS = {"strong": "rgba(0,158,115,0.08)", "moderate": "rgba(240,228,66,0.16)",
              "weak": "rgba(230,159,0,0.10)", "nominal": "rgba(213,94,0,0.08)"}


def epsilon_bands(fig, values, *, log: bool = True, labels_above: bool = True, label_axes: tuple[str, ...] = ("x",),
                  **where):
    """Shade the verdict bands of :mod:`dpcore.teaching.verdict` behind an ε x-axis spanning ``values``, each named.

    Only the bands the axis reaches are drawn, clipped to its span, so a chart of ε from 0.1 to 20 reads
    strong | moderate | weak | nominal. The names sit just above the plot area (``labels_above``; a line near the
    top of the plot would strike through them inside it), placed on a log axis when ``log``; charts with subplot
    titles up there keep them inside (``labels_above=False``, ``where`` = ``row="all", col="all"``). Side-by-side
    subplots without titles name the bands above each one: ``label_axes=("x", "x2")`` with ``where`` as above.
    """
    from ..teaching.verdict import BANDS

    xs = [float(v) for v in values if v is not None and float(v) > 0]
    if not xs:
        return fig
    lo, hi = min(xs), max(xs)

    def position(x):
        return math.log10(x) if log else x

    span = max(position(hi) - position(lo), 1e-12)
    start, staggered, after_narrow = 0.0, False, False
    for band in BANDS:
        x0, x1 = max(start, lo), min(band.upper, hi)
        start = band.upper
        if x1 <= x0:
            continue
        # two narrow bands side by side (1-4 and 4-10 on an axis to 3,000) would run their names together: the
        # second of two has its name a line off
        narrow = (position(x1) - position(x0)) / span < 0.15
        staggered = narrow and after_narrow and not staggered
        after_narrow = narrow
        label = None if labels_above else dict(text=band.name, textposition="top center", padding=18 if staggered
                                               else 3, font=dict(size=12, color="#333333"))
        fig.add_vrect(x0=x0, x1=x1, fillcolor=BAND_TINTS[band.name], line_width=0, layer="below", label=label,
                      **where)
        if labels_above:  # annotations on a log axis take log10 coordinates
            mid = (math.log10(x0) + math.log10(x1)) / 2 if log else (x0 + x1) / 2
            for xref in label_axes:
                fig.add_annotation(x=mid, y=1.0, xref=xref, yref="paper", yanchor="bottom", showarrow=False,
                                   text=band.name, font=dict(size=12, color="#333333"), yshift=14 if staggered else 0)
    return fig


def mark_epsilon(fig, epsilon: float, *, note: str = ""):
    """A dashed vertical line at the visitor's ``epsilon`` on an ε x-axis, named in the legend ("your ε = 1" and
    ``note``), as the Trade-off explorer names its own: a name written on the plot at the line's foot sat on the curve
    running along the bottom (input perturbation's 0.333 on Iris), struck through by its dashes.

    The line is a shape, placed in data units on a log axis as on a linear one (as the verdict bands are): placed at
    log10(ε), the Classical models page drew "your ε = 1" at ε = 0, off the chart (and, when Plotly took the shape
    into its range, squeezed every curve against the right edge), and the Clustering page's ε = 2 at 0.3."""
    fig.add_vline(x=epsilon, line=dict(color=GREY, dash="dash"))
    fig.add_scatter(x=[None], y=[None], mode="lines", line=dict(color=GREY, dash="dash"),
                    name=f"your ε = {epsilon:g}" + (f" {note}" if note else ""), hoverinfo="skip")
    return fig


# --- the deuteranopia check -------------------------------------------------------------------------------------

_DEUTERANOPIA = np.array([[0.367322, 0.860646, -0.227968],
                          [0.280085, 0.672501, 0.047413],
                          [-0.011820, 0.042940, 0.968881]])  # Machado et al. 2009, severity 1.0, linear RGB
_NAMED = {"black": BLACK, "white": "#FFFFFF", "grey": "#808080", "gray": "#808080", "red": "#FF0000",
          "green": "#008000", "blue": "#0000FF", "orange": "#FFA500"}
#: series closer than this (Euclidean distance in sRGB, 0-255 per channel) after simulation look alike
ALIKE = 40.0


def _rgb(colour: str) -> np.ndarray | None:
    c = _NAMED.get(colour.strip().lower(), colour.strip())
    if c.startswith("#") and len(c) == 7:
        return np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    if c.startswith("rgb"):
        parts = c[c.index("(") + 1:c.index(")")].split(",")
        return np.array([float(p) for p in parts[:3]])
    return None


def deuteranopia(colour: str) -> np.ndarray | None:
    """The sRGB colour (0-255) a deuteranope sees for ``colour`` (hex, rgb() or a few names); None if unknown."""
    rgb = _rgb(colour)
    if rgb is None:
        return None
    s = rgb / 255.0
    linear = np.where(s <= 0.04045, s / 12.92, ((s + 0.055) / 1.055) ** 2.4)
    seen = np.clip(_DEUTERANOPIA @ linear, 0.0, 1.0)
    back = np.where(seen <= 0.0031308, 12.92 * seen, 1.055 * seen ** (1 / 2.4) - 0.055)
    return back * 255.0


def _get(obj, key):
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def is_vega_lite(fig) -> bool:
    """Whether ``fig`` is a Vega-Lite spec (a dict, as ``st.altair_chart`` sends it) rather than a Plotly figure."""
    return isinstance(fig, dict) and ("vega-lite" in str(fig.get("$schema", "")) or "data" not in fig
                                      or not isinstance(fig.get("data"), list))


def _vega_encodings(spec) -> list[tuple[dict, dict]]:
    """(mark, encoding) of every view of a Vega-Lite spec, through its layers and concatenations."""
    found, stack = [], [spec]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "encoding" in node:
                mark = node.get("mark", {})
                found.append((mark if isinstance(mark, dict) else {"type": mark}, node["encoding"]))
            stack += [v for k, v in node.items() if k in ("layer", "vconcat", "hconcat", "concat", "spec")]
        elif isinstance(node, list):
            stack += node
    return found


def _vega_series(spec) -> list[dict]:
    """The legend entries of a Vega-Lite spec: the domain of every colour scale given in full, each entry with the
    colour, dash and shape its scales give it (the way :mod:`dpcore.ui.vega` draws series)."""
    out: dict[str, dict] = {}
    for mark, enc in _vega_encodings(spec):
        colour = enc.get("color") or {}
        scale = colour.get("scale") or {}
        if not colour.get("field") or "legend" in colour and colour["legend"] is None:
            continue
        if colour.get("type") == "quantitative":  # a heat map's gradient: one scale of values, no series to tell apart
            continue
        if not scale.get("domain") or not scale.get("range"):  # the theme chooses the colours
            out.setdefault(colour["field"], {"name": colour["field"], "colour": None, "dash": "solid",
                                             "symbol": "circle", "mode": "lines", "pattern": ""})
            continue
        dashes = ((enc.get("strokeDash") or {}).get("scale") or {}).get("range") or []
        shapes = ((enc.get("shape") or {}).get("scale") or {}).get("range") or []
        for i, name in enumerate(scale["domain"]):
            entry = out.setdefault(name, {"name": name, "colour": scale["range"][i], "dash": "solid",
                                          "symbol": "circle", "mode": "", "pattern": ""})
            if i < len(dashes):
                entry["dash"] = str(dashes[i])
            if i < len(shapes):
                entry["symbol"] = str(shapes[i])
            modes = set(filter(None, entry["mode"].split("+")))
            modes.add("lines" if mark.get("type") in ("line", "rule", "trail") else "markers")
            if mark.get("point"):
                modes.add("markers")
            entry["mode"] = "+".join(sorted(modes))
    return list(out.values())


def _series(fig) -> list[dict]:
    """The legend entries of a figure (a plotly Figure or its JSON dict, or a Vega-Lite spec): name, colour, dash,
    marker, mode."""
    if is_vega_lite(fig):
        return _vega_series(fig)
    data = fig["data"] if isinstance(fig, dict) else fig.data
    out = []
    for t in data:
        if _get(t, "showlegend") is False or _get(t, "visible") is False or _get(t, "type") not in (None, "scatter",
                                                                                                    "scattergl", "bar"):
            continue
        line, marker = _get(t, "line") or {}, _get(t, "marker") or {}
        colour = _get(line, "color") or _get(marker, "color") or _get(t, "fillcolor")
        if isinstance(colour, (list, tuple)) and colour and all(isinstance(c, str) for c in colour):
            colour = max(set(colour), key=list(colour).count)  # bars of several colours: the one most of them have
        out.append({"name": _get(t, "name") or "(unnamed)", "colour": colour if isinstance(colour, str) else None,
                    "dash": _get(line, "dash") or "solid", "symbol": _get(marker, "symbol") or "circle",
                    "mode": _get(t, "mode") or ("bar" if _get(t, "type") == "bar" else "lines+markers"),
                    "pattern": _get(_get(marker, "pattern") or {}, "shape") or ""})
    return out


def colour_clashes(fig) -> list[str]:
    """Every problem a colour-blind reader would have with ``fig``'s legend, in words (empty when none).

    A series without a colour of its own is reported (the theme would choose it, maybe red beside green); two
    series are reported when, under deuteranopia, their colours are within :data:`ALIKE` and nothing else (dash,
    marker, bar pattern) tells them apart.
    """
    series = _series(fig)
    problems = [f"series {s['name']!r} has no colour of its own" for s in series if s["colour"] is None]
    for a, b in itertools.combinations([s for s in series if s["colour"] is not None], 2):
        ca, cb = deuteranopia(a["colour"]), deuteranopia(b["colour"])
        if ca is None or cb is None or float(np.linalg.norm(ca - cb)) >= ALIKE:
            continue
        shows_lines = "lines" in a["mode"] and "lines" in b["mode"]
        shows_markers = "markers" in a["mode"] and "markers" in b["mode"]
        differ = (shows_lines and a["dash"] != b["dash"]) or (shows_markers and a["symbol"] != b["symbol"]) \
            or a["pattern"] != b["pattern"] or a["mode"] != b["mode"]
        if not differ:
            problems.append(f"series {a['name']!r} and {b['name']!r} look alike to a deuteranope "
                            f"({a['colour']} vs {b['colour']}) and share their dash and marker")
    return problems


def legend_problems(fig) -> list[str]:
    """A legend beside the plot (it squeezes narrow screens): reported when the figure shows more than one series."""
    if is_vega_lite(fig):
        if len(_series(fig)) < 2:
            return []
        beside = {str((enc["color"].get("legend") or {}).get("orient", "right"))
                  for _, enc in _vega_encodings(fig) if (enc.get("color") or {}).get("field")
                  and not ("legend" in enc["color"] and enc["color"]["legend"] is None)} - {"bottom", "top"}
        return ["the legend sits beside the plot; put it below (orient bottom)"] if beside else []
    layout = fig["layout"] if isinstance(fig, dict) else fig.layout.to_plotly_json()
    shown = layout.get("showlegend", True) is not False and len(_series(fig)) > 1
    orientation = (layout.get("legend") or {}).get("orientation")
    return [] if not shown or orientation == "h" else ["the legend sits beside the plot; put it below (orientation h)"]
