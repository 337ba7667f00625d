"""Many training runs of one dense network (DP-SGD, or without privacy) trained together, as one batched computation.

A privacy-utility sweep trains the same small network dozens of times, differing only in the seed, the
noise multiplier (or the epsilon it is calibrated from), the clip norm, the learning rate. Trained one at a
time, most of the time goes to overhead, not arithmetic. :func:`train_together` stacks the parameters of K
runs along a model axis and does their arithmetic as batched matrix products (``torch.baddbmm``/``bmm``):
the forward pass, every example's gradient norm (the ghost identity ``||a_i||^2 ||b_i||^2`` per Linear
layer, as :class:`~dpcore.training.ghost.DenseStackClipper` computes it), the clip factors, the clipped sum
(book-keeping, one product per layer), the update (SGD with momentum and weight decay, or Adam with its own
step count per run, as :class:`~dpcore.training.optim.PlainSGD` and :class:`~dpcore.training.optim.PlainAdam`
take it), the averaged iterates and the evaluation after every epoch.

A non-private run (``private=False``, the baselines of a sweep and the networks behind the label-DP and
output-perturbation learners) takes the same batched pass without the norms: its gradient is that of the mean
loss over its own sampled batch, with no clipping and no noise, and its epsilon is infinite; an empty batch
(possible with Poisson sampling) is skipped, with no update, no Adam step and no average, as ``train()`` skips it.

Nothing about one run's privacy changes, because nothing random is shared. Every run keeps the generators a
run trained alone builds, from its own seed and in the same order (:func:`dpcore.training.train`: the
initial weights, then the noise generator's seed, then the sampler), and draws from them exactly what it
would draw alone, in the same order and shape: its own Poisson sample ``rng.random(n) < q`` at every step
and its own noise ``N(0, (sigma_k C_k / L_k)^2)`` for all its parameters at once
(:class:`~dpcore.mechanisms.gaussian_sum.GaussianSum`, as the single step draws it). Runs whose samplers are
twins (the same seed, rows and rate: a sweep's epsilon values at one seed) would draw the same batches from
generators in the same state; the batch draws each once, from the first twin's sampler, and gathers its rows
once for all of them (:class:`_Draws`: 250 Adult runs, 6.0 s -> 2.8 s). Each run's
sampled rows are padded to the largest batch of the step, and the padding gets clip factor 0, so it adds
nothing. Each run has its own clip norm ``C_k``, expected batch size ``L_k = q_k n_k``, learning rate,
momentum, weight decay and averaging; its own odometer (:class:`~dpcore.training.engine._Budget`, the same
dp_accounting ledger as a run alone, ``max_epsilon`` included); and it leaves the batch when its planned
epochs are done or its budget would be exceeded. So run k of a batch is the run trained alone with the same
seed: the same batches, the same noise, the same accounting, and weights equal up to float rounding (the
batched products add in another order). Tests check that, and the per-run white-box bounds.

What trains together: runs on the built-in ``linear`` and ``mlp`` models, seeded (not in secure mode), sharing
the architecture (model, hidden width, depth, activation), the number of features and outputs, the task, and
the way they train: all private (DP-SGD) or all not, all with SGD or all with Adam (:func:`together_key`; a
sweep puts its DP-SGD runs in one batch and its non-private baselines in another). The data may differ (each
run names its own training and evaluation rows: several splits of a sweep's seeds train in one batch), and so
may the epochs, batch sizes, sampling, learning rates, momentum, weight decay and averaging. Everything else
trains alone (:func:`why_not_together` says why).

References
----------
Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep learning with differential privacy. CCS 2016
(Algorithm 1).
Kingma, Ba. Adam: a method for stochastic optimization. ICLR 2015.
Goodfellow. Efficient per-example gradient computations. arXiv:1510.01799, 2015 (the per-example norm of a
Linear layer's gradient).
Bu, Wang, Zha, Karypis. Differentially private optimization on large model at small cost. ICML 2023
(book-keeping: the clipped sum as one product per layer).
De, Berrada, Hayes, Smith, Balle. Unlocking high-accuracy differentially private image classification through
scale. arXiv:2204.13650, 2022 (averaged iterates).
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import torch

from ..exceptions import DPCoreWarning, DPValueError
from ..mechanisms.gaussian_sum import GaussianSum
from ..rng import as_generator, child_seed, secure_active, torch_generator
from ..runtime.thread_warnings import caught as caught_warnings
from ..runtime.workload import MemoryGuard, check_work
from ..validation import check_delta, check_int, delta_is_checked
from .clipping import CLIP_EPS
from .engine import (
    TrainConfig,
    TrainResult,
    _Budget,
    _Data,
    _model_kwargs,
    _result,
    _run_warnings,
    _training_data,
    balanced_accuracy_of,
    decision_shift,
    planned_steps,
    resolve_noise_multiplier,
    training_work,
)
from .ghost import _dense_plan, dense_pass
from .losses import loss_and_output_grad, per_example_loss
from .models import build_model
from .optim import ADAM_BETAS, ADAM_EPS
from .sampling import PoissonSampler, make_sampler

#: The models :func:`train_together` batches: stacks of Linear layers and elementwise activations.
DENSE_MODELS = ("linear", "mlp")
#: Floats one block of runs may hold in its gathered batch and activations at once (about 64 MB): a sweep of
#: hundreds of runs on a large table is done in blocks of runs, step by step.
BLOCK_FLOATS = 16_000_000
#: The input floats (expected batch times input width, summed over runs) a step must give each lane: 8 MNIST 5k
#: runs (2.4 million a step) gain from two lanes (a 24-run sweep 5.1 s -> 4.7 s with 1 million rather than 2), and 10
#: non-private Adult runs of 64 rows (66 thousand) lose (4.5 s in two lanes against 2.6 s in one).
LANE_FLOATS = 1_000_000

#: ``on_epoch(k, info)``: run ``k`` (its position in the list given) finished an epoch; ``info`` is what
#: :func:`~dpcore.training.train` hands its own ``on_epoch``.
TogetherEpochCallback = Callable[[int, Mapping[str, Any]], None]
#: ``on_step(step, runs, noisy_sums)``: after every step, the runs that took it (positions in the list given)
#: and their noisy summed gradients, row j for run ``runs[j]``, each a flat vector in ``model.parameters()``
#: order before the division by the expected batch size: what a white-box auditor of each run reads.
TogetherStepObserver = Callable[[int, list, torch.Tensor], None]


@dataclass(frozen=True, eq=False)
class TogetherRun:
    """One run of :func:`train_together`: what :func:`~dpcore.training.train` would be given.

    Runs that share data should pass the same array objects (``X``, ``y``, ``X_test``, ``y_test``): the rows
    are then turned into tensors once and shared.
    """

    X: Any
    y: Any
    config: TrainConfig
    X_test: Any = None
    y_test: Any = None
    n_outputs: int | None = None


def why_not_together(config: TrainConfig) -> str | None:
    """Why a run with ``config`` cannot train in a batch (one plain sentence), or None if it can."""
    if not isinstance(config, TrainConfig):
        return f"config must be a TrainConfig, got {type(config).__name__}"
    if config.model not in DENSE_MODELS:
        return f"model={config.model!r} (only the dense models {', '.join(DENSE_MODELS)} train together)"
    if secure_active():
        return "secure mode (the batched trainer draws seeded noise only)"
    return None


def together_key(run: TogetherRun, n_features: int | None = None, n_outputs: int | None = None) -> tuple:
    """What runs must share to train in one batch: architecture, input and output widths, task, label kind, and
    how they train (private or not, the optimiser), so that one batched step and one update serve them all."""
    c = run.config
    X = np.asarray(run.X) if n_features is None else None
    y = np.asarray(run.y)
    d = int(X.shape[1]) if n_features is None else int(n_features)
    k = run.n_outputs if n_outputs is None else n_outputs
    hidden = (c.hidden, c.depth, c.activation) if c.model == "mlp" else ()
    return (c.model, hidden, c.task, d, k, "soft" if (c.task == "classification" and y.ndim == 2) else "index",
            "private" if c.private else "non-private", c.optimizer)


# --------------------------------------------------------------------------------------------------------------
# Interception: how a sweep hands the learners' training to a batch and their results back (dpcore.sweep).
# --------------------------------------------------------------------------------------------------------------

_INTERCEPT: contextvars.ContextVar = contextvars.ContextVar("dpcore_batched_intercept", default=None)


class Captured(BaseException):
    """Raised by :func:`offer` inside :func:`capturing`: the learner's training problem, caught before training.

    A BaseException, as KeyboardInterrupt is: a learner's ``except Exception`` around its training does not
    swallow it, and a sweep's run wrapper (which names a failing run) lets it through."""

    def __init__(self, problem: Any, fit_key: tuple, as_made: bool = False) -> None:
        super().__init__("training problem captured for a batch")
        self.problem, self.fit_key, self.as_made = problem, fit_key, as_made


@contextlib.contextmanager
def capturing() -> Iterator[None]:
    """Inside it, a learner that reaches :func:`offer` stops there with :class:`Captured` instead of training."""
    token = _INTERCEPT.set(("capture", None))
    try:
        yield
    finally:
        _INTERCEPT.reset(token)


def capturing_now() -> bool:
    """Whether this call runs inside :func:`capturing`: a learner's problem is then only read (by the batch it is
    handed to), so its arrays need not be copies of its own."""
    mode = _INTERCEPT.get()
    return mode is not None and mode[0] == "capture"


@contextlib.contextmanager
def serving(fit_key: tuple, problem: Any, result: TrainResult) -> Iterator[None]:
    """Inside it, the learner call whose fit arguments equal ``fit_key`` gets ``problem`` and ``result`` (trained
    in a batch) instead of computing its features and training; any other call trains as usual."""
    token = _INTERCEPT.set(("serve", (fit_key, problem, result)))
    try:
        yield
    finally:
        _INTERCEPT.reset(token)


def served(fit_key: tuple) -> tuple[Any, TrainResult] | None:
    """The problem and result :func:`serving` holds for ``fit_key``, or None. The result's warnings are issued
    again here, as the run would have issued them."""
    mode = _INTERCEPT.get()
    if mode is None or mode[0] != "serve" or mode[1][0] != fit_key:
        return None
    _, problem, result = mode[1]
    for msg in result.warnings:
        warnings.warn(msg, DPCoreWarning, stacklevel=3)
    return problem, result


def offer(problem: Any, fit_key: tuple, *, as_made: bool = False) -> None:
    """Inside :func:`capturing`, stop the learner with its training problem (see :class:`Captured`). ``as_made``:
    the problem's arrays are as :func:`~dpcore.training.learners.training_problem` made them (nothing has
    changed them), so copies of one split's features are known equal without comparing them."""
    mode = _INTERCEPT.get()
    if mode is not None and mode[0] == "capture":
        raise Captured(problem, fit_key, as_made)


# --------------------------------------------------------------------------------------------------------------
# The batched trainer
# --------------------------------------------------------------------------------------------------------------

class _Member:
    """One run of the batch: its generators, sampler, odometer, schedule and history, as :func:`train` has them."""

    def __init__(self, index: int, run: TogetherRun, data: _Data, split: int, t0: float) -> None:
        config = run.config
        self.index, self.config, self.split, self.t0 = index, config, split, t0
        self.shift = decision_shift(config, data.n_outputs)  # the declared class shares' rule, evaluation only
        n = data.n
        self.q, self.ends = planned_steps(config, n)
        if config.private and not delta_is_checked():
            check_delta(config.delta, n=n)
        calibration: list[str] = []  # kept in the result: the run served from the batch says them (served())
        self.sigma = resolve_noise_multiplier(config, n, said=calibration)
        self.caught = calibration + _run_warnings(config, self.sigma)
        rng = as_generator(config.seed)  # the order train() uses: model init, the noise seed, then the batches
        self.model_kwargs = _model_kwargs(config, data, None, seed=child_seed(rng))
        self.model = build_model(**self.model_kwargs)
        noise_gen = torch_generator(child_seed(rng))
        self.sampler = make_sampler(config.sampling, n, batch_size=config.batch_size, rng=rng)
        self.twins = _twin_key(self.sampler, rng, split)
        self.draws: _Draws | None = None  # set by _loop when the run has twins in its lane
        self.budget = _Budget(config, self.sigma, self.q, n)
        self.allowed: dict[int, bool] = {}  # the budget's answer for each epoch end (shared with its sharers)
        self.expected_batch = self.q * n
        self.width = data.X.shape[1]
        self.inv = 1.0 / self.expected_batch
        size = sum(p.numel() for p in self.model.parameters())
        # the noise generator's seed is drawn above whether or not the run is private, as train() draws it (the
        # sampler's stream comes after it); only a private run adds noise
        self.noise = GaussianSum(std=float(self.sigma) * config.clip_norm, sensitivity=config.clip_norm,
                                 generator=noise_gen, size=size, held_scale=self.inv) if config.private else None
        self.adam_steps = 0  # the steps its Adam has taken (a non-private run skips its empty batches)
        self.rows: list[dict] = []
        self.done = 0
        self.epoch = 0  # epochs finished
        self.batches: Iterator[np.ndarray] | None = None
        self.left = 0
        self.loss_sum, self.count = 0.0, 0
        self.stopped = False
        self.epsilon = self.budget.epsilon
        self.result: TrainResult | None = None

    def start_epoch(self) -> bool:
        """Begin the next planned epoch; False when the run is over (planned epochs done, or budget reached)."""
        if self.epoch == len(self.ends):
            return self._leave()
        end = self.ends[self.epoch]
        if end not in self.allowed:
            self.allowed[end] = self.budget.allows(end)
        if not self.allowed[end]:
            self.stopped = True
            return self._leave()
        self.left = end - self.done
        self.batches = self.sampler.batches(self.left) if self.draws is None else self.draws.batches(self, self.left)
        self.loss_sum, self.count = 0.0, 0
        return True

    def _leave(self) -> bool:
        if self.draws is not None:
            self.draws.leave(self)
        return False


def _twin_key(sampler, rng: np.random.Generator, split: int) -> tuple | None:
    """What makes two runs' Poisson batches the same: the rows (``split``), ``n``, the rate and the state of the
    generator their sampler draws from (a sweep's epsilon values at one seed: every draw ``rng.random(n) < q`` is
    then the same). None for a sampler that draws from anything but the run's own seeded generator (secure mode)
    or takes shuffled batches."""
    if not isinstance(sampler, PoissonSampler) or sampler.rng is not rng:
        return None
    return split, sampler.n, sampler.sample_rate, repr(rng.bit_generator.state)


class _Draws:
    """The Poisson batches of twin runs (:func:`_twin_key`), drawn once, by the first twin's sampler, and read by
    all: the j-th batch any of them takes is the j-th its own sampler would have drawn (a Poisson stream does not
    depend on where the epochs end), and it is the same array object for all, so their rows are gathered once."""

    def __init__(self, sampler: PoissonSampler, twins: list["_Member"]) -> None:
        self.sampler = sampler
        self.read = {id(m): 0 for m in twins}  # id of a twin still drawing -> the batches it has read
        self.kept: dict[int, list] = {}  # draw number -> [batch, twins yet to read it]

    def batches(self, member: "_Member", steps: int) -> Iterator[np.ndarray]:
        for _ in range(steps):
            j = self.read[id(member)]
            self.read[id(member)] = j + 1
            if j not in self.kept:  # the first twin to get here draws it
                self.kept[j] = [self.sampler.draw(), len(self.read)]
            got = self.kept[j]
            got[1] -= 1
            if got[1] == 0:
                del self.kept[j]
            yield got[0]

    def leave(self, member: "_Member") -> None:
        """``member`` draws no more: the batches drawn that only it had still to read are let go."""
        j = self.read.pop(id(member), None)
        if j is None:
            return
        for k in [k for k in self.kept if k >= j]:
            self.kept[k][1] -= 1
            if self.kept[k][1] == 0:
                del self.kept[k]


def _share_draws(members: list["_Member"]) -> list["_Member"]:
    """``members`` with each group of twins (:func:`_twin_key`) reading one :class:`_Draws`, and the twins next to
    each other (first-come order otherwise), so that a block of a step holds one batch's rows for several runs."""
    groups: dict[tuple, list[_Member]] = {}
    for m in members:
        groups.setdefault(m.twins if m.twins is not None else (id(m),), []).append(m)
    for group in groups.values():
        if len(group) > 1:
            draws = _Draws(group[0].sampler, group)
            for m in group:
                m.draws = draws
    return [m for group in groups.values() for m in group]


class _Stack:
    """The parameters (and optimiser state, averages, gradient buffer) of the runs still training, stacked.

    Every run of a stack trains the same way (private or not, one optimiser: :func:`together_key`)."""

    def __init__(self, plan: list, members: list[_Member]) -> None:
        self.plan = plan
        self.members = members
        c = members[0].config
        self.private, self.adam = c.private, c.optimizer == "adam"
        linears = [i for i, op in enumerate(plan) if op[0] == "linear"]
        self.W = [torch.stack([m.model[i].weight.detach() for m in members]) for i in linears]
        self.b = [torch.stack([m.model[i].bias.detach() for m in members]) for i in linears]
        # the iterates' average starts at the initial weights, as _Ema's copy of the model does
        self.avg = [t.clone() for t in self.params()] if any(m.config.ema > 0 for m in members) else None
        # SGD's momentum buffer, or Adam's two moments, start at zero: the first update makes them what torch's
        # first step does (a copy of the first gradient; (1 - beta1) g and (1 - beta2) g^2)
        if self.adam:
            self.state = [torch.zeros_like(t) for t in self.params() * 2]
        elif any(m.config.momentum for m in members):
            self.state = [torch.zeros_like(t) for t in self.params()]
        else:
            self.state = []
        self._refresh_columns()

    def _refresh_columns(self) -> None:
        ms = self.members
        K = len(ms)

        def col(values) -> torch.Tensor:
            return torch.tensor(values, dtype=torch.float32).reshape(K, 1)

        self.clip_num = col([m.config.clip_norm * m.inv for m in ms])  # C / L: the clip factor's numerator
        self.clip_max = col([m.inv for m in ms])  # 1 / L: the clip factor's cap
        self.neg_lr = col([-m.config.learning_rate for m in ms])
        self.lr = [m.config.learning_rate for m in ms]
        self.wd = col([m.config.weight_decay for m in ms]) if any(m.config.weight_decay for m in ms) else None
        self.mom = col([m.config.momentum for m in ms])  # used while any run that started with momentum is on
        self.ema_w = col([1.0 - m.config.ema for m in ms]) if any(m.config.ema > 0 for m in ms) else None
        self.ema_on = torch.tensor([m.config.ema > 0 for m in ms], dtype=torch.bool)
        sizes = [w.shape[1] * w.shape[2] + w.shape[1] for w in self.W]
        self.flat = torch.empty(K, sum(sizes))
        self.gW, self.gb = [], []
        off = 0
        for w in self.W:
            out, inp = w.shape[1], w.shape[2]
            self.gW.append(self.flat[:, off:off + out * inp].view(K, out, inp))
            off += out * inp
            self.gb.append(self.flat[:, off:off + out])
            off += out

    def params(self) -> list[torch.Tensor]:
        return [t for pair in zip(self.W, self.b) for t in pair]

    def grads(self) -> list[torch.Tensor]:
        return [t for pair in zip(self.gW, self.gb) for t in pair]

    def keep(self, positions: list[int]) -> None:
        """Only the runs at ``positions`` go on."""
        sel = torch.as_tensor(positions, dtype=torch.long)
        self.W = [w.index_select(0, sel) for w in self.W]
        self.b = [b.index_select(0, sel) for b in self.b]
        if self.avg is not None:
            self.avg = [a.index_select(0, sel) for a in self.avg]
        self.state = [t.index_select(0, sel) for t in self.state]
        self.members = [self.members[i] for i in positions]
        self._refresh_columns()

    def evaluated(self, pos: int) -> list[torch.Tensor]:
        """Run ``pos``'s weights as evaluated and returned: the average when its EMA is on, else the iterate."""
        src = self.avg if (self.avg is not None and bool(self.ema_on[pos])) else self.params()
        return [t[pos] for t in src]

    def eval_tensors(self, positions: list[int]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        sel = torch.as_tensor(positions, dtype=torch.long)
        live = (self.W, self.b)
        if self.avg is None:
            return [w.index_select(0, sel) for w in live[0]], [b.index_select(0, sel) for b in live[1]]
        on = self.ema_on.index_select(0, sel)
        avg_W, avg_b = self.avg[0::2], self.avg[1::2]
        pick = [torch.where(on.view(-1, *([1] * (t.dim() - 1))), a.index_select(0, sel), t.index_select(0, sel))
                for t, a in zip(live[0] + live[1], avg_W + avg_b)]
        n = len(live[0])
        return pick[:n], pick[n:]


def train_together(
    runs: Sequence[TogetherRun],
    *,
    on_epoch: TogetherEpochCallback | None = None,
    on_step: TogetherStepObserver | None = None,
    block_floats: int = BLOCK_FLOATS,
    lanes: int = 1,
) -> list[TrainResult]:
    """Train runs of one dense network as one batched computation; run k's result equals ``train()``'s.

    Parameters
    ----------
    runs : sequence of TogetherRun
        Each with its own data, :class:`~dpcore.training.TrainConfig` (seed, sigma or target epsilon, clip
        norm, learning rate, momentum, weight decay, EMA, epochs, batch size, sampling, ``max_epsilon``...).
        They must share the architecture and widths, and train the same way: all private or all not, with one
        optimiser (:func:`together_key`); each must be able to train in a batch (:func:`why_not_together`). A run
        that cannot is refused by position, with the reason.
    on_epoch : callable, optional
        ``on_epoch(k, info)`` after run k's every epoch, with what ``train(on_epoch=...)`` receives. With more than
        one lane it is called from the lanes' threads, one call at a time (a page that draws from it passes
        ``lanes=1``); what it raises stops every lane and is raised here.
    on_step : callable, optional
        Private runs: ``on_step(step, runs, noisy_sums)`` after every step (see :data:`TogetherStepObserver`).
    block_floats : int
        Bound on the floats one block of runs holds at once in a step (runs are processed in blocks).
    lanes : int, default 1
        Threads the runs are shared among (each its own stack, stepping on its own; runs that read one odometer
        stay in one lane). Most of a step's work (sampling, gathering rows, the batched products) runs without
        Python's lock, so on two idle cores two lanes train 225 Adult runs in about 0.6 of the time of one. Each
        run's arithmetic is the same in any lane. ``on_step`` needs one lane (it sees every run at every step).

    Returns
    -------
    list of TrainResult
        In the order of ``runs``, each what :func:`~dpcore.training.train` returns for that run alone (its
        ``seconds`` is the batch's wall time shared equally among its runs).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5)); y = (X[:, 0] > 0).astype(int)
    >>> cfgs = [TrainConfig(model="linear", epochs=2, batch_size=50, noise_multiplier=s, seed=i)
    ...         for i, s in enumerate((0.8, 1.5))]
    >>> res = train_together([TogetherRun(X, y, c, n_outputs=2) for c in cfgs])
    >>> [r.steps for r in res], res[0].epsilon > res[1].epsilon
    ([8, 8], True)
    """
    t0 = time.perf_counter()
    runs = list(runs)
    if not runs:
        return []
    for i, run in enumerate(runs):
        if not isinstance(run, TogetherRun):
            raise DPValueError(f"runs[{i}] must be a TogetherRun, got {type(run).__name__}")
        if (why := why_not_together(run.config)) is not None:
            raise DPValueError(f"runs[{i}] cannot train in a batch: {why}; train it with train()")
        if on_step is not None and not run.config.private:
            raise DPValueError(f"on_step needs private runs (runs[{i}] has private=False): it acts on the noisy "
                               "clipped sums")
    datas: list[_Data] = []
    split_of: dict[tuple, int] = {}
    members: list[_Member] = []
    key0 = None
    for i, run in enumerate(runs):
        ident = (id(run.X), id(run.y), id(run.X_test), id(run.y_test), run.n_outputs, run.config.task)
        if ident not in split_of:
            split_of[ident] = len(datas)
            datas.append(_training_data(run.X, run.y, run.config.task, run.n_outputs, run.X_test, run.y_test))
        data = datas[split_of[ident]]
        key = together_key(run, data.X.shape[1], data.n_outputs)
        if key0 is None:
            key0 = key
        elif key != key0:
            raise DPValueError(f"runs[{i}] does not share runs[0]'s network ({key} against {key0}): only runs of "
                               "one architecture, input width, output width and task, trained the same way "
                               "(private or not, one optimiser), train together")
        check_work(training_work(run.config, data.n, data.X.shape[1], data.n_outputs))
        members.append(_Member(i, run, data, split_of[ident], t0))
    _share_odometers(members)
    lanes = check_int(lanes, "lanes", minimum=1)
    if on_step is not None and lanes > 1:
        raise DPValueError(f"on_step sees every run at every step: it needs lanes=1, got lanes={lanes}")
    rows = _Rows(datas)
    guard = MemoryGuard(what="this batch of training runs")
    try:
        groups = _lane_groups(members, lanes)
        _LAST.lanes = len(groups)
        if len(groups) == 1:
            _loop(members, rows, on_epoch, on_step, int(block_floats), guard)
        else:
            _in_lanes(groups, rows, on_epoch, int(block_floats), guard)
    finally:
        guard.close()
    share = (time.perf_counter() - t0) / len(members)
    return [dataclasses.replace(m.result, seconds=share) for m in members]


def _share_odometers(members: list[_Member]) -> None:
    """Runs whose odometers would compose the same events in the same order (same sigma, sample rate, sampling, epoch
    ends, delta, accountant and budget) read one odometer: its answers are the same numbers, computed once
    instead of once per run (a sweep's seeds share their epsilon's)."""
    shared: dict[tuple, _Member] = {}
    for m in members:
        c = m.config
        key = (m.sigma, m.q, tuple(m.ends), c.sampling, c.delta, c.accountant, c.target_epsilon, c.max_epsilon)
        first = shared.setdefault(key, m)
        if first is not m:
            m.budget, m.allowed = first.budget, first.allowed


class _Rows:
    """Every split's training rows as one table (a run's rows are its split's, offset), and their squared norms."""

    def __init__(self, datas: list[_Data]) -> None:
        self.datas = datas
        self.offsets = np.cumsum([0] + [d.n for d in datas])
        self.X = torch.cat([d.X for d in datas]) if len(datas) > 1 else datas[0].X
        self.y = torch.cat([d.y for d in datas]) if len(datas) > 1 else datas[0].y
        self.x_sq = torch.cat([torch.linalg.vector_norm(d.X, dim=1).square_() for d in datas])


_LAST = threading.local()  # the lanes the last train_together of this thread used (lanes_used)


def lanes_used() -> int:
    """How many lanes this thread's last :func:`train_together` trained in (1 when its steps had too little work for
    more, or before any)."""
    return getattr(_LAST, "lanes", 1)


def _lane_groups(members: list[_Member], lanes: int) -> list[list[_Member]]:
    """``members`` shared among at most ``lanes`` lanes of about equal work (planned steps times expected batch),
    the runs that read one odometer (:func:`_share_odometers`) in one lane: its answers are computed as the first
    of them reaches each epoch's end. A lane gets at least :data:`LANE_FLOATS` input floats a step: below that a
    step is mostly Python, which one thread at a time runs (10 non-private Adult runs of 64 rows took 4.5 s in two
    lanes against 2.6 s in one)."""
    step_floats = sum(m.expected_batch * m.width for m in members)
    lanes = min(lanes, int(step_floats // LANE_FLOATS))
    if lanes <= 1:
        return [members]
    by_odometer: dict[int, list[_Member]] = {}
    for m in members:  # a run without an odometer (not private, or sigma 0) is a group of its own
        by_odometer.setdefault(id(m.budget) if m.budget.odometer is not None else id(m), []).append(m)
    groups = sorted(by_odometer.values(), key=lambda g: -sum(m.ends[-1] * m.expected_batch for m in g))
    out: list[list[_Member]] = [[] for _ in range(min(lanes, len(groups)))]
    work = [0.0] * len(out)
    for g in groups:  # the largest first, each to the lane with the least work so far
        i = work.index(min(work))
        out[i].extend(g)
        work[i] += sum(m.ends[-1] * m.expected_batch for m in g)
    return [sorted(lane, key=lambda m: m.index) for lane in out]


def _in_lanes(groups: list[list[_Member]], rows: _Rows, on_epoch, block_floats: int, guard: MemoryGuard) -> None:
    """Each group's :func:`_loop` in a thread of its own. Each lane's warnings are caught in it and issued again
    here, lane by lane; the first error stops the other lanes at their next step and is raised here."""
    lock = threading.Lock()
    stop = threading.Event()
    errors: list[BaseException] = []
    said: list[list] = [[] for _ in groups]

    def epoch(k: int, info: dict) -> None:
        with lock:
            on_epoch(k, info)

    def lane(i: int) -> None:
        with caught_warnings() as got:
            try:
                _loop(groups[i], rows, epoch if on_epoch is not None else None, None, block_floats, guard, stop)
            except BaseException as exc:  # noqa: BLE001 - raised in the calling thread below
                errors.append(exc)
                stop.set()
        said[i].extend(got)

    # each lane runs in a copy of this context: numpy's error state, secure mode and the checked delta carry over
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(lane, i), daemon=True,
                                name=f"dpcore-lane-{i}") for i in range(len(groups))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)
    except BaseException:  # e.g. Ctrl-C while waiting: the lanes stop at their next step
        stop.set()
        for t in threads:
            t.join()
        raise
    for got in said:
        for w in got:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if errors:
        raise errors[0]


def _loop(members: list[_Member], rows: _Rows, on_epoch, on_step, block_floats: int, guard: MemoryGuard,
          stop: threading.Event | None = None) -> None:
    plan = _dense_plan(members[0].model)
    task = members[0].config.task
    datas, offsets, X_all, y_all, x_sq = rows.datas, rows.offsets, rows.X, rows.y, rows.x_sq
    widths = [X_all.shape[1]] + [op[1].out_features for op in plan if op[0] == "linear"]

    members = _share_draws(members)
    going = [m for m in members if m.start_epoch() or _finish(m, None, None)]
    stack = _Stack(plan, going) if going else None
    step = 0
    while stack is not None and stack.members:
        if stop is not None and stop.is_set():
            return
        ms = stack.members
        K = len(ms)
        idxs = [next(m.batches) for m in ms]
        if stack.private:
            for k, m in enumerate(ms):
                m.noise.start(stack.flat[k])  # N(0, (sigma C / L)^2) first, the clipped sum added into it, as alone
        else:
            stack.flat.zero_()
        biggest = max(i.size for i in idxs)
        per_model = max(1, biggest) * (2 * sum(widths) + 4)
        block = max(1, min(K, block_floats // per_model))
        losses = np.zeros(K)
        for a, b in _blocks(idxs, block):
            _block_step(stack, a, b, idxs[a:b], ms[a:b], X_all, y_all, x_sq, offsets, task, losses)
        if on_step is not None:
            on_step(step, [m.index for m in ms], stack.flat * torch.tensor([m.expected_batch for m in ms],
                                                                           dtype=stack.flat.dtype).view(K, 1))
        # a non-private run skips an empty batch altogether (no update, no average), as train() does
        skip = [] if stack.private else [k for k, i in enumerate(idxs) if i.size == 0]
        _update(stack, skip)
        step += 1
        ending = []
        for k, m in enumerate(ms):
            m.loss_sum += float(losses[k])
            m.count += int(idxs[k].size)
            m.left -= 1
            if m.left == 0:
                end = m.ends[m.epoch]
                shared = m.budget.odometer is not None and m.budget.steps >= end  # a sharer spent it already
                m.epsilon = m.budget.epsilon if shared else m.budget.advance(end - m.done)
                m.done = end
                m.epoch += 1
                ending.append(k)
        if not ending:
            continue
        metrics = _evaluate_many(stack, ending, datas, task, block_floats)
        for k, (loss, metric, balanced) in zip(ending, metrics):
            m = ms[k]
            m.rows.append({"epoch": m.epoch, "step": m.done, "loss": loss,
                           ("accuracy" if task == "classification" else "mse"): metric, "epsilon": m.epsilon,
                           "train_loss": m.loss_sum / max(m.count, 1)}
                          | ({"balanced_accuracy": balanced} if task == "classification" else {}))
        guard.check()
        if on_epoch is not None:
            for k in ending:
                on_epoch(ms[k].index, {**ms[k].rows[-1], "epochs": ms[k].config.epochs})
        keep = []
        for k, m in enumerate(ms):
            if k in ending and not m.start_epoch():
                _finish(m, stack, k)
            else:
                keep.append(k)
        if len(keep) < K:
            stack.keep(keep)


def _blocks(idxs: list[np.ndarray], block: int) -> Iterator[tuple[int, int]]:
    """The step's runs in ranges of at most ``block``: twins reading one batch (one array object, :class:`_Draws`) in
    ranges of their own, so that each range gathers its rows once; the other runs packed together."""
    K, a = len(idxs), 0
    while a < K:
        b = a + 1
        twins = b < K and idxs[b] is idxs[a]
        while b < K and b - a < block and (idxs[b] is idxs[a] if twins else
                                           not (b + 1 < K and idxs[b + 1] is idxs[b])):
            b += 1
        yield a, b
        a = b


def _finish(m: _Member, stack: _Stack | None, pos: int | None) -> bool:
    """Build run ``m``'s result from its weights at ``pos`` in ``stack`` (its initial weights if None)."""
    if stack is not None:
        with torch.no_grad():
            for p, v in zip(m.model.parameters(), stack.evaluated(pos)):
                p.copy_(v)
    if m.stopped:
        m.caught.append(f"stopped after epoch {len(m.rows)} of {m.config.epochs}: one more epoch would spend more "
                        f"than max_epsilon={m.config.max_epsilon:g}")
        warnings.warn(m.caught[-1], DPCoreWarning, stacklevel=4)
    m.result = _result(m.config, m.rows, m.budget, m.done, m.stopped, m.model, m.model_kwargs, m.t0, m.caught)
    return False


def _block_step(stack: _Stack, a: int, b: int, idxs: list[np.ndarray], ms: list[_Member], X_all, y_all, x_sq,
                offsets, task: str, losses: np.ndarray) -> None:
    """One step's gradients for runs ``a:b`` of the stack: DP-SGD's clipped sums divided by the expected batch size,
    added into their noise buffers; without privacy, the gradients of the mean losses of their batches."""
    Kb = b - a
    sizes = [i.size for i in idxs]
    B = max(sizes)
    if B == 0:
        return  # every batch empty: the noise alone, as a run alone takes it
    bases = offsets[[m.split for m in ms]]
    twins = Kb > 1 and all(i is idxs[0] for i in idxs)
    if twins:  # twins (_Draws): one batch's rows, gathered once for all
        flat_rows = torch.from_numpy(idxs[0] + bases[0])
        x1, y1 = X_all.index_select(0, flat_rows), y_all.index_select(0, flat_rows)
        xb = x1.unsqueeze(0).expand(Kb, B, x1.shape[1])
        yb = y1.unsqueeze(0).expand(Kb, *y1.shape).reshape(Kb * B, *y1.shape[1:])
        x_sq_b = x_sq.index_select(0, flat_rows).unsqueeze(0).expand(Kb, B) if stack.private else None
        mask_t = None
    elif min(sizes) == B:  # batches of one size (shuffled batches): no padding, no mask
        rows = np.stack(idxs)
        rows += bases[:, None]
        mask_t = None
    else:
        rows = np.empty((Kb, B), dtype=np.int64)
        mask = np.zeros((Kb, B), dtype=bool)
        for j, (idx, base) in enumerate(zip(idxs, bases.tolist())):
            rows[j, :idx.size] = idx + base
            rows[j, idx.size:] = base  # padding: a real row of the run's own data, with clip factor 0 below
            mask[j, :idx.size] = True
        mask_t = torch.from_numpy(mask)
    if not twins:
        flat_rows = torch.from_numpy(rows.reshape(-1))
        xb = X_all.index_select(0, flat_rows).view(Kb, B, -1)
        yb = y_all.index_select(0, flat_rows)
        x_sq_b = x_sq.index_select(0, flat_rows).view(Kb, B) if stack.private else None
    layer_of = {i: n for n, i in enumerate(i for i, op in enumerate(stack.plan) if op[0] == "linear")}

    def linear(i: int, h: torch.Tensor) -> torch.Tensor:
        n = layer_of[i]
        return torch.baddbmm(stack.b[n][a:b].unsqueeze(1), h, stack.W[n][a:b].transpose(1, 2))

    def loss_grad(out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        loss, g = loss_and_output_grad(out.reshape(Kb * B, out.shape[2]), yb, task)
        return loss.view(Kb, B), g.view(Kb, B, -1)

    with torch.no_grad():
        loss, norms, records = dense_pass(stack.plan, xb, loss_grad, linear=linear,
                                          back=lambda i, g: torch.bmm(g, stack.W[layer_of[i]][a:b]),
                                          x_sq_norms=x_sq_b, norms=stack.private)
        losses[a:b] = (loss if mask_t is None else loss.masked_fill_(~mask_t, 0.0)).sum(1).double().numpy()
        overflowed = None
        if stack.private:
            # min(1, C / (||g_i|| + 1e-6)) / L per run (clip_factors), and 0 for the padding
            factors = torch.div(stack.clip_num[a:b], norms.add_(CLIP_EPS))
            factors = torch.minimum(factors, stack.clip_max[a:b])
            if mask_t is not None:
                factors.mul_(mask_t)
            # a record whose gradient overflowed (inf or nan) adds nothing, as alone (PrivateGradient): 0 * inf would
            # make its run's whole sum nan, which no noise hides
            finite = torch.isfinite(norms)
            if not bool(finite.all()):
                overflowed = ~finite
                factors.masked_fill_(overflowed, 0.0)
        elif mask_t is None:  # the mean over the run's own batch: 1 / |B_k| for each of its rows
            factors = torch.full((Kb, B), 1.0 / B, dtype=xb.dtype)
        else:  # ... and 0 for the padding
            factors = torch.tensor([1.0 / max(i.size, 1) for i in idxs], dtype=xb.dtype).view(Kb, 1) * mask_t
        for i, inp, g in records:
            layer = layer_of[i]
            if overflowed is not None:
                g = g.masked_fill(overflowed.unsqueeze(2), 0.0)
                inp = inp.masked_fill(overflowed.unsqueeze(2), 0.0)
            stack.gb[layer][a:b].add_(torch.bmm(g.transpose(1, 2), factors.unsqueeze(2)).squeeze(2))
            if g.shape[2] <= inp.shape[2]:
                stack.gW[layer][a:b].add_(torch.bmm(g.mul_(factors.unsqueeze(2)).transpose(1, 2), inp))
            else:
                stack.gW[layer][a:b].add_(torch.bmm(g.transpose(1, 2), inp * factors.unsqueeze(2)))


def _update(stack: _Stack, skip: list[int]) -> None:
    """Every run's update (:class:`~dpcore.training.optim.PlainSGD`'s or :class:`~dpcore.training.optim.PlainAdam`'s,
    with its own learning rate, momentum and weight decay), then its average. The runs at ``skip`` keep their
    weights, optimiser state and average (a non-private run's empty batch)."""
    params, grads = stack.params(), stack.grads()
    held = params + stack.state + (stack.avg or [])
    if skip:
        sel = torch.as_tensor(skip, dtype=torch.long)
        kept = [t.index_select(0, sel) for t in held]
    with torch.no_grad():
        if stack.adam:
            _adam(stack, params, grads, skip)
        else:
            for p, g, buf in zip(params, grads, stack.state or [None] * len(params)):
                shape = (-1,) + (1,) * (p.dim() - 1)
                if stack.wd is not None:
                    g = torch.addcmul(g, p, stack.wd.view(shape))
                if buf is not None:
                    g = buf.mul_(stack.mom.view(shape)).add_(g)
                p.addcmul_(g, stack.neg_lr.view(shape))
        if stack.ema_w is not None:
            for avg, p in zip(stack.avg, params):
                avg.lerp_(p, stack.ema_w.view((-1,) + (1,) * (p.dim() - 1)))
        if skip:
            for t, old in zip(held, kept):
                t.index_copy_(0, sel, old)


def _adam(stack: _Stack, params: list, grads: list, skip: list[int]) -> None:
    """:class:`~dpcore.training.optim.PlainAdam`'s step for every run, each with its own learning rate, weight decay
    and step count (the bias corrections, computed in double precision as torch computes them)."""
    ms = stack.members
    skipped = set(skip)
    for k, m in enumerate(ms):
        if k not in skipped:
            m.adam_steps += 1
    beta1, beta2 = ADAM_BETAS
    t = [float(max(m.adam_steps, 1)) for m in ms]  # a skipped run's row is computed, then put back
    dtype = params[0].dtype
    neg_step = torch.tensor([-lr / (1 - beta1**s) for lr, s in zip(stack.lr, t)], dtype=dtype)
    bc2_sqrt = torch.tensor([(1 - beta2**s) ** 0.5 for s in t], dtype=dtype)
    half = len(params)
    for p, g, m1, m2 in zip(params, grads, stack.state[:half], stack.state[half:]):
        shape = (-1,) + (1,) * (p.dim() - 1)
        if stack.wd is not None:
            g = torch.addcmul(g, p, stack.wd.view(shape))
        m1.lerp_(g, 1 - beta1)
        m2.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = (m2.sqrt() / bc2_sqrt.view(shape)).add_(ADAM_EPS)
        p.add_(torch.mul(m1, neg_step.view(shape)).div_(denom))


def _evaluate_many(stack: _Stack, positions: list[int], datas: list[_Data], task: str,
                   block_floats: int) -> list[tuple[float, float, float]]:
    """Evaluation loss, metric and balanced accuracy of the runs at ``positions`` on their evaluation rows
    (``_evaluate``'s)."""
    out: dict[int, tuple[float, float, float]] = {}
    by_split: dict[int, list[int]] = {}
    for k in positions:
        by_split.setdefault(stack.members[k].split, []).append(k)
    widest = max(w.shape[1] for w in stack.W)
    with torch.no_grad():
        for split, ks in by_split.items():
            data = datas[split]
            n_e = data.X_eval.shape[0]
            chunk = max(1, block_floats // max(1, n_e * widest * 2))
            for c in range(0, len(ks), chunk):
                part = ks[c:c + chunk]
                Ws, bs = stack.eval_tensors(part)
                logits = _forward_shared(stack.plan, Ws, bs, data.X_eval)  # (K, n_e, out)
                Kc = len(part)
                flat = logits.reshape(Kc * n_e, -1)
                y = data.y_eval.repeat(Kc, *([1] * (data.y_eval.dim() - 1)))
                loss = per_example_loss(flat, y, task).view(Kc, n_e).mean(1)
                if task == "classification":
                    target = data.y_eval if data.y_eval.dim() == 1 else data.y_eval.argmax(1)
                    shifts = [stack.members[k].shift for k in part]
                    if any(t is not None for t in shifts):  # argmax(softmax / shares), as _evaluate answers
                        zero = torch.zeros(logits.shape[2], dtype=logits.dtype)
                        logits = logits - torch.stack([zero if t is None else t.to(logits.dtype)
                                                       for t in shifts]).unsqueeze(1)
                    answers = logits.argmax(2)
                    metric = (answers == target.unsqueeze(0)).float().mean(1)
                    balanced = balanced_accuracy_of(answers, target)
                else:
                    metric = loss
                    balanced = torch.full_like(loss, float("nan"))
                for j, k in enumerate(part):
                    out[k] = (float(loss[j]), float(metric[j]), float(balanced[j]))
    return [out[k] for k in positions]


def _forward_shared(plan: list, Ws: list[torch.Tensor], bs: list[torch.Tensor], X: torch.Tensor) -> torch.Tensor:
    """Outputs ``(K, n, out)`` of K stacked networks on the same rows ``X``: the first layer as one product with
    the K weight matrices side by side, the rest as batched products."""
    K = Ws[0].shape[0]
    h = None
    li = 0
    for op in plan:
        if op[0] == "linear":
            W, b = Ws[li], bs[li]
            if h is None:
                out = W.shape[1]
                h = torch.addmm(b.reshape(-1), X, W.reshape(K * out, -1).t()).view(X.shape[0], K, out)
                h = h.transpose(0, 1)
            else:
                h = torch.baddbmm(b.unsqueeze(1), h, W.transpose(1, 2))
            li += 1
        else:
            h = op[1](h, False)
    return h


__all__ = [
    "BLOCK_FLOATS",
    "LANE_FLOATS",
    "lanes_used",
    "Captured",
    "DENSE_MODELS",
    "TogetherEpochCallback",
    "TogetherRun",
    "TogetherStepObserver",
    "capturing",
    "offer",
    "served",
    "serving",
    "together_key",
    "train_together",
    "why_not_together",
]
