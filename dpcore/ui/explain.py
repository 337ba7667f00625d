"""Streamlit side of the home page's classroom demos: repeated answers, the Bayesian reading of epsilon and the
floating-point attack on textbook noise."""
from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ..audit.floating_point import FloatingPointAttack, floating_point_attack
from ..mechanisms import Laplace
from ..mechanisms.secure import SecureLaplace
from ..teaching.explain import averaging_text as averaging_text  # re-exported for the home page
from ..teaching.explain import posterior_bound, repeated_answers
from ..teaching.verdict import belief_text as belief_text  # re-exported for the home page
from ..teaching.verdict import epsilon_text, odds_factor, round_epsilon
from . import palette, vega


@st.cache_data(show_spinner=False, max_entries=128)
def cached_repeated_answers(mechanism: str, epsilon: float, delta: float, sensitivity: float, true_count: float,
                            asks: int, budget: float | None, seed: int) -> pd.DataFrame:
    return repeated_answers(mechanism=mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                            true_count=true_count, asks=asks, budget=budget, seed=seed)


#: the home page's averaging charts: answers and their running mean, then the epsilon spent
ANSWER, MEAN, SPENT = (vega.Series("One noisy answer", "#999999", symbol="circle-open"),
                       vega.Series("Mean of the answers so far", palette.VERMILLION, symbol=None),
                       vega.Series("ε spent (accountant)", palette.BLUE, symbol="square"))
#: the band of refused asks
REFUSED_TINT = palette.PURPLE
#: the y axes' minimum width, so that the two charts' x axes line up
_Y_AXIS_PX = 36


def averaging_charts(df: pd.DataFrame, *, true_count: float, budget: float | None
                     ) -> tuple[alt.LayerChart, alt.LayerChart]:
    """Two charts over the number of asks (Vega-Lite), drawn one above the other: the answers and their running
    mean, then the epsilon spent. The asks refused for going over ``budget`` are shaded in both, named in the first."""
    shown = df[df.released]
    asks = alt.Scale(domain=[0.5, float(df.ask.max()) + 0.5], nice=False)
    x = alt.X("ask:Q", title="Times the same question was asked", scale=asks,
              axis=alt.Axis(tickMinStep=1, format="d"))  # whole asks, even for one
    left = alt.Axis(minExtent=_Y_AXIS_PX)
    tip = [alt.Tooltip("ask:Q", title="ask")]
    # not from zero: at a large epsilon the answers sit close to the count, and an axis from 0 squeezes them flat.
    # With no answer released (a budget below one ask's ε) the axis spanned the exact count alone, its one tick
    # written "3.000000": a few people either side of it instead
    scale = alt.Scale(zero=False) if len(shown) else alt.Scale(domain=[true_count - 3, true_count + 3])
    answers = alt.Chart(shown.assign(**{vega.FIELD: ANSWER.name})).mark_point(size=40, filled=False).encode(
        x=x, y=alt.Y("answer:Q", title="answer", axis=left, scale=scale),
        tooltip=[*tip, alt.Tooltip("answer:Q", title="answer", format=".2f")],
        **vega.series_encoding([ANSWER, MEAN], markers=True))
    mean = alt.Chart(shown.assign(**{vega.FIELD: MEAN.name})).mark_line(strokeWidth=3).encode(
        x=x, y="running_mean:Q", tooltip=[*tip, alt.Tooltip("running_mean:Q", title="mean", format=".2f")],
        **vega.series_encoding([ANSWER, MEAN]))
    top = [answers, mean,
           vega.marked_line(true_count, f"exact count {true_count:g}", palette.BLUE, "dash", below=False)]
    spent = alt.Chart(df.assign(**{vega.FIELD: SPENT.name, "epsilon_shown": df.epsilon.map(epsilon_text)})).mark_line(
        strokeWidth=2, point=alt.OverlayMarkDef(size=30, filled=True)).encode(
        x=x, y=alt.Y("epsilon:Q", title="ε", axis=left),
        tooltip=[*tip, alt.Tooltip("epsilon_shown:N", title="ε spent")],  # rounded up, as every ε spent is shown
        **vega.series_encoding([SPENT], markers=True))
    bottom = [spent]
    if budget is not None:
        # named under its line at the left end, where the epsilon spent is still low: at the right end the spent
        # line reaches the budget and ran through the label; above the line it met the refused band on a phone
        bottom.append(vega.marked_line(budget, f"budget {budget:g}", palette.PURPLE, "dot", below=True, left=True))
    refused = df[~df.released]
    if len(refused):
        band = pd.DataFrame({"x0": [float(refused.ask.min()) - 0.5], "x1": [float(df.ask.max()) + 0.5],
                             "text": ["refused: over budget"]})
        rect = alt.Chart(band).mark_rect(color=REFUSED_TINT, opacity=0.08).encode(
            x=alt.X("x0:Q", scale=asks), x2="x1:Q", tooltip=alt.value(None))  # a shade, not data to hover
        named = alt.Chart(band).mark_text(align="left", baseline="top", dx=4, y=4, color="#333333").encode(
            x=alt.X("x0:Q", scale=asks), text="text:N")
        top = [rect, named, *top]  # named once, in the answers' chart
        bottom = [rect, *bottom]
    return (alt.layer(*top).properties(title="Noisy answers and their running mean", height=230),
            alt.layer(*bottom).properties(title="ε spent so far", height=170))


def posterior_figure(*, epsilon: float, prior: float) -> alt.LayerChart:
    """The attacker's possible beliefs after one release, for every prior, with the chosen prior marked
    (Vega-Lite)."""
    p = np.linspace(0.0, 1.0, 201)
    low, high = posterior_bound(p, epsilon=epsilon)
    lo1, hi1 = (float(v) for v in posterior_bound(prior, epsilon=epsilon))
    series = [vega.Series(f"Beliefs reachable at ε = {epsilon:g}", palette.BLUE, symbol=None),
              vega.Series("No release: belief = prior", "#888888", "dash", symbol=None),
              # the range rounded outwards (its ends are bounds): at ε 1 from 50 %, "27% and 73%" left out 73.1 %
              vega.Series(f"Prior {prior:.0%}: belief between {math.floor(lo1 * 1000) / 10:.1f}% and "
                          f"{math.ceil(hi1 * 1000) / 10:.1f}%", palette.VERMILLION, symbol="diamond")]
    lines, marked = vega.series_encoding(series), vega.series_encoding(series, markers=True)
    percent = dict(format=".0%")
    x = alt.X("prior:Q", title="Attacker's belief before the release (prior)", axis=alt.Axis(**percent),
              scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("belief:Q", title="Belief after seeing the answer (posterior)", axis=alt.Axis(**percent),
              scale=alt.Scale(domain=[0, 1]))
    curve = pd.DataFrame({"prior": p, "low": low, "belief": high, vega.FIELD: series[0].name})
    band = alt.Chart(curve).mark_area(color=palette.BLUE, opacity=0.15).encode(x=x, y=alt.Y("low:Q"), y2="belief:Q",
                                                                               tooltip=alt.value(None))
    tip = [alt.Tooltip("prior:Q", title="prior", format=".0%"), alt.Tooltip("belief:Q", title="belief",
                                                                            format=".0%")]
    reachable = alt.Chart(curve).mark_line(strokeWidth=2).encode(x=x, y=y, tooltip=tip, **lines)
    diagonal = alt.Chart(pd.DataFrame({"prior": [0.0, 1.0], "belief": [0.0, 1.0], vega.FIELD: series[1].name})
                         ).mark_line(strokeWidth=2).encode(x=x, y=y, **lines)
    chosen = alt.Chart(pd.DataFrame({"prior": [prior, prior], "belief": [lo1, hi1], vega.FIELD: series[2].name})
                       ).mark_line(strokeWidth=4, point=alt.OverlayMarkDef(size=110, filled=True)).encode(
        x=x, y=y, tooltip=tip, **marked)
    return alt.layer(band, reachable, diagonal, chosen).properties(height=380)


def e_to_the(epsilon: float) -> str:
    """e^ε as the home page writes it, "at most e^ε = ... times": rounded up (a bound), 3 significant figures."""
    return odds_factor(epsilon).rstrip("×")


@st.cache_data(show_spinner="Attacking 2 × 1000 releases of each kind of noise…", max_entries=32)
def cached_float_attack(epsilon: float, x: float, x_prime: float, releases: int = 1000) -> list[FloatingPointAttack]:
    """Mironov's attack on the seeded textbook Laplace and on the secure discrete Laplace, same ε and answers."""
    return [floating_point_attack(Laplace(epsilon=epsilon), releases=releases, x=x, x_prime=x_prime, seed=0),
            floating_point_attack(SecureLaplace(epsilon=epsilon), releases=releases, x=x, x_prime=x_prime)]


def float_attack_table(results: list[FloatingPointAttack]) -> pd.DataFrame:
    """One row per kind of noise: how often the attacker was certain, and the ε the counts prove."""
    # short enough for the five columns to fit beside the sidebar at 1280×720: "ε proven", the column the text
    # under the table reads from, was cut to "ε pr" behind a sideways scroll
    names = {"Laplace": "Textbook Laplace (floating point)", "SecureLaplace": "Secure Laplace (exact, on a grid)"}
    return pd.DataFrame({
        "Noise": [names.get(r.mechanism, r.mechanism) for r in results],
        "Attacker certain (from D)": [f"{r.certain_when_x} of {r.releases} ({r.certain_rate:.0%})"
                                               for r in results],
        "Wrongly certain (from D′)": [r.certain_when_x_prime for r in results],
        "ε claimed": [r.epsilon for r in results],
        "ε proven (95%)": [round_epsilon(r.epsilon_lower_bound, lower_bound=True) for r in results],
    })
