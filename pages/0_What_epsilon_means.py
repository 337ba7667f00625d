"""Home page: what epsilon and delta mean, made tangible on a count query; links to every page."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import math

import streamlit as st

from dpcore.defaults import DELTA, EPSILON
from dpcore.teaching.verdict import round_epsilon
from dpcore.ui import page_header, run_guarded, seed_input, show_frame, verdict_line
from dpcore.ui.accounting import (
    cached_densities,
    densities_figure,
    neighbouring_databases,
    noisy_count,
    ratio_figure,
)
from dpcore.ui.common import bounded_number, format_epsilon, format_noise
from dpcore.ui.explain import (
    averaging_charts,
    averaging_text,
    belief_text,
    cached_float_attack,
    cached_repeated_answers,
    e_to_the,
    float_attack_table,
    posterior_figure,
)
from dpcore.ui.lesson import lesson_plan_markdown
from dpcore.ui.navigation import page_grid
from dpcore.ui.present import control_area, headline_tabs
from dpcore.ui.vega import cached_specs
from dpcore.ui.vega import show as show_chart

page_header(
    "What does ε mean?",
    "Differential privacy promises that **anything released looks almost the same whether or not one person's "
    "record is in the data**. ε bounds *how* much the two can differ, δ a small amount of probability by which "
    "they may differ beyond that bound. Play with a count query below, then visit the pages to see private machine "
    "learning trained live."
)

with st.expander("For a teacher: the lesson plan, four stops on one dataset and one ε", icon=":material/school:"):
    st.markdown(lesson_plan_markdown())
    st.caption("The same plan is in the project's `docs/lesson.md`.")

with st.sidebar:
    st.header("Knobs")
    mech = st.radio("Mechanism", ["laplace", "gaussian"], format_func=str.capitalize, key="home.mech",
                    help="Laplace gives pure ε-DP; Gaussian gives (ε, δ)-DP and composes better.")
    eps = control_area(st.sidebar).slider("Epsilon (ε)", 0.05, 5.0, EPSILON, 0.05, key="home.eps")
    # the Gaussian's guarantee is (ε, δ): its verdict names the δ box's value (drawn below it, read from the session)
    verdict_line(eps, container=control_area(st.sidebar),
                 delta=float(st.session_state.get("home.delta", DELTA)) if mech == "gaussian" else 0.0)
    # δ only for the Gaussian: a greyed-out δ under Laplace read below the 4.5:1 contrast a label needs
    if mech == "gaussian":
        delta = st.select_slider("Delta (δ)", [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2], value=DELTA,
                                 key="home.delta", format_func=lambda d: f"{d:.0e}",
                                 help="The Gaussian gives (ε, δ)-DP: δ is how much probability any set of answers may "
                                      "have beyond e^ε times its probability on the other database (section 2's δ "
                                      "actually used). It is not the chance that the ε bound fails: the answers "
                                      "where the ratio passes e^ε are likelier than δ.")
    else:
        delta = DELTA
        st.caption("δ = 0: Laplace is pure ε-DP (choose the Gaussian to see δ).")
    sens = st.slider("Declared sensitivity Δ", 1.0, 5.0, 1.0, 0.5, key="home.sens",
                     help="The most one record can move the answer, as declared by the analyst. For a count "
                          "it is 1; declaring more is still private, it only adds noise.")
    seed = seed_input("home.seed")

st.header("1 · Two neighbouring databases")
d, d2 = neighbouring_databases()
c1, c2, c3 = st.columns([2, 2, 3])
c1.markdown("**D**")
c1.table(d.style.hide(axis="index"))
c2.markdown("**D′**: Chandler's record changed")
c2.table(d2.style.apply(lambda r: ["background-color: #ffe08a" if r.Name == "Chandler" else "" for _ in r],
                       axis=1).hide(axis="index"))
true_d, true_d2 = int(d["Has diabetes"].sum()), int(d2["Has diabetes"].sum())
c3.markdown(
    f"Query: **how many people have diabetes?** On D the answer is {true_d}, on D′ it is {true_d2}. "
    "Publish the exact count and anyone who knows the other four records learns Chandler's. "
    "A private answer adds noise scaled to the sensitivity (here one record moves the count by at most 1)."
)
answer = run_guarded(noisy_count, mechanism=mech, epsilon=eps, delta=delta, sensitivity=sens, true_count=true_d,
                     seed=seed)
if answer is not None:
    c3.metric("A noisy answer on D (this seed)", f"{answer:.2f}", help="Change the seed to draw another.")

st.header("2 · The released answer's distribution on D and on D′")
res = run_guarded(cached_densities, mech, eps, delta, sens, float(true_d), float(true_d2))
if res is not None:
    df, summary = res
    m1, m2, m3 = st.columns(3)
    # rounded the side that fails closed: the noise and δ up, the ratio's bound up (never a stronger-looking guarantee)
    m1.metric("Noise scale (people)", format_noise(summary["noise_scale"]),
              help="How far, in people, the noise typically moves the count: Laplace b = sensitivity/ε; Gaussian σ "
                   "from the analytic calibration (Balle & Wang 2018).")
    m2.metric("$e^{\\varepsilon}$ (allowed ratio)", f"{round_epsilon(summary['e_epsilon']):.3g}")
    if mech == "laplace":
        largest = round_epsilon(pow(2.718281828459045, summary["max_abs_log_ratio"]))
        m3.metric("Largest ratio $p_D / p_{D'}$", f"{largest:.3g}",
                  help="Never above $e^{\\varepsilon}$: pure ε-DP.")
    else:
        m3.metric("δ actually used", f"{round_epsilon(summary['delta_actual']):.2e}",
                  help="$\\Pr_D[S] - e^{\\varepsilon} \\Pr_{D'}[S]$ over the outputs S where the ratio exceeds "
                       "$e^{\\varepsilon}$; at most δ.")
    # presenting, both beside ε, one tab each: the lesson asks the room to move ε and watch both change
    curves_box, ratio_box = headline_tabs("The two curves", "Their ratio and its band")
    tabbed = ratio_box is not None
    show_chart(cached_specs(densities_figure, df, summary, count_d=true_d, count_d2=true_d2, tabbed=tabbed), curves_box,
               key="home.densities",
               alt_text=f"The released answer's density on D (peak at {true_d}) and on D′ (peak at {true_d2}): two "
                        f"overlapping curves of noise scale {format_noise(summary['noise_scale'])}.")
    if sens > 1:
        st.caption(f"The noise is calibrated to the declared Δ = {sens:g}, more than the count's true "
                   "sensitivity of 1: still private, just noisier than it needs to be.")
    (ratio_box or st).markdown(
        "**The privacy-loss ratio** $p_D(x)/p_{D'}(x)$: an observer who sees x can update their belief that the data "
        "is D rather than D′ by at most this factor. " + (
            "For Laplace it never leaves the band $[e^{-\\varepsilon}, e^{\\varepsilon}]$." if mech == "laplace" else
            "For the Gaussian it leaves the band far in the tails; those outputs are where δ is spent."
        )
    )
    show_chart(cached_specs(ratio_figure, df, summary, tabbed=tabbed), ratio_box, key="home.ratio",
               alt_text="The ratio of the two densities against the released answer, on a log axis, between the "
                        f"lines e^-ε and e^ε = {round_epsilon(summary['e_epsilon']):.3g}.")
    st.caption("Smaller ε → wider noise → the two curves overlap more → less can be learned about Chandler.")

st.header("3 · Two more ways to read ε")
ask_tab, belief_tab = st.tabs(["Ask again and again", "What can an attacker believe?"])
with ask_tab:
    a1, a2 = st.columns(2)
    asks = a1.slider("Times the same question is asked", 1, 200, 50, key="home.asks")
    capped = a2.checkbox("Cap the total budget", True, key="home.capped")
    budget = bounded_number(a2, "Total ε budget", low=0.1, high=100.0, default=25.0, key="home.budget", value=25.0,
                            step=0.5, disabled=not capped)
    if capped:
        verdict_line(budget, container=a2, compare=False)
    rep = run_guarded(cached_repeated_answers, mech, eps, delta, sens, float(true_d), int(asks),
                      float(budget) if capped else None, int(seed))
    if rep is not None:
        answers_chart, spent_chart = cached_specs(averaging_charts, rep, true_count=true_d,
                                                  budget=float(budget) if capped else None)
        show_chart(answers_chart, key="home.averaging", alt_text="Each noisy answer and the running mean of the "
                   "answers against the number of times the question was asked, with the exact count marked.")
        show_chart(spent_chart, key="home.spent", alt_text="The ε spent so far against the number of times the "
                   "question was asked" + (", with the budget marked." if capped else "."))
        st.markdown(averaging_text(rep, mechanism=mech, epsilon=eps, delta=delta, sensitivity=sens,
                                   true_count=true_d, budget=float(budget) if capped else None))
with belief_tab:
    prior = st.slider("Attacker's prior belief that Chandler has diabetes", 0.01, 0.99, 0.5, 0.01,
                      key="home.prior", format="%.2f")
    show_chart(cached_specs(posterior_figure, epsilon=eps, prior=prior), key="home.posterior",
               alt_text="The range of beliefs an attacker can reach after one release, for every prior belief, with "
                        "the chosen prior marked.")
    st.markdown(
        f"Whatever noisy answer is published, it is at most e^ε = {e_to_the(eps)} times more likely on D than on "
        f"D′. So an attacker who believed Chandler had diabetes with probability p can afterwards believe it with "
        f"probability at most e^ε·p / (e^ε·p + 1 − p): with ε = {eps:g} and p = {prior:.0%}, at most "
        f"**{belief_text(math.exp(eps) * prior / (math.exp(eps) * prior + 1 - prior))}**. A small ε keeps the belief "
        "close "
        "to the prior, whatever the attacker knew before."
        + (" With the Gaussian this holds except on the rare answers in its tails, where the ratio leaves its band "
           "(section 2) and δ is spent: there the belief can move further." if mech == "gaussian" else ""))

st.header("4 · Noise you could ship")
st.markdown(
    "Everything on these pages draws its noise from a **seed** (0 unless you change it), so a class sees the same "
    "picture for the same inputs. A real release must not: anyone who knows the seed can subtract the noise. Worse, "
    "textbook Laplace noise computed in floating point leaks even without the seed (Mironov 2012): the exact "
    "doubles that *count + noise* can produce depend on the count, so an attacker who sees one release can often "
    "check that D′ could **never** have produced it. The secure mode rounds the answer to a fine grid, adds exact "
    "integer Laplace noise (Canonne, Kamath & Steinke 2020) drawn from the operating system's cryptographic source, "
    "and refuses seeds; the grid costs at most 0.2% more noise.")
if st.button(f"Attack both kinds of noise at ε = {eps:g} (count {true_d} on D, {true_d2} on D′)",
             key="home.float_attack") or st.session_state.get("home.float_attack_ran"):
    st.session_state["home.float_attack_ran"] = True
    attack = run_guarded(cached_float_attack, float(eps), float(true_d), float(true_d2))
    if attack is not None:
        show_frame(float_attack_table(attack), key="home.float_attack_table")
        textbook, secure = attack
        st.markdown(
            f"ε-DP allows any event at most e^ε = {e_to_the(eps)} times more often on D than on D′. The event "
            f"\"D′ cannot have produced this\" never happens on D′, yet it happened for **{textbook.certain_rate:.0%}"
            f"** of the textbook releases from D: the counts prove ε ≥ "
            f"{format_epsilon(textbook.epsilon_lower_bound, lower_bound=True)} at 95% "
            f"confidence, against the claimed {eps:g}. On the secure releases it happened "
            f"{secure.certain_when_x} times: every grid point can come from either database. (The demonstration "
            "attacks Laplace whichever mechanism is picked above.)")

st.header("5 · Private machine learning, live")
page_grid()
