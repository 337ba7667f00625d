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
from ..defaults import EPSILON
from ..exceptions import DPCoreError, DPValueError
from ..learners import get_learner, run_learner, trivial_learner
from ..models.kmeans import RandomCentresReference
from ..models.metrics import match_clusters
from ..rng import noise_mode, secure_or_seed
from ..runtime.thread_warnings import caught as caught_warnings
from ..runtime.workload import check_work, estimate_of, total_work
from ..sweep.axes import normalise_value
from ..sweep.config import SweepConfig
from ..sweep.engine import SweepProgress, SweepRunError, _is_leak, run_sweep
from . import palette
from .common import format_epsilon, remembered, shared_call
from .ledger import sweep_releases
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
    spec = get_learner(method)
    if spec.knob("neighbouring") is not None:  # DPLloyd: add/remove (Su et al.) or replace-one
        params["neighbouring"] = neighbouring
    if iterations and spec.knob("iterations") is not None:
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


class Series(NamedTuple):
    """One learner of a page's chart with its own params: run at each of ``values`` on the chart's axis, or, with
    ``values`` empty, once per seed (a reference that does not depend on the axis, drawn at every point)."""
    learner: str
    params: dict
    values: tuple = ()


def sweep_series(dataset: str, series: list[Series], *, axis: str, seeds: int, seed: int | None,
                 epsilon: float | None = None, x_name: str = "ε", x_of: Callable[[float], object] | None = None,
                 check: bool = True, skip_failures: bool = False,
                 progress: Callable[[RunsDone], None] | None = None) -> tuple[pd.DataFrame, "_RunWarnings", dict]:
    """The runs of a page's chart through :func:`dpcore.sweep.engine.run_sweep`: one sweep per seed and learner (each
    learner with its own params, which one sweep's shared ``params`` cannot say), seeds ``seed`` .. ``seed + seeds -
    1``, each seed its own split.

    Returns the tidy rows (``learner``, ``x``, ``seed`` and the run's metrics; a reference's rows repeated at every
    ``x``; ``x_of(value)`` names a point where the axis value is not what the chart shows: training rows for a
    training fraction), the runs' warnings said per ``x`` (:class:`_RunWarnings`, ``x_name`` on the axis) and, with
    ``skip_failures``, the runs that could not be made as ``{(learner, x): reason}`` (each run on its own then, so
    one size a learner cannot run at leaves its other sizes and seeds). ``check``: refuse the chart, before any run,
    when its runs together ask for more than one run's budget (:func:`check_chart_work`). ``seed=None``: secure noise
    in every run (the splits and inits from seed 0 on, as the pages say). ``progress(RunsDone(done, total))`` after
    each run, made or not; it may raise to stop the chart.
    """
    secure, seed = secure_or_seed(seed)
    values = tuple(dict.fromkeys(v for s in series for v in s.values))  # the chart's points, in the page's order
    at = {normalise_value(v): v if x_of is None else x_of(v) for v in values}
    xs = tuple(at.values())

    def config(s: Series, values: tuple, n: int, base: int) -> SweepConfig:
        once = not values  # a reference: one run per seed, on the whole training set
        return SweepConfig(dataset, (s.learner,), axis="train_fraction" if once else axis,
                           values=(1.0,) if once else values, seeds=n, base_seed=base, params=s.params,
                           include_baselines=False, **({} if epsilon is None else {"epsilon": epsilon}))

    # seed by seed, as a person re-running the experiment would (and the chart's rows and warnings in that order)
    seed_list = range(seed, seed + seeds)
    if skip_failures:  # each run alone: x by x, each learner at it
        plan = [(s, config(s, (v,), 1, b)) for b in seed_list for v in values for s in series if v in s.values]
        plan += [(s, config(s, (), 1, b)) for b in seed_list for s in series if not s.values]
    else:
        plan = [(s, config(s, s.values, 1, b)) for b in seed_list for s in series]
    said = _RunWarnings(x_name, seeds, total=sum(len(c.runs()) for _, c in plan), progress=progress)
    if check:
        first = train_test_split(dataset, seed=seed)
        check_chart_work([(max(1, len(s.values)), s.learner, first,
                           dict(seed=seed, params=s.params,
                                **({"epsilon": s.values[0] if axis == "epsilon" else epsilon or EPSILON}
                                   if get_learner(s.learner).private else {}))) for s in series], seeds)
    rows, skipped = [], {}
    with noise_mode(secure), caught_warnings():  # every draw from the OS inside; the runs' warnings are said per x
        for s, cfg in plan:
            def on_result(event: SweepProgress, s: Series = s) -> None:
                row = {k: v for k, v in event.row.items() if k != "_warnings"}
                # its epsilon is no guarantee when it leaked besides (the session's total then has none either)
                row["leaks_privacy"] = any(_is_leak(cat) for cat, _ in event.row.get("_warnings") or ())
                x = at[row["value"]] if s.values else None
                said.note(x, s.learner, int(row["seed"]), [msg for _, msg in event.row.get("_warnings") or ()])
                rows.extend({**row, "x": v} for v in ((x,) if s.values else xs))

            try:  # in this process: the page's run queue is the parallelism, and secure noise stays on
                run_sweep(cfg, n_jobs=1, use_cache=False, on_result=on_result)
            except SweepRunError as exc:
                if not skip_failures or not isinstance(exc.__cause__, DPCoreError):
                    raise
                skipped.setdefault((s.learner, at[cfg.values[0]] if s.values else None), str(exc.__cause__))
                said.tick()
    return pd.DataFrame(rows), said, skipped


def cluster_demo(dataset, k: int, epsilon: float, iterations: int | None, seed: int | None,
                 neighbouring: str = "replace-one", more: tuple = (), seeds: int = 1) -> dict:
    """:func:`cluster_demo_of` on ``dataset`` (a registry name, or a visitor's uploaded Dataset), kept by
    ``st.cache_data`` for a registry dataset and in this session alone for an upload."""
    if not is_upload(dataset):
        return _shared_cluster_demo(dataset, k, epsilon, iterations, seed, neighbouring, more, seeds)
    return remembered(UPLOAD_RUNS, ("cluster_demo", data_key(dataset), k, epsilon, iterations, seed, neighbouring,
                                    more, seeds), lambda: cluster_demo_of(dataset, k, epsilon, iterations, seed,
                                                                          neighbouring, more, seeds))


def cluster_demo_of(dataset, k: int, epsilon: float, iterations: int | None, seed: int | None,
                    neighbouring: str = "replace-one", more: tuple = (), seeds: int = 1) -> dict:
    """The three methods at one epsilon: metrics, and a 2-D PCA view of the test rows with each method's centres.

    The PCA is computed on the (already released) public display only; it plays no part in the clustering.
    ``run`` describes what DPLloyd did (initialisation, rounds, budget of the start, rows scaled down).

    ``metrics`` and the pictures are one run's, on seed ``seed``; ``over_seeds`` is every method's accuracy and
    within / total sum of squares over ``seeds`` seeds from ``seed`` on (each its own split and noise, as the sweep
    below the pictures draws them: mean and standard deviation), with ``over_seeds_reference`` random centres scored
    on each of those splits (the mean of their means and of their spreads; the centres themselves are the same on
    every split, drawn from the bounds alone). One seed of DPLloyd on iris at ε = 1 scores 0.69 where its mean over
    seeds 0 to 2 is 0.84: the headline reads the mean, the pictures show one run.
    """
    secure, seed = secure_or_seed(seed)
    seeds = max(1, int(seeds))
    with noise_mode(secure):  # every draw from the OS inside; splits and inits still from the seed
        split = train_test_split(dataset, seed=seed)
        rows, centres = [], []
        labels = {}
        run = {}
        reference = None
        said = _RunWarnings("ε", seeds)
        per_seed, references = [], []
        releases = []  # each private run's release, for the session's total (dpcore.ui.ledger)
        for other in range(seed + 1, seed + seeds):  # the other seeds' runs: their numbers only
            other_split = train_test_split(dataset, seed=other)
            for m in CLUSTER_METHODS:
                res = said.run(None, m, other_split, epsilon=epsilon, seed=other,
                               params=_cluster_params(m, k, iterations, neighbouring, more))
                per_seed.append({"method": CLUSTER_LABELS[m], "seed": other, **_cluster_scores(res)})
                releases.append(((m, other), _release(res)))
            references.append(res.extras["random_centres"])
        for m in CLUSTER_METHODS:
            res = said.run(None, m, split, epsilon=epsilon, seed=seed,
                           params=_cluster_params(m, k, iterations, neighbouring, more))
            per_seed.append({"method": CLUSTER_LABELS[m], "seed": seed, **_cluster_scores(res)})
            releases.append(((m, seed), _release(res)))
            rows.append({"method": CLUSTER_LABELS[m], "accuracy": res.metrics["accuracy"],
                         "intra_cluster_variance": res.metrics["intra_cluster_variance"],
                         "epsilon": res.epsilon})
            centres.append(res.extras["centers_unit"])
            reference = res.extras["random_centres"]  # the same test rows, k and bounds for every method
            labels[CLUSTER_LABELS[m]] = res.extras["labels_test"]
            if "rounds" in res.extras:  # what DPLloyd did (its start, its rounds), for the caption
                run = {key: res.extras[key] for key in ("init", "rounds", "epsilon_init", "rows_clipped", "n_train",
                                                        "neighbouring")}
        pts, place = display_view(split.X_test, split.dataset.bounds)
        names = split.dataset.target_names

        def cname(c: int) -> str:
            return UNMATCHED if c < 0 else (str(names[c]) if names else str(c))

        pts["class"] = [cname(int(c)) for c in split.y_test]
        matches = {}
        for name, lab in labels.items():
            # colour each cluster by the class the Hungarian matching assigns it to
            matches[name] = match_clusters(split.y_test, lab)
            pts[name] = [cname(matches[name][int(c)]) for c in lab]
        cen = []
        for m, c in zip(CLUSTER_METHODS, centres):
            for j, (a, b, inside) in enumerate(place(c)):
                cen.append({"method": CLUSTER_LABELS[m], "cluster": j,
                            "matched_class": cname(matches[CLUSTER_LABELS[m]].get(j, -1)),
                            "PC1": a, "PC2": b, "in_view": inside})
        classes = [cname(c) for c in range(len(names))] if names else sorted(pts["class"].unique())
        rows.append({"method": RANDOM_CENTRES, "accuracy": reference.accuracy,
                     "intra_cluster_variance": reference.intra_cluster_variance, "epsilon": 0.0})
        references.append(reference)
        over = (pd.DataFrame(per_seed).groupby("method", as_index=False, sort=False)
                .agg(accuracy=("accuracy", "mean"), accuracy_sd=("accuracy", "std"),
                     intra_cluster_variance=("intra_cluster_variance", "mean"), seeds=("seed", "nunique")))
        over_reference = RandomCentresReference.averaged(references)
        return {"metrics": pd.DataFrame(rows), "points": pts, "centres": pd.DataFrame(cen), "run": run,
                "classes": classes, "reference": reference, "warnings": said.messages(), "seed": seed,
                "over_seeds": over, "over_seeds_reference": over_reference, "releases": releases}


def _release(res) -> dict:
    """What a run released, as plain values that pickle with a cached result (:func:`dpcore.ui.ledger.release_of`
    reads them): its event, ε, δ, relation (None: not private) and unit."""
    return {"event": res.event, "epsilon": res.epsilon, "delta": res.delta, "neighbouring": res.neighbouring,
            "unit": res.unit}


def display_view(X: np.ndarray, bounds) -> tuple[pd.DataFrame, Callable[[np.ndarray], list[tuple]]]:
    """The rows of ``X`` on the two directions along which they spread most (a PCA of the rows mapped from their
    declared ``bounds`` onto [-1, 1]; for display only, the clusterings run in every dimension), as a frame of
    ``PC1`` and ``PC2``, and ``place(centres_unit)``: each centre (in those [-1, 1] coordinates) as ``(PC1, PC2,
    in_view)``, a centre outside the view drawn at its edge (``in_view`` False)."""
    lo, hi = bounds
    Z = (2 * np.clip(X, lo, hi) - (hi + lo)) / (hi - lo)
    mu = Z.mean(0)
    _, _, Vt = np.linalg.svd(Z - mu, full_matrices=False)
    P = Vt[:2].T if Vt.shape[0] >= 2 else np.eye(Z.shape[1])[:, :2]
    P = np.c_[P, np.zeros((P.shape[0], 2 - P.shape[1]))]  # one column: drawn on a line
    pts = pd.DataFrame((Z - mu) @ P, columns=["PC1", "PC2"])
    lo_v = pts[["PC1", "PC2"]].min().to_numpy() - 0.3
    hi_v = pts[["PC1", "PC2"]].max().to_numpy() + 0.3

    def place(centres_unit: np.ndarray) -> list[tuple]:
        out = []
        for xy in (np.asarray(centres_unit) - mu) @ P:
            a, b = np.clip(xy, lo_v, hi_v)
            out.append((float(a), float(b), bool(np.all((xy >= lo_v) & (xy <= hi_v)))))
        return out

    return pts, place


def _cluster_scores(res) -> dict:
    return {"accuracy": res.metrics["accuracy"], "intra_cluster_variance": res.metrics["intra_cluster_variance"]}


_shared_cluster_demo = st.cache_data(show_spinner=False, max_entries=64)(cluster_demo_of)
cluster_demo.clear = _shared_cluster_demo.clear  # the registry datasets' demos (an upload's go with its session)


#: The clustering pages' reference: centres drawn at random in the declared bounds (see random_centres_reference).
RANDOM_CENTRES = "Random centres (no data used)"


def random_centres_text(metrics: pd.DataFrame, reference: RandomCentresReference, *,
                        over_seeds: pd.DataFrame | None = None, over_reference: RandomCentresReference | None = None,
                        seed: int | None = None) -> str:
    """The reference in one paragraph, and the reading of the private methods against its spread: a method whose
    accuracy is within it (``reference.covers``) is said to be no better than random centres.

    With ``over_seeds`` (several seeds: :func:`cluster_demo_of`'s) the methods are read by their mean over the seeds
    against ``over_reference``, the reference on the same splits; a method that one seed (``metrics``, the pictures'
    run on ``seed``) puts on the other side is said as that seed's noise, not as the method's reading.
    """
    several = over_seeds is not None and len(over_seeds) and int(over_seeds["seeds"].max()) > 1
    ref = over_reference if several and over_reference is not None else reference
    on = f" on each seed's test rows, averaged over {int(over_seeds['seeds'].max())} seeds" if several else ""
    out = (f"**{RANDOM_CENTRES}: {ref.accuracy:.3f} ± {ref.accuracy_sd:.3f}**, the accuracy of k "
           f"centres drawn uniformly at random inside the declared bounds, each test row joining its nearest "
           f"(mean ± one standard deviation over {ref.draws} seeded draws{on}). It spends no ε: it never looks at "
           "the data. Accuracy is the fraction of test rows whose cluster is matched to their true class.")
    one = metrics.set_index("method")["accuracy"]
    acc = over_seeds.set_index("method")["accuracy"] if several else one
    private = [CLUSTER_LABELS[m] for m in CLUSTER_METHODS if get_learner(m).private]
    within = [name for name in private if ref.covers(float(acc[name]))]
    reading = " over the seeds" if several else ""
    if within:
        who = " and ".join(f"{name} ({acc[name]:.3f})" for name in within)
        out += (f" At this ε{reading}, {who} {'is' if len(within) == 1 else 'are'} **no better than random centres**: "
                "within their spread, so the clusters show nothing learnt from the data.")
        above = [name for name in private if name not in within]
        if above:
            out += " " + " and ".join(f"{name} ({acc[name]:.3f})" for name in above) + " scores above it."
    else:
        out += f" At this ε{reading}, both private methods score above the spread of random centres."
    if several:  # the pictures' own run, where it reads otherwise
        flipped = [name for name in private if reference.covers(float(one[name])) != (name in within)]
        said = []
        for side, names in (("within random centres' spread", [n for n in flipped if n not in within]),
                            ("above random centres' spread", [n for n in flipped if n in within])):
            if names:
                who = " and ".join(f"{name} ({one[name]:.3f})" for name in names)
                said.append(f"{who} {'is' if len(names) == 1 else 'are'} {side}")
        if said:
            out += (f" On seed {seed} alone (the pictures below), {'; '.join(said)}: one seed's noise and split, "
                    "which the mean over seeds evens out.")
    return out


def over_seeds_text(over_seeds: pd.DataFrame, metrics: pd.DataFrame, seed: int) -> str:
    """The headline's mean over seeds, each method with its spread, and the pictures' one run beside it.

    >>> over = pd.DataFrame({"method": ["DPLloyd"], "accuracy": [0.8426], "accuracy_sd": [0.1283], "seeds": [3]})
    >>> over_seeds_text(over, pd.DataFrame({"method": ["DPLloyd"], "accuracy": [0.694]}), 0)
    'Mean of 3 seeds (0 to 2), each its own split and noise, ± one standard deviation: DPLloyd 0.843 ± 0.128. The \
pictures and the table below are seed 0 alone: 0.694.'
    """
    n = int(over_seeds["seeds"].max())
    means = " · ".join(f"{r.method} {r.accuracy:.3f} ± {r.accuracy_sd:.3f}" for r in over_seeds.itertuples())
    one = metrics.set_index("method")["accuracy"]
    alone = ", ".join(f"{one[m]:.3f}" for m in over_seeds["method"] if m in one.index)
    return (f"Mean of {n} seeds ({seed} to {seed + n - 1}), each its own split and noise, ± one standard deviation: "
            f"{means}. The pictures and the table below are seed {seed} alone: {alone}.")


def dplloyd_run_text(run: dict, epsilon: float) -> str:
    """One sentence on what DPLloyd did in this run, from what actually ran (not from the defaults of iris)."""
    rounds = f"{run['rounds']} round{'' if run['rounds'] == 1 else 's'}"
    if run.get("init") == "grid":
        share = run["epsilon_init"] / epsilon if epsilon > 0 else 0.0
        start = (f"a noisy grid histogram for its start ({share:.0%} of ε, here {format_epsilon(run['epsilon_init'])}; "
                 f"Su et al.'s hybrid), then {rounds} of noisy counts and sums on the rest")
    else:
        kind = {"sphere_packing": "data-independent sphere packing", "uniform": "uniformly random centres"}.get(
            run.get("init"), str(run.get("init")))
        start = (f"{kind} for its start (no budget spent; the default when a grid would need too many cells), then "
                 f"{rounds} of noisy counts and sums, each with an equal share of ε")
    clipped = run.get("rows_clipped", 0)
    scaled = (f" {clipped} of {run['n_train']} training records have an L1 norm above d/2 and are scaled down to it "
              "before they enter the noisy sums (this bounds the sensitivity and pulls those records towards the "
              "centre of the box). That count is read from the private rows as they are: it is for you, outside "
              "the guarantee, and is not part of what the run releases." if clipped else "")
    return f"DPLloyd used {start}.{scaled}"


def neighbouring_text(neighbouring: "Neighbouring | str") -> str:
    if Neighbouring.of(neighbouring) is Neighbouring.REPLACE_ONE:
        return ("Both private methods protect against replacing one record. For DPLloyd that doubles the noise of "
                "Su et al.'s add/remove version: the same run is ε/2-DP under add/remove.")
    return ("DPLloyd protects against adding or removing one record (Su et al.), input perturbation against "
            "replacing one: under replace-one this DPLloyd is only 2ε-DP, so the two are not compared like for like.")


def cluster_scatter_figure(points: pd.DataFrame, centres: pd.DataFrame, method: str, classes: list[str],
                           accuracy: float | None = None, mean: tuple[float, int] | None = None) -> go.Figure:
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
    add_centres(fig, c, [f"centre → {m}" for m in c.matched_class])
    # the legend's offset is a fraction of the plot's height, which its seven rows shrink on a phone: at -0.3 the
    # x-axis title lay on the legend's first row (390 px, presentation mode); -0.42 leaves it clear at every width
    # the run's own score under its name: presenting, the pictures fill the stage and the numbers sit below it
    # (and, with ``mean`` = (accuracy, seeds), the mean over the seeds the headline reads)
    score = ("" if accuracy is None else f"accuracy {accuracy:.3f} on this run" if mean is None or mean[1] < 2
             else f"this run {accuracy:.3f} · {mean[1]}-seed mean {mean[0]:.3f}")
    title = f"{method}<br><sup>{score}</sup>" if score else method
    fig.update_layout(title=title, height=460, margin=dict(l=10, r=10, t=40 if accuracy is None else 56, b=10),
                      xaxis_title="PC 1 (display only)", yaxis_title="PC 2",
                      legend=dict(orientation="h", yanchor="top", y=-0.42))
    return fig


def add_centres(fig: go.Figure, centres: pd.DataFrame, names: list[str]) -> None:
    """One method's centres on a clustering picture (``centres``: its rows of ``PC1``, ``PC2``, ``in_view``): ✕ a
    centre, ▲ one outside the view drawn at its edge; ``names`` say each on hover."""
    fig.add_scatter(x=centres.PC1, y=centres.PC2, mode="markers", name="centre (▲: outside the view)",
                    text=[n + ("" if v else " (outside the view, drawn at its edge)")
                          for n, v in zip(names, centres.in_view)], hovertemplate="%{text}<extra></extra>",
                    marker=dict(symbol=["x" if v else "triangle-up" for v in centres.in_view], size=16,
                                color="black", line=dict(width=2)))


def cluster_sweep(dataset: str, k: int, iterations: int | None, epsilons: tuple[float, ...], seeds: int,
                  seed: int | None, neighbouring: str = "replace-one", more: tuple = (), *,
                  progress: Callable[[RunsDone], None] | None = None) -> pd.DataFrame:
    """Accuracy and intra-cluster variance vs epsilon for the three methods, mean and sd over ``seeds`` runs.

    ``progress(RunsDone(done, total))`` after each run. The page runs it through :func:`queued_sweep`."""
    series = [Series(m, _cluster_params(m, k, iterations, neighbouring, more),
                     epsilons if get_learner(m).private else ()) for m in CLUSTER_METHODS]
    df, said, _ = sweep_series(dataset, series, axis="epsilon", seeds=seeds, seed=seed, progress=progress)
    df = df.assign(method=df["learner"].map(CLUSTER_LABELS), epsilon=df["x"])
    out = (df.groupby(["method", "epsilon"], as_index=False, sort=False)
           .agg(accuracy=("accuracy", "mean"), accuracy_sd=("accuracy", "std"),
                intra_cluster_variance=("intra_cluster_variance", "mean"),
                intra_cluster_variance_sd=("intra_cluster_variance", "std")))
    out.attrs["warnings"] = said.messages()  # with the ε each came from, also when the chart is cached
    out.attrs["releases"] = sweep_releases(df, ("learner", "x", "seed"))  # for the session's total (ui.ledger)
    return out


def _classical_params(learner: str, model: str, kernel: str, regularization: float | str,
                      preprocess: str = "log-bounds", more: tuple = ()) -> dict:
    """Learner params; ``regularization="tune"`` runs Chaudhuri et al.'s private Algorithm 4 for the private ERMs.
    ``more``: the page's "More settings", ``(learner, knob, value)`` triples (a tuple, for the cache's hash)."""
    extra = {knob: value for name, knob, value in more if name == learner}
    spec = get_learner(learner)
    if spec.knob("regularization") is not None:  # the ERMs (Chaudhuri et al. 2011) and their non-private twin
        base = {"model": model, "kernel": kernel, "preprocess": preprocess, **extra}
        if regularization == "tune":  # tuning spends budget: only a private learner tunes (Algorithm 4)
            return {**base, "tune": True} if spec.private else base
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


def _scored_against(dataset) -> tuple[str, str, str]:
    """The metric, the non-private model and the trivial predictor of a Classical-models chart for ``dataset`` (a
    Dataset): R² for regression; accuracy for classification, or balanced accuracy where one class is at least 80 %
    of the labels, as the advisor judges it (:func:`dpcore.decision.advisor.headline_metric`; always answering the
    common class of a 95/5 label has accuracy 0.95)."""
    from ..decision.advisor import headline_metric

    if dataset.task == "classification":
        return headline_metric("classification", dataset.y), "logreg", trivial_learner(dataset.task)
    return "r2", "linreg", trivial_learner(dataset.task)


def classical_metric(dataset) -> str:
    """The metric the Classical-models page draws for ``dataset`` (a registry name or a Dataset): see
    :func:`_scored_against`."""
    return _scored_against(load_dataset(dataset) if isinstance(dataset, str) else dataset)[0]


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
            except BaseException:
                self.tick()
                raise
        self.note(x, name, seed, [str(w.message) for w in caught])
        return out

    def tick(self) -> None:
        """One more run of the chart tried (made or not): the progress moves."""
        self.done += 1
        if self.progress is not None:
            self.progress(RunsDone(self.done, self.total))

    def note(self, x, name: str, seed: int, messages: list[str]) -> None:
        """Run ``name`` at ``x`` (None: a run that does not depend on x) and ``seed`` is done and said ``messages``."""
        self.tick()
        self.xs.add(x)
        own, title = get_learner(name).title, METHOD_NAMES.get(name, CLUSTER_LABELS.get(name))
        for msg in messages:
            if title and msg.startswith(own):  # the learner's title reads as the page's name for the method
                msg = title + msg[len(own):]
            self.found.setdefault(msg, {}).setdefault(x, set()).add(seed)

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
    metric, base, trivial = _scored_against(load_dataset(dataset) if isinstance(dataset, str) else dataset)

    def params(name: str) -> dict:
        return _classical_params(name, model, kernel, regularization, preprocess, more)

    series = [Series(n, params(n), epsilons) for n in learners] + [Series(n, params(n)) for n in (base, trivial)]
    df, said, _ = sweep_series(dataset, series, axis="epsilon", seeds=seeds, seed=seed, progress=progress)
    df = df.assign(method=df["learner"].map(lambda n: METHOD_NAMES.get(n, n)),
                   private=df["learner"].map(lambda n: get_learner(n).private), epsilon=df["x"])
    out = df.groupby(["method", "private", "epsilon"], as_index=False, sort=False).agg(
        value=(metric, "mean"), sd=(metric, "std"))
    out.attrs["metric"] = metric
    out.attrs["warnings"] = said.messages()
    out.attrs["releases"] = sweep_releases(df, ("learner", "x", "seed"))  # for the session's total (ui.ledger)
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
    "erm-output": "Output perturbation adds noise of norm about 2d/(n Λ ε) to the minimiser (d features; its "
                  "sensitivity is 2/(n Λ)): it shrinks like 1/n.",
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
    ds = load_dataset(dataset) if isinstance(dataset, str) else dataset
    metric, base, trivial = _scored_against(ds)
    # the training rows each fraction keeps (the stratified split's size does not depend on the seed)
    n_train = train_test_split(ds, seed=secure_or_seed(seed)[1]).X_train.shape[0]
    series = [Series(n, _classical_params(n, model, kernel, regularization, preprocess, more), tuple(fractions))
              for n in (learner, base, trivial)]
    df, said, skipped = sweep_series(dataset, series, axis="train_fraction", seeds=seeds, seed=seed, epsilon=epsilon,
                                     x_name="training rows", x_of=lambda f: int(round(f * n_train)), check=False,
                                     skip_failures=True, progress=progress)
    if df.empty:
        raise DPValueError("no training-set size could be run: " + "; ".join(sorted(set(skipped.values()))))
    df = df.assign(method=df["learner"].map(lambda n: METHOD_NAMES.get(n, n)), n_train=df["x"])
    out = df.groupby(["method", "n_train"], as_index=False, sort=False).agg(
        value=(metric, "mean"), sd=(metric, "std"), runs=(metric, "size"))
    out.attrs["skipped"] = [{"method": m, "n_train": n, "reason": r} for (m, n), r in
                            sorted({(METHOD_NAMES.get(m, m), n): r for (m, n), r in skipped.items()}.items())]
    out.attrs["metric"] = metric
    out.attrs["warnings"] = said.messages()
    out.attrs["releases"] = sweep_releases(df, ("learner", "x", "seed"))  # for the session's total (ui.ledger)
    return out.rename(columns={"value": metric})
