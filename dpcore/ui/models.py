"""The Clustering and Classical-models pages' runs (numpy/pandas out: kept in the server's store, pickled to disk)."""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ..accounting import Neighbouring
from ..datasets import load_dataset, train_test_split
from ..exceptions import DPCoreError, DPValueError
from ..learners import get_learner, run_learner, trivial_learner
from ..models.metrics import match_clusters
from ..rng import noise_mode, secure_or_seed
from ..runtime.thread_warnings import caught as caught_warnings
from ..runtime.workload import check_work, estimate_of, total_work
from . import palette
from .common import remembered, shared_call
from .live import BAR_SECONDS, Every
from .uploads import data_key, holds_upload, is_upload

#: Session key of the Clustering and Classical pages' runs on this visitor's upload (never kept by the server).
UPLOAD_RUNS = "models.upload_runs"

CLUSTER_METHODS = ("lloyd", "dplloyd", "input-perturbation")
CLUSTER_LABELS = {"lloyd": "Lloyd (non-private)", "dplloyd": "DPLloyd", "input-perturbation": "Input perturbation"}
#: colour, dash and marker of each clustering method on the ε chart (Plotly Express maps keyed by the legend name)
CLUSTER_STYLE = {
    "color_discrete_map": {"Lloyd (non-private)": palette.BLACK, "DPLloyd": palette.BLUE,
                           "Input perturbation": palette.VERMILLION},
    "line_dash_map": {"Lloyd (non-private)": "longdash", "DPLloyd": "solid", "Input perturbation": "dash"},
    "symbol_map": {"Lloyd (non-private)": "x", "DPLloyd": "circle", "Input perturbation": "square"},
}
#: What a neighbouring data set is, for DPLloyd on the Clustering page (input perturbation is replace-one by nature).
UNMATCHED = "unmatched"


def _cluster_params(method: str, k: int, iterations: int | None, neighbouring: str, more: tuple = ()) -> dict:
    """The params of ``method``: k, DPLloyd's relation and rounds, and the page's "More settings" (``more``:
    ``(learner, knob, value)`` triples, a tuple so that the cached functions can hash it)."""
    params = {"k": k}
    if method == "dplloyd":
        params["neighbouring"] = neighbouring
        if iterations:
            params["iterations"] = iterations
    return params | {knob: value for learner, knob, value in more if learner == method}


class RunsDone(NamedTuple):
    """A chart's progress: ``done`` of its ``total`` runs tried."""
    done: int
    total: int


def queued_sweep(sweep: Callable[..., pd.DataFrame], *args, what: str) -> pd.DataFrame:
    """``sweep(*args)`` (:func:`cluster_sweep`, :func:`classical_sweep`, :func:`size_sweep`) as heavy work of the
    server: on its bounded run queue, computed once for every visitor asking the same, kept in its store of
    finished runs (memory and disk), stopped when nobody waits for it any more, with a progress bar here
    ("``what``: 12 / 51 runs"). On a visitor's upload (an argument that is one) the run is this session's alone
    (:func:`dpcore.ui.shared_call`) and memoised in the session, never kept by the server."""
    bar = st.empty()
    due = Every(BAR_SECONDS)

    def show(event: RunsDone) -> None:
        if event.total and due(last=event.done >= event.total):
            bar.progress(min(1.0, event.done / event.total), text=f"{what}: {event.done} / {event.total} runs")

    key = (sweep.__name__, *(data_key(a) if is_upload(a) else a for a in args))

    def compute() -> pd.DataFrame:
        return shared_call(key, lambda progress: sweep(*args, progress=progress), on_progress=show, quiet=True,
                           done="computed")

    try:
        return remembered(UPLOAD_RUNS, key, compute) if holds_upload(key) else compute()
    finally:
        bar.empty()


def cluster_demo(dataset, k: int, epsilon: float, iterations: int | None, seed: int | None,
                 neighbouring: str = "replace-one", more: tuple = ()) -> dict:
    """:func:`cluster_demo_of` on ``dataset`` (a registry name, or a visitor's uploaded Dataset), kept by
    ``st.cache_data`` for a registry dataset and in this session alone for an upload."""
    if not is_upload(dataset):
        return _shared_cluster_demo(dataset, k, epsilon, iterations, seed, neighbouring, more)
    return remembered(UPLOAD_RUNS, ("cluster_demo", data_key(dataset), k, epsilon, iterations, seed, neighbouring,
                                    more), lambda: cluster_demo_of(dataset, k, epsilon, iterations, seed,
                                                                   neighbouring, more))


def cluster_demo_of(dataset, k: int, epsilon: float, iterations: int | None, seed: int | None,
                    neighbouring: str = "replace-one", more: tuple = ()) -> dict:
    """The three methods at one epsilon: metrics, and a 2-D PCA view of the test rows with each method's centres.

    The PCA is computed on the (already released) public display only; it plays no part in the clustering.
    ``run`` describes what DPLloyd did (initialisation, rounds, budget of the start, rows scaled down).
    """
    secure, seed = secure_or_seed(seed)
    with noise_mode(secure):  # every draw from the OS inside; splits and inits still from the seed
        split = train_test_split(dataset, seed=seed)
        rows, centres = [], []
        labels = {}
        run = {}
        said = _RunWarnings("ε", 1)
        for m in CLUSTER_METHODS:
            res = said.run(None, m, split, epsilon=epsilon, seed=seed,
                           params=_cluster_params(m, k, iterations, neighbouring, more))
            rows.append({"method": CLUSTER_LABELS[m], "accuracy": res.metrics["accuracy"],
                         "intra_cluster_variance": res.metrics["intra_cluster_variance"],
                         "epsilon": res.epsilon})
            centres.append(res.extras["centers_unit"])
            labels[CLUSTER_LABELS[m]] = res.extras["labels_test"]
            if m == "dplloyd":
                run = {key: res.extras[key] for key in ("init", "rounds", "epsilon_init", "rows_clipped", "n_train",
                                                        "neighbouring")}
        lo, hi = split.dataset.bounds
        Z = (2 * np.clip(split.X_test, lo, hi) - (hi + lo)) / (hi - lo)
        mu = Z.mean(0)
        _, _, Vt = np.linalg.svd(Z - mu, full_matrices=False)
        P = Vt[:2].T if Vt.shape[0] >= 2 else np.eye(Z.shape[1])[:, :2]
        pts = pd.DataFrame((Z - mu) @ P, columns=["PC1", "PC2"])
        names = split.dataset.target_names

        def cname(c: int) -> str:
            return UNMATCHED if c < 0 else (str(names[c]) if names else str(c))

        pts["class"] = [cname(int(c)) for c in split.y_test]
        matches = {}
        for name, lab in labels.items():
            # colour each cluster by the class the Hungarian matching assigns it to
            matches[name] = match_clusters(split.y_test, lab)
            pts[name] = [cname(matches[name][int(c)]) for c in lab]
        lo_v = pts[["PC1", "PC2"]].min().to_numpy() - 0.3
        hi_v = pts[["PC1", "PC2"]].max().to_numpy() + 0.3
        cen = []
        for m, c in zip(CLUSTER_METHODS, centres):
            pc = (c - mu) @ P
            for j, xy in enumerate(pc):
                inside = bool(np.all((xy >= lo_v) & (xy <= hi_v)))
                a, b = np.clip(xy, lo_v, hi_v)
                cen.append({"method": CLUSTER_LABELS[m], "cluster": j,
                            "matched_class": cname(matches[CLUSTER_LABELS[m]].get(j, -1)),
                            "PC1": a, "PC2": b, "in_view": inside})
        classes = [cname(c) for c in range(len(names))] if names else sorted(pts["class"].unique())
        # chance level: every test row in one cluster, matched to the most common class
        chance = float(pts["class"].value_counts(normalize=True).max())
        return {"metrics": pd.DataFrame(rows), "points": pts, "centres": pd.DataFrame(cen), "run": run,
                "classes": classes, "chance": chance, "warnings": said.messages()}


_shared_cluster_demo = st.cache_data(show_spinner=False, max_entries=64)(cluster_demo_of)
cluster_demo.clear = _shared_cluster_demo.clear  # the registry datasets' demos (an upload's go with its session)


def dplloyd_run_text(run: dict, epsilon: float) -> str:
    """One sentence on what DPLloyd did in this run, from what actually ran (not from the defaults of iris)."""
    rounds = f"{run['rounds']} round{'' if run['rounds'] == 1 else 's'}"
    if run.get("init") == "grid":
        share = run["epsilon_init"] / epsilon if epsilon > 0 else 0.0
        start = (f"a noisy grid histogram for its start ({share:.0%} of ε, here {run['epsilon_init']:.3g}; Su et "
                 f"al.'s hybrid), then {rounds} of noisy counts and sums on the rest")
    else:
        kind = {"sphere_packing": "data-independent sphere packing", "uniform": "uniformly random centres"}.get(
            run.get("init"), str(run.get("init")))
        start = (f"{kind} for its start (no budget spent; the default when a grid would need too many cells), then "
                 f"{rounds} of noisy counts and sums, each with an equal share of ε")
    clipped = run.get("rows_clipped", 0)
    scaled = (f" {clipped} of {run['n_train']} training records have an L1 norm above d/2 and are scaled down to it "
              "before they enter the noisy sums (this bounds the sensitivity and pulls those records towards the "
              "centre of the box)." if clipped else "")
    return f"DPLloyd used {start}.{scaled}"


def neighbouring_text(neighbouring: "Neighbouring | str") -> str:
    if Neighbouring.of(neighbouring) is Neighbouring.REPLACE_ONE:
        return ("Both private methods protect against replacing one record. For DPLloyd that doubles the noise of "
                "Su et al.'s add/remove version: the same run is ε/2-DP under add/remove.")
    return ("DPLloyd protects against adding or removing one record (Su et al.), input perturbation against "
            "replacing one: under replace-one this DPLloyd is only 2ε-DP, so the two are not compared like for like.")


def cluster_scatter_figure(points: pd.DataFrame, centres: pd.DataFrame, method: str, classes: list[str]) -> go.Figure:
    """Test rows on the 2-D display projection: colour = class the point's cluster is matched to, shape = true class."""
    colours = {c: palette.SERIES_COLOURS[i % len(palette.SERIES_COLOURS)] for i, c in enumerate(classes)}
    colours[UNMATCHED] = palette.GREY
    symbols = ["circle", "diamond", "square", "cross", "triangle-down", "star", "hexagon", "pentagon"]
    shape = {c: symbols[i % len(symbols)] for i, c in enumerate(classes)}
    fig = go.Figure()
    for matched in [*classes, UNMATCHED]:
        part = points[points[method] == matched]
        if part.empty:
            continue
        fig.add_scatter(x=part.PC1, y=part.PC2, mode="markers", opacity=0.7, showlegend=False,
                        marker=dict(color=colours[matched], symbol=[shape.get(c, "circle") for c in part["class"]],
                                    size=8),
                        text=[f"true class: {c}, cluster matched to: {matched}" for c in part["class"]],
                        hovertemplate="%{text}<extra></extra>")
        # legend entries that show one thing each: the colour of the matched class ...
        fig.add_scatter(x=[None], y=[None], mode="markers", marker=dict(color=colours[matched], symbol="circle",
                                                                         size=9),
                        name=f"cluster → {matched}" if matched != UNMATCHED else "unmatched cluster",
                        legendgroup="colour")
    for c in classes:  # ... and the shape of the true class
        fig.add_scatter(x=[None], y=[None], mode="markers", name=f"true class {c}", legendgroup="shape",
                        marker=dict(color="#555555", symbol=shape[c], size=9, line=dict(width=0)))
    c = centres[centres.method == method]
    fig.add_scatter(x=c.PC1, y=c.PC2, mode="markers", name="centre (▲: outside the view)",
                    text=[f"centre → {m}" + ("" if v else " (outside the view, drawn at its edge)")
                          for m, v in zip(c.matched_class, c.in_view)], hovertemplate="%{text}<extra></extra>",
                    marker=dict(symbol=["x" if v else "triangle-up" for v in c.in_view], size=16, color="black",
                                line=dict(width=2)))
    fig.update_layout(title=method, height=420, margin=dict(l=10, r=10, t=40, b=10),
                      xaxis_title="PC 1 (display only)", yaxis_title="PC 2",
                      legend=dict(orientation="h", yanchor="top", y=-0.3))
    return fig


def cluster_sweep(dataset: str, k: int, iterations: int | None, epsilons: tuple[float, ...], seeds: int,
                  seed: int | None, neighbouring: str = "replace-one", more: tuple = (), *,
                  progress: Callable[[RunsDone], None] | None = None) -> pd.DataFrame:
    """Accuracy and intra-cluster variance vs epsilon for the three methods, mean and sd over ``seeds`` runs.

    ``progress(RunsDone(done, total))`` after each run. The page runs it through :func:`queued_sweep`."""
    secure, seed = secure_or_seed(seed)
    with noise_mode(secure):  # every draw from the OS inside; splits and inits still from the seed
        rows = []
        said = _RunWarnings("ε", seeds, total=seeds * (1 + (len(CLUSTER_METHODS) - 1) * len(epsilons)),
                            progress=progress)
        first = train_test_split(dataset, seed=seed)
        check_chart_work([(1 if m == "lloyd" else len(epsilons), m, first,
                           dict(seed=seed, params=_cluster_params(m, k, iterations, neighbouring, more),
                                **({} if m == "lloyd" else {"epsilon": epsilons[0]}))) for m in CLUSTER_METHODS], seeds)
        for s in range(seed, seed + seeds):
            split = train_test_split(dataset, seed=s)
            for m in CLUSTER_METHODS:
                if m == "lloyd":  # non-private: one run per seed, drawn at every epsilon
                    res = said.run(None, m, split, seed=s, params=_cluster_params(m, k, iterations, neighbouring, more))
                    rows += [{"method": CLUSTER_LABELS[m], "epsilon": eps, "seed": s, **res.metrics}
                             for eps in epsilons]
                    continue
                for eps in epsilons:
                    res = said.run(eps, m, split, epsilon=eps, seed=s,
                                   params=_cluster_params(m, k, iterations, neighbouring, more))
                    rows.append({"method": CLUSTER_LABELS[m], "epsilon": eps, "seed": s, **res.metrics})
        df = pd.DataFrame(rows)
        out = (df.groupby(["method", "epsilon"], as_index=False, sort=False)
               .agg(accuracy=("accuracy", "mean"), accuracy_sd=("accuracy", "std"),
                    intra_cluster_variance=("intra_cluster_variance", "mean"),
                    intra_cluster_variance_sd=("intra_cluster_variance", "std")))
        out.attrs["warnings"] = said.messages()  # with the ε each came from, also when the chart is cached
        return out


def _classical_params(learner: str, model: str, kernel: str, regularization: float | str,
                      preprocess: str = "log-bounds", more: tuple = ()) -> dict:
    """Learner params; ``regularization="tune"`` runs Chaudhuri et al.'s private Algorithm 4 for the private ERMs.
    ``more``: the page's "More settings", ``(learner, knob, value)`` triples (a tuple, for the cache's hash)."""
    extra = {knob: value for name, knob, value in more if name == learner}
    if learner in ("erm-output", "erm-objective", "logreg"):
        base = {"model": model, "kernel": kernel, "preprocess": preprocess, **extra}
        if regularization == "tune":
            return base if learner == "logreg" else {**base, "tune": True}
        return {**base, "regularization": regularization}
    return extra


def regularization_text(regularization: float | str) -> str:
    """One sentence on the Λ each model used (the non-private model cannot tune privately, and has no ε for auto).

    >>> regularization_text(0.05)
    'Every model, the non-private one included, uses Λ = 0.05.'
    """
    from ..models.erm import AUTO_LAMBDA, NONPRIVATE_AUTO_LAMBDA

    base = f"The non-private model uses Λ = {NONPRIVATE_AUTO_LAMBDA:g}"
    if regularization == "auto":
        return (f"Private models use Λ = {AUTO_LAMBDA['output']:g}·√d / (n·ε) (output) or "
                f"{AUTO_LAMBDA['objective']:g}·√d / (n·ε) (objective) per binary model, n training rows of d "
                f"features: more regularisation where the noise is larger. {base}.")
    if regularization == "tune":
        return ("Private models choose Λ privately (Algorithm 4, inside the same ε). "
                f"{base}: it has no privacy to spend on tuning.")
    return f"Every model, the non-private one included, uses Λ = {float(regularization):g}."


#: Short names for legends and tables (the registry ids stay in the CLI and sweeps).
METHOD_NAMES = {
    "erm-output": "Output perturbation (Alg. 1)", "erm-objective": "Objective perturbation (Alg. 2)",
    "functional-mechanism": "Functional mechanism", "ssp": "Gaussian SSP (ε, δ)",
    "logreg": "Non-private model (same loss)",
    "linreg": "Non-private linear regression", "majority": "Majority class (trivial)",
    "mean": "Mean predictor (trivial)",
}


def _scored_against(task: str) -> tuple[str, str, str]:
    """The metric, the non-private model and the trivial predictor of a Classical-models chart for ``task``."""
    if task == "classification":
        return "accuracy", "logreg", trivial_learner(task)
    return "r2", "linreg", trivial_learner(task)


#: How close to the trivial predictor a private model's mean may come before the page says it learnt little:
#: 0.02 of R² for regression, 0.01 of accuracy for classification.
NEAR_TRIVIAL = {"regression": 0.02, "classification": 0.01}


def near_trivial_text(at_one: pd.DataFrame, metric: str, task: str) -> str | None:
    """The sentence for the private models whose mean at ε = 1 (rows of ``at_one``: method, private, ``metric``) is
    at or within :data:`NEAR_TRIVIAL` of the trivial predictor's, or None. The runs' own warnings count single
    seeds; this judges the mean the headline shows (the functional mechanism on diabetes: 0.006 beside -0.009)."""
    trivial = at_one[at_one.method.str.endswith("(trivial)")][metric]
    if not len(trivial):
        return None
    floor = float(trivial.iloc[0])
    rows = at_one[["method", "private", metric]].itertuples(index=False)
    behind = [f"{METHOD_SHORT.get(n, n)} ({v:.3f})" for n, p, v in rows if p and v <= floor + NEAR_TRIVIAL[task]]
    if not behind:
        return None
    return (f"At ε = 1, {' and '.join(behind)} {'does' if len(behind) == 1 else 'do'} little or no better on average "
            f"than the trivial predictor ({floor:.3f}): at this ε the noise outweighs what the training rows can "
            "teach. The curve below shows from which ε it pays.")


def check_chart_work(runs: list[tuple[int, str, object, dict]], seeds: int) -> None:
    """Refuse a chart's runs before any starts when, all together, they ask for more than one run's budget.

    ``runs``: ``(times, learner, split, kwargs)`` for one seed, each run ``times`` times (once per ε); the chart
    repeats them for ``seeds`` seeds. Each learner is stopped at its first work check (nothing allocated), so the
    estimate costs a data split. The refusal names the seeds and the knob that costs most (20 seeds of 100,000
    random features on the Classical page ran for minutes before any refusal: each fit alone fitted the budget).
    """
    works = []
    for times, name, split, kwargs in runs:
        with caught_warnings():  # the runs themselves say their warnings
            works += [estimate_of(lambda n=name, sp=split, k=kwargs: run_learner(n, sp, **k))] * times
    check_work(total_work(works, times=seeds, driver=("seeds", seeds)))


class _RunWarnings:
    """The warnings of a chart's many runs, one per message, with where on the x axis each was raised.

    A sweep of 6 epsilons x 2 seeds may warn "no more accurate than the most common class" at epsilon = 0.1 only;
    said once without its epsilon, the warning sits above a chart whose headline (epsilon = 1) is fine. Kept in the
    returned frame's ``attrs["warnings"]`` so a chart served from the store of finished runs shows them too.
    """

    def __init__(self, x_name: str, seeds: int, *, total: int = 0, progress: Callable[[RunsDone], None] | None = None):
        self.x_name, self.seeds, self.found, self.xs = x_name, seeds, {}, set()
        #: ``progress(RunsDone(done, total))`` after each run, tried or not (it may raise to stop the chart)
        self.total, self.progress, self.done = total, progress, 0

    def run(self, x, name: str, split, *, seed: int, **kwargs):
        """``run_learner(name, split, seed=seed, **kwargs)`` with its warnings recorded against ``x`` (None: the
        run does not depend on x)."""
        if not get_learner(name).private:  # a reference spends no epsilon (run_learner warns when given one)
            kwargs.pop("epsilon", None)
        with caught_warnings() as caught:
            try:
                out = run_learner(name, split, seed=seed, **kwargs)
            finally:
                self.done += 1
                if self.progress is not None:
                    self.progress(RunsDone(self.done, self.total))
        self.xs.add(x)
        own, title = get_learner(name).title, METHOD_NAMES.get(name, CLUSTER_LABELS.get(name))
        for w in caught:
            msg = str(w.message)
            if title and msg.startswith(own):  # the learner's title reads as the page's name for the method
                msg = title + msg[len(own):]
            self.found.setdefault(msg, {}).setdefault(x, set()).add(seed)
        return out

    def _folded(self) -> dict:
        """``found`` with each learner's "predicts the single class" runs folded into its "no more accurate" message
        (a single-class model is no better than the trivial one): two warnings listing overlapping runs of one
        learner read as one thing said twice."""
        found = {m: {x: set(s) for x, s in w.items()} for m, w in self.found.items()}
        for msg in [m for m in found if " predicts the single class " in m]:
            who, _, rest = msg.partition(" predicts the single class ")
            worse = next((m for m in found if m.startswith(f"{who} is no more accurate")), None)
            if worse is None:
                continue
            where = found.pop(msg)
            runs = sum(len(s) for s in where.values())
            for x, s in where.items():
                found[worse].setdefault(x, set()).update(s)
            label = rest.split(" for every test row")[0]
            which = f"In {runs} of these runs" if runs > 1 else "In one of these runs"
            found[f"{worse} {which} it predicts the single class {label} for every test row."] = found.pop(worse)
        return found

    def messages(self) -> list[str]:
        out = []
        for msg, where in self._folded().items():
            if None in where:  # raised by a run that does not depend on x
                n = len(where[None])
                out.append(msg if n == self.seeds else f"In {n} of {self.seeds} seeds: {msg}")
                continue
            if set(where) == self.xs - {None} and all(len(s) == self.seeds for s in where.values()):
                out.append(msg)  # everywhere: no place to name
                continue
            at = ", ".join(f"{x:g}" + (f" ({len(s)} of {self.seeds} seeds)" if len(s) < self.seeds else "")
                           for x, s in sorted(where.items()))
            out.append(f"At {self.x_name} = {at}: {msg}")
        return out


def classical_more_settings(dataset, task: str) -> tuple:
    """Draw, under the page's "More settings", every knob of the page's learners that the page does not place
    itself; returns ``(learner, knob, value)`` triples for :func:`classical_sweep` and :func:`size_sweep` (the
    non-private baseline gets the values it shares)."""
    from .knobs import knob_widgets, other_knobs

    groups = ({"erm-objective": ("erm-output", "erm-objective")} if task == "classification"
              else {"functional-mechanism": ("functional-mechanism",), "ssp": ("ssp",)})
    defaults_on = train_test_split(dataset, seed=0)
    more: tuple = ()
    for name, targets in groups.items():
        spec = get_learner(name)
        if len(groups) > 1:
            st.caption(METHOD_NAMES.get(name, name))
        chosen = knob_widgets(spec, other_knobs(spec, ("model", "kernel", "regularization", "tune", "preprocess")),
                              spec.defaults(defaults_on), prefix=f"classical.{name}", dataset=defaults_on.dataset.name,
                              images=False, container=st)
        more += tuple((t, knob, value) for t in targets for knob, value in chosen.items())
        if spec.baseline:
            more += tuple((spec.baseline, knob, value) for knob, value in spec.shared_params(chosen).items())
    return more


def classical_sweep(dataset: str, learners: tuple[str, ...], model: str, kernel: str, regularization: float | str,
                    epsilons: tuple[float, ...], seeds: int, seed: int | None,
                    preprocess: str = "log-bounds", more: tuple = (), *,
                    progress: Callable[[RunsDone], None] | None = None) -> pd.DataFrame:
    """Test metric vs epsilon for each private learner, plus the non-private model and the trivial predictor.

    ``progress(RunsDone(done, total))`` after each run. The page runs it through :func:`queued_sweep`."""
    secure, seed = secure_or_seed(seed)
    with noise_mode(secure):  # every draw from the OS inside; splits and inits still from the seed
        ds = load_dataset(dataset) if isinstance(dataset, str) else dataset
        metric, base, trivial = _scored_against(ds.task)
        rows, said = [], _RunWarnings("ε", seeds, total=seeds * (len(learners) * len(epsilons) + 2),
                                      progress=progress)
        first = train_test_split(ds, seed=seed)

        def params(name: str) -> dict:
            return _classical_params(name, model, kernel, regularization, preprocess, more)

        check_chart_work([(len(epsilons), n, first, dict(epsilon=epsilons[0], seed=seed, params=params(n)))
                          for n in learners]
                         + [(1, n, first, dict(seed=seed, params=params(n))) for n in (base, trivial)], seeds)
        for s in range(seed, seed + seeds):
            split = train_test_split(ds, seed=s)
            for name in learners:
                for eps in epsilons:
                    res = said.run(eps, name, split, epsilon=eps, seed=s,
                                   params=_classical_params(name, model, kernel, regularization, preprocess, more))
                    rows.append({"method": METHOD_NAMES.get(name, name), "private": True, "epsilon": eps, "seed": s,
                                 "value": res.metrics[metric]})
            for name in (base, trivial):
                params = _classical_params(name, model, kernel, regularization, preprocess, more)
                res = said.run(None, name, split, seed=s, params=params)
                for eps in epsilons:
                    rows.append({"method": METHOD_NAMES.get(name, name), "private": False, "epsilon": eps, "seed": s,
                                 "value": res.metrics[metric]})
        df = pd.DataFrame(rows)
        out = df.groupby(["method", "private", "epsilon"], as_index=False, sort=False).agg(
            value=("value", "mean"), sd=("value", "std"))
        out.attrs["metric"] = metric
        out.attrs["warnings"] = said.messages()
        return out.rename(columns={"value": metric})


#: Metric labels short enough for a row of four at 1280 px (the full name is the metric's help).
METHOD_SHORT = {
    "Output perturbation (Alg. 1)": "Output perturbation", "Objective perturbation (Alg. 2)": "Objective perturb.",
    "Functional mechanism": "Functional mech.", "Gaussian SSP (ε, δ)": "Gaussian SSP",
    "Non-private model (same loss)": "Non-private", "Non-private linear regression": "Non-private",
    "Majority class (trivial)": "Majority class", "Mean predictor (trivial)": "Mean predictor",
}

#: One colour per method on every classical chart (baselines black and grey, the same on every dataset).
METHOD_COLOURS = {
    "Output perturbation (Alg. 1)": palette.BLUE, "Objective perturbation (Alg. 2)": palette.VERMILLION,
    "Functional mechanism": palette.GREEN, "Gaussian SSP (ε, δ)": palette.ORANGE,
    "Non-private model (same loss)": palette.BLACK, "Non-private linear regression": palette.BLACK,
    "Majority class (trivial)": palette.GREY, "Mean predictor (trivial)": palette.GREY,
}
#: ... and one dash and marker per method, so no line is told apart by its colour alone
METHOD_DASHES = {m: d for m, d in zip(METHOD_COLOURS, ("solid", "dash", "dot", "dashdot", "longdash", "longdash",
                                                         "dot", "dot"))}
METHOD_SYMBOLS = {m: s for m, s in zip(METHOD_COLOURS, ("circle", "square", "diamond", "triangle-up", "x", "x",
                                                          "cross", "cross"))}
#: the keyword arguments of ``px.line(..., color="method", line_dash="method", symbol="method")`` on those charts
METHOD_STYLE = {"color_discrete_map": METHOD_COLOURS, "line_dash_map": METHOD_DASHES, "symbol_map": METHOD_SYMBOLS}

#: Why more rows help, per learner (the caption under the training-size chart).
SIZE_NOTES = {
    "erm-output": "Output perturbation adds noise of norm ~ 2/(n Λ ε) to the minimiser: it shrinks like 1/n.",
    "erm-objective": "Objective perturbation adds a random linear term b·w/n to the objective: its pull on the "
                     "minimiser shrinks like 1/n.",
    "functional-mechanism": "The Laplace noise on the loss coefficients keeps its size while the coefficients grow "
                            "with n, so the relative noise shrinks like 1/n.",
    "ssp": "The Gaussian noise on X^T X and X^T y keeps its size while those sums grow with n, so the relative "
           "noise shrinks like 1/n.",
}


def size_sweep(dataset: str, learner: str, model: str, kernel: str, regularization: float | str, epsilon: float,
               fractions: tuple[float, ...], seeds: int, seed: int | None,
               preprocess: str = "log-bounds", more: tuple = (), *,
               progress: Callable[[RunsDone], None] | None = None) -> pd.DataFrame:
    """Test metric vs training-set size at a fixed epsilon, beside the non-private model and the trivial predictor.

    Mean and sd over ``seeds`` splits. A size at which a learner cannot run (e.g. private tuning on a handful of
    rows, whose disjoint parts then hold a single class) is left out for that learner; ``attrs["skipped"]`` says
    which sizes and why, instead of one error hiding the whole chart. ``progress(RunsDone(done, total))`` after
    each run. The page runs it through :func:`queued_sweep`.
    """
    secure, seed = secure_or_seed(seed)
    with noise_mode(secure):  # every draw from the OS inside; splits and inits still from the seed
        ds = load_dataset(dataset) if isinstance(dataset, str) else dataset
        metric, base, trivial = _scored_against(ds.task)
        rows, skipped, said = [], {}, _RunWarnings("training rows", seeds, total=seeds * len(fractions) * 3,
                                                   progress=progress)
        for s in range(seed, seed + seeds):
            split = train_test_split(ds, seed=s)
            for f in fractions:
                n = int(round(f * split.X_train.shape[0]))
                for name in (learner, base, trivial):
                    try:
                        budget = {"epsilon": epsilon} if name == learner else {}
                        res = said.run(n, name, split, seed=s, train_fraction=f,
                                       **budget, params=_classical_params(name, model, kernel, regularization,
                                                                          preprocess, more))
                    except DPCoreError as exc:
                        skipped.setdefault((METHOD_NAMES.get(name, name), n), str(exc))
                        continue
                    rows.append({"method": METHOD_NAMES.get(name, name), "n_train": n, "seed": s,
                                 "value": res.metrics[metric]})
        if not rows:
            raise DPValueError("no training-set size could be run: " + "; ".join(sorted(set(skipped.values()))))
        df = pd.DataFrame(rows)
        out = df.groupby(["method", "n_train"], as_index=False, sort=False).agg(
            value=("value", "mean"), sd=("value", "std"), runs=("value", "size"))
        out.attrs["skipped"] = [{"method": m, "n_train": n, "reason": r} for (m, n), r in sorted(skipped.items())]
        out.attrs["metric"] = metric
        out.attrs["warnings"] = said.messages()
        return out.rename(columns={"value": metric})
