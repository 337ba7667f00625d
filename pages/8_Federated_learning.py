"""Federated learning with differential privacy: DP-FedAvg, local DP and plain FedAvg, drawn round by round."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import dataclasses

import streamlit as st

from dpcore.ui import (
    applied_epsilon_input,
    close_sidebar_on_phone,
    dataset_picker,
    delta_input,
    noise_mode_input,
    page_header,
    run_guarded,
    show_frame,
    show_table,
    verdict_line,
)
from dpcore.ui.accounting import weak_guarantee_note
from dpcore.ui.common import bounded_number, format_epsilon, format_noise, majority_accuracy
from dpcore.ui.federated import (
    DIAGNOSTIC_COLUMNS,
    FED_SPEC,
    HEATMAP_CLIENTS,
    HISTORY_LABELS,
    MODE_LABELS,
    PAGE_DRAWN,
    PRIVACY_MODES,
    SIGMA_START,
    START_DATASET,
    balanced_by_shares,
    cached_fedavg,
    chance_warning,
    clients_figure,
    draw_reference,
    federation_warnings,
    gap_caption,
    live_callback,
    non_private_twin,
    page_config,
    page_defaults,
    rounds_caption,
    rounds_figures,
    shares_warning,
    sigma_used_caption,
    step_caption,
    sweep_config,
    sweep_display,
)
from dpcore.ui.knobs import knob_widget, knob_widgets, knobs_named, other_knobs
from dpcore.ui.ledger import record_release, record_releases, show_data_total, sweep_releases
from dpcore.ui.links import stop_page
from dpcore.ui.present import control_area, headline_area
from dpcore.ui.sweep import remembered as remembered_sweep
from dpcore.ui.sweep import run_live, sweep_figure
from dpcore.ui.uploads import data_arg, data_key, is_upload, leaks_bounds, upload_in_view

page_header(
    "Federated learning with differential privacy",
    "Clients keep their data and send only model updates. DP-FedAvg clips each client's update and lets the server "
    "add Gaussian noise, hiding whether any one client took part (user-level DP); local DP makes every client add "
    "its own noise instead, which protects even from the server but costs far more accuracy.",
)

# The variant and how privacy is set live outside the form so that the boxes they make irrelevant are
# disabled at once (a form reports its widgets only on submit).
st.sidebar.header("Federation")
mode = st.sidebar.radio("Variant", list(MODE_LABELS), format_func=MODE_LABELS.get, key="fed.mode")
private = mode != "none"
by = st.sidebar.radio("Privacy set by", PRIVACY_MODES, horizontal=True, key="fed.by", disabled=not private,
                      help="Either fix the user-level budget and let σ be calibrated to it, or fix σ and read "
                           "off ε.")
with control_area(st.sidebar, top=False).form("fed.form"):
    key_slot = st.container()  # ε first: beside the chart when presenting, at the top of the form otherwise
    ds = dataset_picker("fed.dataset", task="classification", in_form=True, default=START_DATASET, container=st)
    at = ds.name if ds is not None else START_DATASET
    # every box below is one of the dp-fedavg learner's declared knobs, with its defaults on this dataset (the
    # command line uses the same); each dataset starts from its own defaults and keeps what was chosen for it
    DEFAULTS = page_defaults(at if ds is None else data_arg(ds))
    widgets = dict(prefix="fed", dataset=at, images=False, container=st, in_form=True)
    params = knob_widgets(FED_SPEC, knobs_named(FED_SPEC, "clients"), DEFAULTS, **widgets)
    rounds = bounded_number(st, "Rounds", low=1, high=500, default=None, key="fed.rounds", whole=True, value=None,
                            placeholder="from ε",
                             help="Empty: from the budget, 25 rounds per unit of ε (20 to 100; 100 below 100 "
                                  "clients; 50 when privacy is set by σ or off): every round spends budget, so a "
                                  "small ε buys fewer, less noisy rounds. The command line uses the same rule.")
    params |= knob_widgets(FED_SPEC, knobs_named(FED_SPEC, "client_fraction", "non_iid"), DEFAULTS, **widgets)
    params["clip_norm"] = knob_widget(FED_SPEC.knob("clip_norm"), key=f"fed.clip_norm.{at}",
                                      value=DEFAULTS["clip_norm"], container=st, disabled=not private)
    sigma = knob_widget(FED_SPEC.knob("noise_multiplier"), key="fed.sigma", value=SIGMA_START, container=st,
                        disabled=not private or by != "noise multiplier",
                        help="Used when privacy is set by noise multiplier.")
    eps, applied = applied_epsilon_input(  # the button under ε: the form's own is screens below
        "fed.eps", button="Train at this ε", button_key="fed.apply", default=DEFAULTS["epsilon"],
        container=key_slot, label="Target ε, user level", disabled=not private or by != "target ε", in_form=True,
        delta_key="fed.delta",
        help="Privacy budget for one client's whole data: smaller is more private. Used when privacy is set by "
             "target ε.")
    used_slot = st.empty()  # the σ and ε actually used, filled in after the run
    delta = delta_input("fed.delta", container=st, disabled=not private,
                        help=None if private else "Not used: non-private training spends no privacy budget.")
    params |= knob_widgets(FED_SPEC, knobs_named(FED_SPEC, "local_epochs", "learning_rate", "model"), DEFAULTS,
                           **widgets)
    with st.expander("More settings"):
        params |= knob_widgets(FED_SPEC, other_knobs(FED_SPEC, PAGE_DRAWN), DEFAULTS, chosen=params,
                               private=private, **widgets)
    seed = noise_mode_input("fed.seed", uploaded=is_upload(ds), container=st, in_form=True)
    if st.form_submit_button("Train", type="primary") or applied:
        close_sidebar_on_phone()  # on a phone the open sidebar would hide the result

if ds is None:
    stop_page()
upload_in_view(ds)  # the intro folded, one line on whose data this is
params |= {"rounds": rounds, "noise_multiplier": float(sigma) if private and by == "noise multiplier" else None}
cfg = run_guarded(page_config, data_arg(ds), mode, epsilon=float(eps), delta=float(delta), seed=seed or 0,
                  secure=seed is None, params=params)
if cfg is None:
    stop_page()
rounds_note = "" if rounds is not None else " " + rounds_caption(cfg, calibrated=private and by == "target ε")

chance = run_guarded(majority_accuracy, data_arg(ds), cfg.seed)
# answers by declared class shares: the chart reads balanced accuracy, as the tiles do, where one class scores 1/k
metric, line = ("balanced_accuracy", 1.0 / len(cfg.class_shares)) if cfg.class_shares else ("accuracy", chance)
metrics_slot = st.container()
bar = st.progress(0.0, text="Training …")
c1, c2 = headline_area().columns(2)
acc_slot, eps_slot = c1.empty(), c2.empty()
# the non-private reference first, its curve drawn as it grows: progress from the first round, not an empty chart
ref = run_guarded(cached_fedavg, data_arg(ds), non_private_twin(cfg), on_epoch=live_callback(
    bar, acc_slot, eps_slot, rounds=cfg.rounds, reference=None, private=private, chance=line,
    of_reference=True, metric=metric)) if private else None
if private and ref is None:  # refused (the error is shown): the private run would be refused again, said twice
    bar.empty()  # no "Training …" bar left standing above the refusal
    stop_page()
if ref is not None:
    draw_reference(acc_slot, ref.history, rounds=cfg.rounds, chance=line, metric=metric)
res = run_guarded(cached_fedavg, data_arg(ds), cfg, on_epoch=live_callback(
    bar, acc_slot, eps_slot, rounds=cfg.rounds, reference=None if ref is None else ref.history, private=private,
    chance=line, metric=metric))
bar.empty()
if res is None:
    stop_page()
used_slot.caption(sigma_used_caption(res) + rounds_note)
a, e = rounds_figures(res.history, rounds=cfg.rounds, reference=None if ref is None else ref.history, private=private,
                      chance=line, metric=metric)
acc_slot.plotly_chart(a, width="stretch", key="fed.chart.acc")
eps_slot.plotly_chart(e, width="stretch", key="fed.chart.eps")

m = metrics_slot.columns(5)
by_shares = balanced_by_shares(data_arg(ds), cfg, res, ref)  # (private, non-private, 1/k) in balanced accuracy
if by_shares:  # answers by the declared class shares: the tiles read balanced accuracy, as on the Train page
    m[0].metric("Final balanced accuracy", f"{by_shares[0]:.3f}")
else:
    m[0].metric("Final test accuracy", f"{res.accuracy:.3f}")
m[1].metric("Non-private FedAvg", "—" if ref is None else f"{by_shares[1] if by_shares else ref.accuracy:.3f}",
            help=None if ref is None else f"The same clients and model trained without clipping or noise for the same "
                 f"{cfg.rounds} rounds: when the Rounds box is empty they follow ε, so this number moves with ε too, "
                 "though it spends none.")
m[2].metric("ε (user level)", "∞" if not private else format_epsilon(res.epsilon),
            help=f"δ = {res.delta:g}; {res.dp_event}")
m[3].metric("Noise multiplier σ", "—" if res.noise_multiplier is None else format_noise(res.noise_multiplier),
            help="No noise: FedAvg without privacy." if res.noise_multiplier is None else
                 ("The server adds Gaussian noise of std σ·S to the sum of the clipped updates (S the clip norm)"
                  if mode == "central" else
                  "Each client adds Gaussian noise of std σ·S to its own clipped update before sending it (S the "
                  "clip norm)")
                 + (", calibrated so the rounds cost the target ε." if by == "target ε" else ", as set."))
m[4].metric("Clients per round qN", f"{cfg.client_fraction * cfg.clients:.3g}",
            help="Expected number of clients sampled each round: the sampling rate q times the N clients.")
verdict_line(res.epsilon if private else float("inf"), container=metrics_slot, what="ε per client",
             delta=float(res.delta) if private else 0.0)
if by_shares:
    metrics_slot.markdown(f"**Chance level** (always the most common class): **{by_shares[2]:.3f}** in balanced "
                          f"accuracy, {chance:.3f} in accuracy. The tiles and the chart read balanced accuracy (each "
                          "class's share found right, averaged): answering by the declared class shares trades "
                          "accuracy on the common class for the rare ones.")
elif chance is not None:
    metrics_slot.markdown(f"**Chance level** (always the most common class): **{chance:.3f}**. Accuracy is the "
                          "fraction of test rows predicted correctly.")
notes = [weak_guarantee_note(res.epsilon, unit="per client") if private else None,
         shares_warning(cfg, by_shares[0], by_shares[2]) if by_shares else chance_warning(cfg, res.accuracy, chance),
         *federation_warnings(dataclasses.replace(cfg, noise_multiplier=res.noise_multiplier))]
for note in filter(None, notes):
    metrics_slot.warning(note)
if mode == "central":
    st.caption(f"Each round the server adds random Gaussian noise to the sum of the clipped updates, of standard "
               f"deviation σ·S = {format_noise(res.noise_multiplier * cfg.clip_norm)} in every parameter "
               f"(N(0, (σS)²)), and divides by the expected number of clients, "
               f"qN = {cfg.client_fraction * cfg.clients:.3g}; accounted as PoissonSampled(q, Gaussian(σ)) per round "
               "with dp_accounting, a client's whole data being the unit.")
elif mode == "local":
    st.caption("Local DP: each update is released to the server, so there is no amplification by sampling; two "
               "clipped updates differ by up to 2S, so ε composes Gaussian(σ/2) over the rounds of the busiest client.")
# a private federation is a release about the same people, of a client's whole data: its own total (never one of
# records), drawn here and again once the sweeps below are counted
record_release(data_key(ds), ("fedavg", cfg), res, page="Federated learning", source="the run",
               leaks_privacy=leaks_bounds(ds))
total_slot = st.empty()
show_data_total(ds, container=total_slot)
n_params = int(res.params.size)
if (gap := gap_caption(cfg, res.noise_multiplier, n_params, private_accuracy=res.accuracy,
                       nonprivate_accuracy=None if ref is None else ref.accuracy)) is not None:
    st.caption(gap)
st.caption(f"{res.seconds_per_round * 1000:.0f} ms per round, all sampled clients trained as one batched computation.")
show_table(res.history, key="fed.history", labels=HISTORY_LABELS,  # balanced accuracy where the chart reads it
           drop=("epoch", *DIAGNOSTIC_COLUMNS, *(() if cfg.class_shares else ("balanced_accuracy",))))
st.caption(step_caption(cfg, res.noise_multiplier, n_params))
with st.expander("Non-private diagnostics of the clients' updates (NOT covered by ε)", expanded=False):
    st.caption("Computed from the private run before noise: how many clients took part, the share clipped and the "
               "largest norm sent each round. They help choose S in this demo, but the ε above does not cover them "
               "(its amplification by sampling assumes who took part stays secret); a real deployment would not "
               "publish them.")
    show_table(res.history[["round", *DIAGNOSTIC_COLUMNS]], key="fed.diagnostics", labels=HISTORY_LABELS)

shown = min(cfg.clients, HEATMAP_CLIENTS)
with st.expander("Who holds what: class counts per client"
                 + ("" if shown == cfg.clients else f" (the first {shown} of {cfg.clients})"), expanded=cfg.non_iid):
    st.caption("How this simulation dealt the training rows out to its clients, to explain the run: exact counts "
               "of the data, NOT covered by ε. In a real federation each client's data stays with it and no one "
               "would publish them.")
    st.plotly_chart(clients_figure(res.client_label_counts, ds.target_names), width="stretch")

st.header("Accuracy against the clip norm and the noise level")
if not private:
    st.info("Choose DP-FedAvg or local DP to sweep the clip norm and the noise level.")
    stop_page()
b1, b2 = st.columns(2)
sweeps = {"clip_norm": (0.03, 0.1, 0.3, 1.0, 3.0, 10.0), "noise_multiplier": (0.1, 0.3, 0.5, 1.0, 2.0, 4.0)}
clicked = {ax: col.button(f"Sweep the {ax.replace('_', ' ')}", key=f"fed.sweep.{ax}")
           for ax, col in zip(sweeps, (b1, b2))}
sigma_limit = FED_SPEC.knob("noise_multiplier").high
for ax, values in sweeps.items():
    if ax == "clip_norm" and res.noise_multiplier is not None and res.noise_multiplier > sigma_limit:
        st.info(f"The clip-norm sweep keeps this run's σ = {format_noise(res.noise_multiplier)}, more than the "
                f"{sigma_limit:,.0f} a sweep accepts: an ε this small needs more noise than any model survives. "
                "Raise ε to sweep the clip norm.")
        continue
    sc = run_guarded(sweep_config, data_arg(ds), cfg, params, axis=ax, values=values, epsilon=float(eps),
                     noise_multiplier=res.noise_multiplier)
    if sc is None:
        continue
    done = remembered_sweep(sc)
    if clicked[ax] and done is None:
        live = st.empty()
        done = run_live(sc, n_jobs=1, scheduler=None, progress_slot=st.empty(), chart_slot=live,
                        metric="accuracy", log_x=True, band="minmax")
        live.empty()  # the finished chart is drawn below
    if done is not None:
        st.plotly_chart(sweep_figure(done.table, sc, metric="accuracy", log_x=True), width="stretch", key=f"fed.{ax}")
        show_frame(sweep_display(done.table, ax), key=f"fed.{ax}.table")
        record_releases(data_key(ds), ("sweep", sc.fingerprint()), sweep_releases(done.table),
                        page="Federated learning", source="the sweeps' points")
show_data_total(ds, container=total_slot)
