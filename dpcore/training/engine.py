"""The DP-SGD trainer: a frozen :class:`TrainConfig` in, a frozen :class:`TrainResult` out."""
from __future__ import annotations

import functools
import logging
import math
import time
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from ..accounting import PrivacyLedger, calibrate_noise_multiplier, dpsgd_event
from ..accounting.core import ACCOUNTANTS
from ..exceptions import DPCoreWarning, DPValueError
from ..rng import as_generator, child_seed
from ..validation import (
    check_array,
    check_delta,
    check_epsilon,
    check_int,
    check_nonnegative,
    check_positive,
)
from .ghost import CLIP_EPS, DenseStackClipper, GhostClipper, make_clipper
from .models import ACTIVATIONS, MODELS, build_model

SAMPLINGS = ("poisson", "shuffle")
TASKS = ("classification", "regression")
OPTIMIZERS = ("sgd", "adam")
EpochCallback = Callable[[Mapping[str, Any]], None]

SHUFFLE_CAVEAT = (
    "sampling='shuffle' uses fixed-size batches from a shuffled order, but epsilon is accounted as if batches "
    "were Poisson samples of rate batch_size/n (as Opacus and TF Privacy report it); that accounting is not "
    "a proven guarantee for shuffled batches (Chua et al. 2024). Use sampling='poisson' for the stated epsilon."
)


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines one training run (hashable, so pages can cache on it).

    Parameters
    ----------
    model : {"linear", "mlp", "cnn"}
        Softmax/linear regression, a multi-layer perceptron, or a small CNN (images only).
    hidden, depth, activation, channels
        Model shape (see :func:`dpcore.training.build_model`).
    epochs : int
        Planned passes over the data; with Poisson sampling one epoch is
        ``1/q`` steps of expected batch size ``q n``.
    batch_size : int
        Expected batch size L; the sample rate is ``q = L / n``.
    learning_rate, momentum : float
        Step size, and SGD momentum (post-processing of noisy gradients, so it is free).
    weight_decay : float
        L2 shrinkage of the weights at every step (post-processing, free): it
        stops the injected noise from accumulating as a random walk.
    optimizer : {"sgd", "adam"}
        What consumes the (noisy) gradient. Adam is also post-processing; the
        non-private baseline uses it because it is robust to feature scale.
    clip_norm : float
        C, the bound on every per-example gradient's L2 norm.
    noise_multiplier : float or None
        sigma: the noise added to the clipped sum is N(0, sigma^2 C^2 I). Give
        either this or ``target_epsilon``.
    target_epsilon : float or None
        Calibrate sigma so that the planned ``epochs`` spend at most this epsilon.
    delta : float
    accountant : {"rdp", "pld"}
    sampling : {"poisson", "shuffle"}
        Poisson sampling (each record joins each batch with probability q) is what
        the accountant assumes; ``"shuffle"`` is faster but see ``SHUFFLE_CAVEAT``.
    max_epsilon : float or None
        Odometer budget: training stops before an epoch whose end would push the
        spent epsilon above it.
    ema : float
        Decay of an exponential moving average of the iterates (0 = off). The
        average is post-processing of the noisy iterates, so it is free in privacy,
        and it cancels much of the injected noise (De et al. 2022). Evaluation and
        the returned weights use the average when it is on.
    private : bool
        ``False`` trains the same model non-privately (plain minibatch SGD on the
        mean loss, no clipping, no noise): the baseline.
    task : {"classification", "regression"}
    seed : int
    """

    model: str = "mlp"
    hidden: int = 128
    depth: int = 1
    activation: str = "tanh"
    channels: int = 16
    epochs: int = 20
    batch_size: int = 256
    learning_rate: float = 0.5
    momentum: float = 0.0
    weight_decay: float = 0.0
    optimizer: str = "sgd"
    clip_norm: float = 1.0
    noise_multiplier: float | None = None
    target_epsilon: float | None = None
    delta: float = 1e-5
    accountant: str = "rdp"
    sampling: str = "poisson"
    max_epsilon: float | None = None
    ema: float = 0.0
    private: bool = True
    task: str = "classification"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise DPValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.activation not in ACTIVATIONS:
            raise DPValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        if self.accountant not in ACCOUNTANTS:
            raise DPValueError(f"accountant must be one of {ACCOUNTANTS}, got {self.accountant!r}")
        if self.sampling not in SAMPLINGS:
            raise DPValueError(f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}")
        if self.optimizer not in OPTIMIZERS:
            raise DPValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.task not in TASKS:
            raise DPValueError(f"task must be one of {TASKS}, got {self.task!r}")
        for name in ("hidden", "depth", "channels", "epochs", "batch_size"):
            object.__setattr__(self, name, check_int(getattr(self, name), name, minimum=1))
        object.__setattr__(self, "seed", check_int(self.seed, "seed", minimum=0))
        object.__setattr__(self, "learning_rate", check_positive(self.learning_rate, "learning_rate"))
        object.__setattr__(self, "momentum", check_nonnegative(self.momentum, "momentum"))
        object.__setattr__(self, "ema", check_nonnegative(self.ema, "ema"))
        object.__setattr__(self, "weight_decay", check_nonnegative(self.weight_decay, "weight_decay"))
        if self.ema >= 1:
            raise DPValueError(f"ema must be in [0, 1), got {self.ema}")
        if self.momentum >= 1:
            raise DPValueError(f"momentum must be < 1, got {self.momentum}")
        object.__setattr__(self, "clip_norm", check_positive(self.clip_norm, "clip_norm"))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.max_epsilon is not None:
            object.__setattr__(self, "max_epsilon", check_epsilon(self.max_epsilon, "max_epsilon"))
        if not self.private:
            return
        if self.noise_multiplier is None and self.target_epsilon is None:
            raise DPValueError("give noise_multiplier (sigma) or target_epsilon for private training, not neither")
        if self.noise_multiplier is not None and self.target_epsilon is not None:
            raise DPValueError(
                "give noise_multiplier or target_epsilon, not both: sigma is either set or calibrated from epsilon"
            )
        if self.noise_multiplier is not None:
            sigma = check_nonnegative(self.noise_multiplier, "noise_multiplier")
            object.__setattr__(self, "noise_multiplier", sigma)
        else:
            object.__setattr__(self, "target_epsilon", check_epsilon(self.target_epsilon, "target_epsilon"))
            if self.delta == 0:
                raise DPValueError("target_epsilon needs delta > 0: DP-SGD's Gaussian noise gives no pure epsilon-DP")

    def replace(self, **changes) -> "TrainConfig":
        """A copy with some fields changed (validated again)."""
        return TrainConfig(**{**asdict(self), **changes})


@dataclass(frozen=True, eq=False)
class TrainResult:
    """What a training run gives back (numpy/pandas only, so it pickles for ``st.cache_data``).

    Attributes
    ----------
    config : TrainConfig
    history : DataFrame
        One row per epoch: ``epoch, step, loss, accuracy (or mse), epsilon, train_loss``.
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
    """

    config: TrainConfig
    history: pd.DataFrame
    epsilon: float
    delta: float
    noise_multiplier: float | None
    sample_rate: float
    steps: int
    stopped_early: bool
    state: dict
    model_kwargs: dict
    dp_event: Any = None
    seconds: float = 0.0
    warnings: tuple = ()

    def model(self) -> nn.Module:
        """Rebuild the trained torch model."""
        m = build_model(**self.model_kwargs)
        m.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in self.state.items()})
        m.eval()
        return m

    def predict_output(self, X) -> np.ndarray:
        """Raw model outputs (logits, or predictions for regression) for already-preprocessed ``X``."""
        m = self.model()
        with torch.no_grad():
            return m(torch.as_tensor(np.asarray(X, dtype=np.float32))).numpy()

    def predict_proba(self, X) -> np.ndarray:
        """Softmax outputs for classification."""
        out = torch.as_tensor(self.predict_output(X))
        return torch.softmax(out, dim=1).numpy()

    def predict(self, X) -> np.ndarray:
        out = self.predict_output(X)
        if self.config.task == "classification":
            return out.argmax(1)
        return out[:, 0]


@functools.lru_cache(maxsize=256)
def _calibrated_sigma(target: float, delta: float, q: float, steps: int, accountant: str) -> float:
    # dp_accounting logs convergence chatter for large q at fractional orders while bisecting; it
    # excludes those orders (a valid, slightly looser bound), so the messages are noise to a user.
    absl_logger = logging.getLogger("absl")
    level = absl_logger.level
    absl_logger.setLevel(logging.ERROR)
    try:
        return calibrate_noise_multiplier(target_epsilon=target, delta=delta, sample_rate=q, steps=steps,
                                          accountant=accountant)
    finally:
        absl_logger.setLevel(level)


def planned_steps(config: TrainConfig, n: int) -> tuple[float, list[int]]:
    """Sample rate and the cumulative step count at the end of each planned epoch."""
    n = check_int(n, "n", minimum=1)
    if config.batch_size > n:
        raise DPValueError(f"batch_size={config.batch_size} is larger than the {n} training records; use at most {n}")
    q = config.batch_size / n
    if config.sampling == "poisson":
        ends = [int(math.ceil(e / q - 1e-9)) for e in range(1, config.epochs + 1)]
    else:
        per = int(math.ceil(n / config.batch_size))
        ends = [per * e for e in range(1, config.epochs + 1)]
    return q, ends


def resolve_noise_multiplier(config: TrainConfig, n: int) -> float | None:
    """sigma of a run on ``n`` records: given, or calibrated to ``target_epsilon`` for the planned steps."""
    if not config.private:
        return None
    if config.noise_multiplier is not None:
        return float(config.noise_multiplier)
    q, ends = planned_steps(config, n)
    return _calibrated_sigma(config.target_epsilon, config.delta, q, ends[-1], config.accountant)


class PlainSGD:
    """``torch.optim.SGD`` (no dampening, no Nesterov), written out.

    Creating any ``torch.optim`` optimizer imports ``torch._dynamo`` on first use,
    about 1.4 s per process, which every sweep worker and every command-line run
    paid for an update of a few lines. This is the same arithmetic as torch's
    single-tensor SGD (bitwise equal, tested): weight decay added to the gradient,
    a momentum buffer started as a copy of the first gradient, then
    ``p -= lr * g``. Parameters whose gradient is None are skipped.
    """

    def __init__(self, params, *, lr: float, momentum: float = 0.0, weight_decay: float = 0.0) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.momentum, self.weight_decay = float(lr), float(momentum), float(weight_decay)
        self._bufs: list[torch.Tensor | None] = [None] * len(self.params)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        for i, p in enumerate(self.params):
            g = p.grad
            if g is None:
                continue
            if self.weight_decay != 0:
                g = g.add(p, alpha=self.weight_decay)
            if self.momentum != 0:
                buf = self._bufs[i]
                if buf is None:
                    buf = self._bufs[i] = torch.clone(g).detach()
                else:
                    buf.mul_(self.momentum).add_(g)
                g = buf
            p.add_(g, alpha=-self.lr)


def _per_example_loss(out: torch.Tensor, yb: torch.Tensor, task: str) -> torch.Tensor:
    if task == "classification":
        return F.cross_entropy(out, yb, reduction="none")
    diff = out - yb.reshape(out.shape[0], -1)
    return diff.pow(2).sum(1)


def _scaled_clip_factors(norms: torch.Tensor, clip_norm: float, scale: float) -> torch.Tensor:
    """``scale * min(1, C / (||g_i|| + 1e-6))`` (:func:`clip_factors` times ``scale``) in two passes.

    The ``1/L`` of the average is folded into the clip factors, so the clipped
    sum comes out already divided by the expected batch size.
    """
    return torch.div(clip_norm * scale, norms + CLIP_EPS).clamp_(max=scale)


def private_gradient(
    model: nn.Module,
    clipper: GhostClipper | DenseStackClipper,
    xb: torch.Tensor,
    yb: torch.Tensor,
    *,
    task: str,
    clip_norm: float,
    noise_std: float,
    expected_batch_size: float,
    generator: torch.Generator,
) -> float:
    """Fill ``p.grad`` with one DP-SGD gradient; return the batch's summed loss (a diagnostic).

    ``p.grad = (sum_i clip_C(g_i) + N(0, noise_std^2 I)) / expected_batch_size``:
    per-example norms from ghost norms, clip factors ``min(1, C/(||g_i|| + 1e-6))``,
    the clipped sum as one product per layer, then the noise. An empty batch
    gives pure noise (the mechanism still runs, as the accountant assumes).

    The noise is one draw of ``N(0, (noise_std / L)^2)`` for all parameters (in
    ``model.parameters()`` order) straight into a flat gradient buffer, and the
    clipped sum (with the ``1/L`` folded into the clip factors) is added to it in
    place; every ``p.grad`` is a view into that buffer. ``clipper`` is a
    :class:`~dpcore.training.ghost.DenseStackClipper` (hand-differentiated
    Linear/activation stacks, no autograd) or a :class:`GhostClipper` (hooks,
    any supported model); both give the same gradient (see
    :func:`~dpcore.training.ghost.make_clipper`).
    """
    params = [p for p in model.parameters() if p.requires_grad]
    inv = 1.0 / expected_batch_size
    flat = torch.empty(sum(p.numel() for p in params), dtype=params[0].dtype, device=params[0].device)
    if noise_std > 0:
        flat.normal_(0.0, noise_std * inv, generator=generator)
    else:
        flat.zero_()
    grads = [g.view_as(p) for g, p in zip(flat.split([p.numel() for p in params]), params)]
    loss_sum = 0.0
    if xb.shape[0] > 0:
        if isinstance(clipper, DenseStackClipper):
            losses, norms = clipper.per_example(xb, yb, task=task)
            clipper.add_clipped_sum(_scaled_clip_factors(norms, clip_norm, inv), grads)
        else:
            with clipper.capture():
                out = model(xb)
            losses = _per_example_loss(out, yb, task)
            norms = clipper.norms(losses)
            for p, g in zip(params, grads):
                p.grad = g
            clipper.write_clipped_sum(_scaled_clip_factors(norms, clip_norm, inv), accumulate=True)
        loss_sum = float(losses.detach().sum())
    for p, g in zip(params, grads):
        p.grad = g
    return loss_sum


def _evaluate(model: nn.Module, X: torch.Tensor, y: torch.Tensor, task: str) -> tuple[float, float]:
    model.eval()
    with torch.no_grad():
        out = model(X)
        loss = float(_per_example_loss(out, y, task).mean())
        if task == "classification":
            target = y if y.dim() == 1 else y.argmax(1)
            metric = float((out.argmax(1) == target).float().mean())
        else:
            metric = loss
    model.train()
    return loss, metric


def train(
    X,
    y,
    config: TrainConfig,
    *,
    X_test=None,
    y_test=None,
    n_outputs: int | None = None,
    image_shape: tuple[int, int] | None = None,
    on_epoch: EpochCallback | None = None,
) -> TrainResult:
    """Train a model with DP-SGD (or non-privately if ``config.private`` is False).

    Each step: Poisson-sample a batch with rate ``q = batch_size / n``; compute
    every example's gradient norm from the layer activations and output
    gradients (ghost norms, never materialising per-example gradients of Linear
    layers; for the ``linear`` and ``mlp`` models by a hand-written forward and
    backward with no autograd, :class:`~dpcore.training.ghost.DenseStackClipper`,
    for the CNN through forward hooks and one autograd pass); clip ``g_i / max(1, ||g_i|| / C)``; sum them as one product per
    layer; add ``N(0, sigma^2 C^2 I)``; divide by the expected batch size
    ``q n`` (not the realised one, which would leak); take an SGD step. An empty
    Poisson batch still adds the noise and steps. After every epoch the
    accountant (RDP by default, PLD optionally, both from dp_accounting via
    :mod:`dpcore.accounting`) gives the epsilon spent so far.

    Parameters
    ----------
    X : array of shape (n, d)
        Features, already scaled with public bounds (the learners do that).
    y : array of shape (n,) or (n, k)
        Integer class labels, soft/one-hot targets (classification), or real
        targets (regression).
    config : TrainConfig
    X_test, y_test : arrays, optional
        Evaluation data for the per-epoch ``loss`` and ``accuracy``.
    n_outputs : int, optional
        Number of classes; inferred from ``y`` if omitted (that inference reads
        private labels, so learners pass it from the dataset's declared classes).
    image_shape : (int, int), optional
        Needed for ``model="cnn"``.
    on_epoch : callable, optional
        Called after every epoch with ``{"epoch", "epochs", "step", "loss",
        "accuracy"/"mse", "epsilon", "train_loss"}``.

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
    """
    t0 = time.perf_counter()
    if not isinstance(config, TrainConfig):
        raise DPValueError(f"config must be a TrainConfig, got {type(config).__name__}")
    X = check_array(X, "X", ndim=2)
    n, d = X.shape
    y_arr = np.asarray(y)
    if y_arr.shape[0] != n:
        raise DPValueError(f"X has {n} rows but y has {y_arr.shape[0]}; they must match")
    task = config.task
    if task == "classification":
        if y_arr.ndim == 1:
            if not np.all(np.equal(np.mod(y_arr, 1), 0)) or (y_arr.size and y_arr.min() < 0):
                raise DPValueError("classification labels must be integers 0..k-1 (or one-hot/soft rows)")
            y_t = torch.as_tensor(y_arr.astype(np.int64))
            k = int(n_outputs) if n_outputs is not None else int(y_arr.max()) + 1
            if y_arr.size and y_arr.max() >= k:
                raise DPValueError(f"labels go up to {int(y_arr.max())} but n_outputs={k}")
        else:
            y_t = torch.as_tensor(check_array(y_arr, "y", ndim=2), dtype=torch.float32)
            k = y_arr.shape[1]
    else:
        y_t = torch.as_tensor(check_array(y_arr, "y").reshape(n, -1), dtype=torch.float32)
        k = y_t.shape[1]
    if k < 1 or (task == "classification" and k < 2):
        raise DPValueError(f"classification needs at least 2 classes, got n_outputs={k}")
    q, ends = planned_steps(config, n)
    sigma = resolve_noise_multiplier(config, n)
    caught: list[str] = []
    if config.private and sigma == 0:
        msg = "noise_multiplier=0 adds no noise: clipping alone gives no differential privacy (epsilon = inf)"
        warnings.warn(msg, DPCoreWarning, stacklevel=2)
        caught.append(msg)
    if config.private and config.sampling == "shuffle":
        warnings.warn(SHUFFLE_CAVEAT, DPCoreWarning, stacklevel=2)
        caught.append(SHUFFLE_CAVEAT)

    rng = as_generator(config.seed)
    model_kwargs = dict(kind=config.model, n_features=d, n_outputs=k, hidden=config.hidden, depth=config.depth,
                        activation=config.activation, image_shape=tuple(image_shape) if image_shape else None,
                        channels=config.channels, seed=child_seed(rng))
    model = build_model(**model_kwargs)
    noise_gen = torch.Generator().manual_seed(child_seed(rng))
    if config.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    else:
        opt = PlainSGD(model.parameters(), lr=config.learning_rate, momentum=config.momentum,
                       weight_decay=config.weight_decay)
    clipper = make_clipper(model) if config.private else None
    params = [p for p in model.parameters() if p.requires_grad]
    ema_model = None
    if config.ema > 0:
        ema_model = build_model(**model_kwargs)
        ema_model.load_state_dict(model.state_dict())
        ema_params = list(ema_model.parameters())

    Xt = torch.as_tensor(X, dtype=torch.float32)
    if X_test is not None:
        Xe = torch.as_tensor(check_array(X_test, "X_test", ndim=2), dtype=torch.float32)
        ye_arr = np.asarray(y_test)
        ye = torch.as_tensor(ye_arr.astype(np.int64)) if task == "classification" and ye_arr.ndim == 1 else \
            torch.as_tensor(ye_arr.reshape(len(ye_arr), -1) if task == "regression" else ye_arr, dtype=torch.float32)
    else:
        Xe, ye = Xt, y_t
    expected_batch = q * n

    # the privacy odometer: equal to a dp_accounting accountant composing the steps epoch by epoch
    odometer = PrivacyLedger(delta=config.delta, accountant=config.accountant) \
        if config.private and sigma and sigma > 0 else None

    def eps_after(n_steps: int) -> float:
        """Epsilon the odometer would show after ``n_steps`` more steps."""
        if odometer is None:  # not private, or sigma = 0: no guarantee at all
            return math.inf
        return odometer.epsilon_if(dpsgd_event(noise_multiplier=sigma, sample_rate=q, steps=n_steps))

    rows = []
    done_steps = 0
    eps_spent = 0.0 if config.private else math.inf
    stopped = False
    order = None
    model.train()
    for epoch, end in enumerate(ends, start=1):
        n_steps = end - done_steps
        if config.private and config.max_epsilon is not None:
            nxt = eps_after(n_steps)
            if nxt > config.max_epsilon:
                stopped = True
                break
        if config.sampling == "shuffle":
            order = torch.as_tensor(rng.permutation(n))
        losses_seen, count_seen = 0.0, 0
        for s in range(n_steps):
            if config.sampling == "poisson":
                idx = torch.as_tensor(np.flatnonzero(rng.random(n) < q))
            else:
                idx = order[s * config.batch_size:(s + 1) * config.batch_size]
            xb, yb = Xt.index_select(0, idx), y_t.index_select(0, idx)
            opt.zero_grad(set_to_none=True)
            if not config.private:
                if idx.numel() == 0:
                    continue
                out = model(xb)
                loss = _per_example_loss(out, yb, task)
                loss.mean().backward()
                losses_seen += float(loss.detach().sum()); count_seen += idx.numel()
            else:
                loss_sum = private_gradient(model, clipper, xb, yb, task=task, clip_norm=config.clip_norm,
                                            noise_std=sigma * config.clip_norm, expected_batch_size=expected_batch,
                                            generator=noise_gen)
                losses_seen += loss_sum; count_seen += idx.numel()
            opt.step()
            if ema_model is not None:
                with torch.no_grad():
                    torch._foreach_lerp_(ema_params, params, 1.0 - config.ema)
        done_steps = end
        if odometer is not None:
            eps_spent = odometer.spend(dpsgd_event(noise_multiplier=sigma, sample_rate=q, steps=n_steps))
        elif config.private:
            eps_spent = math.inf
        loss_e, metric = _evaluate(ema_model if ema_model is not None else model, Xe, ye, task)
        row = {"epoch": epoch, "step": done_steps, "loss": loss_e,
               ("accuracy" if task == "classification" else "mse"): metric,
               "epsilon": eps_spent, "train_loss": losses_seen / max(count_seen, 1)}
        rows.append(row)
        if on_epoch is not None:
            on_epoch({**row, "epochs": config.epochs})
    if clipper is not None:
        clipper.remove()
    if stopped:
        msg = (f"stopped after epoch {len(rows)} of {config.epochs}: one more epoch would spend more than "
               f"max_epsilon={config.max_epsilon:g}")
        warnings.warn(msg, DPCoreWarning, stacklevel=2)
        caught.append(msg)
    history = pd.DataFrame(rows, columns=["epoch", "step", "loss", "accuracy" if task == "classification" else "mse",
                                          "epsilon", "train_loss"])
    event = dpsgd_event(noise_multiplier=sigma, sample_rate=q, steps=done_steps) if odometer is not None else None
    final = ema_model if ema_model is not None else model
    state = {k: v.detach().numpy().copy() for k, v in final.state_dict().items()}
    return TrainResult(
        config=config, history=history, epsilon=eps_spent, delta=config.delta if config.private else 0.0,
        noise_multiplier=sigma, sample_rate=q, steps=done_steps, stopped_early=stopped, state=state,
        model_kwargs=model_kwargs, dp_event=event, seconds=time.perf_counter() - t0, warnings=tuple(caught),
    )
