"""Registry of learners: one interface for every private (and baseline) learner.

Learner modules register themselves with :func:`register`; the registry imports
the provider modules (``_PROVIDERS``, then any other ``dpcore/<package>/learners.py``)
lazily, so ``import dpcore`` stays light (no torch import until a learner is needed).

>>> "majority" in learner_names()
True
"""
from __future__ import annotations

import dataclasses
import importlib
import pathlib
import time
import warnings
from typing import Any, Mapping

import numpy as np

from ..datasets import Split, as_dataset, train_test_split
from ..defaults import DELTA, EPSILON, SEED
from ..exceptions import DatasetError, DPCoreWarning, DPValueError, user_stacklevel
from ..rng import secure_noise, substream
from ..teaching.verdict import epsilon_text
from ..validation import check_delta, check_epsilon, check_fraction, check_int, delta_checked
from .base import EpochCallback, LearnerSpec, RunResult, TestOutputs
from .decision import RULE, answers_on_test_rows, apply_class_shares
from .knobs import Knob, Wording, parse_value
from .metrics import balanced_accuracy, rare_class_recall

_LEARNERS: dict[str, LearnerSpec] = {}

# Modules that call register(...) at import: dpcore's own. A learner from outside dpcore registers itself when its
# module is imported (sweeps load such modules with ``providers``).
_PROVIDERS = [
    "dpcore.learners.trivial",
    "dpcore.training.learners",
    "dpcore.models.learners",
    "dpcore.pate.learners",
    "dpcore.federated.learners",
    "dpcore.images.learners",
]
_loaded = False


def register(spec: LearnerSpec) -> LearnerSpec:
    """Add ``spec`` to the registry (idempotent for the same name)."""
    _LEARNERS[spec.name] = spec
    return spec


def _providers() -> list[str]:
    """``_PROVIDERS`` (their order is the lists' order), then any other ``dpcore/<package>/learners.py``: a new
    package's learners register without an edit here. Found by file name, with no import (importing ``dpcore.ui``
    would load Streamlit)."""
    root = pathlib.Path(__file__).resolve().parent.parent
    found = sorted(f"dpcore.{p.parent.name}.learners" for p in root.glob("*/learners.py"))
    return [*_PROVIDERS, *(m for m in found if m not in _PROVIDERS)]


def _load_providers() -> None:
    global _loaded
    if _loaded:
        return
    for mod in _providers():
        importlib.import_module(mod)
    _loaded = True


def registry_touched() -> bool:
    """Whether any learner has been registered in this process yet (the providers loaded, or one registered by
    hand). A fresh process has touched nothing: what its registry will hold is fixed by dpcore's source alone."""
    return bool(_LEARNERS) or _loaded


def learners() -> dict[str, LearnerSpec]:
    """All registered learners by name."""
    _load_providers()
    return dict(_LEARNERS)


def learner_names(task: str | None = None, *, family: str | None = None, private: bool | None = None) -> list[str]:
    """Names of the registered learners, in the order they registered: those handling ``task``
    (``"classification"`` or ``"regression"``), of ``family`` (:attr:`LearnerSpec.family`: ``"network"``,
    ``"clustering"`` ...) and private or not, where given. The lists pages and commands offer are read here, so a
    learner registered with its family appears in them with no other change.

    >>> learner_names(family="clustering")
    ['dplloyd', 'input-perturbation', 'lloyd', 'random-centres']
    """
    return [n for n, s in learners().items() if (task is None or task in s.tasks)
            and (family is None or s.family == family) and (private is None or s.private == private)]


def trivial_learner(task: str, family: str = "") -> str:
    """The name of the trivial reference for ``task`` (declared ``trivial=True``): what every other learner's score
    is measured against (the pages' chance level, the sweep's trivial row, ``train``'s reference score).

    ``family``: the learners' family, where it has its own reference (a clustering is measured against centres
    drawn at random, which use no data, not against one cluster for every row); otherwise the task's.

    >>> trivial_learner("classification"), trivial_learner("classification", family="clustering")
    ('majority', 'random-centres')
    """
    trivial = [s for s in learners().values() if s.trivial and task in s.tasks]
    found = [s.name for s in trivial if s.family == family] or [s.name for s in trivial if not s.family]
    if not found:
        raise DPValueError(f"no trivial reference learner is registered for task {task!r}")
    return found[0]


def get_learner(name: str) -> LearnerSpec:
    """The :class:`LearnerSpec` registered as ``name`` (its knobs, wording, tasks and run function).

    Raises
    ------
    DPValueError
        For an unknown name, listing the registered ones.

    Examples
    --------
    >>> get_learner("dpsgd").private, get_learner("logreg").private
    (True, False)
    """
    regs = learners()
    if name not in regs:
        raise DPValueError(f"unknown learner {name!r}; choose one of {', '.join(sorted(regs))}")
    return regs[name]


def kept_rows(n: int, fraction: float) -> int:
    """How many of ``n`` training rows :func:`subsample_train` keeps for ``fraction`` (two at least, so that a
    classifier sees two classes)."""
    return n if fraction >= 1.0 else max(2, int(round(fraction * n)))


def subsample_train(split: Split, fraction: float, seed: int) -> Split:
    """Keep a deterministic ``fraction`` of the training rows (for accuracy vs training-set size)."""
    fraction = check_fraction(fraction, "train_fraction")
    if fraction >= 1.0:
        return split
    rng = substream(seed, "train_fraction")
    n = split.X_train.shape[0]
    k = kept_rows(n, fraction)
    idx = rng.choice(n, size=k, replace=False)
    y = np.asarray(split.y_train)
    if split.dataset.task == "classification" and np.unique(y[idx]).size == 1 < np.unique(y).size:
        # a tiny share of a small file drew one class only, which no classifier can train on: the last row drawn
        # gives way to the first row of another class in the same random order (other draws are unchanged)
        other = next(i for i in rng.permutation(n) if y[i] != y[idx[0]])
        idx[-1] = other
    idx = np.sort(idx)
    return Split(
        dataset=split.dataset,
        X_train=split.X_train[idx],
        y_train=split.y_train[idx],
        X_test=split.X_test,
        y_test=split.y_test,
        seed=split.seed,
        test_size=split.test_size,
    )


def _refuse_torch_modules(params: Any) -> None:
    """A torch module in ``params`` is refused with the way to train it: the learners build their own networks
    (``model="linear" | "mlp" | "cnn"``), and :func:`dpcore.train` trains yours."""
    import sys

    nn = sys.modules.get("torch.nn")  # a module can only be given once torch is loaded; never loaded here
    if nn is None or not isinstance(params, Mapping):
        return
    given = [key for key, value in params.items() if isinstance(value, nn.Module)]
    if given:
        raise DPValueError(f"params[{given[0]!r}] is a torch module: run_learner trains its own networks (model= "
                           "'linear', 'mlp' or 'cnn'). Train your nn.Module with dpcore.train(X, y, "
                           "dpcore.TrainConfig(target_epsilon=..., ...), model=your_module), its features scaled by "
                           "declared bounds first (dpcore.BoundedScaler(bounds=...).fit_transform(X))")


#: The scikit-learn estimator of each clustering learner, named where run_learner is asked to cluster rows without
#: labels (it scores clusters against classes)
_CLUSTER_ESTIMATORS = {"dplloyd": "DPLloydKMeans", "input-perturbation": "InputPerturbationKMeans",
                       "lloyd": "LloydKMeans"}


def _is_table(data) -> bool:
    """Rows of features given as a table (a DataFrame, an array, a CSV file's path), not a registry name, a Dataset
    or an ``(X, y)`` pair."""
    import pandas as pd

    from ..datasets.own import _is_csv_path

    return _is_csv_path(data) or isinstance(data, (pd.DataFrame, np.ndarray)) or (
        not isinstance(data, (str, tuple)) and hasattr(data, "__array__"))


def run_learner(
    name: str,
    data: Any,
    label: Any = None,
    *,
    bounds: Any = None,
    class_shares: Any = None,
    task: str | None = None,
    drop: Any = (),
    categories: Any = None,
    epsilon: float | None = None,
    delta: float = DELTA,
    seed: int | None = SEED,
    params: Mapping[str, Any] | None = None,
    train_fraction: float = 1.0,
    test_size: float = 0.25,
    on_epoch: EpochCallback | None = None,
    secure: bool = False,
) -> RunResult:
    """Run a registered learner on a dataset name, a Dataset, a Split, or your own DataFrame or arrays.

    ``data`` is a registry name (``"iris"``), a :class:`~dpcore.datasets.Dataset`, a
    :class:`~dpcore.datasets.Split`, a pandas DataFrame or a CSV file's path with the label column named by
    ``label``, a pair ``(X, y)``, or an array ``X`` with ``label=y``; ``bounds`` declares your data's ranges,
    ``categories`` the values of its columns of categories and the classes of its label (``"diagnosis=healthy|flu|
    covid"``: every model then has one output per declared class), ``task`` its kind and ``drop`` the columns to leave
    out (see :func:`dpcore.datasets.as_dataset`).
    The split is deterministic in ``seed``; ``train_fraction`` keeps that share of the training rows (the test
    rows are unchanged).

    ``class_shares`` declares a classification label's class shares as public knowledge (``"fraud=0.07,
    review=0.05, ok=0.88"``, or on a Dataset with :meth:`~dpcore.datasets.Dataset.with_class_shares`): a learner
    that releases class probabilities then answers the class of largest probability divided by its share
    (:func:`dpcore.learners.decision.balanced_decision`; Elkan 2001, Saerens et al. 2002), and its metrics, its
    confusion matrix and ``model.predict`` follow. That is post-processing: the run, its ε and its event are the
    same. Without it, on a label where one class is most of the rows, a private model often answers that class
    for every row.

    The result's ``model``, for learners that release one, predicts on new rows in your data's units
    (``result.model.predict(X_new)``); its ``event`` is the run's dp_accounting event.
    ``epsilon`` defaults to the learner's own (``LearnerSpec.default_epsilon``: :data:`dpcore.defaults.EPSILON` for
    most, 5 for PATE and 4 for federated learning, as the command line and the pages start); a non-private one
    (``logreg``, ``non-private`` ...) reports ε = ∞ and warns when given an epsilon. ``params`` that set the noise
    directly (DP-SGD's ``noise_multiplier``) make ε the run's outcome, not its target: an ``epsilon`` given with them
    is not used, and a warning says so where the run spent more.

    ``secure=True`` is the mode for a real release: every noise draw, Poisson batch and randomized-response coin
    comes from the operating system's cryptographic source and every released value lands on a grid that defeats
    Mironov's floating-point attack (:func:`dpcore.rng.secure_noise`). A seed given with it is refused (leave
    ``seed`` out, or give ``seed=None``); the randomness that releases nothing (the split, initial weights) uses
    seed 0.
    """
    spec = get_learner(name)
    _refuse_torch_modules(params)
    if not isinstance(data, Split):
        if label is None and spec.family == "clustering" and _is_table(data):
            estimator = _CLUSTER_ESTIMATORS.get(name, "DPLloydKMeans")
            raise DatasetError(
                f"run_learner({name!r}) scores the clusters against the data's classes, so it needs label=; to "
                "cluster rows that have no labels: cluster_rows(load_csv_unlabelled(df, bounds=...), "
                f"{name if name in _CLUSTER_ESTIMATORS else 'dplloyd'!r}, k=..., epsilon=...) (from "
                f"dpcore.models.cluster_rows and dpcore.datasets.csv_upload), or {estimator}(...).fit(X) from "
                "dpcore.models.kmeans, as scikit-learn's KMeans")
        data = as_dataset(data, label, task=task, bounds=bounds, class_shares=class_shares, drop=drop,
                          categories=categories)
    elif label is not None or bounds is not None or task is not None or class_shares is not None or drop or \
            categories is not None:
        raise DPValueError("label=, bounds=, class_shares=, task=, drop= and categories= describe your own data; a "
                           "Split carries its own (declare the shares on its Dataset: dataset.with_class_shares(...))")
    if secure:
        if seed is not None and seed is not SEED:  # the default seed is no request for seeded noise
            raise DPValueError(f"seed={seed!r} with secure=True: secure noise cannot be seeded (anyone who knew the "
                               "seed could subtract the noise). Give seed=None, or secure=False for a reproducible "
                               "demonstration")
        with secure_noise():
            return run_learner(name, data, epsilon=epsilon, delta=delta, seed=0, params=params,
                               train_fraction=train_fraction, test_size=test_size, on_epoch=on_epoch)
    if seed is None:
        raise DPValueError("seed=None asks for unseeded noise: pass secure=True for the secure mode, or a seed "
                           "(an integer >= 0) for a reproducible demonstration")
    seed = check_int(seed, "seed", minimum=0)
    if params is not None and not isinstance(params, Mapping):
        raise DPValueError(f"params must be a mapping of knob names to values, such as {{'epochs': 5}}, got "
                           f"{params!r:.60}")
    params = dict(params or {})
    given_epsilon = epsilon
    if spec.private:
        epsilon = check_epsilon(spec.default_epsilon if epsilon is None else epsilon)
    elif epsilon is not None:  # an epsilon given to a learner that spends none: say so, it is not a private run
        reference = f"; its private counterpart is {spec.baseline!r}" if spec.baseline else ""
        private = [n for n, s in learners().items() if s.baseline == name]
        counterpart = f"; private learners on the same model: {', '.join(sorted(private))}" if private else reference
        warnings.warn(f"{name!r} is a non-private reference: it ignores epsilon={epsilon} and its ε is infinite"
                      f"{counterpart}", DPCoreWarning, stacklevel=user_stacklevel())
    if epsilon is None:  # the value a run function has always been given (a reference ignores it)
        epsilon = EPSILON
    delta = check_delta(delta)
    if isinstance(data, Split):
        split = data
    else:
        split = train_test_split(data, test_size=test_size, seed=seed)
    if split.task not in spec.tasks:
        fit = [n for n in learner_names(split.task) if split.dataset.is_image or not learners()[n].images_only]
        raise DPValueError(
            f"learner {name!r} handles {' and '.join(spec.tasks)}, but dataset {split.dataset.name!r} is {split.task}; "
            f"the learners for it: {', '.join(fit)}"
        )
    if spec.images_only and not split.dataset.is_image:
        raise DPValueError(f"learner {name!r} needs image data; {split.dataset.name!r} is tabular")
    params = spec.check_params(params)  # unknown names and bad values refused here, before any work
    params = {**spec.fixed_defaults(), **params}  # the declared defaults: the same for the CLI, sweeps and pages
    split = subsample_train(split, train_fraction, seed)
    if spec.private and spec.uses_delta and delta > 0:
        check_delta(delta, n=split.X_train.shape[0])  # warns when delta > 1/n
    aimed = epsilon if given_epsilon is not None and spec.private and spec.sets_noise_directly(params) else None
    t0 = time.perf_counter()
    # numpy's floating-point warnings off: at extreme settings a learner's matrices overflow on every step (162
    # lines for one PATE run at noise 1e-308); what it computes is judged by its result and its epsilon instead
    with delta_checked(), np.errstate(all="ignore"):  # delta said once above: train() need not say it again
        result = spec.run(split, epsilon=epsilon, delta=delta, seed=seed, params=params, on_epoch=on_epoch)
    if result.seconds == 0.0:
        object.__setattr__(result, "seconds", time.perf_counter() - t0)
    if aimed is not None and not result.epsilon <= aimed:  # nan too
        warnings.warn(f"epsilon={aimed:g} was not used: params set {spec.direct_noise}="
                      f"{params[spec.direct_noise]:g}, so the run spent the epsilon that noise gives, "
                      f"{epsilon_text(result.epsilon, digits=4)} (result.epsilon), more than epsilon. Leave "
                      f"{spec.direct_noise} out to calibrate the noise to epsilon, or leave epsilon out", DPCoreWarning,
                      stacklevel=user_stacklevel())
    if split.dataset.categories and result.model is not None and hasattr(result.model, "categories"):
        # new rows to predict hold the declared columns as they are: the model encodes them as the training rows
        object.__setattr__(result, "model", dataclasses.replace(result.model, categories=split.dataset.categories))
    apply_class_shares(split, result, title=spec.title)  # post-processing by the declared shares, if any
    _add_balanced_accuracy(split, result)
    judge_against_trivial(spec, split, result)
    if spec.private:  # what its epsilon protects, unless the run said it (it may depend on the knobs)
        result.extras.setdefault("protects", spec.wording.protects)
    return result


def _add_balanced_accuracy(split: Split, result: RunResult) -> None:
    """A classifier's balanced accuracy and its rarest class's recall, from its answers on the test rows, where the
    learner scored accuracy alone (PATE's student, FedAvg's global model): every classifier's run then has all three.
    Clustering is scored by matched accuracy only."""
    outputs = result.test_outputs
    if (split.task == "classification" and outputs is not None and outputs.kind in ("probability", "score")
            and len(outputs.values) == split.y_test.size):
        answers = answers_on_test_rows(split, result)
        if "balanced_accuracy" not in result.metrics:
            result.metrics["balanced_accuracy"] = balanced_accuracy(split.y_test, answers)
        if "rare_class_recall" not in result.metrics:
            result.metrics["rare_class_recall"] = rare_class_recall(split.y_test, answers)


def judge_against_trivial(spec: LearnerSpec, split: Split, result: RunResult) -> None:
    """Warn when a model does no better than the trivial predictor, naming which way.

    A classifier that answers one class for every test row gets ``extras["single_class"]`` (its accuracy is
    that class's share, not anything learnt); any other model whose test score is no better than always
    answering the most common training class (or, for regression, the training mean) gets
    ``extras["no_better_than_trivial"]``. The trivial baselines themselves are not flagged. The messages
    carry no per-run numbers, so a sweep's many runs give one message per learner.
    """
    when = result.extras.pop("when_trivial", None) or spec.wording.when_trivial  # the run's advice, if it has one
    if spec.trivial or split.y_test.size == 0:
        return
    advice = ("The noise may have drowned what it learnt: try a larger epsilon, or other settings for this dataset."
              if spec.private else "Other settings may suit this dataset better.")
    if spec.private and split.task == "regression":  # the label's declared range sets the noise (and the scale)
        advice = ("The noise may have drowned what it learnt: its size follows the label's declared range, so a range "
                  "wider than most labels need (a few extreme labels, or bounds read from the rows, which reach them) "
                  "drowns the rest; declare a narrower one for the label (values outside are clipped), or try a "
                  "larger epsilon.")
    if when:  # the learner's own reason, or the run's where it depends on its knobs (no per-run numbers: one
        # message per learner and setting)
        advice = when.format(d=split.X_train.shape[1], n=split.X_train.shape[0])
    who = spec.title  # the name a reader knows, not the registry's identifier
    outputs = result.test_outputs

    def say(key: str, value, message: str) -> None:
        result.extras[key] = value
        warnings.warn(f"{message} {advice}", DPCoreWarning, stacklevel=user_stacklevel())

    if split.task == "classification":
        if outputs is not None and outputs.kind in ("probability", "score") and np.unique(split.y_test).size > 1:
            predicted = np.unique(answers_on_test_rows(split, result))
            if predicted.size == 1:
                label = _class_name(split, int(predicted[0]))
                say("single_class", label, f"{who} predicts the single class {label!r} for every test row: "
                    "its accuracy is that class's share of the test rows, not skill.")
                return
        accuracy = result.metrics.get("accuracy")
        reference = result.extras.get("random_centres") if outputs is not None and outputs.kind == "cluster" else None
        if reference is not None and accuracy is not None:  # a clustering: judged against centres that use no data
            if reference.covers(accuracy):
                say("no_better_than_trivial", True, f"{who} is no more accurate on the test rows than centres drawn "
                    "at random inside the declared bounds, which use no data (within their spread).")
            return
        if result.extras.get("decision_rule") == RULE:
            # answering by the declared shares trades accuracy on the common class for the rare ones: judged by
            # balanced accuracy, where always answering one class scores 1/k
            if result.metrics.get("balanced_accuracy", 1.0) <= 1.0 / np.unique(split.y_test).size:
                say("no_better_than_trivial", True, f"{who}, answering by the declared class shares, finds each class "
                    "no better on the test rows (balanced accuracy) than always answering one class.")
            return
        values, counts = np.unique(split.y_train, return_counts=True)
        common = int(values[np.argmax(counts)])
        if accuracy is not None and accuracy <= float(np.mean(split.y_test == common)):
            # the class is named only where it clearly leads in the whole dataset: on a balanced set (iris) the
            # leader changes with the split and the subsample, and naming it would turn one message into one per
            # class across a sweep's seeds and sizes
            top = np.sort(np.unique(np.asarray(split.dataset.y), return_counts=True)[1])[::-1]
            name = f", {_class_name(split, common)!r}" if top.size == 1 or top[0] >= 1.1 * top[1] else ""
            trivial = (f"putting every row in one cluster (matched to the most common training class{name})"
                       if outputs is not None and outputs.kind == "cluster" else
                       f"always answering the most common training class ({name[2:]})" if name else
                       "always answering the most common training class")
            say("no_better_than_trivial", True, f"{who} is no more accurate on the test rows than {trivial}.")
        return
    mse = result.metrics.get("mse")
    if mse is not None and mse >= float(np.mean((split.y_test - np.mean(split.y_train)) ** 2)):
        say("no_better_than_trivial", True, f"{who}: its test error is no smaller than predicting the mean of "
            "the training labels for every row.")


def _class_name(split: Split, index: int) -> str:
    names = split.dataset.target_names
    return str(names[index]) if 0 <= index < len(names) else str(index)


__all__ = [
    "trivial_learner",
    "judge_against_trivial",
    "EpochCallback",
    "LearnerSpec",
    "RunResult",
    "TestOutputs",
    "Knob",
    "Wording",
    "parse_value",
    "register",
    "registry_touched",
    "learners",
    "learner_names",
    "get_learner",
    "run_learner",
    "kept_rows",
    "subsample_train",
]
