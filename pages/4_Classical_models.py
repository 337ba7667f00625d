"""Classical private models: DP-ERM (Chaudhuri et al. 2011), the functional mechanism (Zhang et al. 2012), SSP.

Sufficient-statistics perturbation follows Wang 2018."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import plotly.express as px
import streamlit as st

from dpcore.defaults import DELTA
from dpcore.learners import get_learner
from dpcore.models.erm import AUTO_LAMBDA
from dpcore.models.learners import FIXED_LAMBDA, FIXED_LAMBDAS, TUNE_LAMBDAS, default_preprocess
from dpcore.ui import (
    dataset_picker,
    epsilon_input,
    noise_mode_input,
    page_header,
    readable_log_ticks,
    run_guarded,
    show_table,
    show_warnings,
)
from dpcore.ui.common import bounded_number
from dpcore.ui.knobs import knob_widget
from dpcore.ui.ledger import record_chart, show_data_total
from dpcore.ui.links import stop_page
from dpcore.ui.models import (
    METHOD_NAMES,
    METHOD_SHORT,
    METHOD_STYLE,
    SIZE_NOTES,
    classical_metric,
    classical_more_settings,
    classical_sweep,
    near_trivial_text,
    queued_sweep,
    regularization_text,
    size_sweep,
)
from dpcore.ui.palette import epsilon_bands, legend_below, mark_epsilon
from dpcore.ui.present import headline_area
from dpcore.ui.uploads import data_arg, is_upload, upload_in_view, widget_part

page_header(
    "Classical private models",
    "Logistic regression and Huber SVM made private by perturbing the output or the objective (Chaudhuri, "
    "Monteleoni & Sarwate 2011), optionally on random Fourier features, and linear regression by the functional "
    "mechanism (Zhang et al. 2012) or by Gaussian sufficient-statistics perturbation (Wang 2018). Each curve is "
    "drawn beside the non-private model and the trivial predictor.",
)

with st.sidebar:
    st.header("Settings")
    ds = dataset_picker("classical.dataset", images=False, default="breast_cancer", exclude=("adult",),
                        class_shares=False)  # its models release scores: the shares would change nothing
if ds is None:  # outside the sidebar: what the picker needs (a file, a fix to one) is said in the main area too
    stop_page()
with st.sidebar:
    dataset, task = data_arg(ds), ds.task  # a registry name, or this session's own file
    if task == "classification":
        erm = get_learner("erm-objective")  # model, kernel and scaling are DP-ERM's declared knobs
        model = knob_widget(erm.knob("model"), key="classical.model", value=erm.knob("model").default)
        kernel = knob_widget(erm.knob("kernel"), key="classical.kernel", value=erm.knob("kernel").default)
        lam_mode = st.radio(
            "Regularisation Λ", ["auto", "tune", "fixed"], horizontal=True, key="classical.lam_mode",
            format_func=lambda m: {"auto": "Auto", "tune": "Tune privately", "fixed": "Fixed"}[m],
            help=f"Auto: Λ = C·√d / (n·ε) per binary model, n training rows of d features, C = "
                 f"{AUTO_LAMBDA['objective']:g} (objective) or {AUTO_LAMBDA['output']:g} (output), chosen on "
                 "validation rows of every classification dataset (a choice made on data, not accounted for). Tune "
                 "privately: Chaudhuri et al.'s Algorithm 4 picks among "
                 f"{', '.join(f'{v:g}' for v in TUNE_LAMBDAS)} by the exponential mechanism on disjoint parts of the "
                 "training rows, inside the same ε. Fixed: the value you set.")
        if lam_mode == "fixed":
            lam = st.select_slider("Λ", FIXED_LAMBDAS, value=FIXED_LAMBDA,
                                   key="classical.lam_value",
                                   help="Larger Λ shrinks the noise's effect (it scales like 1/(n Λ ε)) but pulls "
                                        "the weights towards 0.")
        else:
            lam = lam_mode
        preprocess = knob_widget(
            erm.knob("preprocess"), key=f"classical.preprocess.{widget_part(ds.name)}",
            value=default_preprocess(ds.name),
            help="Private options use only each feature's public bounds: the log scale spreads positive, skewed "
                 "features (sizes, areas) that the linear scale crowds near their lower bound; the default for "
                 "each dataset is the one that did better on validation rows (linear for iris). The last option "
                 "standardises with statistics of the private rows, as most published comparisons do: not private.")
        learners = ("erm-output", "erm-objective")
    else:
        model, kernel, lam, preprocess = "logreg", "none", "auto", "log-bounds"
        learners = ("functional-mechanism", "ssp")
        st.caption("Linear regression by the functional mechanism (Laplace, pure ε) and by Gaussian "
                   f"sufficient-statistics perturbation (SSP: δ = {DELTA:g}, a record added or removed).")
    with st.expander("More settings"):  # every other knob the learners on this page declare
        more = classical_more_settings(dataset, task)
    # the functional mechanism fits in milliseconds and swings a lot between splits at small ε: average more
    seeds0 = 10 if task == "regression" else 2
    seeds = bounded_number(st, "Seeds averaged", low=1, high=20, default=seeds0, key=f"classical.seeds.{task}",
                           whole=True, value=seeds0,
                            help="Each seed is a new train/test split and new noise; the charts show the mean "
                                 "and one standard deviation.")
    # on regression the chart holds Gaussian SSP, an (ε, δ) guarantee at the runs' δ: the verdict names it
    epsilon = epsilon_input("classical.epsilon", label="ε for the training-size chart",
                            delta=DELTA if task == "regression" else 0.0)
    seed = noise_mode_input("classical.seed", uploaded=is_upload(ds))

epsilons = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
upload_in_view(ds)  # the intro folded, one line on whose data this is
# balanced accuracy where one class is most of the rows (always answering it would read as a good accuracy)
metric_label = {"accuracy": "test accuracy (fraction)", "balanced_accuracy": "test balanced accuracy (fraction)",
                "r2": "test R²"}[classical_metric(dataset)]
spread = "; bars show one standard deviation" if int(seeds) > 1 else ""
# the page says it in its own words below the chart (once, also when the sweep comes from the cache)
leak_note = ("preprocess='standardize'",)
if preprocess == "standardize":
    st.warning("Features are standardised with the private training rows' mean and standard deviation: the "
               "curves show the algorithm's accuracy, but the pipeline as a whole is not ε-DP. Choose a scaling "
               "between declared bounds for the guarantee.")
df = run_guarded(queued_sweep, classical_sweep, dataset, learners, model, kernel, lam, epsilons, int(seeds), seed,
                 preprocess, more, what=f"Each method at {len(epsilons)} values of ε over {int(seeds)} seed(s)",
                 hide_warnings=leak_note)
if df is not None:
    metric = df.attrs.get("metric", df.columns[3])
    leaky = preprocess == "standardize"
    at1 = df[df.epsilon == 1.0]
    st.markdown(f"**{metric_label[:1].upper() + metric_label[1:]} at ε = 1 on {ds.title}**"
                + (" (the scaling leaks: not private as a whole)" if leaky else ""))
    cols = st.columns(len(at1))
    for c, (name, private, v) in zip(cols, at1[["method", "private", metric]].itertuples(index=False)):
        c.metric(METHOD_SHORT.get(name, name), f"{v:.3f}",
                 help=f"{name} at ε = 1." if private else f"{name}: a non-private reference, it does not depend on ε.")
    if behind := near_trivial_text(at1, metric, task):
        st.warning(behind)
    if leaky:  # the algorithm spends ε, but the pipeline is not private: the table must not say "yes"
        df = df.assign(private=df["private"].map({True: "no: ε-DP algorithm, leaky scaling", False: "no"}))
    fig = px.line(df, x="epsilon", y=metric, color="method", line_dash="method", symbol="method", log_x=True,
                  error_y="sd" if int(seeds) > 1 else None, **METHOD_STYLE,
                  labels={"epsilon": "ε (log scale)", metric: metric_label, "method": "Method"})
    readable_log_ticks(fig, "x")
    fig.update_layout(height=440, yaxis_title=metric_label)
    legend_below(fig)
    epsilon_bands(fig, epsilons)
    if min(epsilons) <= epsilon <= max(epsilons):  # the sidebar's ε sets the chart below, not this sweep
        mark_epsilon(fig, epsilon, note="(the chart below)")
    if task == "regression":  # room for the error bars too, down to R² = -1
        low = float((df[metric] - (df["sd"].fillna(0) if int(seeds) > 1 else 0)).min())
        fig.update_yaxes(range=[max(-1.0, low - 0.1), 1.0])
    st.plotly_chart(fig, width="stretch", key="classical.eps_chart")
    # each with its ε, under the chart that shows them: a warning about ε = 0.1 above the numbers at ε = 1 read as
    # one about them
    show_warnings(df.attrs.get("warnings", ()), hide=leak_note, fold=is_upload(ds))
    below_zero = (" R² below 0 means worse than predicting the training mean for everyone (the trivial line, about "
                  "0: the training mean is not quite the test rows' mean): "
                  "with few rows and small ε the noise outweighs the signal." if task == "regression" else "")
    guarantee = (" ERM rows are clipped to a declared norm (the sensitivity bound of Chaudhuri et al.). Pure ε-DP: "
                 "δ = 0, neighbours differ in one record replaced." if task == "classification" else
                 " Both use only the declared bounds. The functional mechanism is pure ε-DP (Laplace noise, δ = 0, "
                 "one record replaced). Gaussian SSP adds Gaussian noise to the count, the sums, XᵀX and Xᵀy and is "
                 f"(ε, δ = {DELTA:g})-DP for one record added or removed, the same notion as DP-SGD: a weaker "
                 "guarantee than pure ε, bought with noise about √d times smaller (L2 instead of L1 sensitivities).")
    st.caption(f"Mean over {seeds} seed(s){spread}. This chart and the numbers above it sweep ε from "
               f"{min(epsilons):g} to {max(epsilons):g}; the ε box in the sidebar sets the training-size chart below."
               + guarantee
               + below_zero + (" " + regularization_text(lam) if task == "classification" else ""))
    total_slot = st.empty()  # the session's total, under this chart, once the chart below is counted too
    show_table(df, key="classical.eps_table")

st.header(f"{metric_label[:1].upper() + metric_label[1:]} vs training-set size at ε = {epsilon:g}")
learner = st.selectbox("Learner", learners, key="classical.size_learner",
                       format_func=lambda n: METHOD_NAMES.get(n, n))
fractions = (0.1, 0.25, 0.5, 0.75, 1.0)
sz = run_guarded(queued_sweep, size_sweep, dataset, learner, model, kernel, lam, float(epsilon), fractions,
                 int(seeds), seed, preprocess, more,
                 what=f"{len(fractions)} training-set sizes over {int(seeds)} seed(s)", hide_warnings=leak_note)
if sz is not None:
    show_warnings(sz.attrs.get("warnings", ()), hide=leak_note, fold=is_upload(ds))
    metric = sz.attrs.get("metric", "accuracy")
    fig = px.line(sz, x="n_train", y=metric, color="method", line_dash="method", symbol="method", **METHOD_STYLE,
                  error_y="sd" if int(seeds) > 1 else None,
                  labels={"n_train": "training rows n", metric: metric_label, "method": "Method"})
    fig.update_layout(height=400, yaxis_title=metric_label)
    legend_below(fig)
    if task == "regression":
        low = float((sz[metric] - (sz["sd"].fillna(0) if int(seeds) > 1 else 0)).min())
        fig.update_yaxes(range=[max(-1.0, low - 0.1), 1.0])
    else:
        fig.update_yaxes(range=[0.0, 1.02])
    headline_area().plotly_chart(fig, width="stretch", key="classical.size_chart")
    for skip in sz.attrs.get("skipped", []):
        st.info(f"{skip['method']} could not run on {skip['n_train']} training rows: {skip['reason']}")
    st.caption(f"Mean over {seeds} seed(s) (split and noise){spread}. {SIZE_NOTES.get(learner, '')} The "
               "non-private model and the trivial predictor are drawn for the same rows.")
    show_table(sz, key="classical.size_table", labels={"runs": "Seeds run"})
# every private model of both charts is a release about the same people: they join the session's total on the data
record_chart(ds, ("classical_sweep", learners, model, kernel, lam, epsilons, int(seeds), seed, preprocess, more), df,
             page="Classical models", source="the ε chart's points")
record_chart(ds, ("size_sweep", learner, model, kernel, lam, float(epsilon), fractions, int(seeds), seed, preprocess,
                  more), sz, page="Classical models", source="the training-size chart's points")
show_data_total(ds, container=total_slot if df is not None else None)
