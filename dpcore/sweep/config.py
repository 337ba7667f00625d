"""The frozen description of a sweep and the list of runs it expands to.

A sweep is a grid: one dataset x several learners x one swept axis x seeds, with
every other knob fixed. :class:`SweepConfig` validates all of it up front, so a
typo fails in a second with a message that names the culprit instead of after
an hour of computing.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import json
import math
import numbers
import pathlib
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

import dpcore

from ..datasets import REGISTRY, Dataset, load_dataset
from ..defaults import DELTA, EPSILON
from ..exceptions import DPTypeError, DPValueError
from ..learners import LearnerSpec, get_learner, learners, trivial_learner
from ..validation import check_delta, check_epsilon, check_fraction, check_int
from .axes import AXES, BUILTIN_AXES, get_axis, normalise_value

#: Repetitions per value (each its own split and noise) unless told otherwise: the page's "Seeds per value" and
#: ``sweep --seeds`` start here. Three seeds give a spread that one lucky draw does not dominate.
DEFAULT_SEEDS = 3

#: Bump when a change in dpcore makes earlier cached runs wrong: every cache key includes it.
CODE_VERSION = 5  # 3: the non-private ERM model's automatic Λ became 1e-5; 4: rows on inferred bounds say they leak;
# 5: rows say what their ε protects (``unit``: a client's whole data is no record's guarantee)

#: Non-private counterparts tried, in order, when a learner names no ``baseline``.
FALLBACK_BASELINES = {"classification": ("non-private", "logreg"), "regression": ("linreg", "non-private")}

# run_learner's own arguments: they are set by the sweep, never through params.
_RESERVED_PARAMS = ("epsilon", "delta", "seed", "train_fraction", "test_size")


def load_providers(providers: Sequence[str]) -> None:
    """Import extra learner provider modules so their learners are registered.

    A provider module registers its learners when imported, or exposes a
    ``register_learners()`` function, which is called every time (so learners
    removed from the registry by a test come back). Runs do this in each worker
    process, so a learner defined outside ``dpcore`` works with process pools and
    Dask workers as long as its module is importable there.
    """
    for mod in providers:
        try:
            m = importlib.import_module(mod)
        except ImportError as exc:
            raise DPValueError(
                f"could not import learner provider module {mod!r} ({exc}); check the module path and sys.path"
            ) from None
        hook = getattr(m, "register_learners", None)
        if callable(hook):
            hook()


def source_digest(module_name: str) -> str:
    """SHA-256 of the source a learner's results depend on, so editing it invalidates cached runs.

    For a learner in ``dpcore.<package>`` that is every ``.py`` file of the package
    (the learner, its engine, its models); for one outside dpcore, its module file.
    The shared split and registry code (``dpcore.learners``, ``dpcore.datasets``) is
    always included, and so is the accounting (``dpcore.accounting``): a cached row's epsilon was computed by it
    (a change of how a run is accounted, as shuffled batches' was, must not leave the old epsilon in the cache).
    A module without a source file hashes as ``"?"``.
    """
    root = pathlib.Path(dpcore.__file__).parent
    files: list[pathlib.Path] = []
    parts = module_name.split(".")
    if parts[0] == "dpcore" and len(parts) > 1 and (root / parts[1]).is_dir():
        files += sorted((root / parts[1]).rglob("*.py"))
    else:
        mod = sys.modules.get(module_name)
        path = getattr(mod, "__file__", None) if mod is not None else None
        if path:
            files.append(pathlib.Path(path))
    for shared in ("learners", "datasets", "accounting"):
        files += sorted((root / shared).rglob("*.py"))
    return _files_digest(files)


def _files_digest(files: Sequence[pathlib.Path]) -> str:
    h = hashlib.sha256()
    for f in dict.fromkeys(files):
        try:
            h.update(f.read_bytes())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def tree_digest() -> str:
    """SHA-256 of every source file of dpcore: a sweep plan remembered under it (:meth:`SweepConfig.plan`) is never
    read back by other code."""
    return _files_digest(sorted(pathlib.Path(dpcore.__file__).parent.rglob("*.py")))


def dataset_fingerprint(dataset: "str | Dataset") -> str:
    """A stable identifier of the data: the registry name, or a hash of an uploaded dataset's arrays.

    A :class:`Dataset` that is the registry's own object (``load_dataset(name)``)
    is identified by its name, so the page and the CLI share cache entries.
    """
    if isinstance(dataset, str):
        return f"registry:{dataset}"
    if dataset.name in REGISTRY and load_dataset(dataset.name) is dataset:
        return f"registry:{dataset.name}"
    h = hashlib.sha256()
    h.update(json.dumps([dataset.name, dataset.task, list(dataset.target_names), dataset.label_range,
                         dataset.image_shape]).encode())
    if getattr(dataset, "inferred_classes", ()):  # classes read from the rows: the runs leak (their rows say so)
        h.update(json.dumps(["inferred_classes", list(dataset.inferred_classes)]).encode())
    if getattr(dataset, "class_shares", ()):  # the answers follow the declared shares: another cache entry
        h.update(json.dumps(["class_shares", list(dataset.class_shares)]).encode())
    for arr in (dataset.X, dataset.y) + tuple(dataset.bounds or ()):
        a = np.ascontiguousarray(arr)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return "sha256:" + h.hexdigest()


def _clean_param(key: str, value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (numbers.Integral, np.integer)):
        return int(value)
    if isinstance(value, (numbers.Real, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            raise DPValueError(f"parameter {key!r} must be finite, got {v!r}")
        return v
    raise DPTypeError(
        f"parameter {key!r} must be a number, a string, a bool or None (it goes into the cache key), "
        f"got {type(value).__name__}"
    )


def check_knob_type(key: str, value: Any, specs: Sequence[LearnerSpec] | None = None) -> Any:
    """``value`` checked by the declaration of knob ``key`` in every learner of ``specs`` that takes it.

    A learner's :class:`~dpcore.learners.Knob` decides (type, range, choices), so the sweep
    refuses exactly what the CLI and the learner refuse (``epochs=-1``, ``clip_norm=1e308``,
    ``regularization=-1``), with the same message, before any run starts. With ``specs``
    None every registered learner is asked. A knob no declaration covers (a learner
    registered outside dpcore with names only) is passed through.

    Raises
    ------
    DPValueError
        Naming the knob, what it takes and the value given.

    >>> check_knob_type("epochs", 5.0)
    5
    >>> check_knob_type("epochs", "abc")
    Traceback (most recent call last):
    ...
    dpcore.exceptions.DPValueError: epochs must be a whole number from 1 to 10000, got 'abc'
    """
    if value is None:
        return None
    knobs = [spec.knob(key) for spec in (learners().values() if specs is None else specs)]
    knobs = [k for k in knobs if k is not None]
    if not knobs:
        return value
    if specs is not None:  # every learner of the sweep that takes the knob must accept the value
        for knob in knobs:
            cleaned = knob.check(value)
        return cleaned
    errors = []
    for knob in knobs:  # no sweep: the value only has to suit some learner that takes the knob
        try:
            return knob.check(value)
        except DPValueError as exc:
            errors.append(exc)
    raise errors[0]


class FrozenParams(dict):
    """A read-only, hashable, picklable dict: the fixed knobs of a frozen :class:`SweepConfig`."""

    def _readonly(self, *args, **kwargs):
        raise TypeError("SweepConfig.params is read-only; build a new SweepConfig (dataclasses.replace) instead")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = __ior__ = _readonly  # type: ignore

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))

    def __reduce__(self):
        return (FrozenParams, (dict(self),))


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: everything a worker needs, and nothing it must look up elsewhere.

    ``key`` is the SHA-256 of the run's full configuration (learner, its code
    location and a digest of its source (:func:`source_digest`), data fingerprint,
    parameters, epsilon, delta, seed, training fraction, test size,
    :data:`CODE_VERSION`): the disk-cache key. Editing a learner's package therefore
    recomputes its runs instead of serving stale ones.
    """

    learner: str
    role: str  # "swept", "baseline" or "trivial"
    dataset: "str | Dataset" = field(repr=False)
    dataset_id: str
    axis: str
    value: float  # NaN for baselines (drawn as horizontal lines)
    seed: int
    epsilon: float
    delta: float
    params: tuple[tuple[str, Any], ...]
    train_fraction: float
    test_size: float
    providers: tuple[str, ...]
    key: str
    secure: bool = False  # secure noise (run_learner(secure=True)); ``seed`` then only numbers the repetition


@dataclass(frozen=True, eq=False)
class SweepConfig:
    """A privacy-utility sweep: dataset x learners x one axis x seeds, every other knob fixed.

    Parameters
    ----------
    dataset : str, Dataset, DataFrame or (X, y)
        A registry name (``"digits"``), a loaded / uploaded :class:`~dpcore.datasets.Dataset`, or your own
        DataFrame (with ``label``) or arrays, read by :func:`~dpcore.datasets.as_dataset` with ``label`` and
        ``bounds``.
    learners : sequence of str
        Registered learner names to sweep (``"dpsgd"``, ``"erm-objective"``...).
    axis : str, default "epsilon"
        ``"epsilon"``, ``"clip_norm"``, ``"noise_multiplier"``, ``"learning_rate"``,
        ``"train_fraction"``, or any other numeric knob every swept learner takes.
    values : sequence of float
        The axis values (sorted, duplicates dropped).
    seeds : int, default 3
        Repetitions per value; run ``i`` uses seed ``base_seed + i`` (for its split and its noise).
    base_seed : int, default 0
    epsilon : float, default 1.0
        The fixed budget when the axis is not epsilon.
    delta : float, default 1e-5
    params : mapping, optional
        Fixed knobs (``{"epochs": 5}``). Each learner receives the ones it lists in
        ``LearnerSpec.params``; a knob no learner takes is an error (a typo).
    train_fraction : float, default 1.0
        Share of the training rows kept (unless that is the axis).
    test_size : float, default 0.25
    include_baselines : bool, default True
        Add the non-private counterpart(s) and the trivial line (majority class / mean; random centres for a
        sweep of clusterings), once per seed.
    providers : sequence of str, optional
        Extra modules to import (in every worker too) to register learners from outside
        ``dpcore``; see :func:`load_providers`.
    secure : bool, default False
        Secure noise in every run (``run_learner(secure=True)``): the split uses seed 0 and the seeds only number
        the repetitions, whose noise comes from the operating system's source.
    label, bounds : optional
        For a DataFrame or arrays only: the label column's name (or the labels) and the declared feature bounds
        (:func:`~dpcore.datasets.as_dataset`); a sweep of your own data is never written to the cache on disk.

    Raises
    ------
    DPValueError, DPTypeError
        For an empty range, a bad value, an unknown learner, a learner that cannot
        be swept along ``axis`` or does not fit the data, zero seeds, and so on.

    Notes
    -----
    Each seed draws its own train/test split and its own noise, so the spread
    across seeds is the spread a person would see re-running the experiment.
    ``epsilon`` in the result is what each run reports spending (its accountant),
    which may differ slightly from the target it was given.

    References
    ----------
    .. [1] K. Chaudhuri, C. Monteleoni, A. D. Sarwate, "Differentially private empirical risk
       minimization", JMLR 12, 2011 (privacy-accuracy and accuracy vs training-set-size trade-offs).
    .. [2] M. Abadi et al., "Deep learning with differential privacy", CCS 2016 (accuracy vs noise
       level, clipping norm and epsilon).
    .. [3] B. Ma, W. Q. Yan, E. Lai, J. Wu, "A new noise generating method based on Gaussian sampling
       for privacy preservation", 2021 (accuracy vs clipping norm, noise level and learning rate).

    Examples
    --------
    >>> cfg = SweepConfig(dataset="iris", learners=["majority"], axis="train_fraction",
    ...                   values=[0.5, 1.0], seeds=2, include_baselines=False)
    >>> len(cfg.runs())
    4
    """

    dataset: "str | Dataset"
    learners: tuple[str, ...]
    axis: str = "epsilon"
    values: tuple[float, ...] = ()
    seeds: int = DEFAULT_SEEDS
    base_seed: int = 0
    epsilon: float = EPSILON
    delta: float = DELTA
    params: Mapping[str, Any] = field(default_factory=dict)
    train_fraction: float = 1.0
    test_size: float = 0.25
    include_baselines: bool = True
    providers: tuple[str, ...] = ()
    secure: bool = False
    label: Any = field(default=None, repr=False)
    bounds: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        providers = (self.providers,) if isinstance(self.providers, str) else tuple(self.providers or ())
        self._set("providers", tuple(str(p) for p in providers))
        load_providers(self.providers)
        self._check_dataset()
        specs = self._check_learners()
        ax = self._check_axis(specs)
        self._check_values(ax, specs)
        self._check_numbers()
        self._check_params(specs)

    def _set(self, key: str, value) -> None:
        object.__setattr__(self, key, value)  # a frozen dataclass cleans its own fields here

    def _check_dataset(self) -> None:
        if isinstance(self.dataset, (str, Dataset)):
            if self.label is not None or self.bounds is not None:
                raise DPValueError("label and bounds are for your own DataFrame or arrays; a registry name or a "
                                   "Dataset already carries its labels and bounds: leave them out")
        else:
            from ..datasets import as_dataset

            self._set("dataset", as_dataset(self.dataset, self.label, bounds=self.bounds))
        if isinstance(self.dataset, str):
            if self.dataset not in REGISTRY:
                raise DPValueError(f"unknown dataset {self.dataset!r}; choose one of {', '.join(REGISTRY)}")
        elif not isinstance(self.dataset, Dataset):
            raise DPTypeError(f"dataset must be a registry name or a Dataset, got {type(self.dataset).__name__}")

    def _check_learners(self) -> list:
        names = (self.learners,) if isinstance(self.learners, str) else tuple(self.learners or ())
        if not names:
            raise DPValueError("learners is empty; name at least one learner to sweep, e.g. ['dpsgd']")
        if len(set(names)) != len(names):
            raise DPValueError(f"learners lists a name twice: {list(names)}")
        specs = [get_learner(n) for n in names]  # unknown names raise with the list of choices
        self._set("learners", names)
        task, is_image = self.task, self.is_image
        for spec in specs:
            if task not in spec.tasks:
                raise DPValueError(
                    f"learner {spec.name!r} handles {' and '.join(spec.tasks)}, but dataset "
                    f"{self.dataset_name!r} is {task}; pick learners for {task}"
                )
            if spec.images_only and not is_image:
                raise DPValueError(f"learner {spec.name!r} needs image data; {self.dataset_name!r} is tabular")
        return specs

    def _check_axis(self, specs: list):
        if not isinstance(self.axis, str) or not self.axis.strip():
            raise DPTypeError(f"axis must be a non-empty string such as 'epsilon', got {self.axis!r}")
        ax = get_axis(self.axis)
        for spec in specs:
            if self.axis == "epsilon" and not spec.private:
                raise DPValueError(
                    f"learner {spec.name!r} is not private, so it cannot be swept along epsilon; "
                    "non-private and trivial baselines are added to every sweep automatically"
                )
            if self.axis not in BUILTIN_AXES and self.axis not in spec.params:
                raise DPValueError(
                    f"learner {spec.name!r} does not take {self.axis!r}, so it cannot be swept along it; "
                    f"it takes {sorted(spec.params) or 'no parameters'} (and epsilon, train_fraction)"
                )
        return ax

    def _check_values(self, ax, specs: list) -> None:
        if isinstance(self.values, (str, bytes)) or not isinstance(self.values, (Sequence, np.ndarray)):
            raise DPTypeError(f"values must be a sequence of numbers, got {type(self.values).__name__}")
        if len(self.values) == 0:
            raise DPValueError(f"the {self.axis} range is empty; give at least one value, e.g. values=[0.1, 1, 10]")
        vals = sorted({normalise_value(ax.check(v, f"{self.axis} value")) for v in self.values})
        if self.axis not in BUILTIN_AXES:  # a knob axis: every value must be one its learners accept
            for v in vals:
                check_knob_type(self.axis, v, specs)
        self._set("values", tuple(vals))

    def _check_numbers(self) -> None:
        if isinstance(self.seeds, bool) or not isinstance(self.seeds, (numbers.Integral, np.integer)):
            raise DPTypeError(f"seeds must be an integer number of repetitions, got {self.seeds!r}")
        if int(self.seeds) < 1:
            raise DPValueError(f"seeds must be at least 1 (the number of repetitions per value), got {self.seeds}")
        self._set("seeds", int(self.seeds))
        self._set("base_seed", check_int(self.base_seed, "base_seed", minimum=0))
        self._set("secure", bool(self.secure))
        self._set("epsilon", check_epsilon(self.epsilon))
        self._set("delta", check_delta(self.delta))
        self._set("train_fraction", check_fraction(self.train_fraction, "train_fraction"))
        ts = float(self.test_size)
        if not 0.0 < ts < 1.0:
            raise DPValueError(f"test_size must be strictly between 0 and 1, got {self.test_size!r}")
        self._set("test_size", ts)
        self._set("include_baselines", bool(self.include_baselines))

    def _check_params(self, specs: list) -> None:
        """The fixed knobs: each one a learner of the sweep (or a baseline) takes, with a value it accepts."""
        if not isinstance(self.params, Mapping):
            raise DPTypeError(f"params must be a mapping of knob -> value, got {type(self.params).__name__}")
        params = {}
        for k, v in self.params.items():
            if not isinstance(k, str):
                raise DPTypeError(f"params keys must be strings, got {k!r}")
            if k in _RESERVED_PARAMS:
                raise DPValueError(f"set {k!r} with the sweep's own {k}= argument, not through params")
            if k == self.axis:
                raise DPValueError(f"{k!r} is the swept axis; remove it from the fixed params")
            params[k] = check_knob_type(k, _clean_param(k, v), specs + [get_learner(b) for b in self.baselines()])
        takers = [spec for spec in specs + [get_learner(b) for b in self.baselines()]]
        accepted = set().union(*(set(s.params) for s in takers)) if takers else set()
        stray = sorted(set(params) - accepted)
        if stray:
            raise DPValueError(
                f"no learner in this sweep takes parameter(s) {stray}; they take {sorted(accepted) or 'none'}"
            )
        self._set("params", FrozenParams(sorted(params.items())))

    # -- derived facts -------------------------------------------------------------------------
    @property
    def dataset_name(self) -> str:
        return self.dataset if isinstance(self.dataset, str) else self.dataset.name

    @property
    def task(self) -> str:
        return REGISTRY[self.dataset].task if isinstance(self.dataset, str) else self.dataset.task

    @property
    def is_image(self) -> bool:
        if isinstance(self.dataset, str):
            return REGISTRY[self.dataset].image_shape is not None
        return self.dataset.is_image

    @property
    def metric(self) -> str:
        """The headline metric: ``"accuracy"`` for classification, ``"mse"`` for regression."""
        return "accuracy" if self.task == "classification" else "mse"

    @property
    def sets_noise(self) -> bool:
        """True when the noise multiplier σ is swept or fixed: each run then spends the ε its σ gives, and
        ``epsilon`` is not used (no ε is aimed at)."""
        return self.axis == "noise_multiplier" or "noise_multiplier" in dict(self.params)

    @property
    def seed_list(self) -> tuple[int, ...]:
        return tuple(range(self.base_seed, self.base_seed + self.seeds))

    def _fits(self, name: str | None) -> bool:
        spec = learners().get(name) if name else None
        return spec is not None and self.task in spec.tasks and (self.is_image or not spec.images_only)

    def baseline_for(self, learner: str) -> str | None:
        """The non-private counterpart drawn beside ``learner``: its ``LearnerSpec.baseline`` if that is
        registered and fits the data, else (for a private learner) the first registered of
        :data:`FALLBACK_BASELINES`; None if there is none or baselines are off."""
        if not self.include_baselines:
            return None
        spec = learners()[learner]
        if self._fits(spec.baseline):
            return spec.baseline
        if spec.private:
            return next((b for b in FALLBACK_BASELINES[self.task] if self._fits(b)), None)
        return None

    def trivial(self) -> str:
        """The trivial line's learner: the swept learners' family's own (random centres for clusterings), else the
        task's (the majority class, the mean)."""
        families = {get_learner(name).family for name in self.learners}
        return trivial_learner(self.task, family=families.pop() if len(families) == 1 else "")

    def baselines(self) -> tuple[str, ...]:
        """The non-private counterparts of the swept learners that are registered, then the trivial line."""
        if not self.include_baselines:
            return ()
        if "_planned_baselines" in self.__dict__:  # a config read back by from_plan: the registry is not loaded
            return self.__dict__["_planned_baselines"]
        out: list[str] = []
        for name in self.learners:
            choice = self.baseline_for(name)
            if choice and choice not in self.learners and choice not in out:
                out.append(choice)
        trivial = self.trivial()
        if self._fits(trivial) and trivial not in self.learners:
            out.append(trivial)
        return tuple(out)

    def _params_for(self, spec: LearnerSpec, value: float | None, role: str = "swept") -> dict:
        p = {k: v for k, v in self.params.items() if k in spec.params}
        if role != "swept":
            # a baseline takes only the knobs a swept learner declares shared with it (the model, the epochs),
            # not the ones tuned for privacy (its clip norm, its learning rate)
            swept = [get_learner(n) for n in self.learners]
            p = {k: v for k, v in p.items()
                 if spec.knob(k) is None or any(s.knob(k) is not None and s.knob(k).shared for s in swept)}
        if value is not None and self.axis not in BUILTIN_AXES:
            # named axes are real-valued; a generic knob (epochs, teachers...) gets an int when integral
            integral = value.is_integer() and (get_axis(self.axis).integer or self.axis not in AXES)
            p[self.axis] = int(value) if integral else float(value)
        return dict(sorted(p.items()))

    def _run(self, spec: LearnerSpec, role: str, value: float | None, seed: int, data_id: str,
             code: dict[str, str]) -> RunSpec:
        eps = value if (self.axis == "epsilon" and value is not None) else self.epsilon
        tf = value if (self.axis == "train_fraction" and value is not None) else self.train_fraction
        params = self._params_for(spec, value, role)
        key_doc = {
            "code_version": CODE_VERSION,
            "dpcore": dpcore.__version__,
            "learner": spec.name,
            "impl": f"{getattr(spec.run, '__module__', '?')}.{getattr(spec.run, '__qualname__', '?')}",
            "source": code[spec.name],
            "dataset": data_id,
            "params": params,
            "epsilon": eps if spec.private else None,
            "delta": self.delta if (spec.private and spec.uses_delta) else None,
            "seed": seed,
            "train_fraction": tf,
            "test_size": self.test_size,
            "secure": bool(self.secure),
        }
        key = hashlib.sha256(json.dumps(key_doc, sort_keys=True, default=str).encode()).hexdigest()
        return RunSpec(
            learner=spec.name, role=role, dataset=self.dataset, dataset_id=data_id, axis=self.axis,
            value=float("nan") if value is None else float(value), seed=seed, epsilon=eps, delta=self.delta,
            params=tuple(params.items()), train_fraction=tf, test_size=self.test_size,
            providers=self.providers, key=key, secure=bool(self.secure),
        )

    def runs(self) -> list[RunSpec]:
        """Every run of the sweep, in a dispatch order that fills the chart evenly.

        Baselines come first (one run per seed, ``value`` NaN); then the swept
        runs seed by seed, so a first rough curve appears after one pass over the values.
        """
        return list(self._plan)

    @functools.cached_property
    def _plan(self) -> tuple[RunSpec, ...]:
        # computed once: hashing an uploaded dataset's arrays is not free, and pages ask often
        data_id = dataset_fingerprint(self.dataset)
        regs = learners()
        names = self.learners + self.baselines()
        digests: dict[str, str] = {}  # module -> source digest, computed once per module
        code: dict[str, str] = {}
        for n in names:
            mod = getattr(regs[n].run, "__module__", "") or ""
            if mod not in digests:
                digests[mod] = source_digest(mod)
            code[n] = digests[mod]
        out: list[RunSpec] = []
        trivial = self.trivial()
        for seed in self.seed_list:
            for b in self.baselines():
                out.append(self._run(regs[b], "trivial" if b == trivial else "baseline", None, seed, data_id, code))
        for seed in self.seed_list:
            for v in self.values:
                for name in self.learners:
                    out.append(self._run(regs[name], "swept", v, seed, data_id, code))
        return tuple(out)

    def wordings(self) -> dict[str, tuple[str, str]]:
        """``{learner: (its title, what its ε protects)}`` for the swept learners (what
        :func:`~dpcore.sweep.summary.neighbouring_note` says of them)."""
        if "_planned_wordings" in self.__dict__:
            return dict(self.__dict__["_planned_wordings"])
        specs = [get_learner(name) for name in self.learners]
        return {spec.name: (spec.title, spec.wording.protects) for spec in specs}

    def plan(self) -> dict | None:
        """This sweep as JSON data, from which :meth:`from_plan` rebuilds it without the learner registry (the
        command line then answers a cached sweep without importing torch or scikit-learn); None for data other than a
        registry name (its rows are not remembered)."""
        if not isinstance(self.dataset, str):
            return None
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("label", "bounds")}
        fields["params"] = dict(self.params)
        runs = [{f.name: getattr(r, f.name) for f in dataclasses.fields(r) if f.name != "dataset"} for r in self.runs()]
        for r in runs:
            r["value"] = None if math.isnan(r["value"]) else r["value"]  # a baseline's NaN: JSON has none
        doc = {"fields": fields, "baselines": self.baselines(), "runs": runs, "wordings": self.wordings()}
        return json.loads(json.dumps(doc, allow_nan=False))  # lists for tuples: what reading it back gives

    @classmethod
    def from_plan(cls, plan: Mapping[str, Any]) -> "SweepConfig":
        """The config :meth:`plan` described, with its runs and baselines, rebuilt without checking it again: give it
        only a plan of this same code and inputs (the command line keys plans by :func:`tree_digest`).

        Raises
        ------
        KeyError, TypeError, ValueError
            For a plan of another shape.
        """
        fields = dict(plan["fields"])
        config = object.__new__(cls)
        for f in dataclasses.fields(cls):
            value = fields.pop(f.name, None) if f.name in ("label", "bounds") else fields.pop(f.name)
            if f.name in ("learners", "values", "providers"):
                value = tuple(value)
            elif f.name == "params":
                value = FrozenParams(sorted(value.items()))
            object.__setattr__(config, f.name, value)
        if fields or not isinstance(config.dataset, str):
            raise ValueError(f"not a sweep plan: fields {sorted(fields)} on dataset {config.dataset!r}")
        runs = []
        for r in plan["runs"]:
            r = dict(r, dataset=config.dataset, params=tuple(tuple(p) for p in r["params"]),
                     providers=tuple(r["providers"]))
            r["value"] = float("nan") if r["value"] is None else r["value"]
            runs.append(RunSpec(**r))
        config.__dict__["_plan"] = tuple(runs)
        config.__dict__["_planned_baselines"] = tuple(plan["baselines"])
        config.__dict__["_planned_wordings"] = {name: tuple(words) for name, words in plan["wordings"].items()}
        return config

    def fingerprint(self) -> str:
        """A short hash of every run key: equal settings give equal fingerprints (used by the page)."""
        h = hashlib.sha256()
        for r in self.runs():
            h.update(r.key.encode())
        return h.hexdigest()[:16]


__all__ = [
    "CODE_VERSION",
    "FrozenParams",
    "check_knob_type",
    "FALLBACK_BASELINES",
    "RunSpec",
    "SweepConfig",
    "dataset_fingerprint",
    "load_providers",
    "source_digest",
    "tree_digest",
]
