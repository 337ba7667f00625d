"""One-run audits with canaries (Steinke, Nasr & Jagielski 2023).

m canaries are made, each included in the single training run by an independent fair
coin; after training the auditor scores every canary, guesses "in" for its most
confident and "out" for its least confident, and Theorem 5.2 of the paper turns the
number of right guesses into an epsilon lower bound (:func:`~dpcore.audit.one_run_audit`).

Two kinds of canary:

* **gradient canaries** (white-box, DP-SGD only, the tightest): canary j's clipped
  gradient is C times a unit vector in a parameter coordinate no real record touches
  (the weights of input features that are zero for every real record, appended for the
  audit, so predictions are unchanged). The auditor reads every step's noisy summed
  gradient (as a white-box adversary who sees the iterates would) and scores canary j by
  the sum of its coordinate over the steps: an included canary adds C each time it is
  sampled, an excluded one adds nothing, and the Gaussian noise hides the difference
  exactly as much as the accountant says.
* **input canaries** (black-box, any learner): mislabelled records (a test record with
  its label changed) or out-of-distribution ones (uniform noise inside the declared
  feature bounds, with a random label), added to the training rows; the auditor queries
  the final model and scores each canary by how well the model fits its label.

References
----------
Steinke, Nasr, Jagielski. Privacy auditing with one (1) training run. NeurIPS 2023.
Nasr, Song, Thakurta, Papernot, Carlini. Adversary instantiation: lower bounds for
differentially private machine learning. IEEE S&P 2021 (Dirac gradient canaries).
Jagielski, Ullman, Oprea. Auditing differentially private machine learning: how private
is private SGD? NeurIPS 2020 (input canaries).
"""
from __future__ import annotations

import dataclasses
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..datasets import Dataset, Split, load_dataset, train_test_split
from ..datasets.registry import TEST_SIZE
from ..defaults import DELTA
from ..exceptions import DPCoreWarning, DPValueError
from ..learners import get_learner, judge_against_trivial, run_learner
from ..learners.decision import answers_by_rule
from ..learners.metrics import balanced_accuracy
from ..rng import substream
from ..runtime.thread_warnings import ignored
from ..validation import check_int
from .bounds import check_confidence
from .membership import (
    ProgressCallback,
    _audit_result,
    bound_delta,
    example_statistic,
    membership_claim,
    refuse_shuffled_batches,
)
from .result import AuditResult

__all__ = ["CANARY_KINDS", "CanaryAudit", "gradient_canary_audit", "input_canary_audit"]

CANARY_KINDS = ("gradient", "input")
#: What an input canary looks like.
INPUT_CANARIES = ("mislabelled", "random")


@dataclass(frozen=True, eq=False)
class CanaryAudit:
    """A one-run canary audit: the result, and each canary's score and inclusion."""

    result: AuditResult
    learner: str
    dataset: str
    kind: str
    scores: np.ndarray = field(repr=False)
    included: np.ndarray = field(repr=False)
    accuracy: float | None = None  # the audited model's test accuracy (its utility with the canaries in)
    run: dict = field(default_factory=dict)  # what ran: noise_multiplier, sample_rate, steps (DP-SGD)
    event: Any = None  # the audited run's dp_accounting event (None if not private)
    #: input canaries only: each canary's record, the label it was taught and (mislabelled canaries) its true label
    records: np.ndarray | None = field(default=None, repr=False)
    taught: np.ndarray | None = field(default=None, repr=False)
    true_labels: np.ndarray | None = field(default=None, repr=False)
    #: input canaries only: the audited model's balanced accuracy on the same unseen rows as ``accuracy``, by the
    #: same answers (the declared class shares where its run answered by them)
    balanced_accuracy: float | None = None
    #: what the audited run's ε protects (who counts as a neighbour: None if not private) and of what (its ``unit``:
    #: whole records, or a label only), so the run composes with the other releases on the same data
    neighbouring: Any = None
    unit: str = "records"
    #: the audited run's own ε (what it released, for a ledger), where the audit's claim (``result.epsilon``) is ∞
    #: because the run's guarantee is about other neighbours (:func:`~dpcore.audit.membership.membership_claim`)
    run_epsilon: float | None = None
    #: the audited run's own δ (what it released, for a ledger): a run with no claim to test is read at the δ the
    #: audit was asked for (:func:`~dpcore.audit.membership.bound_delta`), which may not be its own
    run_delta: float | None = None

    @property
    def target_accuracy(self) -> float | None:
        """The audited model's accuracy on test rows it never saw (the name a membership audit uses)."""
        return self.accuracy

    def most_exposed(self, k: int = 8) -> np.ndarray:
        """Positions of the k included canaries the attack is most sure of, most exposed first."""
        idx = np.flatnonzero(self.included)
        return idx[np.argsort(-self.scores[idx], kind="stable")][:k]


def _split(data: "str | Dataset", seed: int) -> Split:
    return train_test_split(load_dataset(data) if isinstance(data, str) else data, seed=seed)


#: Canaries of a one-run audit unless told otherwise (the Attack page's default too).
DEFAULT_CANARIES = 1000
#: The fewest canaries an audit runs on: fewer leave the bound too few guesses to prove anything.
MIN_CANARIES = 10
#: The fewest rows whose split holds out :data:`MIN_CANARIES` test rows (mislabelled canaries are made from them).
MIN_CANARY_ROWS = math.ceil(MIN_CANARIES / TEST_SIZE)


def input_canary_capacity(data: "str | Dataset", seed: int = 0) -> int:
    """Most mislabelled input canaries ``data`` can give: one per test row of its split (a quarter of the rows)."""
    return int(_split(data, seed).X_test.shape[0])


def too_few_test_rows(canaries: int, test_rows: int, *, what: str) -> str:
    """Why ``canaries`` mislabelled canaries do not fit a split of ``test_rows`` test rows, and what to change
    (``what`` names the setting: ``canaries`` in Python, ``--canaries`` on the command line).

    Where the data cannot hold even the fewest an audit runs on, the message is about the data, not ``what`` (which
    the visitor may not have set: the command line's default asked for 10 on a 20-row file).

    >>> print(too_few_test_rows(10, 1, what="--canaries"))  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    this data is too small for an audit with mislabelled canaries: they are made from the test rows, one each,
    and this data's split holds 1 test row, and an audit needs at least 10: use data with at least 40 rows
    >>> print(too_few_test_rows(30, 20, what="--canaries"))  # doctest: +ELLIPSIS
    --canaries must be <= 20, got 30: ... holds 20 test rows; give --canaries 20 or fewer, or use data with more rows
    """
    holds = (f"made from the test rows, one each, and this data's split holds {test_rows} test "
             f"row{'s' if test_rows != 1 else ''}")
    if test_rows < MIN_CANARIES:
        return (f"this data is too small for an audit with mislabelled canaries: they are {holds}, and an audit needs "
                f"at least {MIN_CANARIES}: use data with at least {MIN_CANARY_ROWS} rows")
    return (f"{what} must be <= {test_rows}, got {canaries}: mislabelled canaries are {holds}; give {what} "
            f"{test_rows} or fewer, or use data with more rows")


def too_few_canaries(canaries: int, test_rows: int | None, *, what: str) -> str | None:
    """Why ``canaries`` is below :data:`MIN_CANARIES`, and what to change (None when it is not); ``test_rows``:
    the test rows mislabelled canaries are made from, or None for canaries that take no rows. ``what``: as for
    :func:`too_few_test_rows`.

    >>> print(too_few_canaries(2, 2, what="--canaries"))  # doctest: +ELLIPSIS
    --canaries must be >= 10, got 2: ... this data's split holds 2 test rows: use data with at least 40 rows
    >>> print(too_few_canaries(2, None, what="--canaries"))  # doctest: +ELLIPSIS
    --canaries must be >= 10, got 2: ...; give --canaries 10 or more
    >>> too_few_canaries(10, 2, what="canaries") is None
    True
    """
    if isinstance(canaries, bool) or not isinstance(canaries, (int, np.integer)) or canaries >= MIN_CANARIES:
        # a wrong type is check_int's to refuse
        return None
    head = (f"{what} must be >= {MIN_CANARIES}, got {canaries}: the audit guesses in or out for each canary, and "
            "fewer guesses are too few to prove a leak")
    if test_rows is not None and test_rows < MIN_CANARIES:
        return (f"{head}; mislabelled canaries are made from the test rows, one each, and this data's split holds "
                f"{test_rows} test row{'s' if test_rows != 1 else ''}: use data with at least {MIN_CANARY_ROWS} rows")
    return f"{head}; give {what} {MIN_CANARIES} or more" + (f" (at most {test_rows} on this data)" if test_rows else "")


def _dirac_layout(model_kwargs: dict, n_features: int, extra: int) -> tuple[int, int]:
    """(rows, row length) of the first layer's weight, the block the canary coordinates live in."""
    from ..training.models import build_model

    first = next(build_model(**{**model_kwargs, "n_features": n_features + extra}).parameters())
    if first.dim() != 2 or first.shape[1] != n_features + extra:
        raise DPValueError("gradient canaries need a model whose first layer is dense on the features "
                           "(model='linear' or 'mlp'); use input canaries for the CNN")
    return int(first.shape[0]), int(first.shape[1])


def gradient_canary_audit(
    data: "str | Dataset",
    *,
    epsilon: float,
    delta: float = DELTA,
    canaries: int = DEFAULT_CANARIES,
    params: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    on_progress: ProgressCallback | None = None,
) -> CanaryAudit:
    """White-box one-run audit of DP-SGD with Dirac gradient canaries (see the module docstring).

    The run is the registered ``dpsgd`` learner's (same features, preset and knobs), with
    the included canaries as extra records: the sampling rate and the calibrated noise
    count them, so the claimed epsilon covers them as it covers every record.

    Examples
    --------
    >>> a = gradient_canary_audit("iris", epsilon=1.0, canaries=100, params={"epochs": 5})
    >>> a.result.epsilon_lower_bound <= a.result.epsilon
    True
    """
    from ..training import ExtraGradients, train
    from ..training.learners import training_problem

    refuse_shuffled_batches(True, params)
    if too_few := too_few_canaries(canaries, None, what="canaries"):
        raise DPValueError(too_few)
    m = check_int(canaries, "canaries", minimum=MIN_CANARIES, maximum=1_000_000)
    confidence = check_confidence(confidence)
    start = time.perf_counter()
    split = _split(data, seed)
    if split.task != "classification":
        raise DPValueError("the gradient-canary audit trains a classifier; pick a classification dataset")
    pb = training_problem(split, private=True, epsilon=epsilon, delta=delta, seed=seed, params=params or {})
    if pb.config.model == "cnn":
        raise DPValueError("gradient canaries need model='linear' or 'mlp'; use canary_kind='input' for the CNN")
    n, d = pb.X_train.shape
    kwargs = dict(kind=pb.config.model, n_features=d, n_outputs=pb.n_outputs, hidden=pb.config.hidden,
                  depth=pb.config.depth, activation=pb.config.activation)
    rows, _ = _dirac_layout(kwargs, d, 1)
    extra = math.ceil(m / rows)  # zero features: their weights receive no gradient from any real record
    rows, width = _dirac_layout(kwargs, d, extra)
    coords = np.array([(j % rows) * width + d + j // rows for j in range(m)], dtype=np.int64)
    included = substream(seed, "gradient canaries").random(m) < 0.5
    C = pb.config.clip_norm
    X_aug = np.hstack([pb.X_train, np.zeros((n, extra), dtype=pb.X_train.dtype)])
    X_test = np.hstack([pb.X_test, np.zeros((pb.X_test.shape[0], extra), dtype=pb.X_test.dtype)])
    size = sum(p.numel() for p in _model_params(kwargs, d + extra))
    extras = ExtraGradients.diracs(coords[included], value=C, size=size)
    import torch  # here, with the training it observes: 'audit --help' and the audits that train no network skip it

    sums = torch.zeros(m, dtype=torch.float64)
    where = torch.as_tensor(coords)

    def observe(step: int, noisy_sum: torch.Tensor) -> None:
        sums.add_(noisy_sum.index_select(0, where).to(torch.float64))

    def epoch_done(info: Mapping[str, Any]) -> None:
        if on_progress is not None:
            on_progress({"stage": "training", "done": info["epoch"], "total": info["epochs"]})

    res = train(X_aug, pb.y_train, pb.config, X_test=X_test, y_test=pb.y_test, n_outputs=pb.n_outputs,
                extra_gradients=extras, on_step=observe, on_epoch=epoch_done)
    scores = sums.numpy()
    result = _audit_result(scores, included, attack="one-run gradient canaries", epsilon=res.epsilon,
                           delta=delta, confidence=confidence, seconds=time.perf_counter() - start)
    acc = float(res.history["accuracy"].iloc[-1]) if len(res.history) else None
    run = {"noise_multiplier": float(res.noise_multiplier), "sample_rate": float(res.sample_rate),
           "steps": int(res.steps), "clip_norm": float(C)}
    return CanaryAudit(result, "dpsgd", split.dataset.name, "gradient", scores, included, acc, run, res.dp_event,
                       neighbouring=res.neighbouring, run_epsilon=res.epsilon)


def _model_params(kwargs: dict, n_features: int):
    from ..training.models import build_model

    return [p for p in build_model(**{**kwargs, "n_features": n_features}).parameters() if p.requires_grad]


def _mislabel(y: np.ndarray, split: Split, rng: np.random.Generator) -> np.ndarray:
    """Each canary's label moved to another class, or (regression) to the far end of the label range."""
    if split.task == "classification":
        k = split.n_classes
        return (y + rng.integers(1, k, size=y.shape)) % k
    lo, hi = split.dataset.label_range or (float(np.min(split.y_train)), float(np.max(split.y_train)))
    return np.where(y < (lo + hi) / 2, hi, lo).astype(float)


def _input_canaries(split: Split, m: int, style: str,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The canaries' records and taught labels, and (mislabelled canaries) the test rows they were made from."""
    if style == "mislabelled":
        pick = np.sort(rng.choice(split.X_test.shape[0], size=m, replace=False))
        return split.X_test[pick], _mislabel(np.asarray(split.y_test)[pick], split, rng), pick
    if style != "random":
        raise DPValueError(f"canary_style must be one of {', '.join(INPUT_CANARIES)}, got {style!r}")
    if split.dataset.bounds is None:
        raise DPValueError("random input canaries are drawn inside the declared feature bounds; this dataset "
                           "declares none: use canary_style='mislabelled'")
    lo, hi = (np.asarray(b, dtype=float) for b in split.dataset.bounds)
    X = rng.uniform(lo, hi, size=(m, lo.size))
    if split.task == "classification":
        return X, rng.integers(0, split.n_classes, size=m), None
    a, b = split.dataset.label_range or (float(np.min(split.y_train)), float(np.max(split.y_train)))
    return X, rng.uniform(a, b, size=m), None


def input_canary_audit(
    learner: str,
    data: "str | Dataset",
    *,
    epsilon: float,
    delta: float = DELTA,
    canaries: int = 200,
    canary_style: str = "mislabelled",
    params: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    on_progress: ProgressCallback | None = None,
) -> CanaryAudit:
    """Black-box one-run audit of any learner with mislabelled input canaries (see the module docstring).

    The canaries (``canary_style``: test records with a wrong label, or uniform noise
    inside the feature bounds with a random label) each join the training rows by a fair
    coin; the trained model is queried on all of them.

    Examples
    --------
    >>> a = input_canary_audit("erm-output", "breast_cancer", epsilon=1.0, canaries=50)
    >>> a.result.n_members + a.result.n_nonmembers
    50
    """
    spec = get_learner(learner)
    refuse_shuffled_batches(spec.private, params)
    confidence = check_confidence(confidence)
    start = time.perf_counter()
    split = _split(data, seed)
    limit = split.X_test.shape[0] if canary_style == "mislabelled" else 100_000
    if too_few := too_few_canaries(canaries, limit if canary_style == "mislabelled" else None, what="canaries"):
        raise DPValueError(too_few)
    if canary_style == "mislabelled" and check_int(canaries, "canaries", minimum=MIN_CANARIES) > limit:
        raise DPValueError(too_few_test_rows(canaries, limit, what="canaries"))
    m = check_int(canaries, "canaries", minimum=MIN_CANARIES, maximum=limit)
    rng = substream(seed, "input canaries")
    Xc, yc, pick = _input_canaries(split, m, canary_style, rng)
    included = rng.random(m) < 0.5
    # the model is also asked about the test rows no canary was made from: its accuracy on records it never saw
    rest = np.arange(split.X_test.shape[0])
    if pick is not None:
        rest = np.setdiff1d(rest, pick)
    y_rest = np.asarray(split.y_test)[rest]
    sub = Split(dataset=split.dataset, X_train=np.concatenate([split.X_train, Xc[included]]),
                y_train=np.concatenate([split.y_train, yc[included].astype(split.y_train.dtype)]),
                X_test=np.concatenate([split.X_test[rest], Xc]),
                y_test=np.concatenate([y_rest, yc.astype(split.y_test.dtype)]), seed=seed, test_size=split.test_size)
    # the learner judges itself against the trivial predictor on its test rows, which here hold the mislabelled
    # canaries too: that judgement is dropped and made again below on the test rows alone
    with ignored(DPCoreWarning, re.escape(spec.title) + _TRIVIAL_JUDGEMENT):
        res = run_learner(spec.name, sub, epsilon=spec.epsilon_to_aim_at(epsilon, params), delta=delta, seed=seed,
                          params=params, on_epoch=_epoch_progress(on_progress))
    if on_progress is not None:
        on_progress({"stage": "training", "done": 1, "total": 1})
    if res.test_outputs is None:
        raise DPValueError(f"learner {spec.name!r} releases no per-record outputs, so it cannot be audited here")
    values = np.asarray(res.test_outputs.values)
    if rest.size:
        unseen = Split(dataset=split.dataset, X_train=sub.X_train, y_train=sub.y_train, X_test=split.X_test[rest],
                       y_test=y_rest, seed=seed, test_size=split.test_size)
        on_unseen = dataclasses.replace(
            res, test_outputs=type(res.test_outputs)(values[: rest.size], res.test_outputs.kind),
            metrics=_metrics_on(split.task, values[: rest.size], y_rest, res, split.dataset), extras=dict(res.extras))
        judge_against_trivial(spec, unseen, on_unseen)
        for key in ("single_class", "no_better_than_trivial"):
            res.extras.pop(key, None)
            if key in on_unseen.extras:
                res.extras[key] = on_unseen.extras[key]
    outputs = type(res.test_outputs)(values[rest.size:], res.test_outputs.kind)
    scores = example_statistic(outputs, yc, loss=True)
    accuracy = balanced = None
    if split.task == "classification" and res.test_outputs.kind != "cluster" and rest.size:
        # answered as the run answers (by the declared class shares where it did), as its own metrics are
        judged = _metrics_on(split.task, values[: rest.size], y_rest, res, split.dataset)
        accuracy, balanced = judged["accuracy"], judged["balanced_accuracy"]
    claimed, note = membership_claim(res, spec.private)
    result = _audit_result(np.nan_to_num(scores, nan=0.0), included, attack="one-run input canaries",
                           epsilon=claimed, delta=bound_delta(claimed, res, delta), confidence=confidence,
                           seconds=time.perf_counter() - start, claim_note=note)
    true = np.asarray(split.y_test)[pick] if pick is not None else None
    return CanaryAudit(result, spec.name, split.dataset.name, "input", scores, included, accuracy, event=res.event,
                       records=Xc, taught=yc, true_labels=true, balanced_accuracy=balanced,
                       neighbouring=res.neighbouring, unit=res.unit,
                       run_epsilon=res.epsilon if spec.private else math.inf, run_delta=float(res.delta))


#: The start of the learner's own judgement against the trivial predictor (after its title), made on its test rows
#: (dpcore.learners.judge_against_trivial).
_TRIVIAL_JUDGEMENT = (r"( predicts the single class | is no more accurate on the test rows |: its test error is no "
                      r"|, answering by the declared class shares, finds each class no better )")


def _metrics_on(task: str, values: np.ndarray, y: np.ndarray, res: Any = None, dataset: Any = None) -> dict:
    """The metrics the learner's judgement reads, on the test rows alone, answered by the run's rule
    (:func:`dpcore.learners.decision.answers_by_rule`)."""
    if task == "classification":
        if values.ndim != 2:
            return {}
        answers = answers_by_rule(values, res, dataset) if res is not None else values.argmax(axis=1)
        return {"accuracy": float(np.mean(answers == y)), "balanced_accuracy": balanced_accuracy(y, answers)}
    return {"mse": float(np.mean((values.reshape(len(y), -1)[:, 0] - y) ** 2))}


def _epoch_progress(on_progress: ProgressCallback | None):
    """The learner's per-epoch callback as audit progress ("epochs"), or None."""
    if on_progress is None:
        return None

    def epoch(info: Mapping[str, Any]) -> None:
        if "epoch" in info and "epochs" in info:
            on_progress({"stage": "training", "done": int(info["epoch"]), "total": int(info["epochs"])})
    return epoch
