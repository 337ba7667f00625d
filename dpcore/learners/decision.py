"""The decision rule of declared class shares: released class probabilities divided by the shares, then argmax.

A model's probabilities p(y | x) carry the training label's imbalance: on a label with 88 % of one class a private
model's p rarely puts another class first, and argmax answers the common class for every row. The rule
``argmax_y p(y | x) / share(y)`` answers the class whose probability is highest relative to how common it is: the
Bayes decision for balanced accuracy (the mean of the classes' recalls) when p is calibrated and the shares are the
training label's (Elkan 2001, Theorem 1, with costs inversely proportional to the shares; Saerens, Latinne &
Decaestecker 2002, the prior shift to a uniform prior). It reads the released model only and shares the owner
declared (:attr:`dpcore.datasets.Dataset.class_shares`), so it is post-processing: no privacy is spent, the model's
ε, dp_accounting event and noise are those of the run.

References
----------
C. Elkan, "The foundations of cost-sensitive learning", IJCAI 2001.
M. Saerens, P. Latinne, C. Decaestecker, "Adjusting the outputs of a classifier to new a priori probabilities: a
simple procedure", Neural Computation 14(1), 2002.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Sequence

import numpy as np

from ..exceptions import DPCoreWarning, DPValueError, user_stacklevel
from .metrics import confusion_matrix, score

#: What a result says (``extras["decision_rule"]``) when it answered by the declared shares.
RULE = "declared class shares"
#: ``extras[NOISY_LABELS]`` is True on a run trained on labels noised for label DP: its probabilities are of the
#: noisy labels, whose shares are not the declared ones (randomized response moves every class toward 1/k), so
#: dividing by the declared shares would answer the rare classes far too often (on a 3-class 88/7/5 table, label
#: DP's randomized response at ε 1 found every rare row and answered 10 % of the rows right)
NOISY_LABELS = "trained_on_noisy_labels"


def balanced_decision(proba, shares: Sequence[float]) -> np.ndarray:
    """The class index answering each row: ``argmax(proba / shares)`` (ties to the smaller index).

    Parameters
    ----------
    proba : array (n_rows, n_classes)
        Class probabilities (or scores on the same scale: noise may push a coordinate below 0).
    shares : sequence of float, each > 0
        Each class's declared share of the rows, in the columns' order.

    Examples
    --------
    >>> balanced_decision([[0.80, 0.15, 0.05], [0.90, 0.02, 0.08]], [0.88, 0.07, 0.05])
    array([1, 2])
    """
    p = np.asarray(proba, dtype=float)
    s = np.asarray(shares, dtype=float)
    if p.ndim != 2 or s.shape != (p.shape[1],):
        raise DPValueError(f"class shares: {s.size} shares for probabilities of shape {p.shape}; give one share per "
                           "class")
    if not np.all(s > 0):
        raise DPValueError("class shares must all be above 0")
    return np.argmax(p / s, axis=1)


def releases_probabilities(result: Any, n_rows: int) -> bool:
    """Whether a run's released answers on its ``n_rows`` test rows are class probabilities (the rule's input)."""
    outputs = result.test_outputs
    return outputs is not None and outputs.kind == "probability" and len(outputs.values) == n_rows


def apply_class_shares(split: Any, result: Any, *, title: str) -> None:
    """Make a classifier's answers on the test rows, its metrics, confusion matrix and released model follow the
    shares its data declares (:attr:`~dpcore.datasets.Dataset.class_shares`); nothing else of the run changes.

    A run that releases class probabilities answers ``balanced_decision(probabilities, shares)``:
    ``metrics`` (accuracy, balanced accuracy, the rarest class's recall), ``extras["predictions"]`` and
    ``extras["confusion_matrix"]`` where it has them, and ``model.predict`` follow; ``extras["decision_rule"]``
    says so. A run that releases scores or labels only (ERM's decision values, output perturbation's noisy vectors)
    keeps its answers, with ``extras["decision_rule"] = "argmax"`` and one warning naming it (``title``).
    """
    shares = tuple(getattr(split.dataset, "class_shares", ()) or ())
    if not shares or split.task != "classification":
        return
    n = int(np.asarray(split.y_test).size)
    if result.test_outputs is not None and result.test_outputs.kind == "cluster":  # clusters, not classes answered
        return
    if result.extras.get(NOISY_LABELS):
        result.extras["decision_rule"] = "argmax"
        warnings.warn(f"{title} learns from labels noised for label DP: its probabilities are of the noisy labels, "
                      "which the declared class shares do not describe, so it answers its most probable class and "
                      "is judged without them.", DPCoreWarning, stacklevel=user_stacklevel())
        return
    if not releases_probabilities(result, n) or result.test_outputs.values.shape[1] != len(shares):
        result.extras["decision_rule"] = "argmax"
        warnings.warn(f"{title} releases scores, not class probabilities: the declared class shares do not change "
                      "its answers (each row gets its highest score), so it is judged without them.",
                      DPCoreWarning, stacklevel=user_stacklevel())
        return
    answers = balanced_decision(result.test_outputs.values, shares)
    result.metrics.update(score(split, answers))
    if "predictions" in result.extras:
        result.extras["predictions"] = answers
    if "confusion_matrix" in result.extras:
        result.extras["confusion_matrix"] = confusion_matrix(split.y_test, answers, split.n_classes)
    result.extras["decision_rule"] = RULE
    model = result.model
    if model is not None and getattr(model, "classes", ()) and hasattr(model.estimator, "predict_proba"):
        object.__setattr__(result, "model", dataclasses.replace(model, class_shares=shares))


def answers_on_test_rows(split: Any, result: Any) -> np.ndarray | None:
    """The class index a classifier answered on each test row, by the rule it used (argmax of its released
    probabilities or scores, or of the probabilities divided by the declared shares); None without answers."""
    outputs = result.test_outputs
    if outputs is None or outputs.kind not in ("probability", "score"):
        return None
    return answers_by_rule(outputs.values, result, split.dataset)


def answers_by_rule(values, result: Any, dataset: Any) -> np.ndarray:
    """The class index the run ``result`` answers for each row of ``values`` (its released probabilities or scores
    on any rows, e.g. an audit's unseen rows): divided by ``dataset``'s declared shares where the run answered by
    them (``extras["decision_rule"]``), else their argmax.

    >>> from types import SimpleNamespace as NS
    >>> run, data = NS(extras={"decision_rule": RULE}), NS(class_shares=(0.9, 0.1))
    >>> answers_by_rule([[0.8, 0.2]], run, data), answers_by_rule([[0.8, 0.2]], NS(extras={}), data)
    (array([1]), array([0]))
    """
    if result.extras.get("decision_rule") == RULE:
        return balanced_decision(values, dataset.class_shares)
    return np.argmax(np.asarray(values), axis=1)


__all__ = ["NOISY_LABELS", "RULE", "answers_by_rule", "answers_on_test_rows", "apply_class_shares", "balanced_decision",
           "releases_probabilities"]
