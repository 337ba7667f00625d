"""Registered learners of this package: ``non-private``, ``dpsgd``, ``output-perturbation``,
``label-dp-laplace`` and ``label-dp-rr``.

All five train the same models through :func:`dpcore.training.train`, on
features scaled with the dataset's public bounds, so their accuracies are
comparable on the same split.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re
import warnings
import weakref
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping

import dp_accounting
import numpy as np

from .._lru import BytesLRU
from ..accounting import Neighbouring, epsilon_of_event
from ..datasets.registry import is_registered, split_rows
from ..exceptions import SINGLE_CLASS_SAID, DPValueError, PrivacyLeakWarning, SingleClassWarning, user_stacklevel
from ..learners.base import LearnerSpec, ReleasedModel, RunResult, TestOutputs, class_labels
from ..learners.decision import NOISY_LABELS
from ..learners.knobs import ACCOUNTANT_LABELS, ACCOUNTANT_PAGE_HELP, Knob, Wording
from ..learners.metrics import confusion_matrix, score
from ..mechanisms import Laplace, RandomizedResponse
from ..mechanisms.base import noise_scale, pure_laplace_event, round_up
from ..rng import as_generator, child_seed
from ..runtime.thread_warnings import caught as caught_warnings
from ..runtime.thread_warnings import ignored
from ..validation import check_int
from .config import ACTIVATIONS, MODELS, OPTIMIZERS, SHUFFLE_CAVEAT, TrainConfig
from .preprocess import FEATURES, dct_features, hog_features, prepare_features
from .presets import LABEL_NOISE_DEFAULTS, NONPRIVATE_DEFAULTS, NONPRIVATE_MIN_STEPS, preset_for
from .sampling import SAMPLINGS

if TYPE_CHECKING:
    from .engine import TrainResult


def _preset(attr: str):
    """``default_from`` reading the dataset preset's ``attr`` (see :mod:`dpcore.training.presets`)."""
    def default(split):
        pre = preset_for(split.dataset)
        if attr == "batch_size":
            return pre.batch_size(split.X_train.shape[0])
        value = getattr(pre, attr)
        if attr in ("dct_size", "hog_cell") and not value:
            return None  # 0 in a preset means "not set": the learner derives it from the image size
        return value
    return default


#: The network and its input features: the non-private baseline trains the same (``shared``).
MODEL_KNOBS = (
    Knob("model", "choice", choices=MODELS, shared=True, label="Model", default_from=_preset("model"),
         image_choices=("cnn",), choice_labels={"linear": "Softmax / linear regression", "mlp": "MLP",
                                                 "cnn": "Small CNN"},
         help="network: linear (softmax or linear regression), mlp or cnn (images only); default: the dataset preset"),
    Knob("hidden", "int", low=1, high=4096, shared=True, label="Hidden width", default_from=_preset("hidden"),
         when={"model": ("mlp",)},
         help="units per hidden layer of the MLP"),
    Knob("depth", "int", default=1, low=1, high=8, shared=True, advanced=True, label="Hidden layers",
         when={"model": ("mlp",)},
         help="number of hidden layers of the MLP"),
    Knob("activation", "choice", choices=tuple(ACTIVATIONS), shared=True, label="Activation",
         when={"model": ("mlp", "cnn")},
         default_from=_preset("activation"), help="hidden-layer activation (tanh is bounded, which suits DP-SGD)"),
    Knob("channels", "int", default=16, low=1, high=256, shared=True, advanced=True, label="CNN channels",
         when={"model": ("cnn",)}, images=True,
         help="channels of the CNN's first convolution (the second has twice as many)"),
    Knob("features", "choice", choices=FEATURES, shared=True, label="Input features", images=True,
         when={"model": ("linear", "mlp")},
         choice_labels={"pixels": "Pixels", "dct": "Low-frequency DCT", "hog": "HOG"},
         default_from=_preset("features"),
         help="a fixed per-image transform (no privacy cost): pixels, a low-frequency DCT or HOG (images only)"),
    Knob("dct_size", "int", low=1, high=64, shared=True, label="DCT block k (k×k coefficients)", images=True,
         when={"model": ("linear", "mlp"), "features": ("dct",)},  # the CNN reads pixels
         default_from=_preset("dct_size"), help="side of the block of low-frequency DCT coefficients kept"),
    Knob("hog_cell", "int", low=1, high=64, shared=True, label="HOG cell (pixels)", images=True,
         when={"model": ("linear", "mlp"), "features": ("hog",)},
         default_from=_preset("hog_cell"), help="side of a HOG cell in pixels"),
    Knob("hog_block", "int", low=1, high=16, shared=True, advanced=True, label="HOG block (cells)", images=True,
         when={"model": ("linear", "mlp"), "features": ("hog",)},
         default_from=_preset("hog_block"), help="side of a HOG normalisation block in cells"),
)
#: How the network is optimised (defaults: the dataset preset for DP-SGD, Adam for the non-private network).
OPTIMISER_KNOBS = (
    Knob("epochs", "int", low=1, high=10_000, group="optimiser", label="Epochs", default_from=_preset("epochs"),
         help="passes over the training data"),
    Knob("batch_size", "int", low=1, high=1_000_000, group="optimiser", label="Batch size (expected)",
         default_from=_preset("batch_size"),
         help="expected minibatch size (DP-SGD: Poisson sampling rate = batch size / n); at most the training rows"),
    Knob("learning_rate", "float", low=0.0, low_open=True, high=1000.0, log=True, group="optimiser",
         label="Learning rate", default_from=_preset("learning_rate"),
         help="step size (default: the dataset preset's; the Small CNN starts from its own, smaller one)",
         default_if={"model": {"cnn": _preset("cnn_learning_rate")}}),
    Knob("momentum", "float", low=0.0, high=0.999, group="optimiser", advanced=True, label="Momentum",
         default_from=_preset("momentum"), help="SGD momentum (post-processing of the noisy gradients: free)"),
    Knob("weight_decay", "float", default=0.0, low=0.0, high=10.0, group="optimiser", advanced=True,
         label="Weight decay", help="L2 shrinkage of the weights at every step (post-processing: free)"),
    Knob("ema", "float", low=0.0, high=0.9999, group="optimiser", advanced=True, label="Iterate averaging (EMA)",
         default_from=_preset("ema"),
         help="decay of an exponential moving average of the weights (0 = off; post-processing: free)"),
)
#: DP-SGD's own knobs (Abadi et al. 2016).
DPSGD_KNOBS = (
    Knob("optimizer", "choice", default="sgd", choices=OPTIMIZERS, group="optimiser", advanced=True,
         label="Optimiser", help="what consumes the noisy gradient: sgd or adam (both post-processing)"),
    Knob("clip_norm", "float", low=0.0, low_open=True, high=1e6, log=True, privacy=True, group="privacy",
         label="Clip norm C", default_from=_preset("clip_norm"),
         help="per-example L2 clipping norm C: every example's gradient is scaled down to at most C"),
    Knob("noise_multiplier", "float", low=0.0, high=1e4, log=True, privacy=True, group="privacy",
         label="Noise multiplier σ",
         help="Gaussian noise std / C; omitted: calibrated from epsilon (then the epsilon spent is reported)"),
    Knob("accountant", "choice", choices=("rdp", "pld"), privacy=True, group="privacy", label="Accountant",
         choice_labels=ACCOUNTANT_LABELS, page_help=ACCOUNTANT_PAGE_HELP,
         default_from=_preset("accountant"), help="privacy accountant: rdp (moments accountant) or pld"),
    Knob("sampling", "choice", default="poisson", choices=SAMPLINGS, privacy=True, group="privacy",
         label="Sampling", choice_labels={"poisson": "Poisson (amplified)", "shuffle": "Shuffled (no amplification)"},
         help="poisson (each record joins each batch at random: amplification by sampling) or shuffle (fixed-size "
              "batches; no amplification is proven, so each epoch is accounted as one Gaussian mechanism, "
              "replace-one neighbours: far more noise for the same epsilon)",
         warn_on={"shuffle": SHUFFLE_CAVEAT}),
    Knob("max_epsilon", "float", low=0.0, low_open=True, high=1e4, privacy=True, group="privacy", advanced=True,
         label="Stop at ε", help="odometer budget: training stops before an epoch would spend more"),
)
#: The knobs that go into TrainConfig (the feature knobs act before training, in _features).
_TRAIN_CONFIG_KEYS = frozenset(k.name for k in MODEL_KNOBS + OPTIMISER_KNOBS + DPSGD_KNOBS
                               if k.name not in ("features", "dct_size", "hog_cell", "hog_block"))
#: Label DP (Ghazi et al. 2021): neighbouring training sets differ in one record's label; the features are public.
LABEL_NEIGHBOURING = Neighbouring.REPLACE_ONE
#: ... and what its epsilon protects of each record: the label alone (RunResult.unit).
LABEL_UNIT = "labels"


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


#: The features of the last splits of registered datasets (which :func:`dpcore.datasets.train_test_split` hands
#: out as the same read-only arrays), within about 128 MB: a sweep's runs on one split compute them once. Keyed by
#: the split's arrays' identity; each entry holds those arrays, so an identity is never reused while its entry lives.
_FEATURES = BytesLRU(max_bytes=128e6, max_items=16)


def _features(split, params: Mapping[str, Any] | None = None, *,
              own: bool = True) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    """Train and test features scaled by the public bounds (then DCT or HOG if asked), and the image shape.

    Each transform is per-sample and data-independent (see :mod:`dpcore.training.preprocess`). Computed once per
    split of a registered dataset and feature choice; each run gets its own copy, or with ``own=False`` a
    read-only view of the kept arrays (for a caller that only reads them: a sweep's batch).
    """
    if not is_registered(split.dataset):
        return _compute_features(split, params)
    features, opts = _feature_choice(split, params or {})
    key = (id(split.X_train), id(split.X_test), features, tuple(sorted(opts.items())))
    hit = _FEATURES.get(key, lambda kept: kept[0] is split.X_train and kept[1] is split.X_test)
    if hit is not None:
        return _own_copies(hit[2], own)
    with caught_warnings() as said:  # values clipped to the bounds: said by every run, so such features are not kept
        out = _compute_features(split, params)
    for w in said:
        warnings.warn(w.message, w.category, stacklevel=user_stacklevel())
    if not said:
        _FEATURES.put(key, (split.X_train, split.X_test, out), out[0].nbytes + out[1].nbytes)
    return _own_copies(out, own)


def _own_copies(features: tuple, own: bool = True) -> tuple:
    """The kept features as arrays of the caller's own (a run may scale its rows in place; copying is cheap beside
    computing them), or (``own=False``) as read-only views of them: a sweep capturing 260 Adult runs copied 3 GB
    that its batches never wrote to."""
    X_tr, X_te, shape = features
    return _copy_of(X_tr, own), _copy_of(X_te, own), shape


#: id of a copy made by _own_copies -> (a weak reference to it, the kept array it copies)
_COPIES: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def _copy_of(a: np.ndarray, copy: bool = True) -> np.ndarray:
    if copy:
        c = a.copy()
    else:
        c = a.view()
        c.flags.writeable = False
    key = id(c)
    _COPIES[key] = (weakref.ref(c, lambda _gone, key=key: _COPIES.pop(key, None)), a)
    return c


def copied_from(a: Any) -> np.ndarray | None:
    """The kept features ``a`` was copied from (for the runs of one split, one array), or None. Only as made: a
    caller that may have changed its copy since must compare contents."""
    got = _COPIES.get(id(a))
    return got[1] if got is not None and got[0]() is a else None


#: A registered dataset's rows scaled by its bounds, all at once (dataset -> float32 features, or None when some
#: value lay outside the bounds: then each split scales and warns about its own rows), within about 128 MB.
_WHOLE = BytesLRU(max_bytes=128e6, max_items=8)


def _whole_scaled(ds) -> np.ndarray | None:
    hit = _WHOLE.get(id(ds), lambda kept: kept[0] is ds)
    if hit is not None:
        return hit[1]
    with caught_warnings() as said:
        X = prepare_features(ds.X, ds.bounds)
    X = None if said else X
    _WHOLE.put(id(ds), (ds, X), 0 if X is None else X.nbytes)
    return X


def _compute_features(split, params: Mapping[str, Any] | None) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    ds = split.dataset
    features, opts = _feature_choice(split, params or {})
    rows = split_rows(split) if features == "pixels" and is_registered(ds) else None
    if rows is not None and (whole := _whole_scaled(ds)) is not None:
        # the scaling is row by row: a split's rows of the whole dataset's, the same numbers (10 Adult splits
        # scaled their rows one by one in 0.5 s)
        return whole[rows[0]], whole[rows[1]], ds.image_shape
    X_tr, X_te = prepare_features(split.X_train, ds.bounds), prepare_features(split.X_test, ds.bounds, warn=False)
    if features == "dct":
        return dct_features(X_tr, ds.image_shape, opts["k"]), dct_features(X_te, ds.image_shape, opts["k"]), None
    if features == "hog":
        return hog_features(X_tr, ds.image_shape, **opts), hog_features(X_te, ds.image_shape, **opts), None
    return X_tr, X_te, ds.image_shape


def _label_scale(split) -> tuple[float, float]:
    """The regression label's range: the declared one, or (read from the private labels, see
    :func:`_warn_label_range_read`) the training labels' own minimum and maximum."""
    lo, hi = split.dataset.label_range or (float(np.min(split.y_train)), float(np.max(split.y_train)))
    if hi <= lo:
        hi = lo + 1.0
    return float(lo), float(hi)


def _warn_label_range_read(split, how: str) -> None:
    """Warn (a :class:`PrivacyLeakWarning`) when a private learner's regression labels have no declared range: the
    range :func:`_label_scale` then gives is the private labels' own minimum and maximum, and ``how`` says what
    depends on it, which no epsilon covers."""
    if split.task == "regression" and split.dataset.label_range is None:
        warnings.warn(f"the label range is not declared, so it is inferred from the training labels: {how} then "
                      "depends on the private labels, which leaks privacy beyond the stated epsilon; declare the "
                      "range the labels can take", PrivacyLeakWarning, stacklevel=user_stacklevel())


def _label_width(lo: float, hi: float) -> float:
    """``hi - lo`` rounded UP: the most a label clipped to [lo, hi] moves when it changes, its L1 sensitivity (in
    floating point the difference lay below the exact one for a third of all ranges that straddle 0 unevenly,
    (-0.0565, 0.918) among them, and the noise was a hair short of its epsilon)."""
    return round_up(Fraction(hi) - Fraction(lo))


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
        if key in _TRAIN_CONFIG_KEYS:
            kw[key] = val
    if private:  # defaults that follow another knob (a CNN's learning rate), where that knob was not given
        for knob in OPTIMISER_KNOBS:
            if knob.name not in params and (follow := knob.following(kw, split)) is not None:
                kw[knob.name] = follow[1]
    if kw["model"] == "cnn" and not split.dataset.is_image:
        raise DPValueError(f"model='cnn' needs image data; {split.dataset.name!r} is tabular: use 'mlp' or 'linear'. "
                           "For your own images (rows of pixels), train a CNN of your own with dpcore.train(X, y, "
                           "config, model=...), its first layer nn.Unflatten(1, (1, height, width))")
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
                     params: Mapping[str, Any], noisy_labels: bool = False, own: bool = True) -> TrainingProblem:
    """The features, labels and :class:`TrainConfig` the learners train on (preset overridden by ``params``).
    ``own=False``: the features are read-only views shared with other runs on the split (see :func:`_features`)."""
    X_tr, X_te, image_shape = _features(split, params, own=own)
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
    # declared class shares: the history's evaluation answers as the final test rows are answered
    # (dpcore.learners.decision); not on ``noisy_labels`` (label DP: the model's probabilities are of the noisy
    # labels, which the shares do not describe; its answers keep the argmax, NOISY_LABELS)
    shares = tuple(getattr(split.dataset, "class_shares", ()) or ()) if task == "classification" and \
        not noisy_labels else ()
    cfg = TrainConfig(delta=delta, seed=seed, private=private, task=task, class_shares=shares, **kw)
    return TrainingProblem(X_tr, _train_labels(split) if y_train is None else y_train, X_te, y_te, cfg,
                           split.n_classes if task == "classification" else 1, image_shape)


def _fit(split, y_train, *, private: bool, epsilon: float | None, delta: float, seed: int,
         params: Mapping[str, Any], on_epoch=None, noisy_labels: bool = False) -> tuple[TrainResult, np.ndarray,
                                                                                       np.ndarray]:
    if split.task == "regression" and on_epoch is not None:  # mse in label units, as in the final history (_result)
        lo, hi = _label_scale(split)
        on_epoch = functools.partial(_label_units_mse, on_epoch, (hi - lo) ** 2)
    # a sweep that trains its DP-SGD runs together (dpcore.sweep) first captures this run's problem, then hands
    # back the result its batch trained (dpcore.training.batched); anywhere else both calls do nothing. Imported
    # here, with torch: listing the learners (their knobs, a command's --help) does not load it
    from . import batched
    from .engine import train

    fit_key = (split.dataset.name, split.X_train.shape, private, epsilon, delta, seed, sorted(params.items()),
               y_train is None)
    if (done := batched.served(fit_key)) is not None:
        pb, res = done
        for row in res.history.to_dict("records") if on_epoch is not None else ():
            on_epoch({**row, "epochs": res.config.epochs})
        return res, pb.X_train, pb.X_test
    pb = training_problem(split, y_train, private=private, epsilon=epsilon, delta=delta, seed=seed, params=params,
                          noisy_labels=noisy_labels, own=not batched.capturing_now())  # a batch only reads them
    batched.offer(pb, fit_key, as_made=True)  # just made: nothing has touched its arrays
    with ignored(SingleClassWarning):  # run_learner says it itself, by the class's name (judge_against_trivial)
        res = train(pb.X_train, pb.y_train, pb.config, X_test=pb.X_test, y_test=pb.y_test, n_outputs=pb.n_outputs,
                    image_shape=pb.image_shape, on_epoch=on_epoch)
    return res, pb.X_train, pb.X_test


def _label_units_mse(on_epoch, scale: float, info: dict) -> None:
    on_epoch({**info, "mse": info["mse"] * scale})


def network_inputs(X: np.ndarray, *, bounds: tuple, features: str, options: Mapping[str, Any],
                   image_shape: tuple | None) -> np.ndarray:
    """New rows as a run's network reads them: scaled by the declared bounds (then DCT or HOG features), row by
    row, as :func:`_features` prepared the training rows."""
    Z = prepare_features(X, bounds, warn=False)
    if features == "dct":
        return dct_features(Z, image_shape, options["k"])
    if features == "hog":
        return hog_features(Z, image_shape, **options)
    return Z


def _network_model(split, res: TrainResult, params: Mapping[str, Any] | None, *,
                   private: bool) -> ReleasedModel:
    """The released network of a run on ``split`` as a :class:`~dpcore.learners.base.ReleasedModel`."""
    ds = split.dataset
    features, opts = _feature_choice(split, params or {})
    transform = functools.partial(network_inputs, bounds=ds.bounds, features=features, options=opts,
                                  image_shape=ds.image_shape)
    return ReleasedModel(res, tuple(str(c) for c in ds.feature_names), transform,
                         class_labels(split) if split.task == "classification" else (),
                         _label_scale(split) if split.task == "regression" else None,
                         res.dp_event if private else None)


def _result(name: str, split, res: TrainResult, y_pred, *, epsilon: float, delta: float,
            noise_multiplier=None, extras: dict | None = None, event: dp_accounting.DpEvent | None = None,
            neighbouring: Neighbouring | None = None, X_te: np.ndarray | None = None,
            outputs: TestOutputs | None = None, model: ReleasedModel | None = None,
            unit: str = "records") -> RunResult:
    metrics = score(split, y_pred)
    if outputs is None and X_te is not None:  # what the released model answers on the test rows
        outputs = TestOutputs(res.predict_proba(X_te), "probability") if split.task == "classification" \
            else TestOutputs(np.asarray(y_pred, dtype=float), "value")
    ex = {"predictions": np.asarray(y_pred), "sample_rate": res.sample_rate, "steps": res.steps,
          # the run's own single-class warning names the class by its index; run_learner says it by the class's
          # name (judge_against_trivial), and a page listed both, the same fact twice ("class 1", "'versicolor'")
          "stopped_early": res.stopped_early, "config": res.config,
          "warnings": [w for w in res.warnings if not w.startswith(SINGLE_CLASS_SAID)]}
    if split.task == "classification":
        ex["confusion_matrix"] = confusion_matrix(split.y_test, y_pred, split.n_classes)
    ex.update(extras or {})
    hist = res.history.copy()
    if split.task == "regression":  # report mse on the original label scale
        lo, hi = _label_scale(split)
        hist["mse"] = hist["mse"] * (hi - lo) ** 2
    if model is not None and event is not None and model.dp_event is None:
        model = dataclasses.replace(model, dp_event=event)  # label DP: the event of the noisy labels
    return RunResult(name, split.dataset.name, split.task, metrics, float(epsilon), float(delta),
                     noise_multiplier, res.seconds, hist, ex, event=event, neighbouring=neighbouring,
                     test_outputs=outputs, model=model, unit=unit)


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
    return _result("non-private", split, res, _predict(split, res, X_te), epsilon=math.inf, delta=0.0, X_te=X_te,
                   model=_network_model(split, res, params, private=False))


#: How a shuffled run's epsilon was accounted, in its result (and the CLI's JSON): its sample_rate and steps are
#: what ran, not what the epsilon amplifies by, and a Poisson epsilon recomputed from them would understate it.
SHUFFLE_ACCOUNTING = ("shuffled batches, no amplification: one Gaussian mechanism of noise multiplier "
                      "noise_multiplier/2 per epoch begun (accounted_epochs of them), replace-one neighbours")


def _sampling_extras(res: TrainResult) -> dict:
    """The sampling a DP-SGD run used, and for shuffled batches how its epsilon was accounted
    (:func:`dpcore.accounting.shuffled_dpsgd_event`): what a reader needs to recompute it."""
    out = {"sampling": res.config.sampling}
    if res.config.sampling == "shuffle" and isinstance(res.dp_event, dp_accounting.SelfComposedDpEvent):
        out |= {"accounted_epochs": int(res.dp_event.count), "accounting": SHUFFLE_ACCOUNTING}
    return out


def run_dpsgd(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    """DP-SGD (Abadi et al. 2016) with the dataset preset, overridable through ``params``.

    Without ``noise_multiplier`` sigma is calibrated so the planned epochs spend
    ``epsilon``; with it, ``epsilon`` is ignored and the spent epsilon is
    reported (``max_epsilon`` then stops training at a budget).
    """
    if delta <= 0:
        raise DPValueError("DP-SGD needs delta > 0 (Gaussian noise); a common choice is 1e-5")
    # the labels are trained on scaled into [0, 1] by their range, and the predictions scaled back by it
    _warn_label_range_read(split, "the scale of the labels trained on and of every prediction")
    res, _, X_te = _fit(split, _train_labels(split), private=True, epsilon=epsilon, delta=delta, seed=seed,
                        params=params, on_epoch=on_epoch)
    return _result("dpsgd", split, res, _predict(split, res, X_te), epsilon=res.epsilon, delta=delta,
                   noise_multiplier=res.noise_multiplier,
                   extras={"accountant": res.accountant or res.config.accountant,
                           "target_epsilon": res.config.target_epsilon, **_sampling_extras(res)},
                   event=res.dp_event if res.dp_event is not None else dp_accounting.NonPrivateDpEvent(),
                   neighbouring=res.neighbouring,
                   X_te=X_te,
                   model=_network_model(split, res, params, private=True))


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

    ``params["budget"]``: ``"per-query"`` (default, as in J. Zhang's 2021 course report: ``epsilon`` is
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
    event = dp_accounting.SelfComposedDpEvent(pure_laplace_event(eps_q), m)
    return _result("output-perturbation", split, res, y_pred, epsilon=round_up(Fraction(eps_q) * m), delta=0.0,
                   extras={"epsilon_per_query": eps_q, "queries": m, "noise_scale": 2.0 / eps_q,
                           "sensitivity_l1": 2.0, "accuracy_without_noise": clean_acc},
                   event=event, neighbouring=Neighbouring.ADD_REMOVE,
                   outputs=TestOutputs(noisy, "score"))  # the released noisy vectors: all an attacker sees


def laplace_labels(split, *, epsilon: float, rng, decode: str = "argmax") -> np.ndarray:
    """Label-DP training labels by the Laplace mechanism (A. L. Hansen 2023, label DP on MNIST).

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
    _warn_label_range_read(split, "the Laplace noise's sensitivity")  # hi - lo: the private labels' own spread
    lo, hi = _label_scale(split)
    y = np.clip(np.asarray(split.y_train, dtype=float), lo, hi)
    noisy = Laplace(epsilon=epsilon, sensitivity=_label_width(lo, hi)).randomise(y, rng=gen)
    return (np.clip(noisy, lo, hi) - lo) / (hi - lo)


def run_label_dp_laplace(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    """Train the non-private model on Laplace-noised labels (label DP, pure epsilon)."""
    params = {**LABEL_NOISE_DEFAULTS, **params}
    decode = params.pop("decode", "argmax")
    rng = as_generator(seed)
    y_noisy = laplace_labels(split, epsilon=epsilon, rng=child_seed(rng), decode=decode)
    res, _, X_te = _fit(split, y_noisy, private=False, epsilon=None, delta=0.0, seed=seed, params=params,
                        on_epoch=on_epoch, noisy_labels=True)
    if split.task == "classification":
        sensitivity = 2.0  # one changed label moves a one-hot vector by 2 in L1
    else:
        sensitivity = _label_width(*_label_scale(split))
    extras = {"label_noise_scale": noise_scale(sensitivity, epsilon), "sensitivity_l1": sensitivity, NOISY_LABELS: True}
    if split.task == "classification":
        hard = y_noisy if y_noisy.ndim == 1 else y_noisy.argmax(1)
        extras["label_agreement"] = float(np.mean(hard == np.asarray(split.y_train)))
    hist = res.history.assign(epsilon=epsilon)
    object.__setattr__(res, "history", hist)
    # each record's label is released once (noise scale sensitivity / epsilon): one Laplace event per record
    return _result("label-dp-laplace", split, res, _predict(split, res, X_te), epsilon=epsilon, delta=0.0,
                   extras=extras, event=pure_laplace_event(epsilon),
                   neighbouring=LABEL_NEIGHBOURING, X_te=X_te, unit=LABEL_UNIT,
                   model=_network_model(split, res, params, private=False))


def run_label_dp_rr(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    """Train on labels from k-ary randomized response (label DP, replace-one neighbours)."""
    k = split.n_classes
    rr = RandomizedResponse(epsilon=epsilon, k=k)
    rng = as_generator(seed)
    y_noisy = rr.randomise(np.asarray(split.y_train, dtype=np.int64), rng=child_seed(rng))
    res, _, X_te = _fit(split, np.asarray(y_noisy), private=False, epsilon=None, delta=0.0, seed=seed,
                        params={**LABEL_NOISE_DEFAULTS, **params}, on_epoch=on_epoch, noisy_labels=True)
    eps = epsilon_of_event(rr.dp_event, delta=0.0, neighbouring=LABEL_NEIGHBOURING)
    object.__setattr__(res, "history", res.history.assign(epsilon=eps))
    return _result("label-dp-rr", split, res, _predict(split, res, X_te), epsilon=eps, delta=0.0,
                   extras={"p_keep": rr.p_keep, NOISY_LABELS: True,
                           "label_agreement": float(np.mean(y_noisy == np.asarray(split.y_train)))},
                   event=rr.dp_event, neighbouring=LABEL_NEIGHBOURING, X_te=X_te, unit=LABEL_UNIT,
                   model=_network_model(split, res, params, private=False))


#: What a network trained without privacy on exact labels says about epsilon.
_NONPRIVATE_NOTE = ("The network behind this learner is trained without DP-SGD, with Adam (batch 64, at least 600 "
                    "steps); its privacy comes from the noise on the labels or on the released outputs.")
#: The same for a network that learns from noisy labels (LABEL_NOISE_DEFAULTS).
_LABEL_NOISE_NOTE = ("The network behind this learner is trained without DP-SGD, with Adam (batch 64, at least 600 "
                     f"steps, learning rate {LABEL_NOISE_DEFAULTS['learning_rate']:g} with averaged iterates, so "
                     "that it does not fit the label noise); its privacy comes from the noise on the labels.")
#: How output perturbation's ε adds up (``Wording.budget``, formatted with the run's epsilon and extras).
_OUTPUT_BUDGET = ("**Privacy budget.** Training itself is not private: the network sees the training rows without "
                  "noise (ε = ∞ for it and for its history). Each released answer, a softmax vector plus Laplace "
                  "noise of scale 2/ε, costs ε = {epsilon_per_query:g}; the {queries} test answers released here "
                  "cost {queries} × {epsilon_per_query:g} = {epsilon:g} in total by basic composition.")


def _dpsgd_defaults_note(split, params: Mapping[str, Any]) -> str:
    """DP-SGD's ``defaults_note``: the dataset preset its defaults come from, and the Small CNN's own start."""
    note = f"Defaults for this dataset: {preset_for(split.dataset).note}."
    if params.get("model") != "cnn":
        return note
    rate = next(k for k in OPTIMISER_KNOBS if k.name == "learning_rate").following(params, split)[1]
    return (note + f" The Small CNN starts from its own learning rate, {rate:g}, tuned for it on validation rows; "
            "it reads the raw pixels, and the rest of its recipe (sampling, epochs, clipping, averaging) is the one "
            "above. At small ε a linear model on handcrafted features often beats a CNN trained end to end (Tramèr "
            "& Boneh 2021).")
_LABELS_ONLY = "each record's label only; the features are used as they are (not protected)"
_LABEL_SUBJECT = "any one record's label (its features are not protected)"
_LABEL_DIAGNOSTICS = {
    "title": "Training-set diagnostics (noisy labels)", "column": "Training loss (noisy labels)",
    "text": "The mean training loss against the noisy labels. Under label DP the features are public, so this is "
            "post-processing of the noisy labels and is covered by the label ε."}
_NOT_COVERED = "Non-private diagnostics (not covered by ε)"
WORDING = {
    "dpsgd": Wording(
        epsilon_label="ε spent (whole records)",
        unit="Protects each whole training record (features and label), as accounted by dp_accounting.",
        note="DP-SGD (Abadi et al. 2016): every example's gradient is clipped to norm C, Gaussian noise σ·C is "
             "added to the sum, and the accountant tracks ε after each epoch.",
        history_note="The test loss and the test accuracy (or MSE) use the test rows, which play no part in "
                     "training; the ε column is what the accountant (dp_accounting) certifies for the training data "
                     "after each epoch.",
        near_baseline="The rest of the gap comes from clipping each example's gradient and from DP-SGD's own recipe "
                      "(the non-private model trains with Adam on small batches).",
        diagnostics={"title": _NOT_COVERED, "column": "Training loss (private rows, not covered by ε)",
                     "text": "The mean loss of the sampled batches on the private training rows, before clipping "
                             "and noise. It is computed for display only: a statistic of the private data that the "
                             "ε above does not cover, so a real release would not publish it."}),
    "output-perturbation": Wording(
        epsilon_label="ε (all answers released)", epsilon_input="Epsilon (ε) per released answer",
        unit="Every released softmax vector costs ε; the total is the sum over all answered queries.",
        unit_short="over all released answers",
        input_subject="anyone from one released answer (the run spends this ε on every answer it releases)",
        protects="each whole training record, at ε per released answer (epsilon is the sum over the answers)",
        note="A network trained without privacy answers each test query with its softmax vector plus Laplace noise "
             "of scale 2/ε: two softmax vectors differ by at most 2 in L1 norm, so each released vector is ε-DP, "
             "and m answered queries cost m·ε in total. " + _NONPRIVATE_NOTE,
        recipe=_NONPRIVATE_NOTE, budget=_OUTPUT_BUDGET,
        history_note="The history is the NON-PRIVATE network before any noise (its ε column is ∞); privacy comes "
                     "only from the Laplace noise on each released answer, counted in the ε above.",
        diagnostics={"title": _NOT_COVERED, "column": "Training loss (private rows, not covered by ε)",
                     "text": "The network is trained without privacy: its loss on the training rows and its test "
                             "accuracy before the noise are statistics of the private data that the ε above "
                             "(which covers only the released noisy answers) does not cover."}),
    "label-dp-laplace": Wording(
        epsilon_label="ε (labels only)", epsilon_input="Epsilon (ε) per label", unit_short="per label",
        protects=_LABELS_ONLY, subject=_LABEL_SUBJECT,
        unit="Protects only each record's label; the features are used as they are. Not comparable with "
             "DP-SGD's ε, which protects whole records.",
        note="Only the labels are private. One-hot labels get Laplace noise of scale 2/ε (one changed label moves "
             "the one-hot vector by 2 in L1) and are decoded by argmax; regression labels get Laplace noise of "
             "scale (label range)/ε and are clamped. " + _LABEL_NOISE_NOTE,
        recipe=_LABEL_NOISE_NOTE,
        history_note="The history is the network trained on the noisy labels; the ε shown is that of the label "
                     "noise (pure ε-DP per label), not an accountant's figure for whole records.",
        diagnostics=_LABEL_DIAGNOSTICS),
    "label-dp-rr": Wording(
        epsilon_label="ε (labels only)", epsilon_input="Epsilon (ε) per label", unit_short="per label",
        protects=_LABELS_ONLY, subject=_LABEL_SUBJECT,
        unit="Protects only each record's label (replace-one neighbours); the features are used as they are. "
             "Not comparable with DP-SGD's ε, which protects whole records.",
        note="Only the labels are private. Each label is kept with probability e^ε/(e^ε+k−1), otherwise replaced by "
             "one of the other k−1 classes (k-ary randomized response, ε under replace-one). " + _LABEL_NOISE_NOTE,
        recipe=_LABEL_NOISE_NOTE,
        history_note="The history is the network trained on the randomized-response labels; the ε shown is that "
                     "of the label mechanism (pure ε-DP per label, replace-one), not a figure for whole records.",
        diagnostics=_LABEL_DIAGNOSTICS),
}
def _nonprivate_default(name: str) -> str:
    """What the network trained without DP-SGD starts from for optimiser knob ``name`` (NONPRIVATE_DEFAULTS), or ""."""
    if name == "epochs":
        return f"enough for at least {NONPRIVATE_MIN_STEPS} steps, from 30 to 300"
    value = NONPRIVATE_DEFAULTS.get(name)
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


#: The optimiser knobs of the networks trained without DP-SGD (the baseline, output perturbation, label DP): their
#: defaults are the non-private recipe (NONPRIVATE_DEFAULTS), not DP-SGD's presets; each help names its own.
def _nonprivate_optimiser(own: Mapping[str, Any] | None = None, why: str = "") -> tuple[Knob, ...]:
    """The optimiser knobs of a network trained without DP-SGD; ``own``: this learner's recipe where it differs
    from the non-private one (applied by its runner), with ``why`` in their help. None has a declared default, so a
    page draws no optimiser widgets for them (a widget keyed by dataset would carry DP-SGD's value over)."""
    own = own or {}

    def helped(k: Knob) -> str:
        said = (f" (default here: {own[k.name]:g}; {why})" if k.name in own else
                f" (default without DP-SGD: {d})" if (d := _nonprivate_default(k.name)) else "")
        # DP-SGD's own default ("the dataset preset's") said beside this one read as two defaults for one knob
        return (re.sub(r" \(default: [^()]*\)", "", k.help) if said else k.help) + said

    return tuple(
        Knob(k.name, k.kind, low=k.low, high=k.high, low_open=k.low_open, group=k.group, label=k.label, log=k.log,
             advanced=k.advanced, help=helped(k))
        for k in OPTIMISER_KNOBS)


_NONPRIVATE_OPTIMISER = _nonprivate_optimiser()
_LABEL_NOISE_OPTIMISER = _nonprivate_optimiser(
    LABEL_NOISE_DEFAULTS, "a network learning from noisy labels fits the noise at the non-private 0.01 without "
                          "averaging")


def _register() -> None:
    from ..learners import register

    register(LearnerSpec(
        "non-private", "Non-private SGD (same model)", ("classification", "regression"), False, run_nonprivate,
        knobs=MODEL_KNOBS + _NONPRIVATE_OPTIMISER, uses_delta=False, config=TrainConfig,
        wording=Wording(epsilon_label="ε (not private)", unit="No privacy: trained on the exact data."),
        family="network",
        description=f"The same network trained without privacy (Adam, batch {NONPRIVATE_DEFAULTS['batch_size']}, at "
                    f"least {NONPRIVATE_MIN_STEPS} steps): the baseline."))
    register(LearnerSpec(
        "dpsgd", "DP-SGD (Abadi et al. 2016)", ("classification", "regression"), True, run_dpsgd,
        knobs=MODEL_KNOBS + OPTIMISER_KNOBS + DPSGD_KNOBS, baseline="non-private", wording=WORDING["dpsgd"],
        family="network", direct_noise="noise_multiplier", canary_kind="gradient", defaults_note=_dpsgd_defaults_note,
        description="Per-example clipping (ghost norms), Gaussian noise sigma*C, Poisson sampling, "
                    "RDP/PLD accounting.", config=TrainConfig))
    register(LearnerSpec(
        "output-perturbation", "Laplace on the softmax outputs", ("classification",), True, run_output_perturbation,
        knobs=MODEL_KNOBS + _NONPRIVATE_OPTIMISER + (Knob("budget", "choice", default="per-query",
                                                          choices=("per-query", "total"),
                                  privacy=True, group="privacy", label="Budget of ε",
                                  help="per-query: ε for each released answer (m answers cost m·ε); total: ε split "
                                       "evenly over the m answers"),),
        baseline="non-private", uses_delta=False, wording=WORDING["output-perturbation"], config=TrainConfig,
        family="network",
        description="Non-private network; every released softmax vector gets Lap(2/epsilon) (L1 sensitivity 2 "
                    "on the simplex). m queries cost m*epsilon."))
    register(LearnerSpec(
        "label-dp-laplace", "Label DP: Laplace on labels", ("classification", "regression"), True,
        run_label_dp_laplace,
        knobs=MODEL_KNOBS + _LABEL_NOISE_OPTIMISER + (Knob("decode", "choice", default="argmax",
                                                          choices=("argmax", "clamp-round"),
                                  label="Decode noisy one-hot labels",
                                  help="argmax (a hard label) or clamp-round (clamp to [0, 1] and round, kept as "
                                       "soft targets)"),),
        baseline="non-private", uses_delta=False, wording=WORDING["label-dp-laplace"], config=TrainConfig,
        family="network",
        description="One-hot labels + Lap(2/epsilon) then argmax (or clamp+round); regression labels + "
                    "Lap(range/epsilon) then clamp. Features are public."))
    register(LearnerSpec(
        "label-dp-rr", "Label DP: randomized response", ("classification",), True, run_label_dp_rr,
        knobs=MODEL_KNOBS + _LABEL_NOISE_OPTIMISER, baseline="non-private", uses_delta=False,
        wording=WORDING["label-dp-rr"], config=TrainConfig, family="network",
        description="k-ary randomized response on labels (Ghazi et al. 2021), epsilon under replace-one."))


_register()
