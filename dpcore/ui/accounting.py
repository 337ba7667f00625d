"""Cached wrappers and charts for the home page and the Accountant page."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import altair as alt
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ..accounting import calibrate_noise_multiplier, composition_comparison, dpsgd_epsilon
from ..accounting.accountants import pld_discretization_for
from ..exceptions import user_stacklevel
from ..runtime.thread_warnings import caught as caught_warnings
from ..teaching.explain import count_query_densities, neighbouring_databases, noisy_count
from ..teaching.verdict import odds_factor, round_epsilon, verdict
from . import palette, vega
from .common import format_epsilon, log_ticks, readable_log_ticks

#: above this epsilon the guarantee says little: e^10 > 22 000 as the allowed likelihood ratio
WEAK_EPSILON = 10.0


def weak_guarantee_note(epsilon: float, *, unit: str = "") -> str | None:
    """A plain warning for an epsilon of :data:`WEAK_EPSILON` or more, None otherwise.

    An observer's odds about one person (record, user...) may grow by up to ``e^epsilon``;
    from 10 on that factor exceeds 22 000, so the bound itself promises almost nothing even
    though noise was added (Dwork & Roth 2014, section 2.3.2: epsilon of order 1 or less).
    """
    if not (epsilon >= 0.999 * WEAK_EPSILON):  # a budget calibrated to 10 is spent as 9.9999...
        return None
    who = f" {unit}" if unit else ""
    protected = "a client's data" if "client" in unit else "a record"
    band = verdict(epsilon).band.headline  # the verdict's own words: "Weak guarantee" to 10, then "Nominal ... only"
    return (f"{band}: ε = {format_epsilon(epsilon)}{who} lets an observer's odds about {protected} grow by a "
            "factor "
            f"$e^{{\\varepsilon}}$, up to {odds_factor(epsilon)}. Above ε ≈ 10 this is almost no formal protection, "
            "even though noise was added; lower ε (more noise, fewer rounds/steps) for a meaningful guarantee.")


@st.cache_data(show_spinner=False, max_entries=256)
def cached_densities(mechanism: str, epsilon: float, delta: float, sensitivity: float, count_d: float = 3.0,
                     count_d2: float = 2.0):
    return count_query_densities(mechanism=mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                                 count_d=count_d, count_d2=count_d2)


ADVANCED_LABEL = "Advanced composition (or naive, if smaller)"
#: one colour and dash per method, so overlapping curves (RDP and PLD often do) stay distinguishable
METHOD_STYLES = {
    "Naive composition": dict(color=palette.GREY, dash="dot"),
    ADVANCED_LABEL: dict(color=palette.ORANGE, dash="dash"),
    "Moments accountant (RDP)": dict(color=palette.BLUE, dash="solid"),
    "Privacy loss distribution (PLD)": dict(color=palette.GREEN, dash="dashdot"),
}
#: each method's short name: the Accountant page's metrics and its table's headers (the full names, one header each,
#: made the table wider than the page at 1280 px and cut the PLD column to "Privacy loss distribution (PLD")
SHORT_LABELS = {"Naive composition": "Naive", ADVANCED_LABEL: "Advanced", "Moments accountant (RDP)": "RDP",
                "Privacy loss distribution (PLD)": "PLD"}


def best_of_compositions(df: pd.DataFrame) -> pd.DataFrame:
    """Replace the advanced-composition curve by ``min(naive, advanced)`` point by point.

    Both are valid (epsilon, delta) bounds at the same total delta (see
    :func:`dpcore.accounting.dpsgd_composition_bound`), so their minimum is one too; the
    advanced theorem alone exceeds the naive sum when each step's epsilon is large
    (its ``k eps (e^eps - 1)`` term), e.g. sigma = 0.5. Dwork & Roth (2014) Thm 3.16, 3.20.
    """
    naive = df[df.method == "Naive composition"].set_index("epochs").epsilon
    adv = df.method == "Advanced composition"
    out = df.copy()
    if adv.any() and len(naive):
        out.loc[adv, "epsilon"] = [min(e, naive.get(x, math.inf)) for x, e in zip(df.epochs[adv], df.epsilon[adv])]
    out.loc[adv, "method"] = ADVANCED_LABEL
    return out


#: What a computation warned, kept with its value by ``st.cache_data``: ``(message, category)`` pairs, each once.
Said = tuple[tuple[str, type[Warning]], ...]


def _keeping_warnings(compute: Callable[[], Any]) -> tuple[Any, Said]:
    """``compute()`` and what it warned in this thread (another visitor's run is not in it), each message once."""
    with caught_warnings() as caught:
        value = compute()
    return value, tuple({str(w.message): w.category for w in caught}.items())


def _said_again(value: Any, said: Said) -> Any:
    """``value``, its warnings raised again in the caller (:func:`~dpcore.ui.run_guarded` around it shows them)."""
    for message, category in said:
        warnings.warn(message, category, stacklevel=user_stacklevel())
    return value


@st.cache_data(show_spinner=False, max_entries=64)
def _comparison(noise_multiplier: float, sample_rate: float, delta: float, max_epochs: float, points: int,
                methods: tuple[str, ...]) -> tuple[pd.DataFrame, Said]:
    def compute() -> pd.DataFrame:
        epochs = [max_epochs * i / (points - 1) for i in range(points)]
        extra = ("naive",) if "advanced" in methods and "naive" not in methods else ()
        df = composition_comparison(noise_multiplier=noise_multiplier, sample_rate=sample_rate, delta=delta,
                                    epochs=epochs, methods=tuple(methods) + extra)
        df = best_of_compositions(df)
        return df[df.method != "Naive composition"].reset_index(drop=True) if extra else df
    return _keeping_warnings(compute)


def cached_comparison(noise_multiplier: float, sample_rate: float, delta: float, max_epochs: float, points: int,
                      methods: tuple[str, ...]) -> pd.DataFrame:
    """The epsilon curves of :func:`composition_comparison`, advanced composition as ``min(naive, advanced)``.

    This and the other ``cached_*`` accounting wrappers keep the warnings of their computation with their value
    (``st.cache_data`` runs it once for the whole server) and raise them again on every call: why a PLD number is
    the RDP accountant's reaches every visitor who is shown it, not only the first."""
    return _said_again(*_comparison(noise_multiplier, sample_rate, delta, max_epochs, points, methods))


@st.cache_data(show_spinner=False, max_entries=256)
def _noise(target_epsilon: float, delta: float, sample_rate: float, steps: int, accountant: str) -> tuple[float, Said]:
    return _keeping_warnings(lambda: calibrate_noise_multiplier(
        target_epsilon=target_epsilon, delta=delta, sample_rate=sample_rate, steps=steps, accountant=accountant,
        pld_discretization=pld_discretization_for(target_epsilon)))


def cached_noise(target_epsilon: float, delta: float, sample_rate: float, steps: int, accountant: str) -> float:
    """The noise for ``target_epsilon``, on the PLD grid a training run calibrated to it uses (check it with
    ``cached_epsilon(..., target=target_epsilon)``); its calibration's warnings are said on every call."""
    return _said_again(*_noise(target_epsilon, delta, sample_rate, steps, accountant))


@st.cache_data(show_spinner=False, max_entries=256)
def _epsilon(noise_multiplier: float, sample_rate: float, steps: int, delta: float, accountant: str,
             target: float | None) -> tuple[float, Said]:
    return _keeping_warnings(lambda: dpsgd_epsilon(
        noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=steps, delta=delta, accountant=accountant,
        pld_discretization=pld_discretization_for(target)))


def cached_epsilon(noise_multiplier: float, sample_rate: float, steps: int, delta: float, accountant: str,
                   target: float | None = None) -> float:
    """Epsilon after ``steps``; ``target``: the epsilon the noise was calibrated to (its PLD grid). Why it is
    infinity or the RDP accountant's is said on every call."""
    return _said_again(*_epsilon(noise_multiplier, sample_rate, steps, delta, accountant, target))


def _long(xs, columns: dict) -> pd.DataFrame:
    """Long-form rows (x, y, series) of several series over the same ``xs``: {series name: ys}."""
    return pd.concat([pd.DataFrame({"x": list(xs), "y": list(ys), vega.FIELD: name}) for name, ys in columns.items()],
                     ignore_index=True)


#: the plot's height of the home page's two charts in the page's flow, and in a tab of the stage when presenting (the
#: tabs' row and the ratio's sentence above it take about 50 and 70 pixels, which put the legends under the ratio and
#: the curves below a 720-pixel projector's edge)
CHART_HEIGHT, TABBED_HEIGHT = 340, 280


def densities_figure(df: pd.DataFrame, summary: dict, *, count_d: float, count_d2: float,
                     tabbed: bool = False) -> alt.Chart:
    """The released answer's density on D and on D′ (Vega-Lite: drawn on the home page, :mod:`dpcore.ui.vega`);
    ``tabbed``: in a tab of the presenting stage (:data:`TABBED_HEIGHT`)."""
    series = [vega.Series(f"answer on D (true count {count_d:g})", palette.BLUE),
              vega.Series(f"answer on D′ (true count {count_d2:g})", palette.VERMILLION, "dash")]
    rows = _long(df.x, {series[0].name: df.density_D, series[1].name: df.density_D2})
    return alt.Chart(rows).mark_line(strokeWidth=3).encode(
        x=alt.X("x:Q", title="noisy count released"),
        y=alt.Y("y:Q", title="probability density"),
        tooltip=[alt.Tooltip(f"{vega.FIELD}:N", title="curve"), alt.Tooltip("x:Q", title="released", format=".2f"),
                 alt.Tooltip("y:Q", title="density", format=".3g")],
        **vega.series_encoding(series)).properties(height=TABBED_HEIGHT if tabbed else CHART_HEIGHT)


def ratio_figure(df: pd.DataFrame, summary: dict, *, tabbed: bool = False) -> alt.Chart:
    """The privacy-loss ratio p_D(x) / p_D′(x) on a log axis, between the band [e^-ε, e^ε] (Vega-Lite); ``tabbed``:
    as :func:`densities_figure`'s."""
    e = summary["e_epsilon"]
    ratio = df.log_ratio.map(math.exp)
    lo = min(float(ratio.min()), 1 / e) / 2
    hi = max(float(ratio.max()), e) * 2
    lo, hi = max(lo, 1 / (e**4) / 2), min(hi, (e**4) * 2)  # the Gaussian's tails run off: show +-4 eps
    series = [vega.Series("ratio p_D(x) / p_D′(x)", palette.BLUE),
              # rounded up, as the e^ε tile above the chart and the verdict's "odds change at most ...×" (4.49 at
              # ε = 1.5: the legend read 4.48 beside them)
              vega.Series(f"eᵋ = {round_epsilon(e):.3g}", palette.VERMILLION, "dot"),
              vega.Series(f"e⁻ᵋ = {1 / e:.3g}", palette.VERMILLION, "dash")]
    x0, x1 = float(df.x.min()), float(df.x.max())
    rows = pd.concat([_long(df.x, {series[0].name: ratio}),
                      _long([x0, x1], {series[1].name: [e, e], series[2].name: [1 / e, 1 / e]})],
                     ignore_index=True)
    return alt.Chart(rows).mark_line(strokeWidth=3, clip=True).encode(
        x=alt.X("x:Q", title="noisy count released"),
        y=alt.Y("y:Q", title="privacy-loss ratio (log scale)",
                scale=alt.Scale(type="log", domain=[lo, hi], nice=False),
                # ticks of our own: at a projector's type size Vega-Lite dropped colliding labels, 1 among them
                axis=alt.Axis(format="~g", values=log_ticks(lo, hi, most=7))),
        tooltip=[alt.Tooltip(f"{vega.FIELD}:N", title="curve"), alt.Tooltip("x:Q", title="released", format=".2f"),
                 alt.Tooltip("y:Q", title="ratio", format=".3g")],
        **vega.series_encoding(series)).properties(height=TABBED_HEIGHT - 60 if tabbed else CHART_HEIGHT - 20)


def comparison_table(df: pd.DataFrame) -> pd.DataFrame:
    """Epsilon per method (columns, headed by :data:`SHORT_LABELS`) after each number of epochs, 3 significant
    figures, as shown."""
    order = list(df.method.unique())
    table = df.pivot(index="epochs", columns="method", values="epsilon")[order]
    table = table.map(format_epsilon).reset_index()
    table["epochs"] = table.epochs.map(lambda v: float(f"{v:.3g}"))
    return table.rename(columns={"epochs": "Epochs", **SHORT_LABELS})


def comparison_figure(df: pd.DataFrame, *, log_y: bool = True) -> go.Figure:
    fig = go.Figure()
    groups = list(df.groupby("method", sort=False))
    # the naive curve is drawn after the advanced one (which equals it where naive is smaller), legend order kept
    for rank, (method, g) in sorted(enumerate(groups), key=lambda t: t[1][0] == "Naive composition"):
        fig.add_scatter(x=g.epochs, y=g.epsilon.where(g.epsilon > 0), mode="lines", name=method, legendrank=rank,
                        line=dict(width=3, **METHOD_STYLES.get(method, {})))
    fig.update_layout(xaxis_title="epochs", yaxis_title="ε spent (δ fixed)", yaxis_type="log" if log_y else "linear",
                      height=440, margin=dict(t=20, b=40))
    palette.legend_below(fig)
    return readable_log_ticks(fig, "y") if log_y else fig


__all__ = [
    "ADVANCED_LABEL",
    "METHOD_STYLES",
    "SHORT_LABELS",
    "WEAK_EPSILON",
    "best_of_compositions",
    "comparison_table",
    "weak_guarantee_note",
    "cached_densities",
    "cached_comparison",
    "cached_noise",
    "cached_epsilon",
    "densities_figure",
    "ratio_figure",
    "comparison_figure",
    "neighbouring_databases",
    "noisy_count",
]
