"""Train a network privately, live: DP-SGD, Laplace output perturbation and label DP (seeds 000, 001, 002, 004)."""
from __future__ import annotations

import math

import streamlit as st

from dpcore.learners import get_learner
from dpcore.ui.accounting import weak_guarantee_note
from dpcore.ui.ledger import show_session_total
from dpcore.ui import dataset_picker, remember, delta_input, epsilon_input, page_header, run_guarded, seed_input, show_table
from dpcore.ui.training import (ALGO_NOTES, ALGORITHMS, EPS_INPUT_LABEL, EPS_UNIT_SHORT, HISTORY_NOTE, LiveProgress,
                                confusion_figure, defaults_for, history_caption, history_figure, history_labels,
                                output_budget_text, run_key, show_diagnostics,
                                show_headline, split_history, train_with_baseline, worse_than_mean_note)

page_header(
    "Train a network privately",
    "Pick a dataset, a private learner and its knobs, then watch the loss, the test accuracy and the ε spent move "
    "epoch by epoch. At the end the private model is compared with the same model trained without privacy on the "
    "same split.",
)
st.session_state.setdefault("train.results", {})

with st.sidebar:
    st.header("Data and learner")
    ds = dataset_picker("train.dataset", default="digits")
if ds is None:
    st.stop()
d = run_guarded(defaults_for, ds)  # a dataset too small to split stops here with the reason
if d is None:
    st.stop()
with st.sidebar:
    algos = [a for a in ALGORITHMS if ds.task in get_learner(a).tasks]
    algo = st.selectbox("Algorithm", algos, key="train.algorithm", format_func=lambda a: get_learner(a).title)
    models = ["linear", "mlp"] + (["cnn"] if ds.is_image else [])
    model = st.selectbox("Model", models, index=models.index(d["model"]), key=f"train.model.{ds.name}",
                         format_func={"linear": "Softmax / linear regression", "mlp": "MLP", "cnn": "Small CNN"}.get)
    hidden = st.select_slider("Hidden width", [16, 32, 64, 128, 256], value=d["hidden"], key="train.hidden",
                              disabled=model == "linear")
    activation = st.radio("Activation", ["tanh", "relu"], horizontal=True, key="train.activation",
                          disabled=model == "linear")
    params = {"model": model, "hidden": int(hidden), "activation": activation}
    if ds.is_image and model != "cnn":
        kinds = ["pixels", "dct", "hog"]
        feats = st.radio("Input features", kinds, index=kinds.index(d["features"]),
                         key=f"train.features.{ds.name}", horizontal=True,
                         format_func={"pixels": "Pixels", "dct": "Low-frequency DCT", "hog": "HOG"}.get,
                         help="A fixed transform (no privacy cost): fewer weights, so less noise in total.")
        params["features"] = feats
        if feats == "dct":
            params["dct_size"] = int(st.slider("DCT block k (k×k coefficients)", 2, min(ds.image_shape), d["dct_size"],
                                               key=f"train.dct.{ds.name}"))
        if feats == "hog":
            params["hog_cell"] = int(st.slider("HOG cell (pixels)", 2, min(ds.image_shape) // 2, d["hog_cell"],
                                               key=f"train.hog.{ds.name}"))
    st.header("Privacy")
    sigma_direct = algo == "dpsgd" and st.radio("Noise", ["Derive σ from ε", "Set σ directly"],
                                                key="train.mode") == "Set σ directly"
    # With σ set directly the ε box stays visible but disabled: DP-SGD then reports the ε it spends.
    epsilon = epsilon_input("train.epsilon", default=1.0, label=EPS_INPUT_LABEL.get(algo, "Epsilon (ε)"),
                            disabled=sigma_direct,
                            help="Not used while σ is set directly: the ε spent is reported after training."
                            if sigma_direct else None)
    if sigma_direct:
        params["noise_multiplier"] = float(st.number_input("Noise multiplier σ", 0.1, 100.0, 10.0, 0.5,
                                                           key="train.sigma"))
        st.caption("ε is not a target with σ set directly: the ε spent follows from σ, the sampling rate and the "
                   "epochs, and is reported after training.")
    uses_delta = get_learner(algo).uses_delta
    delta = delta_input("train.delta", default=1e-5, disabled=not uses_delta,
                        help=None if uses_delta else "Not used: this algorithm is pure ε-DP (δ = 0).")
    if algo == "dpsgd":
        params["clip_norm"] = float(st.number_input("Clip norm C", 0.01, 100.0, d["clip_norm"], 0.1, key="train.clip"))
        params["accountant"] = st.radio("Accountant", ["rdp", "pld"], index=["rdp", "pld"].index(d["accountant"]),
                                        horizontal=True, key=f"train.accountant.{ds.name}",
                                        format_func={"rdp": "RDP (moments)", "pld": "PLD"}.get)
        params["sampling"] = st.radio("Sampling", ["poisson", "shuffle"], horizontal=True, key="train.sampling")
    st.header("Optimiser")
    if algo == "dpsgd":
        params["batch_size"] = int(st.number_input("Batch size (expected)", 1, d["n_train"], d["batch_size"],
                                                   key=f"train.batch.{ds.name}"))
        params["epochs"] = int(st.number_input("Epochs", 1, 200, d["epochs"], key=f"train.epochs.{ds.name}"))
        params["learning_rate"] = float(st.number_input("Learning rate", 0.001, 20.0, d["learning_rate"], 0.1,
                                                        key=f"train.lr.{ds.name}", format="%.3f"))
    else:  # the noise is on labels or outputs; the network itself trains with its own fixed recipe
        params = {k: v for k, v in params.items()
                  if k in ("model", "hidden", "activation", "features", "dct_size", "hog_cell")}
        st.caption("The network behind this learner is trained without DP-SGD, with Adam (batch 64, at least 600 "
                   "steps); its privacy comes from the noise on the labels or on the released outputs.")
    seed = seed_input("train.seed")

st.info(ALGO_NOTES[algo])
if algo == "dpsgd" and params.get("sampling") == "shuffle":
    st.warning("Shuffled fixed-size batches are accounted as Poisson samples (as Opacus does); that ε is not a "
               "proven guarantee for shuffling. Keep Poisson sampling for the stated ε.")
if algo == "dpsgd":
    st.caption(f"Defaults for this dataset: {d['note']}.")

key = run_key(ds, algo, params, epsilon, delta, seed)
results = st.session_state["train.results"]
if st.button("Train", type="primary", key="train.run"):
    if key in results:
        st.info("Same inputs as an earlier run: showing its result (the seed fixes the noise, so training again "
                "would draw the same picture). Change any input to train anew.")
    else:
        live = LiveProgress(get_learner(algo).title)
        out = run_guarded(train_with_baseline, ds, algo, params, epsilon=epsilon, delta=delta, seed=seed,
                          on_epoch=live)
        live.done()
        if out is not None:
            remember(results, key, out)
out = results.get(key)
if out is None:
    st.caption("Press **Train** to run (a few seconds with the defaults).")
    st.stop()

for w in out["warnings"]:
    st.warning(w)
show_headline(out, algo)
show_session_total(ds, key, out, algo)
if note := worse_than_mean_note(out):
    st.warning(note)
eps = out["epsilon"]
if math.isfinite(eps) and (note := weak_guarantee_note(eps, unit=EPS_UNIT_SHORT.get(algo, "per training record"))):
    st.warning(note)
if getattr(ds, "source", "") == "upload":
    st.warning("ε covers the training only: the feature bounds of an uploaded CSV were read from the data itself, "
               "an extra leak that no ε accounts for. Declare bounds from domain knowledge for a real guarantee.")
if algo == "output-perturbation":
    st.markdown(output_budget_text(out))
st.caption(f"{out['n_train']} training rows, {out['n_test']} test rows, {out['seconds']:.1f} s.")

st.subheader("Training history")
st.plotly_chart(history_figure(out["history"]), key="train.history_chart")
history, diagnostics = split_history(out["history"])
show_table(history, key="train.history_table", labels=history_labels(out["task"]))
if units := history_caption(out["task"]):
    st.caption(units)
st.caption(HISTORY_NOTE.get(algo, HISTORY_NOTE["dpsgd"]))
show_diagnostics(out, algo, diagnostics)
if "confusion" in out:
    st.subheader("Confusion matrix of the private model (test rows)")
    st.plotly_chart(confusion_figure(out["confusion"]), key="train.confusion_chart")
