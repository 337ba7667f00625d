"""Membership-inference score functions: loss threshold and LiRA (online and offline).

Every function returns one score per example, higher meaning "member"; feed them to
:func:`dpcore.audit.roc.roc_curve` or :mod:`dpcore.audit.bounds`. They only need
per-example predicted probabilities, logits, losses or regression predictions, so any
model can be attacked.

LiRA (Carlini et al. 2022, Algorithm 1) works on the logit-scaled confidence

    phi = log(p_y / (1 - p_y)) = log p_y - log sum_{y' != y} p_y',

which is close to Gaussian over the randomness of training. Shadow models trained with
(IN) and without (OUT) an example give Gaussian fits N(mu_in, s_in^2), N(mu_out, s_out^2)
of its phi, and the target model's phi is scored by

    online:  log N(phi; mu_in, s_in^2) - log N(phi; mu_out, s_out^2)   (a log-likelihood ratio)
    offline: -log P[Z > phi], Z ~ N(mu_out, s_out^2)                   (one-sided, OUT only)

With few shadows the paper fits one global variance for all examples ("fixed variance");
here that is the pooled within-example variance of the IN (resp. OUT) confidences.

References
----------
Yeom, Giacomelli, Fredrikson, Jha. Privacy risk in machine learning: analyzing the
connection to overfitting. IEEE CSF 2018 (the loss-threshold attack).
Carlini, Chien, Nasr, Song, Terzis, Tramèr. Membership inference attacks from first
principles. IEEE S&P 2022 (LiRA, Algorithm 1, with its logit scaling, fixed-variance
and offline variants; the paper reports TPR at low FPR).
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

from ..exceptions import DPTypeError, DPValueError
from ..types import ArrayLike
from ..validation import check_array, check_positive

__all__ = [
    "loss_threshold_scores",
    "logit_confidence",
    "logit_confidence_from_logits",
    "negative_squared_error",
    "lira_online_scores",
    "lira_offline_scores",
]

#: Default floor on probabilities before taking logs: |phi| <= log(1 / 1e-15) ~ 34.5.
PROBABILITY_FLOOR = 1e-15
# A Gaussian fit with zero spread (identical shadow confidences) gets this standard deviation.
_STD_FLOOR = 1e-8


def loss_threshold_scores(losses: ArrayLike) -> np.ndarray:
    """Score = -loss: members tend to have lower loss.

    References
    ----------
    Yeom et al. Privacy risk in machine learning: analyzing the connection to overfitting. IEEE CSF 2018.

    Examples
    --------
    >>> loss_threshold_scores([0.1, 2.0]).tolist()
    [-0.1, -2.0]
    """
    return -check_array(losses, "losses")


def _check_labels(labels, n_examples: int, n_classes: int) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.size != n_examples:
        raise DPValueError(f"labels must have one entry per example ({n_examples}), got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.issubdtype(arr.dtype, np.number) or not np.all(np.mod(arr, 1) == 0):
            raise DPTypeError(f"labels must be integer class indices, got dtype {arr.dtype}")
        arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n_classes):
        raise DPValueError(
            f"labels must lie in [0, {n_classes}) (one per column of the probabilities), got {arr.min()}..{arr.max()}"
        )
    return arr


def logit_confidence(probabilities: ArrayLike, labels: ArrayLike = None, *,
                     floor: float = PROBABILITY_FLOOR) -> np.ndarray:
    """phi = log p_y - log(1 - p_y), the logit-scaled confidence of Carlini et al. (2022).

    Parameters
    ----------
    probabilities : array_like
        Either probabilities of the true label, any shape (then ``labels`` is None), or
        class probabilities of shape ``(..., n_examples, n_classes)`` with ``labels``.
        Class vectors are more accurate: ``1 - p_y`` is summed from the other classes,
        so a confidence of 1 - 1e-17 is not rounded to 1.
    labels : array_like of int, optional
        True class of each example.
    floor : float
        ``p_y`` and ``1 - p_y`` are clipped below at ``floor`` so phi stays finite.

    References
    ----------
    Carlini et al. Membership inference attacks from first principles (logit scaling). IEEE S&P 2022.

    Examples
    --------
    >>> np.round(logit_confidence([0.5, 0.9]), 4).tolist()
    [0.0, 2.1972]
    >>> np.round(logit_confidence([[0.7, 0.2, 0.1]], [0]), 4).tolist()
    [0.8473]
    """
    floor = check_positive(floor, "floor")
    probs = check_array(probabilities, "probabilities")
    if np.any(probs < 0) or np.any(probs > 1 + 1e-6):
        raise DPValueError("probabilities must lie in [0, 1]; pass logits to logit_confidence_from_logits instead")
    if labels is None:
        p_true, rest = probs, 1.0 - probs
    else:
        if probs.ndim < 2:
            raise DPValueError(
                f"with labels, probabilities must be (..., n_examples, n_classes), got shape {probs.shape}"
            )
        y = _check_labels(labels, probs.shape[-2], probs.shape[-1])
        onehot = np.arange(probs.shape[-1]) == y[:, None]
        p_true = np.sum(np.where(onehot, probs, 0.0), axis=-1)
        rest = np.sum(np.where(onehot, 0.0, probs), axis=-1)
    return np.log(np.maximum(p_true, floor)) - np.log(np.maximum(rest, floor))


def logit_confidence_from_logits(logits: ArrayLike, labels: ArrayLike) -> np.ndarray:
    """phi = z_y - logsumexp_{y' != y} z_y' from raw logits: exact, never clipped.

    Equal to :func:`logit_confidence` of ``softmax(logits)``, without the rounding of
    probabilities near 1.

    >>> round(float(logit_confidence_from_logits([[2.0, 0.0]], [0])[0]), 6)
    2.0
    """
    z = check_array(logits, "logits")
    if z.ndim < 2 or z.shape[-1] < 2:
        raise DPValueError(f"logits must be (..., n_examples, n_classes) with at least 2 classes, got shape {z.shape}")
    y = _check_labels(labels, z.shape[-2], z.shape[-1])
    onehot = np.arange(z.shape[-1]) == y[:, None]
    z_true = np.sum(np.where(onehot, z, 0.0), axis=-1)
    z_rest = special.logsumexp(np.where(onehot, -np.inf, z), axis=-1)
    return z_true - z_rest


def negative_squared_error(predictions: ArrayLike, targets: ArrayLike) -> np.ndarray:
    """Score for regression: -(prediction - target)^2 (the loss-threshold attack's analogue).

    Also usable as LiRA's per-example statistic for a regression model.

    >>> negative_squared_error([1.0, 2.0], [1.5, 2.0]).tolist()
    [-0.25, -0.0]
    """
    pred = check_array(predictions, "predictions")
    target = check_array(targets, "targets")
    try:
        return -np.square(pred - target)
    except ValueError:
        raise DPValueError(f"predictions {pred.shape} and targets {target.shape} do not broadcast") from None


def _check_shadows(shadow_confidences, shadow_membership, target_confidences):
    shadows = check_array(shadow_confidences, "shadow_confidences", ndim=2)
    target = check_array(target_confidences, "target_confidences", ndim=1)
    if target.size != shadows.shape[1]:
        raise DPValueError(
            f"target_confidences has {target.size} examples but shadow_confidences has {shadows.shape[1]} "
            "(shadow_confidences is shadows x examples)"
        )
    if shadow_membership is None:
        return shadows, None, target
    member = np.asarray(shadow_membership)
    if member.shape != shadows.shape:
        raise DPValueError(
            f"shadow_membership must have the shape of shadow_confidences {shadows.shape}, got {member.shape}"
        )
    if member.dtype != bool:
        if not np.all(np.isin(member, (0, 1))):
            raise DPTypeError("shadow_membership must be boolean (True = the shadow trained on the example)")
        member = member.astype(bool)
    return shadows, member, target


def _gaussian_fit(values: np.ndarray, mask: np.ndarray, *, fixed_variance: bool, which: str):
    """Per-example mean and standard deviation of ``values`` over the shadows in ``mask``.

    Per-example variances use ddof = 1; the fixed (global) variance pools the squared
    deviations from each example's own mean over all examples, with ddof = 1 per example.
    """
    counts = mask.sum(axis=0)
    if np.any(counts == 0):
        j = int(np.argmin(counts))
        raise DPValueError(
            f"shadow_membership gives example {j} no {which} shadow model; every example needs at least one "
            f"{which} shadow (train more shadows, each on a random half of the examples)"
        )
    mean = np.sum(np.where(mask, values, 0.0), axis=0) / counts
    squares = np.sum(np.where(mask, np.square(values - mean), 0.0), axis=0)
    if fixed_variance:
        dof = int(np.sum(counts - 1))
        if dof < 1:
            raise DPValueError(f"a fixed variance needs some example with at least two {which} shadow models")
        std = np.full(mean.shape, np.sqrt(np.sum(squares) / dof))
    else:
        if np.any(counts < 2):
            j = int(np.argmin(counts))
            raise DPValueError(
                f"shadow_membership gives example {j} only {int(counts[j])} {which} shadow model(s); a per-example "
                "variance needs at least 2: train more shadow models or use fixed_variance=True"
            )
        std = np.sqrt(squares / (counts - 1))
    return mean, np.maximum(std, _STD_FLOOR)


def lira_online_scores(
    shadow_confidences: ArrayLike, shadow_membership: ArrayLike, target_confidences: ArrayLike, *,
    fixed_variance: bool = False
) -> np.ndarray:
    """Online LiRA: log N(phi; mu_in, s_in^2) - log N(phi; mu_out, s_out^2) per example.

    Parameters
    ----------
    shadow_confidences : array_like, shape (n_shadows, n_examples)
        Each shadow model's statistic on each example, usually :func:`logit_confidence`.
    shadow_membership : array_like of bool, shape (n_shadows, n_examples)
        True where the shadow model was trained on the example (IN).
    target_confidences : array_like, shape (n_examples,)
        The attacked model's statistic on each example.
    fixed_variance : bool
        Use one IN and one OUT variance for all examples (Carlini et al.'s choice with
        few shadows, e.g. 64 or fewer).

    Returns
    -------
    ndarray, shape (n_examples,)
        Log-likelihood ratios, higher = member.

    References
    ----------
    Carlini et al. Membership inference attacks from first principles, Algorithm 1. IEEE S&P 2022.

    Examples
    --------
    >>> shadows = [[1.0, 0.0], [3.0, 2.0], [-1.0, 2.0], [1.0, 4.0]]
    >>> member = [[True, False], [True, False], [False, True], [False, True]]
    >>> np.round(lira_online_scores(shadows, member, [2.0, 2.0]), 4).tolist()
    [1.0, 0.0]
    """
    shadows, member, target = _check_shadows(shadow_confidences, shadow_membership, target_confidences)
    if member is None:
        raise DPValueError("shadow_membership is required for online LiRA (which shadows trained on which example)")
    mu_in, s_in = _gaussian_fit(shadows, member, fixed_variance=fixed_variance, which="IN")
    mu_out, s_out = _gaussian_fit(shadows, ~member, fixed_variance=fixed_variance, which="OUT")
    return stats.norm.logpdf(target, mu_in, s_in) - stats.norm.logpdf(target, mu_out, s_out)


def lira_offline_scores(
    shadow_confidences: ArrayLike, shadow_membership: ArrayLike, target_confidences: ArrayLike, *,
    fixed_variance: bool = False
) -> np.ndarray:
    """Offline LiRA: -log P[Z > phi] with Z ~ N(mu_out, s_out^2), from OUT shadows only.

    The paper's offline test statistic is P[Z < phi] = 1 - P[Z > phi] (one-sided: a
    confidence far above the OUT distribution suggests a member); -log P[Z > phi] ranks
    examples identically and keeps resolution where P[Z < phi] rounds to 1.

    Parameters
    ----------
    shadow_confidences : array_like, shape (n_shadows, n_examples)
    shadow_membership : array_like of bool or None
        True where the shadow trained on the example; those entries are ignored. ``None``
        means no shadow trained on any example (the usual offline set-up).
    target_confidences : array_like, shape (n_examples,)
    fixed_variance : bool
        One OUT variance for all examples.

    References
    ----------
    Carlini et al. Membership inference attacks from first principles, Algorithm 1
    (offline variant). IEEE S&P 2022.

    Examples
    --------
    >>> shadows = [[0.0, 10.0], [2.0, 14.0]]
    >>> np.round(lira_offline_scores(shadows, None, [1.0, 12.0]), 4).tolist()
    [0.6931, 0.6931]
    """
    shadows, member, target = _check_shadows(shadow_confidences, shadow_membership, target_confidences)
    out = np.ones(shadows.shape, dtype=bool) if member is None else ~member
    mu_out, s_out = _gaussian_fit(shadows, out, fixed_variance=fixed_variance, which="OUT")
    return -stats.norm.logsf(target, mu_out, s_out)
