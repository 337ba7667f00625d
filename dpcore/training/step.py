"""One DP-SGD gradient: clip every example, sum, add Gaussian noise, divide by the expected batch size.

:class:`PrivateGradient` is the privacy-relevant core of Abadi et al.'s Algorithm 1
for one lot: ``p.grad = (sum_i clip_C(g_i) + N(0, sigma^2 C^2 I)) / L``. Two
optional hooks make it auditable without touching the loop that drives it:

* ``extra`` (:class:`ExtraGradients`): m extra records whose *clipped* gradient
  is a fixed vector, added to the sum whenever the sampler picks them, as for
  white-box gradient canaries (Nasr et al. 2021; Steinke, Nasr & Jagielski 2023);
* ``on_step(step_index, noisy_sum)``: an observer that receives each step's
  noisy summed gradient (before the division by L), as such an auditor reads it.

References
----------
Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep learning with differential
privacy. CCS 2016 (Algorithm 1).
Nasr, Song, Thakurta, Papernot, Carlini. Adversary instantiation: lower bounds for
differentially private machine learning. IEEE S&P 2021 (gradient canaries).
Steinke, Nasr, Jagielski. Privacy auditing with one (1) training run. NeurIPS 2023.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from ..exceptions import DPTypeError, DPValueError
from ..mechanisms.gaussian_sum import GaussianSum
from ..validation import check_nonnegative, check_positive
from .clipping import Clipper, clip_factors

#: ``on_step(step_index, noisy_sum)``: ``noisy_sum`` is a fresh flat tensor over the trainable
#: parameters in ``model.parameters()`` order, ``sum_i clip_C(g_i) + extras + N(0, sigma^2 C^2 I)``.
StepObserver = Callable[[int, torch.Tensor], None]


@dataclass(frozen=True, eq=False)
class ExtraGradients:
    """The fixed clipped gradients of m extra records, added to a step's sum when they are sampled.

    Parameters
    ----------
    gradients : Tensor of shape (m, P)
        Row j is record j's clipped gradient, flattened over the trainable
        parameters in ``model.parameters()`` order. Dense, or sparse COO (a
        Dirac canary is a single non-zero: see :meth:`diracs`). Every row must
        have L2 norm at most the run's clip norm (checked by
        :class:`PrivateGradient`), or the extra records would break the privacy
        argument instead of testing it.

    Examples
    --------
    >>> e = ExtraGradients.diracs([0, 3], value=1.0, size=5)
    >>> flat = torch.zeros(5)
    >>> e.add_to(flat, [1], alpha=2.0)
    >>> flat
    tensor([0., 0., 0., 2., 0.])
    """

    gradients: torch.Tensor

    def __post_init__(self) -> None:
        g = self.gradients
        if not isinstance(g, torch.Tensor):
            raise DPTypeError(f"gradients must be a torch.Tensor of shape (m, P), got {type(g).__name__}")
        if g.dim() != 2 or not g.dtype.is_floating_point:
            raise DPValueError(f"gradients must be a 2-D float tensor (m records x P parameters), got "
                               f"{g.dim()}-D {g.dtype}")
        g = g.coalesce() if g.is_sparse else g.contiguous()
        if not bool(torch.isfinite(g.values() if g.is_sparse else g).all()):
            raise DPValueError("gradients must be finite (no NaN or inf)")
        object.__setattr__(self, "gradients", g)

    @classmethod
    def diracs(cls, coordinates: Sequence[int], *, value: float | Sequence[float], size: int) -> "ExtraGradients":
        """m gradients ``value_j * e_{coordinates[j]}`` in a parameter vector of ``size`` entries (sparse)."""
        cols = torch.as_tensor(np.asarray(coordinates, dtype=np.int64)).reshape(-1)
        if cols.numel() and (int(cols.min()) < 0 or int(cols.max()) >= size):
            raise DPValueError(f"coordinates must be in [0, {size}), got {cols.min().item()}..{cols.max().item()}")
        vals = torch.broadcast_to(torch.as_tensor(value, dtype=torch.float32), cols.shape).clone()
        rows = torch.arange(cols.numel())
        return cls(torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (cols.numel(), int(size)),
                                           check_invariants=True))

    @property
    def count(self) -> int:
        """m, the number of extra records."""
        return int(self.gradients.shape[0])

    def norms(self) -> torch.Tensor:
        """L2 norm of every row, shape (m,)."""
        g = self.gradients
        if g.is_sparse:
            sq = torch.zeros(g.shape[0], dtype=g.dtype, device=g.device).index_add_(0, g.indices()[0],
                                                                                    g.values().square())
            return sq.sqrt()
        return torch.linalg.vector_norm(g, dim=1)

    def add_to(self, flat: torch.Tensor, index, *, alpha: float = 1.0) -> None:
        """``flat += alpha * sum_{j in index} gradients[j]`` in place (``index``: distinct rows).

        The canaries' mask is built on the device of their gradients, and their sum is added on ``flat``'s (the
        model's), so an audit runs wherever the model lives."""
        g = self.gradients
        member = torch.zeros(self.count, dtype=torch.bool, device=g.device)
        member[torch.as_tensor(np.asarray(index, dtype=np.int64), device=g.device)] = True
        if g.is_sparse:
            rows, cols = g.indices()
            keep = member[rows]
            flat.index_add_(0, cols[keep].to(flat.device), g.values()[keep].to(flat.device, flat.dtype), alpha=alpha)
        else:
            flat.add_(g[member].sum(0).to(flat.device, flat.dtype), alpha=alpha)


class PrivateGradient:
    """Fill ``p.grad`` with one DP-SGD gradient per call (Abadi et al. 2016, Algorithm 1, one lot).

    ``p.grad = (sum_i clip_C(g_i) + sum_{j in S} e_j + N(0, sigma^2 C^2 I)) / L``:
    the noise, drawn once for all parameters into one flat buffer; per-example
    norms from the clipper; clip factors ``min(1, C / (||g_i|| + 1e-6))`` with
    the ``1/L`` folded in (:func:`~dpcore.training.clipping.clip_factors`); the
    clipped sum added in place by the clipper; then the sampled extra records'
    fixed gradients ``e_j``, if any. ``L`` is the *expected* batch size (the
    realised one would leak). An empty batch gives pure noise: the mechanism
    still runs, as the accountant assumes. Every ``p.grad`` is a view into the
    buffer, which is reused by the next call.

    Parameters
    ----------
    model : nn.Module
    clipper : Clipper
        Attached to ``model`` (:func:`~dpcore.training.ghost.make_clipper`).
    task : {"classification", "regression"}
    clip_norm : float
        C.
    noise_multiplier : float
        sigma (0 adds no noise and gives no privacy).
    expected_batch_size : float
        L = q n.
    generator : torch.Generator
        Source of the noise.
    extra : ExtraGradients, optional
        Fixed clipped gradients of extra records (e.g. audit canaries).
    on_step : callable, optional
        ``on_step(step_index, noisy_sum)`` after every call (see :data:`StepObserver`).
        When None, nothing is copied.

    Examples
    --------
    >>> from dpcore.rng import torch_generator
    >>> from dpcore.training.ghost import make_clipper
    >>> model = nn.Sequential(nn.Linear(3, 2))
    >>> seen = []
    >>> step = PrivateGradient(model, make_clipper(model), task="classification", clip_norm=1.0,
    ...                        noise_multiplier=1.0, expected_batch_size=4.0,
    ...                        generator=torch_generator(0),
    ...                        on_step=lambda i, s: seen.append((i, s.shape)))
    >>> loss = step(torch.randn(4, 3), torch.tensor([0, 1, 1, 0]))
    >>> seen, model[0].weight.grad.shape
    ([(0, torch.Size([8]))], torch.Size([2, 3]))
    """

    def __init__(self, model: nn.Module, clipper: Clipper, *, task: str, clip_norm: float, noise_multiplier: float,
                 expected_batch_size: float, generator: torch.Generator, extra: ExtraGradients | None = None,
                 on_step: StepObserver | None = None) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.clipper, self.task, self.generator, self.on_step = clipper, task, generator, on_step
        self.clip_norm = check_positive(clip_norm, "clip_norm")
        self.expected_batch_size = check_positive(expected_batch_size, "expected_batch_size")
        self._inv = 1.0 / self.expected_batch_size
        self.noise_multiplier = check_nonnegative(noise_multiplier, "noise_multiplier")
        p0 = self.params[0]
        self._flat = torch.empty(sum(p.numel() for p in self.params), dtype=p0.dtype, device=p0.device)
        #: the noise: seeded from ``generator``, or secure (:func:`dpcore.rng.secure_noise` around the run: the sum
        #: released on a grid with noise from the operating system's source, drawn in blocks)
        #: (its seeded std on the sum held divided by L is (σ C) / L, in the order train() has always computed it)
        self.noise = GaussianSum(std=self.noise_multiplier * self.clip_norm, sensitivity=self.clip_norm,
                                 generator=generator, size=self._flat.numel(), held_scale=self._inv)
        self.secure = self.noise.secure
        self._grads = [g.view_as(p) for g, p in zip(self._flat.split([p.numel() for p in self.params]), self.params)]
        self.extra = _checked_extra(extra, size=self._flat.numel(), clip_norm=self.clip_norm)
        self.steps = 0

    def __call__(self, x: torch.Tensor, y: torch.Tensor, *, x_sq_norms: torch.Tensor | None = None,
                 extra_index=None) -> float:
        """One noisy clipped gradient for the batch ``(x, y)`` plus the extra records ``extra_index``.

        ``x_sq_norms``: the squared L2 norms of the rows of ``x`` if the caller
        has them (``train()`` computes them once per run), passed to the clipper.
        Returns the batch's summed loss (a non-private diagnostic).
        """
        flat = self._flat
        self.noise.start(flat)  # seeded: N(0, (σC/L)²) drawn first, the clipped sum added into it
        loss_sum = 0.0
        if x.shape[0] > 0:
            losses, norms = self.clipper.loss_and_norms(x, y, task=self.task, x_sq_norms=x_sq_norms)
            loss_sum = float(losses.sum())
            while x.shape[0] > 0 and not bool(torch.isfinite(norms).all()):
                # a record whose gradient overflowed (inf or nan) would make the whole clipped sum nan (its factor
                # C / (inf + 1e-6) is 0, and 0 * inf is nan), which no noise hides: it adds nothing instead, as a zero
                # gradient would (a function of that record alone, within the clip norm), and the sum is taken again
                # over the others (each record's gradient is its own, so theirs are unchanged)
                keep = torch.isfinite(norms)
                x, y = x[keep], y[keep]
                x_sq_norms = None if x_sq_norms is None else x_sq_norms[keep]
                if x.shape[0] > 0:
                    _, norms = self.clipper.loss_and_norms(x, y, task=self.task, x_sq_norms=x_sq_norms)
            if x.shape[0] > 0:
                self.clipper.accumulate_clipped_sum(clip_factors(norms, self.clip_norm, scale=self._inv), self._grads)
        if extra_index is not None and len(extra_index):
            if self.extra is None:
                raise DPValueError("extra_index given but this step has no extra gradients")
            self.extra.add_to(flat, extra_index, alpha=self._inv)
        self.noise.finish(flat)  # secure: the sum released on its grid now
        if self.on_step is not None:
            self.on_step(self.steps, flat * self.expected_batch_size)
        self.steps += 1
        for p, g in zip(self.params, self._grads):
            p.grad = g
        return loss_sum


def _checked_extra(extra: ExtraGradients | None, *, size: int, clip_norm: float) -> ExtraGradients | None:
    if extra is None:
        return None
    if not isinstance(extra, ExtraGradients):
        raise DPTypeError(f"extra must be an ExtraGradients, got {type(extra).__name__}")
    if extra.gradients.shape[1] != size:
        raise DPValueError(f"extra gradients have {extra.gradients.shape[1]} entries per record but the model has "
                           f"{size} trainable parameters; flatten them in model.parameters() order")
    norms = extra.norms()
    if norms.numel() and float(norms.max()) > clip_norm * (1 + 1e-6):
        j = int(norms.argmax())
        raise DPValueError(f"extra gradient {j} has L2 norm {float(norms[j]):.6g} > clip_norm={clip_norm:g}: "
                           "an extra record's clipped gradient must have norm at most C")
    return extra


def private_gradient(
    model: nn.Module,
    clipper: Clipper,
    xb: torch.Tensor,
    yb: torch.Tensor,
    *,
    task: str,
    clip_norm: float,
    noise_std: float,
    expected_batch_size: float,
    generator: torch.Generator,
) -> float:
    """One call of a fresh :class:`PrivateGradient` with noise ``N(0, noise_std^2)`` on the sum.

    ``noise_std`` is ``sigma * clip_norm``. Returns the batch's summed loss.
    """
    step = PrivateGradient(model, clipper, task=task, clip_norm=clip_norm,
                           noise_multiplier=check_nonnegative(noise_std, "noise_std") / check_positive(
                               clip_norm, "clip_norm"),
                           expected_batch_size=expected_batch_size, generator=generator)
    return step(xb, yb)
