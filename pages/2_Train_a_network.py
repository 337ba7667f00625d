"""Train a network privately, live: DP-SGD, Laplace output perturbation and label DP, knobs from their declarations."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import math

import streamlit as st

from dpcore.defaults import LEARNER
from dpcore.learners import get_learner
from dpcore.teaching.lesson import DATASET
from dpcore.ui import (
    dataset_picker,
    delta_input,
    epsilon_input,
    noise_mode_input,
    page_header,
    remember,
    run_guarded,
    shared_call,
    show_plain_table,
)
from dpcore.ui.accounting import weak_guarantee_note
from dpcore.ui.knobs import knob_key, knob_widget, knob_widgets
from dpcore.ui.ledger import show_session_total
from dpcore.ui.links import stop_page
from dpcore.ui.present import control_area, headline_area, presenting_stage
from dpcore.ui.training import (
    LiveProgress,
    budget_text,
    defaults_for,
    history_caption,
    history_labels,
    knobs_of_group,
    result_beside_chart,
    run_key,
    show_confusion_chart,
    show_diagnostics,
    show_headline,
    show_history_chart,
    split_history,
    train_learners,
    train_with_baseline,
    worse_than_mean_note,
)
from dpcore.ui.uploads import is_upload, upload_in_view

page_header(
    "Train a network privately",
    "Pick a dataset, a private learner and its knobs, then watch the loss, the test accuracy and the ε spent move "
    "epoch by epoch. At the end the private model is compared with the same model trained without privacy on the "
    "same split.",
)
st.session_state.setdefault("train.results", {})

with st.sidebar:
    st.header("Data and learner")
    ds = dataset_picker("train.dataset", default=DATASET)  # the lesson's (dpcore/teaching/lesson.py)
if ds is None:
    stop_page()
with st.sidebar:
    algos = train_learners(ds.task)
    algo = st.selectbox("Algorithm", algos, index=algos.index(LEARNER) if LEARNER in algos else 0,
                        key="train.algorithm", format_func=lambda a: get_learner(a).title)
spec = get_learner(algo)
d = run_guarded(defaults_for, ds, algo)  # a dataset too small to split stops here with the reason
if d is None:
    stop_page()
widgets = dict(prefix="train", dataset=ds.name, images=ds.is_image, split=d["split"])
with st.sidebar:
    params = knob_widgets(spec, knobs_of_group(spec, "model"), d["defaults"], **widgets)
    st.header("Privacy")
    sigma_direct = spec.direct_noise is not None and st.radio("Noise", ["Derive σ from ε", "Set σ directly"],
                                                key="train.mode") == "Set σ directly"
    # With σ set directly the ε box stays visible but disabled: the learner then reports the ε it spends.
    # output perturbation's budget knob (drawn below; its value is known from the last run): "total" makes this ε
    # the whole run's, "per-query" each answer's
    whole_run = ("total" in (getattr(spec.knob("budget"), "choices", None) or ())
                 and st.session_state.get(knob_key("train", "budget", ds.name)) == "total")
    epsilon = epsilon_input("train.epsilon", default=spec.default_epsilon,
                            label="Epsilon (ε) for all answers together" if whole_run else spec.wording.epsilon_input,
                            subject=None if whole_run else spec.wording.input_subject or spec.wording.subject,
                            delta_key="train.delta" if spec.uses_delta else None,
                            disabled=sigma_direct,
                            help="Not used while σ is set directly: the ε spent is reported after training."
                            if sigma_direct else None)
    if sigma_direct:
        params[spec.direct_noise] = knob_widget(spec.knob(spec.direct_noise), key="train.sigma", value=10.0)
        st.caption("ε is not a target with σ set directly: the ε spent follows from σ, the sampling rate and the "
                   "epochs, and is reported after training.")
    delta = delta_input("train.delta", disabled=not spec.uses_delta,
                        help=None if spec.uses_delta else "Not used: this algorithm is pure ε-DP (δ = 0).")
    params |= knob_widgets(spec, knobs_of_group(spec, "privacy"), d["defaults"], chosen=params, **widgets)
    st.header("Optimiser")
    optimiser = knobs_of_group(spec, "optimiser")
    if any(d["defaults"].get(k.name) is not None for k in optimiser):
        params |= knob_widgets(spec, optimiser, d["defaults"], chosen=params, **widgets)
    else:  # the noise is on labels or outputs; the network itself trains with its own fixed recipe
        st.caption(spec.wording.recipe)
    with st.expander("More knobs"):
        params |= knob_widgets(spec, knobs_of_group(spec, None, advanced=True), d["defaults"], chosen=params,
                               container=st, **widgets)
    seed = noise_mode_input("train.seed", uploaded=getattr(ds, "source", "") == "upload")

upload_in_view(ds)  # the intro folded, one line on whose data this is, and above the results any leak no ε covers
st.info(spec.wording.note)
choice_notes = spec.choice_warnings(params)  # what a choice costs in ε (DP-SGD's shuffled batches: no amplification)
for note in choice_notes:
    st.warning(note)
if spec.defaults_note is not None:  # where its defaults for this data come from (DP-SGD: the dataset preset)
    st.caption(spec.defaults_note(d["split"], params))

key = run_key(ds, algo, params, epsilon, delta, seed)
results = st.session_state["train.results"]
said: list = []  # the warnings a run in this script shows as it ends (not again from its result below)
shown_now: set[str] = set()
if control_area(st).button("Train", type="primary", key="train.run"):
    if key in results:
        st.info("Same inputs as an earlier run: showing its result (the seed fixes the noise, so training again "
                "would draw the same picture). Change any input to train anew." if seed is not None else
                "Same inputs as an earlier run: showing its secure release (drawing fresh noise for the same data "
                "would spend the budget again). Change any input to train anew.")
    else:
        # presenting: on the stage, where it ends; on a visitor's file its charts are kept by no cache of the server
        live = LiveProgress(get_learner(algo).title, headline_area(), shared=not is_upload(ds))
        def train(progress):
            return train_with_baseline(ds, algo, params, epsilon=epsilon, delta=delta, seed=seed, on_epoch=progress)

        hidden = (f"{get_learner(algo).title}: its test error is no smaller", *choice_notes)  # said below, above
        out = run_guarded(shared_call, ("train", *key), train, on_progress=live,  # one run for the whole class
                          hide_warnings=hidden, said=said)
        shown_now = {m for w in said if not (m := str(getattr(w, "message", w))).startswith(hidden)}
        live.done()
        if out is not None:
            remember(results, key, out)
out = results.get(key)
if out is None:
    # presenting: where the history chart will come, beside the Train button (the stage's right half stood empty)
    headline_area().caption("Press **Train** to run (a few seconds with the defaults).")
    stop_page()

for w in out["warnings"]:
    if w not in choice_notes and w not in shown_now:  # said above the button, or as the run ended
        st.warning(w)
show_headline(out, algo)
if presenting_stage():  # the metrics above are a screen below the stage: the result under the Train button
    control_area(st).markdown(result_beside_chart(out, algo))
show_session_total(ds, key, out)
if note := worse_than_mean_note(out):
    st.warning(note)
eps = out["epsilon"]
if math.isfinite(eps) and (note := weak_guarantee_note(eps, unit=spec.wording.unit_short)):
    st.warning(note)
if text := budget_text(out, algo):  # how its ε adds up, where the learner says (output perturbation's answers)
    st.markdown(text)
st.markdown(f"**{out['n_train']} training rows, {out['n_test']} test rows**; the training took {out['seconds']:.1f} s. "
            + ("Noise: **secure** (the operating system's cryptographic source, released on a grid)."
               if out.get("secure") else
               f"Noise: **seeded demo** (seed {seed}): reproducible, not for a real release."))

st.header("Training history")
show_history_chart(out, headline_area(), shared=not is_upload(ds))
history, diagnostics = split_history(out["history"])
show_plain_table(history, labels=history_labels(out["task"]))
if units := history_caption(out["task"]):
    st.caption(units)
st.caption(spec.wording.history_note)
show_diagnostics(out, algo, diagnostics)
if "confusion" in out:
    st.header("Confusion matrix of the private model (test rows)")
    show_confusion_chart(out["confusion"], shared=not is_upload(ds))
