"""Noisy images: what each privacy mechanism does to real pictures, and what DP training does instead."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import math

import streamlit as st

from dpcore.datasets import load_dataset
from dpcore.defaults import EPSILON
from dpcore.images import IMAGE_MECHANISMS, IMAGE_SETS, NEEDS_DELTA
from dpcore.images.labels import laplace_label_probabilities
from dpcore.images.sets import DISPLAY_UPSCALE
from dpcore.mechanisms import RandomizedResponse
from dpcore.ui import (
    delta_input,
    epsilon_input,
    noise_mode_input,
    page_header,
    run_guarded,
    show_frame,
    show_plain_table,
    verdict_line,
)
from dpcore.ui import images as ui
from dpcore.ui.common import bounded_number, format_epsilon, majority_accuracy
from dpcore.ui.ledger import record_releases, run_key_of, show_data_total
from dpcore.ui.links import stop_page
from dpcore.ui.present import control_area, headline_area
from dpcore.ui.uploads import widget_part

page_header(
    "Noisy images",
    "Each column pushes the same pictures through a privacy mechanism at a given ε, so you can see what "
    "“protect one pixel”, “protect the whole image” and DP-Pix pixelisation (Fan 2018) cost in picture quality. "
    "Below, the labels get the noise instead (label DP), and a classifier trained on noisy images races DP-SGD.",
)

key, image_set = ui.image_set_picker("images.set")
if image_set is None:
    stop_page()
sb = st.sidebar
mode = sb.radio("Grid columns", ["mechanisms", "epsilons"], key="images.mode", horizontal=True,
                format_func={"mechanisms": "Mechanisms", "epsilons": "ε values"}.get)
kinds = list(IMAGE_MECHANISMS)
if mode == "mechanisms":
    chosen = sb.multiselect("Mechanisms", kinds, default=list(ui.DEFAULT_MECHANISMS), format_func=IMAGE_MECHANISMS.get,
                            key="images.kinds")
    eps = epsilon_input("images.eps", default=10.0, delta_key="images.delta" if set(chosen) & NEEDS_DELTA else None)
    pairs = [(k, eps) for k in chosen]
else:
    kind = sb.selectbox("Mechanism", kinds, index=4, format_func=IMAGE_MECHANISMS.get, key="images.kind")
    eps_list = sb.multiselect("ε values", ui.EPSILON_CHOICES, default=[0.1, 1.0, 10.0, 100.0], key="images.eps_list")
    pairs = [(kind, float(e)) for e in sorted(eps_list)]
delta = delta_input("images.delta")
# δ = 0 is pure ε-DP: the Gaussian mechanisms cannot give it, so their columns and curves are left out, said once
left_out = [k for k in (chosen if mode == "mechanisms" else [kind]) if delta == 0 and k in NEEDS_DELTA]
pairs = [(k, e) for k, e in pairs if k not in left_out]
curve_kinds = tuple(k for k in kinds if delta > 0 or k not in NEEDS_DELTA)
h, w = image_set.image_shape[:2]
cell0 = 2 if min(h, w) <= 8 else 4 if min(h, w) <= 32 else 8
cell = bounded_number(sb, "DP-Pix cell size b (pixels)", low=1, high=64, default=cell0, whole=True, value=cell0,
                      key=f"images.cell.{widget_part(image_set.name)}", name="The cell size b")
m = bounded_number(sb, "DP-Pix m (pixels neighbours may differ in)", low=1, high=10_000, default=1, key="images.m",
                   name="m", whole=True, value=1)
if mode == "mechanisms" and (note := ui.whole_image_note([k for k in chosen if k not in left_out], eps, delta,
                                                         image_set, cell=cell, m=m)):
    # the verdict under the ε box judges ε as typed: say under it what that leaves a whole image with (beside the
    # grid when presenting, where the sidebar is folded away and "Weak guarantee" stood alone beside ε 384,000)
    control_area(sb).markdown(note)
seed = noise_mode_input("images.seed", uploaded=key is not None and key[0] == "upload")

st.header(f"{image_set.title}: {image_set.n_images} image(s) of {' x '.join(map(str, image_set.image_shape))}, "
             f"pixel range {image_set.pixel_range[0]:g}–{image_set.pixel_range[1]:g}")
if left_out:
    names = " and ".join(map(IMAGE_MECHANISMS.get, left_out))
    st.info(f"δ = 0 asks for pure ε-DP, which Gaussian noise cannot give: {names} "
            f"{'is' if len(left_out) == 1 else 'are'} left out. Set δ above 0 in the sidebar (1e-5 is usual) to "
            "see the Gaussian mechanisms.")
if not pairs:
    if not left_out:
        st.info("Choose at least one mechanism or ε value in the sidebar.")
    stop_page()
columns = tuple((k, float(e), float(delta), cell, m) for k, e in pairs)
grid = run_guarded(ui.cached_grid, key, columns, seed)
if grid is not None:
    means = ui.units_table(grid)
    st.markdown("**Picture quality, PSNR** (mean over the rows; higher is closer to the original):")
    for c, row in zip(st.columns(len(means)), means.itertuples(index=False)):
        c.metric(row.column, f"{row.psnr_db:.1f} dB" if math.isfinite(row.psnr_db) else "∞ dB",
                 help=f"Mean PSNR over the rows. Privacy unit: {row[-1]}")
    with headline_area(st.container()):
        ui.show_grid(grid)
    st.caption("Under each picture: **PSNR** = 10·log10(R²/MSE), R the pixel range (higher is closer to the "
               "original); **SSIM**, structural similarity (Wang et al. 2004): 1 is the original's structure, 0 "
               "none of it, below 0 its light and dark parts swapped. Outputs are clipped to the pixel range "
               "(post-processing, no privacy cost). Small images are enlarged by repeating pixels, never smoothed. "
               "Hover a column heading to see who counts as a "
               "neighbour for it: per-pixel ε leaves the image as a whole with h·w·ε, per-image ε drowns it.")
    show_frame(ui.units_display(means), key="images.units")
    st.markdown(ui.units_markdown(means["column"], means[ui.UNIT_COLUMN]))

st.header("Picture quality vs ε")
curve = ui.curve_with_progress(key, curve_kinds, float(delta), cell, m, seed)
if curve is not None:
    st.plotly_chart(ui.quality_figure(curve), width="stretch", key="images.curve_chart")
    st.caption(f"Means over the {image_set.n_images} image(s) above; DP-Pix with b = {cell}, m = {m}; "
               + (f"Gaussian δ = {delta:g}." if delta > 0 else "no Gaussian lines at δ = 0 (pure ε-DP).")
               + " PSNR and SSIM as under the pictures above.")
    show_frame(ui.curve_display(curve), key="images.curve_table")

if image_set.labels is not None:
    st.header("Noise on the labels instead (label DP)")
    st.markdown("Privacy unit: **one example's label** (the images are public). Laplace adds Lap(2/ε) to each "
                "coordinate of the one-hot label (two one-hot vectors differ by 2 in L1), then decodes it either by "
                "taking the largest coordinate (argmax) or by clamping each coordinate to [0, 1] and rounding, which "
                "can leave no class or several. k-ary randomized response keeps the label with probability "
                "$e^{\\varepsilon} / (e^{\\varepsilon} + k - 1)$.")
    label_eps = bounded_number(st, "ε for the labels", low=0.01, high=100.0, default=EPSILON, key="images.label_eps",
                               value=EPSILON, step=0.1)
    verdict_line(float(label_eps), what="ε per label")
    table = run_guarded(ui.cached_labels, key, float(label_eps), seed)
    if table is not None:
        rr = RandomizedResponse(epsilon=float(label_eps), k=image_set.n_classes)
        probs = laplace_label_probabilities(k=image_set.n_classes, epsilon=float(label_eps))
        c1, c2, c3 = st.columns(3)
        c1.metric("Randomized response keeps the true label", f"{rr.p_keep:.1%}")
        c2.metric("Laplace + argmax gives the true label", f"{probs['argmax_correct']:.1%}")
        c3.metric("Laplace + clamp/round gives exactly one class", f"{probs['clamp_round_valid']:.1%}")
        st.caption(f"Probabilities for any one label ({image_set.n_classes} classes, exact, not counted on the "
                   f"{len(table)} image(s) below, which are one random draw).")
        ui.show_labels(image_set, table)
        show_frame(ui.labels_display(table), key="images.labels_table")
else:  # the introduction promises this section: say where it is
    st.header("Noise on the labels instead (label DP)")
    st.info(ui.no_labels_note())

st.header("Train on what you see")
labelled = [n for n, (_, lab) in IMAGE_SETS.items() if lab]
train_set = image_set.name if image_set.name in labelled else "digits"
st.markdown(f"On **{train_set}**: a logistic regression trained on noisy released images (the noise you see above; "
            "labels in the clear), against DP-SGD at the same ε, which protects each whole (image, label) record but "
            "adds its noise to clipped gradients instead. DP-SGD uses the dataset's preset, as `python -m dpcore "
            "train` does.")
t1, t2 = st.columns(2)
train_eps = bounded_number(t1, "ε (requested)", low=0.05, high=1000.0, default=EPSILON, key="images.train_eps",
                           value=EPSILON, step=0.5)
# DP-SGD's guarantee is (ε, δ) at the sidebar's δ (the noisy-input classifier's pure ε meets the same wording)
verdict_line(float(train_eps), container=t1, compare=False, delta=float(delta))
budget = t2.radio("Noisy-input budget", ["image", "pixel"], horizontal=True, key="images.train_budget",
                  format_func={"image": "ε per image (the guarantee)", "pixel": "ε per pixel (much weaker)"}.get)
if st.button("Train", key="images.train_button", type="primary"):
    out = ui.compare_with_progress(train_set, float(train_eps), float(delta), seed, budget)
    st.session_state["images.train"] = None if out is None else (
        f"{train_set}, requested ε = {train_eps:g} per {budget}, "
        + ("secure noise" if seed is None else f"seed {seed}"), *out,
        run_key_of("images.train", float(train_eps), float(delta), budget, seed=seed))
res = st.session_state.setdefault("images.train", None)
if res is not None:
    settings, table, info, run_key = res
    st.caption(f"Result for: {settings}. Accuracy on the clean test images; hover a metric for its privacy unit.")
    short = ("Clean images", "Noisy images", "DP-SGD")
    for c, name, row in zip(st.columns(len(table)), short, table.itertuples(index=False)):
        eps_txt = "no privacy" if math.isinf(row.epsilon) else f"ε = {format_epsilon(row.epsilon)} per " + (
            "(image, label) record" if row.labels_protected else "image")
        c.metric(f"{name} · {eps_txt}", "–" if row.accuracy is None else f"{row.accuracy:.3f}",
                 help=f"{row.model}. Privacy unit: {row.privacy}. Accuracy: the fraction of test images right.")
        verdict_line(row.epsilon, container=c, short=True)
    chance = run_guarded(majority_accuracy, train_set, seed or 0)
    if chance is not None:
        st.markdown(f"**Chance level** (always the most common class): **{chance:.3f}**.")
    if info["epsilon_image"] > info["epsilon_requested"] * (1 + 1e-9):
        st.warning(f"ε = {info['epsilon_requested']:g} per pixel protects one pixel only: each training image is "
                   f"only ε = {format_epsilon(info['epsilon_image'])}-DP as a whole (h·w·ε, basic composition), and "
                   "that is the "
                   "ε the table reports. DP-SGD's ε is per whole record.")
    raced = len(table) > 2  # DP-SGD trained beside the noisy images (not at δ = 0)
    st.caption(("**Not like for like:** input" if raced else "Input") + " noise protects the images only; the "
               "noisy-input classifier uses the true labels, unprotected."
               + (" DP-SGD's ε covers the whole (image, label) record." if raced else ""))
    # the two private models are releases about the people of this data set: the session's total on it (the noisy
    # images' own, for the images alone, apart from DP-SGD's whole records)
    record_releases(info["dataset"], run_key, info.get("releases", ()), page="Noisy images",
                    source="the noisy-image classifier and DP-SGD")
    show_data_total(load_dataset(info["dataset"]), data=info["dataset"])
    # plain, its headers wrapping: as a grid its seven columns ran past a 1280 px page and cut "Labels protected"
    show_plain_table(ui.compare_display(table), wide_from=4)
    st.markdown(ui.units_markdown(table["model"], table["privacy"]))
    if info["dpsgd_settings"]:
        st.caption(f"DP-SGD settings: {info['dpsgd_settings']}.")
    if not info["dpsgd_available"]:
        st.info("The DP-SGD learner (`dpsgd`) is not registered in this installation yet; its column appears "
                "once the DP-SGD engine is available.")
    if info["dpsgd_error"]:
        st.warning(info["dpsgd_error"])
    st.caption("What the noisy-input classifier was trained on (first training images as released):")
    ex = info["released_examples"]
    ui.show_image_row(list(ex), [""] * len(ex), info["pixel_range"], DISPLAY_UPSCALE[info["dataset"]])
