""""Train on what you see": a classifier trained on input-perturbed images, registered as ``noisy-input``.

Privacy of ``noisy-input`` with the default ``budget="image"``: **per-image local DP**.
Every training image is released once through an image mechanism (Laplace with epsilon
split across all pixels of the image, so any two images are neighbours) and the
classifier only ever sees the released images. Each person's image is epsilon-DP on its
own, whatever the others are.

With ``budget="pixel"`` (or ``mechanism="dppix"``) the requested epsilon protects one pixel
(or ``m`` pixels) only; the image as a whole is then ``h * w * epsilon``-DP for Laplace by
basic composition (``h * w * epsilon / m`` for DP-Pix; for the Gaussian the whole-image
epsilon at the same delta). ``RunResult.epsilon`` always reports that **per-image**
epsilon, never the per-pixel one, so a 8x8 image at epsilon = 1 per pixel reports 64.

The labels are not touched by input noise: they are used in the clear unless
``label_share > 0`` spends that share of the requested epsilon on k-ary randomized
response (then the reported epsilon is image epsilon + label epsilon, basic composition,
for the whole (image, label) record).

DP-SGD protects a whole (image, label) record, in the central model (the trainer sees the
data, only the model is released), which is why it needs far less noise per record. With
labels in the clear the comparison on the page is not like for like, and it says so.

References
----------
Dwork & Roth, The Algorithmic Foundations of Differential Privacy (2014), Thm 3.16
(basic composition); Kasiviswanathan et al., What can we learn privately? FOCS 2008;
Fan, Image pixelization with differential privacy, DBSec 2018.
"""
from __future__ import annotations

import time
from typing import Any, Mapping

import dp_accounting
import numpy as np
import pandas as pd

from ..accounting import Neighbouring
from ..accounting.events import added_up
from ..defaults import DELTA
from ..exceptions import DPValueError
from ..learners import get_learner, learner_names, register, run_learner
from ..learners.base import LearnerSpec, RunResult, TestOutputs
from ..learners.knobs import Knob
from ..learners.metrics import score
from ..mechanisms import RandomizedResponse
from ..rng import as_generator, child_seed
from ..runtime.thread_warnings import ignored
from ..teaching.verdict import epsilon_text
from ..validation import check_fraction, check_int, check_positive, check_probability
from .labels import randomized_response_labels
from .mechanisms import ImageMechanism, make_image_mechanism

__all__ = ["NOISY_INPUT_KNOBS", "noisy_input_mechanism", "run_noisy_input", "train_on_what_you_see"]

#: The noisy-input learner's knobs.
NOISY_INPUT_KNOBS = (
    Knob("mechanism", "choice", default="laplace", choices=("laplace", "gaussian", "dppix"), privacy=True,
         label="Input mechanism", help="laplace, gaussian or dppix (Fan 2018: pixelise, then Laplace per cell)"),
    Knob("budget", "choice", default="image", choices=("image", "pixel"), privacy=True, label="ε applies to",
         help="image (per-image local DP) or pixel (one pixel only; the image then costs h·w·ε)"),
    Knob("cell", "int", default=2, low=1, high=64, privacy=True, advanced=True, label="DP-Pix cell (pixels)",
         help="side of the DP-Pix averaging cell"),
    Knob("m", "int", default=1, low=1, high=1_000_000, privacy=True, advanced=True, label="DP-Pix m",
         help="pixels that may differ between neighbouring images (DP-Pix)"),
    Knob("label_share", "float", default=0.0, low=0.0, high=0.99, privacy=True, label="Share of ε for labels",
         help="share of ε spent on randomized response of the labels (0: labels in the clear)"),
    Knob("C", "float", default=1.0, low=0.0, low_open=True, high=1e6, log=True, advanced=True,
         label="Inverse regularisation C", help="C of scikit-learn's LogisticRegression"),
    Knob("max_iter", "int", default=200, low=1, high=100_000, advanced=True, label="Solver iterations",
         help="max_iter of scikit-learn's LogisticRegression"),
    Knob("baseline", "bool", default=True, advanced=True, label="Also fit on clean images",
         help="also fit the same model on the clean images, for comparison"),
)
_DEFAULTS: dict[str, Any] = {k.name: k.default for k in NOISY_INPUT_KNOBS}


def noisy_input_mechanism(
    dataset,
    *,
    epsilon: float,
    delta: float,
    mechanism: str = "laplace",
    budget: str = "image",
    cell: int = 2,
    m: int = 1,
) -> ImageMechanism:
    """The image mechanism the ``noisy-input`` learner applies to each training image of ``dataset``."""
    if dataset.image_shape is None:
        raise DPValueError(f"noisy-input needs image data; {dataset.name!r} is tabular")
    pixel_range = (float(np.min(dataset.bounds[0])), float(np.max(dataset.bounds[1])))
    if budget not in ("image", "pixel"):
        raise DPValueError(f"budget must be 'image' (per-image local DP) or 'pixel' (one pixel only), got {budget!r}")
    if mechanism in ("laplace", "gaussian"):
        kind = f"{mechanism}-{budget}"
    elif mechanism == "dppix":
        kind = "dppix"
    else:
        raise DPValueError(f"mechanism must be 'laplace', 'gaussian' or 'dppix', got {mechanism!r}")
    return make_image_mechanism(kind, epsilon=epsilon, pixel_range=pixel_range, delta=delta, cell=cell, m=m)


def _fit_predict(X_train, y_train, X_test, *, C: float, max_iter: int) -> tuple[np.ndarray, bool, np.ndarray]:
    """Predicted labels, whether lbfgs converged, and class probabilities (columns: the classes seen)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    clf = LogisticRegression(C=C, max_iter=max_iter)
    # one BLAS thread: the machine (and a Streamlit server) is shared, and oversubscribed BLAS is 100x slower
    # noisy inputs often stop lbfgs at max_iter; report it in extras instead of spamming the page
    with ignored(ConvergenceWarning), threadpool_limits(limits=1):
        clf.fit(X_train, y_train)
    converged = bool(np.all(np.asarray(clf.n_iter_) < max_iter))
    proba = np.zeros((X_test.shape[0], int(np.max(clf.classes_)) + 1))
    proba[:, clf.classes_] = clf.predict_proba(X_test)
    return clf.predict(X_test), converged, proba


def _privacy_unit(mech, p: Mapping[str, Any], shape: tuple[int, int], *, eps_image: float, image_epsilon: float,
                  label_epsilon: float, reported: float) -> str:
    """What the reported epsilon protects, in words: the whole image, or only a pixel / m pixels (then what that
    amounts to for the whole image), and whether the labels are protected too."""
    h, w = shape
    label_share = label_epsilon > 0
    per_image = p["mechanism"] in ("laplace", "gaussian") and p["budget"] == "image"
    if per_image:
        unit = (f"per-image local DP: each training image is released once through {mech.title} with "
                f"ε = {eps_image:g} for the whole image; " + mech.privacy_unit)
    elif p["mechanism"] == "dppix":
        unit = (f"per-{mech.m}-pixel DP only: each training image is released once through {mech.title} with "
                f"ε = {eps_image:g} per {mech.m} pixel(s); the image as a whole is only "
                f"ε = h·w·ε/m = {h}·{w}·{eps_image:g}/{mech.m} = {epsilon_text(image_epsilon, digits=4)}-DP "
                "(composition over its pixels).")
    else:
        shown = epsilon_text(image_epsilon, digits=4)  # a guarantee: rounded up
        how = ("by basic composition" if p["mechanism"] == "laplace"
               else "at the same δ (analytic Gaussian, whole-image sensitivity)")
        unit = (f"per-pixel DP only: each training image is released once through {mech.title} with "
                f"ε = {eps_image:g} per pixel; the image as a whole is only "
                + (f"ε = h·w·ε = {h}·{w}·{eps_image:g} = {shown}" if p["mechanism"] == "laplace"
                   else f"ε = {shown}") + f"-DP {how}. That per-image ε is the one reported.")
    unit += (f" Labels: randomized response with ε = {epsilon_text(label_epsilon, digits=6)}; the record (image, "
             f"label) is ε = {epsilon_text(reported, digits=4)}-DP by basic composition." if label_share
             else " Labels are used in the clear: NOT protected by the input noise.")
    return unit


def _released_training_set(split, mech, *, label_epsilon: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every training image through ``mech``, and the labels through k-ary randomized response at
    ``label_epsilon`` (in the clear when it is 0)."""
    h, w = split.dataset.image_shape
    gen = as_generator(seed)
    X_img = np.asarray(split.X_train, dtype=float).reshape(-1, h, w)
    released = mech.privatise_many(X_img, rng=as_generator(child_seed(gen)))
    y_train = np.asarray(split.y_train)
    if label_epsilon > 0:
        y_train = randomized_response_labels(y_train, k=split.dataset.n_classes, epsilon=label_epsilon,
                                             rng=as_generator(child_seed(gen)))
    return released, y_train


def run_noisy_input(split, *, epsilon: float, delta: float, seed: int, params: Mapping[str, Any],
                    on_epoch=None) -> RunResult:
    """Release every training image through an image mechanism, then fit a logistic regression.

    Parameters
    ----------
    split : dpcore.datasets.Split
        An image dataset (digits, mnist5k, faces).
    epsilon, delta : float
        Requested budget, in the unit of ``budget`` (one whole image, or one pixel for
        ``budget="pixel"``, ``m`` pixels for DP-Pix). ``delta`` is only used by
        ``mechanism="gaussian"``.
    seed : int
    params : mapping
        ``mechanism`` ("laplace" | "gaussian" | "dppix", default "laplace"), ``budget``
        ("image" | "pixel", default "image": the per-image local DP guarantee),
        ``cell``/``m`` for DP-Pix, ``label_share`` (share of epsilon spent on randomized
        response of the labels, default 0: labels in the clear), ``C`` and ``max_iter``
        of scikit-learn's LogisticRegression, ``baseline`` (also fit on the clean images).

    Returns
    -------
    RunResult
        ``metrics["accuracy"]`` on the clean test images. ``epsilon`` is the **per-image**
        guarantee actually given (``h * w * epsilon`` for Laplace with ``budget="pixel"``,
        basic composition; plus the label share if labels are noised), never the
        per-pixel one; ``extras`` holds ``epsilon_requested``, ``epsilon_image``,
        ``labels_protected``, the privacy unit in words, the noise std per pixel, a few
        released training images and, with ``baseline``, ``clean_accuracy``.

    References
    ----------
    Dwork, McSherry, Nissim, Smith (TCC 2006); Kasiviswanathan, Lee, Nissim, Raskhodnikova,
    Smith. What can we learn privately? FOCS 2008 (local DP); Fan, Image pixelization with
    differential privacy, DBSec 2018.
    """
    p = {**_DEFAULTS, **dict(params)}
    label_share = check_probability(p["label_share"], "label_share")
    if label_share >= 1.0:
        raise DPValueError("label_share must be < 1: some budget has to remain for the images")
    C = check_positive(p["C"], "C")
    max_iter = check_int(p["max_iter"], "max_iter", minimum=1)
    ds = split.dataset
    eps_image = epsilon * (1.0 - label_share)
    mech = noisy_input_mechanism(ds, epsilon=eps_image, delta=delta, mechanism=p["mechanism"],
                                 budget=p["budget"], cell=p["cell"], m=p["m"])
    h, w = ds.image_shape
    lo, hi = mech.pixel_range
    t0 = time.perf_counter()
    released, y_train = _released_training_set(split, mech, label_epsilon=epsilon * label_share, seed=seed)
    scale = lambda X: (np.asarray(X, dtype=float).reshape(len(X), -1) - lo) / (hi - lo)  # noqa: E731 (public range)
    pred, converged, proba = _fit_predict(scale(released), y_train, scale(split.X_test), C=C, max_iter=max_iter)
    metrics = score(split, pred)
    # the guarantee for one whole image (what a person cares about), whatever the requested unit was
    image_epsilon = float(mech.image_epsilon((h, w)))
    label_epsilon = epsilon * label_share
    reported = added_up(image_epsilon, 1, label_epsilon)  # basic composition of image and label releases, rounded up
    unit = _privacy_unit(mech, p, (h, w), eps_image=eps_image, image_epsilon=image_epsilon,
                         label_epsilon=label_epsilon, reported=reported)
    extras: dict[str, Any] = {
        "privacy_unit": unit,
        "protects": "each training image" + (" and its label" if label_share else
                                             " only; the labels are used as they are (not protected)"),
        "epsilon_requested": float(epsilon),
        "epsilon_image": image_epsilon,
        "labels_protected": label_share > 0,
        "mechanism": mech.label,
        "noise_std": mech.noise_std((h, w)),
        "released_examples": released[:8].copy(),
        "pixel_range": (lo, hi),
        "converged": converged,
        "predictions": pred,
    }
    if p["baseline"]:
        clean_pred, _, _ = _fit_predict(
            scale(split.X_train), split.y_train, scale(split.X_test), C=C, max_iter=max_iter
        )
        extras["clean_accuracy"] = score(split, clean_pred)["accuracy"]
    if on_epoch is not None:
        on_epoch({"epoch": 1, "epochs": 1, "accuracy": metrics["accuracy"], "epsilon": reported})
    # each training record is released once (parallel composition over records): its image, then its label
    event = mech.image_dp_event((h, w))
    if label_share > 0:
        event = dp_accounting.ComposedDpEvent(
            [event, RandomizedResponse(epsilon=label_epsilon, k=ds.n_classes).dp_event])
    return RunResult(
        "noisy-input", ds.name, "classification", metrics, reported, float(mech.delta), noise_multiplier=None,
        seconds=time.perf_counter() - t0, extras=extras, event=event,
        history=pd.DataFrame([{"epoch": 1, "epsilon": reported, "accuracy": metrics["accuracy"]}]),
        neighbouring=Neighbouring.REPLACE_ONE,  # one person's image (and label) replaced by any other
        unit="records" if label_share > 0 else "images",  # labels in the clear: the image alone is protected
        test_outputs=TestOutputs(np.pad(proba, ((0, 0), (0, max(0, ds.n_classes - proba.shape[1])))),
                                 "probability"),
    )


register(LearnerSpec(
    name="noisy-input",
    title="Logistic regression on noisy images (input perturbation)",
    tasks=("classification",),
    private=True,
    run=run_noisy_input,
    knobs=NOISY_INPUT_KNOBS,
    images_only=True,
    uses_delta=True,
    description=("Each training image is released with per-image local DP (Laplace, ε split across all "
                 "pixels, by default); a logistic regression is trained on what was released."),
))


def _dpsgd_settings(dataset, overrides: Mapping[str, Any]) -> str:
    """In words: the DP-SGD preset of ``dataset`` and any overrides the caller passed."""
    try:
        from ..training import preset_for

        text = f"the {dataset.name} preset of the dpsgd learner: {preset_for(dataset).note}"
    except ImportError:  # pragma: no cover - the training package ships with dpcore
        text = "the dpsgd learner's defaults"
    if overrides:
        text += "; overridden: " + ", ".join(f"{k} = {v}" for k, v in overrides.items())
    return text


def dpsgd_available() -> bool:
    """Whether the DP-SGD learner ``dpsgd`` is registered (written in ``dpcore.training``)."""
    return "dpsgd" in learner_names()


def _release(res) -> dict:
    """What a run released, in plain values (its result keeps the arrays too): event, epsilon, delta, relation and
    unit."""
    return {"event": res.event, "epsilon": res.epsilon, "delta": res.delta, "neighbouring": res.neighbouring,
            "unit": res.unit}


def train_on_what_you_see(
    dataset: str,
    *,
    epsilon: float,
    delta: float = DELTA,
    seed: int = 0,
    noisy_params: Mapping[str, Any] | None = None,
    dpsgd_params: Mapping[str, Any] | None = None,
    train_fraction: float = 1.0,
    on_step=None,
) -> tuple[pd.DataFrame, dict]:
    """Accuracy side by side: clean baseline, noisy-input and (when registered) DP-SGD at one epsilon.

    DP-SGD runs through ``run_learner("dpsgd", ...)`` with ``dpsgd_params`` (default none:
    the dataset's preset, the same run as ``python -m dpcore train``); it is trained at the
    requested ``epsilon`` for a whole (image, label) record. The noisy-input row reports
    its per-image epsilon (``h * w * epsilon`` with ``budget="pixel"``) and, unless
    ``label_share > 0``, leaves the labels unprotected, so the two rows are not like for
    like: ``labels_protected`` says which rows protect the label.

    Returns ``(table, info)``: the table has one row per model (``model, accuracy,
    epsilon, delta, privacy, seconds, labels_protected``); ``info`` holds
    ``released_examples`` (what the noisy-input classifier saw) with their ``pixel_range``,
    ``epsilon_requested``, ``epsilon_image``, ``labels_protected``, ``dpsgd_available``,
    ``dpsgd_settings`` (the preset in words), ``dpsgd_error`` (a message if DP-SGD
    failed) and ``releases``, ``[(learner, {event, epsilon, delta, neighbouring, unit}), ...]`` for each private
    model trained. ``on_step(i, total, name)`` reports progress.

    References
    ----------
    Abadi et al., Deep learning with differential privacy, CCS 2016 (DP-SGD); Dwork & Roth
    (2014), Thm 3.16 (basic composition).
    """
    from ..datasets import train_test_split

    check_fraction(train_fraction, "train_fraction")
    split = train_test_split(dataset, seed=seed)
    have_dpsgd = dpsgd_available()
    total = 2 if have_dpsgd else 1
    if on_step:
        on_step(0, total, "noisy-input")
    res = run_learner("noisy-input", split, epsilon=epsilon, delta=delta, seed=seed,
                      params=dict(noisy_params or {}), train_fraction=train_fraction)
    rows = [
        {"model": "Logistic regression on clean images (no privacy)", "accuracy": res.extras.get("clean_accuracy"),
         "epsilon": float("inf"), "delta": 0.0, "privacy": "none", "seconds": np.nan, "labels_protected": False},
        {"model": f"Logistic regression on noisy images ({res.extras['mechanism']})", "accuracy": res.score,
         "epsilon": res.epsilon, "delta": res.delta, "privacy": res.extras["privacy_unit"], "seconds": res.seconds,
         "labels_protected": res.extras["labels_protected"]},
    ]
    info: dict[str, Any] = {"dataset": split.dataset.name, "released_examples": res.extras["released_examples"],
                            "pixel_range": res.extras["pixel_range"], "dpsgd_available": have_dpsgd,
                            "dpsgd_error": None, "dpsgd_settings": None,
                            "epsilon_requested": res.extras["epsilon_requested"],
                            "epsilon_image": res.extras["epsilon_image"],
                            "labels_protected": res.extras["labels_protected"],
                            # each private model's release, for a running total of the runs on this data: its event,
                            # (epsilon, delta), who counts as a neighbour and what of each record it protects
                            "releases": [("noisy-input", _release(res))]}
    if have_dpsgd and delta <= 0:  # a choice, not a failure: say which knob brings DP-SGD back
        info["dpsgd_error"] = ("DP-SGD was not trained: its Gaussian noise needs δ > 0, and δ = 0 asks for pure "
                               "ε-DP. Set δ above 0 (1e-5 is usual) to compare it with the noisy images.")
    elif have_dpsgd:
        if on_step:
            on_step(1, total, "dpsgd")
        spec = get_learner("dpsgd")
        kw = {k: v for k, v in dict(dpsgd_params or {}).items() if k in spec.params}
        # no params by default: the dataset's DP-SGD preset, exactly what `python -m dpcore train` runs
        try:
            d = run_learner("dpsgd", split, epsilon=spec.epsilon_to_aim_at(epsilon, kw), delta=delta, seed=seed,
                            params=kw, train_fraction=train_fraction)
            rows.append({"model": "DP-SGD (central DP, trained on the clean images)", "accuracy": d.score,
                         "epsilon": d.epsilon, "delta": d.delta,
                         "privacy": "one (image, label) record, add/remove, accounted by dp_accounting",
                         "seconds": d.seconds, "labels_protected": True})
            info["dpsgd_settings"] = _dpsgd_settings(split.dataset, kw)
            info["releases"].append(("dpsgd", _release(d)))
        except Exception as exc:  # the page must not crash if the other engine fails
            info["dpsgd_error"] = f"DP-SGD failed: {exc}"
    if on_step:
        on_step(total, total, "done")
    return pd.DataFrame(rows), info
