"""Membership inference against any registered learner, trained for real.

The attacker's universe is a pool of records (the training rows of the seed's split).
Every record joins the attacked ("target") model's training set by an independent fair
coin; the model is then asked about every record of the pool, exactly as a black-box
attacker who can query it would. Two attacks turn the answers into a membership score:

* the **loss-threshold** attack (Yeom et al. 2018): a record the model fits better than
  usual was probably trained on (score = minus its loss);
* **LiRA** (Carlini et al. 2022): K shadow models, trained by the same learner with the
  same knobs on fresh random halves of the pool, show how each record's logit-scaled
  confidence is distributed when it is IN and when it is OUT; the score is the
  likelihood ratio of the target's confidence under the two Gaussians (online), or how
  far it sits above the OUT Gaussian (offline).

Because membership was decided by independent fair coins before training, the attack's
guesses on its most and least confident records give a valid epsilon lower bound from
this one training run (Steinke, Nasr & Jagielski 2023, Theorem 5.2; at delta = 0 it is
the one-sided Clopper-Pearson limit on the accuracy of the guesses, Bonferroni-corrected
over the guess counts tried), with the run's delta accounted.

References
----------
Yeom, Giacomelli, Fredrikson, Jha. Privacy risk in machine learning: analyzing the
connection to overfitting. IEEE CSF 2018.
Carlini, Chien, Nasr, Song, Terzis, Tramèr. Membership inference attacks from first
principles. IEEE S&P 2022.
Steinke, Nasr, Jagielski. Privacy auditing with one (1) training run. NeurIPS 2023.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..datasets import Dataset, Split, load_dataset, train_test_split
from ..datasets.registry import TEST_SIZE
from ..defaults import DELTA
from ..exceptions import DPValueError
from ..learners import RunResult, TestOutputs, get_learner, run_learner
from ..learners.decision import answers_by_rule
from ..rng import substream, substream_seed
from ..types import ArrayLike
from ..validation import check_int
from .attacks import PROBABILITY_FLOOR, lira_offline_scores, lira_online_scores, logit_confidence
from .bounds import check_confidence
from .one_run import one_run_audit
from .result import AuditResult
from .roc import DEFAULT_FPRS, roc_curve

__all__ = ["ATTACKS", "DEFAULT_POOL_SIZE", "DEFAULT_SHADOWS", "MIN_POOL_SIZE", "POOL_SIZES", "MembershipAudit",
           "example_statistic", "membership_audit", "membership_claim", "pool_capacity"]

#: Black-box membership attacks on a learner.
ATTACKS = ("loss", "lira-online", "lira-offline")
#: Records in the attacker's pool (half of them members) that the page offers; the page and the ``audit``
#: command start from :data:`DEFAULT_POOL_SIZE`.
POOL_SIZES = (200, 400, 1000, 2000, 4000)
DEFAULT_POOL_SIZE = 1000
#: LiRA's shadow models (Carlini et al. 2022) unless told otherwise: the Attack page's slider and ``audit --shadows``
#: start from it.
DEFAULT_SHADOWS = 16
#: From this many shadow models LiRA fits each record's own IN and OUT variances (32 models each), below it one
#: variance pooled over the records: Carlini et al. (2022) pool it ("fixed variance") when the shadow models are few
#: (fewer than 64), and fit each example's own when they are many.
LIRA_OWN_VARIANCE_SHADOWS = 64
#: The smallest pool an attack is run on: about 25 members and 25 non-members. Below it the model is trained on a
#: handful of rows and the attack's rates move in steps of several percent.
MIN_POOL_SIZE = 50
#: The fewest rows whose split keeps :data:`MIN_POOL_SIZE` for training (the attacker's pool is drawn from them).
MIN_POOL_ROWS = math.ceil(MIN_POOL_SIZE / (1 - TEST_SIZE))
#: Progress callback: ``{"stage": "target" | "shadow", "done": i, "total": n}``.
ProgressCallback = Callable[[Mapping[str, Any]], None]


def example_statistic(outputs: TestOutputs, y: ArrayLike, *, loss: bool = False) -> np.ndarray:
    """The per-record statistic an attacker reads off the model's answers (higher = fits better).

    * class probabilities: minus the cross-entropy of the true label (``loss=True``, Yeom
      et al.) or the logit-scaled confidence log p_y - log(1 - p_y) (Carlini et al.);
    * released scores (decision values, noisy softmax vectors): the true label's margin
      over the best other class;
    * clusters: minus the squared distance to the nearest released centre;
    * regression values: minus the squared error.
    """
    v = outputs.values
    if outputs.kind == "value":
        return -(np.asarray(y, dtype=float) - v) ** 2
    if outputs.kind == "cluster":
        return v.max(axis=1)
    lab = np.asarray(y, dtype=np.int64)
    if lab.size and (lab.min() < 0 or lab.max() >= v.shape[1]):
        raise DPValueError(f"labels must be classes 0..{v.shape[1] - 1} of the model's outputs")
    rows = np.arange(lab.size)
    if outputs.kind == "probability":
        if loss:
            return np.log(np.clip(v[rows, lab], PROBABILITY_FLOOR, 1.0))
        return logit_confidence(np.clip(v, 0.0, 1.0), lab)
    others = v.copy()
    others[rows, lab] = -np.inf
    return v[rows, lab] - others.max(axis=1)


@dataclass(frozen=True, eq=False)
class MembershipAudit:
    """A membership attack on a learner trained for real, and what it certifies.

    Attributes
    ----------
    result : AuditResult
        ROC, AUC, TPR at low FPR, advantage and the epsilon lower bound.
    learner, dataset : str
    scores : ndarray, shape (n_pool,)
        The attack's score of every pool record (higher = "member").
    members : ndarray of bool, shape (n_pool,)
        Which pool records the target model was trained on.
    pool_index : ndarray of int
        Row of each pool record in the split's training rows (``X_pool`` below).
    X_pool, y_pool : ndarray
        The pool's records, for showing the most exposed ones.
    target_accuracy : float or None
        The target model's accuracy on the pool records it did NOT train on (its
        utility on fresh data); None for regression.
    target : RunResult
        The attacked run (its ``event`` and ``neighbouring`` give the theoretical limits).
    shadows : int
    """

    result: AuditResult
    learner: str
    dataset: str
    scores: np.ndarray = field(repr=False)
    members: np.ndarray = field(repr=False)
    pool_index: np.ndarray = field(repr=False)
    X_pool: np.ndarray = field(repr=False)
    y_pool: np.ndarray = field(repr=False)
    target_accuracy: float | None
    target: RunResult = field(repr=False)
    shadows: int = 0

    @property
    def event(self):
        """The attacked run's dp_accounting event (None if not private): its theoretical limits."""
        return self.target.event

    def most_exposed(self, k: int = 8) -> np.ndarray:
        """Pool positions of the k members the attack is most sure of, most exposed first."""
        idx = np.flatnonzero(self.members)
        return idx[np.argsort(-self.scores[idx], kind="stable")][:k]


def refuse_shuffled_batches(private: bool, params: Mapping[str, Any] | None) -> None:
    """Refuse to audit a private run on shuffled batches (``sampling="shuffle"``): its epsilon is accounted for one
    record replaced (:func:`dpcore.accounting.shuffled_dpsgd_event`), while these audits put a record (or canary)
    in or leave it out, a question that epsilon does not bound; their lower bound would be compared with a claim
    about other neighbours."""
    if private and (params or {}).get("sampling") == "shuffle":
        raise DPValueError("the audits test whether one record was in the training set (added or removed), but a "
                           "run on shuffled batches (sampling='shuffle') has its epsilon for one record replaced, "
                           "which does not bound that: audit it with sampling='poisson'")


def membership_claim(run: RunResult, private: bool = True) -> tuple[float, str]:
    """The epsilon ``run``'s guarantee gives for what a membership audit tests, one whole record added or removed,
    and why where that is not the run's own: ``(run.epsilon, "")`` for a run protecting whole records against adding
    or removing one; otherwise ``(inf, reason)``, so that no audit result is read against a claim about other
    neighbours (a lower bound above it would refute nothing, one below it would suggest a protection the run does not
    give). A run with no guarantee (``private=False``) claims infinity with no reason needed; a finite ε that declares
    no relation is held to that ε, so a learner that claims an ε and says nothing else is still caught."""
    from ..accounting.neighbouring import Neighbouring

    eps = float(run.epsilon)
    if not private or not math.isfinite(eps):
        return math.inf, ""
    if run.neighbouring is None:  # a finite ε with no relation declared is held to that ε (the audit's strict side)
        return eps, ""
    from ..teaching.verdict import epsilon_text

    shown = epsilon_text(eps)  # rounded up, as every ε spent is shown (":.3g" wrote 1.2349 as 1.23)
    if run.unit != "records":
        from ..accounting.neighbouring import UNIT_SAID

        if run.unit == "clients":
            why = (f"its ε = {shown} protects each client's whole data; a record added or removed changes what one "
                   "client holds, which that ε does not bound record by record")
        else:  # a part of each record (its label, its image): the rest is used as it is
            what = UNIT_SAID.get(run.unit, f"each record's {run.unit}")
            why = (f"its ε = {shown} protects only {what} (the rest of each record is used as it is), so whether a "
                   "record was in the training set at all is not covered")
        return math.inf, why + ": the attack is read against no claim (∞)"
    if Neighbouring.of(run.neighbouring) is not Neighbouring.ADD_REMOVE:
        return math.inf, (f"its ε = {shown} protects against one record replaced by another (the number of rows "
                          "stays the same); whether a record was in the training set changes that number, which the "
                          "ε does not cover: the attack is read against no claim (∞)")
    return eps, ""


def balanced_membership(shadows: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """A (shadows, n) IN/OUT design: every record IN for exactly half the shadows, every shadow on exactly n/2.

    Carlini et al. train each shadow on a random half so that every example has IN and
    OUT models; making the halves exact also gives every shadow the same training-set
    size, so a learner that calibrates its noise to epsilon solves one (cached)
    calibration for all of them. Needs an even ``shadows`` dividing ``n``: record j (in a
    random order) is IN for the cyclic block of shadows starting at j mod shadows.

    >>> m = balanced_membership(4, 8, np.random.default_rng(0))
    >>> m.sum(axis=0).tolist(), m.sum(axis=1).tolist()
    ([2, 2, 2, 2, 2, 2, 2, 2], [4, 4, 4, 4])
    """
    if shadows % 2 or n % shadows:
        raise DPValueError(f"a balanced design needs an even number of shadows dividing the pool, got "
                           f"{shadows} shadows and {n} records")
    start = rng.permutation(n) % shadows
    offset = (np.arange(shadows)[:, None] - start[None, :]) % shadows
    return rng.permutation(offset < shadows // 2)  # shuffle the shadows too


def pool_capacity(data: "str | Dataset") -> int:
    """The most records the attacker's pool can hold on ``data``: its training rows, from which the pool is drawn.
    A larger ``pool_size`` gives the same audit as this one."""
    return train_test_split(load_dataset(data) if isinstance(data, str) else data, seed=0).y_train.size


def too_small_a_pool(train_rows: int, rows: int) -> str:
    """Why data whose split holds ``train_rows`` training rows (of ``rows``) cannot give an attacker's pool of
    :data:`MIN_POOL_SIZE`, and what to change.

    >>> print(too_small_a_pool(3, 4))
    pool_size must be at least 50, and the attacker's pool is drawn from the training rows: this data has 4 rows, \
3 of them for training (the rest held out for testing); use data with at least 67 rows
    """
    return (f"pool_size must be at least {MIN_POOL_SIZE}, and the attacker's pool is drawn from the training rows: "
            f"this data has {rows} row{'s' if rows != 1 else ''}, {train_rows} of them for training (the rest held "
            f"out for testing); use data with at least {MIN_POOL_ROWS} rows")


def _pool(data: "str | Dataset", *, seed: int, pool_size: int | None) -> tuple[Split, np.ndarray]:
    split = train_test_split(load_dataset(data) if isinstance(data, str) else data, seed=seed)
    n = split.X_train.shape[0]  # pool_capacity(data): the split's sizes do not depend on the seed
    if n < MIN_POOL_SIZE:
        raise DPValueError(too_small_a_pool(n, split.y_train.size + split.y_test.size))
    if pool_size is None or pool_size >= n:
        return split, np.arange(n)
    pool_size = check_int(pool_size, "pool_size")
    if pool_size < MIN_POOL_SIZE:
        raise DPValueError(f"pool_size must be at least {MIN_POOL_SIZE}, got {pool_size}: the model trains on about "
                           "half the pool, and a smaller pool leaves it a handful of rows and the attack too few "
                           f"records to measure a rate; give pool_size {MIN_POOL_SIZE} or more")
    return split, np.sort(substream(seed, "pool").choice(n, size=pool_size, replace=False))


def _fit_on(spec_name: str, split: Split, pool: np.ndarray, members: np.ndarray, *, epsilon: float, delta: float,
            seed: int, params: Mapping[str, Any] | None) -> RunResult:
    """Train ``spec_name`` on the pool's members and query it on the whole pool (its 'test' rows)."""
    X, y = split.X_train[pool], split.y_train[pool]
    if not members.any():
        raise DPValueError("no pool record was drawn as a member; use a larger pool_size")
    sub = Split(dataset=split.dataset, X_train=X[members], y_train=y[members], X_test=X, y_test=y, seed=seed,
                test_size=split.test_size)
    res = run_learner(spec_name, sub, epsilon=get_learner(spec_name).epsilon_to_aim_at(epsilon, params), delta=delta,
                      seed=seed, params=params)
    if res.test_outputs is None:
        raise DPValueError(f"learner {spec_name!r} releases no per-record outputs, so it cannot be attacked here")
    return res


def _target_accuracy(res: RunResult, y_pool: np.ndarray, members: np.ndarray, dataset: Any = None) -> float | None:
    """The target's accuracy on the pool's non-members, answered by the run's own rule (argmax, or the dataset's
    declared class shares where the run answered by them)."""
    if res.task != "classification" or res.test_outputs.kind == "cluster":
        return None
    pred = answers_by_rule(res.test_outputs.values, res, dataset) if dataset is not None else \
        res.test_outputs.values.argmax(axis=1)
    out = ~members
    return float(np.mean(pred[out] == y_pool[out])) if out.any() else None


def membership_audit(
    learner: str,
    data: "str | Dataset",
    *,
    epsilon: float,
    delta: float = DELTA,
    params: Mapping[str, Any] | None = None,
    attack: str = "loss",
    shadows: int = DEFAULT_SHADOWS,
    pool_size: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    on_progress: ProgressCallback | None = None,
) -> MembershipAudit:
    """Attack ``learner`` trained on a random half of a pool of records; bound its epsilon from below.

    Parameters
    ----------
    learner : str
        Any registered learner (``python -m dpcore train --list``).
    data : str or Dataset
    epsilon, delta : float
        The target's privacy budget (ignored by non-private learners).
    params : mapping, optional
        The learner's knobs; the shadow models use the same.
    attack : {"loss", "lira-online", "lira-offline"}
    shadows : int
        LiRA's shadow models, an even number from 4 to 256 (ignored by the loss attack). Each record is IN for half.
        Below :data:`LIRA_OWN_VARIANCE_SHADOWS` the Gaussians share one variance pooled over the records, from it on
        each record has its own (Carlini et al. 2022).
    pool_size : int, optional
        Records in the attacker's universe (default: all training rows of the split).
    confidence : float
        The lower bound holds with this probability.
    seed : int
        Seeds the split, the membership coins and every model's noise.
    on_progress : callable, optional
        Called after the target and after each shadow.

    Returns
    -------
    MembershipAudit

    Examples
    --------
    >>> a = membership_audit("non-private", "iris", epsilon=1.0, pool_size=60, seed=0)
    >>> a.result.n_members + a.result.n_nonmembers
    60
    """
    if attack not in ATTACKS:
        raise DPValueError(f"attack must be one of {', '.join(ATTACKS)}, got {attack!r}")
    confidence = check_confidence(confidence)
    spec = get_learner(learner)
    refuse_shuffled_batches(spec.private, params)
    start = time.perf_counter()
    split, pool = _pool(data, seed=seed, pool_size=pool_size)
    rng = substream(seed, "membership")  # the coins and the shadows' halves; the pool and each shadow have their own
    report = on_progress or (lambda info: None)
    n_shadows = 0 if attack == "loss" else check_int(shadows, "shadows", maximum=256)
    if attack != "loss" and n_shadows < 4:  # 2 shadows failed after training them: "a fixed variance needs some
        # example with at least two IN shadow models", naming neither the shadows nor what to give
        raise DPValueError(f"shadows must be at least 4 for LiRA, got {n_shadows}: each record is IN for half of the "
                           "shadows and OUT for the other half, and the variance pooled over the records (Carlini et "
                           "al. 2022, fixed variance) needs records IN, and OUT, for two shadows or more")
    if n_shadows % 2:
        raise DPValueError(f"shadows must be even (each record is IN for exactly half of them), got {n_shadows}")
    if n_shadows > pool.size:
        cap, larger = pool.size - pool.size % 2, pool.size < split.X_train.shape[0]
        raise DPValueError(f"shadows must be <= {cap}, got {n_shadows}: every record is IN for exactly half the "
                           "shadows, so the pool is cut to a multiple of their number, and a pool of "
                           f"{pool.size} records holds none; give shadows {cap} or fewer"
                           + (", or a larger pool_size" if larger else ""))
    if n_shadows:  # a pool of a multiple of the shadow count: see balanced_membership
        pool = pool[: pool.size - pool.size % n_shadows]
    y_pool = split.y_train[pool]
    members = rng.random(pool.size) < 0.5
    target = _fit_on(spec.name, split, pool, members, epsilon=epsilon, delta=delta, seed=seed, params=params)
    report({"stage": "target", "done": 1, "total": 1 + n_shadows})
    if attack == "loss":
        scores = example_statistic(target.test_outputs, y_pool, loss=True)
    else:
        target_stat = example_statistic(target.test_outputs, y_pool)
        inside = balanced_membership(n_shadows, pool.size, rng)
        stats = np.empty((n_shadows, pool.size))
        for k in range(n_shadows):
            res = _fit_on(spec.name, split, pool, inside[k], epsilon=epsilon, delta=delta,
                          seed=substream_seed(seed, "shadow", k), params=params)
            stats[k] = example_statistic(res.test_outputs, y_pool)
            report({"stage": "shadow", "done": k + 2, "total": 1 + n_shadows})
        # Carlini et al. fit one variance pooled over the records with few shadow models, each record's own from
        # about 64 on, where it has enough IN and OUT models to estimate it
        score_fn = lira_online_scores if attack == "lira-online" else lira_offline_scores
        scores = score_fn(stats, inside, target_stat, fixed_variance=n_shadows < LIRA_OWN_VARIANCE_SHADOWS)
    scores = np.nan_to_num(np.asarray(scores, dtype=float), nan=0.0, posinf=1e300, neginf=-1e300)
    claimed, note = membership_claim(target, spec.private)
    result = _audit_result(scores, members, attack=attack, epsilon=claimed, delta=bound_delta(claimed, target, delta),
                           confidence=confidence, seconds=time.perf_counter() - start, claim_note=note)
    return MembershipAudit(result=result, learner=spec.name, dataset=split.dataset.name, scores=scores,
                           members=members, pool_index=pool, X_pool=split.X_train[pool], y_pool=y_pool,
                           target_accuracy=_target_accuracy(target, y_pool, members, split.dataset), target=target,
                           shadows=n_shadows)


def bound_delta(claimed: float, run: RunResult, asked: float) -> float:
    """The δ an audit's lower bound on ε is read at: the run's own δ where it claims a finite ε (the bound tests that
    claim), else the δ the audit was asked for. A run with no guarantee (a non-private twin, ε = ∞, δ = 0) is read at
    the δ of the private runs beside it: read at its δ = 0 the same attack proved more (the one-run bound of Steinke,
    Nasr & Jagielski 2023, Theorem 5.2, shrinks as δ grows), so the twin's reading and the most any attack can prove
    on the same records differed from the private run's (ε ≥ 3.95 beside 3.92 on one Attack page's 500 records)."""
    return float(run.delta) if math.isfinite(claimed) else float(asked)


def _audit_result(scores: np.ndarray, included: np.ndarray, *, attack: str, epsilon: float, delta: float,
                  confidence: float, seconds: float, claim_note: str = "") -> AuditResult:
    """ROC summary of the scores and Steinke et al.'s one-run epsilon lower bound (membership by fair coins)."""
    t0 = time.perf_counter()
    roc = roc_curve(scores[included], scores[~included])
    bound = one_run_audit(scores, included, delta=float(delta), confidence=confidence)
    return AuditResult(
        attack=attack, epsilon=float(epsilon), delta=float(delta), epsilon_lower_bound=bound.epsilon_lower_bound,
        confidence=confidence, auc=roc.auc, tpr_at_fpr=roc.tpr_at_fprs(DEFAULT_FPRS), advantage=roc.advantage,
        n_members=roc.n_members, n_nonmembers=roc.n_nonmembers, fpr=roc.fpr, tpr=roc.tpr,
        seconds=seconds + time.perf_counter() - t0, bound_method="one-run-coins", claim_note=claim_note,
    )
