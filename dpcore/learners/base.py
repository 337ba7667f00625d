"""The one interface every learner shares, so pages, sweeps and the CLI treat them alike."""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

import numpy as np
import pandas as pd

from ..defaults import EPSILON
from ..exceptions import DPValueError
from ..validation import refuse_text_columns
from .knobs import Knob, Wording

if TYPE_CHECKING:  # the registry is read without dp_accounting (a sweep answered from its cache)
    import dp_accounting

    from ..accounting import Neighbouring

#: Per-epoch callback: called with a dict such as
#: {"epoch": 3, "epochs": 20, "loss": 0.4, "accuracy": 0.9, "epsilon": 0.7}.
#: Lets a page draw live progress without core importing streamlit.
EpochCallback = Callable[[Mapping[str, Any]], None]


#: What the numbers in :class:`TestOutputs` are.
OUTPUT_KINDS = ("probability", "score", "cluster", "value")


@dataclass(frozen=True, eq=False)
class TestOutputs:
    """The released model's answer on every test row, as a black-box attacker would see it.

    Parameters
    ----------
    values : array
        ``(n_test, n_classes)`` for ``kind`` "probability" (rows on the simplex) and "score"
        (higher = more likely, e.g. decision values or noisy released softmax vectors);
        ``(n_test, n_clusters)`` for "cluster" (minus the squared distance to each centre);
        ``(n_test,)`` for "value" (regression predictions, in label units).
    kind : {"probability", "score", "cluster", "value"}
    """

    __test__ = False  # not a pytest class, whatever its name

    values: np.ndarray
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in OUTPUT_KINDS:
            raise ValueError(f"kind must be one of {OUTPUT_KINDS}, got {self.kind!r}")
        v = np.array(self.values, dtype=float)
        if v.ndim != (1 if self.kind == "value" else 2):
            raise ValueError(f"values of kind {self.kind!r} must be {'1' if self.kind == 'value' else '2'}-D, "
                             f"got shape {v.shape}")
        v.flags.writeable = False
        object.__setattr__(self, "values", v)

    @classmethod
    def from_labels(cls, labels, n_classes: int) -> "TestOutputs":
        """One-hot rows for a model that only releases its predicted labels (a label-only attacker)."""
        lab = np.asarray(labels, dtype=np.int64)
        return cls(np.eye(max(int(n_classes), int(lab.max(initial=0)) + 1))[lab], "probability")


def class_labels(split: Any) -> tuple:
    """The labels of a split's class indices 0..k-1: as the data holds them (your own data), else the dataset's
    class names."""
    ds = split.dataset
    return tuple(ds.classes) or tuple(ds.target_names) or tuple(range(split.n_classes))


@dataclass(frozen=True, eq=False)
class ReleasedModel:
    """A learner's released model as a fitted estimator: it predicts new rows in the data's own units.

    ``predict(X)`` takes a DataFrame (its feature columns picked by name; a column declared as categories may come
    as it is, ``ward`` holding ``Oncology``, and is encoded by its declared values as the training rows were) or an
    array of the feature columns in training order; applies the run's row-by-row preprocessing (``transform``:
    scaling by the declared bounds, image features ...), which reads no statistic of new rows; asks the estimator;
    and answers in the data's terms: the class labels as the data holds them (``classes``), or regression values in
    label units (``label_scale``: predictions in [0, 1] mapped back onto the label range). Predicting is
    post-processing of what was released: it costs no privacy. ``dp_event`` is what fitting released (None when not
    private).

    Parameters
    ----------
    estimator : object
        Has ``predict`` (and ``predict_proba`` for classifiers that give probabilities).
    feature_names : tuple of str
    transform : callable or None
        Row-by-row preprocessing, a picklable function of the feature matrix (so results can be cached).
    classes : tuple
        The labels of the estimator's class indices 0..k-1; empty when its predictions are already the answer
        (regression, cluster indices).
    label_scale : (low, high) or None
    dp_event : dp_accounting.DpEvent or None
    class_shares : tuple of float
        The classes' shares as the data's owner declared them (:attr:`dpcore.datasets.Dataset.class_shares`), in
        the order of ``classes``: ``predict`` then answers the class of largest probability divided by its share
        (:func:`dpcore.learners.decision.balanced_decision`), post-processing that costs no privacy. Empty: argmax.
    categories : tuple
        The columns the data's owner declared as categories, with their values
        (:attr:`dpcore.datasets.Dataset.categories`): a DataFrame's column of that name is encoded as the training
        rows were (:func:`dpcore.datasets.csv_upload.encode_categories`), a value that is none of the declared ones
        as 0 in each of its 0/1 columns, with a warning saying how many cells.
    """

    estimator: Any
    feature_names: tuple
    transform: Callable[[np.ndarray], np.ndarray] | None = None
    classes: tuple = ()
    label_scale: tuple[float, float] | None = None
    dp_event: Any = None
    class_shares: tuple = ()
    categories: tuple = ()

    @property
    def classes_(self) -> np.ndarray:
        """The class labels in the order of :meth:`predict_proba`'s columns (scikit-learn's name)."""
        return np.asarray(self.classes)

    def _inputs(self, X) -> np.ndarray:
        if isinstance(X, pd.DataFrame):
            X = self._encoded(X)
            missing = [c for c in self.feature_names if c not in set(X.columns.astype(str))]
            if missing:
                # a 0/1 column of declared categories is missing because its column is: that column is named
                of = {f"{c}={v}": c for c, values in self.categories for v in values}
                named = list(dict.fromkeys(of.get(c, c) for c in missing))
                declared = [c for c in named if c in dict(self.categories)]
                how = (f" (declared categories: give {', '.join(map(repr, declared))} as the file held "
                       f"{'it' if len(declared) == 1 else 'them'}, one of its declared values in each row)")
                raise DPValueError(f"X lacks the feature column(s) {', '.join(map(repr, named))} the model was "
                                   "trained on" + (how if declared else ""))
            X = X.rename(columns=str)[list(self.feature_names)]
            refuse_text_columns(X)
        try:
            A = np.asarray(X, dtype=float)
        except (TypeError, ValueError):  # text in an array or a list: which column it is cannot be told
            declared = [c for c, _ in self.categories]
            raise DPValueError(
                "X holds values that are not numbers: pass the new rows as a pandas DataFrame with the columns "
                "by name" + (f" (pd.DataFrame(rows)), where the columns of declared categories "
                             f"({', '.join(map(repr, declared))}) hold their values as text" if declared else
                             f", or an array of numbers in the training order ({', '.join(self.feature_names[:5])}"
                             f"{' ...' if len(self.feature_names) > 5 else ''})")) from None
        if A.ndim == 1:
            A = A[None, :]
        if A.ndim != 2 or A.shape[1] != len(self.feature_names):
            names = ", ".join(self.feature_names[:5]) + (" ..." if len(self.feature_names) > 5 else "")
            raise DPValueError(f"X has shape {A.shape}; the model takes rows of {len(self.feature_names)} features "
                               f"({names})")
        if not np.isfinite(A).all():  # a NaN row would be answered (the argmax of NaN scores is the first class)
            bad = ~np.isfinite(A)
            named = [repr(c) for c, hit in zip(self.feature_names, bad.any(axis=0)) if hit]
            raise DPValueError(f"X has missing or infinite values in column(s) {', '.join(named[:5])} "
                               f"({int(bad.any(axis=1).sum())} of {A.shape[0]} rows): the model answers rows of "
                               "numbers only; fill or remove those rows")
        return A if self.transform is None else self.transform(A)

    def _encoded(self, X: pd.DataFrame) -> pd.DataFrame:
        """``X`` with each column declared as categories that it holds as it is (``ward``, not its 0/1 columns) made
        its 0/1 columns by the declared values: the encoding of the training rows, which reads nothing from them."""
        if not self.categories:
            return X
        from ..datasets.csv_upload import _warn_of_unknown_categories, encode_categories

        X = X.rename(columns=str)
        raw = {c: values for c, values in self.categories  # as it is, not already as its 0/1 columns
               if c in X.columns and not all(f"{c}={v}" in X.columns for v in values)}
        if not raw:
            return X
        encoded, unknown = encode_categories(X, raw)
        _warn_of_unknown_categories(unknown, len(X), what="the new rows")
        return encoded

    def predict(self, X) -> np.ndarray:
        """Class labels (as the data holds them), cluster indices, or regression values, one per row of ``X``."""
        if self.class_shares and self.classes:  # the declared shares' rule on the released probabilities
            from .decision import balanced_decision

            return self.classes_[balanced_decision(self.predict_proba(X), self.class_shares)]
        out = np.asarray(self.estimator.predict(self._inputs(X)))
        if self.classes:
            return self.classes_[out.astype(np.int64)]
        if self.label_scale is not None:
            lo, hi = self.label_scale
            return out * (hi - lo) + lo
        return out

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, columns in the order of :attr:`classes_` (for estimators that give them)."""
        if not hasattr(self.estimator, "predict_proba"):
            from ..exceptions import DPValueError

            raise DPValueError(f"{type(self.estimator).__name__} gives no probabilities; use predict")
        return np.asarray(self.estimator.predict_proba(self._inputs(X)))


@dataclass(frozen=True, eq=False)
class RunResult:
    """What one run of a learner gives back (numpy/pandas only, so it pickles for caching).

    Attributes
    ----------
    learner, dataset, task : str
    metrics : dict
        ``{"accuracy": ...}`` for classification, ``{"mse": ..., "r2": ...}`` for regression
        (others may be added, e.g. ``"intra_cluster_variance"``), all on the test split.
    epsilon, delta : float
        The privacy actually spent (``inf`` and 0 for non-private learners).
    noise_multiplier : float or None
    seconds : float
        Wall time of the run.
    history : DataFrame or None
        One row per epoch/round/iteration: at least ``epoch`` and ``epsilon``,
        plus whatever the learner tracks (``loss``, ``accuracy``...).
    extras : dict
        Learner-specific outputs (predictions, confusion matrix, centroids...).
    event : dp_accounting.DpEvent or None
        What the run released, as a composable dp_accounting event (``None`` only for
        non-private learners): ``dpcore.accounting.epsilon_of_event(event, delta=delta,
        neighbouring=neighbouring)`` gives back ``epsilon``, or more where the learner computed its guarantee more
        tightly than an accountant composes the event (SSP's five Gaussians as one exact Gaussian, Balle & Wang 2018:
        1.0 against RDP's 1.09), never less; and a
        :class:`~dpcore.accounting.PrivacyLedger` composes it with other runs on the same data (spend it the
        result, ``ledger.spend(run)``, and the run's ``neighbouring`` is checked against the ledger's).
    neighbouring : Neighbouring or None
        The relation ``epsilon`` refers to (who counts as a neighbour); ``None`` when not private.
    unit : str
        What of each record ``epsilon`` protects: ``"records"`` (the whole record), ``"labels"`` for label DP,
        which trains on the features in the clear, ``"images"`` for noisy images whose labels are used in the clear;
        a :class:`~dpcore.accounting.PrivacyLedger` of whole records refuses a run of labels or of images.
        ``"clients"`` for federated learning, a client's whole data.
    federation : str or None
        For a federated run, which simulated federation its clients are
        (:func:`~dpcore.federated.fedavg.federation_of`): a ledger of clients composes runs of one federation only.
    test_outputs : TestOutputs or None
        What the released model answers on each test row (class probabilities, scores,
        cluster affinities or predicted values): what a black-box attacker sees, so that
        :mod:`dpcore.audit` can attack any learner by putting candidate records in the test rows.
    model : ReleasedModel or None
        The released model, fitted, for learners that release one: ``model.predict(X_new)`` answers new rows in
        the data's own units (a DataFrame with the feature columns, or an array), as a scikit-learn estimator
        does; ``model.dp_event`` is ``event`` (:class:`ReleasedModel`). ``None`` where the learner releases
        answers, not a model (output perturbation, PATE's noisy votes ...). Predicting is post-processing: it
        costs no further privacy.
    """

    learner: str
    dataset: str
    task: str
    metrics: dict
    epsilon: float
    delta: float
    noise_multiplier: float | None = None
    seconds: float = 0.0
    history: pd.DataFrame | None = None
    extras: dict = field(default_factory=dict)
    event: dp_accounting.DpEvent | None = None
    neighbouring: Neighbouring | None = None
    test_outputs: "TestOutputs | None" = None
    model: Any = None
    unit: str = "records"
    federation: str | None = None

    def predict(self, X) -> np.ndarray:
        """``model.predict(X)``: the released model's answers on new rows (refused where no model is released)."""
        if self.model is None:
            from ..exceptions import DPValueError

            raise DPValueError(f"learner {self.learner!r} releases no model (its privacy covers only the answers it "
                               "gave on the test rows), so it cannot predict on new rows")
        return self.model.predict(X)

    @property
    def score(self) -> float:
        """The headline metric: accuracy, or mse for regression."""
        return float(self.metrics["accuracy"] if self.task == "classification" else self.metrics["mse"])

    def release(self) -> dict:
        """What the run released, in plain values a store or a table keeps (a sweep's row holds them as columns,
        ``dpcore.ui.ledger.release_of`` reads them back): its dp_accounting ``event`` as JSON text (empty without
        one), ``epsilon``, ``delta``, ``neighbouring`` spelled (empty without a guarantee), the ``unit`` its epsilon
        protects and, for a federated run, its ``federation`` (empty otherwise).

        >>> RunResult("x", "iris", "classification", {}, epsilon=math.inf, delta=0.0).release()
        {'event': '', 'epsilon': inf, 'delta': 0.0, 'neighbouring': '', 'unit': 'records', 'federation': ''}
        """
        from ..accounting import Neighbouring, event_to_json

        return {"event": json.dumps(event_to_json(self.event)) if self.event is not None else "",
                "epsilon": float(self.epsilon), "delta": float(self.delta),
                "neighbouring": Neighbouring.of(self.neighbouring).spelling if self.neighbouring is not None else "",
                "unit": self.unit, "federation": self.federation or ""}

    def to_json_dict(self) -> dict:
        """The CLI's JSON contract: accuracy (or mse/r2), epsilon, delta, noise_multiplier, seconds."""
        out: dict[str, Any] = {"learner": self.learner, "dataset": self.dataset, "task": self.task}
        for k, v in self.metrics.items():
            out[k] = _jsonable(v)
        out["epsilon"] = _jsonable(self.epsilon)
        out["delta"] = _jsonable(self.delta)
        out["noise_multiplier"] = _jsonable(self.noise_multiplier)
        out["seconds"] = round(float(self.seconds), 4)
        if self.extras.get("protects"):  # the unit epsilon protects: whole records, labels only, a client ...
            out["protects"] = self.extras["protects"]
            out["unit"] = self.unit  # the same as PrivacyLedger(unit=...) takes it: "records", "labels", "clients" ...
        if self.neighbouring is not None:  # what the epsilon protects: one record added/removed, or replaced
            from ..accounting import Neighbouring

            out["neighbouring"] = Neighbouring.of(self.neighbouring).spelling
        if self.federation:  # a federated run: whose clients (runs of one federation compose, of two do not)
            out["federation"] = self.federation
        # DP-SGD's: enough to recompute the epsilon elsewhere (shuffled batches: one Gaussian per accounted epoch, not
        # a Poisson epsilon of sample_rate and steps; "accounting" says so)
        for k in ("accountant", "sampling", "sample_rate", "steps", "accounted_epochs", "accounting"):
            if self.extras.get(k) is not None:
                out[k] = self.extras[k] if isinstance(self.extras[k], str) else _jsonable(self.extras[k])
        if dataclasses.is_dataclass(config := self.extras.get("config")):  # every setting the run used
            out["config"] = {k: v if isinstance(v, (str, bool)) else _jsonable(v)
                             for k, v in dataclasses.asdict(config).items()}
        if self.extras.get("warnings"):  # what stderr said, for a script that reads only the JSON
            out["warnings"] = [str(w) for w in self.extras["warnings"]]
        if self.extras.get("decision_rule"):  # answers by the declared class shares, or argmax where they do not apply
            out["decision_rule"] = self.extras["decision_rule"]
            shares = getattr(self.model, "class_shares", ()) or ()
            classes = getattr(self.model, "classes", ()) or ()
            if shares and len(shares) == len(classes):  # as --class-shares takes them: named, to feed back
                out["class_shares"] = ", ".join(f"{c}={s:g}" for c, s in zip(classes, shares))
        if "single_class" in self.extras:  # the model answers one class for every row (see run_learner)
            out["single_class"] = self.extras["single_class"]
        if self.extras.get("no_better_than_trivial"):  # no better than the majority class or the mean
            out["no_better_than_trivial"] = True
        for k in PUBLISHED_EXTRAS:
            v = self.extras.get(k)
            if v is not None:
                out[k] = int(v) if isinstance(v, (int, np.integer)) else _jsonable(v)
        return out


#: Extras a learner may report that are safe to publish beside epsilon (PATE: how many queries got a label, the
#: data-dependent epsilon as released with smooth sensitivity, and the epsilon of the answers alone, epsilon being
#: that of the answers and the release; never the exact data-dependent value).
PUBLISHED_EXTRAS = ("answered", "epsilon_data_dependent_released", "epsilon_data_dependent_released_std",
                    "epsilon_answers")


def _jsonable(v):
    if v is None:
        return None
    if isinstance(v, (tuple, list)):  # a setting of several numbers (e.g. the declared class shares) as a list
        return [_jsonable(x) for x in v]
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):  # a count stays a whole number in the JSON
        return int(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if math.isnan(f):
        return None
    return f


#: The one-run audit's canaries a learner can declare (:attr:`LearnerSpec.canary_kind`).
CANARY_KINDS = ("input", "gradient")


class RunFunction(Protocol):
    def __call__(
        self,
        split,  # dpcore.datasets.Split
        *,
        epsilon: float,
        delta: float,
        seed: int,
        params: Mapping[str, Any],
        on_epoch: EpochCallback | None = None,
    ) -> RunResult: ...


@dataclass(frozen=True)
class LearnerSpec:
    """A registered learner, and everything about it that pages, sweeps and the command line need.

    Attributes
    ----------
    name : str
        Registry name used by the CLI, sweeps and pages (``"dpsgd"``, ``"erm-objective"``...).
    title : str
        Human label for select boxes and legends.
    tasks : tuple of str
        Which tasks it handles: ``"classification"`` and/or ``"regression"``.
    private : bool
        False for baselines (epsilon reported as inf).
    run : RunFunction
        ``run(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult``.
        ``params`` holds the knobs given, already checked against ``knobs``.
    knobs : tuple of Knob
        Every parameter it takes, declared once (:class:`~dpcore.learners.knobs.Knob`):
        type, default, range, label, help. The CLI's flags and ``--set``, the sweep's
        fixed knobs and axes, the pages' widgets and the baseline's parameters are
        derived from them.
    params : tuple of str
        The knob names (derived from ``knobs``; a learner registered outside dpcore may
        give names alone, whose values are then passed through unchecked).
    baseline : str or None
        Name of its non-private counterpart on the same model, if any.
    images_only : bool
        True if it needs image-shaped data.
    uses_delta : bool
        False for pure epsilon-DP learners (delta is ignored).
    description : str
    wording : Wording
        How pages talk about its epsilon and results (:class:`~dpcore.learners.knobs.Wording`).
    default_epsilon : float
        The budget the pages start from and the command line uses without ``--epsilon``.
    trivial : bool
        A trivial reference that learns nothing (the most common class, the training mean): every other learner's
        score is measured against the one of its task (:func:`dpcore.learners.trivial_learner`).
    config : type or None
        The frozen config dataclass its runner builds (``TrainConfig``, ``FedAvgConfig``, ``PateConfig``), if any:
        a knob of the same name declares the same default (the knobs read it with
        :func:`~dpcore.learners.knobs.config_defaults`; a test checks every learner).
    family : str
        What kind of model it trains, for the lists that offer like with like: ``"network"`` (a network trained by
        :mod:`dpcore.training`: the Train page offers the private ones, the Attack page widens them), ``"clustering"``
        (k-means: the Clustering page and ``cluster`` on the command line), or any other word ("" for none).
    direct_noise : str or None
        The knob that sets its noise directly (DP-SGD's ``"noise_multiplier"`` σ), if any: given that knob, epsilon
        is not a target but an outcome (the run reports the ε it spent); a page offers "Set σ directly".
    canary_kind : {"input", "gradient"}
        The one-run audit's default canaries (Steinke, Nasr & Jagielski 2023): ``"gradient"`` for a learner whose
        noisy gradient steps a white-box auditor can read (DP-SGD's engine,
        :func:`dpcore.audit.canaries.gradient_canary_audit`), ``"input"`` (mislabelled records, black-box) for any
        other.
    defaults_note : callable or None
        ``defaults_note(split, params) -> str``: one caption on where its defaults for this data come from (DP-SGD:
        the dataset preset), or None.
    """

    name: str
    title: str
    tasks: tuple[str, ...]
    private: bool
    run: RunFunction
    params: tuple[str, ...] = ()
    baseline: str | None = None
    images_only: bool = False
    uses_delta: bool = True
    description: str = ""
    knobs: tuple[Knob, ...] = ()
    wording: Wording = field(default_factory=Wording)
    default_epsilon: float = EPSILON
    trivial: bool = False
    config: type | None = None
    family: str = ""
    direct_noise: str | None = None
    canary_kind: str = "input"
    defaults_note: Callable[[Any, Mapping[str, Any]], str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.canary_kind not in CANARY_KINDS:
            raise ValueError(f"learner {self.name!r}: canary_kind must be one of {CANARY_KINDS}, got "
                             f"{self.canary_kind!r}")
        knobs = tuple(self.knobs)
        names = [k.name for k in knobs]
        if len(set(names)) != len(names):
            raise ValueError(f"learner {self.name!r} declares a knob twice: {names}")
        object.__setattr__(self, "knobs", knobs)
        if knobs:
            object.__setattr__(self, "params", tuple(names))
        if self.direct_noise is not None and self.direct_noise not in self.params:
            raise ValueError(f"learner {self.name!r}: direct_noise names {self.direct_noise!r}, which is not one of "
                             f"its knobs")

    def sets_noise_directly(self, params: Mapping[str, Any] | None) -> bool:
        """Whether ``params`` set the noise directly (its ``direct_noise`` knob given): epsilon is then the outcome
        of the run, not its target."""
        return self.direct_noise is not None and (params or {}).get(self.direct_noise) is not None

    def epsilon_to_aim_at(self, epsilon: float | None, params: Mapping[str, Any] | None) -> float | None:
        """``epsilon`` as :func:`~dpcore.learners.run_learner` should be given it by a caller that always holds one
        (a page's box, a sweep's point): None where the learner spends none or ``params`` set its noise directly, so
        that an epsilon given for nothing is not said to be ignored."""
        return None if not self.private or self.sets_noise_directly(params) else epsilon

    def choice_warnings(self, params: Mapping[str, Any] | None) -> list[str]:
        """What a page warns about the choices in ``params`` (each knob's ``warn_on``: DP-SGD's shuffled batches,
        whose ε is not a proven guarantee)."""
        return [k.warn_on[v] for k in self.knobs for n, v in (params or {}).items()
                if n == k.name and isinstance(v, str) and v in k.warn_on]

    def knob(self, name: str) -> Knob | None:
        """The declaration of knob ``name``, or None (also for undeclared names of an external learner)."""
        return next((k for k in self.knobs if k.name == name), None)

    def check_params(self, params: Mapping[str, Any] | None) -> dict:
        """``params`` with every value checked by its knob; an unknown name is refused by name.

        The one place a learner's parameters are validated, before any work starts.
        """
        params = dict(params or {})
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            from ..exceptions import DPValueError

            raise DPValueError(f"learner {self.name!r} does not take parameter(s) {', '.join(unknown)}; it takes "
                               f"{', '.join(sorted(self.params)) or 'none'}")
        out = {}
        for key, value in params.items():
            k = self.knob(key)
            out[key] = k.check(value) if k is not None else value
        return out

    def unused(self, params: Mapping[str, Any]) -> list[tuple[Knob, dict]]:
        """The knobs given in ``params`` that this run would not use: each with the values of the knobs it depends on
        (``Knob.when``), the given ones or the defaults (``erm-output`` with ``n_components`` and the linear kernel).

        A knob whose condition rests on a default the learner chooses from the data is taken as used.
        """
        values = {**self.fixed_defaults(), **dict(params or {})}
        out = []
        for name in params or {}:
            knob = self.knob(name)
            if knob is not None and knob.when and not knob.applies(values):
                out.append((knob, {k: values[k] for k in knob.when if k in values}))
        return out

    def shared_params(self, params: Mapping[str, Any]) -> dict:
        """The values of ``params`` that its non-private baseline takes too (knobs declared ``shared``)."""
        return {k.name: params[k.name] for k in self.knobs if k.shared and k.name in params}

    def fixed_defaults(self) -> dict:
        """The knobs whose default does not depend on the data; :func:`run_learner` fills them in."""
        return {k.name: k.default for k in self.knobs if k.default is not None and k.default_from is None}

    def defaults(self, split=None, epsilon: float | None = None) -> dict:
        """Every knob's default for ``split`` (dataset presets included) and ``epsilon`` (default: the learner's
        own; for knobs whose default follows the budget), None where the learner decides."""
        eps = (self.default_epsilon if epsilon is None else epsilon) if self.private else None
        return {k.name: k.default_for(split, eps) for k in self.knobs}
