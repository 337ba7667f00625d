"""Attack the model: membership inference and privacy audits beside the epsilon a learner claims."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import numpy as np
import streamlit as st

from dpcore.audit import DEFAULT_POOL_SIZE, DEFAULT_SHADOWS, POOL_SIZES, pool_capacity
from dpcore.audit.canaries import DEFAULT_CANARIES, input_canary_capacity
from dpcore.audit.run import DEFAULT_ATTACK, STORY_CANARIES, contrast_learner, story_canaries, too_few_rows
from dpcore.defaults import LEARNER
from dpcore.learners import get_learner
from dpcore.ui import (
    applied_epsilon_input,
    close_sidebar_on_phone,
    dataset_picker,
    delta_input,
    noise_mode_input,
    page_header,
    run_guarded,
    show_plain_table,
    verdict_line,
)
from dpcore.ui.advisor import load_warnings_of, warnings_notice
from dpcore.ui.audit import (
    ATTACK_LABELS,
    ATTACK_NOTES,
    CAUGHT_AT_1,
    NETWORK_CHOICES,
    AuditProgress,
    attack_question,
    attack_report_button,
    audit_release,
    balanced_accuracy_metric,
    cached_audit,
    cached_theory,
    chance_accuracy,
    guessing_reach,
    level,
    model_accuracy_metric,
    private_learners,
    proven_beside_chart,
    rate_with_interval,
    results_table,
    roc_figure,
    shares_reading,
    show_exposed,
    show_ladder,
    twin_reading,
)
from dpcore.ui.common import format_epsilon
from dpcore.ui.ledger import record_release, show_data_total
from dpcore.ui.links import stop_page
from dpcore.ui.present import control_area, headline_area, presenting_stage, settings_fold
from dpcore.ui.uploads import data_arg, data_key, is_upload, leaks_bounds, upload_in_view

page_header(
    "Attack the model",
    "What does ε buy? Train a model for real, then attack it as an adversary would: can it tell the records the "
    "model was trained on from records it never saw? Differential privacy caps how well any attack can do; the "
    "attack's success in turn proves a lower bound on the true ε of the training that made it. A lower bound only: "
    "an attack that proves little does not show that the model is private.",
)

with control_area(st.sidebar).form("audit.form"):
    # ε first (beside the chart when presenting), with a button of its own: the form's last one is a screen or two
    # down at 1280×720, and the lesson's Attack stop asks the room to change ε and attack again
    key_slot = st.container()
    with settings_fold("Target and attack settings"):  # presenting: folded, the numbers a screen higher
        st.header("Target")
        said: list = []  # every warning, for the report too
        ds = dataset_picker("audit.dataset", default="mnist5k", container=st, in_form=True, warnings_into=said)
        names = private_learners(ds.task, ds.is_image) if ds is not None else ["dpsgd"]
        learner = st.selectbox("Private learner", names, index=names.index(LEARNER) if LEARNER in names else 0,
                               format_func=lambda n: get_learner(n).title, key="audit.learner")
        network = st.radio("Network", list(NETWORK_CHOICES), format_func=NETWORK_CHOICES.get, key="audit.network",
                           help="For the network learners only. A flexible network memorises more, so the non-private "
                                "one leaks more; the preset is what the Train page uses.")
        epsilon, applied = applied_epsilon_input("audit.eps", button="Train and attack at this ε",
                                                 button_key="audit.apply", container=key_slot, in_form=True,
                                             delta_key="audit.delta")
        delta = delta_input("audit.delta", container=st)
        st.header("Attack")
        attack = st.radio("Attack", list(ATTACK_LABELS), index=list(ATTACK_LABELS).index(DEFAULT_ATTACK),
                          format_func=ATTACK_LABELS.get, key="audit.attack")
        pool = st.select_slider("Records in the attacker's pool (half are members)", POOL_SIZES,
                                value=DEFAULT_POOL_SIZE, key="audit.pool", help="Membership attacks only. Fewer "
                                "records: the model memorises more, and a private model learns less.")
        shadows = st.select_slider("Shadow models (LiRA)", [4, 8, 16, 32], value=DEFAULT_SHADOWS,
                                  key="audit.shadows")
        canaries = st.select_slider("Canaries (one-run audit)", [100, 200, 500, 1000, 2000], value=DEFAULT_CANARIES,
                                    key="audit.canaries", help="The one-run audit only; the mislabelled canaries "
                                    f"number {STORY_CANARIES}, or 40% of the held-out rows where fewer.")
        seed = noise_mode_input("audit.seed", uploaded=is_upload(ds), container=st, in_form=True)
    if st.form_submit_button("Train and attack", type="primary") or applied:
        close_sidebar_on_phone()  # on a phone the open sidebar would hide the result

if ds is None:
    stop_page()
warnings_notice(None, load_warnings_of(said))  # the file's, folded into one notice, leaks first
upload_in_view(ds, bounds_note=False)  # the intro folded, one line on whose data this is (its leaks: above)
st.markdown(ATTACK_NOTES[attack])
spec = get_learner(learner)
params = (("model", "mlp"), ("hidden", 256)) if network == "mlp" and spec.family == "network" else ()
pool_size = int(pool) if attack in ("loss", "lira") else None
training_rows = pool_capacity(ds)
if pool_size is not None and pool_size >= training_rows:
    st.info(f"{ds.title} has {training_rows:,} training rows, fewer than the {pool_size:,} asked for the attacker's "
            f"pool: the pool holds all {training_rows:,} (about half of them members), so larger pools give the "
            "same run.")
    pool_size = training_rows  # one result for every larger choice
# input canaries are mislabelled test rows (a quarter of the data): no more of them than there are
white_box = attack == "one-run" and spec.canary_kind == "gradient"  # canaries in the noisy gradient steps
canary_count = (int(min(canaries, input_canary_capacity(ds))) if attack == "one-run" and not white_box
                else story_canaries(ds) if attack == "canaries" else int(canaries))
# data too small for the chosen attack, said in the page's words (the library's message names settings this page
# chooses itself), with what would work instead
if (too_small := too_few_rows(ds, attack=attack, gradient_canaries=white_box)) is not None:
    st.error(f"Too few rows for this attack: {ds.title}: {too_small}. Use a larger file or a registered dataset"
             + ("; the one-run audit of DP-SGD (gradient canaries) needs no rows of its own." if spec.canary_kind ==
                "gradient" else "."))
    stop_page()
if attack == "one-run" and not white_box and canary_count < int(canaries):
    st.info(f"{int(canaries):,} canaries asked, {canary_count:,} used: each canary is one of {ds.title}'s test "
            f"rows with a wrong label, and it has {canary_count:,} test rows.")
runs = {f"{get_learner(learner).title}, ε = {epsilon:g}": (learner, epsilon, params)}
contrast = contrast_learner(learner)
if contrast is not None and not white_box:
    title = get_learner(contrast).title
    if attack == "canaries" and get_learner(contrast).family == "network":  # trained as without privacy: wide
        # and fit to its rows (dpcore.audit.run.leaky_network_params)
        runs["Non-private network (fit to its rows)"] = (contrast, epsilon, ())
    else:
        runs[title if "non-private" in title.lower() else f"{title} (no privacy)"] = (contrast, epsilon, params)

audits = {}
for label, (name, eps, knobs) in runs.items():
    progress = AuditProgress(label, headline_area())  # presenting: on the stage, where the ROC chart comes
    audit = run_guarded(cached_audit, name, data_arg(ds), epsilon=float(eps), delta=float(delta), attack=attack,
                        said=said, params=knobs, shadows=int(shadows), canaries=canary_count, pool_size=pool_size,
                        seed=seed, progress=progress, quiet=bool(audits))
    progress.done()
    if audit is None:
        stop_page()
    audits[label] = audit

private_label = next(iter(audits))
main = audits[private_label]
claim = main.result.epsilon
accuracy = {k: getattr(a, "target_accuracy", getattr(a, "accuracy", None)) for k, a in audits.items()}
c = st.columns([0.8, 0.9, 1.1, 1.5, 1])  # the widest for the rate caught: its label whole at 1280 px
note = main.result.claim_note  # the run's ε is about other neighbours than the attack's question: no claim
c[0].metric("ε claimed", format_epsilon(claim) if not note else "∞",  # the reason in the line under the numbers
            help="The ε the learner's accountant certifies for this run." if not note else
                 f"No claim for what this attack tests: {note}.")
sure = level(main.result.confidence)  # "95%": the level the bound and the intervals below are read at
c[1].metric(f"ε proven ({sure})", format_epsilon(main.result.epsilon_lower_bound, lower_bound=True),  # rounded down
            help=f"The true ε of the training that made this model is at least this, with {sure} confidence "
                 f"(Steinke et al. 2023 for one training run). A correct training's bound passes its claim only by "
                 f"the {level(1 - main.result.confidence)} chance the confidence allows; a bound above the claim "
                 "again on another seed means the implementation is broken.")
twin = next((a for k, a in audits.items() if k != private_label), None)
if twin is not None:  # the contrast on the first screen: the same attack on the model trained without privacy
    c[2].metric("ε proven, no privacy", format_epsilon(twin.result.epsilon_lower_bound, lower_bound=True),
                help=f"The same attack on {list(audits)[-1]}: the ε its success proves ({sure}). The table below has "
                     "each model's AUC and rates.")
else:
    c[2].metric("Attack AUC", f"{main.result.auc:.3f}", help="0.5 is guessing; 1 is a perfect attack.")
caught = main.result.tpr_measured("0.01")
interval = rate_with_interval(main.result, "0.01")[1]
c[3].metric(CAUGHT_AT_1, "—" if caught is None else f"{caught:.1%}",
            delta=guessing_reach(main.result), delta_color="off", delta_arrow="off",
            help="Of the records the model was trained on (members), the share the attacker names while wrongly "
                 "naming only 1 in 100 of the records it never saw (false alarms); experts call it the true positive "
                 "rate (TPR) at a 1% false positive rate (FPR). Guessing catches 1% on average and, on these "
                 f"records, at most the rate in grey under the number ({sure})."
                 + ("" if caught is None else f" {sure} interval: {interval}; a rate within it is a tie.")
                 + ("" if caught is not None else f" Not measurable here: {main.result.n_nonmembers} non-members, "
                    "fewer than 100."))
if by_shares := shares_reading(audits, ds):  # answers by the declared class shares: read in balanced accuracy
    utility = balanced_accuracy_metric(c[4], by_shares[0], private_label, chance=by_shares[1])
else:
    utility = model_accuracy_metric(c[4], accuracy, private_label, chance=chance_accuracy(ds),
                                    unseen=main.result.n_nonmembers if attack in ("loss", "lira") else None)
if note:
    st.markdown(f"**No claim to test here:** this attack asks whether a record was in the training set, and {note}.")
else:
    verdict_line(float(claim), what="ε claimed", delta=float(main.result.delta))
proven = main.result.epsilon_lower_bound
st.markdown("**The attack-based reading:** " + (
    f"this attack proves that the run leaks at least ε = {format_epsilon(proven, lower_bound=True)} ({sure} "
    "confidence), "
    + (f"against the {format_epsilon(claim)} claimed: the attacker gets that far, the guarantee covers the rest."
       if not note else "with no claim about this question to hold it against.") if proven > 0 else
    "this attack could not prove any leak (its lower bound on ε is 0): it did no better than guessing on this run.")
    + (" " + utility if utility else "") + twin_reading(audits, private_label))

fpr = tuple(np.logspace(-3, 0, 80))
region, exact = cached_theory(float(claim), float(main.result.delta), main.event, repr(main.event), fpr)
roc = roc_figure({k: a.result for k, a in audits.items()}, epsilon=claim, delta=main.result.delta, region=region,
                 exact=exact, fpr=fpr)
headline_area().plotly_chart(roc, key="audit.roc")
if presenting_stage():  # the metrics are below the stage's form: the lesson's proven ε, under the chart
    headline_area().markdown(proven_beside_chart(audits, private_label))
st.markdown(
    "Each curve is one attack's **ROC curve**: how many members it finds (up) for how many non-members it wrongly "
    "accuses (right), on log scales so the rare, confident hits show. **The shaded region** holds every attack's true "
    "rates under the claimed (ε, δ); the dotted line is the tighter limit of the exact noise this run added. The "
    "dashed diagonal is guessing. **AUC**, the area under a curve (on ordinary scales), sums an attack up in one "
    "number: 0.5 is guessing, 1 tells every member from every non-member. A curve is measured on "
    f"{main.result.n_members:,} members and {main.result.n_nonmembers:,} non-members, so at the smallest "
    "false-alarm rates, a few records, it can step outside the region by chance even for a correct run; the "
    "proven ε above is the evidence, with that chance counted.")
# plain, its headers wrapping: as a grid its seven columns ran past a 1280 px projector's page and cut "Accuracy"
show_plain_table(results_table({k: (a, accuracy[k]) for k, a in audits.items()}), wide_from=4)
# the private model attacked was trained on the data for real: a release about the same people as every other run on
# it, in the session's total (drawn again once the ladder's runs are counted)
record_release(data_key(ds), ("audit", learner, float(epsilon), float(delta), attack, params, int(shadows),
                              canary_count, pool_size, seed), audit_release(main), page="Attack the model",
               source="the attacked model", leaks_privacy=leaks_bounds(ds))
total_slot = st.empty()
show_data_total(ds, container=total_slot)
attack_report_button(audits, ds, accuracy=accuracy, seed=seed, said=said, question=attack_question(
    learner=learner, attack=attack, epsilon=epsilon, delta=delta, pool=pool_size, shadows=int(shadows),
    canaries=canary_count, network=network))
if any(a.result.tpr_measured("0.01") is None for a in audits.values()):  # the table's rate at 1 % is a dash
    st.caption(f"A dash for the members caught: with {main.result.n_nonmembers:,} non-members, a false-alarm rate "
               f"below 1 in {main.result.n_nonmembers:,} cannot be measured (one false alarm is already more); "
               + ("more canaries measure it." if attack == "one-run" else
                  "a larger pool, on a larger dataset, measures it."))

show_exposed(audits, private_label, attack=attack, image_shape=ds.image_shape if ds.is_image else None,
             class_names=ds.target_names)
if spec.canary_kind == "gradient" or attack == "canaries":
    for claimed, rung in show_ladder(learner, data_arg(ds), delta=float(delta), seed=seed,
                                     same_attack_above=white_box) or ():
        record_release(data_key(ds), ("ladder", learner, float(delta), seed, claimed), audit_release(rung),
                       page="Attack the model", source="the ladder's rungs", leaks_privacy=leaks_bounds(ds))
    show_data_total(ds, container=total_slot)
st.caption("Seeded noise is for reproducible demonstrations; a real release uses secure noise (the switch in the "
           "sidebar): an attack measures the mechanism either way, and secure noise is what defeats the seed and the "
           "floating-point attacks besides.")
