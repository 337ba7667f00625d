"""Accountant: epsilon spent by DP-SGD under four ways of counting, and the inverse problem."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import streamlit as st

from dpcore.accounting import ACCOUNTANTS, DEFAULT_ACCOUNTANT, METHOD_LABELS, steps_for
from dpcore.defaults import DELTA, EPSILON
from dpcore.ui import page_header, run_guarded, show_frame, verdict_line
from dpcore.ui.accounting import (
    SHORT_LABELS,
    cached_comparison,
    cached_epsilon,
    cached_noise,
    comparison_figure,
    comparison_table,
    weak_guarantee_note,
)
from dpcore.ui.common import bounded_number, format_epsilon, format_noise
from dpcore.ui.links import stop_page
from dpcore.ui.present import control_area, headline_area

PLD_LABEL = METHOD_LABELS["pld"]

page_header(
    "Privacy accountant",
    "DP-SGD touches the data thousands of times; how much ε that costs depends on how you count. "
    "The moments accountant (RDP) and privacy loss distributions (PLD) are far tighter than the composition "
    "theorems, which is why deep learning with differential privacy is practical (Abadi et al. 2016, figure 2).",
)

with st.sidebar:
    st.header("DP-SGD settings")
    n = bounded_number(st, "Training-set size n", low=10, high=10_000_000, default=60_000, key="acct.n", whole=True,
                       value=60_000, step=1000)
    batch = bounded_number(st, "Expected batch size L", low=1, high=1_000_000, default=600, key="acct.batch",
                           whole=True, value=600, step=10)
    sigma = bounded_number(control_area(st.sidebar), "Noise multiplier σ", low=0.5, high=100.0, default=4.0,
                           key="acct.sigma", name="σ", value=4.0, step=0.1,
                           help="Noise standard deviation divided by the clip norm C, from 0.5 to 100. Below ~0.7 "
                                "the guarantee is nominal at the default 400 epochs (ε above 30, above 100 at 0.5).")
    delta = st.select_slider("δ", [1e-7, 1e-6, 1e-5, 1e-4, 1e-3], value=DELTA, key="acct.delta",
                             format_func=lambda d: f"{d:.0e}")
    max_epochs = bounded_number(st, "Epochs shown", low=1, high=500, default=400, key="acct.epochs", whole=True,
                                value=400, step=10)
    methods = st.multiselect("Methods", ["naive", "advanced", "rdp", "pld"], ["naive", "advanced", "rdp", "pld"],
                             key="acct.methods", format_func=lambda m: {"naive": "Naive composition",
                             "advanced": "Advanced composition", "rdp": "Moments accountant (RDP)",
                             "pld": "PLD"}[m])
    log_y = st.checkbox("Log scale for ε", True, key="acct.logy")

if batch > n:
    st.error(f"The batch size L={batch} is larger than n={n}; choose L ≤ n.")
    stop_page()
q = batch / n
st.markdown(f"Sampling rate **q = L/n = {q:.4g}** (each record joins a batch with this probability); "
            f"one epoch = 1/q = {1 / q:.4g} step{'' if 1 / q == 1 else 's'}.")
if not methods:
    st.info("Pick at least one method in the sidebar.")
    stop_page()

with st.spinner("Composing the privacy loss over every step…"):
    df = run_guarded(cached_comparison, float(sigma), float(q), float(delta), float(max_epochs), 41, tuple(methods))
if df is not None:
    last = df[df.epochs == df.epochs.max()].set_index("method")
    final = last.epsilon.copy()
    if PLD_LABEL in final.index:  # the number a reader copies: on the grid ``python -m dpcore epsilon`` uses
        fine = run_guarded(cached_epsilon, float(sigma), float(q), int(last.steps[PLD_LABEL]), float(delta), "pld")
        if fine is not None:  # said why, where the RDP accountant answered for PLD
            final[PLD_LABEL] = fine
    st.markdown(f"**ε spent after {max_epochs:g} epochs** (δ = {delta:.0e}):")
    cols = st.columns(len(final))
    short = SHORT_LABELS
    for c, (m, e) in zip(cols, final.items()):
        c.metric(short.get(m, m), f"ε = {format_epsilon(e)}", help=m)
        verdict_line(e, container=c, short=True)
    tightest = short.get(str(final.idxmin()), str(final.idxmin()))
    verdict_line(float(final.min()), what=f"The tightest accounting ({tightest})", delta=float(delta))
    if (note := weak_guarantee_note(float(final.min()), unit="per training record (tightest method shown)")):
        st.warning(note)
    headline_area().plotly_chart(comparison_figure(df, log_y=log_y), width="stretch")
    st.caption("Naive and advanced composition treat each step as a subsampled Gaussian mechanism with its own δ "
               "(amplification by Poisson subsampling to ln(1 + q(e^ε − 1)), Kasiviswanathan et al. 2008; Balle, "
               "Barthe & Gaboardi 2018), composed naively or by advanced composition (Dwork, Rothblum & Vadhan "
               "2010); both are valid bounds at the same total "
               "δ, so the advanced curve shows the smaller of the two (advanced composition alone is worse than the "
               "naive sum when each step's ε is large, e.g. σ = 0.5). RDP and PLD come from Google's dp_accounting "
               "on the event SelfComposed(PoissonSampled(q, Gaussian(σ)), steps)."
               + (f" The PLD curve and table use a coarser grid (1e-3), quick to draw and a slightly looser upper "
                  f"bound ({format_epsilon(last.epsilon[PLD_LABEL])} after {max_epochs:g} epochs); the PLD number "
                  "above uses "
                  "dp_accounting's finer 1e-4 grid, as `python -m dpcore epsilon --accountant pld` does."
                  if PLD_LABEL in final.index else ""))
    show_frame(comparison_table(df), key="acct.table")

st.header("The inverse: how much noise for a target ε?")
st.caption(f"Uses the sidebar's δ = {delta:.0e} and sampling rate q = L/n = {q:.4g}; choose the target ε, the epochs "
           "and the accountant here.")
c1, c2, c3 = st.columns(3)
target = bounded_number(c1, "Target ε", low=0.01, high=100.0, default=EPSILON, key="acct.target", value=EPSILON,
                        step=0.1)
epochs = bounded_number(c2, "Epochs planned", low=0.1, high=10_000.0, default=10.0, key="acct.plan_epochs",
                        value=10.0, step=1.0)
acct = c3.radio("Accountant", list(ACCOUNTANTS), index=ACCOUNTANTS.index(DEFAULT_ACCOUNTANT), horizontal=True,
                key="acct.acct", format_func=lambda a: a.upper())
steps = run_guarded(steps_for, epochs=epochs, sample_rate=q)
if steps is not None:
    told: list = []  # the calibration's warnings: the check of its answer may say the same, said once
    s = run_guarded(cached_noise, float(target), float(delta), float(q), int(steps), acct, said=told)
    if s is not None and (e := run_guarded(cached_epsilon, s, float(q), int(steps), float(delta), acct, float(target),
                                           hide_warnings=tuple(str(w.message) for w in told))) is not None:
        m1, m2, m3 = st.columns(3)
        m1.metric("Noise multiplier needed σ", format_noise(s, 4))  # rounded up: never less noise than needed
        m2.metric("Steps", f"{steps:,}")
        m3.metric("ε check with that σ", format_epsilon(e, 4), help="Never above the target.")
        verdict_line(float(target), what=f"Target ε = {target:g}", delta=float(delta))
