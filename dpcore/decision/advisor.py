"""The ε advisor: the smallest ε that meets a data owner's need, with its uncertainty, its risk and its caveats.

The owner states what the model must do (:class:`Need`: "within 2 points of the non-private model", "accuracy at
least 0.80", for regression an R² or MSE target) and the ε range they could accept. :func:`advise` sweeps ε over that
range with several seeds (:func:`dpcore.sweep.run_sweep`, its cache included) and :func:`judge` reads the answer off
the sweep:

* **How a point meets the need.** Each seed draws its own split and its own noise, so the seeds' spread is what a
  fresh run would vary by (with secure noise the split stays at seed 0 and the seeds differ in their noise only;
  a level of accuracy the test rows' own luck leaves in doubt is then said as a caution). A point meets the need
  when the one-sided ``confidence`` *prediction* bound of a new run does (mean − t·s·√(1 + 1/n) for accuracy and
  R², mean + t·s·√(1 + 1/n) for MSE; t from Student's t with n − 1 degrees of freedom): the model the owner trains
  once at that ε, not only the average of many, meets it about that often. With one seed there is no spread to
  judge by: the bound is the single run's score, and the headline says that run's score and that how often a
  fresh run meets the need is not measured.
* **The smallest ε.** The smallest ε of the range from which every larger ε tried meets the need too, so that a lucky
  point below a failing one is not recommended. Across learners the smallest such ε wins.
* **Risk beside it.** The verdict band (:mod:`dpcore.teaching.verdict`), the published deployments nearest to it, and,
  when asked, a membership attack on a model trained at that ε (the loss-threshold attack, Yeom et al. 2018, bounded by
  Steinke, Nasr & Jagielski 2023): the ε it proves from below and the share of members caught at 1 % false alarms.
* **Selection is a release.** Every curve was computed on the owner's private rows, so choosing ε by looking at them
  leaks too. :func:`selection_note` says so and gives the remedies: choose on public data or rows set aside for it,
  or private selection (Liu & Talwar 2019; Papernot & Steinke 2022), with the repeat-and-select ε of this search.

References
----------
Yeom, Giacomelli, Fredrikson, Jha. Privacy risk in machine learning. IEEE CSF 2018.
Steinke, Nasr, Jagielski. Privacy auditing with one (1) training run. NeurIPS 2023.
Liu, Talwar. Private selection from private candidates. STOC 2019.
Papernot, Steinke. Hyperparameter tuning with Renyi differential privacy. ICLR 2022.
van Erven, Harremoës. Rényi divergence and Kullback-Leibler divergence. IEEE Trans. Inf. Theory 2014 (Theorem 13:
joint quasi-convexity, so a candidate that draws its ε from a grid is no worse than the largest ε of the grid).
Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk minimization. JMLR 2011 (excess risk of
order d / (n ε): more rows or fewer features buy what a larger ε buys).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..defaults import DELTA
from ..exceptions import DPCoreError, DPValueError
from ..teaching.verdict import comparison, confidence_text, epsilon_text, neighbours, verdict
from ..validation import check_real

#: The ε range an owner is offered first: the verdict's strong band up to the top of its weak one.
ADVISOR_RANGE = (0.1, 10.0)
#: ε values tried in the range (log-spaced), and seeds per value: five seeds give a spread a prediction bound can use
#: (Student's t with 4 degrees of freedom is 1.53 at 90 %; with 2 it is 1.89).
ADVISOR_POINTS = 7
ADVISOR_SEEDS = 5
#: The need an owner is offered first: within this much of the non-private model, in the headline metric. At 5 points
#: the advisor's default sweep answers on every registry classification set (``python -m dpcore report --dataset X
#: --need "within 5 points"``: breast cancer and wine ε 4.64, MNIST 5k 2.15, Adult 0.1, iris and faces 10, digits
#: 4.64), and on three quarters of their rows the answer holds on the held-out quarter (``python
#: bench/advisor_check.py --defaults``: breast cancer, digits, MNIST 5k, Adult; the sets under 150 rows get none). At 2
#: points only Adult gets an answer, so the Trade-off explorer opened on a refusal. Any gap can be typed.
ADVISOR_GAP = 0.05
#: A majority class at least this common makes accuracy a poor judge (95/5: always answering it scores 0.95).
COMMON_CLASS = 0.8
#: How often a fresh run at the recommended ε must meet the need (one-sided prediction bound).
ADVISOR_CONFIDENCE = 0.9
#: A test part of fewer rows than this gets the caution of :func:`_few_test_rows` beside a recommendation: each row
#: then moves accuracy by a point or more, more than the seeds' spread the prediction bound measures.
FEW_TEST_ROWS = 100
#: The false-alarm rate at which the attack's catch is reported.
ATTACK_FPR = 0.01
#: Records in the attacker's pool (half of them members): the Attack page's default.
ATTACK_POOL = 1000

_KINDS = ("within", "at_least", "at_most")
_METRICS = {"classification": ("accuracy", "balanced_accuracy"), "regression": ("r2", "mse")}
_HIGHER = {"accuracy": True, "balanced_accuracy": True, "r2": True, "mse": False}
_LABEL = {"accuracy": "accuracy", "balanced_accuracy": "balanced accuracy", "r2": "R²", "mse": "MSE",
          "rare_class_recall": "rarest class found (its recall)"}
#: Metrics that are shares (at most 1): a gap in them is said in points, and a level above 1 is a percentage.
_SHARES = ("accuracy", "balanced_accuracy", "r2")
#: Metrics whose gaps are said in points (a gap of R² is said as a number).
_POINTS = ("accuracy", "balanced_accuracy")


@dataclass(frozen=True)
class Need:
    """What the model must do.

    ``kind`` "within": at most ``amount`` below the non-private model (above it for MSE), in the metric's units
    (0.02 accuracy = 2 points); "at_least": the metric at least ``amount``; "at_most": at most ``amount`` (MSE).
    """

    kind: str
    metric: str
    amount: float

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise DPValueError(f"need kind must be one of {', '.join(_KINDS)}, got {self.kind!r}")
        if self.metric not in _HIGHER:
            raise DPValueError(f"need metric must be accuracy, balanced_accuracy, r2 or mse, got {self.metric!r}")
        amount = float(self.amount)
        if not math.isfinite(amount) or (self.kind == "within" and amount < 0):
            raise DPValueError(f"need amount must be a finite number (a gap ≥ 0 for 'within'), got {self.amount!r}")
        if self.kind == "at_least" and not _HIGHER[self.metric]:
            raise DPValueError("an MSE target is an upper limit: write mse<=VALUE")
        if self.kind == "at_most" and _HIGHER[self.metric]:
            raise DPValueError(f"{_LABEL[self.metric]} is better when higher: write {self.metric}>=VALUE")
        object.__setattr__(self, "amount", amount)

    @property
    def higher_is_better(self) -> bool:
        return _HIGHER[self.metric]

    def target(self, baseline: float | None) -> float:
        """The metric value a point must reach; "within" needs the non-private model's mean ``baseline``."""
        if self.kind != "within":
            return self.amount
        if baseline is None or not math.isfinite(baseline):
            raise DPValueError("'within' a gap of the non-private model needs a non-private baseline in the sweep")
        if not self.higher_is_better:
            return baseline + self.amount
        # a share (accuracy) is never below 0: a gap wider than the baseline asks for nothing, said as 0, not -0.05
        bounded = self.metric in ("accuracy", "balanced_accuracy")  # R² can be negative: left as it is
        return max(baseline - self.amount, 0.0) if bounded else baseline - self.amount

    def meets(self, value: float, target: float) -> bool:
        return value >= target if self.higher_is_better else value <= target

    def describe(self) -> str:
        """In words: "accuracy within 0.02 (2 points) of the non-private model"."""
        name = _LABEL[self.metric]
        if self.kind == "within":
            pts = f" ({100 * self.amount:.3g} points)" if self.metric in _SHARES else ""
            return f"{name} within {self.amount:g}{pts} of the non-private model"
        return f"{name} {'at least' if self.kind == 'at_least' else 'at most'} {self.amount:g}"

    def spelling(self) -> str:
        """How the command line writes it (``--need``)."""
        if self.kind == "within":
            return f"{self.metric}:within={self.amount:g}"
        return f"{self.metric}{'>=' if self.kind == 'at_least' else '<='}{self.amount:g}"


def classification_metrics(y=None) -> tuple[str, ...]:
    """What a classifier trained on labels ``y`` is judged by, the headline first: accuracy, or balanced accuracy
    where one class is at least :data:`COMMON_CLASS` of the rows (95/5: always answering it has accuracy 0.95 and
    balanced accuracy 0.5, so accuracy hides how the rarer classes are found). ``y=None``: accuracy first.

    >>> classification_metrics([0] * 19 + [1])
    ('balanced_accuracy', 'accuracy')
    >>> classification_metrics([0, 1, 1, 2])
    ('accuracy', 'balanced_accuracy')
    """
    if y is not None and np.size(y):
        _, counts = np.unique(np.asarray(y), return_counts=True)
        if counts.max() >= COMMON_CLASS * counts.sum():
            return ("balanced_accuracy", "accuracy")
    return ("accuracy", "balanced_accuracy")


def metric_name(metric: str, *, title: bool = False) -> str:
    """How a metric is named in a sentence ("accuracy", "balanced accuracy", "R²", "MSE"), or as a heading
    (``title``: "Accuracy", "Balanced accuracy"); a metric it does not know, by its own name."""
    name = _LABEL.get(metric, metric.replace("_", " "))
    return name[:1].upper() + name[1:] if title else name


def chart_metrics(task: str, y=None) -> list[str]:
    """The metrics a sweep of ``task`` on labels ``y`` can be drawn in, the first drawn by default: MSE and R² for
    regression; accuracy alone for classification, or balanced accuracy first and accuracy where one class is most
    of the rows (:func:`classification_metrics`, as the advisor judges it).

    >>> chart_metrics("classification", [0, 1, 1, 0]), chart_metrics("classification", [0] * 9 + [1])
    (['accuracy'], ['balanced_accuracy', 'accuracy'])
    """
    if task != "classification":
        return ["mse", "r2"]
    return list(classification_metrics(y)) if headline_metric(task, y) != "accuracy" else ["accuracy"]


def headline_metric(task: str, y=None) -> str:
    """The metric a need names when it names none: R² for regression; for classification accuracy, or balanced
    accuracy where one class is most of the labels ``y`` (:func:`classification_metrics`)."""
    return classification_metrics(y)[0] if task == "classification" else "r2"


def default_need(task: str, y=None) -> Need:
    """Within :data:`ADVISOR_GAP` (5 points) of the non-private model, in the headline metric
    (:func:`headline_metric`): accuracy (or balanced accuracy where one class is most of the labels ``y``) for
    classification, R² for regression."""
    return Need("within", headline_metric(task, y), ADVISOR_GAP)


_NAMES = r"balanced_accuracy|balanced accuracy|balanced|accuracy|acc|r2|r²|mse"
_ABS = re.compile(rf"^\s*({_NAMES})\s*(>=|≥|<=|≤)\s*([-+0-9.eE]+)\s*(%)?\s*$", re.IGNORECASE)
#: The metric names a level may be written as a percentage of ("accuracy>=80%").
_PERCENTABLE = ("accuracy", "acc", "balanced", "balanced accuracy", "balanced_accuracy", "r2", "r²")
_WITHIN = re.compile(rf"^\s*(?:({_NAMES})\s*:\s*)?within\s*[=: ]?\s*([0-9.eE+-]+)\s*(points?|%)?\s*$",
                     re.IGNORECASE)


def _need(text: str, kind: str, metric: str, amount: float) -> Need:
    try:
        return Need(kind, metric, amount)
    except DPValueError as exc:
        raise DPValueError(f"--need {text!r}: {exc}") from None


def parse_need(text: str, task: str, y=None) -> Need:
    """A need written as on the command line (``--need``); one that names no metric (``within=0.02``, or none at
    all) is in the headline metric for the labels ``y`` (:func:`headline_metric`).

    >>> parse_need("accuracy>=0.8", "classification")
    Need(kind='at_least', metric='accuracy', amount=0.8)
    >>> parse_need("within 2 points", "classification")
    Need(kind='within', metric='accuracy', amount=0.02)
    >>> parse_need("mse<=3000", "regression").describe()
    'MSE at most 3000'
    """
    if text is None or isinstance(text, str) and not text.strip():
        return default_need(task, y)
    if not isinstance(text, str):  # a bare 0.8 would otherwise be read as no need at all: the default gap
        raise DPValueError(f"need: expects text such as 'accuracy>=0.8' or 'within 2 points' (or a Need), got "
                           f"{text!r} ({type(text).__name__}); a number alone says neither the metric nor whether it "
                           "is a level or a gap")
    headline = headline_metric(task, y)
    alias = {"acc": "accuracy", "r²": "r2", "balanced": "balanced_accuracy", "balanced accuracy": "balanced_accuracy"}
    if m := _WITHIN.match(text):
        metric = alias.get((m.group(1) or headline).lower(), (m.group(1) or headline).lower())
        try:
            amount = float(m.group(2))
        except ValueError:
            raise DPValueError(f"--need {text!r}: {m.group(2)!r} is not a number") from None
        if m.group(3):  # "2 points" / "2 %" of a share
            amount /= 100
        need = _need(text, "within", metric, amount)
    elif m := _ABS.match(text):
        metric = alias.get(m.group(1).lower(), m.group(1).lower())
        try:
            amount = float(m.group(3))
        except ValueError:
            raise DPValueError(f"--need {text!r}: {m.group(3)!r} is not a number") from None
        if m.group(4):  # "accuracy>=80%": a percentage of a share
            if m.group(1).lower() not in _PERCENTABLE:
                raise DPValueError(f"--need {text!r}: a percentage is a share of accuracy, balanced accuracy or R²; "
                                   f"write the number alone, e.g. '{m.group(1)}{m.group(2)}{m.group(3)}'")
            amount /= 100
            if amount > 1:
                raise DPValueError(f"--need {text!r}: {_LABEL[alias.get(m.group(1).lower(), m.group(1).lower())]} is "
                                   "at most 100 %")
        need = _need(text, "at_least" if m.group(2) in (">=", "≥") else "at_most", metric, amount)
    else:
        raise DPValueError(f"--need {text!r} is not a need this advisor reads; write e.g. 'within=0.02' (2 points of "
                           "the non-private model), 'within 2 points', 'accuracy>=0.8', 'balanced>=0.7' (each "
                           "class counting equally), 'r2>=0.5' or 'mse<=3000'")
    if need.metric not in _METRICS.get(task, ()):
        raise DPValueError(f"--need {text!r}: a {task} model is judged by {' or '.join(_METRICS.get(task, ()))}, "
                           f"not {need.metric}")
    # accuracy is a share and R² at most 1: a level above 1 (or a gap of accuracy above 1) is a percentage written
    # as a number, and would sweep every ε only to say that nothing meets it
    if need.metric in _SHARES and need.amount > 1 and (need.kind == "at_least" or need.metric in _POINTS):
        share = need.amount / 100
        raise DPValueError(
            f"--need {text!r}: {_LABEL[need.metric]} is at most 1, so {need.amount:g} is out of reach; write a share, "
            + (f"e.g. 'within={share:g}' or 'within {need.amount:g} points'" if need.kind == "within" else
               f"e.g. '{need.metric}>={share:g}' for {need.amount:g} %"))
    # below the scale's floor: a share under 0 asks nothing every model (and always answering one class) does not
    # already meet, an MSE under 0 what no model reaches; either sweeps every ε for an answer the need decided
    if need.kind == "at_least" and need.metric in _POINTS and need.amount < 0:
        raise DPValueError(f"--need {text!r}: {_LABEL[need.metric]} is never below 0, so {need.amount:g} asks nothing; "
                           f"write a share from 0 to 1, e.g. '{need.metric}>=0.8', or a gap, e.g. 'within 2 points'")
    if need.kind == "at_most" and need.metric == "mse" and need.amount < 0:
        raise DPValueError(f"--need {text!r}: MSE is never below 0, so {need.amount:g} is out of reach; write an error "
                           "of 0 or more, e.g. 'mse<=3000'")
    return need


def prediction_bound(values: Sequence[float], *, confidence: float = ADVISOR_CONFIDENCE,
                     higher_is_better: bool = True) -> float:
    """The one-sided ``confidence`` prediction bound of one more run, from runs ``values`` (Student's t).

    >>> round(prediction_bound([0.80, 0.82, 0.84], confidence=0.9), 4)
    0.7765
    >>> prediction_bound([0.8])
    0.8
    """
    from scipy import stats

    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    if v.size == 0:
        return math.nan
    if v.size == 1:
        return float(v[0])
    spread = float(stats.t.ppf(confidence, v.size - 1)) * float(v.std(ddof=1)) * math.sqrt(1 + 1 / v.size)
    return float(v.mean() - spread) if higher_is_better else float(v.mean() + spread)


@dataclass(frozen=True, eq=False)
class Advice:
    """The advisor's answer, and everything a report needs to defend it.

    Attributes
    ----------
    need : Need
    epsilon_range : (float, float)
    confidence : float
    target : float
        The metric value a point had to reach (for "within", the non-private mean minus the gap).
    baseline, trivial : float or None
        The non-private model's and the trivial predictor's mean across seeds.
    points : DataFrame
        One row per (learner, ε in range): ``learner, epsilon, mean, std, n, bound, meets, epsilon_spent,
        over_budget, leaks, event`` (the str of the run's ``dp_accounting`` event). ``over_budget``: the runs spent
        more than ``epsilon`` (output perturbation's ε is per answer); such a point never meets the need.
    recommended : dict or None
        ``learner, epsilon, epsilon_tried, mean, std, n, bound, epsilon_spent, leaks, event, band, band_sentence,
        deployments``: ``epsilon`` is the larger of the ε tried (the grid value its runs were given) and what they
        spent, so it never reads below what the model spends;
        None when no ε in range meets the need.
    reasons, instead : list of str
        Why that ε; and, when none meets it, what would (grounded in what the sweep saw).
    attack : dict or None
        The membership attack at the recommended ε: ``attack, epsilon_lower_bound, confidence,
        caught_at_1pct`` (None when too few non-members to measure), ``auc``, ``model_accuracy``; or ``error``.
    selection : dict
        ``note`` (the text), ``runs_looked_at``, ``composition_epsilon`` at ``composition_delta`` (for a record
        replaced when the runs protect different neighbours; for what every run protects, ``composition_unit``, when
        they protect different things: infinite when nothing is protected by all) and ``private_selection_epsilon``.
    warnings : list of dict
        :func:`dpcore.sweep.table_warnings` of the sweep, leaks first.
    sweep : SweepResult
    """

    need: Need
    epsilon_range: tuple[float, float]
    confidence: float
    metric: str
    target: float
    baseline: float | None
    trivial: float | None
    points: pd.DataFrame
    recommended: dict | None
    reasons: list[str]
    instead: list[str]
    selection: dict
    warnings: list[dict]
    sweep: Any = field(repr=False)
    attack: dict | None = None

    @property
    def met(self) -> bool:
        return self.recommended is not None

    def headline(self) -> str:
        """One sentence: the answer."""
        if self.recommended is None:
            lo, hi = self.epsilon_range
            return f"No ε from {lo:g} to {hi:g} meets the need ({self.need.describe()})."
        r = self.recommended
        who = _title(r["learner"])
        if r.get("unit", "records") != "records":  # label DP, a federation: say it where the ε is read
            from ..accounting import UNIT_SAID

            who += f" (its ε protects {UNIT_SAID.get(r['unit'], r['unit'])} only)"
        trivial = ""
        if self.trivial is not None and math.isfinite(self.trivial):
            config = self.sweep.config
            said = f"{_trivial_words(config.task, config.trivial())} scores {self.trivial:{_fmt(self.metric)}}"
            trivial = (f"; beware: {said}, which meets it too" if self.need.meets(self.trivial, self.target)
                       else f"; {said}")
        if int(r["n"]) < 2:  # one run: its score, and no claim of how often a fresh run meets the need
            return (f"ε = {epsilon_text(r['epsilon'])} with {who}: {_LABEL[self.metric]} "
                    f"{r['mean']:{_fmt(self.metric)}} in its one run (one seed: how often a fresh run meets the need "
                    f"is not measured; run more seeds) (target {self.target:{_fmt(self.metric)}}{trivial}).")
        return (f"ε = {epsilon_text(r['epsilon'])} with {who}: {_LABEL[self.metric]} "
                f"{r['mean']:.3f} on average over {r['n']} seeds, and at least {r['bound']:.3f} in "
                f"{confidence_text(self.confidence)} of fresh runs "
                f"(target {self.target:.3f}{trivial}).") if self.need.higher_is_better else (
                f"ε = {epsilon_text(r['epsilon'])} with {who}: {_LABEL[self.metric]} "
                f"{r['mean']:.4g} on average over {r['n']} seeds, and at most {r['bound']:.4g} in "
                f"{confidence_text(self.confidence)} of fresh runs "
                f"(target {self.target:.4g}{trivial}).")

    def to_json_dict(self) -> dict:
        """The recommendation as plain JSON values (no record, no cell value of the data)."""
        def clean(v):
            if isinstance(v, (float, np.floating)):
                return float(v) if math.isfinite(v) else None
            if isinstance(v, (np.integer,)):
                return int(v)
            if isinstance(v, (np.bool_,)):
                return bool(v)
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v

        return clean({
            "need": {"kind": self.need.kind, "metric": self.need.metric, "amount": self.need.amount,
                     "text": self.need.describe()},
            "epsilon_range": list(self.epsilon_range),
            "confidence": self.confidence,
            "met": self.met,
            "headline": self.headline(),
            "target": self.target,
            "non_private": self.baseline,
            "trivial": self.trivial,
            "recommended": self.recommended,
            "reasons": self.reasons,
            "instead": self.instead,
            "attack": self.attack,
            "selection": self.selection,
            "points": self.points.to_dict("records"),
            "warnings": [{"message": w["message"], "learners": w["learners"], "leak": w["leak"]}
                         for w in self.warnings],
        })


def _fmt(metric: str) -> str:
    """How a value of ``metric`` is written: three decimals for a share, four figures for an MSE."""
    return ".4g" if metric == "mse" else ".3f"


def _title(name: str) -> str:
    from ..learners import learners

    spec = learners().get(name)
    return spec.title if spec is not None else name


def _event_text(text: str) -> str:
    """The str of a stored dp_accounting event (JSON in the sweep table), or "" when there is none."""
    from ..accounting import event_from_json

    if not isinstance(text, str) or not text:
        return ""
    try:
        return str(event_from_json(json.loads(text)))
    except (DPCoreError, ValueError, TypeError):
        return ""


def _points(table: pd.DataFrame, need: Need, lo: float, hi: float, confidence: float,
            reference: Callable[[str], tuple[float | None, pd.Series | None]],
            trivial: float | None = None) -> pd.DataFrame:
    """One row per (learner, ε in range): the seeds' mean and spread, the prediction bound and whether it meets.

    ``reference(learner)`` gives the non-private counterpart's mean and its score per seed. For a "within" need the
    bound is taken on the per-seed gap to it (the same seed is the same split), so the test split's own luck, which
    moves both models alike, does not count against the private one; it is shown added to the reference's mean.
    A point whose bound is no better than the ``trivial`` predictor's mean (the majority class, the mean) meets nothing:
    a model that learnt nothing is not what a need asks for, even when it is "within 2 points" of a non-private model
    that learnt nothing either.
    """
    from ..sweep.summary import OVERSPEND

    cols = ["learner", "epsilon", "mean", "std", "n", "bound", "target", "meets", "holds", "beats_trivial",
            "epsilon_spent", "over_budget", "leaks", "event", "unit"]
    swept = table[(table.role == "swept") & table.value.between(lo * (1 - 1e-9), hi * (1 + 1e-9))]
    rows = []
    for (name, value), g in swept.groupby(["learner", "value"], sort=False):
        vals = g[need.metric].astype(float).tolist()
        if need.kind == "within":
            base_mean, per_seed = reference(name)
            if base_mean is None or per_seed is None:
                raise DPValueError("'within' needs the non-private baseline: run the sweep with baselines")
            gaps = (g.set_index("seed")[need.metric].astype(float) - per_seed).dropna().tolist()
            bound = base_mean + prediction_bound(gaps, confidence=confidence, higher_is_better=need.higher_is_better)
            target = need.target(base_mean)
        else:
            bound = prediction_bound(vals, confidence=confidence, higher_is_better=need.higher_is_better)
            target = need.target(None)
        leaks = bool(g["leaks_privacy"].astype(bool).any()) if "leaks_privacy" in g else False
        mean = float(np.nanmean(vals))
        # useful: a fresh run beats the trivial predictor as often as it meets the need (the same bound)
        useful = trivial is None or not math.isfinite(trivial) or (bound > trivial if need.higher_is_better
                                                                    else bound < trivial)
        # a point drawn at ε = 0.1 whose runs spent 45 (output perturbation: ε per answer) keeps to no ε it would be
        # recommended at: it meets nothing
        # an ε not known (nan: a run whose accounting is lost) is no guarantee, infinity, as summarize() reads it: a
        # maximum that skipped it said the other runs' ε, and a point whose runs' ε were all nan was recommended at
        # the ε it was given
        spent = float(g["epsilon"].max(skipna=False))
        spent = math.inf if math.isnan(spent) else spent
        over = bool(spent > OVERSPEND * float(value))
        rows.append({"learner": name, "epsilon": float(value), "mean": float(np.nanmean(vals)),
                     "std": float(np.nanstd(vals, ddof=1)) if len(vals) > 1 else 0.0, "n": int(len(vals)),
                     "bound": bound, "target": target,
                     "meets": bool(useful and not over and np.isfinite(bound) and need.meets(bound, target)),
                     "holds": bool(useful and need.meets(mean, target)),
                     "beats_trivial": bool(useful), "epsilon_spent": spent, "over_budget": over, "leaks": leaks,
                     "event": _event_text(next((t for t in g.get("event", ()) if isinstance(t, str) and t), "")),
                     # what its ε protects: whole records, or less (label DP: the label; a federation: a client)
                     "unit": str(g["unit"].iloc[0] or "records") if "unit" in g else "records"})
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values(["learner", "epsilon"], kind="stable").reset_index(drop=True)


def _meeting(points: pd.DataFrame) -> list[pd.Series]:
    """Per learner the smallest ε whose bound meets the need and after which every larger ε tried meets it on
    average (``holds``), so that a lucky point below a dip is not the answer."""
    found = []
    for _, g in points.groupby("learner", sort=False):
        g = g.sort_values("epsilon").reset_index(drop=True)
        meets, holds = g["meets"].to_numpy(), g["holds"].to_numpy()
        for i in range(len(g)):
            if meets[i] and holds[i + 1:].all():
                found.append(g.iloc[i])
                break
    return found


def _smallest_meeting(points: pd.DataFrame, higher_is_better: bool = True) -> pd.Series | None:
    """The smallest ε across learners of :func:`_meeting` (ties: a learner that does not leak, then the better
    bound), among the learners whose ε protects whole records when one of them meets the need: an ε of label DP
    (the features used in the clear) or of a federation (a client) is not the same promise, and a smaller one of
    those does not beat a whole record's."""
    found = _meeting(points)
    if not found:
        return None
    return min(found, key=lambda r: (_unit_of(r) != "records", r.epsilon, bool(r.leaks),
                                     -r.bound if higher_is_better else r.bound))


def _unit_of(point: pd.Series) -> str:
    return str(point["unit"]) if "unit" in point and point["unit"] else "records"


def _passed_over(points: pd.DataFrame, best: pd.Series) -> list[str]:
    """A sentence for each learner that meets the need at a smaller ε than the answer but protects less than a
    whole record (so it is not the answer), or that is the answer and protects less."""
    from ..accounting import UNIT_SAID

    out = []
    if _unit_of(best) != "records":
        out.append(f"What this ε protects: {UNIT_SAID.get(_unit_of(best), _unit_of(best))} only, not whole records "
                   f"({_protects(best.learner)}); no learner protecting whole records met the need in this range.")
    for r in _meeting(points):
        if _unit_of(r) != "records" and r.learner != best.learner and r.epsilon < best.epsilon:
            out.append(f"Not the answer: {_title(r.learner)} meets the need from ε = {epsilon_text(r.epsilon)}, but "
                       f"its ε protects {UNIT_SAID.get(_unit_of(r), _unit_of(r))} only ({_protects(r.learner)}), a "
                       "smaller promise than a whole record's at the same ε.")
    return out


def _protects(name: str) -> str:
    """What a learner's ε protects, in its own words (the registry's)."""
    from ..learners import get_learner

    try:
        return get_learner(name).wording.protects
    except Exception:  # noqa: BLE001 - a learner of a provider that is gone: its name alone
        return name


def _mean_of(summ: pd.DataFrame, role: str, learner: str | None = None) -> tuple[str | None, float | None]:
    rows = summ[summ.role == role]
    if learner is not None and (rows.learner == learner).any():
        rows = rows[rows.learner == learner]
    if rows.empty:
        return None, None
    return str(rows.learner.iloc[0]), float(rows["mean"].iloc[0])


def selection_note(points: pd.DataFrame, table: pd.DataFrame, *, learner: str | None, delta: float,
                   epsilon: float | None = None) -> dict:
    """What choosing ε from these curves costs, and the remedies (see the module's docstring). ``learner`` and
    ``epsilon``: the learner and the ε recommended, the cost of looking set beside that ε."""
    from ..accounting import EpsilonDeltaDpEvent, event_from_json, repeat_and_select_epsilon
    from ..sweep.summary import (
        composition,
        composition_delta_text,
        composition_unit_text,
        leaked_runs,
        private_swept,
        spent_text,
    )

    swept = private_swept(table)  # a run without a guarantee makes the composition infinite, as it is
    runs = int(len(swept))
    # basic composition, the deltas adding up too; for a record replaced when the runs protect different neighbours
    # and for what every run protects (label DP beside whole records: each record's label; beside a federation: none)
    composed, composed_delta, replaced, unit = composition(swept)
    search, how = math.nan, "papernot-steinke"
    k = int(points[points.learner == learner].shape[0]) if learner is not None else 0
    if learner is not None and k:
        top = swept[swept.learner == learner].sort_values("epsilon")
        texts = [t for t in top["event"] if isinstance(t, str) and t] if "event" in top else []
        if leaked_runs(top).any():  # runs that leaked privacy besides their noise: no search of them has a guarantee
            texts = []
        if texts:
            event = event_from_json(json.loads(texts[-1]))
            try:  # a candidate that draws its ε from the grid is no worse than the grid's largest (quasi-convexity)
                search = repeat_and_select_epsilon(event, candidates=k, delta=delta or DELTA)
            except (DPCoreError, ValueError, TypeError):
                search = math.nan
            if not math.isfinite(search) and isinstance(event, EpsilonDeltaDpEvent) and not event.delta:
                # pure ε-DP candidates, which the Rényi accountant cannot repeat: Liu & Talwar (2019, Theorem 3.4)
                # bound the best of a geometric number of ε-DP runs by 3ε
                search, how = 3 * float(event.epsilon), "liu-talwar"

    # the figure first, beside the ε it is set against, in words a data owner reads; how it is counted after it
    against = ("any one run's ε" if learner is None else "the ε recommended" if epsilon is None
               else f"the ε = {epsilon_text(float(epsilon))} recommended")
    single = [float(e) for e in swept["epsilon"] if math.isfinite(float(e))] if runs else []
    reference = float(epsilon) if learner is not None and epsilon is not None else max(single, default=math.nan)
    # "far above" only where it is (two runs at ε 0.1 and 10 cost 10.1, not far above the 10 recommended)
    how_far = ("far above" if not math.isfinite(composed) or not math.isfinite(reference)
               or composed >= 2 * reference else "above" if spent_text(composed) != spent_text(reference)
               else "the same as")
    looking = ("Looking at it" if runs == 1 else "Looking at both of them" if runs == 2
               else f"Looking at all {runs} of them")
    counted = ("How it is counted: their mechanisms composed by dp_accounting's Rényi accountant, or their ε added "
               "up where that is smaller (Dwork & Roth 2014, Theorem 3.16)")
    if replaced and unit is not None:  # DP-SGD (add/remove) beside objective perturbation (replace-one)
        counted += ("; the runs protect different neighbours, so those protecting a record added or removed are "
                    "counted at twice their ε for a record replaced, read at a δ′ that keeps (1 + e^ε)δ′ within their "
                    "own δ (group privacy, Dwork & Roth 2014)")
    note = (
        f"Choosing ε from these curves is itself a release: the curves are {runs} model{'' if runs == 1 else 's'} "
        f"trained and scored on your private rows, and the choice depends on them. {looking} costs ε = "
        f"{spent_text(composed)}{composition_delta_text(composed_delta) if math.isfinite(composed) else ''}"
        f"{' for a record replaced' if replaced and unit is not None else ''}{composition_unit_text(unit)}, "
        f"{how_far} {against}: that is what your rows have given away to whoever sees the curves, whatever the ε of "
        f"the model you then release.\n\n{counted}.\n\nTwo remedies. (1) Choose on data whose exposure you "
        "accept: a "
        "public table of the same kind, or rows set aside for choosing and never released or trained on by the final "
        "model; then train once, at the chosen ε, on the rest (the final model's ε is then the one shown; the rows "
        "used to choose are not protected by the choice). (2) Private selection: run a random number of candidates "
        "and release only the best, each candidate's score measured privately or on held-out rows (Liu & Talwar "
        "2019: a geometric number of pure-ε candidates costs 3ε; Papernot & Steinke 2022: a Poisson number costs "
        "one run's Rényi DP plus a term growing with the logarithm of its mean).")
    if math.isfinite(search) and how == "liu-talwar":
        note += (f" For {_title(learner)}, whose runs are pure ε-DP, a geometric number of candidates over the {k} ε "
                 f"values of this range, each at an ε drawn from the range, with the best released, costs ε = "
                 f"{spent_text(search)} in all (three times the range's largest ε, Liu & Talwar 2019, Theorem 3.4).")
    elif math.isfinite(search):
        note += (f" For {_title(learner)} over the {k} ε values of this range, a Poisson number of candidates "
                 f"(mean {k}), each at an ε drawn from the range, with the best released, costs ε = "
                 f"{spent_text(search)} "
                 f"at δ = {delta or DELTA:g} in all (dp_accounting's repeat-and-select event of the range's largest "
                 "ε; a mixture of candidates is no worse than its worst, van Erven & Harremoës 2014).")
    return {"note": note, "runs_looked_at": runs, "composition_epsilon": composed, "composition_delta": composed_delta,
            "composition_unit": unit,
            "private_selection_epsilon": search, "private_selection": how if math.isfinite(search) else None,
            "candidates": k}


def overspent_reasons(points: pd.DataFrame) -> list[str]:
    """One sentence per learner whose points spent more than their ε (``over_budget``): why the advisor does not
    count them, with the ε they spent.

    >>> pts = pd.DataFrame({"learner": ["op", "op"], "epsilon": [0.1, 1.0], "epsilon_spent": [45.0, 450.0],
    ...                     "over_budget": [True, True]})
    >>> overspent_reasons(pts)[0][:96]
    'Not counted: op spends more than the ε it is given (given ε = 0.1, 1, its runs spend ε = 45, 450'
    """
    from ..sweep.summary import spent_text

    out = []
    if "over_budget" not in points:
        return out
    for name, g in points[points.over_budget].groupby("learner", sort=False):
        at = ", ".join(spent_text(e) for e in g.epsilon)
        spent = ", ".join(spent_text(e) for e in g.epsilon_spent)
        out.append(f"Not counted: {_title(name)} spends more than the ε it is given (given ε = {at}, its runs spend "
                   f"ε = {spent} in all), so it meets no need at the ε it was given.")
    return out


def _instead(points: pd.DataFrame, need: Need, target: float, *, baseline: float | None, trivial: float | None,
             config, n_rows: int | None, n_features: int | None) -> list[str]:
    """What would meet the need, from what the sweep saw (the need was met by no ε in range)."""
    name = _LABEL[need.metric]
    out: list[str] = overspent_reasons(points)  # said first; their points are no answer to look for either
    if out:
        points = points[~points.over_budget]
    if points.empty:
        return out + [f"No {'other ' if out else ''}private learner was swept inside the range: "
                      + ("pick another learner." if out else "widen the range or pick a learner.")]
    better = (lambda a, b: a > b) if need.higher_is_better else (lambda a, b: a < b)
    if not points["beats_trivial"].any():
        base = "" if baseline is None else (f" The non-private model reaches {name} {baseline:{_fmt(need.metric)}}" + (
            ", no better either: these columns do not predict the label here (with an imbalanced label, always "
            "answering the common class already scores this)." if not better(baseline, trivial) else "."))
        out.append(f"Nothing learnt: at every ε tried a fresh private model is not reliably better than the trivial "
                   "predictor "
                   f"({name} {trivial:{_fmt(need.metric)}}), so no ε meets a need, however it is worded.{base} More "
                   "informative columns, more rows, or a larger ε are what would change this.")
    useful = points[points.beats_trivial] if points["beats_trivial"].any() else points
    best = max(useful.itertuples(), key=lambda r: (r.bound - r.target) * (1 if need.higher_is_better else -1))
    target = best.target  # its own: a gap is measured to each learner's own non-private counterpart
    f = _fmt(need.metric)
    # a point whose mean meets the need while its bound does not: the seeds, not the ε, are what is missing. Said
    # first, of the smallest such ε: on Adult with two seeds DP-SGD met "within 2 points" on average from ε = 0.046
    # while the advice pointed only at objective perturbation's 0.808 at ε = 1
    hopeful = points[points.holds & ~points.meets].sort_values(["epsilon", "mean"], ascending=[True, False],
                                                                 kind="stable")
    if not best.meets and not hopeful.empty:
        h = hopeful.iloc[0]
        out.append(f"More seeds: {_title(h.learner)} meets the target on average from ε = "
                   f"{epsilon_text(h.epsilon)} ({name} {h['mean']:{f}} against the target {h.target:{f}}), but over "
                   f"its {int(h.n)} seed"
                   f"{'s' if h.n != 1 else ''} a fresh run is not sure to ({h.bound:{f}} at the "
                   f"{confidence_text(points.attrs.get('confidence', ADVISOR_CONFIDENCE))} bound); rerun with more "
                   "seeds (or more rows) before choosing from it.")
    if best.meets:  # it met somewhere, but a larger ε after it did not, even on average
        fails = points[(points.learner == best.learner) & (points.epsilon > best.epsilon) & ~points.holds]
        out.append(f"More seeds: {_title(best.learner)} met the target at ε = {epsilon_text(best.epsilon)} ({name} "
                   f"{best.bound:{f}} at the bound, target {target:{f}}) but not even on average at the larger ε = "
                   + ", ".join(epsilon_text(e) for e in fails.epsilon) + ", so the answer would rest on a point the "
                   "seeds do not settle; rerun with more seeds (or more rows) before relying on it.")
    elif best.beats_trivial:
        short = abs(target - best.bound)
        # "nearest at the bound", not "best": with few seeds a higher mean can have the lower bound
        out.append(f"A looser target: nearest the target at the bound is {_title(best.learner)} at ε = "
                   f"{epsilon_text(best.epsilon)}, {name} {best.mean:{f}} on average and {best.bound:{f}} at the "
                   f"{confidence_text(points.attrs.get('confidence', ADVISOR_CONFIDENCE))} bound, {short:.3g} short "
                   f"of the target {target:{f}}; a need of "
                   + (f"{name} within {need.amount + short:.3g} of the non-private model" if need.kind == "within"
                      else f"{name} {'≥' if need.higher_is_better else '≤'} {best.bound:{f}}") + " would be met there.")
    if baseline is not None and need.kind != "within" and not need.meets(baseline, target):
        out.append(f"Another learner or more informative columns: even the non-private model reaches only {name} "
                   f"{baseline:{f}}, so no ε can meet this target with these columns and these learners.")
    if need.meets(best.mean, target) and not need.meets(best.bound, target) and (best.meets or hopeful.empty):
        out.append(f"More seeds or more rows: at ε = {epsilon_text(best.epsilon)} the mean ({best.mean:{f}}) meets "
                   f"the target but the seeds spread by {best.std:.3g}, so a single run falls short too often; more "
                   "rows shrink "
                   "both the noise's effect and the spread.")
    top = points[points.learner == best.learner].sort_values("epsilon")
    if len(top) >= 2 and better(float(top["mean"].iloc[-1]), float(top["mean"].iloc[-2])):
        lo, hi = top["epsilon"].iloc[-2], top["epsilon"].iloc[-1]
        a, b = float(top["mean"].iloc[-2]), float(top["mean"].iloc[-1])
        # a rise within the seeds' spread is a tie (the page's "ties with" reads the same rule): it is no reason to
        # spend a larger ε
        spread = max(float(top["std"].iloc[-2]), float(top["std"].iloc[-1]))
        if abs(b - a) > spread:
            out.append(f"A larger ε: {_title(best.learner)}'s curve still rises at the top of the range (from "
                       f"{a:{f}} at ε = {epsilon_text(lo)} to {b:{f}} at ε = {epsilon_text(hi)}); the band above "
                       f"ε = {epsilon_text(hi)} is "
                       f"'{verdict(hi * 1.01).band.headline}'.")
        else:
            out.append(f"Not a larger ε: {_title(best.learner)}'s curve is flat at the top of the range ({a:{f}} at "
                       f"ε = {epsilon_text(lo)}, {b:{f}} at ε = {epsilon_text(hi)}, within the seeds' spread of "
                       f"{spread:.2g}), so more ε "
                       "is unlikely to close the gap.")
    if (need.metric == "balanced_accuracy" and config is not None and not isinstance(config.dataset, str)
            and getattr(config.dataset, "source", "") == "upload" and not getattr(config.dataset, "class_shares", ())):
        # on a 3,000-row 88/7/5 upload DP-SGD at ε 1 went from balanced accuracy 0.333 to about 0.57 by them, while
        # the advice named only more columns, more rows or a larger ε
        out.append("Declared class shares: on a label where one class is most rows, a model that gives class "
                   "probabilities (DP-SGD) often answers that class for every row; declare each class's share from "
                   "a published rate (Declared class shares, under the upload; --class-shares on the command line) "
                   "and it answers the class most likely relative to its share, at no privacy cost (Elkan 2001; "
                   "Saerens et al. 2002).")
    if n_rows is not None:
        out.append(f"More rows: the noise's cost to these learners falls roughly as 1/(n·ε) (Chaudhuri, Monteleoni & "
                   f"Sarwate 2011), so k times the {n_rows} rows at a given ε buys about what k times the ε buys "
                   "with these rows: read it off the curve.")
    # columns of a table, not an image's pixels: dropping pixels is no advice (the image learners' presets already
    # train on fixed features where that pays, e.g. DP-SGD's HOG on MNIST, Tramer & Boneh 2021)
    if n_features is not None and n_features > 4 and not (config is not None and config.is_image):
        own = config is not None and not isinstance(config.dataset, str) and getattr(config.dataset, "source", "") \
            == "upload"  # your file: the columns are yours to leave out
        out.append(f"Fewer features: the same bound grows with the number of columns (here {n_features}); dropping "
                   "columns that carry little signal leaves less to noise"
                   + (" (Columns to leave out, under the upload; --drop on the command line)." if own else "."))
    if config is not None and (others := _other_learners(config)):
        out.append("Another learner: not tried here: " + "; ".join(others[:5]) + ".")
    if trivial is not None and not better(best.mean, trivial) and points["beats_trivial"].any():
        out.append(f"Note: the best private point is no better than the trivial predictor ({trivial:{f}}): at this "
                   "range privacy costs all the utility.")
    return out


def _other_learners(config) -> list[str]:
    """The learners a sweep of ``config`` could have tried and did not, by title, each with what its ε protects when
    that differs from the swept learners' (label DP protects labels only, DP-FedAvg a client's whole data). Clustering
    learners are offered only beside clustering (a k-means run is no classifier for a data owner's need), and the
    others only beside the others."""
    from ..learners import get_learner
    from ..sweep.choices import sweepable

    swept = [get_learner(n) for n in config.learners]
    clustering = bool(swept) and all(s.family == "clustering" for s in swept)
    protects = {s.wording.protects for s in swept if s.private}
    out = []
    for name in sweepable(config.task, config.is_image, "epsilon"):
        spec = get_learner(name)
        if name in config.learners or (spec.family == "clustering") != clustering:
            continue
        unit = spec.wording.protects.split(";")[0].split(",")[0].split(" (")[0]
        out.append(_title(name) + (f" — its ε protects {unit}" if protects and spec.wording.protects not in protects
                                   and not any(p.startswith(unit) for p in protects) else ""))
    return out


def _check_confidence(confidence) -> None:
    """Refuse a confidence (how often a fresh run must meet the need) outside (0.5, 1), both ends excluded."""
    if not 0.5 < check_real(confidence, "confidence") < 1:
        raise DPValueError(f"confidence must be above 0.5 and below 1 (how often a fresh run must meet the need; "
                           f"0.9 is usual), got {confidence!r}")


def judge(result, need: Need, *, epsilon_range: tuple[float, float] | None = None,
          confidence: float = ADVISOR_CONFIDENCE) -> Advice:
    """The advice read off a finished ε sweep (no run is computed; the attack is :func:`attack_evidence`).

    Raises
    ------
    DPValueError
        When the sweep is not along ε, or the need's metric is not one of its columns.
    """
    from ..sweep import summarize, table_warnings

    config, table = result.config, result.table
    if config.axis != "epsilon":
        raise DPValueError(f"the advisor reads a sweep along epsilon; this one sweeps {config.axis}")
    if need.metric not in table.columns:
        raise DPValueError(f"the sweep has no {need.metric!r} column; a {config.task} sweep is judged by "
                           f"{' or '.join(_METRICS[config.task])}")
    _check_confidence(confidence)
    lo, hi = epsilon_range if epsilon_range is not None else (min(config.values), max(config.values))
    if not (0 < lo <= hi):
        raise DPValueError(f"the ε range must be 0 < low ≤ high, got {lo!r}, {hi!r}")
    summ = summarize(table, need.metric)
    _, trivial = _mean_of(summ, "trivial")
    base_name, baseline = _mean_of(summ, "baseline")

    def reference(name: str) -> tuple[float | None, pd.Series | None]:
        counterpart = config.baseline_for(name)
        rows = table[(table.role == "baseline") & (table.learner == counterpart)]
        if rows.empty:
            return None, None
        per_seed = rows.groupby("seed")[need.metric].mean().astype(float)
        return float(per_seed.mean()), per_seed

    points = _points(table, need, lo, hi, confidence, reference, trivial)
    points.attrs["confidence"] = confidence
    best = _smallest_meeting(points, need.higher_is_better)
    recommended, reasons, instead = None, [], []
    ds = config.dataset if not isinstance(config.dataset, str) else None
    if best is not None:
        # the ε said is the larger of the grid value and what its runs spent (a run may spend up to OVERSPEND times
        # its grid value and still be judged at it): a recommendation never reads below what the model spends
        said = float(best.epsilon)
        if math.isfinite(float(best.epsilon_spent)):
            said = max(said, float(best.epsilon_spent))
        _, own_base = _mean_of(summ, "baseline", config.baseline_for(best.learner))
        target = float(best.target)
        v = verdict(said)
        # the odds bound of an (ε, δ) learner carries an additive δ; a pure-ε learner's is exact
        from ..learners import get_learner

        apart = float(config.delta) if get_learner(best.learner).uses_delta else 0.0
        below, above = neighbours(said)
        recommended = {
            "learner": best.learner, "learner_title": _title(best.learner), "epsilon": said,
            "epsilon_tried": float(best.epsilon),
            "mean": float(best["mean"]), "std": float(best["std"]), "n": int(best.n), "bound": float(best.bound),
            "target": target,
            "epsilon_spent": float(best.epsilon_spent), "leaks": bool(best.leaks), "event": best.event,
            "delta": float(config.delta), "band": v.band.headline,
            "band_sentence": v.sentence(delta=apart).replace("**", ""), "deployments": comparison(said),
            "nearest_deployments": [f"{d.who}, {d.what}: ε {d.epsilon:g} ({d.unit}; {d.source})"
                                    for d in below + above],
            "non_private": own_base,
            "unit": _unit_of(best),  # what the ε protects: whole records, or a record's label only ...
        }
        if delta_note := _delta_above_one_over_n(config, ds):  # before the band and the leaks: it voids both
            reasons.append(delta_note)
            recommended["band_sentence"] += " " + delta_note
        if best.leaks:
            reasons.append("Not yet a guarantee: these runs leaked privacy (see the warnings): their ε holds only "
                           "once every bound is declared rather than read from the rows.")
        reasons += _passed_over(points, best)  # said first: what the recommended ε protects, if less than a record
        smaller = points[(points.learner == best.learner) & (points.epsilon < best.epsilon)]
        against = _against_references(best, need, trivial=trivial, task=config.task, trivial_learner=config.trivial(),
                                      per_seed=reference(best.learner)[1], swept=table)
        reasons += [t for t in against if t.startswith("Caution")]  # before the numbers it qualifies
        if ds is not None and (few := _few_test_rows(ds, config, best, need, confidence)):
            reasons.append(few)
        elif ds is not None and (luck := _one_split_luck(ds, config, best, need, confidence)):
            reasons.append(luck)
        # (where the trivial predictor meets the need itself, the caution above says more: on a 95/5 label accuracy
        # sits near it for every model, and balanced accuracy is what to judge by)
        if not any(t.startswith("Caution") for t in against) and (
                little := _reference_learnt_little(need, own_base, trivial, config.task, config.trivial())):
            reasons.insert(0, little)
        cmp = "≥" if need.higher_is_better else "≤"
        mf = _fmt(need.metric)  # a share to three decimals, an MSE to four figures, as the headline writes them
        if int(best.n) < 2:  # no spread: the one run's score, not a share of fresh runs
            reasons.append(f"At ε = {epsilon_text(said)} the one run of {_title(best.learner)} scored "
                           f"{_LABEL[need.metric]} {best['mean']:{mf}}, against a target of {target:{mf}}"
                           + (f" (the non-private model's {own_base:{mf}} minus {need.amount:g})"
                              if need.kind == "within" and own_base is not None else "")
                           + "; with one seed nothing says how often a fresh run reaches it (the "
                             f"{confidence_text(confidence)} asked for is not measured).")
        else:
            reasons.append(f"At ε = {epsilon_text(said)} a fresh run of {_title(best.learner)} reaches "
                           f"{_LABEL[need.metric]} "
                           f"{cmp} {best.bound:{mf}} in {confidence_text(confidence)} of cases (mean "
                           f"{best['mean']:{mf}}, spread "
                           f"{_spread(best['std'], best['mean']):.3g} over {int(best.n)} seeds; Student's t "
                           "prediction bound"
                           + ("; for a gap, on each seed's gap to the non-private model trained on the same split"
                              if need.kind == "within" else "") + "), against a target "
                           f"of {target:{mf}}" + (f" (the non-private model's {own_base:{mf}} minus {need.amount:g})"
                                                 if need.kind == "within" and own_base is not None else "") + ".")
        reasons += [t for t in against if not t.startswith("Caution")]
        if config.task == "classification" and (found := _rare_class_found(table, config, best)):
            reasons.append(found)
        if not smaller.empty:
            s = smaller.iloc[-1]
            reasons.append(f"The next smaller ε tried, {epsilon_text(s.epsilon)}, gives {s.bound:{mf}} at the same "
                           "bound, " + (
                f"no better than {_trivial_words(config.task, config.trivial())} ({trivial:{mf}}), so it meets "
                f"nothing."
                if not s.beats_trivial and trivial is not None else "short of the target" + (
                    "." if not s.meets else "; it met the target but a larger ε after it fell short even on average, "
                    "so it is not relied on.")))
        reasons.append("Every larger ε tried in the range meets the target on average too, so the answer does not "
                       "rest on one lucky point below a dip.")
        if int(best.n) < 2:
            reasons.append("Only one seed: there is no spread to judge by; run more seeds before relying on this.")
        elif getattr(config, "secure", False):  # seeded runs repeat their noise, and with it the answer
            reasons.append("Secure noise is fresh on every run: another run of this sweep with the same inputs (in "
                           "another session of the page, or python -m dpcore report) draws other noise, and with "
                           f"{int(best.n)} seeds its bounds can move enough to answer a neighbouring ε; more seeds "
                           "make the answer steadier.")
        if protects := _what_it_protects(table, best, said=said):
            recommended["protects"] = protects
            reasons.append(protects)
        reasons.append(v.sentence(delta=apart).replace("**", "") + " " + comparison(said))
        reasons += overspent_reasons(points)
    else:
        target = float(points["target"].iloc[0]) if len(points) else (
            need.target(baseline) if need.kind != "within" or baseline is not None else math.nan)
        # "even the non-private model reaches only ..." is said of the best reference swept, not of the first: on a
        # sweep of DP-SGD and DP-ERM it named logistic regression's 0.707 beside DP-SGD's own 0.746
        refs = summ[summ.role == "baseline"]["mean"].astype(float).dropna()
        best_base = baseline if refs.empty else float(refs.max() if need.higher_is_better else refs.min())
        instead = _instead(points, need, target, baseline=best_base, trivial=trivial, config=config,
                           n_rows=ds.n_samples if ds is not None else _registry_rows(config),
                           n_features=ds.n_features if ds is not None else None)
        if ds is not None and (n_test := _test_rows(ds, config)) is not None and n_test < FEW_TEST_ROWS:
            instead.insert(0, f"More rows first: every run was scored on only {n_test} test rows, where one row "
                              f"moves the score by about {1 / n_test:.2g} (in accuracy); more seeds measure the "
                              "noise, not the luck of which rows were tested, so no answer here is firm until the "
                              "file has a few hundred rows.")
    # the non-private mean said beside the target is the one the target was taken from: the recommended learner's own
    # reference (or, with no answer, that of the learner whose target is shown), not the first reference swept (a
    # report's JSON read "target 0.722, non_private 0.707" for "within 2 points": 0.722 was DP-SGD's 0.742 - 0.02)
    if best is not None and own_base is not None:
        baseline = own_base
    elif best is None and len(points) and (first := reference(str(points["learner"].iloc[0]))[0]) is not None:
        baseline = first
    selection = selection_note(points, table, learner=best.learner if best is not None else None,
                               delta=config.delta, epsilon=recommended["epsilon"] if recommended else None)
    return Advice(need=need, epsilon_range=(float(lo), float(hi)), confidence=float(confidence), metric=need.metric,
                  target=float(target), baseline=baseline, trivial=trivial, points=points, recommended=recommended,
                  reasons=reasons, instead=instead, selection=selection, warnings=table_warnings(table),
                  sweep=result)


def _spread(std: float, mean: float) -> float:
    """A standard deviation as written: 0 where seeds agree to rounding (1.36e-16 reads as a spread that is not)."""
    return 0.0 if abs(std) <= 1e-12 * max(1.0, abs(mean)) else float(std)


def _trivial_words(task: str, learner: str = "") -> str:
    """The trivial predictor in words: what a model that learnt nothing answers (``learner``: the sweep's trivial
    line, :meth:`~dpcore.sweep.config.SweepConfig.trivial`, where it is a family's own)."""
    if learner == "random-centres":
        return "a clustering with centres drawn at random in the bounds (no data used)"
    return ("always answering the most common class" if task == "classification"
            else "always predicting the training rows' mean")


def _against_references(best: pd.Series, need: Need, *, trivial: float | None, task: str,
                        per_seed: pd.Series | None, swept: pd.DataFrame, trivial_learner: str = "") -> list[str]:
    """What the recommended point costs and what it gains: its gap to the non-private model trained on the same
    splits (the mean and the seeds' range), and its margin over the trivial predictor, said first as a caution when
    that predictor, which learnt nothing, already meets the need (a 95/5 label: always answering the common class
    scores 0.95, above a need of "accuracy ≥ 0.9")."""
    out: list[str] = []
    name, fmt = _LABEL[need.metric], _fmt(need.metric)
    nothing = _trivial_words(task, trivial_learner)
    if trivial is not None and math.isfinite(trivial):
        margin = (float(best["mean"]) - trivial) * (1 if need.higher_is_better else -1)
        unit = f" ({100 * margin:.2g} points)" if need.metric in _POINTS else ""
        if need.meets(trivial, float(best.target)):
            common = task == "classification" and trivial >= COMMON_CLASS
            out.append(f"Caution: {nothing} already meets this need ({name} {trivial:{fmt}} against the target "
                       f"{float(best.target):{fmt}}): the target says little about this model, which does better by "
                       f"{margin:.3g}{unit} on average. "
                       + ("With one class this common, accuracy hides how well the rarer classes are found: judge "
                          if common else "Judge ") + "the model by its margin over this"
                       + (", or state the need as a gap to the non-private model." if need.kind != "within" else ".")
                       + (" Or judge it by balanced accuracy (each class's share found right, averaged: always "
                          "answering one class scores 1/k there), need 'balanced>=…'."
                          if common and need.metric == "accuracy" else ""))
        else:
            out.append(f"Against a model that learnt nothing ({nothing}, {name} {trivial:{fmt}}): better by "
                       f"{margin:.3g}{unit} on average.")
    if per_seed is not None and not per_seed.empty:
        g = swept[(swept.role == "swept") & (swept.learner == best.learner) & np.isclose(swept.value, best.epsilon)]
        gaps = ((per_seed - g.set_index("seed")[need.metric].astype(float)).dropna()
                * (1 if need.higher_is_better else -1))
        if len(gaps):
            scale, points = (100, " points") if need.metric in _POINTS else (1, "")
            lo, hi, mean = scale * float(gaps.min()), scale * float(gaps.max()), scale * float(gaps.mean())
            worse, better = ("lower", "higher") if need.higher_is_better else ("higher", "lower")
            sign = 1 if mean >= 0 else -1
            a, b = sorted((sign * lo, sign * hi))
            same = math.isclose(a, b, abs_tol=1e-9)
            spread = ("" if len(gaps) < 2 else f", the same on all {len(gaps)} seeds" if same
                      else f", from {a:.3g} to {b:.3g}{points} over the {len(gaps)} seeds")
            reference = f"the non-private model trained on the same splits ({float(per_seed.mean()):{fmt}})"
            if mean >= 0:
                out.append(f"What privacy costs: {name} {mean:.3g}{points} {worse} than {reference} on average{spread}"
                           + (" (below 0: on that split the private model scored better)" if lo < 0 else "") + ".")
            else:
                out.append(f"What privacy costs: nothing measurable here: {name} {-mean:.3g}{points} {better} than "
                           f"{reference} on average{spread}" + (" (below 0: on that split it scored worse)" if hi > 0
                                                                 else "") + ".")
    return out


#: A non-private model less than this far above the trivial predictor learnt little from these columns itself, and an
#: ε close to it buys little either: 5 points of accuracy or balanced accuracy, a tenth of the label's variance (R²).
LITTLE_LEARNT = {"accuracy": 0.05, "balanced_accuracy": 0.05, "r2": 0.1}


def _reference_learnt_little(need: Need, baseline: float | None, trivial: float | None, task: str,
                             trivial_learner: str) -> str | None:
    """A caution when the recommended learner's non-private counterpart is itself within :data:`LITTLE_LEARNT` of the
    trivial predictor: a need met next to it (a gap to it, or a level it barely passes) says the columns predict the
    label poorly, whatever the ε (an outlier-laden target: R² 0.037 for the non-private model, 0.035 recommended)."""
    if need.metric not in LITTLE_LEARNT or baseline is None or trivial is None or not math.isfinite(trivial):
        return None
    if baseline - trivial >= LITTLE_LEARNT[need.metric]:
        return None
    fmt, name = _fmt(need.metric), _LABEL[need.metric]
    return (f"Caution: the model trained without privacy learns little here itself ({name} {baseline:{fmt}}, against "
            f"{trivial:{fmt}} for {_trivial_words(task, trivial_learner)}): these columns predict the label poorly, "
            "and no ε changes that. More informative columns, a narrower declared label range (regression) or more "
            "rows are what would.")


def _rare_class_found(table: pd.DataFrame, config, best: pd.Series) -> str | None:
    """Where one class is at least :data:`COMMON_CLASS` of the rows: how many of the rarest class's test rows the
    recommended learner finds at its ε over the seeds (its recall, the ``rare_class_recall`` column), beside the
    non-private model on the same splits. Said without the class's name: a report never holds a cell of the data; with
    its declared share where the class shares were declared (:attr:`Dataset.class_shares`)."""
    if "rare_class_recall" not in table.columns:
        return None
    labels = dataset_labels(config.dataset)
    if classification_metrics(labels)[0] != "balanced_accuracy":  # no class at COMMON_CLASS of the rows
        return None
    _, counts = np.unique(labels, return_counts=True)
    if counts.size < 2:
        return None
    runs = table[(table.role == "swept") & (table.learner == best.learner) & np.isclose(table.value, best.epsilon)]
    found = runs["rare_class_recall"].dropna().astype(float)
    if found.empty:
        return None
    spread = (f" (from {found.min():.0%} to {found.max():.0%} over the {len(found)} seeds)"
              if len(found) > 1 and not math.isclose(found.min(), found.max()) else "")
    base = table[(table.role == "baseline") & (table.learner == config.baseline_for(best.learner))]
    base_found = base["rare_class_recall"].dropna().astype(float)
    # its share as the owner declared it, where they did (the report says the shares were not read from the rows)
    declared = tuple(getattr(config.dataset, "class_shares", ()) or ())
    share = (f"{declared[int(np.argmin(counts))]:.0%} of the rows, as declared" if len(declared) == counts.size
             else f"{counts.min() / counts.sum():.0%} of the rows")
    return (f"The rarest class ({share}): at ε = {epsilon_text(best.epsilon)} a "
            "fresh run "
            f"of {_title(best.learner)} finds {found.mean():.0%} of its test rows on average{spread}"
            + (f"; the non-private model trained on the same splits finds {base_found.mean():.0%}"
               if not base_found.empty else "")
            + "; always answering the most common class finds none.")


def _what_it_protects(table: pd.DataFrame, best: pd.Series, *, said: float | None = None) -> str | None:
    """What the recommended ε protects, and against which neighbours, as its runs recorded it: a bare "ε = 0.316"
    in a report does not say whether it bounds one record added or removed (DP-SGD, Abadi et al. 2016) or one
    replaced (DP-ERM, Chaudhuri et al. 2011), which differ by up to a factor 2 (a replacement is a removal and an
    addition)."""
    from ..accounting.neighbouring import Neighbouring
    from ..learners import get_learner

    if "neighbouring" not in table.columns:
        return None
    runs = table[(table.role == "swept") & (table.learner == best.learner) & np.isclose(table.value, best.epsilon)]
    relations = {str(r) for r in runs.neighbouring.dropna() if str(r)}
    if len(relations) != 1:
        return None
    try:
        neighbours = Neighbouring.of(relations.pop())
        protects = get_learner(best.learner).wording.protects
    except (DPCoreError, KeyError):
        return None
    shown = epsilon_text(best.epsilon if said is None else said)
    return (f"What ε = {shown} protects: {protects}, against a data set that differs in "
            f"{neighbours.description} ({neighbours.spelling} neighbours)"
            + ("; under add-remove neighbours a record replaced is covered at 2ε (a removal and an addition)."
               if neighbours is Neighbouring.ADD_REMOVE else
               "; the number of records is taken as public."))


def _test_rows(ds, config) -> int | None:
    """How many rows of ``ds`` a run of ``config`` is scored on (its split's test part), None if it cannot split."""
    from ..datasets.registry import train_test_split

    try:
        return len(train_test_split(ds, test_size=config.test_size, seed=0).y_test)
    except DPCoreError:
        return None


def _few_test_rows(ds, config, best: pd.Series, need: Need, confidence: float) -> str | None:
    """A caution when the recommended point was scored on fewer than :data:`FEW_TEST_ROWS` test rows (an upload's
    small file): the prediction bound covers how the noise moves the score over seeds on these rows, not which rows
    happened to be tested. For accuracy, the exact binomial lower bound (Clopper & Pearson 1934) on the accuracy over
    new rows of the same kind of a model scoring the mean here, compared with the target."""
    n_test = _test_rows(ds, config)
    if n_test is None or n_test >= FEW_TEST_ROWS:
        return None
    said = (f"Caution: scored on only {n_test} test rows. The advisor's bound covers how the noise moves the score "
            "over seeds on these rows, not the luck of which rows were tested, which on so few rows can move it by "
            "more than the margin to the target")
    if need.metric != "accuracy":
        return said + ". More rows give a firmer answer."
    from scipy import stats

    right = int(round(float(best["mean"]) * n_test))
    low = float(stats.beta.ppf(1 - confidence, right, n_test - right + 1)) if right > 0 else 0.0
    target = float(best.target)
    return (said + f": each row right or wrong moves accuracy by {1 / n_test:.3g}. On new rows of the same kind, a "
            f"model scoring {right}/{n_test} here has accuracy at least {math.floor(low * 1000) / 1000:.3f} with "
            f"{confidence_text(confidence)} confidence (Clopper & Pearson 1934's exact binomial bound)"
            + (f", below the target of {target:.3f}: these rows cannot show that the need is met" if low < target
               else "") + ". More rows give a firmer answer.")


def _one_split_luck(ds, config, best: pd.Series, need: Need, confidence: float) -> str | None:
    """A caution when every seed was scored on the same test rows (secure noise keeps the split at seed 0, so the
    seeds differ in their noise only) and, for a level of accuracy, the test rows' own luck leaves the target in
    doubt: the exact binomial lower bound (Clopper & Pearson 1934) on the accuracy over new rows of a model scoring
    the mean here falls below the target. A gap to the non-private model is measured on the same rows for both, whose
    luck moves both alike, so it gets none."""
    if not getattr(config, "secure", False) or need.kind == "within" or need.metric != "accuracy":
        return None
    n_test = _test_rows(ds, config)
    if not n_test:
        return None
    from scipy import stats

    right = int(round(float(best["mean"]) * n_test))
    low = float(stats.beta.ppf(1 - confidence, right, n_test - right + 1)) if right > 0 else 0.0
    target = float(best.target)
    if low >= target:
        return None
    return (f"Caution: every seed was scored on the same {n_test} test rows (secure noise keeps one split), so the "
            "bound covers the noise, not the luck of which rows were tested. On new rows of the same kind, a model "
            f"scoring {right}/{n_test} here has accuracy at least {math.floor(low * 1000) / 1000:.3f} with "
            f"{confidence_text(confidence)} confidence (Clopper & Pearson 1934's exact binomial bound), below the "
            f"target of {target:.3f}: these rows cannot show that the need is met; more rows, or a target further "
            "below the scores seen, give a firmer answer.")


def _delta_above_one_over_n(config, ds) -> str | None:
    """The caveat of a δ above 1/n, n the training rows: (ε, δ)-DP then allows a mechanism that publishes a few whole
    records outright (Dwork & Roth 2014, section 2.3: δ must be less than the inverse of any polynomial in the size of
    the database), so no band read off ε alone describes the risk. None when δ is below 1/n (or n is unknown)."""
    from ..datasets import load_dataset

    try:
        data = ds if ds is not None else load_dataset(config.dataset)
    except DPCoreError:
        return None
    n_train = int(data.n_samples) - (_test_rows(data, config) or 0)
    delta = float(config.delta)
    if n_train <= 0 or delta <= 1.0 / n_train:
        return None
    return (f"Not a guarantee at this δ: δ = {delta:g} is larger than 1/n = {1.0 / n_train:.2g} (n = {n_train:,} "
            "training rows), and at such a δ a model may give away a few whole records and still count as (ε, δ)-DP, "
            f"whatever ε says; ask again with δ well below 1/n (the default is {DELTA:g}).")


def _registry_rows(config) -> int | None:
    from ..datasets import load_dataset

    try:
        return load_dataset(config.dataset).n_samples
    except DPCoreError:
        return None


def attack_evidence(advice: Advice, *, seed: int = 0, secure: bool = False, pool_size: int = ATTACK_POOL,
                    params: Mapping[str, Any] | None = None, released: list | None = None) -> dict | None:
    """The loss-threshold membership attack on a model trained at the recommended ε (None when nothing is
    recommended); a failure is returned as ``{"error": message}``, not raised: the recommendation stands without
    it. ``released``: a list the attacked run's release is appended to (``RunResult.release``), for a visitor's
    running total on the data: the model is trained on it for real."""
    from ..audit import fpr_key, membership_audit, pool_capacity
    from ..rng import noise_mode

    r = advice.recommended
    if r is None:
        return None
    data = advice.sweep.config.dataset
    cfg = advice.sweep.config
    knobs = dict(params if params is not None else {k: v for k, v in cfg.params.items()})
    from ..learners import get_learner

    spec = get_learner(r["learner"])
    knobs = {k: v for k, v in knobs.items() if k in spec.params}
    try:
        pool = min(int(pool_size), pool_capacity(data))
        with noise_mode(secure):
            audit = membership_audit(r["learner"], data, epsilon=r.get("epsilon_tried", r["epsilon"]),  # its runs'
                                     delta=cfg.delta, params=knobs, attack="loss", pool_size=pool, seed=seed)
    except (DPCoreError, ValueError) as exc:
        return {"error": str(exc)}
    if released is not None:
        released.append(audit.target.release())
    res = audit.result
    return {"attack": "loss threshold (Yeom et al. 2018), bounded by one-run auditing (Steinke et al. 2023)",
            "epsilon": r["epsilon"], "epsilon_lower_bound": float(res.epsilon_lower_bound),
            "confidence": float(res.confidence), "caught_at_1pct": res.tpr_measured(fpr_key(ATTACK_FPR)),
            "auc": float(res.auc), "pool": int(res.n_members + res.n_nonmembers),
            "model_accuracy": audit.target_accuracy}


def _epsilon_range(epsilon_range) -> tuple[float, float]:
    """``epsilon_range`` as two floats 0 < low ≤ high (a pair, or "low,high" as the command line writes it)."""
    try:
        lo, hi = (float(x) for x in (epsilon_range.split(",") if isinstance(epsilon_range, str) else epsilon_range))
    except (TypeError, ValueError):
        raise DPValueError(f"epsilon_range: expects two numbers (low, high), e.g. (0.1, 10), got {epsilon_range!r}"
                           ) from None
    if not (0 < lo <= hi) or math.isinf(hi):
        raise DPValueError(f"--epsilon-range must be two numbers 0 < low ≤ high, finite, got {lo:g},{hi:g}")
    return lo, hi


def advice_config(data, *, learners: Sequence[str] | None = None, epsilon_range: tuple[float, float] = ADVISOR_RANGE,
                  points: int = ADVISOR_POINTS, seeds: int = ADVISOR_SEEDS, base_seed: int = 0, secure: bool = False,
                  delta: float = DELTA, params: Mapping[str, Any] | None = None):
    """The ε sweep the advisor runs: the range log-spaced, the Trade-off explorer's default learners unless named."""
    from ..datasets import load_dataset
    from ..datasets.registry import Dataset
    from ..sweep import SweepConfig, value_range
    from ..sweep.choices import default_learners, sweepable

    if isinstance(data, pd.DataFrame):
        raise DPValueError("data: a pandas DataFrame names no label column and declares no bounds; turn it into a "
                           "Dataset first, dpcore.load_csv(df, label_column='...', drop=[...], bounds='...', "
                           "categories='...') (drop an identifier or a free-text column; declare what each column can "
                           "hold, and the values of each column of categories), and pass that")
    if not isinstance(data, (str, Dataset)):
        raise DPValueError(f"data: expects a registry dataset name such as 'iris' or a Dataset from dpcore.load_csv, "
                           f"got {type(data).__name__}")
    lo, hi = _epsilon_range(epsilon_range)
    if isinstance(learners, str):  # one name, or names with commas as on the command line: not its letters
        learners = [name.strip() for name in learners.split(",") if name.strip()]
    ds = load_dataset(data) if isinstance(data, str) else data
    if ds.task not in _METRICS:  # rows without a label (load_csv_unlabelled): nothing for a need to be judged by
        raise DPValueError(f"data: the advisor judges a model's predictions of a label, and {ds.name!r} has none (its "
                           "rows are for clustering); load the file with dpcore.load_csv(..., label_column='...')")
    chosen = list(learners) if learners else default_learners(sweepable(ds.task, ds.is_image, "epsilon"), ds.task,
                                                              class_shares=bool(getattr(ds, "class_shares", ())))
    return SweepConfig(dataset=data, learners=tuple(chosen), axis="epsilon",
                       values=value_range("epsilon", lo, hi, int(points)), seeds=int(seeds), base_seed=int(base_seed),
                       secure=bool(secure), delta=delta, params=dict(params or {}))


def advise(data, need: Need | str | None = None, *, epsilon_range: tuple[float, float] = ADVISOR_RANGE,
           points: int = ADVISOR_POINTS, seeds: int = ADVISOR_SEEDS, learners: Sequence[str] | None = None,
           base_seed: int = 0, secure: bool = False, delta: float = DELTA, params: Mapping[str, Any] | None = None,
           confidence: float = ADVISOR_CONFIDENCE, attack: bool = True, n_jobs: int | None = None,
           use_cache: bool | None = None, cache_dir=None,
           on_result: Callable[[Any], None] | None = None) -> Advice:
    """Sweep ε over ``epsilon_range`` and answer with the smallest ε meeting ``need`` (see the module docstring).

    ``use_cache`` defaults to True for a registry dataset and False for an uploaded one: results computed from an
    upload are never written to disk.

    >>> a = advise("iris", "accuracy>=0.5", epsilon_range=(1, 10), points=2, seeds=2, learners=["erm-objective"],
    ...            attack=False, n_jobs=1, use_cache=False)
    >>> a.met, a.recommended["epsilon"] in (1.0, 10.0)
    (True, True)

    A pandas DataFrame becomes a Dataset through :func:`dpcore.load_csv`, which names its label column, leaves out
    the columns no model should read and takes the declared bounds (and the declared values of its columns of
    categories, ``categories=``):

    >>> import pandas as pd
    >>> from dpcore import load_csv
    >>> df = pd.DataFrame({"id": [f"P{i}" for i in range(80)], "age": [20 + i for i in range(80)],
    ...                    "readmitted": [int(i >= 40) for i in range(80)]})
    >>> ds = load_csv(df, label_column="readmitted", drop=["id"], bounds="age=0:110")
    >>> a = advise(ds, "accuracy>=0.6", epsilon_range=(1, 10), points=2, seeds=2, learners="erm-objective",
    ...            attack=False, n_jobs=1)
    >>> a.need.describe(), list(a.points.epsilon)
    ('accuracy at least 0.6', [1.0, 10.0])
    """
    from ..sweep import DEFAULT_JOBS, run_sweep

    _check_confidence(confidence)  # before the sweep, not after it
    epsilon_range = _epsilon_range(epsilon_range)
    config = advice_config(data, learners=learners, epsilon_range=epsilon_range, points=points, seeds=seeds,
                           base_seed=base_seed, secure=secure, delta=delta, params=params)
    if not isinstance(need, Need):
        need = parse_need(need, config.task, dataset_labels(config.dataset))
    result = run_sweep(config, n_jobs=DEFAULT_JOBS if n_jobs is None else n_jobs, on_result=on_result,
                       use_cache=use_cache, cache_dir=cache_dir)  # None: an upload's runs stay off the disk
    advice = judge(result, need, epsilon_range=epsilon_range, confidence=confidence)
    if attack and advice.recommended is not None:
        ev = attack_evidence(advice, seed=base_seed, secure=secure, params=params)
        advice = _with(advice, attack=ev)
    return advice


def dataset_labels(dataset) -> np.ndarray:
    """All the labels of ``dataset`` (a registry name or a Dataset)."""
    from ..datasets import load_dataset

    return np.asarray((load_dataset(dataset) if isinstance(dataset, str) else dataset).y)


def _with(advice: Advice, **changes) -> Advice:
    from dataclasses import replace

    return replace(advice, **changes)


__all__ = ["ADVISOR_CONFIDENCE", "ADVISOR_GAP", "ADVISOR_POINTS", "ADVISOR_RANGE", "ADVISOR_SEEDS", "ATTACK_FPR",
           "Advice", "Need", "advice_config", "advise", "attack_evidence", "chart_metrics", "classification_metrics",
           "dataset_labels", "default_need", "headline_metric", "judge", "metric_name", "overspent_reasons",
           "parse_need", "prediction_bound", "selection_note"]
