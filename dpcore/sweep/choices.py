"""Which learners a sweep offers on a dataset, and which it starts with: the Trade-off explorer's lists and
``python -m dpcore sweep`` without ``--algorithms`` read them from here."""
from __future__ import annotations

from ..learners import learners
from .axes import AXES, BUILTIN_AXES

#: Learners tried first as the default selection (the headline comparisons of the papers).
PREFERRED = ("dpsgd", "erm-objective", "erm-output", "output-perturbation", "label-dp-laplace", "dplloyd",
             "functional-mechanism", "ssp", "pate", "dp-fedavg")
#: Default selection per task: regression gets the learners made for it (functional mechanism, Zhang et al.
#: 2012, pure epsilon; Gaussian SSP, Wang 2018, epsilon and delta); DP-SGD on small regression data is often
#: no better than predicting the mean.
DEFAULT_LEARNERS = {"classification": ("dpsgd", "erm-objective"), "regression": ("functional-mechanism", "ssp")}
#: The default selection on data with declared class shares (:mod:`dpcore.learners.decision`): learners whose answers
#: follow them. The ERM family releases scores and keeps its argmax, so beside DP-SGD it would find few of the rare
#: rows, be judged against a non-private twin that finds few too, and could be the advisor's answer to an owner who
#: declared the shares to find them (on a 10 % readmissions table: DP-ERM at ε 3.16, 12 % of the readmissions found).
DEFAULT_WITH_SHARES = {"classification": ("dpsgd",)}
#: The trivial predictors: drawn as a baseline line, never swept.


def _fits(spec, task: str, is_image: bool) -> bool:
    return task in spec.tasks and (is_image or not spec.images_only) and not spec.trivial


def sweepable(task: str, is_image: bool, axis: str) -> list[str]:
    """Learners that fit the data and can be swept along ``axis`` (private ones only for epsilon), preferred
    ones first."""
    out = []
    for name, spec in learners().items():
        if not _fits(spec, task, is_image):
            continue
        if axis == "epsilon" and not spec.private:
            continue
        if axis not in BUILTIN_AXES and axis not in spec.params:
            continue
        out.append(name)
    return sorted(out, key=lambda n: (n not in PREFERRED, PREFERRED.index(n) if n in PREFERRED else 0, n))


def axis_options(task: str, is_image: bool) -> list[str]:
    """The named axes along which at least one registered learner can be swept on this data."""
    return [a for a in AXES if sweepable(task, is_image, a)]


def default_learners(options: list[str], task: str, *, class_shares: bool = False) -> list[str]:
    """The default selection among ``options``: :data:`DEFAULT_LEARNERS` of the task (:data:`DEFAULT_WITH_SHARES`
    where the data declares class shares), else the first two."""
    chosen = [n for n in (DEFAULT_WITH_SHARES if class_shares else DEFAULT_LEARNERS).get(task, ()) if n in options]
    return chosen or [n for n in DEFAULT_LEARNERS.get(task, ()) if n in options] or options[:2]


__all__ = ["DEFAULT_LEARNERS", "DEFAULT_WITH_SHARES", "PREFERRED", "axis_options", "default_learners", "sweepable"]
