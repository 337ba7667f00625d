"""Label noise views (A. L. Hansen 2023; Ghazi et al. 2021): the images stay, their labels get noise.

Privacy unit: **one example's label**. The images are treated as public; two
neighbouring training sets differ in the label of one example (replace-one).

* Laplace on the one-hot label: two one-hot vectors differ by 2 in L1, so each of
  the ``k`` coordinates gets ``Lap(2 / epsilon)``. The noisy vector is decoded by
  argmax, or as A. L. Hansen (2023) does by clamping to [0, 1] and rounding (which may give
  no class or several: an invalid label).
* k-ary randomized response (:class:`dpcore.mechanisms.RandomizedResponse`): keep
  the true label with probability ``e^eps / (e^eps + k - 1)``, else one of the others.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..exceptions import DPValueError
from ..mechanisms import Laplace, RandomizedResponse
from ..rng import as_generator
from ..types import ArrayLike, RngLike
from ..validation import check_epsilon, check_int

__all__ = [
    "ONE_HOT_SENSITIVITY",
    "laplace_one_hot",
    "decode_argmax",
    "decode_clamp_round",
    "randomized_response_labels",
    "label_noise_view",
    "laplace_label_probabilities",
]

#: L1 distance between two different one-hot vectors
ONE_HOT_SENSITIVITY = 2.0


def _labels(labels, k: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1 or y.size == 0:
        raise DPValueError(f"labels must be a non-empty 1-d array, got shape {y.shape}")
    if not np.all(np.equal(np.mod(y, 1), 0)) or y.min() < 0 or y.max() >= k:
        raise DPValueError(f"labels must be integers in [0, {k}), got values from {y.min()} to {y.max()}")
    return y.astype(np.int64)


def laplace_one_hot(labels: ArrayLike, *, k: int, epsilon: float, rng: RngLike = None) -> np.ndarray:
    """One-hot encode ``labels`` and add ``Lap(2 / epsilon)`` to every coordinate: shape ``(n, k)``.

    References
    ----------
    Dwork, McSherry, Nissim, Smith (TCC 2006); A. L. Hansen (2023, label DP on MNIST);
    Ghazi, Golowich, Kumar, Manurangsi, Zhang. Deep learning with label differential privacy. NeurIPS 2021.
    """
    k = check_int(k, "k", minimum=2)
    epsilon = check_epsilon(epsilon)
    y = _labels(labels, k)
    onehot = np.eye(k)[y]
    return Laplace(epsilon=epsilon, sensitivity=ONE_HOT_SENSITIVITY).randomise(onehot, rng=as_generator(rng))


def decode_argmax(noisy: np.ndarray) -> np.ndarray:
    """The class with the largest noisy coordinate (post-processing, free)."""
    return np.argmax(np.asarray(noisy, dtype=float), axis=1)


def decode_clamp_round(noisy: np.ndarray) -> np.ndarray:
    """A. L. Hansen's (2023) decoding: clamp each coordinate to [0, 1] and round; rows may have 0 or several ones."""
    return np.rint(np.clip(np.asarray(noisy, dtype=float), 0.0, 1.0)).astype(np.int64)


def randomized_response_labels(labels: ArrayLike, *, k: int, epsilon: float, rng: RngLike = None) -> np.ndarray:
    """k-ary randomized response on every label (replace-one, epsilon-DP per label)."""
    k = check_int(k, "k", minimum=2)
    y = _labels(labels, k)
    return np.asarray(RandomizedResponse(epsilon=epsilon, k=k).randomise(y, rng=as_generator(rng)), dtype=np.int64)


def label_noise_view(labels: ArrayLike, target_names: Sequence[str] | None, *, epsilon: float,
                     seed: int = 0) -> pd.DataFrame:
    """One row per image: the true label and what each label mechanism releases.

    Columns: ``true``, ``laplace_argmax``, ``laplace_clamp_round`` (the set of classes
    whose rounded coordinate is 1, e.g. ``"{3}"``, ``"{}"``, ``"{1, 7}"``), ``laplace_valid``
    (exactly one class survived clamp+round), ``randomized_response`` — names, not indices.
    """
    names = list(target_names)
    k = len(names)
    gen = as_generator(seed)
    noisy = laplace_one_hot(labels, k=k, epsilon=epsilon, rng=gen)
    arg = decode_argmax(noisy)
    cr = decode_clamp_round(noisy)
    rr = randomized_response_labels(labels, k=k, epsilon=epsilon, rng=gen)
    y = _labels(labels, k)
    return pd.DataFrame(
        {
            "true": [names[i] for i in y],
            "laplace_argmax": [names[i] for i in arg],
            "laplace_clamp_round": ["{" + ", ".join(names[j] for j in np.flatnonzero(row)) + "}" for row in cr],
            "laplace_valid": cr.sum(axis=1) == 1,
            "randomized_response": [names[i] for i in rr],
        }
    )


def laplace_label_probabilities(*, k: int, epsilon: float) -> dict[str, float]:
    """Exact probabilities of the two decodings of a Laplace-noised one-hot label.

    Each of the ``k`` coordinates gets independent ``X_j ~ Lap(b)``, ``b = 2 / epsilon``.

    * ``"argmax_correct"``: ``P(1 + X_0 > max_{j>0} X_j) = \\int f(x) F(1 + x)^{k-1} dx``
      (``f``, ``F`` the Laplace density and CDF), by numerical integration.
    * ``"clamp_round_valid"``: clamp+round leaves exactly one 1. The true coordinate
      rounds to 1 with ``p1 = P(X >= -1/2)``, another one to 0 with ``p0 = P(X < 1/2)``:
      ``p1 p0^(k-1) + (1 - p1)(k - 1)(1 - p0) p0^(k-2)``.
    * ``"clamp_round_correct"``: exactly the true class survives, ``p1 p0^(k-1)``.

    What the page shows next to a handful of noisy labels, which cannot estimate these.

    References
    ----------
    Dwork, McSherry, Nissim, Smith (TCC 2006); Ghazi et al., Deep learning with label
    differential privacy, NeurIPS 2021.

    Examples
    --------
    >>> p = laplace_label_probabilities(k=2, epsilon=1e6)
    >>> round(p["argmax_correct"], 6), round(p["clamp_round_valid"], 6)
    (1.0, 1.0)
    """
    from scipy import integrate, stats

    k = check_int(k, "k", minimum=2)
    epsilon = check_epsilon(epsilon)
    b = ONE_HOT_SENSITIVITY / epsilon
    lap = stats.laplace(scale=b)
    integrand = lambda x: lap.pdf(x) * lap.cdf(1.0 + x) ** (k - 1)  # noqa: E731
    # the density has a kink at 0 and the CDF one at -1: split there, integrate out to 60 scales
    pts = sorted({-60.0 * b, -1.0, 0.0, 60.0 * b})
    argmax = sum(integrate.quad(integrand, a, c, limit=200)[0] for a, c in zip(pts[:-1], pts[1:]) if c > a)
    p1, p0 = float(lap.sf(-0.5)), float(lap.cdf(0.5))
    valid = p1 * p0 ** (k - 1) + (1.0 - p1) * (k - 1) * (1.0 - p0) * p0 ** (k - 2)
    return {"argmax_correct": float(min(1.0, argmax)), "clamp_round_valid": float(valid),
            "clamp_round_correct": float(p1 * p0 ** (k - 1))}
