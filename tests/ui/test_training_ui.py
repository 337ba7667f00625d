"""The Train page's bridge (dpcore.ui.training): run keys, stored runs, history split and figures, units."""
from __future__ import annotations

import copy
import math

import numpy as np
import pandas as pd
import pytest

from dpcore.datasets import load_csv, load_dataset
from dpcore.exceptions import DPValueError, PrivacyLeakWarning
from dpcore.ui import palette, training, vega
from dpcore.ui.training import (
    DIAGNOSTIC_COLUMNS,
    confusion_figure,
    defaults_for,
    history_figure,
    run_key,
    shared_history_figure,
    split_history,
    train_with_baseline,
    worse_than_mean_note,
)


def _history(eps) -> pd.DataFrame:
    n = len(eps)
    return pd.DataFrame({"epoch": range(1, n + 1), "step": range(1, n + 1), "loss": np.linspace(1, 0.5, n),
                         "accuracy": np.linspace(0.5, 0.9, n), "epsilon": eps, "train_loss": np.linspace(1, 0.4, n)})


def _upload(data: bytes, name: str):
    with pytest.warns(PrivacyLeakWarning):  # bounds read from the data: expected for an upload
        return load_csv(data, label_column="label", name=name)


def test_defaults_for_a_tiny_dataset_says_what_to_do():
    tiny = _upload(b"a,b,label\n1,2,0\n3,4,1\n", "tiny.csv")
    with pytest.raises(DPValueError, match="only 2 rows.*more rows"):
        defaults_for(tiny)


def _panels(spec: dict) -> list[str]:
    return [p["title"]["text"] for p in spec["vconcat"]]


def _rows(spec: dict) -> list[dict]:
    return [r for values in spec["datasets"].values() for r in values]


def test_history_figure_drops_the_epsilon_panel_only_when_no_epsilon_is_finite():
    private = vega.spec(history_figure(_history([0.1, 0.2, 0.3])))
    assert _panels(private) == ["Test loss", "Test accuracy", "ε spent"]
    not_private = vega.spec(history_figure(_history([math.inf] * 3)))
    assert _panels(not_private) == ["Test loss", "Test accuracy"]
    assert not any("epsilon" in r for r in _rows(not_private))


def test_history_figure_draws_the_history_the_non_private_line_dashed_and_the_chance_line():
    spec = vega.spec(history_figure(_history([0.1, 0.2, 0.3]), chance=0.34, reference=0.912))
    drawn = [r for r in _rows(spec) if "epoch" in r]
    assert [r["accuracy"] for r in drawn] == pytest.approx([0.5, 0.7, 0.9])
    assert [r["epsilon"] for r in drawn] == pytest.approx([0.1, 0.2, 0.3])
    rules = {r["text"]: r["y"] for r in _rows(spec) if "text" in r}
    assert rules == {"non-private 0.912": 0.912, "chance 0.34": 0.34}
    accuracy = spec["vconcat"][1]["layer"]
    dashes = [layer["layer"][0]["mark"]["strokeDash"] for layer in accuracy[1:]]
    assert dashes == [vega.DASHES["dash"], vega.DASHES["dot"]]  # non-private dashed, chance dotted
    assert [layer["layer"][0]["mark"]["color"] for layer in accuracy[1:]] == [palette.BLACK, palette.GREY]
    # each panel's line in its own palette colour, dash and marker; the epoch named once, under the last panel
    looks = [(p["layer"][0]["mark"]["color"], str(p["layer"][0]["mark"]["strokeDash"]),
              p["layer"][0]["mark"]["point"]["shape"]) for p in spec["vconcat"]]
    assert len(set(looks)) == 3 and {c for c, _, _ in looks} <= set(palette.SERIES_COLOURS)
    assert [p["layer"][0]["encoding"]["x"]["title"] for p in spec["vconcat"]] == [None, None, "epoch"]
    assert [p["layer"][0]["encoding"]["y"]["title"] for p in spec["vconcat"]] == ["cross-entropy",
                                                                                  "accuracy (fraction)", "ε"]
    assert all(p["layer"][0]["encoding"]["tooltip"] for p in spec["vconcat"])  # hover gives each value


def test_history_figure_draws_the_budget_the_epsilon_spent_climbs_to_on_the_epsilon_panel_only():
    spec = vega.spec(history_figure(_history([0.25, 0.6, 1.0]), chance=0.1, reference=0.96, budget=1.0))
    eps_panel = spec["vconcat"][2]["layer"]
    assert len(eps_panel) == 2  # the ε spent and the budget's line
    rule = eps_panel[1]["layer"][0]
    assert rule["mark"]["type"] == "rule" and rule["mark"]["strokeDash"] == vega.DASHES["dot"]
    rules = {r["text"]: r["y"] for r in _rows(spec) if "text" in r}
    assert rules["budget ε = 1"] == 1.0
    assert len(spec["vconcat"][1]["layer"]) == 3  # the accuracy panel keeps its non-private and chance lines only
    # no budget, no line; nor without an ε panel
    assert len(vega.spec(history_figure(_history([0.25, 0.6, 1.0])))["vconcat"][2]["layer"]) == 1
    assert not any("budget" in str(r.get("text", "")) for r in _rows(vega.spec(history_figure(
        _history([math.inf] * 3), budget=1.0))))


def test_a_run_is_held_to_the_epsilon_asked_only_when_it_spent_no_more_than_that():
    assert training.held_budget(1.0, 1.0) == 1.0 and training.held_budget(2.0, 0.4) == 2.0
    assert training.held_budget(1.0, 1.0 + 1e-9) == 1.0  # the calibration's rounding
    assert training.held_budget(0.5, 125.0) is None  # ε per released answer: 250 answers spent 125
    assert training.held_budget(None, 3.1) is None  # σ set directly: ε is the outcome, not a budget
    assert training.held_budget(1.0, math.inf) is None


def test_a_dpsgd_run_reports_the_budget_it_was_calibrated_to_and_a_sigma_set_directly_none():
    data = load_dataset("breast_cancer")
    held = train_with_baseline(data, "dpsgd", {"epochs": 2}, epsilon=1.0, delta=1e-5, seed=0)
    assert held["budget"] == 1.0 and held["epsilon"] <= 1.0 + 1e-6
    direct = train_with_baseline(data, "dpsgd", {"epochs": 2, "noise_multiplier": 10.0}, epsilon=1.0, delta=1e-5,
                                 seed=0)
    assert direct["budget"] is None


def test_visitors_showing_the_same_history_share_one_figure_and_a_different_history_or_chance_gets_its_own():
    first = shared_history_figure(_history([0.1, 0.2, 0.3]), chance=0.1)
    assert shared_history_figure(_history([0.1, 0.2, 0.3]), chance=0.1) is first  # another session, same run
    assert shared_history_figure(_history([0.1, 0.2, 0.4]), chance=0.1) is not first
    assert shared_history_figure(_history([0.1, 0.2, 0.3]), chance=0.2) is not first
    assert shared_history_figure(_history([0.1, 0.2, 0.3])) is not first  # no chance line
    assert first == vega.spec(history_figure(_history([0.1, 0.2, 0.3]), chance=0.1))


def test_drawing_the_shared_history_spec_leaves_it_as_it_was_for_the_next_session(monkeypatch):
    from streamlit.elements import vega_charts

    shared = shared_history_figure(_history([0.1, 0.2, 0.3]), chance=0.1, reference=0.8)
    before = copy.deepcopy(shared)
    sent = []

    def draw(spec, **kwargs):  # what st.vega_lite_chart does to the spec before sending it
        spec = vega_charts._prepare_vega_lite_spec(spec, True)
        vega_charts._marshall_chart_data(vega_charts.VegaLiteChartProto(), spec)
        sent.append(spec)

    monkeypatch.setattr(vega.st, "vega_lite_chart", draw)
    vega.show(shared)
    assert sent and "datasets" not in sent[0]  # the data went to the message, out of the drawn copy
    assert shared == before


def test_live_progress_redraws_the_history_so_far_as_vega_lite(monkeypatch):
    drawn = []
    monkeypatch.setattr(training.vega, "show", lambda chart, container=None, **kw: drawn.append((chart, kw)))
    monkeypatch.setattr(training, "Every", lambda base: (lambda last=False: True))  # every event is due
    live = training.LiveProgress("DP-SGD")
    for epoch in (1, 2):
        live({"epoch": epoch, "epochs": 3, "step": epoch, "loss": 1.0 / epoch, "accuracy": 0.4 * epoch,
              "epsilon": 0.5 * epoch})
    chart, kw = drawn[-1]
    assert kw["key"] == "train.live.2" and kw["alt_text"]
    assert [r["accuracy"] for r in _rows(chart) if "epoch" in r] == pytest.approx([0.4, 0.8])
    assert _panels(chart) == ["Test loss", "Test accuracy", "ε spent"]
    # the last epoch's chart is not drawn live (the finished run's chart replaces it), its progress is
    bars = []
    monkeypatch.setattr(live.bar, "progress", lambda frac, text: bars.append((frac, text)))
    live({"epoch": 3, "epochs": 3, "step": 3, "loss": 0.3, "accuracy": 0.9, "epsilon": 1.5})
    assert len(drawn) == 2 and bars == [(1.0, "DP-SGD: epoch 3/3, ε spent 1.5")]  # up at 4 figures, as the tiles


def _training_beside_the_stage():
    import streamlit as st

    from dpcore.ui.training import LiveProgress

    left, right = st.columns(2)
    live = LiveProgress("DP-SGD", right if st.session_state.get("stage") else None)
    live.done()
    right.markdown("the finished chart")


def test_live_progress_on_the_stage_goes_where_the_chart_ends_and_leaves_no_done_bar_above_it():
    from streamlit.testing.v1 import AppTest

    presenting = AppTest.from_function(_training_beside_the_stage)
    presenting.session_state["stage"] = True
    presenting.run()
    assert not presenting.exception
    assert not presenting.get("progress")  # cleared: the finished chart takes the stage's column alone
    page = AppTest.from_function(_training_beside_the_stage).run()
    assert [(bar.proto.value, bar.proto.text) for bar in page.get("progress")] == [(100, "DP-SGD: done")]


def test_confusion_figure_has_a_cell_per_pair_of_classes_in_the_datas_order():
    cm = pd.DataFrame([[5, 1], [2, 7]], index=["zebra", "ant"], columns=["zebra", "ant"])
    spec = vega.spec(confusion_figure(cm))
    assert sorted((r["true"], r["predicted"], r["rows"]) for r in _rows(spec)) == [
        ("ant", "ant", 7), ("ant", "zebra", 2), ("zebra", "ant", 1), ("zebra", "zebra", 5)]
    heat = spec["layer"][0]["encoding"]
    assert heat["x"]["sort"] == heat["y"]["sort"] == ["zebra", "ant"]  # not alphabetical
    assert heat["color"]["title"] == "test rows"
    assert palette.colour_clashes(spec) == [] and palette.legend_problems(spec) == []


def test_the_confusion_counts_grow_with_their_cells_for_a_projector_and_shrink_for_a_phone():
    # a fixed 12 px count was small on a projector's 90 px cells and ran over its neighbours on a phone's 21 px ones
    cm = pd.DataFrame([[119, 1], [2, 7]])
    size = vega.spec(confusion_figure(cm))["layer"][1]["mark"]["fontSize"]
    assert size == {"expr": "clamp(bandwidth('x') / 2, 9, 15)"}  # the x scale's band: one cell's width


def test_split_history_moves_training_row_columns_to_the_diagnostics():
    main, diag = split_history(_history([0.1, 0.2]))
    assert not set(DIAGNOSTIC_COLUMNS) & set(main.columns)
    assert list(diag.columns) == ["epoch", "train_loss"] and len(diag) == 2


def test_run_key_ignores_epsilon_only_when_sigma_is_set_directly():
    ds = load_dataset("iris")
    direct = {"noise_multiplier": 2.0, "epochs": 3}
    assert run_key(ds, "dpsgd", direct, 1.0, 1e-5, 0) == run_key(ds, "dpsgd", direct, 5.0, 1e-5, 0)
    derived = {"epochs": 3}
    assert run_key(ds, "dpsgd", derived, 1.0, 1e-5, 0) != run_key(ds, "dpsgd", derived, 5.0, 1e-5, 0)


def test_run_key_tells_apart_two_uploads_with_the_same_name_and_size():
    a = _upload(b"a,b,label\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n", "data.csv")
    b = _upload(b"a,b,label\n1,2,0\n3,4,1\n5,6,1\n7,8,0\n", "data.csv")
    assert run_key(a, "dpsgd", {}, 1.0, 1e-5, 0) != run_key(b, "dpsgd", {}, 1.0, 1e-5, 0)
    assert run_key(a, "dpsgd", {}, 1.0, 1e-5, 0) == run_key(a, "dpsgd", {}, 1.0, 1e-5, 0)


def test_run_key_tells_apart_one_upload_read_with_other_declared_bounds():
    # the Train page showed the result of *=0:3000 for the file's own bounds: the key held the values only
    text = b"a,b,label\n" + b"".join(f"{i},{i % 7},{i % 2}\n".encode() for i in range(40))
    with pytest.warns(PrivacyLeakWarning):
        read = load_csv(text, label_column="label", name="data.csv")
    wide = load_csv(text, label_column="label", name="data.csv", bounds="*=0:3000")
    wider = load_csv(text, label_column="label", name="data.csv", bounds="a=0:3000, b=0:3001")
    keys = {run_key(ds, "dpsgd", {}, 1.0, 1e-5, 0) for ds in (read, wide, wider)}
    assert len(keys) == 3


def test_remember_keeps_the_newest_few():
    from dpcore.ui.common import remember

    store: dict = {}
    for i in range(5):
        remember(store, (i,), {"i": i}, max_kept=3)
    assert list(store) == [(2,), (3,), (4,)]
    remember(store, (2,), {"i": 2}, max_kept=3)  # stored again: now the newest
    assert list(store) == [(3,), (4,), (2,)]


def test_worse_than_mean_note_only_when_the_private_mse_is_above_the_mean_predictor():
    out = {"task": "regression", "metrics": {"mse": 9000.0}, "trivial": {"mse": 5700.0}, "n_train": 332}
    assert "worse than predicting the training mean" in worse_than_mean_note(out)
    assert worse_than_mean_note({**out, "metrics": {"mse": 3000.0}}) is None
    assert worse_than_mean_note({"task": "classification", "metrics": {"accuracy": 0.1}}) is None


def test_regression_live_progress_reports_mse_in_label_units_like_the_final_history():
    seen = []
    out = train_with_baseline(load_dataset("diabetes"), "dpsgd", {"epochs": 2}, epsilon=1.0, delta=1e-5, seed=0,
                              on_epoch=seen.append)
    hist = out["history"]
    assert [s["mse"] for s in seen] == pytest.approx(hist["mse"].tolist())
    assert (hist["mse"] > 100 * hist["loss"]).all()  # label units² (range ~ 300), not the scaled loss
    assert out["trivial"]["mse"] > 0 and -0.05 < out["trivial"]["r2"] <= 0.0


def _imbalanced_out(history: pd.DataFrame) -> dict:
    """A finished run on an 88/7/5 label answered by declared shares: accuracy below chance, balanced accuracy up."""
    return {"task": "classification", "chance": 0.871, "n_classes": 3, "history": history, "budget": 1.0,
            "metrics": {"accuracy": 0.73, "balanced_accuracy": 0.535, "rare_class_recall": 0.47},
            "baseline": {"accuracy": 0.462, "balanced_accuracy": 0.644, "rare_class_recall": 0.79}}


def test_where_the_tiles_read_balanced_accuracy_the_history_chart_and_its_lines_read_it_too():
    history = _history([0.1, 0.2, 0.3]).assign(balanced_accuracy=[0.33, 0.45, 0.535])
    out = _imbalanced_out(history)
    assert training.headline_metric(out) == "balanced_accuracy"
    assert training.reference_of(out) == pytest.approx(0.644)  # the tile's non-private 0.644, not accuracy's 0.462
    spec = vega.spec(history_figure(history, chance=1 / 3, reference=training.reference_of(out), balanced=True))
    assert _panels(spec)[1] == "Test balanced accuracy"
    assert [r["balanced_accuracy"] for r in _rows(spec) if "epoch" in r] == pytest.approx([0.33, 0.45, 0.535])
    assert {r["text"] for r in _rows(spec) if "text" in r} >= {"non-private 0.644", "chance 0.33"}
    assert "**0.333** in balanced accuracy (1/3), 0.871 in accuracy" in training.chance_line(out)
    # a balanced label keeps accuracy everywhere
    even = {**out, "chance": 0.4}
    assert training.headline_metric(even) == "accuracy" and training.reference_of(even) == pytest.approx(0.462)
    assert _panels(vega.spec(history_figure(history, balanced=False)))[1] == "Test accuracy"


def test_a_private_model_no_better_than_one_class_is_not_called_close_to_its_twin_and_shares_are_suggested():
    # 90/10 readmissions, DP-SGD at ε 1 without shares: balanced accuracy 0.500 against 0.526; the page said
    # "within 2.6 points ... a larger ε buys little more" under a warning that said "try a larger epsilon"
    out = {"task": "classification", "chance": 0.899, "n_classes": 2, "extras": {},
           "metrics": {"accuracy": 0.899, "balanced_accuracy": 0.5, "rare_class_recall": 0.0},
           "baseline": {"accuracy": 0.9, "balanced_accuracy": 0.526, "rare_class_recall": 0.05}}
    note = training.learnt_nothing_note(out)
    assert "says nothing about what ε costs" in note and "Declared class shares" in note
    declared = {**out, "extras": {"decision_rule": "declared class shares"}}
    assert "Declared class shares" not in training.learnt_nothing_note(declared)
    assert training.learnt_nothing_note({**out, "metrics": {**out["metrics"], "balanced_accuracy": 0.58}}) is None
    assert training.learnt_nothing_note({**out, "chance": 0.6}) is None  # a balanced label: accuracy reads it


def test_every_visitors_run_with_a_noise_too_small_for_any_guarantee_carries_why_its_epsilon_is_infinite():
    """The server is one process for a class: the second visitor's run (another seed) carries the reason as the
    first did, in the result the page shows it from (a run shared or stored is shown without its live warnings)."""
    data = load_dataset("iris")
    for seed in (0, 1):
        out = train_with_baseline(data, "dpsgd", {"epochs": 3, "noise_multiplier": 1e-160}, epsilon=1.0, delta=1e-5,
                                  seed=seed)
        assert out["epsilon"] == math.inf
        assert [w for w in out["warnings"] if "reported as infinity" in w], seed


def test_visitors_showing_the_same_confusion_matrix_share_one_spec_and_another_matrix_or_class_names_get_their_own(
        monkeypatch):
    drawn = []
    monkeypatch.setattr(vega, "show", lambda spec, *a, **kw: drawn.append(spec))
    cm = pd.DataFrame([[5, 1], [2, 7]], index=["no", "yes"], columns=["no", "yes"])
    for frame in (cm, cm.copy(), cm.replace(7, 8), cm.rename(index={"yes": "oui"}, columns={"yes": "oui"})):
        training.show_confusion_chart(frame)
    assert drawn[1] is drawn[0]  # another session following the same run
    assert drawn[2] is not drawn[0] and drawn[3] is not drawn[0]
    assert drawn[0] == vega.spec(training.confusion_figure(cm))


def test_the_gap_under_the_accuracy_tiles_and_beside_the_chart_is_the_difference_of_the_numbers_shown():
    # MNIST 5k at ε 1, seed 0: 1138 and 1202 of 1250 test rows right, shown as 0.910 and 0.962; the tile said
    # "-0.051 vs non-private" and the presenting line "5.1 points lower", from the unrounded 0.9104 - 0.9616
    from streamlit.testing.v1 import AppTest

    def page():
        from dpcore.ui.training import show_headline

        show_headline({"task": "classification", "epsilon": 1.0, "delta": 1e-5, "noise_multiplier": 8.06,
                       "chance": 0.1, "n_classes": 10, "extras": {},
                       "metrics": {"accuracy": 0.9104}, "baseline": {"accuracy": 0.9616}}, "dpsgd")

    at = AppTest.from_function(page).run()
    assert not at.exception, at.exception
    tile = next(m for m in at.metric if m.label == "Test accuracy (private)")
    assert (tile.value, tile.delta) == ("0.910", "-0.052 vs non-private")
    out = {"task": "classification", "epsilon": 1.0, "metrics": {"accuracy": 0.9104},
           "baseline": {"accuracy": 0.9616}}
    assert "0.962 without privacy (5.2 points lower)" in training.result_beside_chart(out, "dpsgd")


def test_the_mse_gap_under_the_tiles_is_the_difference_of_the_two_mse_shown():
    # Diabetes at ε 1: tiles of 3356 and 2897 with "+459.1 vs non-private" under them (3356.4 - 2897.3)
    from streamlit.testing.v1 import AppTest

    def page():
        from dpcore.ui.training import show_headline

        show_headline({"task": "regression", "epsilon": 1.0, "delta": 1e-5, "noise_multiplier": 40.5, "extras": {},
                       "metrics": {"mse": 3356.4, "r2": 0.411}, "baseline": {"mse": 2897.3, "r2": 0.491},
                       "trivial": {"mse": 5709.0, "r2": -0.002}}, "dpsgd")

    at = AppTest.from_function(page).run()
    assert not at.exception, at.exception
    tile = next(m for m in at.metric if m.label == "Test MSE (private)")
    assert (tile.value, tile.delta) == ("3356", "+459 vs non-private")


def _chance_label(spec: dict) -> tuple[dict, dict]:
    """The accuracy panel's y scale and the mark naming its chance line."""
    accuracy = spec["vconcat"][1]["layer"]  # the curve, the non-private line, the chance line
    chance = accuracy[-1]["layer"]
    assert chance[0]["mark"]["strokeDash"] == vega.DASHES["dot"] and chance[1]["mark"]["type"] == "text"
    return accuracy[0]["encoding"]["y"]["scale"], chance[1]["mark"]


def test_the_chance_lines_name_goes_under_it_where_the_run_ends_near_chance_not_on_the_curves_last_points():
    # MNIST 5k at ε 0.05: the curve ended at 0.28 over a chance line at 0.10, and "chance 0.10", named above the line
    # at its right end, sat on the curve's last points
    near = _history([0.01, 0.02, 0.05]).assign(accuracy=[0.2, 0.25, 0.28])
    scale, label = _chance_label(vega.spec(history_figure(near, chance=0.1, reference=0.962, budget=0.05)))
    assert label["baseline"] == "top" and label["dy"] > 0  # under its line
    low, high = scale["domain"]
    assert high == 1.0 and low < 0.1 - 0.25 * (1.0 - 0.1)  # room under the line for its name
    # the lesson's ε 1: the curve ends far above chance, and the chart is drawn as before
    far = _history([0.3, 0.6, 1.0]).assign(accuracy=[0.52, 0.86, 0.91])
    scale, label = _chance_label(vega.spec(history_figure(far, chance=0.1, reference=0.962, budget=1.0)))
    assert label["baseline"] == "bottom" and "domain" not in scale


def test_the_private_curve_is_named_at_its_end_with_the_score_its_tile_writes():
    # the lesson's Train stop points at the private curve against the dashed non-private line: the line was named
    # ("non-private 0.962"), the curve a few pixels under it was not
    def named(spec):
        texts = [layer for layer in spec["vconcat"][1]["layer"][1:] if layer.get("mark", {}).get("type") == "text"]
        (layer,) = texts
        rows = spec["datasets"][layer["data"]["name"]]
        return rows[0]["text"], rows[0]["y"], layer["mark"]["baseline"]

    far = _history([0.3, 0.6, 1.0]).assign(accuracy=[0.52, 0.86, 0.9104])
    text, y, baseline = named(vega.spec(history_figure(far, chance=0.1, reference=0.962, budget=1.0, final=0.9104)))
    assert (text, y, baseline) == ("private 0.910", 0.9104, "top")  # under the curve's end, as the tile writes it
    near = _history([0.01, 0.02, 0.05]).assign(accuracy=[0.2, 0.25, 0.279])
    assert named(vega.spec(history_figure(near, chance=0.1, reference=0.962, final=0.279)))[2] == "bottom"  # above
    plain = vega.spec(history_figure(far, chance=0.1, reference=0.962))  # no final score (the live chart): no name
    assert not [layer for layer in plain["vconcat"][1]["layer"][1:] if layer.get("mark", {}).get("type") == "text"]
    # output perturbation: the curve is its network before the noise on its answers (0.96), the tile the answers'
    # (0.17): the curve is not named after a score it does not reach
    other = vega.spec(history_figure(far.assign(accuracy=[0.92, 0.95, 0.962]), chance=0.1, reference=0.962,
                                     final=0.168))
    assert not [layer for layer in other["vconcat"][1]["layer"][1:] if layer.get("mark", {}).get("type") == "text"]


@pytest.mark.parametrize("algorithm, delta, caveat", [("dpsgd", 1e-5, True), ("erm-objective", 0.0, False)])
def test_a_runs_verdict_names_the_additive_delta_only_for_an_epsilon_delta_guarantee(
        algorithm, delta, caveat):
    """e^ε bounds an attacker's odds exactly for pure ε-DP only; under (ε, δ) every outcome's probability is bounded
    by e^ε times its neighbour's plus δ (Dwork & Roth 2014, Definition 2.4). The run's own verdict said the bare
    odds for a DP-SGD run."""
    from streamlit.testing.v1 import AppTest

    def page(algorithm, delta):
        from dpcore.ui.training import show_headline

        show_headline({"task": "classification", "epsilon": 1.0, "delta": delta, "noise_multiplier": None,
                       "chance": 0.5, "n_classes": 2, "extras": {},
                       "metrics": {"accuracy": 0.90}, "baseline": {"accuracy": 0.95}}, algorithm)

    at = AppTest.from_function(page, kwargs={"algorithm": algorithm, "delta": delta}).run()
    assert not at.exception, at.exception
    verdict = next(m.value for m in at.markdown if "odds" in m.value)
    assert ("up to an additive δ = 1e-05" in verdict) == caveat
