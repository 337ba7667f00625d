"""Papers, reproduced: a published figure or table, its numbers, and our implementation run live beside it."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import streamlit as st

from dpcore.datasets import load_dataset
from dpcore.reproduce import get_reproduction, reproduction_names
from dpcore.ui import page_header, run_guarded, show_frame, verdict_line
from dpcore.ui.common import DASH, show_plain_table
from dpcore.ui.ledger import record_release, show_data_total
from dpcore.ui.links import stop_page
from dpcore.ui.present import control_area, headline_area, presenting_stage
from dpcore.ui.reproduce import (
    cached_reproduction,
    checks_markdown,
    comparison_table,
    curve_table,
    overview_table,
    progress_callback,
    reproduction_figure,
    status_box,
)

page_header(
    "Papers, reproduced",
    "The results this app is built on, run live: pick a paper, read what it reports, and run our implementation "
    "on the same data (or the closest data that ships offline). Every number in the table's \"Ours\" column is "
    "computed now; every claim below it is checked, with its tolerance written out.",
)

names = reproduction_names()
name = control_area(st).selectbox(  # on the page, wide enough for the paper's name and result
    "Paper", names, key="repro.name",
    format_func=lambda n: f"{get_reproduction(n).cite} — {get_reproduction(n).title}")
entry = get_reproduction(name)
if presenting_stage():  # the stage's narrow column cuts the box's text ("Abadi et al. 2016 — The moments a"): in full
    control_area(st).markdown(f"**{entry.cite}** — {entry.title}")

st.subheader(entry.title)
st.markdown(f"**{entry.citation}** · {entry.where}" + (f" · [read the paper]({entry.url})" if entry.url else ""))
left, right = st.columns(2)
left.markdown(f"**What the paper reports.** {entry.published}")
right.markdown(f"**What runs here.** {entry.setup}")
st.caption(f"**How the setup differs.** {entry.difference}")
if entry.epsilon is not None:
    verdict_line(entry.epsilon, what=f"The headline result sits at ε = {entry.epsilon:g}"
                 + (f" ({entry.epsilon_note})" if entry.epsilon_note else ""), delta=entry.delta)

store = st.session_state.setdefault("repro.results", {})


def overview() -> None:
    """Every entry at a glance: those run in this session, and a button that runs the rest."""
    with st.expander("Every paper at a glance"):
        missing = [n for n in names if (n,) not in store]
        if missing and st.button(f"Run the {len(missing)} entries not run yet (about two minutes in all)",
                                 key="repro.all"):
            bar = st.progress(0.0, text="Starting…")
            for i, n in enumerate(missing):
                bar.progress(i / len(missing), text=f"{i + 1} / {len(missing)}: {get_reproduction(n).title}")
                run_guarded(cached_reproduction, n)
            bar.empty()
            st.rerun()  # redraw with every result (the selected entry's included)
        done = {n: store[(n,)] for n in names if (n,) in store}
        if done:
            show_frame(overview_table(done), key="repro.overview")
        else:
            st.caption("No entry has been run in this session yet.")


ran = (name,) in store
slot = control_area(st).empty()  # the button, gone once this entry's result is here
if not ran and not slot.button("Run it live", type="primary", key="repro.run",
                               help="Seeded runs: the same numbers for every visitor, computed once per server."):
    # presenting: where the chart will come, beside the button (the stage's right half stood empty)
    headline_area().info("Press **Run it live** to reproduce this result (a few seconds to a minute on a laptop).")
    overview()
    stop_page()

bar = st.progress(0.0, text="Starting…")
result = run_guarded(cached_reproduction, name, on_progress=progress_callback(bar))
bar.empty()
slot.empty()
if result is None:
    stop_page()

box, said = status_box(result)
getattr(st, box)(said)
# the entries' private runs count in the session total of their data sets, as every page's runs do: each seeded run
# once, whichever entry (or page) trained it
for shown in store.values():
    for data, identity, release in shown.releases:
        record_release(data, ("reproduce", *identity), release, page="Papers, reproduced",
                       source=get_reproduction(shown.name).cite)
for data in dict.fromkeys(data for data, _, _ in result.releases):
    show_data_total(load_dataset(data), data=data)
c1, c2 = st.columns(2)
c1.metric("Claims that hold", f"{sum(c.holds for c in result.checks)} / {len(result.checks)}",
          help="Each check below is the paper's own number (within a tolerance the check states) or an ordering or "
               "trend the paper reports; none passes whatever the paper said.")
c2.metric("Runtime", f"{result.seconds:.1f} s")

fig = reproduction_figure(entry, result)
if fig is not None:
    headline_area().plotly_chart(fig, width="stretch", key="repro.chart")

table = comparison_table(result)
if table["Published"].eq(DASH).all():  # the paper gives a curve or a claim, no number to set beside ours
    st.markdown("#### Our numbers")
    st.caption("The paper states this result as a curve and a claim (quoted above), not as numbers; the checks "
               "below test the claim on ours.")
    show_plain_table(table.drop(columns="Published"))
else:
    st.markdown("#### Published beside ours")
    # a plain table, whose long quantities wrap: in a grid they pushed the numbers off a phone's screen
    show_plain_table(table)
st.markdown("#### What we check")
st.markdown(checks_markdown(result))
with st.expander("The numbers behind the chart"):
    wide = curve_table(result)
    if wide is not None:
        show_frame(wide, key="repro.curve")
st.caption(f"The same run on the command line: `python -m dpcore reproduce {name}`; every entry at once: "
           "`python bench/reproductions.py`.")
overview()
