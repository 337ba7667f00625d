"""PATE: teachers on disjoint private data, a noisy vote, a student that never sees a private label."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import streamlit as st

from dpcore.ui import (
    applied_epsilon_input,
    close_sidebar_on_phone,
    dataset_picker,
    delta_input,
    noise_mode_input,
    page_header,
    run_guarded,
    show_frame,
    show_plain_table,
    verdict_line,
)
from dpcore.ui.accounting import weak_guarantee_note
from dpcore.ui.common import format_epsilon, format_noise, majority_accuracy
from dpcore.ui.knobs import knob_widget, knob_widgets, knobs_named, other_knobs
from dpcore.ui.ledger import record_release, record_releases, show_data_total
from dpcore.ui.links import stop_page
from dpcore.ui.pate import (
    NOISE_START,
    PAGE_DRAWN,
    PATE_SPEC,
    PRIVACY_MODES,
    START_DATASET,
    cached_epsilon_sweep,
    cached_pate,
    cached_teachers_sweep,
    confident_caption,
    epsilon_queries_figure,
    epsilon_sweep_figure,
    example_image,
    history_display,
    lnmax_caption,
    noise_name,
    noise_std,
    noise_used_caption,
    page_config,
    page_defaults,
    pate_warnings,
    progress_callback,
    release_cost_caption,
    release_withheld_text,
    released_epsilon_text,
    split_figure,
    split_table,
    student_beside_chart,
    sweep_display,
    sweep_point_releases,
    sweep_progress,
    teachers_sweep_figure,
    vote_table,
    votes_figure,
)
from dpcore.ui.present import control_area, headline_area, presenting_stage
from dpcore.ui.uploads import data_arg, data_key, is_upload, leaks_bounds, upload_in_view

page_header(
    "PATE: private aggregation of teacher ensembles",
    "Teachers are trained on disjoint parts of the sensitive data; each public question is answered by their "
    "vote plus noise, so one person's record can move at most one vote. A student learns from those noisy answers "
    "alone (Papernot et al. 2017, 2018).",
)

# Outside the form so that switching it enables the matching box at once (a form only reports on submit).
mode = st.sidebar.radio("Privacy set by", PRIVACY_MODES, horizontal=True, key="pate.mode",
                        help="Either fix the budget and let the noise be calibrated to it, or fix the noise and "
                             "read off the budget it costs.")
with control_area(st.sidebar, top=False).form("pate.form"):
    key_slot = st.container()  # ε first: beside the chart when presenting, at the top of the form otherwise
    st.header("PATE settings")
    ds = dataset_picker("pate.dataset", task="classification", in_form=True, default=START_DATASET, container=st,
                        class_shares=False)  # the student releases labels: the shares would change nothing
    at = ds.name if ds is not None else START_DATASET
    # every box below is one of the pate learner's declared knobs, with its defaults on this dataset (the
    # command line uses the same); each dataset starts from its own defaults and keeps what was chosen for it
    DEFAULTS = page_defaults(at if ds is None else data_arg(ds))
    widgets = dict(prefix="pate", dataset=at, images=ds is not None and ds.is_image, container=st, in_form=True)
    params = knob_widgets(PATE_SPEC, knobs_named(PATE_SPEC, "aggregator", "teachers", "query_mode", "queries"),
                          DEFAULTS, **widgets)
    eps, applied = applied_epsilon_input(  # the button under ε: the form's own is screens below
        "pate.eps", button="Run PATE at this ε", button_key="pate.apply", default=DEFAULTS["epsilon"],
        container=key_slot, in_form=True, label="Target ε for all queries", disabled=mode != "target ε",
        delta_key="pate.delta",
        help="Privacy budget: smaller is more private. Used when privacy is set by target ε.")
    noise = knob_widget(PATE_SPEC.knob("noise_multiplier"), key="pate.noise", value=NOISE_START, container=st,
                        disabled=mode != "noise scale", help="Used when privacy is set by noise scale.")
    used_slot = st.empty()  # the noise actually used, filled in after the run
    delta = delta_input("pate.delta", container=st)
    params |= knob_widgets(PATE_SPEC, knobs_named(PATE_SPEC, "public_fraction", "features", "teacher_model",
                                                  "student_model"), DEFAULTS, chosen=params, **widgets)
    with st.expander("More settings"):
        params |= knob_widgets(PATE_SPEC, other_knobs(PATE_SPEC, PAGE_DRAWN), DEFAULTS, chosen=params, **widgets)
    seed = noise_mode_input("pate.seed", uploaded=is_upload(ds), container=st, in_form=True)
    if st.form_submit_button("Run PATE", type="primary") or applied:
        close_sidebar_on_phone()  # on a phone the open sidebar would hide the result

if ds is None:
    stop_page()
upload_in_view(ds)  # the intro folded, one line on whose data this is
cfg = run_guarded(page_config, data_arg(ds), epsilon=float(eps), delta=float(delta), seed=seed or 0,
                  secure=seed is None,
                  params={**params, "noise_multiplier": float(noise) if mode == "noise scale" else None})
if cfg is None:
    stop_page()
bar = st.progress(0.0, text="Training teachers …")
res = run_guarded(cached_pate, data_arg(ds), cfg, on_epoch=progress_callback(bar, cfg.teachers),
                  hide_warnings=("the data-dependent epsilon is not released",))  # said below, in the page's words
bar.empty()
if res is None:
    stop_page()
used_slot.caption(noise_used_caption(res))

c = st.columns(3)
c[0].metric("ε spent (data-independent)", format_epsilon(res.epsilon), help=f"δ = {res.delta:g}; {res.dp_event}")
if (added := release_cost_caption(res)) is not None:
    c[0].caption(added)
c[1].metric("Noise on each vote", f"{noise_name(cfg.aggregator)} = {format_noise(res.noise_scale)}")
c[2].metric("Queries answered", f"{res.answered_count}" if cfg.aggregator != "confident"
            else f"{res.answered_count} of {cfg.queries}")
verdict_line(res.epsilon, what="ε spent", delta=float(res.delta))
if (note := weak_guarantee_note(res.epsilon, unit="per private record")) is not None:
    st.warning(note)
if cfg.aggregator == "confident":
    st.markdown(confident_caption(res))
if res.released is not None:
    st.info(released_epsilon_text(res))
elif (withheld := release_withheld_text(res)) is not None:
    st.warning(withheld)
if res.epsilon_data_dependent is not None:
    with st.expander("The exact data-dependent ε: NOT a privacy guarantee"):
        st.markdown(f"Exact data-dependent ε = **{format_epsilon(res.epsilon_data_dependent)}** at its best Rényi "
                    "order "
                    "(Papernot et al. 2018, Theorem 6). It is computed from the private votes without noise, so it "
                    "is **not a privacy guarantee: do not publish it**; the released value above is the one to "
                    "publish. The guarantee whatever the votes is the data-independent "
                    f"ε = {format_epsilon(res.epsilon)}.")
chance = run_guarded(majority_accuracy, data_arg(ds), cfg.seed)
for w in pate_warnings(res, n_classes=ds.n_classes, chance=chance if chance is not None else 0.0):
    st.warning(w)
c = st.columns(5)
# labels of at most 20 characters: five columns beside the sidebar at 1280 px cut "Mean teacher accuracy"
c[0].metric("Teacher accuracy", f"{res.teacher_mean_accuracy:.3f}",
             help="The teachers' mean accuracy on the test part. They are trained on the private partitions without "
                  "noise, so this number is not covered by ε (a real release publishes only the student).")
c[1].metric("Vote, no noise", f"{res.ensemble_accuracy:.3f}",
             help="The accuracy of the teachers' plurality vote without noise, on the test part: not covered by ε "
                  "(only the noisy answers are).")
c[2].metric("Noisy-label accuracy", f"{res.label_accuracy:.3f}",
             help="The share of the student's training labels that are right: each answered query's label on the "
                  "public examples it labels (the rows of its cluster, or the one queried example).")
c[3].metric("Student accuracy", f"{res.student_accuracy:.3f}")
c[4].metric("Non-private model", f"{res.nonprivate_accuracy:.3f}",
             help="The student's model trained on all private data with their true labels: no privacy.")
st.markdown("Accuracy: the fraction of the test part predicted correctly."
            + (f" **Chance level** (always the most common class): **{chance:.3f}**." if chance is not None else ""))
if cfg.aggregator == "lnmax":
    st.caption(lnmax_caption(res))
# the student's noisy labels are a release about the same people: the session's total on the data, drawn again once
# the sweeps at the page's end are counted
record_release(data_key(ds), ("pate", cfg), res, page="PATE", source="the run", leaks_privacy=leaks_bounds(ds))
total_slot = st.empty()
show_data_total(ds, container=total_slot)

st.header("1 · The data, cut three ways")
st.plotly_chart(split_figure(res), width="stretch")
show_plain_table(split_table(res))  # plain: its sentences wrap on a phone, where a grid cut "Used for" short

st.header("2 · One query: the teachers' votes and the noisy winner")
if len(res.votes) > 1:  # numbered from 1, as section 3's chart and table count the queries answered
    i = st.slider("Query #" if cfg.aggregator == "confident" else "Answered query #", 1, len(res.votes), 1,
                  key="pate.example") - 1
else:  # one query asked: a slider from 0 to 0 is refused by Streamlit ("min_value and max_value must not be equal")
    i = 0
    st.caption("One query was asked: its votes below.")
left, right = st.columns([1, 4])
img = example_image(ds, res, i, cfg.seed)
clustered = cfg.query_mode == "clusters"
if img is not None:
    left.image(img, clamp=True, width=140,
               caption="the cluster's most central example" if clustered else "the public input",
               alt=f"The public input of query {i + 1}, the picture the teachers vote on")
if clustered:
    left.markdown(f"This query is a cluster of **{res.cluster_sizes[i]}** public examples; each teacher's one vote "
                  "is the class it predicts most often among them.")
left.markdown(f"Vote gap between the top two classes: **{sorted(res.votes[i])[-1] - sorted(res.votes[i])[-2]}** "
              f"votes; the noise added to each count is typically ±{format_noise(noise_std(res))} (its standard "
              "deviation)"
              + (" (this query was not answered: its check failed). " if res.noisy_labels[i] < 0 else ". ") +
              "Noise can push a count below zero: a noisy count is not a number of teachers, only which "
              "class has the largest one matters.")
right.plotly_chart(votes_figure(res, i, ds.target_names), width="stretch")
votes_shown = vote_table(res, i, ds.target_names)  # Streamlit's own height: a fixed one overran on a phone
show_frame(votes_shown, container=right, key="pate.votes", wide_from=5)  # four short columns fit a phone
st.caption("Changing one private record retrains one teacher, which moves one vote: the histogram changes by 1 in two "
           "bins (L1 sensitivity 2, L2 √2). That is what the noise hides.")

st.header("3 · Privacy spent as queries are answered")
headline_area().plotly_chart(epsilon_queries_figure(res.history), width="stretch")
if presenting_stage():  # the metrics are a screen below the stage: what the student learnt, under its chart
    headline_area().markdown(student_beside_chart(res))
show_frame(history_display(res.history), key="pate.history")

st.header("4 · Accuracy against ε, and the more-teachers-less-data trade-off")
a, b = st.columns(2)
if a.button("Sweep ε (teachers trained once)", key="pate.sweep_eps"):
    pb = a.progress(0.0)
    eps_values = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)
    df = run_guarded(cached_epsilon_sweep, data_arg(ds), cfg, eps_values, on_point=sweep_progress(pb, 7, "ε ="))
    pb.empty()
    if df is not None:
        st.session_state["pate.eps_sweep"] = ((data_key(ds), cfg), df)
if b.button("Sweep the number of teachers", key="pate.sweep_teachers"):
    pb = b.progress(0.0)
    n_priv = res.split_sizes["private (teachers)"]
    counts = tuple(t for t in (2, 5, 10, 20, 50, 100, 200) if t <= n_priv // 5)
    df = run_guarded(cached_teachers_sweep, data_arg(ds), cfg, counts,
                     on_point=sweep_progress(pb, len(counts), "teachers ="))
    pb.empty()
    if df is not None:
        st.session_state["pate.teacher_sweep"] = ((data_key(ds), cfg), df)
for key, fig, note in [("pate.eps_sweep", epsilon_sweep_figure,
                        "Accuracy against the budget for these settings. The teachers are those of the run above; "
                        "each point draws noise of its own and trains its own student, so at the run's own ε the "
                        "point can differ from the result above: the difference is what one draw of noise moves."),
                       ("pate.teacher_sweep", teachers_sweep_figure,
                        "Fixed privacy setting; more teachers widen the vote gap but each learns from less data.")]:
    got = st.session_state.get(key)
    if got is not None and got[0] == (data_key(ds), cfg):
        st.plotly_chart(fig(got[1], chance), width="stretch")
        st.caption(note)
        show_frame(sweep_display(got[1]), key=f"{key}.table")
        record_releases(data_key(ds), (key, cfg), sweep_point_releases(
            got[1], cfg, "epsilon" if key == "pate.eps_sweep" else "teachers"), page="PATE",
            source="the ε sweep's points" if key == "pate.eps_sweep" else "the teachers sweep's points",
            leaks_privacy=leaks_bounds(ds))
show_data_total(ds, container=total_slot)
