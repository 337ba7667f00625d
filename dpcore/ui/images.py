"""Cached wrappers and renderers for the Noisy images page (the only Streamlit code of the feature): a built-in
set's results cached for the whole server, an uploaded picture's kept in its visitor's session alone."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from ..images import (
    IMAGE_MECHANISMS,
    IMAGE_SETS,
    ColumnSpec,
    GridResult,
    ImageSet,
    label_noise_view,
    load_image_set,
    load_uploaded_image,
    make_image_mechanism,
    noisy_grid,
    quality_curve,
)
from ..images.sets import MAX_UPLOAD_BYTES, MAX_UPLOAD_PIXELS
from ..rng import noise_mode, secure_or_seed
from . import palette
from .common import format_epsilon, readable_log_ticks, readable_table, run_guarded, verdict_text

#: epsilon grid of the quality chart (log-spaced)
CURVE_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0)
EPSILON_CHOICES = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0, 100.0, 1000.0, 10000.0)
#: one colour, dash and marker per mechanism (the same on both panels and every image set)
_STYLE = {kind: palette.line_and_marker(i) for i, kind in enumerate(IMAGE_MECHANISMS)}

# A set is identified by plain values so st.cache_data can hash it:
# (name, n_images, colour, upload bytes or None, upload file name)
SetKey = tuple
#: Session key of what was computed from this visitor's uploaded picture: kept in the session, never in
#: ``st.cache_data``, which holds its entries for every visitor of the server after the session has ended (another
#: visitor uploading the same bytes was handed the first one's noisy release, and the picture outlived the session)
UPLOAD_RUNS = "images.upload_runs"


def _of_upload(key: SetKey) -> bool:
    return key[0] == "upload"


def _in_session(what: str, key: SetKey, args: tuple, compute):
    """``compute()`` memoised in this session under the upload's digest (not its bytes) and ``args``."""
    import hashlib

    from .common import remembered

    _, n, colour, data, filename = key
    return remembered(UPLOAD_RUNS, (what, hashlib.sha256(data).hexdigest(), n, colour, filename, *args), compute,
                      max_kept=64)


def cached_set(key: SetKey) -> ImageSet:
    """The image set of ``key``: shared by the server for a built-in set, this session's alone for an upload."""
    if _of_upload(key):
        return _in_session("set", key, (), lambda: _set_of(key))
    return _shared_set(key)


def _set_of(key: SetKey) -> ImageSet:
    name, n, colour, data, filename = key
    if name == "upload":
        return load_uploaded_image(data, name=filename, colour=colour)
    return load_image_set(name, n_images=n, colour=colour, max_side=240)


@st.cache_data(show_spinner=False, max_entries=16)
def _shared_set(key: SetKey) -> ImageSet:
    return _set_of(key)


def cached_grid(key: SetKey, columns: tuple[tuple, ...], seed: int | None) -> GridResult:
    """The noisy grid of ``key``'s images (see :func:`cached_set` for where it is kept)."""
    if _of_upload(key):
        return _in_session("grid", key, (columns, seed), lambda: _grid_of(key, columns, seed))
    return _shared_grid(key, columns, seed)


def _grid_of(key: SetKey, columns: tuple[tuple, ...], seed: int | None) -> GridResult:
    secure, seed = secure_or_seed(seed)
    with noise_mode(secure):  # every draw from the OS inside; splits and inits still from the seed
        return noisy_grid(cached_set(key), [ColumnSpec(*c) for c in columns], seed=seed)


@st.cache_data(show_spinner=False, max_entries=32)
def _shared_grid(key: SetKey, columns: tuple[tuple, ...], seed: int | None) -> GridResult:
    return _grid_of(key, columns, seed)


def cached_curve_point(key: SetKey, kind: str, epsilon: float, delta: float, cell: int, m: int,
                       seed: int | None) -> pd.DataFrame:
    """One point of the quality curve of ``key``'s images (see :func:`cached_set` for where it is kept)."""
    if _of_upload(key):
        return _in_session("curve", key, (kind, epsilon, delta, cell, m, seed),
                           lambda: _curve_point_of(key, kind, epsilon, delta, cell, m, seed))
    return _shared_curve_point(key, kind, epsilon, delta, cell, m, seed)


def _curve_point_of(key: SetKey, kind: str, epsilon: float, delta: float, cell: int, m: int,
                    seed: int | None) -> pd.DataFrame:
    secure, seed = secure_or_seed(seed)
    with noise_mode(secure):  # every draw from the OS inside; splits and inits still from the seed
        return quality_curve(cached_set(key), [kind], [epsilon], seed=seed, delta=delta, cell=cell, m=m)


@st.cache_data(show_spinner=False, max_entries=512)
def _shared_curve_point(key: SetKey, kind: str, epsilon: float, delta: float, cell: int, m: int,
                        seed: int | None) -> pd.DataFrame:
    return _curve_point_of(key, kind, epsilon, delta, cell, m, seed)


def curve_with_progress(key: SetKey, kinds: tuple[str, ...], delta: float, cell: int, m: int, seed: int | None):
    """Quality vs epsilon, one cached point at a time so a progress bar can follow (None on error)."""
    points = [(k, e) for k in kinds for e in CURVE_EPSILONS]
    bar = st.empty()
    parts = []
    for i, (k, e) in enumerate(points):
        part = run_guarded(cached_curve_point, key, k, float(e), delta, cell, m, seed)
        if part is None:
            bar.empty()
            return None
        parts.append(part)
        if i % 5 == 4:
            bar.progress((i + 1) / len(points), text=f"Quality vs ε: {i + 1}/{len(points)} points")
    bar.empty()
    return pd.concat(parts, ignore_index=True)


def cached_labels(key: SetKey, epsilon: float, seed: int | None) -> pd.DataFrame:
    """The label-noise view of ``key``'s images (see :func:`cached_set` for where it is kept)."""
    if _of_upload(key):
        return _in_session("labels", key, (epsilon, seed), lambda: _labels_of(key, epsilon, seed))
    return _shared_labels(key, epsilon, seed)


def _labels_of(key: SetKey, epsilon: float, seed: int | None) -> pd.DataFrame:
    secure, seed = secure_or_seed(seed)
    with noise_mode(secure):  # every draw from the OS inside; splits and inits still from the seed
        s = cached_set(key)
        return label_noise_view(s.labels, s.target_names, epsilon=epsilon, seed=seed)


@st.cache_data(show_spinner=False, max_entries=16)
def _shared_labels(key: SetKey, epsilon: float, seed: int | None) -> pd.DataFrame:
    return _labels_of(key, epsilon, seed)


def image_set_picker(key: str) -> tuple[SetKey | None, ImageSet | None]:
    """Sidebar controls for the image set (built-in or an uploaded PNG/JPEG)."""
    sb = st.sidebar
    options = list(IMAGE_SETS) + ["upload"]
    labels = {k: t for k, (t, _) in IMAGE_SETS.items()} | {"upload": "Upload a PNG/JPEG…"}
    name = sb.selectbox("Images", options, index=options.index(DEFAULT_SET), format_func=labels.get,
                        key=f"{key}.name")
    colour = "grey"
    if name in ("photos", "upload"):
        colour = sb.radio("Colour", ["rgb", "grey"], horizontal=True, key=f"{key}.colour",
                          format_func={"rgb": "RGB", "grey": "Grey"}.get)
    if name == "upload":
        up = sb.file_uploader(f"PNG or JPEG (≤ {MAX_UPLOAD_BYTES // 2**20} MB, ≤ {MAX_UPLOAD_PIXELS / 1e6:g} M pixels)",
                              type=["png", "jpg", "jpeg"], key=f"{key}.file")
        if up is None:
            st.info("Upload a PNG or JPEG in the sidebar: it is decoded in memory, shrunk to 256 px and never stored.")
            return None, None
        k: SetKey = ("upload", 1, colour, up.getvalue(), up.name)
    else:
        top = 2 if name == "photos" else 8
        n = sb.slider("Images (rows)", 1, top, min(4, top), key=f"{key}.n")
        k = (name, int(n), colour, None, "")
    s = run_guarded(cached_set, k)
    return (k, s) if s is not None else (None, None)


def _display(img: np.ndarray, pixel_range, upscale: int) -> np.ndarray:
    """uint8 picture, upscaled by pixel repetition (nearest neighbour, no smoothing)."""
    lo, hi = pixel_range
    out = np.clip(np.rint((np.asarray(img) - lo) / (hi - lo) * 255.0), 0, 255).astype(np.uint8)
    if upscale > 1:
        out = np.repeat(np.repeat(out, upscale, axis=0), upscale, axis=1)
    return out


#: A picture's width on the page, in CSS pixels (the small sets' enlarged pictures are 150-168 px,
#: :data:`dpcore.images.sets.DISPLAY_UPSCALE`; photographs shrink to it): the original and the page's three default
#: mechanisms fit one row at 1280 px, beside the sidebar (784 px) and on presentation mode's stage (750 px with its
#: larger gaps), and on a phone a row wraps two to a line, so a picture's noisy versions stay beside it (Streamlit's
#: columns would stack them one per line, each row's pictures far apart).
CELL_PX = 168
#: The mechanisms the page opens on: protecting one pixel, the whole picture, and DP-Pix's cells (Fan 2018), all
#: pure ε-DP; the Gaussian versions are one click away.
DEFAULT_MECHANISMS = ("laplace-pixel", "laplace-image", "dppix")
#: The image set the page opens on: two colour photographs a room recognises at a glance, where noise on a pixel
#: leaves the picture, noise on the whole picture leaves nothing and DP-Pix leaves its blocks (the 8x8 digits looked
#: like QR codes on a projector before any noise was added; half of the 25x25 LFW set is patches of non-faces).
DEFAULT_SET = "photos"
#: Narrow screens: the column headings are a row of their own that wraps apart from the pictures' rows, so they are
#: hidden there; every picture's caption names its mechanism and ε.
_HEADS_STYLE = "<style>@media (max-width: 640px){.st-key-images-heads{display:none !important}}</style>"


def _row():
    """A row of cells that wraps on a narrow screen instead of stacking (Streamlit's horizontal container)."""
    return st.container(horizontal=True, wrap=True, gap="small")


def show_image_row(images, captions, pixel_range, upscale: int, alts: list[str] | None = None) -> None:
    """One row of pictures, each with its caption and its alt text for screen readers (the caption if none)."""
    row = _row()
    for im, cap, alt in zip(images, captions, alts or captions):
        pic = _display(im, pixel_range, upscale)
        # small images at their enlarged size (crisp pixels); photos shrink to the cell
        width = min(int(pic.shape[1]), CELL_PX) if upscale > 1 else CELL_PX
        row.container(width=CELL_PX, gap=None).image(pic, caption=cap or None, alt=alt or "a released image",
                                                     width=width)


def show_grid(grid: GridResult) -> None:
    """Rows are images; the original first, then one column per mechanism/epsilon, PSNR/SSIM under each.

    Every picture names its mechanism and ε in its own caption (on a phone a row wraps, so the headings alone
    would no longer say which mechanism made a picture) and in its alt text."""
    st.html(_HEADS_STYLE)
    heads = st.container(horizontal=True, wrap=True, gap="small", key="images-heads")
    heads.markdown("**Original**", width=CELL_PX)
    for name in grid.columns:
        heads.markdown(f"**{name}**", help=grid.privacy_units.get(name), width=CELL_PX)
    q = grid.quality.set_index(["row", "column"])
    for i, orig in enumerate(grid.originals):
        which = grid.row_labels[i] or f"image {i + 1}"
        caps, alts = [f"Original · {which}"], [f"Original picture, {which}"]
        for name in grid.columns:
            r = q.loc[(i, name)]
            p = "∞" if math.isinf(r.psnr_db) else f"{r.psnr_db:.1f}"
            caps.append(f"{name} · PSNR {p} dB · SSIM {r.ssim:.2f}")
            alts.append(f"{which} after {name}: PSNR {p} dB, SSIM {r.ssim:.2f}")
        show_image_row([orig, *grid.noisy[i]], caps, grid.pixel_range, grid.upscale, alts=alts)


#: the noise's size in the quality tables, in words ("noise std per value" before)
NOISE_COLUMN = "noise per value (standard deviation)"


def no_labels_note() -> str:
    """Where the label-DP section is, on a set without labels (the page's introduction promises that section)."""
    sets = [title.split(" (")[0] for title, labelled in IMAGE_SETS.values() if labelled]
    return ("These pictures have no labels to protect. Choose a labelled set in the sidebar's *Images* box ("
            + ", ".join(sets[:-1]) + f" or {sets[-1]}) to see noise on the labels instead: randomized response and "
            "Laplace on each picture's class.")


def units_table(grid: GridResult) -> pd.DataFrame:
    """Per column: what neighbouring means, the noise std per pixel value, mean PSNR/SSIM."""
    q = grid.quality.groupby("column", sort=False).agg(
        noise_std=("noise_std", "first"), image_epsilon=("image_epsilon", "first"), psnr_db=("psnr_db", "mean"),
        ssim=("ssim", "mean")).reset_index()
    q["privacy unit (who counts as a neighbour)"] = q["column"].map(grid.privacy_units)
    return q.rename(columns={"image_epsilon": "ε for the whole image", "noise_std": NOISE_COLUMN})


#: The column of :func:`units_table` that holds a sentence: it is written out under the table, where it wraps, not
#: cut off in a cell (Streamlit's table cells do not wrap).
UNIT_COLUMN = "privacy unit (who counts as a neighbour)"


def units_display(means: pd.DataFrame) -> pd.DataFrame:
    """:func:`units_table` with readable headers, its sentences left to :func:`units_markdown`."""
    return readable_table(means, drop=(UNIT_COLUMN,), labels={"psnr_db": "PSNR (dB, mean)", "ssim": "SSIM (mean)"})


def units_markdown(names, units) -> str:
    """Each name's privacy unit as a list: who counts as a neighbour for it."""
    return "**Privacy unit** (who counts as a neighbour):\n" + "\n".join(
        f"- **{name}**: {unit}" for name, unit in zip(names, units))


def curve_display(curve: pd.DataFrame) -> pd.DataFrame:
    """The quality-vs-epsilon numbers with readable headers (the internal ``kind`` key dropped)."""
    return readable_table(curve, drop=("kind",), labels={
        "psnr_db": "PSNR (dB)", "ssim": "SSIM", "noise_std": NOISE_COLUMN,
        "image_epsilon": "ε for the whole image"})


def labels_display(table: pd.DataFrame) -> pd.DataFrame:
    """The label-noise table with readable headers."""
    return readable_table(table, labels={"true": "true label", "laplace_argmax": "Laplace, argmax",
                                         "laplace_clamp_round": "Laplace, clamp to [0, 1] and round",
                                         "laplace_valid": "clamp+round gives one class",
                                         "randomized_response": "randomized response"})


def compare_display(table: pd.DataFrame) -> pd.DataFrame:
    """The train-on-what-you-see table as shown: an infinite ε as "∞ (not private)", labels protected as yes/no."""
    return readable_table(table, digits=3, drop=("privacy",), labels={  # the units: units_markdown, under it
        "accuracy": "test accuracy", "epsilon": "ε per training record (image)",
        "labels_protected": "labels protected"})


def whole_image_note(kinds, epsilon: float, delta: float, image_set: ImageSet, *, cell: int,
                     m: int) -> str | None:
    """What ε leaves a whole image with under each chosen mechanism that protects pixels rather than images (None
    when none does): each mechanism's own whole-image ε, the number the table under the grid shows (Laplace per
    pixel: h·w·ε; Gaussian per pixel: Balle & Wang's calibration solved for the whole image's L2 sensitivity;
    DP-Pix: its cells composed over the image)."""
    shape = image_set.image_shape
    parts = []
    for kind in kinds:
        mech = make_image_mechanism(kind, epsilon=epsilon, pixel_range=image_set.pixel_range, delta=delta,
                                    cell=cell, m=m)
        whole = mech.image_epsilon(shape)
        if whole > epsilon * (1 + 1e-9):
            parts.append(f"{mech.label.split(',')[0]} **ε {format_epsilon(whole)}**, {verdict_text(whole, short=True)}")
    if not parts:
        return None
    return (f"This ε protects **pixels, not the image**: a whole {shape[0]}×{shape[1]} image is protected only at "
            + "; ".join(parts) + " (the table under the grid).")


def quality_figure(df: pd.DataFrame) -> go.Figure:
    """PSNR above SSIM against ε, one line per mechanism, the verdict bands behind both.

    The panels are stacked, not side by side: on a phone two side by side left each 150 px, their band names ran
    together and the SSIM axis title lay over the PSNR lines. What each panel shows is in its axis title, so the
    bands can be named once above the plots, clear of the gridlines and the curves."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    for kind, part in df.groupby("kind", sort=False):
        name = IMAGE_MECHANISMS[kind]
        for row, y in ((1, "psnr_db"), (2, "ssim")):
            fig.add_trace(go.Scatter(x=part.epsilon, y=part[y], mode="lines+markers", name=name, legendgroup=kind,
                                     showlegend=row == 1, **_STYLE[kind]), row=row, col=1)
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="ε (log scale)", row=2, col=1)
    fig.update_yaxes(title_text="PSNR (dB), higher is closer", row=1, col=1)
    fig.update_yaxes(title_text="SSIM, 1 = same", row=2, col=1)
    fig.update_layout(height=560, margin=dict(t=50, b=40), legend=dict(orientation="h", y=-0.14))
    palette.epsilon_bands(fig, list(df.epsilon), label_axes=("x",), row="all", col="all")
    return readable_log_ticks(fig, "x")  # both panels share the ε axis


def show_labels(image_set: ImageSet, table: pd.DataFrame) -> None:
    rows = table[["true", "laplace_argmax", "laplace_clamp_round", "randomized_response"]].itertuples(index=False)
    rows = list(rows)
    caps = [f"true {t} → Lap {a} · clamp {c} · RR {r}" for t, a, c, r in rows]
    alts = [f"Image labelled {t}; the noisy label is {a} by Laplace and argmax, {c} by Laplace, clamp and round, "
            f"{r} by randomised response" for t, a, c, r in rows]
    show_image_row(list(image_set.images), caps, image_set.pixel_range, image_set.upscale, alts=alts)


def compare_with_progress(dataset: str, epsilon: float, delta: float, seed: int | None, budget: str):
    """Run the train-on-what-you-see comparison behind the page's button (not cached: its result is kept in
    session state), with a progress bar. DP-SGD runs with the dataset's preset (as the CLI does)."""
    secure, seed = secure_or_seed(seed)
    with noise_mode(secure):  # every draw from the OS inside; splits and inits still from the seed
        from ..images.learners import train_on_what_you_see

        bar = st.progress(0.0, text="Training…")
        out = run_guarded(train_on_what_you_see, dataset, epsilon=epsilon, delta=delta, seed=seed,
                          noisy_params={"budget": budget},
                          on_step=lambda i, n, what: bar.progress(i / n, text=f"Training {what} ({i}/{n} done)"))
        bar.empty()
        return out
