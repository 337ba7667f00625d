"""The one Gaussian for sums of clipped vectors (DP-SGD's gradients, DP-FedAvg's updates): seeded or secure, torch
or numpy.

Opacus draws every DP noise tensor in one function (``_generate_noise(std, reference, generator, secure_mode)`` in
its optimizer); here :func:`gaussian_like` is that seeded draw and :class:`GaussianSum` the release built on it. A
``GaussianSum`` decides once, when it is built, whether it is secure (secure mode on, :func:`dpcore.rng.secure_noise`):
then every release lands on a grid with noise from the operating system's source
(:func:`~dpcore.mechanisms.additive.secure_additive`, Mironov 2012's snapping idea); otherwise the noise comes from
the seeded generator, a ``torch.Generator`` on the values' device for tensors or a numpy generator for arrays. So
the secure-mode branch is written here, and DP-SGD, DP-FedAvg (central and local) call the same code.

References
----------
Abadi et al. Deep learning with differential privacy. CCS 2016 (Algorithm 1: N(0, σ²C²) on the clipped sum).
McMahan, Ramage, Talwar, Zhang. Learning differentially private recurrent language models. ICLR 2018 (DP-FedAvg).
Mironov. On significance of the least significant bits for differential privacy. CCS 2012.
"""
from __future__ import annotations

import numpy as np
import torch

from ..exceptions import DPTypeError, DPValueError
from ..rng import as_generator, secure_active
from ..validation import check_nonnegative, check_positive
from .additive import SecureGaussianStream, gaussian_noise, secure_additive


def gaussian_like(reference, std: float, *, generator: "torch.Generator | None" = None, rng=None, out=None):
    """Seeded N(0, std²) noise shaped like ``reference``: the one place a seeded Gaussian vector is drawn.

    A torch ``reference`` gives a tensor of its dtype on its device, drawn from ``generator`` (a
    ``torch.Generator`` of that device, :func:`dpcore.rng.torch_generator`), written into ``out`` in place if given
    (DP-SGD draws the noise into the buffer the clipped sum is then added to). A numpy ``reference`` gives an array
    from ``rng``. Secure mode refuses: a seeded draw there would make the noise reproducible.

    >>> import torch
    >>> from dpcore.rng import torch_generator
    >>> a = gaussian_like(torch.zeros(3), 1.0, generator=torch_generator(0))
    >>> bool(torch.equal(a, torch.empty(3).normal_(0.0, 1.0, generator=torch_generator(0))))
    True
    """
    if secure_active():
        raise DPValueError("a seeded Gaussian draw was asked for in secure mode: release through GaussianSum, "
                           "which takes its noise from the operating system's source there")
    if isinstance(reference, torch.Tensor):
        if not isinstance(generator, torch.Generator):
            raise DPTypeError(f"generator must be a torch.Generator for torch values, got {type(generator).__name__}")
        if torch.device(generator.device).type != reference.device.type:
            raise DPValueError(f"the generator is on {generator.device} but the values are on {reference.device}: "
                               "build it with dpcore.rng.torch_generator(seed, device=values.device)")
        target = torch.empty_like(reference) if out is None else out
        return target.normal_(0.0, std, generator=generator)
    arr = np.asarray(reference, dtype=float)
    return as_generator(rng).normal(0.0, std, size=arr.shape)


class GaussianSum:
    """Release sums ``values + N(0, std²)`` on every coordinate, each vector along the last axis one release of L2
    ``sensitivity``: seeded, or secure if secure mode is on when it is built.

    Parameters
    ----------
    std : float
        Noise standard deviation on the sum (σ · C), >= 0; 0 releases the sum as it is (no privacy).
    sensitivity : float
        L2 sensitivity of one vector (C): sets the secure grid.
    generator : torch.Generator, optional
        Source of seeded noise for torch values (on their device).
    rng : int, numpy Generator or None
        Source of seeded noise for numpy values.
    size : int, optional
        Secure mode only: every release is a vector of this many values, and the noise is drawn in blocks
        (:class:`~dpcore.mechanisms.additive.SecureGaussianStream`), as DP-SGD's step after step.
    held_scale : float
        :meth:`start` and :meth:`finish` act on a buffer holding the sum times ``held_scale`` (DP-SGD holds it
        divided by the expected batch size L): the seeded noise there has std ``std · held_scale``.

    Examples
    --------
    >>> import torch
    >>> from dpcore.rng import torch_generator
    >>> out = GaussianSum(std=1.0, sensitivity=1.0, generator=torch_generator(0)).release(torch.zeros(3))
    >>> bool(torch.equal(out, gaussian_like(torch.zeros(3), 1.0, generator=torch_generator(0))))
    True
    """

    def __init__(self, *, std: float, sensitivity: float, generator: "torch.Generator | None" = None, rng=None,
                 size: int | None = None, held_scale: float = 1.0) -> None:
        self.std = check_nonnegative(std, "std")
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.held_scale = check_positive(held_scale, "held_scale")
        self.generator, self.rng = generator, rng
        #: decided once: secure mode around the run releases every sum on a grid from the operating system
        self.secure = secure_active()
        self._stream = SecureGaussianStream(sigma=self.std, sensitivity=self.sensitivity, size=int(size)) \
            if self.secure and self.std > 0 and size is not None else None

    def release(self, values):
        """``values + N(0, std²)`` (a tensor keeps its dtype and device; an array comes back as float64)."""
        if self.std == 0:
            return values
        if not self.secure:
            return values + gaussian_like(values, self.std, generator=self.generator, rng=self.rng)
        if self._stream is not None:
            out = self._stream.release(values)
        else:
            coordinates = values.shape[-1] if np.ndim(values) else 1
            out = secure_additive(values, norm=2, scale=self.std, sensitivity=self.sensitivity,
                                  coordinates=coordinates, draw=gaussian_noise)
        return out.to(device=values.device, dtype=values.dtype) if isinstance(values, torch.Tensor) else out

    def start(self, buffer: torch.Tensor) -> None:
        """Begin a release in ``buffer`` (before the clipped sum is added into it): seeded, the noise of std
        ``std · held_scale`` is drawn into it (the order DP-SGD has always used, so a seed gives the same numbers);
        secure, it is zeroed and :meth:`finish` releases the sum."""
        if self.std > 0 and not self.secure:
            gaussian_like(buffer, self.std * self.held_scale, generator=self.generator, out=buffer)
        else:
            buffer.zero_()

    def finish(self, buffer: torch.Tensor) -> None:
        """End a release begun by :meth:`start`: secure, ``buffer`` (the sum times ``held_scale``) is replaced by its
        release on the grid, times ``held_scale``; seeded, the noise is already in it."""
        if self.secure and self.std > 0:
            total = buffer.detach().to(torch.float64).div_(self.held_scale)
            buffer.copy_(self.release(total).mul_(self.held_scale))
