"""Streamlit side of the home page's classroom demos: repeated answers, the Bayesian reading of epsilon and the
floating-point attack on textbook noise."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from ..audit.floating_point import FloatingPointAttack, floating_point_attack
from ..explain import posterior_bound, repeated_answers
from ..mechanisms import Laplace
from ..mechanisms.secure import SecureLaplace


@st.cache_data(show_spinner=False, max_entries=128)
def cached_repeated_answers(mechanism: str, epsilon: float, delta: float, sensitivity: float, true_count: float,
                            asks: int, budget: float | None, seed: int) -> pd.DataFrame:
    return repeated_answers(mechanism=mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                            true_count=true_count, asks=asks, budget=budget, seed=seed)


def averaging_figure(df: pd.DataFrame, *, true_count: float, budget: float | None) -> go.Figure:
    """Answers and their running mean (top), the epsilon spent (bottom), against the number of asks."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.16, row_heights=[0.6, 0.4],
                        subplot_titles=("Noisy answers and their running mean", "ε spent so far"))
    shown = df[df.released]
    fig.add_trace(go.Scatter(x=shown.ask, y=shown.answer, mode="markers", name="One noisy answer",
                             marker=dict(color="#999999", size=6, symbol="circle-open")), row=1, col=1)
    fig.add_trace(go.Scatter(x=shown.ask, y=shown.running_mean, mode="lines", name="Mean of the answers so far",
                             line=dict(color="#D55E00", width=3)), row=1, col=1)
    fig.add_hline(y=true_count, line=dict(color="#0072B2", dash="dash"), annotation_text=f"exact count {true_count:g}",
                  row=1, col=1)
    fig.add_trace(go.Scatter(x=df.ask, y=df.epsilon, mode="lines+markers", name="ε spent (accountant)",
                             line=dict(color="#0072B2", width=2), marker=dict(symbol="square", size=5)), row=2, col=1)
    if budget is not None:
        # the label sits under its line: above it, it would run into the refused band's label on a phone
        fig.add_hline(y=budget, line=dict(color="#CC79A7", dash="dot"), annotation_text=f"budget {budget:g}",
                      annotation_position="bottom right", row=2, col=1)
    refused = df[~df.released]
    if len(refused):
        band = dict(x0=refused.ask.min() - 0.5, x1=df.ask.max() + 0.5, fillcolor="#CC79A7", opacity=0.08, line_width=0)
        fig.add_vrect(**band, annotation_text="refused: over budget", annotation_position="top left", row=1, col=1)
        fig.add_vrect(**band, row=2, col=1)  # named once, in the top panel
    fig.update_xaxes(title="Times the same question was asked", row=2, col=1)
    fig.update_layout(height=460, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))
    return fig


def posterior_figure(*, epsilon: float, prior: float) -> go.Figure:
    """The attacker's possible beliefs after one release, for every prior, with the chosen prior marked."""
    p = np.linspace(0.0, 1.0, 201)
    low, high = posterior_bound(p, epsilon=epsilon)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=p, y=low, mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=p, y=high, mode="lines", fill="tonexty", fillcolor="rgba(0,114,178,0.15)",
                             line=dict(color="#0072B2", width=2), name=f"Beliefs reachable at ε = {epsilon:g}"))
    fig.add_trace(go.Scatter(x=p, y=p, mode="lines", line=dict(color="#888888", dash="dash"),
                             name="No release: belief = prior"))
    lo1, hi1 = posterior_bound(prior, epsilon=epsilon)
    fig.add_trace(go.Scatter(x=[prior, prior], y=[float(lo1), float(hi1)], mode="lines+markers",
                             line=dict(color="#D55E00", width=4), marker=dict(size=10, symbol="diamond"),
                             name=f"Prior {prior:.0%}: belief between {float(lo1):.0%} and {float(hi1):.0%}"))
    fig.update_xaxes(title="Attacker's belief before the release (prior)", tickformat=".0%")
    fig.update_yaxes(title="Belief after seeing the answer (posterior)", tickformat=".0%", range=[0, 1])
    fig.update_layout(height=420, margin=dict(l=10, r=10, t=20, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))
    return fig


def e_to_the(epsilon: float) -> str:
    return f"{math.exp(epsilon):.3g}"


@st.cache_data(show_spinner="Attacking 2 × 1000 releases of each kind of noise…", max_entries=32)
def cached_float_attack(epsilon: float, x: float, x_prime: float, releases: int = 1000) -> list[FloatingPointAttack]:
    """Mironov's attack on the seeded textbook Laplace and on the secure discrete Laplace, same ε and answers."""
    return [floating_point_attack(Laplace(epsilon=epsilon), releases=releases, x=x, x_prime=x_prime, seed=0),
            floating_point_attack(SecureLaplace(epsilon=epsilon), releases=releases, x=x, x_prime=x_prime)]


def float_attack_table(results: list[FloatingPointAttack]) -> pd.DataFrame:
    """One row per kind of noise: how often the attacker was certain, and the ε the counts prove."""
    names = {"Laplace": "Textbook floating-point Laplace (seeded numpy)",
             "SecureLaplace": "Secure discrete Laplace (OS randomness, exact sampler)"}
    return pd.DataFrame({
        "Noise": [names.get(r.mechanism, r.mechanism) for r in results],
        "Attacker certain (releases from D)": [f"{r.certain_when_x} of {r.releases} ({r.certain_rate:.0%})"
                                               for r in results],
        "Wrongly certain (from D′)": [r.certain_when_x_prime for r in results],
        "ε claimed": [r.epsilon for r in results],
        "ε proven (95%)": [round(r.epsilon_lower_bound, 2) for r in results],
    })
