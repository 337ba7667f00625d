"""Registered learners of this package: ``non-private``, ``dpsgd``, ``output-perturbation``,
``label-dp-laplace`` and ``label-dp-rr``.

All five train the same models through :func:`dpcore.training.train`, on
features scaled with the dataset's public bounds, so their accuracies are
comparable on the same split.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
import math
from typing import Any, Mapping

import numpy as np

import dp_accounting

from ..accounting import Neighbouring, epsilon_of_event
from ..exceptions import DPValueError
from ..learners.base import LearnerSpec, RunResult, TestOutputs
from ..learners.metrics import confusion_matrix, score
from ..mechanisms import Laplace, RandomizedResponse
from ..rng import as_generator, child_seed
from ..validation import check_int
from .engine import TrainConfig, TrainResult, train
from .presets import preset_for
from .preprocess import FEATURES, dct_features, hog_features, prepare_features

MODEL_PARAMS = ("model", "hidden", "depth", "activation", "channels", "epochs", "batch_size", "learning_rate",
                "momentum", "weight_decay", "ema", "features", "dct_size", "hog_cell", "hog_block")
_FEATURE_KEYS = ("features", "dct_size", "hog_cell", "hog_block")
DPSGD_PARAMS = MODEL_PARAMS + ("optimizer",) + ("clip_norm", "noise_multiplier", "accountant", "sampling", "max_epsilon")
#: How the non-private network behind the baselines is trained (on the same model).
#: Adam because it is robust to the scale of the features; at least 30 epochs and about 600 steps.
NONPRIVATE_DEFAULTS = dict(batch_size=64, learning_rate=0.01, momentum=0.0, optimizer="adam", ema=0.0,
                           sampling="shuffle")
NONPRIVATE_MIN_STEPS = 600
#: Label DP (Ghazi et al. 2021): neighbouring training sets differ in one record's label; the features are public.
LABEL_NEIGHBOURING = Neighbouring.REPLACE_ONE


def _feature_choice(split, params: Mapping[str, Any]) -> tuple[str, dict]:
    """The feature transform (``"pixels"``, ``"dct"`` or ``"hog"``) and its options, preset overridden by ``params``."""
    pre = preset_for(split.dataset)
    model = params.get("model", pre.model)
    features = params.get("features", pre.features if model != "cnn" else "pixels")
    if features not in FEATURES:
        raise DPValueError(f"features must be one of {FEATURES}, got {features!r}")
    if features != "pixels":
        if not split.dataset.is_image:
            raise DPValueError(f"features={features!r} needs image data; {split.dataset.name!r} is tabular: "
                               "use 'pixels'")
        if model == "cnn":
            raise DPValueError("model='cnn' works on pixels; use features='pixels' with it")
    shape = split.dataset.image_shape or (8, 8)
    if features == "dct":
        return features, {"k": check_int(params.get("dct_size", pre.dct_size or min(shape) // 2), "dct_size")}
    if features == "hog":
        cell = check_int(params.get("hog_cell", pre.hog_cell or max(2, min(shape) // 4)), "hog_cell", minimum=1)
        block = check_int(params.get("hog_block", pre.hog_block), "hog_block", minimum=1)
        if cell * block > min(shape):
            raise DPValueError(f"hog_cell={cell} with hog_block={block} needs images of at least {cell * block}x"
                               f"{cell * block} pixels, {split.dataset.name!r} has {shape[0]}x{shape[1]}; use a "
                               "smaller hog_cell or hog_block")
        return features, {"cell_size": cell, "block_size": block}
    return features, {}


def _features(split, params: Mapping[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    """Train and test features scaled by the public bounds (then DCT or HOG if asked), and the image shape.

    Each transform is per-sample and data-independent (see :mod:`dpcore.training.preprocess`).
    """
    ds = split.dataset
    X_tr, X_te = prepare_features(split.X_train, ds.bounds), prepare_features(split.X_test, ds.bounds, warn=False)
    features, opts = _feature_choice(split, params or {})
    if features == "dct":
        return dct_features(X_tr, ds.image_shape, opts["k"]), dct_features(X_te, ds.image_shape, opts["k"]), None
    if features == "hog":
        return hog_features(X_tr, ds.image_shape, **opts), hog_features(X_te, ds.image_shape, **opts), None
    return X_tr, X_te, ds.image_shape


def _label_scale(split) -> tuple[float, float]:
    lo, hi = split.dataset.label_range or (float(np.min(split.y_train)), float(np.max(split.y_train)))
    if hi <= lo:
        hi = lo + 1.0
    return float(lo), float(hi)


def _model_kwargs(split, params: Mapping[str, Any], *, private: bool) -> dict:
    """TrainConfig fields from the dataset preset, overridden by ``params``."""
    n = split.X_train.shape[0]
    pre = preset_for(split.dataset)
    kw: dict[str, Any] = dict(model=pre.model, hidden=pre.hidden, activation=pre.activation, epochs=pre.epochs,
                              batch_size=pre.batch_size(n), learning_rate=pre.learning_rate, momentum=pre.momentum,
                              ema=pre.ema, clip_norm=pre.clip_norm, accountant=pre.accountant)
    if not private:
        kw.update(NONPRIVATE_DEFAULTS)
        kw["batch_size"] = min(kw["batch_size"], n)
        per_epoch = math.ceil(n / kw["batch_size"])
        kw["epochs"] = int(min(300, max(30, math.ceil(NONPRIVATE_MIN_STEPS / per_epoch))))
    for key, val in params.items():
        if key in DPSGD_PARAMS and key not in _FEATURE_KEYS:
            kw[key] = val
    if kw["model"] == "cnn" and not split.dataset.is_image:
        raise DPValueError(f"model='cnn' needs image data; {split.dataset.name!r} is tabular: use 'mlp' or 'linear'")
    if "batch_size" in kw:
        kw["batch_size"] = check_int(kw["batch_size"], "batch_size", minimum=1)
        if kw["batch_size"] > n:
            raise DPValueError(f"batch_size={kw['batch_size']} is larger than the {n} training rows; use at most {n}")
    return kw


@dataclass(frozen=True)
class TrainingProblem:
    """Exactly what a registered network learner hands to :func:`dpcore.training.train` for a split.

    Public so that an auditor can run the same training with the engine's hooks (gradient
    canaries, a per-step observer) on the same features, labels and configuration.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    config: TrainConfig
    n_outputs: int
    image_shape: tuple | None


def training_problem(split, y_train=None, *, private: bool, epsilon: float | None, delta: float, seed: int,
                     params: Mapping[str, Any]) -> TrainingProblem:
    """The features, labels and :class:`TrainConfig` the learners train on (preset overridden by ``params``)."""
    X_tr, X_te, image_shape = _features(split, params)
    kw = _model_kwargs(split, params, private=private)
    task = split.task
    y_te = np.asarray(split.y_test)
    if task == "regression":
        lo, hi = _label_scale(split)
        y_te = (y_te - lo) / (hi - lo)
    if private:
        if kw.get("noise_multiplier") is None:
            kw["target_epsilon"] = epsilon
    else:
        for k in ("noise_multiplier", "max_epsilon"):
            kw.pop(k, None)
        kw["clip_norm"] = kw.get("clip_norm", 1.0)
    cfg = TrainConfig(delta=delta, seed=seed, private=private, task=task, **kw)
    return TrainingProblem(X_tr, _train_labels(split) if y_train is None else y_train, X_te, y_te, cfg,
                           split.n_classes if task == "classification" else 1, image_shape)


def _fit(split, y_train, *, private: bool, epsilon: float | None, delta: float, seed: int,
         params: Mapping[str, Any], on_epoch=None) -> tuple[TrainResult, np.ndarray, np.ndarray]:
    pb = training_problem(split, y_train, private=private, epsilon=epsilon, delta=delta, seed=seed, params=params)
    if split.task == "regression" and on_epoch is not None:  # mse in label units, as in the final history (_result)
        lo, hi = _label_scale(split)
        on_epoch = functools.partial(_label_units_mse, on_epoch, (hi - lo) ** 2)
    res = train(pb.X_train, pb.y_train, pb.config, X_test=pb.X_test, y_test=pb.y_test, n_outputs=pb.n_outputs,
                image_shape=pb.image_shape, on_epoch=on_epoch)
    return res, pb.X_train, pb.X_test


def _label_units_mse(on_epoch, scale: float, info: dict) -> None:
    on_epoch({**info, "mse": info["mse"] * scale})


def _result(name: str, split, res: TrainResult, y_pred, *, epsilon: float, delta: float,
            noise_multiplier=None, extras: dict | None = None, event: dp_accounting.DpEvent | None = None,
            neighbouring: Neighbouring | None = None, X_te: np.ndarray | None = None,
            outputs: TestOutputs | None = None) -> RunResult:
    metrics = score(split, y_pred)
    if outputs is None and X_te is not None:  # what the released model answers on the test rows
        outputs = TestOutputs(res.predict_proba(X_te), "probability") if split.task == "classification" \
            else TestOutputs(np.asarray(y_pred, dtype=float), "value")
    ex = {"predictions": np.asarray(y_pred), "sample_rate": res.sample_rate, "steps": res.steps,
          "stopped_early": res.stopped_early, "warnings": list(res.warnings), "config": res.config}
    if split.task == "classification":
        ex["confusion_matrix"] = confusion_matrix(split.y_test, y_pred, split.n_classes)
    ex.update(extras or {})
    hist = res.history.copy()
    if split.task == "regression":  # report mse on the original label scale
        lo, hi = _label_scale(split)
        hist["mse"] = hist["mse"] * (hi - lo) ** 2
    return RunResult(name, split.dataset.name, split.task, metrics, float(epsilon), float(delta),
                     noise_multiplier, res.seconds, hist, ex, event=event, neighbouring=neighbouring,
                     test_outputs=outputs)


def _predict(split, res: TrainResult, X_te: np.ndarray) -> np.ndarray:
    if split.task == "classification":
        return res.predict(X_te)
    lo, hi = _label_scale(split)
    return res.predict(X_te) * (hi - lo) + lo


def _train_labels(split) -> np.ndarray:
    if split.task == "classification":
        return np.asarray(split.y_train)
    lo, hi = _label_scale(split)
    return (np.asarray(split.y_train, dtype=float) - lo) / (hi - lo)


# --------------------------------------------------------------------------- learners
def run_nonprivate(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    """The same model and features trained without privacy (Adam, batch 64, >= 600 steps): the baseline."""
    res, _, X_te = _fit(split, _train_labels(split), private=False, epsilon=None, delta=delta, seed=seed,
                        params=params, on_epoch=on_epoch)
    return _result("non-private", split, res, _predict(split, res, X_te), epsilon=math.inf, delta=0.0, X_te=X_te)


def run_dpsgd(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    """DP-SGD (Abadi et al. 2016) with the dataset preset, overridable through ``params``.

    Without ``noise_multiplier`` sigma is calibrated so the planned epochs spend
    ``epsilon``; with it, ``epsilon`` is ignored and the spent epsilon is
    reported (``max_epsilon`` then stops training at a budget).
    """
    if delta <= 0:
        raise DPValueError("DP-SGD needs delta > 0 (Gaussian noise); a common choice is 1e-5")
    res, _, X_te = _fit(split, _train_labels(split), private=True, epsilon=epsilon, delta=delta, seed=seed,
                        params=params, on_epoch=on_epoch)
    return _result("dpsgd", split, res, _predict(split, res, X_te), epsilon=res.epsilon, delta=delta,
                   noise_multiplier=res.noise_multiplier,
                   extras={"accountant": res.config.accountant, "target_epsilon": res.config.target_epsilon},
                   event=res.dp_event if res.dp_event is not None else dp_accounting.NonPrivateDpEvent(),
                   neighbouring=Neighbouring.ADD_REMOVE, X_te=X_te)


def softmax_output_perturbation(proba: np.ndarray, *, epsilon: float, rng) -> np.ndarray:
    """Release softmax vectors through Lap(2 / epsilon) on every coordinate.

    Two softmax vectors lie in the probability simplex, so they differ by at
    most 2 in L1 norm, whatever the training data: the L1 sensitivity of one
    released vector is 2 and each release is epsilon-DP. m released vectors
    cost m * epsilon (basic composition).

    References
    ----------
    Dwork, McSherry, Nissim, Smith, TCC 2006 (the Laplace mechanism).

    Examples
    --------
    >>> out = softmax_output_perturbation(np.array([[0.9, 0.1]]), epsilon=1.0, rng=0)
    >>> out.shape
    (1, 2)
    """
    return Laplace(epsilon=epsilon, sensitivity=2.0).randomise(np.asarray(proba, dtype=float), rng=as_generator(rng))


def run_output_perturbation(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    """Non-private network; each test query's softmax is released with Lap(2/epsilon_q), then argmax.

    ``params["budget"]``: ``"per-query"`` (default, as in seed 000: ``epsilon`` is
    each query's budget and the m test queries together cost ``m * epsilon``, the
    reported epsilon) or ``"total"`` (``epsilon`` is split evenly: each of the m
    queries gets ``epsilon / m``).
    """
    params = dict(params)
    mode = params.pop("budget", "per-query")
    if mode not in ("per-query", "total"):
        raise DPValueError(f"budget must be 'per-query' or 'total', got {mode!r}")
    res, _, X_te = _fit(split, _train_labels(split), private=False, epsilon=None, delta=0.0, seed=seed,
                        params=params, on_epoch=on_epoch)
    m = X_te.shape[0]
    eps_q = epsilon if mode == "per-query" else epsilon / m
    rng = as_generator(seed)
    child_seed(rng)
    noisy = softmax_output_perturbation(res.predict_proba(X_te), epsilon=eps_q, rng=rng)
    y_pred = noisy.argmax(1)
    clean_acc = float(np.mean(res.predict(X_te) == np.asarray(split.y_test)))
    # m releases of Lap(2/eps_q) at L1 sensitivity 2; 2 bounds the change between ANY two training sets, so the
    # guarantee holds under add/remove (and replace-one) alike
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1.0 / eps_q), m)
    return _result("output-perturbation", split, res, y_pred, epsilon=eps_q * m, delta=0.0,
                   extras={"epsilon_per_query": eps_q, "queries": m, "noise_scale": 2.0 / eps_q,
                           "sensitivity_l1": 2.0, "accuracy_without_noise": clean_acc},
                   event=event, neighbouring=Neighbouring.ADD_REMOVE,
                   outputs=TestOutputs(noisy, "score"))  # the released noisy vectors: all an attacker sees


def laplace_labels(split, *, epsilon: float, rng, decode: str = "argmax") -> np.ndarray:
    """Label-DP training labels by the Laplace mechanism (seed 002).

    Classification: one-hot labels differ by 2 in L1 norm when one record's
    label changes, so every coordinate gets Lap(2/epsilon); then ``"argmax"``
    (post-processing) or, as the seed does, ``"clamp-round"``: clamp to [0, 1] and
    round, kept as soft targets (rows with no 1 become uniform). Regression:
    labels in the declared range [a, b] get Lap((b - a)/epsilon), then clamp.
    Each record's label is used once, so the labels are epsilon-label-DP
    (Ghazi et al. 2021's notion: features are public).

    References
    ----------
    Ghazi, Golowich, Kumar, Manurangsi, Zhang. Deep learning with label differential privacy. NeurIPS 2021.
    """
    gen = as_generator(rng)
    if split.task == "classification":
        k = split.n_classes
        onehot = np.eye(k)[np.asarray(split.y_train, dtype=np.int64)]
        noisy = Laplace(epsilon=epsilon, sensitivity=2.0).randomise(onehot, rng=gen)
        if decode == "argmax":
            return noisy.argmax(1)
        if decode == "clamp-round":
            r = np.round(np.clip(noisy, 0.0, 1.0))
            r[r.sum(1) == 0] = 1.0
            return r / r.sum(1, keepdims=True)
        raise DPValueError(f"decode must be 'argmax' or 'clamp-round', got {decode!r}")
    lo, hi = _label_scale(split)
    y = np.clip(np.asarray(split.y_train, dtype=float), lo, hi)
    noisy = Laplace(epsilon=epsilon, sensitivity=hi - lo).randomise(y, rng=gen)
    return (np.clip(noisy, lo, hi) - lo) / (hi - lo)


def run_label_dp_laplace(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    """Train the non-private model on Laplace-noised labels (label DP, pure epsilon)."""
    params = dict(params)
    decode = params.pop("decode", "argmax")
    rng = as_generator(seed)
    y_noisy = laplace_labels(split, epsilon=epsilon, rng=child_seed(rng), decode=decode)
    res, _, X_te = _fit(split, y_noisy, private=False, epsilon=None, delta=0.0, seed=seed, params=params,
                        on_epoch=on_epoch)
    if split.task == "classification":
        sensitivity = 2.0  # one changed label moves a one-hot vector by 2 in L1
    else:
        lo, hi = _label_scale(split)
        sensitivity = hi - lo
    extras = {"label_noise_scale": sensitivity / epsilon, "sensitivity_l1": sensitivity}
    if split.task == "classification":
        hard = y_noisy if y_noisy.ndim == 1 else y_noisy.argmax(1)
        extras["label_agreement"] = float(np.mean(hard == np.asarray(split.y_train)))
    hist = res.history.assign(epsilon=epsilon)
    object.__setattr__(res, "history", hist)
    # each record's label is released once (noise scale sensitivity / epsilon): one Laplace event per record
    return _result("label-dp-laplace", split, res, _predict(split, res, X_te), epsilon=epsilon, delta=0.0,
                   extras=extras, event=dp_accounting.LaplaceDpEvent(1.0 / epsilon),
                   neighbouring=LABEL_NEIGHBOURING, X_te=X_te)


def run_label_dp_rr(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    """Train on labels from k-ary randomized response (label DP, replace-one neighbours)."""
    k = split.n_classes
    rr = RandomizedResponse(epsilon=epsilon, k=k)
    rng = as_generator(seed)
    y_noisy = rr.randomise(np.asarray(split.y_train, dtype=np.int64), rng=child_seed(rng))
    res, _, X_te = _fit(split, np.asarray(y_noisy), private=False, epsilon=None, delta=0.0, seed=seed,
                        params=params, on_epoch=on_epoch)
    eps = epsilon_of_event(rr.dp_event, delta=0.0, neighbouring=LABEL_NEIGHBOURING)
    object.__setattr__(res, "history", res.history.assign(epsilon=eps))
    return _result("label-dp-rr", split, res, _predict(split, res, X_te), epsilon=eps, delta=0.0,
                   extras={"p_keep": rr.p_keep, "label_agreement": float(np.mean(y_noisy == np.asarray(split.y_train)))},
                   event=rr.dp_event, neighbouring=LABEL_NEIGHBOURING, X_te=X_te)


def _register() -> None:
    from ..learners import register

    register(LearnerSpec(
        "non-private", "Non-private SGD (same model)", ("classification", "regression"), False, run_nonprivate,
        params=MODEL_PARAMS, uses_delta=False,
        description="The same network trained without privacy (minibatch SGD with momentum): the baseline."))
    register(LearnerSpec(
        "dpsgd", "DP-SGD (Abadi et al. 2016)", ("classification", "regression"), True, run_dpsgd,
        params=DPSGD_PARAMS, baseline="non-private",
        description="Per-example clipping (ghost norms), Gaussian noise sigma*C, Poisson sampling, RDP/PLD accounting."))
    register(LearnerSpec(
        "output-perturbation", "Laplace on the softmax outputs", ("classification",), True, run_output_perturbation,
        params=MODEL_PARAMS + ("budget",), baseline="non-private", uses_delta=False,
        description="Non-private network; every released softmax vector gets Lap(2/epsilon) (L1 sensitivity 2 "
                    "on the simplex). m queries cost m*epsilon."))
    register(LearnerSpec(
        "label-dp-laplace", "Label DP: Laplace on labels", ("classification", "regression"), True,
        run_label_dp_laplace, params=MODEL_PARAMS + ("decode",), baseline="non-private", uses_delta=False,
        description="One-hot labels + Lap(2/epsilon) then argmax (or clamp+round); regression labels + "
                    "Lap(range/epsilon) then clamp. Features are public."))
    register(LearnerSpec(
        "label-dp-rr", "Label DP: randomized response", ("classification",), True, run_label_dp_rr,
        params=MODEL_PARAMS, baseline="non-private", uses_delta=False,
        description="k-ary randomized response on labels (Ghazi et al. 2021), epsilon under replace-one."))


_register()
