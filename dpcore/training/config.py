"""What defines one DP-SGD run, without torch: :class:`TrainConfig` and the names its fields may take.

The learners' knobs read their choices and defaults here, so listing the learners (``python -m dpcore train
--help``, a page's menus) does not load torch; :mod:`dpcore.training.engine` trains a config.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..accounting.core import ACCOUNTANTS
from ..defaults import DELTA
from ..exceptions import DPValueError
from ..validation import check_delta, check_epsilon, check_int, check_nonnegative, check_positive, refuse_unknown_fields
from .sampling import SAMPLINGS

#: The built-in networks (:func:`dpcore.training.models.build_model`) and their activations.
MODELS = ("linear", "mlp", "cnn")
ACTIVATIONS = ("relu", "tanh", "sigmoid", "elu")
TASKS = ("classification", "regression")
OPTIMIZERS = ("sgd", "adam")

SHUFFLE_CAVEAT = (
    "Shuffled batches (sampling='shuffle') have no proven amplification by sampling (Chua et al. 2024 show that "
    "reporting them as Poisson samples, as Opacus and TF Privacy do, can understate ε): ε is accounted as one "
    "Gaussian mechanism per epoch, one record replaced, so the same ε needs far more noise. Poisson sampling gets "
    "the amplification."
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
        Poisson sampling (each record joins each batch with probability q) is amplified
        by sampling; ``"shuffle"`` (fixed-size batches) is accounted without amplification,
        one Gaussian mechanism per epoch under replace-one neighbours (``SHUFFLE_CAVEAT``).
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
    class_shares : tuple of float
        Declared class shares of a classification label (public knowledge, in the classes' order; empty: none). The
        evaluation rows of the history are then answered ``argmax(p / shares)``, as
        :func:`dpcore.learners.decision.balanced_decision` answers the final test rows: evaluation only,
        post-processing of the released model; training, noise and accounting do not read it.
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
    delta: float = DELTA
    accountant: str = "rdp"
    sampling: str = "poisson"
    max_epsilon: float | None = None
    ema: float = 0.0
    private: bool = True
    task: str = "classification"
    seed: int = 0
    class_shares: tuple = ()

    def __new__(cls, *args, **kwargs):
        refuse_unknown_fields(cls, kwargs)  # by name, with the field meant (epsilon: target_epsilon)
        return super().__new__(cls)

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
        shares = tuple(float(v) for v in (self.class_shares or ()))
        if shares and (self.task != "classification" or not all(math.isfinite(v) and v > 0 for v in shares)):
            raise DPValueError(f"class_shares must be positive numbers, one per class of a classification label; got "
                               f"{shares} for task {self.task!r}")
        object.__setattr__(self, "class_shares", shares)
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
            given = [f"{name}={getattr(self, name):g}" for name in ("target_epsilon", "noise_multiplier", "max_epsilon")
                     if getattr(self, name) is not None]
            if given:  # a privacy setting the run would drop: it trains with no noise, its epsilon is infinite
                unset = ", ".join(f"{g.split('=')[0]}=None" for g in given)
                raise DPValueError(f"private=False trains without clipping or noise (its epsilon is infinite), so "
                                   f"{', '.join(given)} would be ignored: set private=True for DP-SGD, or leave "
                                   f"{'them' if len(given) > 1 else 'it'} out for the non-private baseline (from a "
                                   f"private config: config.replace(private=False, {unset}))")
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
