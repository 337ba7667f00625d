"""The DP-SGD trainer: a frozen :class:`TrainConfig` in, a frozen :class:`TrainResult` out."""
from __future__ import annotations

import copy
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
import torch
from torch import nn

from ..accounting import PrivacyLedger, dpsgd_event, shuffled_dpsgd_event, steps_for
from ..accounting.accountants import pld_discretization_for
from ..accounting.ahead import calibrated_shuffled_sigma, calibrated_sigma
from ..exceptions import (
    SINGLE_CLASS_SAID,
    DPCoreWarning,
    DPTypeError,
    DPValueError,
    PrivacyLeakWarning,
    SingleClassWarning,
    user_stacklevel,
)
from ..rng import as_generator, child_seed, torch_generator
from ..runtime.workload import TORCH_THROUGHPUT, MemoryGuard, Work, check_work
from ..types import ArrayLike
from ..validation import (
    check_array,
    check_delta,
    check_device,
    check_int,
    delta_checked,
    delta_is_checked,
)
from .config import OPTIMIZERS, SHUFFLE_CAVEAT, TASKS, TrainConfig  # noqa: F401 (engine's names before config.py)
from .ghost import LossFunction, make_clipper
from .losses import per_example_loss
from .models import build_model, trainable_layers
from .optim import make_optimizer
from .sampling import SAMPLING_NEIGHBOURING, make_sampler, shuffled_batches_per_epoch
from .step import ExtraGradients, PrivateGradient, StepObserver

EpochCallback = Callable[[Mapping[str, Any]], None]


@dataclass(frozen=True, eq=False)
class TrainResult:
    """What a training run gives back (numpy/pandas only, so it pickles for ``st.cache_data``).

    Attributes
    ----------
    config : TrainConfig
    history : DataFrame
        One row per epoch: ``epoch, step, loss, accuracy (or mse), epsilon, train_loss`` and, for classification,
        ``balanced_accuracy`` (each class's recall, averaged; by the same decision rule as ``accuracy``).
        ``loss``/``accuracy`` are on the evaluation data passed as ``X_test``/``y_test``
        (or the training data if none). ``train_loss`` is the mean loss of the sampled
        batches, a non-private diagnostic for the operator.
    epsilon, delta : float
        Spent budget (``inf`` when not private). ``epsilon`` is the odometer at the end.
    noise_multiplier : float or None
    sample_rate : float
    steps : int
        Steps actually run.
    stopped_early : bool
        True if ``max_epsilon`` stopped training before the planned epochs.
    state : dict of numpy arrays
        Final weights (``model.state_dict()`` as numpy).
    model_kwargs : dict
        Arguments that rebuild the model with :func:`build_model`.
    dp_event : dp_accounting.DpEvent or None
    seconds : float
    warnings : tuple of str
        What the run warned about, each once: its calibration's warnings, its settings' (no noise, shuffled
        batches), a stop at ``max_epsilon``, and why ``epsilon`` is infinity or the RDP accountant's
        (:attr:`~dpcore.accounting.PrivacyLedger.caveats` of its odometer).
    accountant : str
        The accountant whose numbers ``epsilon`` reports: ``config.accountant``, or ``"rdp"`` where the PLD
        accountant handed over to RDP (a PLD grid would not fit in memory).
    neighbouring : Neighbouring or None
        What ``epsilon`` protects (a property): a record added or removed with Poisson sampling, a record replaced
        with shuffled batches; None when not private. A :class:`~dpcore.accounting.PrivacyLedger` given this result
        checks it against its own.
    """

    config: TrainConfig
    history: pd.DataFrame
    epsilon: float
    delta: float
    noise_multiplier: float | None
    sample_rate: float
    steps: int
    stopped_early: bool
    state: dict = field(repr=False)  # every weight: printing a result shows its numbers, not pages of them
    model_kwargs: dict
    dp_event: Any = None
    seconds: float = 0.0
    warnings: tuple = ()
    #: A copy of your own module (``train(..., model=...)``) holding the trained weights, on the CPU; None for the
    #: built-in models, which :meth:`model` rebuilds from ``model_kwargs``.
    module: Any = None
    accountant: str = ""

    @property
    def neighbouring(self):
        """What ``epsilon`` protects, by the run's sampling (:data:`~dpcore.training.sampling.SAMPLING_NEIGHBOURING`);
        None when the run is not private."""
        return None if self.dp_event is None else SAMPLING_NEIGHBOURING[self.config.sampling]

    def model(self) -> nn.Module:
        """The trained torch model, on the CPU in eval mode (a fresh copy on every call)."""
        if self.module is not None:
            m = copy.deepcopy(self.module)
        else:
            m = build_model(**self.model_kwargs)
        m.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in self.state.items()})
        m.eval()
        return m

    def predict_output(self, X) -> np.ndarray:
        """Raw model outputs (logits, or predictions for regression) for already-preprocessed ``X``."""
        rows = np.asarray(X, dtype=np.float32)
        if not np.isfinite(rows).all():  # NaN scores would answer the first class
            bad = ~np.isfinite(rows.reshape(len(rows), -1))
            raise DPValueError(f"X has missing or infinite values in column(s) "
                               f"{', '.join(map(str, np.flatnonzero(bad.any(axis=0))[:5]))} "
                               f"({int(bad.any(axis=1).sum())} of {len(rows)} rows): fill or remove those rows")
        m = self.model()
        try:
            with torch.no_grad():  # in the model's own floating dtype, as it was trained (a float64 module too)
                return m(_float_tensor(rows).to(_float_dtype_of(m))).cpu().numpy()
        except RuntimeError as exc:  # rows the model cannot take (another number of columns ...): torch's words
            first = str(exc).strip().splitlines()[0]
            raise DPValueError(f"the trained model could not run on X of shape {rows.shape} ({first}): give rows "
                               "with the columns it was trained on, preprocessed the same way") from None

    def predict_proba(self, X) -> np.ndarray:
        """Softmax outputs for classification (a single output is the logit of class 1: ``[1 - p, p]`` with
        ``p = sigmoid(logit)``)."""
        out = torch.as_tensor(self.predict_output(X))
        if out.dim() == 1:  # one logit per row, as a vector
            out = out[:, None]
        if out.shape[1] == 1:
            p = torch.sigmoid(out[:, 0])
            return torch.stack([1.0 - p, p], dim=1).numpy()
        return torch.softmax(out, dim=1).numpy()

    def predict(self, X) -> np.ndarray:
        out = self.predict_output(X)
        if self.config.task == "classification":
            return class_answers(torch.as_tensor(out)).numpy()
        return out[:, 0] if out.ndim == 2 else out


def planned_steps(config: TrainConfig, n: int) -> tuple[float, list[int]]:
    """Sample rate and the cumulative step count at the end of each planned epoch."""
    n = check_int(n, "n", minimum=1)
    if config.batch_size > n:
        raise DPValueError(f"batch_size={config.batch_size} is larger than the {n} training records; use at most {n}")
    q = config.batch_size / n
    if config.sampling == "poisson":
        ends = [steps_for(epochs=e, sample_rate=q) for e in range(1, config.epochs + 1)]  # as the Accountant page
    else:
        per = shuffled_batches_per_epoch(n, config.batch_size)
        ends = [per * e for e in range(1, config.epochs + 1)]
    return q, ends


def model_size(config: TrainConfig, n_features: int, n_outputs: int, image_shape=None) -> tuple[int, int, int]:
    """(parameters, multiply-adds per example forward, activations per example) of the model ``config`` builds,
    counted from its shape alone (nothing is allocated)."""
    d, k, h, depth = int(n_features), int(n_outputs), int(config.hidden), int(config.depth)
    if config.model == "linear":
        return d * k + k, d * k, d + k
    if config.model == "mlp":
        params = d * h + h + (depth - 1) * (h * h + h) + h * k + k
        return params, params, d + depth * h + k
    H, W = (int(s) for s in image_shape) if image_shape else (int(math.isqrt(d)), int(math.isqrt(d)))
    c1, c2 = int(config.channels), 2 * int(config.channels)
    flat = c2 * (H // 4) * (W // 4)
    params = 9 * c1 + c1 + 9 * c1 * c2 + c2 + flat * h + h + h * k + k
    macs = 9 * c1 * H * W + 9 * c1 * c2 * (H // 2) * (W // 2) + flat * h + h * k
    return params, macs, H * W * (1 + c1) + c2 * (H // 2) * (W // 2) + h + k


def training_work(config: TrainConfig, n: int, n_features: int, n_outputs: int, image_shape=None) -> Work:
    """The work of one training run, estimated before the model or the accountant's grid exists.

    Steps: ``epochs * n / batch_size``. Arithmetic: about 3 passes (forward, backward, per-example norms)
    over every sampled example. Memory: the weights with their gradient, noise, optimiser and EMA copies,
    and a batch of activations with their gradients.
    """
    params, macs, acts = model_size(config, n_features, n_outputs, image_shape)
    steps = config.epochs * math.ceil(n / config.batch_size)
    memory = 4.0 * (6 * params + 3 * config.batch_size * acts)
    width = ("channels", config.channels, 2) if config.model == "cnn" else ("hidden", config.hidden,
                                                                            2 if config.depth > 1 else 1)
    big_batch = 3 * config.batch_size * acts > 6 * params
    drivers = {"steps": ("epochs", config.epochs), "operations": ("epochs", config.epochs)}
    if big_batch or config.model == "linear":
        drivers["memory_bytes"] = ("batch_size", config.batch_size)
    else:
        drivers["memory_bytes"] = width
    if config.model != "linear":
        drivers["parameters"] = width
    return Work(steps=steps, operations=3.0 * steps * config.batch_size * macs, memory_bytes=memory,
                parameters=params, drivers=drivers, step_seconds=STEP_SECONDS, throughput=TORCH_THROUGHPUT)


#: The fixed cost of one DP-SGD step (sampling, per-example clipping, noise, the accountant's bookkeeping) on this
#: project's 2-core machine: with torch's arithmetic, the time model of :func:`training_work`.
STEP_SECONDS = 3e-4


def resolve_noise_multiplier(config: TrainConfig, n: int, *, said: list[str] | None = None) -> float | None:
    """sigma of a run on ``n`` records: given, or calibrated to ``target_epsilon`` for the planned steps.

    The calibration's warnings (the target met even by the least noise searched ...) are raised on every call, also
    when sigma comes from the cache, and their messages appended to ``said``: the run's result keeps them, so a run
    trained in a batch reports them as the run trained alone does."""
    if not config.private:
        return None
    if config.noise_multiplier is not None:
        return float(config.noise_multiplier)
    q, ends = planned_steps(config, n)
    if config.sampling == "shuffle":  # no amplification: one Gaussian per epoch (shuffled_dpsgd_event)
        sigma, raised = calibrated_shuffled_sigma(config.target_epsilon, config.delta, len(ends), config.accountant)
    else:
        sigma, raised = calibrated_sigma(config.target_epsilon, config.delta, q, ends[-1], config.accountant)
    for msg, category in raised:
        warnings.warn(msg, category, stacklevel=user_stacklevel())
        if said is not None:
            said.append(msg)
    return sigma


@dataclass(frozen=True)
class _Data:
    """The training rows as tensors, the evaluation rows, and the number of model outputs."""

    X: torch.Tensor
    y: torch.Tensor
    X_eval: torch.Tensor
    y_eval: torch.Tensor
    n_outputs: int

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def to(self, device: torch.device, dtype: torch.dtype = torch.float32) -> "_Data":
        """The same rows on ``device`` with floating values in ``dtype`` (the model's); integer labels stay so."""
        def move(t: torch.Tensor) -> torch.Tensor:
            return t.to(device, dtype) if t.dtype.is_floating_point else t.to(device)

        if self.X.device == torch.device(device) and self.X.dtype == dtype:
            return self
        return _Data(move(self.X), move(self.y), move(self.X_eval), move(self.y_eval), self.n_outputs)


def _float_tensor(values: np.ndarray) -> torch.Tensor:
    """``values`` as a float32 tensor; a read-only array (a pandas frame's values under copy-on-write) is copied
    first, which torch would otherwise warn about."""
    arr = np.asarray(values, dtype=np.float32)
    return torch.from_numpy(arr if arr.flags.writeable else arr.copy())


def _rows_and_labels(X, y, name: str = "X", y_name: str = "y"):
    """``(X, y)`` as given, or the rows and labels of a torch ``Dataset`` given as ``X`` (with ``y`` None): a
    ``TensorDataset``'s two tensors, or any map-style dataset's ``(row, label)`` items stacked. A ``DataLoader`` is
    refused: DP-SGD draws its own batches (Poisson sampling at rate ``batch_size / n``, which the accountant assumes;
    Abadi et al. 2016, Algorithm 1), so the loader's batches would not be the ones accounted for."""
    from torch.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset

    if isinstance(X, DataLoader):
        raise DPTypeError(f"{name} is a torch DataLoader: DP-SGD draws its own batches (each record joins a batch with "
                          "probability batch_size / n, which the privacy accounting assumes), so a loader's batches "
                          f"cannot be used. Give its dataset instead, train({name}=loader.dataset, {y_name}=None, "
                          "...), and the batch size as TrainConfig(batch_size=...)")
    if not isinstance(X, Dataset):
        if y is None:
            raise DPValueError(f"{y_name} is missing: give the labels or targets, one per row of {name} (or give a "
                               f"torch Dataset of (row, label) pairs as {name})")
        return X, y
    if y is not None:
        raise DPValueError(f"{name} is a torch Dataset, which holds the labels too: give {y_name}=None")
    if isinstance(X, TensorDataset) and len(X.tensors) == 2:
        return X.tensors
    if isinstance(X, IterableDataset) or not hasattr(X, "__len__"):
        raise DPTypeError(f"{name} is a torch dataset without a length (an IterableDataset): DP-SGD samples records "
                          f"by index; give its rows and labels as tensors or arrays ({name}, {y_name})")
    items = [X[i] for i in range(len(X))]
    if not items:
        raise DPValueError(f"{name} is an empty Dataset; it needs at least one (row, label) pair")
    bad = next((item for item in items if not (isinstance(item, (tuple, list)) and len(item) == 2)), None)
    if bad is not None:
        held = (f"a dict with keys {', '.join(repr(k) for k in list(bad)[:4])}" if isinstance(bad, dict) else
                f"a {type(bad).__name__} of {len(bad)}" if isinstance(bad, (tuple, list)) else
                f"a {type(bad).__name__}")
        raise DPTypeError(f"{name} is a torch Dataset whose items are not (row, label) pairs (one is {held}): give "
                          f"its rows and labels as tensors or arrays ({name}, {y_name}), or a Dataset whose "
                          "__getitem__ returns (row, label)")
    return (torch.stack([torch.as_tensor(row) for row, _ in items]),
            torch.stack([torch.as_tensor(label) for _, label in items]))


def _training_data(X, y, task: str, n_outputs: int | None, X_test, y_test) -> _Data:
    """Validate the rows and labels (integer classes, soft rows, or real targets) and make tensors."""
    X, y = _rows_and_labels(X, y)
    if X_test is not None and isinstance(X_test, (torch.utils.data.Dataset, torch.utils.data.DataLoader)):
        # y_test given with a Dataset is refused by name (it was read as rows: "X_test must be numeric ...")
        X_test, y_test = _rows_and_labels(X_test, y_test, "X_test", "y_test")
    if (shape := np.shape(X)) and len(shape) > 2:
        raise DPValueError(f"X must be 2-dimensional (one row per record), got shape {shape}: flatten each record "
                           "(X.reshape(len(X), -1)) and restore its shape in your module (nn.Unflatten(1, "
                           f"{tuple(shape[1:])}) as its first layer)")
    X = check_array(X, "X", ndim=2)
    n = X.shape[0]
    y_arr = np.asarray(y.detach().cpu() if isinstance(y, torch.Tensor) else y)
    if task == "classification" and y_arr.ndim == 2 and y_arr.shape[1] == 1:
        y_arr = y_arr[:, 0]  # a column of class indices (df[["label"]], y.unsqueeze(1)): one-hot rows have k >= 2
    if y_arr.ndim == 0 or y_arr.shape[0] != n:
        raise DPValueError(f"X has {n} rows but y has {y_arr.shape[0] if y_arr.ndim else 'one value'}; they must "
                           "match")
    if task == "classification" and y_arr.ndim == 1 and y_arr.dtype.kind not in "biuf":
        shown = ", ".join(repr(v) for v in list(dict.fromkeys(y_arr.tolist()))[:3])
        raise DPValueError(f"y holds {shown} ...: train() takes classes as indices 0..k-1. Encode them first "
                           "(classes, y = np.unique(y, return_inverse=True)), or use run_learner(..., label=...), "
                           "which keeps your labels")
    if task == "classification" and y_arr.ndim == 1:
        if not np.all(np.equal(np.mod(y_arr, 1), 0)) or (y_arr.size and y_arr.min() < 0):
            bad = y_arr[(np.mod(y_arr, 1) != 0) | (y_arr < 0)]
            shown = ", ".join(f"{v:g}" for v in list(dict.fromkeys(bad.tolist()))[:3])
            raise DPValueError(f"y holds {shown} ...: a classification's labels must be class indices 0..k-1 (or "
                               "one-hot/soft rows). For real-valued targets set TrainConfig(task='regression'); "
                               "for classes encode them first (classes, y = np.unique(y, return_inverse=True))")
        y_t = torch.as_tensor(y_arr.astype(np.int64))
        if n_outputs is None and y_arr.size and (seen := np.unique(y_arr)).size != int(seen[-1]) + 1:
            shown = ", ".join(f"{v:g}" for v in seen[:6]) + (", ..." if seen.size > 6 else "")
            raise DPValueError(f"the labels are {{{shown}}}: train() takes classes as indices 0..k-1, and would "
                               f"read these as {int(seen[-1]) + 1} classes. Encode them first (classes, y = "
                               "np.unique(y, return_inverse=True)), give n_outputs if some classes are absent, or "
                               "use run_learner(..., label=...), which keeps your labels")
        k = int(n_outputs) if n_outputs is not None else int(y_arr.max()) + 1
        if y_arr.size and y_arr.max() >= k:
            raise DPValueError(f"labels go up to {int(y_arr.max())} but n_outputs={k}")
    elif task == "classification":
        y_t = _float_tensor(check_array(y_arr, "y", ndim=2))
        k = y_arr.shape[1]
    else:
        y_t = _float_tensor(check_array(y_arr, "y").reshape(n, -1))
        k = y_t.shape[1]
    if k < 1 or (task == "classification" and k < 2):
        raise DPValueError(f"classification needs at least 2 classes, got n_outputs={k}")
    Xt = _float_tensor(X)
    if X_test is None:
        return _Data(Xt, y_t, Xt, y_t, k)
    if y_test is None:
        raise DPValueError("X_test was given without y_test: give both, or neither (then the training rows are "
                           "evaluated)")
    Xe = _float_tensor(check_array(X_test, "X_test", ndim=2))
    ye_arr = np.asarray(y_test.detach().cpu() if isinstance(y_test, torch.Tensor) else y_test)
    if task == "classification" and ye_arr.ndim == 2 and ye_arr.shape[1] == 1:
        ye_arr = ye_arr[:, 0]
    if Xe.shape[1] != Xt.shape[1] or ye_arr.shape[0] != Xe.shape[0]:
        raise DPValueError(f"X_test has shape {tuple(Xe.shape)} and y_test {ye_arr.shape[0]} labels; they need "
                           f"X's {Xt.shape[1]} columns and one label per row")
    if task == "classification" and ye_arr.ndim == 1 and (ye_arr.dtype.kind not in "biuf" or (
            ye_arr.size and (np.any(np.mod(ye_arr, 1) != 0) or ye_arr.min() < 0 or ye_arr.max() >= k))):
        raise DPValueError(f"y_test must hold class indices 0..{k - 1}, as y does")
    if task == "classification" and ye_arr.ndim == 1:
        ye = torch.as_tensor(ye_arr.astype(np.int64))
    else:
        ye = torch.as_tensor(ye_arr.reshape(len(ye_arr), -1) if task == "regression" else ye_arr,
                             dtype=torch.float32)
    return _Data(Xt, y_t, Xe, ye, k)


#: The attribute train() leaves on your module: the epsilon of each run that trained it (inf for a non-private one).
_TRAINED_BY = "_dpcore_trained_epsilons"


def _trained_before(model: nn.Module | None) -> list[str]:
    """Warn (and return the message for the result) where your module was trained by :func:`train` before: its
    weights carry those runs too, so this run's epsilon is not the model's (its second run at epsilon 3 reported 3
    for weights that had spent 3.87 by their composition, two runs of 20 steps); a non-private run before leaves it
    no guarantee at all."""
    before = getattr(model, _TRAINED_BY, ()) if model is not None else ()
    if not before:
        return []
    spent = ", ".join("inf (non-private)" if not math.isfinite(e) else f"{e:.4g}" for e in before)
    outcome = ("one of them was not private, so no epsilon holds for the weights whatever this run spends"
               if not all(math.isfinite(e) for e in before) else
               "if they used the same rows, the model's epsilon is the composition of them all, not this run's: "
               "spend every run's result in one PrivacyLedger for the model's total")
    msg = (f"this module was already trained by train() {len(before)} time(s) (epsilon {spent}), and its weights "
           f"carry those runs: {outcome}. Train a fresh module for a run of its own")
    warnings.warn(msg, DPCoreWarning, stacklevel=user_stacklevel())
    return [msg]


def _run_warnings(config: TrainConfig, sigma: float | None) -> list[str]:
    """Warn (and return the messages for the result) about settings that weaken the guarantee."""
    caught = []
    if config.private and sigma == 0:
        caught.append("noise_multiplier=0 adds no noise: clipping alone gives no differential privacy (epsilon = inf)")
    if config.private and config.sampling == "shuffle":
        caught.append(SHUFFLE_CAVEAT)
    for msg in caught:
        warnings.warn(msg, DPCoreWarning, stacklevel=user_stacklevel())
    return caught


class _Budget:
    """The run's privacy odometer, in one place: epsilon after each epoch and the ``max_epsilon`` check.

    It equals a dp_accounting accountant composing the steps epoch by epoch. With
    sigma = 0 or a non-private run there is no guarantee: epsilon is infinite.
    """

    def __init__(self, config: TrainConfig, sigma: float | None, q: float, n: int) -> None:
        self.config, self.sigma, self.q = config, sigma, q
        # shuffled batches are accounted per epoch begun (shuffled_dpsgd_event), as ShuffleSampler counts them
        self.steps_per_epoch = shuffled_batches_per_epoch(n, config.batch_size) if config.sampling == "shuffle" else 0
        # the grid sigma was calibrated on (finer for small budgets, coarser for large ones): reported on another,
        # the epsilon could land above its target
        with delta_checked():  # train() compared delta with 1/n of its own rows already
            self.odometer = PrivacyLedger(delta=config.delta, accountant=config.accountant,
                                          pld_discretization=pld_discretization_for(config.target_epsilon)) \
                if config.private and sigma else None
        self.epsilon = 0.0 if config.private else math.inf
        self.steps = 0

    def allows(self, total_steps: int) -> bool:
        """False if running to ``total_steps`` would spend more than ``max_epsilon``."""
        if not self.config.private or self.config.max_epsilon is None:
            return True
        if self.odometer is None:
            return False
        return self.odometer.epsilon_if(self.event(total_steps - self.steps)) <= self.config.max_epsilon

    def advance(self, steps: int) -> float:
        """Spend ``steps`` more steps; the epsilon spent so far."""
        if self.odometer is not None:
            self.epsilon = self.odometer.spend(self.event(steps))
            self.steps += steps
        elif self.config.private:
            self.epsilon = math.inf
        return self.epsilon

    @property
    def caveats(self) -> tuple[str, ...]:
        """Why the odometer's epsilon is infinity or the RDP accountant's (said as warnings when met, kept here for
        the run's result: a run served from a cache, or read by a script, explains its number too)."""
        return self.odometer.caveats if self.odometer is not None else ()

    def event(self, steps: int):
        if self.odometer is None:
            return None
        if self.steps_per_epoch:
            return shuffled_dpsgd_event(noise_multiplier=self.sigma, epochs=-(-steps // self.steps_per_epoch))
        return dpsgd_event(noise_multiplier=self.sigma, sample_rate=self.q, steps=steps)


class _Ema:
    """Exponential moving average of the iterates (De et al. 2022): post-processing, free in privacy."""

    def __init__(self, model: nn.Module, model_kwargs: dict, decay: float) -> None:
        self.model, self.decay = None, decay
        if decay > 0:
            self.model = build_model(**model_kwargs) if model_kwargs else copy.deepcopy(model)
            self.model.load_state_dict(model.state_dict())
            self._avg = list(self.model.parameters())
            self._live = [p for p in model.parameters() if p.requires_grad]

    def current(self, model: nn.Module) -> nn.Module:
        """What evaluation and the result use: the average when it is on, else ``model``."""
        return model if self.model is None else self.model

    def update(self) -> None:
        if self.model is not None:
            with torch.no_grad():
                torch._foreach_lerp_(self._avg, self._live, 1.0 - self.decay)


def _model_kwargs(config: TrainConfig, data: _Data, image_shape, *, seed: int) -> dict:
    """The arguments of :func:`build_model` for this run (kept in the result to rebuild the model)."""
    return dict(kind=config.model, n_features=data.X.shape[1], n_outputs=data.n_outputs, hidden=config.hidden,
                depth=config.depth, activation=config.activation,
                image_shape=tuple(image_shape) if image_shape else None, channels=config.channels, seed=seed)


def _history_row(epoch: int, step: int, model: nn.Module, data: _Data, task: str, epsilon: float,
                 train_loss: float, loss_fn: LossFunction | None = None, shift: torch.Tensor | None = None) -> dict:
    """One row of the history: the evaluation loss and metric after ``step`` steps, and the epsilon spent."""
    loss, metric, balanced = _evaluate(model, data.X_eval, data.y_eval, task, loss_fn, shift)
    row = {"epoch": epoch, "step": step, "loss": loss, ("accuracy" if task == "classification" else "mse"): metric,
           "epsilon": epsilon, "train_loss": train_loss}
    if task == "classification":
        row["balanced_accuracy"] = balanced
    return row


def balanced_accuracy_of(answers: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Balanced accuracy of ``answers`` (``(n,)`` or ``(K, n)``: K runs' answers on the same rows) against
    ``target`` ``(n,)``: each class present in ``target`` gets its recall, the recalls are averaged (Brodersen et al.
    2010; :func:`dpcore.learners.metrics.balanced_accuracy` on numpy). One value, or one per run.

    >>> float(balanced_accuracy_of(torch.tensor([0, 0, 0, 0]), torch.tensor([0, 0, 0, 1])))
    0.5
    """
    hit = (answers == target).float()
    recalls = [hit[..., target == c].mean(-1) for c in torch.unique(target)]
    return torch.stack(recalls, -1).mean(-1)


def decision_shift(config: TrainConfig, n_outputs: int, device=None) -> torch.Tensor | None:
    """What the evaluation subtracts from a classifier's logits before its argmax: :func:`shares_shift` of the
    run's declared class shares, or None without them (or for regression)."""
    return shares_shift(config.class_shares, n_outputs, device) if config.task == "classification" else None


def shares_shift(shares, n_outputs: int, device=None) -> torch.Tensor | None:
    """``log(shares)`` of declared class shares, what a classifier's logits lose before the argmax that answers by
    them (``argmax(logits - log s) = argmax(softmax / s)``, :func:`dpcore.learners.decision.balanced_decision`);
    None without shares. The DP-SGD engines and DP-FedAvg's rounds evaluate with it."""
    if not shares:
        return None
    if len(shares) != n_outputs:
        raise DPValueError(f"class_shares has {len(shares)} shares for {n_outputs} classes; give one share per class")
    return torch.log(torch.tensor(tuple(shares), dtype=torch.float32, device=device))


def _one_loss_per_row(loss: LossFunction) -> LossFunction:
    """``loss`` with a column of losses, shape ``(B, 1)`` (``nn.MSELoss(reduction="none")`` on one output per row),
    read as the ``(B,)`` it holds; any other shape is left for the engine to refuse with what to change. A loss that
    cannot take the outputs and labels is refused with both shapes and types (torch's own error named neither, and
    ``nn.BCEWithLogitsLoss`` on one logit per row fails on a classifier's integer labels), not as a traceback."""
    def per_row(out, y):
        try:
            losses = loss(out, y)
        except (RuntimeError, ValueError, TypeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            hint = (" A classifier's labels reach the loss as class indices (torch.long, shape (B,)): for one logit "
                    "per row and binary cross-entropy write loss=lambda out, y: nn.functional."
                    "binary_cross_entropy_with_logits(out.reshape(-1), y.float(), reduction='none'), or give the "
                    "model 2 outputs and leave loss= out (cross-entropy)"
                    if isinstance(y, torch.Tensor) and not y.dtype.is_floating_point else "")
            raise DPValueError(f"your loss could not take the model's outputs (shape {tuple(out.shape)}, "
                               f"{out.dtype}) and the labels (shape {tuple(y.shape)}, {y.dtype}): {first}.{hint}"
                               ) from None
        if isinstance(losses, torch.Tensor) and losses.dim() == 2 and losses.shape[1] == 1:
            return losses[:, 0]
        return losses

    return per_row


def class_answers(out: torch.Tensor, shift: torch.Tensor | None = None) -> torch.Tensor:
    """The class each row of a classifier's outputs answers: the largest score (less ``shift``, the declared
    shares' logs, :func:`shares_shift`); a single output for two classes is the logit of class 1, as
    ``nn.BCEWithLogitsLoss`` reads it, so class 1 where it is above 0 (above ``log s1 - log s0`` with shares).

    A module that gives its one logit per row as a vector, shape ``(B,)`` (``.squeeze(-1)`` in its forward, for
    ``nn.BCEWithLogitsLoss``), is read the same way.

    >>> class_answers(torch.tensor([[0.3], [-2.0]])).tolist(), class_answers(torch.tensor([[0.1, 0.5]])).tolist()
    ([1, 0], [1])
    >>> class_answers(torch.tensor([0.3, -2.0])).tolist()
    [1, 0]
    """
    if out.dim() == 1:
        out = out[:, None]
    if out.shape[1] == 1:
        threshold = 0.0 if shift is None else float(shift[1] - shift[0])
        return (out[:, 0] > threshold).long()
    return (out if shift is None else out - shift.to(out.dtype)).argmax(1)


def _evaluate(model: nn.Module, X: torch.Tensor, y: torch.Tensor, task: str,
              loss_fn: LossFunction | None = None, shift: torch.Tensor | None = None) -> tuple[float, float, float]:
    """Evaluation loss, metric (accuracy by the run's decision rule, or MSE) and balanced accuracy by the same rule
    (NaN for regression)."""
    balanced = math.nan
    model.eval()
    with torch.no_grad():
        out = model(X)
        loss = float((per_example_loss(out, y, task) if loss_fn is None else loss_fn(out, y)).mean())
        if task == "classification" and out.dim() in (1, 2):  # (B,): one logit per row, as class_answers reads it
            target = y if y.dim() == 1 else y.argmax(1)
            answers = class_answers(out, shift)
            metric = float((answers == target).float().mean())
            balanced = float(balanced_accuracy_of(answers, target))
        else:
            metric = loss if task == "regression" else math.nan
    model.train()
    return loss, metric, balanced


def _one_answer(model: nn.Module, data: _Data, shift: torch.Tensor | None) -> int | None:
    """The class ``model`` answers for every evaluation row, where it answers only one and the rows hold several
    classes (None otherwise, and for outputs that are not one row of scores per example)."""
    model.eval()
    with torch.no_grad():
        out = model(data.X_eval)
    model.train()
    y = data.y_eval
    if out.dim() not in (1, 2) or out.shape[0] < 2:
        return None
    target = y if y.dim() == 1 else y.argmax(1)
    if torch.unique(target).numel() < 2:
        return None
    answers = torch.unique(class_answers(out, shift))
    return int(answers[0]) if answers.numel() == 1 else None


def _lot_step(config: TrainConfig, model: nn.Module, data: _Data, *, sigma: float | None, expected_batch: float,
              noise_gen: torch.Generator, ema: _Ema, extra: ExtraGradients | None,
              on_step: StepObserver | None,
              loss_fn: LossFunction | None = None) -> tuple[Callable[[np.ndarray], tuple[float, int]], Any]:
    """The function that takes one step on the records ``idx``, and the clipper to detach afterwards.

    Private: Abadi et al.'s Algorithm 1 for one lot (clip each example's
    gradient, sum, add N(0, sigma^2 C^2 I), divide by the expected batch size,
    descend). Non-private: plain minibatch SGD on the mean loss (an empty batch
    is skipped). Indices ``>= n`` are the extra records of ``extra``.
    """
    opt = make_optimizer(model, kind=config.optimizer, learning_rate=config.learning_rate,
                         momentum=config.momentum, weight_decay=config.weight_decay)
    X, y, task, n = data.X, data.y, config.task, data.n
    device = X.device  # the model's: the batches are picked there
    if not config.private:
        def step(idx: np.ndarray) -> tuple[float, int]:
            opt.zero_grad(set_to_none=True)
            if idx.size == 0:
                return 0.0, 0
            rows = torch.from_numpy(idx).to(device)
            out, target = model(X.index_select(0, rows)), y.index_select(0, rows)
            losses = per_example_loss(out, target, task) if loss_fn is None else loss_fn(out, target)
            losses.mean().backward()
            opt.step()
            ema.update()
            return float(losses.detach().sum()), idx.size

        return step, None
    clipper = make_clipper(model) if loss_fn is None else make_clipper(model, loss=loss_fn)
    noisy_gradient = PrivateGradient(model, clipper, task=task, clip_norm=config.clip_norm, noise_multiplier=sigma,
                                     expected_batch_size=expected_batch, generator=noise_gen, extra=extra,
                                     on_step=on_step)

    # the rows' squared norms once per run, not once per step (the fast path's first layer needs them)
    x_sq = torch.linalg.vector_norm(X, dim=1).square_()

    def step(idx: np.ndarray) -> tuple[float, int]:
        extra_idx = None
        if extra is not None:
            idx, extra_idx = idx[idx < n], idx[idx >= n] - n
        rows = torch.from_numpy(idx).to(device)
        loss_sum = noisy_gradient(X.index_select(0, rows), y.index_select(0, rows),
                                  x_sq_norms=x_sq.index_select(0, rows), extra_index=extra_idx)
        opt.step()
        ema.update()
        return loss_sum, idx.size

    return step, clipper


def train(
    X: ArrayLike,
    y: ArrayLike,
    config: TrainConfig,
    *,
    X_test: ArrayLike = None,
    y_test: ArrayLike = None,
    n_outputs: int | None = None,
    image_shape: tuple[int, int] | None = None,
    on_epoch: EpochCallback | None = None,
    on_step: StepObserver | None = None,
    extra_gradients: ExtraGradients | None = None,
    model: nn.Module | None = None,
    loss: LossFunction | None = None,
    device: "str | torch.device | int | None" = None,
) -> TrainResult:
    """Train a model with DP-SGD (or non-privately if ``config.private`` is False): a built-in one, or yours.

    Each step (Abadi et al. 2016, Algorithm 1): Poisson-sample a batch with
    rate ``q = batch_size / n`` (:mod:`~dpcore.training.sampling`); compute
    every example's gradient norm from the layer activations and output
    gradients (ghost norms, never materialising per-example gradients of Linear
    layers; for the ``linear`` and ``mlp`` models by a hand-written forward and
    backward with no autograd, :class:`~dpcore.training.ghost.DenseStackClipper`,
    for the CNN through forward hooks and one autograd pass); clip
    ``g_i / max(1, ||g_i|| / C)``; sum them as one product per layer; add
    ``N(0, sigma^2 C^2 I)``; divide by the expected batch size ``q n`` (not the
    realised one, which would leak); take an SGD step
    (:class:`~dpcore.training.step.PrivateGradient`). An empty Poisson batch
    still adds the noise and steps. After every epoch the accountant (RDP by
    default, PLD optionally, both from dp_accounting via :mod:`dpcore.accounting`)
    gives the epsilon spent so far.

    Parameters
    ----------
    X : array or tensor of shape (n, d), or a torch Dataset
        Features, already scaled with public bounds (the learners do that). A ``Dataset`` of ``(row, label)``
        pairs (a ``TensorDataset(X, y)``, or your own) gives the rows and labels together, with ``y=None``. A
        ``DataLoader`` is refused: DP-SGD draws its own batches, of expected size ``config.batch_size``, which
        the accountant assumes (give ``loader.dataset``).
    y : array of shape (n,) or (n, k), or None with a Dataset
        Integer class labels (also as one column, ``(n, 1)``), soft/one-hot targets (classification), or real
        targets (regression).
    config : TrainConfig
    X_test, y_test : arrays, optional
        Evaluation data for the per-epoch ``loss`` and ``accuracy`` (or a Dataset as ``X_test``, as for ``X``).
    n_outputs : int, optional
        Number of classes; inferred from ``y`` if omitted (that inference reads
        private labels: a private run with a built-in model warns a :class:`PrivacyLeakWarning`, and the
        learners pass it from the dataset's declared classes).
    image_shape : (int, int), optional
        Needed for ``model="cnn"``.
    on_epoch : callable, optional
        Called after every epoch with ``{"epoch", "epochs", "step", "loss",
        "accuracy"/"mse", "epsilon", "train_loss"}``.
    on_step : callable, optional
        Private runs: ``on_step(step_index, noisy_sum)`` after every step, with
        the step's noisy summed gradient (before the division by the expected
        batch size) as a flat tensor in ``model.parameters()`` order: what a
        white-box auditor reads. Nothing is copied when it is None.
    extra_gradients : ExtraGradients, optional
        Private runs: m extra records whose clipped gradient is a fixed vector
        (e.g. audit canaries, Steinke, Nasr & Jagielski 2023). They are records
        of the training set like the others: sampled with the same rate, which
        is ``batch_size / (n + m)``, and covered by the reported epsilon.
    model : nn.Module, optional
        Your own network, trained in place (``config.model``, ``hidden``, ``depth``, ``activation`` and
        ``channels`` are then unused). Its trainable parameters must belong to layers the engine clips per
        example: :data:`~dpcore.training.SUPPORTED_LAYERS` (Linear, Conv2d, LayerNorm, GroupNorm, Embedding);
        any other layer with trainable parameters is refused by name (freeze it), and a BatchNorm even frozen or
        without parameters (it mixes the batch and keeps statistics of the rows: use a GroupNorm). Each row's
        output must come from that row alone: a module whose output for a row moves with the other rows of its
        batch is refused (checked on rows of X before training, in evaluation and in training mode), and so is one
        that changes a buffer in a training forward pass (a running statistic of the rows, released without noise).
        So is one whose layer calls do not carry its whole gradient (a trained weight also used through
        ``torch.nn.functional``, or a layer's input changed in place after the call): the engine's per-example gradients
        of two rows are checked against torch's own before training. A module in half precision (bfloat16, float16) is
        refused: its norms and noise would be rounded (train it in float32). Training runs on the device of its
        parameters (or ``device``): the rows are moved there, the noise is drawn there, and the result is brought back
        to the CPU. The result's ``epsilon`` is this run's: a module that ``train`` trained before carries those runs
        too, which a warning says (spend every result in one ``PrivacyLedger`` for the model's total).
    loss : callable, optional
        ``loss(output, y)``: your per-example loss, a tensor of shape ``(B,)``
        (``nn.CrossEntropyLoss(reduction="none")``, ...). Default: cross-entropy for classification, squared
        error for regression. A loss averaged over the batch is refused: DP-SGD clips every example's gradient.
        A classifier's labels reach the loss as class indices (``torch.long``, shape ``(B,)``). A classifier with
        one output for two classes (a logit) answers class 1 where it is above 0, in the history's accuracy and in
        the result's ``predict``; binary cross-entropy needs its labels as floats of the output's shape:
        ``loss=lambda out, y: F.binary_cross_entropy_with_logits(out.reshape(-1), y.float(), reduction="none")``.
    device : str, torch.device or int, optional
        Where to train: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``torch.device(...)`` or a GPU index. Your ``model``
        is moved there (in place, as ``model.to(device)``); the default is where its parameters already are, or
        the CPU for a built-in model. A device this machine lacks (``"cuda"`` with a CPU-only torch, no GPU
        visible) is refused with the reason, before anything is trained. The result is on the CPU either way.

    Returns
    -------
    TrainResult

    References
    ----------
    Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep learning with
    differential privacy. CCS 2016 (Algorithm 1).
    Mironov, Rényi differential privacy, CSF 2017; Mironov, Talwar, Zhang, Rényi
    DP of the sampled Gaussian mechanism, 2019 (the RDP accountant).
    Li et al. 2021 (ghost clipping); Bu et al. 2023 (book-keeping).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5)); y = (X[:, 0] > 0).astype(int)
    >>> cfg = TrainConfig(model="linear", epochs=2, batch_size=50, noise_multiplier=1.0)
    >>> res = train(X, y, cfg, n_outputs=2)
    >>> res.steps, res.epsilon > 0
    (8, True)

    Your own module and loss:

    >>> net = nn.Sequential(nn.Linear(5, 8), nn.LayerNorm(8), nn.ReLU(), nn.Linear(8, 2))
    >>> res = train(X, y, cfg, model=net, loss=nn.CrossEntropyLoss(reduction="none"))
    >>> res.steps, type(res.model()[1]).__name__
    (8, 'LayerNorm')
    """
    t0 = time.perf_counter()
    if isinstance(X, nn.Module):
        raise DPTypeError(f"X is a torch module ({type(X).__name__}): train() takes the rows first and your module as "
                          "model=, train(X, y, TrainConfig(...), model=net)")
    if not isinstance(config, TrainConfig):
        raise DPTypeError(f"config must be a TrainConfig, got {type(config).__name__}"
                          + (": TrainConfig(**settings) makes one from a dict" if isinstance(config, dict) else ""))
    for name, hook in (("extra_gradients", extra_gradients), ("on_step", on_step)):
        if hook is not None and not config.private:
            raise DPValueError(f"{name} needs a private run (private=True): it acts on the noisy clipped sum")
    if isinstance(model, type) and issubclass(model, nn.Module):
        raise DPTypeError(f"model must be a torch.nn.Module, got the class {model.__name__} itself: give an instance, "
                          f"model={model.__name__}(...)")
    if model is not None and not isinstance(model, nn.Module):
        raise DPTypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    device = None if device is None else check_device(device)
    if loss is not None and not callable(loss):
        raise DPTypeError(f"loss must be a callable loss(output, y) giving one loss per example, got "
                          f"{type(loss).__name__}")
    if loss is not None:
        loss = _one_loss_per_row(loss)
    data = _training_data(X, y, config.task, n_outputs, X_test, y_test)
    if (config.private and model is None and n_outputs is None and config.task == "classification"
            and np.ndim(y) == 1):  # the built-in model's width is then the private labels' largest class + 1
        warnings.warn(f"n_outputs is not given, so the number of classes ({data.n_outputs}) is read from the training "
                      "labels (the largest + 1): the model's width then shows whether a record of the last class is "
                      "in the data, which no epsilon covers; give n_outputs, the number of classes the label can "
                      "hold", PrivacyLeakWarning, stacklevel=user_stacklevel())
    if model is not None:
        if device is not None:
            model.to(device)
        half = sorted({str(p.dtype).replace("torch.", "") for p in model.parameters()
                       if p.dtype.is_floating_point and p.dtype.itemsize < 4})
        if config.private and half:  # the gradient check below would blame the rounding on a functional call
            raise DPValueError(
                f"model holds {' and '.join(half)} parameters: DP-SGD computes each example's gradient norm, the "
                "clipped sum and the Gaussian noise in the parameters' precision, and at 8 to 11 significant bits the "
                "norms miss the clip bound and the noise is rounded away from the Gaussian the accountant assumes "
                "(the floating-point pitfall of Mironov 2012). Train it in float32 (model.float()) or float64")
        # before anything is costed or allocated: refused by what does not fit, and lazy layers sized
        _check_fits(model, data, config.task, loss, private=config.private)
        if not any(p.requires_grad for p in model.parameters()):  # after _check_fits: lazy layers are sized now
            raise DPValueError(f"model has no trainable parameters ({type(model).__name__} holds none, or every one "
                               "is frozen with requires_grad=False): training would change nothing. Unfreeze the "
                               "layers to train (requires_grad_(True))")
    n_records = data.n + (extra_gradients.count if extra_gradients is not None else 0)
    # refused here, before the accountant's grid, the model or a batch is allocated
    check_work(training_work(config, n_records, data.X.shape[1], data.n_outputs, image_shape) if model is None
               else _own_model_work(config, n_records, model))
    guard = MemoryGuard(what="this training run")
    q, ends = planned_steps(config, n_records)
    if config.private and not delta_is_checked():  # run_learner says it once for its own runs
        check_delta(config.delta, n=n_records)  # warns when delta > 1/n
    calibration: list[str] = []
    sigma = resolve_noise_multiplier(config, n_records, said=calibration)
    caught = calibration + _run_warnings(config, sigma) + _trained_before(model)

    rng = as_generator(config.seed)  # one seed: model init, then the noise generator's seed, then the batches
    model_kwargs = _model_kwargs(config, data, image_shape, seed=child_seed(rng))
    if model is None:
        model = build_model(**model_kwargs)
    else:
        model_kwargs = {}
        if config.private:
            trainable_layers(model)  # a layer the engine cannot clip is refused by name, before any work
    if device is not None:
        model.to(device)  # a built-in model (yours is there already)
    device = _device_of(model)
    data = data.to(device, _float_dtype_of(model))
    noise_gen = torch_generator(child_seed(rng), device=device)
    ema = _Ema(model, model_kwargs, config.ema)
    shift = decision_shift(config, data.n_outputs, device)  # the declared class shares' rule, evaluation only
    step, clipper = _lot_step(config, model, data, sigma=sigma, expected_batch=q * n_records, noise_gen=noise_gen,
                              ema=ema, extra=extra_gradients, on_step=on_step, loss_fn=loss)
    if clipper is not None and model_kwargs == {}:  # your module: its layer calls must carry its whole gradient
        _check_layer_calls_carry_the_gradient(model, clipper, data, config.task, loss)
    sampler = make_sampler(config.sampling, n_records, batch_size=config.batch_size, rng=rng)
    budget = _Budget(config, sigma, q, n_records)

    rows, done, stopped = [], 0, False
    model.train()
    for epoch, end in enumerate(ends, start=1):
        if not budget.allows(end):
            stopped = True
            break
        loss_sum, count = 0.0, 0
        for idx in sampler.batches(end - done):
            batch_loss, batch_count = step(idx)
            loss_sum += batch_loss
            count += batch_count
        epsilon = budget.advance(end - done)
        done = end
        rows.append(_history_row(epoch, done, ema.current(model), data, config.task, epsilon, loss_sum / max(count, 1),
                                 loss, shift))
        guard.check()
        if on_epoch is not None:
            on_epoch({**rows[-1], "epochs": config.epochs})
    if clipper is not None:
        clipper.remove()
    if stopped:
        caught.append(f"stopped after epoch {len(rows)} of {config.epochs}: one more epoch would spend more than "
                      f"max_epsilon={config.max_epsilon:g}")
        warnings.warn(caught[-1], DPCoreWarning, stacklevel=user_stacklevel())
    if config.task == "classification" and rows and (one := _one_answer(ema.current(model), data, shift)) is not None:
        caught.append(f"{SINGLE_CLASS_SAID}{one} for every evaluation row: its accuracy "
                      f"{rows[-1]['accuracy']:.3f} is that class's share of the rows, not skill. Features on scales "
                      "far from [-1, 1] (scale each to a known range first, e.g. dpcore.BoundedScaler), a rare class, "
                      "or too much noise for the data (a larger epsilon, more rows) do this")
        warnings.warn(caught[-1], SingleClassWarning, stacklevel=user_stacklevel())
    if model_kwargs == {} and ema.model is not None:  # your module ends with the averaged weights it was evaluated on
        with torch.no_grad():
            for live, avg in zip(model.parameters(), ema.model.parameters()):
                live.copy_(avg)
    if model_kwargs == {}:  # your module now carries this run: a later train() on it says so (_trained_before)
        object.__setattr__(model, _TRAINED_BY, (*getattr(model, _TRAINED_BY, ()), budget.epsilon))
    return _result(config, rows, budget, done, stopped, ema.current(model), model_kwargs, t0, caught,
                   own=model_kwargs == {})


def _check_layer_calls_carry_the_gradient(model: nn.Module, clipper, data: _Data, task: str,
                                          loss: LossFunction | None) -> None:
    """Refuse your module if the clipper's per-example gradients of two training rows do not add up to torch's own
    gradient of their losses, or their norms are not the rows' own gradient norms (nothing is kept or trained).

    The clipper sees a layer through its calls (forward hooks record its input and output). A trained weight also
    used outside its layer's call (``F.linear(h, layer.weight)``) has gradient the hooks never see, and a layer's
    input changed in place after the call makes the recorded input another one than the layer used: the update
    would then not be the clipped sum, or the clip bound would not hold. Checked in evaluation mode (no dropout),
    so both passes compute the same function.
    """
    params = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    rows, target = data.X[:2], data.y[:2]
    was_training = model.training
    model.eval()
    try:
        # the clipper first: it refuses a loss that is not one per example, and a layer the forward does not call
        _, norms = clipper.loss_and_norms(rows, target, task=task,
                                          x_sq_norms=torch.linalg.vector_norm(rows, dim=1).square())
        summed = [torch.zeros_like(p) for _, p in params]
        clipper.accumulate_clipped_sum(torch.ones(rows.shape[0], dtype=norms.dtype, device=norms.device), summed)
        out = model(rows)
        losses = per_example_loss(out, target, task) if loss is None else loss(out, target)
        own = [torch.autograd.grad(losses[i], [p for _, p in params], retain_graph=i + 1 < len(losses),
                                   allow_unused=True) for i in range(len(losses))]
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0].split(" Hint:")[0].rstrip(".")
        in_place = "inplace operation" in first or "not have been used in the graph" in first
        raise DPValueError(f"DP-SGD could not differentiate your model row by row ({first})"
                           + (": a tensor the gradient needs is changed in place in the forward pass (x.mul_(...), "
                              "x += ...); write it out of place (x = x * ...)" if in_place else "")) from None
    finally:
        model.train(was_training)
    zeros = [[torch.zeros_like(p) if g is None else g for g, (_, p) in zip(gs, params)] for gs in own]
    norms_own = torch.stack([torch.sqrt(sum(g.square().sum() for g in gs)) for gs in zeros])
    wants = [sum(gs[k] for gs in zeros) for k in range(len(params))]
    name = next((params[k][0] for k, want in enumerate(wants)
                 if not torch.allclose(summed[k], want, rtol=1e-3, atol=1e-4 * (float(want.abs().max()) + 1e-12))),
                None)
    if name is None and torch.allclose(norms, norms_own.to(norms.dtype), rtol=1e-3, atol=1e-6):
        return
    what = "the per-example norms" if name is None else repr(name)
    raise DPValueError(
        f"DP-SGD's per-example gradients of your model do not add up to torch's own gradient ({what} differs on "
        "two training rows): a trained weight is used outside its layer's call (through torch.nn.functional, or "
        "by another module), or a layer's input is changed in place after the layer used it. The clipped sum would "
        "miss part of the gradient, or the clip bound would not hold. Use each trained layer's weights only through "
        "its call, and change no tensor in place")


def _check_fits(model: nn.Module, data: _Data, task: str, loss: LossFunction | None, *, private: bool) -> None:
    """Run your module on two training rows, together and one by one (nothing is kept, nothing trained), and
    refuse it by what does not fit: an input width that is not X's, a row's output that moves with the other rows
    of its batch (private runs), or (with the default loss) fewer outputs than the classes, or not one output per
    regression target (a squared error between shapes ``(B,)`` and ``(B, 1)`` broadcasts across the batch)."""
    was_training = model.training
    rows = data.X[:2].to(_device_of(model), _float_dtype_of(model))
    try:
        model.eval()
        with torch.no_grad():
            out = model(rows)
            alone = ([model(rows[i:i + 1]) for i in range(rows.shape[0])] if private and isinstance(out, torch.Tensor)
                     else [])
    except (RuntimeError, ValueError, IndexError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        floats = (" X reaches your module as rows of floats: an Embedding takes them as indices after x.long() in "
                  "your forward pass") if any(isinstance(m, nn.Embedding) for m in model.modules()) else ""
        raise DPValueError(f"your model could not run on rows of X ({data.X.shape[1]} columns): {first}. Its "
                           f"first layer must take X's columns.{floats}") from None
    finally:
        model.train(was_training)
    if any(a.shape != out[i:i + 1].shape or not torch.allclose(a, out[i:i + 1], rtol=1e-4, atol=1e-5)
           for i, a in enumerate(alone)):
        raise DPValueError("your model's output for a row changes with the other rows of its batch (a mean or "
                           "another statistic over dimension 0 in its forward pass): one record would move the "
                           "others' gradients and no per-example clip bound would hold. Compute every row's output "
                           "from that row alone")
    if private and isinstance(out, torch.Tensor):
        trainable_layers(model)  # a BatchNorm or a layer without a rule is refused by name first, and runs no batch
        _check_training_mode(model, data.X[:3].to(rows.device, rows.dtype))
    if loss is not None and isinstance(out, torch.Tensor):
        _check_loss_per_row(loss, out, data.y[:2].to(out.device))
    if loss is not None or not isinstance(out, torch.Tensor):
        return
    width = int(out.shape[1]) if out.dim() == 2 else None
    if task == "classification" and (width is None or width < data.n_outputs):
        raise DPValueError(f"your model gives outputs of shape {tuple(out.shape[1:])} per row, but the labels hold "
                           f"{data.n_outputs} classes: its last layer needs {data.n_outputs} outputs (one score per "
                           "class), or give train() a loss of your own")
    if task == "regression" and width != data.y.shape[1]:  # (B,) against (B, 1) would broadcast to (B, B): every
        # example's loss would hold the other rows' outputs
        squeezed = (" (its output is one value per batch row, shape (B,): keep it (B, 1), without a .squeeze() "
                    "or .flatten() at the end)" if out.dim() == 1 else "")
        raise DPValueError(f"your model gives outputs of shape {tuple(out.shape[1:])} per row for "
                           f"{data.y.shape[1]} target(s) per row: its last layer needs {data.y.shape[1]} output(s)"
                           f"{squeezed}, or give train() a loss of your own")


def _check_training_mode(model: nn.Module, rows: torch.Tensor) -> None:
    """Run your module in training mode, as DP-SGD's steps do, on rows (0, 1) and then (0, 2), each from the same
    random state (a dropout draws the same masks) and the same buffers, and refuse it if a buffer moved or row 0's
    output moved with the row beside it. Buffers are put back and nothing is trained.

    A buffer a forward pass changes is computed from the rows (a running mean, as BatchNorm keeps) and released with
    the model without noise; a statistic of the batch taken only in training mode (``if self.training: x = x -
    x.mean(0)``) passes the evaluation-mode check but mixes the examples of every step, and no per-example clip
    bound holds (Abadi et al. 2016 clip each example's own gradient).
    """
    if rows.shape[0] < 3:
        return
    buffers = list(model.named_buffers())
    saved = [b.detach().clone() for _, b in buffers]
    dev = rows.device  # its random state is forked too (CUDA, MPS ...): the CPU's always is
    kind = None if dev.type == "cpu" else dev.type
    forked = [] if kind is None else [dev.index if dev.index is not None
                                      else getattr(torch.get_device_module(kind), "current_device", lambda: 0)()]
    was_training, outs, moved = model.training, [], []
    try:
        model.train()
        for pair in (rows[[0, 1]], rows[[0, 2]]):
            with torch.random.fork_rng(devices=forked, device_type=kind), torch.no_grad():  # one random state
                outs.append(model(pair))
            moved += [name for (name, b), before in zip(buffers, saved)
                      if name not in moved and not torch.equal(b.detach().nan_to_num(), before.nan_to_num())]
            with torch.no_grad():
                for (_, b), before in zip(buffers, saved):
                    b.copy_(before)
    except (RuntimeError, ValueError, IndexError, TypeError):
        return  # the steps say what is wrong with it
    finally:
        model.train(was_training)
    if moved:
        raise DPValueError(
            f"your model changes its buffer(s) {', '.join(map(repr, moved))} in a training forward pass: a "
            "statistic of the rows it sees (a running mean, as BatchNorm keeps), released with the model without "
            "noise and covered by no epsilon. Compute it from public values and keep it fixed in training")
    a, b = outs
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and not torch.allclose(
            a[:1], b[:1], rtol=1e-4, atol=1e-5):
        raise DPValueError("your model's output for a row changes with the other rows of its batch in training mode "
                           "(a statistic over dimension 0 taken when model.training is True): one record would move "
                           "the others' gradients and no per-example clip bound would hold. Compute every row's "
                           "output from that row alone")


def _check_loss_per_row(loss: LossFunction, out: torch.Tensor, y: torch.Tensor) -> None:
    """Refuse a loss whose value for a row moves with the other rows of the batch (outputs of shape ``(B,)``
    against targets ``(B, 1)`` broadcast to ``(B, B)``): each example's loss would hold the other rows' outputs,
    and no per-example clip bound would hold."""
    try:
        with torch.no_grad():
            together = loss(out, y)
            alone = [loss(out[i:i + 1], y[i:i + 1]) for i in range(out.shape[0])]
    except (RuntimeError, ValueError, IndexError, TypeError):
        return  # the training step says what is wrong with it
    if not isinstance(together, torch.Tensor) or together.dim() == 0 or together.shape[0] != out.shape[0]:
        return  # not one value per row: refused in the training step, with how to write it
    for i, a in enumerate(alone):
        if not isinstance(a, torch.Tensor) or a.shape != together[i:i + 1].shape or not torch.allclose(
                a, together[i:i + 1], rtol=1e-4, atol=1e-5):
            raise DPValueError(
                f"your loss for a row changes with the other rows of its batch: on two rows it gives shape "
                f"{tuple(together.shape)}, on one row alone {tuple(a.shape) if isinstance(a, torch.Tensor) else a}. "
                f"The model's output per batch has shape {tuple(out.shape)} and the targets {tuple(y.shape)}: "
                "outputs of shape (B,) against targets (B, 1) broadcast to (B, B), so every example's loss would "
                "hold the other rows' outputs and no per-example clip bound would hold. Give outputs and targets "
                "the same shape (keep the model's output (B, 1), or compare with y.reshape(out.shape))")


def _device_of(model: nn.Module) -> torch.device:
    """Where the model's parameters live (the CPU for a model without any)."""
    p = next(iter(model.parameters()), None)
    return p.device if p is not None else torch.device("cpu")


def _float_dtype_of(model: nn.Module) -> torch.dtype:
    """The floating dtype of the model's parameters (float32 for a model without any), which the rows take."""
    p = next((p for p in model.parameters() if p.dtype.is_floating_point), None)
    return p.dtype if p is not None else torch.float32


def _own_model_work(config: TrainConfig, n: int, model: nn.Module) -> Work:
    """The work of training your own module: its parameters counted, about 3 passes over each sampled example."""
    params = sum(p.numel() for p in model.parameters())
    steps = config.epochs * math.ceil(n / config.batch_size)
    return Work(steps=steps, operations=3.0 * steps * config.batch_size * params,
                memory_bytes=4.0 * 6 * params, parameters=params,
                drivers={"steps": ("epochs", config.epochs), "operations": ("epochs", config.epochs)})


def _result(config: TrainConfig, rows: list, budget: _Budget, steps: int, stopped: bool, final: nn.Module,
            model_kwargs: dict, t0: float, caught: list[str], *, own: bool = False) -> TrainResult:
    metric = "accuracy" if config.task == "classification" else "mse"
    history = pd.DataFrame(rows, columns=["epoch", "step", "loss", metric]
                           + (["balanced_accuracy"] if config.task == "classification" else [])
                           + ["epsilon", "train_loss"])
    state = {k: v.detach().cpu().numpy().copy() for k, v in final.state_dict().items()}
    accountant = budget.odometer.accountant_used if budget.odometer is not None else config.accountant
    return TrainResult(
        config=config, history=history, epsilon=budget.epsilon, delta=config.delta if config.private else 0.0,
        noise_multiplier=budget.sigma, sample_rate=budget.q, steps=steps, stopped_early=stopped, state=state,
        model_kwargs=model_kwargs, dp_event=budget.event(steps), seconds=time.perf_counter() - t0,
        warnings=tuple(dict.fromkeys([*caught, *budget.caveats])), module=copy.deepcopy(final).cpu() if own else None,
        accountant=accountant,
    )
