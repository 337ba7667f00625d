"""Audit a model you trained yourself: a membership-inference attack on your members and non-members.

:func:`audit` takes a fitted model (a torch module, a scikit-learn estimator, or the ``model`` of a
:func:`dpcore.learners.run_learner` result) or attack scores you computed, plus records that were in the
training set and records that were not, and returns the library's :class:`~dpcore.audit.AuditResult`: the
attack's ROC, its TPR at low FPR and a Clopper-Pearson epsilon lower bound to set beside the claimed epsilon.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from ..exceptions import DPCoreWarning, DPTypeError, DPValueError, user_stacklevel
from ..teaching.verdict import confidence_text, epsilon_text
from ..types import ArrayLike, RngLike
from .attacks import loss_threshold_scores
from .result import AuditResult, audit_from_scores
from .roc import DEFAULT_FPRS


def _rows(records, what: str) -> tuple[Any, np.ndarray]:
    """``(X, y)`` as given, or a torch ``Dataset``'s rows and labels (a DataLoader: its dataset, it says)."""
    import sys

    torch_data = sys.modules.get("torch.utils.data")  # a torch Dataset can only come from a program that loaded it
    if torch_data is not None and isinstance(records, torch_data.DataLoader):
        raise DPTypeError(f"{what} is a torch DataLoader: give its dataset ({what}=loader.dataset); the attack scores "
                          "every record once, in no batches")
    if torch_data is not None and isinstance(records, torch_data.Dataset):
        from ..training.engine import _rows_and_labels

        X, y = _rows_and_labels(records, None, what, f"{what}'s labels")
        return X, np.asarray(y.detach().cpu() if hasattr(y, "detach") else y)
    if not isinstance(records, tuple) or len(records) != 2:
        split = (f": split off the label column, {what}=(df.drop(columns=LABEL), df[LABEL])"
                 if hasattr(records, "columns") else "")
        raise DPTypeError(f"{what} must be a pair (X, y) of the records and their labels, or a torch Dataset of "
                          f"(row, label) pairs, when a model is audited; got {type(records).__name__}{split}")
    X, y = records
    y = np.asarray(y)
    if np.shape(X)[0] != y.shape[0]:
        raise DPValueError(f"{what}: X has {np.shape(X)[0]} rows but y has {y.shape[0]}")
    return X, y


def per_example_losses(model: Any, X: ArrayLike, y: ArrayLike, *, loss: Callable | None = None) -> np.ndarray:
    """Each record's loss under ``model``: the cross-entropy of a classifier, the squared error of a regressor.

    ``model`` is a torch ``nn.Module`` (run on its parameters' device; ``loss(output, y)`` per example, default
    cross-entropy where it gives several scores per row, whose labels are class indices 0..k-1 of any numeric
    dtype, and squared error where it gives one value per target), or a scikit-learn style model: a classifier
    (``classes_``) by the cross-entropy of its ``predict_proba``, else minus its true class's margin in
    ``decision_function`` (DP-ERM, SVMs), else its 0/1 loss; a k-means model (``cluster_centers_``) by each row's
    squared distance to the nearest centre; a regressor by its squared error. A ``run_learner`` result's ``model``
    is scored through its estimator on the run's own preprocessing of the rows, with the data's own labels.
    """
    try:
        import torch
        from torch import nn
    except ImportError:  # pragma: no cover - torch is a dependency
        nn = None
    if nn is not None and isinstance(model, nn.Module):
        p = next(iter(model.parameters()), None)
        device = p.device if p is not None else torch.device("cpu")
        # copies: a DataFrame's values reach numpy read-only (pandas' copy-on-write), which torch warns about
        x = torch.as_tensor(np.array(X, dtype=np.float32), device=device)
        labels = np.array(y)
        if labels.dtype.kind not in "biuf":
            raise DPValueError(f"a torch module's labels must be numbers (class indices 0..k-1, or targets), got "
                               f"{labels[:3].tolist()} ...: encode them as for training")
        target = torch.as_tensor(labels, device=device)
        was = model.training
        model.eval()
        try:
            with torch.no_grad():
                out = model(x)
                if loss is None:
                    values = _default_loss(out, target)
                else:
                    values = loss(out, target)
        except RuntimeError as exc:
            raise DPValueError(f"the model could not score these rows ({np.shape(X)}): {str(exc).splitlines()[0]}")\
                from None
        finally:
            model.train(was)
        return values.detach().cpu().numpy().astype(float)
    if loss is not None:
        raise DPTypeError("loss= applies to a torch module; a scikit-learn style model is scored by its own "
                          "probabilities or predictions")
    from ..learners.base import ReleasedModel  # here: dpcore.audit is imported where the learners are not

    y = np.asarray(y)
    if isinstance(model, ReleasedModel):  # a run's model: its estimator, on the run's own row preprocessing
        estimator, rows, classes = model.estimator, model._inputs(X), list(model.classes)
    else:
        estimator, rows = model, X
        classes = list(np.asarray(model.classes_).tolist()) if hasattr(model, "classes_") else []
    if classes and hasattr(estimator, "predict_proba"):
        idx = _class_indices(y, classes)
        proba = np.asarray(estimator.predict_proba(rows), dtype=float)
        return -np.log(np.clip(proba[np.arange(idx.size), idx], 1e-12, 1.0))
    if classes and hasattr(estimator, "decision_function"):  # scores, not probabilities (DP-ERM, SVMs)
        scores = np.asarray(estimator.decision_function(rows), dtype=float)
        return -_true_class_margin(scores, _class_indices(y, classes))
    if classes and hasattr(model, "predict"):  # labels only: the 0/1 loss
        return (np.asarray(model.predict(X)) != np.asarray(y)).astype(float)
    if hasattr(estimator, "cluster_centers_") and hasattr(estimator, "predict"):  # k-means: no label is read
        return _nearest_centre_distances(estimator, rows)
    if hasattr(model, "predict"):
        return (np.asarray(model.predict(X), dtype=float) - np.asarray(y, dtype=float)) ** 2
    raise DPTypeError(f"model must be a torch nn.Module or have predict_proba/predict, got {type(model).__name__}; "
                      "or pass attack scores (higher = member) instead of a model")


def _class_indices(y: np.ndarray, classes: list) -> np.ndarray:
    """Each label's column among the model's ``classes`` (refusing, by value, labels the model does not know)."""
    missing = sorted({v for v in y.tolist() if v not in classes}, key=str)
    if missing:
        values = y.tolist()
        indices = (y.dtype.kind in "iu" and not any(isinstance(c, (int, np.integer)) for c in classes)
                   and all(0 <= v < len(classes) for v in values))
        hint = (f": they read as class indices (a Split's or Dataset's y is one); give the classes themselves, "
                f"np.asarray({classes[:10]})[y]" if indices else "")
        raise DPValueError(f"labels {missing[:5]} are not among the model's classes {classes[:10]}{hint}")
    return np.array([classes.index(v) for v in y.tolist()], dtype=np.int64)


def _true_class_margin(scores: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The true class's decision value over the best other class's (a binary model's one score s is read as
    (-s/2, s/2), the convention of scikit-learn's ``decision_function``: positive for ``classes_[1]``)."""
    if scores.ndim == 1:
        return np.where(idx == 1, scores, -scores)
    rows = np.arange(idx.size)
    others = scores.copy()
    others[rows, idx] = -np.inf
    return scores[rows, idx] - others.max(axis=1)


def _nearest_centre_distances(estimator: Any, rows: Any) -> np.ndarray:
    """A clustering's loss of each row: its squared distance to the nearest released centre (dpcore's k-means in
    the ``[-1, 1]^d`` coordinates its centres live in, scikit-learn's by its ``transform`` distances)."""
    if hasattr(estimator, "transform_unit"):
        Z, C = estimator.transform_unit(rows), np.asarray(estimator.cluster_centers_unit_, dtype=float)
        d = (Z * Z).sum(1)[:, None] - 2.0 * Z @ C.T + (C * C).sum(1)[None, :]
        return np.maximum(d, 0.0).min(axis=1)
    return np.asarray(estimator.transform(rows), dtype=float).min(axis=1) ** 2


def _default_loss(out, target):
    """Cross-entropy where the module gives one score per class (several outputs per row; the labels must be
    class indices 0..k-1, whole numbers of any dtype), squared error where it gives one value per target."""
    from ..training.losses import per_example_loss

    if out.dim() == 2 and out.shape[1] > 1 and target.dim() == 1:
        whole = not target.dtype.is_floating_point or bool((target == target.round()).all())
        if not whole or (target.numel() > 0 and (float(target.min()) < 0 or float(target.max()) >= out.shape[1])):
            raise DPValueError(f"the model gives {out.shape[1]} scores per row (a classifier), so the labels must be "
                               f"class indices 0..{out.shape[1] - 1}; got values from {float(target.min()):g} to "
                               f"{float(target.max()):g}")
        return per_example_loss(out, target.long(), "classification")
    if out.dim() == 1:  # one value per row, against (B, 1) targets: kept per row, not broadcast across the batch
        out = out[:, None]
    if out.shape[1] == 1 and not target.dtype.is_floating_point and target.numel() and bool(
            ((target == 0) | (target == 1)).all()):
        warnings.warn("the module gives one value per row and the labels are 0/1 integers: each record is scored as a "
                      "regressor's, by the squared error of that value against its label. If it is a classifier's "
                      "logit, that ranks confident right answers as non-members: pass loss=lambda out, y: "
                      "F.binary_cross_entropy_with_logits(out.reshape(-1), y.float(), reduction='none'), or audit "
                      "its train() result, which knows it is a classifier", DPCoreWarning,
                      stacklevel=user_stacklevel())
    return per_example_loss(out, target.float(), "regression")


def audit(
    model_or_scores: Any,
    members: Any,
    non_members: Any,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    loss: Callable | None = None,
    confidence: float = 0.95,
    method: str = "bonferroni",
    fprs: Sequence[float] = DEFAULT_FPRS,
    rng: RngLike = None,
) -> AuditResult:
    """A loss-threshold membership attack on your model, and the epsilon it proves at least.

    Parameters
    ----------
    model_or_scores : model or None
        A fitted model (torch ``nn.Module``, scikit-learn estimator, a ``run_learner(...)`` result or its
        ``model``, a :func:`~dpcore.train` result): each record is
        scored by minus its loss (Yeom et al. 2018), so members, which the model fitted, score higher. ``None``:
        ``members`` and ``non_members`` are already attack scores (higher = member), e.g. from LiRA.
    members, non_members : (X, y), torch Dataset or array
        Records that were in the training set and records from the same distribution that were not, as ``(X, y)``
        pairs (or torch Datasets of ``(row, label)`` items) when a model is given, or score vectors when
        ``model_or_scores`` is None. Choose them before
        training (e.g. a random half of a pool) for the bound to be valid. The Clopper-Pearson bound counts every
        record as an independent trial, as Jagielski et al. (2020) count one training run per trial; for members
        drawn by a fair coin each, :func:`~dpcore.audit.one_run_audit` on the scores gives the bound Steinke, Nasr
        & Jagielski (2023, Theorem 5.2) prove for many records in one training run.
    epsilon, delta : float, optional
        The claim the model was trained under (``inf`` for a non-private model), recorded beside the bound. Left
        out, a run's result (``run_learner``'s, ``train``'s) is held to its own ``(epsilon, delta)``, and any other
        model or scores to no claim (``inf``; ``delta`` 0). A run's
        result whose ε protects other neighbours than a whole record added or removed (a record replaced: DP-ERM,
        shuffled batches; a label: label DP; a client) makes no claim this attack tests: an ``epsilon`` given with
        it is refused, and without one the result's ``claim_note`` says why (as the command line's audits do).
    loss : callable, optional
        ``loss(output, y)`` per example, for a torch module (default: cross-entropy where it gives several scores per
        row, squared error where it gives one value; a :func:`~dpcore.train` result of a classifier with one logit
        per row: binary cross-entropy).
    confidence, method, fprs, rng
        As in :func:`~dpcore.audit.audit_from_scores` (the Clopper-Pearson bound's confidence and how the
        threshold is chosen honestly).

    Returns
    -------
    AuditResult
        ``auc``, ``tpr_at_fpr``, ``advantage`` and ``epsilon_lower_bound`` (the epsilon the attack proves with
        ``confidence``; a claimed epsilon below it is refuted: ``refutes_claim``, and a warning says so).

    Raises
    ------
    DPValueError
        Among others, where the members and non-members are too few for even a perfect attack to prove any
        epsilon > 0 (the message says how many would do): such an audit could only read 0.

    References
    ----------
    Yeom, Giacomelli, Fredrikson, Jha. Privacy risk in machine learning: analyzing the connection to
    overfitting. IEEE CSF 2018.
    Jagielski, Ullman, Oprea. Auditing differentially private machine learning. NeurIPS 2020.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> res = audit(None, rng.normal(1.0, 1.0, 500), rng.normal(0.0, 1.0, 500), rng=0)
    >>> res.auc > 0.6, res.epsilon_lower_bound > 0
    (True, True)
    """
    note = _claim_note(model_or_scores, epsilon)
    epsilon, delta = _claim(model_or_scores, epsilon, delta)
    if loss is None:
        loss = _trained_loss(model_or_scores)
    model_or_scores = _released_model(model_or_scores)
    if model_or_scores is None:
        member_scores = np.asarray(members, dtype=float)
        nonmember_scores = np.asarray(non_members, dtype=float)
        attack = "given scores"
    else:
        Xm, ym = _rows(members, "members")
        Xn, yn = _rows(non_members, "non_members")
        member_scores = loss_threshold_scores(per_example_losses(model_or_scores, Xm, ym, loss=loss))
        nonmember_scores = loss_threshold_scores(per_example_losses(model_or_scores, Xn, yn, loss=loss))
        attack = "loss-threshold"
    result = audit_from_scores(member_scores, nonmember_scores, attack=attack, epsilon=epsilon, delta=delta,
                               confidence=confidence, method=method, fprs=fprs, rng=rng)
    if result.most_provable() <= 0.0:
        raise DPValueError(_too_few_records(result))
    if note:
        result = dataclasses.replace(result, claim_note=note)
    if result.refutes_claim:
        pure = (" The claim was read as pure epsilon-DP (delta=0): give the delta the model was trained with, "
                "whose bound is lower") if result.delta == 0 else ""
        proven = epsilon_text(result.epsilon_lower_bound, lower_bound=True)  # a lower bound rounds down
        warnings.warn(f"the attack proves epsilon >= {proven} with {confidence_text(result.confidence)} "
                      f"confidence, above the claimed epsilon = {result.epsilon:g} (delta = {result.delta:g}): the "
                      "claim is refuted, unless the members and non-members were not chosen at random before "
                      f"training, which the bound assumes.{pure}", DPCoreWarning, stacklevel=user_stacklevel())
    return result


def _too_few_records(result: AuditResult) -> str:
    """Why an audit of ``result``'s size proves nothing whatever the model does, and how many records would: a
    perfect attack's Clopper-Pearson bound (:meth:`AuditResult.most_provable`) is 0 at its sizes."""
    from .result import _most_provable

    def provable(n: int) -> bool:
        return _most_provable(result.bound_method, n, n, float(result.delta), float(result.confidence)) > 0.0

    lo, hi = 1, 2
    while not provable(hi) and hi < _MOST_RECORDS_SEARCHED:
        lo, hi = hi, hi * 2
    if provable(hi):
        while hi - lo > 1:  # the fewest of each that a perfect attack turns into a positive bound
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if provable(mid) else (mid, hi)
        enough = f"at least {hi:,} of each"
    else:  # a delta near 1 leaves almost no room: only millions of records could show anything
        enough = f"more than {hi:,} of each, or the delta the model was trained with if it is smaller"
    return (f"members and non_members are too few: with {result.n_members} member(s) and {result.n_nonmembers} "
            f"non-member(s), even an attack that told every member from every non-member would prove no epsilon > 0 "
            f"at {confidence_text(result.confidence)} confidence (delta = {result.delta!r}), so the audit could only "
            f"read 0; give {enough} (Jagielski, Ullman & Oprea 2020: the Clopper-Pearson bound needs enough trials)")


#: Where :func:`_too_few_records` stops doubling the records it asks a perfect attack about.
_MOST_RECORDS_SEARCHED = 1 << 20


def _run_of(model: Any) -> Any:
    """The run a result stands for (``run_learner``'s :class:`RunResult`, or a :func:`~dpcore.train` result as a run
    of whole records), or None for a model or scores."""
    import sys
    from types import SimpleNamespace

    from ..learners.base import RunResult

    engine = sys.modules.get("dpcore.training.engine")
    if isinstance(model, RunResult):
        return model
    if engine is not None and isinstance(model, engine.TrainResult):
        return SimpleNamespace(epsilon=model.epsilon, delta=model.delta, neighbouring=model.neighbouring,
                               unit="records")
    return None


def _claim(model: Any, epsilon: float | None, delta: float | None) -> tuple[float, float]:
    """The claim to hold the attack to: the one given, else a run result's own membership claim at its delta (or at
    a larger delta given, which its guarantee implies), else none (``inf``, delta 0). A result audited without
    ``epsilon=`` was read as claiming nothing, so a model trained at ε = 1 that leaked refuted nothing."""
    run = _run_of(model) if epsilon is None else None
    if run is not None:
        from .membership import membership_claim

        own, _ = membership_claim(run)
        if math.isfinite(own):  # at a delta given below the run's, (own, delta) would be a claim it never made
            return own, float(run.delta) if delta is None else max(float(run.delta), delta)
    return (math.inf if epsilon is None else epsilon), (0.0 if delta is None else delta)


def _classifier_loss(out, target):
    """A classifier's loss per row: binary cross-entropy of one logit per row (shape ``(B,)`` or ``(B, 1)``) against
    0/1 labels, else the default (cross-entropy of several scores per row)."""
    if out.dim() == 1 or out.shape[1] == 1:
        import torch.nn.functional as F

        return F.binary_cross_entropy_with_logits(out.reshape(-1).float(), target.reshape(-1).float(),
                                                  reduction="none")
    return _default_loss(out, target)


def _trained_loss(model: Any) -> Callable | None:
    """The loss a :func:`~dpcore.train` result's classifier is scored by: a classifier's, also where it gives one
    logit per row, which the default loss reads as a regressor's squared error of the logit against the 0/1 label,
    ranking a confident right answer below a hesitant one (an overfit one-logit classifier read AUC 0.19 and proved
    nothing; by its cross-entropy 0.91); None for a regressor or another model (the default loss)."""
    import sys

    engine = sys.modules.get("dpcore.training.engine")
    if engine is not None and isinstance(model, engine.TrainResult) and model.config.task == "classification":
        return _classifier_loss
    return None


def _claim_note(model: Any, epsilon: float | None) -> str:
    """Why the ε of a run's result is no claim about what this attack tests, a whole record added or removed
    (:func:`~dpcore.audit.membership_claim`: a record replaced, a label, an image, a client), or "" where it is, or
    for a model that is not a run's result. A finite ``epsilon`` given with such a run is refused: a lower bound
    above it would refute nothing, one below it would suggest a protection the run does not give."""
    run = _run_of(model)
    if run is None:
        return ""
    from .membership import membership_claim

    _, why = membership_claim(run)
    claimed = isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) and 0 < epsilon < math.inf
    if why and claimed:  # (a bad epsilon is refused as such by audit_from_scores)
        raise DPValueError(f"epsilon={epsilon:g} cannot be held against a membership attack on this run: {why}. "
                           "Leave epsilon= out (the result's claim_note then says why), or audit the model itself "
                           "(run.model) to hold it to a claim of your own")
    return why


def _released_model(model: Any) -> Any:
    """A run's result stands for the model it released: ``run_learner(...)``'s ``model`` (refused by name where
    the learner releases answers, not a model), and a :func:`~dpcore.train` result its torch module, scored by
    its loss (the result's ``predict`` gives classes, whose squared error would be a weaker 0/1 score)."""
    import sys

    from ..learners.base import RunResult  # here: dpcore.audit is imported where the learners are not

    engine = sys.modules.get("dpcore.training.engine")  # a TrainResult exists only once training is loaded
    if engine is not None and isinstance(model, engine.TrainResult):
        return model.model()
    if not isinstance(model, RunResult):
        return model
    if model.model is None:
        raise DPValueError(f"this {model.learner!r} run released no model to audit (it releases answers, not a "
                           "model); audit the scores of its answers instead: audit(None, member_scores, "
                           "non_member_scores)")
    return model.model
