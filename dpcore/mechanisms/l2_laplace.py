"""The L2 (multivariate) Laplace mechanism: noise vectors with density proportional to exp(-||b|| / scale)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import DPValueError
from ..rng import noise_generator, wants_secure
from ..validation import check_int
from .additive import secure_additive
from .base import PureEpsilonMechanism, as_float_array, finite_answer, noise_scale, pure_epsilon_event


@dataclass(frozen=True)
class L2LaplaceVector(PureEpsilonMechanism):
    """Add a vector ``b`` with density proportional to ``exp(-epsilon ||b||_2 / sensitivity)``.

    Epsilon-DP for a vector-valued query of L2 sensitivity ``sensitivity``: moving the
    true answer by at most the sensitivity changes the exponent by at most epsilon
    (triangle inequality). In polar coordinates the norm ``||b||`` is
    Gamma(shape=d, scale=sensitivity / epsilon) and the direction is uniform on the
    sphere, which is how it is drawn. This is the noise of Chaudhuri et al.'s output
    perturbation (Algorithm 1, L2 sensitivity ``2 / (n Lambda)``, Corollary 8) and of
    their objective perturbation (Algorithm 2: density ``exp(-(eps'/2) ||b||)``, i.e.
    ``epsilon = eps'`` and ``sensitivity = 2``, the bound on the change of the loss
    gradient term; there the privacy of the whole algorithm, Theorem 9, also
    depends on the regulariser). In one dimension it is the Laplace mechanism.

    ``randomise`` treats the last axis of ``values`` as the vector; every other axis
    indexes independent vectors (a scalar is a vector of length 1).

    Parameters
    ----------
    epsilon : float
    sensitivity : float
        L2 sensitivity of the query.

    References
    ----------
    Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk minimization.
    JMLR 12:1069-1109, 2011 (Algorithms 1 and 2, eq. 4).
    Dwork, McSherry, Nissim, Smith. Calibrating noise to sensitivity. TCC 2006.

    Examples
    --------
    >>> m = L2LaplaceVector(epsilon=2.0, sensitivity=0.5)
    >>> m.scale, m.randomise([1.0, 2.0, 3.0], rng=0).shape
    (0.25, (3,))
    """

    name = "l2_laplace_vector"

    @property
    def scale(self) -> float:
        """Scale of the Gamma-distributed norm: sensitivity / epsilon (rounded up, :func:`noise_scale`)."""
        return noise_scale(self.sensitivity, self.epsilon)

    def variance(self, dim: int = 1) -> float:
        """Variance of one coordinate of a ``dim``-dimensional noise vector: ``(dim + 1) scale^2``.

        ``E||b||^2 = dim (dim + 1) scale^2`` (Gamma moments) shared equally by the coordinates;
        ``dim = 1`` gives the Laplace variance ``2 scale^2``.
        """
        dim = check_int(dim, "dim", minimum=1)
        return (dim + 1) * self.scale**2

    def noise(self, shape, *, rng=None) -> np.ndarray:
        """Noise vectors of the given shape (the last axis is the vector)."""
        gen = noise_generator(rng)  # secure mode: the operating system's source
        shape = tuple(shape)
        if not shape:
            raise DPValueError("noise vectors need a shape with at least one axis (the last is the vector)")
        if 0 in shape:
            return np.zeros(shape)
        direction = gen.standard_normal(shape)
        direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
        radius = gen.gamma(shape=shape[-1], scale=self.scale, size=shape[:-1])
        return np.asarray(radius)[..., None] * direction

    def randomise(self, values, *, rng=None):
        """``values`` plus noise; ``rng="secure"`` (or secure mode) gives secure noise on a grid, each vector's
        coordinates counted for the rounding cost (:func:`secure_additive`)."""
        arr, scalar = as_float_array(values)
        if wants_secure(rng):
            shape = arr.shape or (1,)
            mech = self
            return secure_additive(values, norm=2, coordinates=shape[-1], sensitivity=self.sensitivity,
                                   scale=self.scale, draw=lambda src, b, s: _scaled(mech, b).noise(s, rng=src))
        out = finite_answer(arr) + self.noise(arr.shape or (1,), rng=rng).reshape(arr.shape)
        return float(out) if scalar else out

    @property
    def dp_event(self):
        """Binary randomized response at the same epsilon (replace-one; see :func:`pure_epsilon_event`)."""
        return pure_epsilon_event(self.epsilon)


def _scaled(mech: L2LaplaceVector, scale: float) -> L2LaplaceVector:
    """The same mechanism with its norm's scale set to ``scale`` (the secure grid's widened scale)."""
    return L2LaplaceVector(epsilon=mech.epsilon, sensitivity=scale * mech.epsilon)
