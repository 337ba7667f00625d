"""Trade-off explorer: any registered learner swept along epsilon (or another knob), over seeds, live."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import streamlit as st

from dpcore.decision.advisor import chart_metrics
from dpcore.runtime.serving import max_sweep_jobs, server_scheduler
from dpcore.sweep import (
    AXES,
    DEFAULT_JOBS,
    DEFAULT_RANGES,
    DEFAULT_SEEDS,
    SweepConfig,
    get_axis,
    tuning_tax,
    value_range,
)
from dpcore.ui import (
    dataset_picker,
    delta_input,
    epsilon_input,
    noise_mode_input,
    page_header,
    run_guarded,
    show_frame,
    show_plain_table,
)
from dpcore.ui.advisor import advisor_panel, load_warnings_of, warnings_notice
from dpcore.ui.common import bounded_number, format_epsilon
from dpcore.ui.ledger import record_releases, show_data_total, sweep_releases
from dpcore.ui.links import stop_page
from dpcore.ui.present import control_area, fold_intro, headline_area, presenting_stage
from dpcore.ui.sweep import (
    METRIC_LABELS,
    SUMMARY_COLUMNS,
    axis_options,
    best_swept,
    best_swept_label,
    default_learners,
    display_runs,
    display_summary,
    display_tuning_tax,
    knobs_markdown,
    metric_text,
    n_to_compute,
    neighbouring_note,
    no_better_than_trivial,
    overspent_note,
    parse_knobs,
    remembered,
    run_live,
    sweep_figure,
    sweepable,
    swept_range_verdict,
    swept_text,
    table_csv,
    title_of,
    worse_than_trivial_at,
)
from dpcore.ui.uploads import data_key, is_upload

page_header(
    "Privacy-utility trade-off explorer",
    "What does privacy cost here? Pick learners and sweep ε (or the clipping norm, the noise level, the learning "
    "rate or the training-set size) over several seeds; each curve is the mean across seeds with its spread, "
    "beside the non-private model and the trivial predictor.",
)

with st.sidebar:
    st.header("Sweep")
    upload_warnings: list = []  # shown with the sweep's, in one notice above the chart
    ds = dataset_picker("sweep.dataset", default="breast_cancer", warnings_into=upload_warnings)
if ds is None:
    stop_page()
if is_upload(ds):
    fold_intro()  # the file brings its own notices and choices: the chart keeps its place on the first screen
axes = axis_options(ds.task, ds.is_image)
if not axes:
    st.info(f"No registered learner can be swept on {ds.name} ({ds.task}) yet.")
    stop_page()
with st.sidebar:
    axis = st.selectbox("Swept axis", axes, key="sweep.axis", format_func=lambda a: AXES[a].label)
    options = sweepable(ds.task, ds.is_image, axis)
    # keyed by the kind of data: switching to data where the selection does not fit resets it to the default
    shares = bool(getattr(ds, "class_shares", ()))  # declared: the learners that answer by them come first
    chosen = st.multiselect("Learners", options, default=default_learners(options, ds.task, class_shares=shares),
                            key=f"sweep.learners.{ds.task}.{'img' if ds.is_image else 'tab'}.{axis}"
                                + (".shares" if shares else ""),
                            format_func=title_of)
    lo0, hi0, n0 = DEFAULT_RANGES[axis]
    c1, c2, c3 = st.columns(3)
    lo = bounded_number(c1, "Min", low=1e-4, high=None, default=lo0, key=f"sweep.min.{axis}", name="The swept minimum",
                        value=float(lo0), format="%.4g")
    hi = bounded_number(c2, "Max", low=1e-4, high=None, default=hi0, key=f"sweep.max.{axis}", name="The swept maximum",
                        value=float(hi0), format="%.4g")
    points = bounded_number(c3, "Points", low=1, high=25, default=n0, key=f"sweep.points.{axis}", name="Points",
                            whole=True, value=n0)
    log = st.checkbox("Log-spaced values", get_axis(axis).log, key=f"sweep.log.{axis}")
    seeds = bounded_number(st, "Seeds per value", low=1, high=10, default=DEFAULT_SEEDS, key="sweep.seeds", whole=True,
                           value=DEFAULT_SEEDS,
                            help="Each seed draws its own train/test split and its own noise.")
    base_seed = noise_mode_input("sweep.seed", uploaded=getattr(ds, "source", "") == "upload")
    if base_seed is None:
        st.caption("In secure mode every run uses one train/test split (seed 0); the repetitions differ in their "
                   "noise only.")
    delta = delta_input("sweep.delta")
    # sweeping σ: each run spends the ε its σ gives, so there is no ε to fix (SweepConfig.sets_noise)
    eps = 1.0 if axis in ("epsilon", "noise_multiplier") else epsilon_input("sweep.epsilon", label="Fixed ε",
                                                                            delta_key="sweep.delta")
    if axis == "noise_multiplier":
        st.caption("No fixed ε when sweeping σ: each run spends the ε its σ gives with the learner's epochs and "
                   "batch size, shown in the **ε spent** columns below.")
    if axis == "epsilon" and 0 < lo <= hi:
        control_area(st.sidebar, top=False).markdown(swept_range_verdict(lo, hi, int(points)))
    mark = None
    if axis == "epsilon":  # the class's own ε on the curve: the lesson's link from the Attack page fills it in
        mark = bounded_number(st, "Your ε, marked on the chart", low=0.001, high=None, default=None, value=None,
                              key="sweep.mark", name="Your ε", format="%.4g", placeholder="none",
                              help="The ε your class trained and attacked at (the lesson's link from the Attack page "
                                   "fills it in): a dash-dotted line marks it on the chart, named in the legend, so "
                                   "the room sees where its model sits on the curve. Leave it empty for no mark.")
    knobs = st.text_area("Fixed knobs (key=value per line)", "", key="sweep.knobs",
                         help="Each learner gets the knobs it takes, e.g. epochs=5 or preprocess=standardize.")
    if chosen:
        with st.expander("Knobs each learner takes"):
            st.markdown(knobs_markdown(chosen))
    with st.expander("Advanced"):
        top = max_sweep_jobs()
        jobs = bounded_number(st, "Parallel worker processes", low=1, high=top, default=min(DEFAULT_JOBS, top),
                              key="sweep.jobs", whole=True, value=min(DEFAULT_JOBS, top),
                               help=f"At most this machine's {top} cores. The network learners' runs train "
                                    "together in the server's own process, and so do runs too small to be worth "
                                    "starting the workers.")
        scheduler = server_scheduler()  # the operator's cluster only (DPCORE_SCHEDULER), never a visitor's address
        st.caption(f"Runs go to the server's Dask cluster at {scheduler}." if scheduler else
                   "Runs use this machine; the server's operator can send them to a Dask cluster (DPCORE_SCHEDULER, "
                   "see the README).")
        band = st.radio("Band across seeds", ["minmax", "std"], key="sweep.band", horizontal=True,
                        format_func=lambda b: {"minmax": "min–max", "std": "±1 std"}[b])

if not chosen:
    st.info("Pick at least one learner in the sidebar.")
    stop_page()
values = run_guarded(value_range, axis, lo, hi, int(points), log=log)
params = run_guarded(parse_knobs, knobs)
if values is None or params is None:
    stop_page()
config = run_guarded(SweepConfig, dataset=ds, learners=tuple(chosen), axis=axis, values=values, seeds=int(seeds),
                     base_seed=base_seed or 0, secure=base_seed is None, epsilon=eps, delta=delta, params=params)
if config is None:
    stop_page()
if config.sets_noise and axis != "noise_multiplier":
    st.info("noise_multiplier is fixed in the knobs: each run spends the ε that σ gives, shown in the **ε spent** "
            "columns; the Fixed ε in the sidebar is not used.")
n_runs = len(config.runs())
axis_name = "ε" if axis == "epsilon" else axis.replace("_", " ")
st.caption(f"**{n_runs} runs**: {len(chosen)} learner(s) × {len(values)} value(s) × {seeds} seed(s), and "
           f"{len(config.baselines())} baseline(s).",  # one line: the chart below stays on the first screen
           help=f"{axis_name} values {', '.join(f'{v:.3g}' for v in values)}; baselines: "
                f"{', '.join(title_of(b) for b in config.baselines()) or 'none'}.")
metric_choices = chart_metrics(ds.task, ds.y)  # balanced accuracy first where one class is most rows
metric = metric_choices[0] if len(metric_choices) == 1 else st.radio(
    "Metric", metric_choices, horizontal=True, key="sweep.metric", format_func=lambda m: METRIC_LABELS[m])
log_x = bool(log) and len(values) > 1

# Run beside its caption; presenting, Run is on the stage, and an empty column would push the caption in
b1, b2 = (st, st) if presenting_stage() else st.columns([1, 12], vertical_alignment="center")
clicked = control_area(b1).button("Run", type="primary", key="sweep.run")
warn_box = b2.empty()  # the one notice of warnings takes this caption's place beside Run, keeping the chart up
warn_box.caption("The bar below counts the runs as they finish. A long first sweep also starts the worker processes; "
                 "images, PATE and federated learners take longer per run. " + (
                     "Your file's runs stay in this session." if getattr(ds, "source", "") == "upload" else
                     "Finished runs are cached."))
if is_upload(ds):  # the chart first, its summary under it: at 1280×720 the chart starts on the first screen
    progress_slot, chart_slot, metrics_box = st.empty(), headline_area().empty(), st.container()
else:
    progress_slot, metrics_box, chart_slot = st.empty(), st.container(), headline_area().empty()
prompt_slot = st.empty()  # drawn now, so an earlier run's "Press Run" box does not linger while this one runs
result = remembered(config)
if clicked and result is None:
    result = run_live(config, n_jobs=int(jobs), scheduler=scheduler, progress_slot=progress_slot,
                      chart_slot=chart_slot, metric=metric, log_x=log_x, band=band, mark=mark)
if result is None and clicked:
    stop_page()  # the error is shown above; no chart, no "press Run" box
if result is None:
    warnings_notice(None, load_warnings_of(upload_warnings), slot=warn_box)
    # presenting: where the chart will come, beside Run (the stage's right half stood empty, the box under it)
    prompt_box = chart_slot if presenting_stage() else prompt_slot
    prompt_box.info(f"Press **Run** to compute the {n_runs} runs ({n_to_compute(config)} not computed yet); " + (
        "the results of your file stay in this session only, never on disk, and go when the session ends."
        if getattr(ds, "source", "") == "upload" else
        "finished runs are cached on disk, so reopening these settings later shows the curve at once."))
    stop_page()

table = result.table
summ = result.summary(metric)
warnings_notice(table, load_warnings_of(upload_warnings), slot=warn_box)
m = metrics_box.columns(4)
m[0].metric("Runs", f"{len(table)}", help=f"{result.n_computed} computed, {result.n_cached} read from the cache, "
            f"{result.seconds:.1f} s")
if (found := best_swept(summ, axis=axis, metric=metric)) is not None:  # wherever it lies; no overspent point
    best, ties, beyond, left_out = found.point, found.ties, found.spent, found.left_out
    short = get_axis(axis).symbol or axis_name  # a letter fits a quarter of the page's width
    m[1].metric(best_swept_label(short, best.value, beyond, axis),
                metric_text(best['mean'], metric),
                delta=(f"ties with {short} = {swept_text(ties[0].value, axis)}"
                       if len(ties) == 1 and ties[0].learner == best.learner
                       else f"ties with {len(ties)} other point{'s' if len(ties) > 1 else ''}") if ties else None,
                delta_color="off", delta_arrow="off",
                help=f"{title_of(best.learner)}, mean over seeds"
                     + (". These points lie within the seeds' spread of it, so these runs cannot tell them apart: "
                        + "; ".join(f"{title_of(r.learner)} at {short} = {swept_text(r.value, axis)} "
                                    f"({metric_text(r['mean'], metric)})" for r in ties) if ties else "")
                     + (f" — its runs spent ε = {format_epsilon(beyond)} in all, more than the ε on the axis (the "
                        "note under the chart says why)" if beyond else "")
                     + (f" — {left_out} point{'s' if left_out > 1 else ''} that spent far more than the ε on the "
                        "axis left out (the note under the chart says why)" if left_out else "")
                     + (" — ⚠ this learner leaked privacy here: its ε is not a guarantee" if best.get(
                         "leaks_privacy", False) else ""))
for col, role, label in ((m[2], "baseline", "Best non-private"), (m[3], "trivial", "Trivial baseline")):
    b = summ[summ.role == role].sort_values("mean", ascending=metric == "mse")
    if not b.empty:
        col.metric(label, metric_text(b['mean'].iloc[0], metric),
                   help=f"{title_of(b.learner.iloc[0])}, mean over seeds")
for name, best_v, triv in no_better_than_trivial(summ, metric):
    st.warning(f"**{title_of(name)}** is no better than the trivial predictor at every {axis_name} tried (best "
               f"{metric_text(best_v, metric)} vs {metric_text(triv, metric)}): at these settings privacy costs all "
               f"the utility. Try a larger {axis_name}, more data, or a learner made for this task.")
for name, worse in worse_than_trivial_at(summ, metric):
    st.info(f"**{title_of(name)}** is no better than the trivial predictor at {axis_name} = "
            f"{', '.join(f'{v:.3g}' for v in worse)}: there the noise costs more than the model learns.")
chart_slot.plotly_chart(sweep_figure(table, config, metric=metric, log_x=log_x, band=band, mark=mark),
                        width="stretch", key="sweep.chart")
st.caption("Lines: mean across seeds; band: spread across seeds. The ε column is what each run actually spent "
           "(from its accountant); non-private and trivial baselines are drawn as horizontal lines.")
# every private run of the sweep is a model trained on the data: released, they join the session's total on it
record_releases(data_key(ds), ("sweep", config.fingerprint()), sweep_releases(table), page="Trade-off explorer",
                source="the chart's points")
total_slot = st.empty()  # filled once the advisor's attack, if asked for, is counted too
if mark is not None and not min(values) <= mark <= max(values):
    st.caption(f"Your ε = {mark:g} lies outside the swept range ({min(values):g} to {max(values):g}): widen the range "
               "in the sidebar to see it on the curve.")
if axis == "epsilon" and (note := neighbouring_note(table)):
    st.info(note)
if note := overspent_note(table):  # a point drawn at ε = 0.1 that spent 45: say why, once
    st.warning(note)
if axis == "epsilon":
    advisor_panel(result, load=load_warnings_of(upload_warnings), data=data_key(ds))
show_data_total(ds, container=total_slot)
st.header("Summary across seeds")
# plain, the learners' names wrapping: as a grid its nine columns ran past a 1280 px page and cut "Seeds" and "ε spent"
show_plain_table(display_summary(summ, metric=metric, axis=axis), wide_from=4)
st.caption(SUMMARY_COLUMNS)
tax = tuning_tax(table, delta=delta)
if axis == "epsilon":
    st.caption("The tuning tax (what choosing the best of several candidates costs) is computed for sweeps of the "
               "other knobs, such as the clip norm, whose candidates all run the same mechanism, as "
               "repeat-and-select needs (Papernot & Steinke 2022). Choosing ε by these results is a choice made on "
               "the private data too: every run behind it counts, and each is in the session's total.")
elif len(tax):
    st.header("The tuning tax: what choosing the best point costs")
    st.markdown(
        "Picking the best value of this sweep looked at every candidate's result on the private data, so the "
        "chosen model carries more than one run's ε. Released together, the runs cost at most the sum of their ε. "
        "If the number of candidates tried is random (Poisson, with the mean shown) and only the best model is "
        "released, Papernot & Steinke (2022) bound the whole search by one run's Rényi DP plus a term that grows "
        "only with the logarithm of that mean (dp_accounting's repeat-and-select event). Seeds repeat a candidate: "
        "they are not extra candidates of the search, but each "
        "is a model of its own, so the search repeats a candidate with all its seeds (its score is their mean) and "
        "the composition of every run released counts them all.")
    show_frame(display_tuning_tax(tax), key="sweep.tuning")
st.header("Every run")
show_frame(display_runs(table, axis=axis), key="sweep.table")
st.caption("The CSV keeps the tidy, machine-readable columns (learner registry names, inf for non-private ε).")
st.download_button("Download the table (CSV)", table_csv(table, ds), file_name=f"sweep_{ds.name}_"
                   f"{axis}.csv", mime="text/csv", key="sweep.download")
