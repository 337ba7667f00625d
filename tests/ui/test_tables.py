"""The one display form of results tables (dpcore.ui.common.readable_table)."""
import math

import numpy as np
import pandas as pd

from dpcore.ui.common import DASH, NOT_PRIVATE, format_epsilon, format_number, readable_table


def test_format_number_and_epsilon():
    assert format_number(0.123456) == "0.123" and format_number(123456.0, 2) == "1.2e+05"
    assert format_number(None) == DASH and format_number(math.nan) == DASH and format_number(-math.inf) == DASH
    assert format_number(True) == "yes" and format_number(np.bool_(False)) == "no" and format_number("abc") == "abc"
    assert format_epsilon(math.inf) == NOT_PRIVATE and format_epsilon(np.float64("inf")) == NOT_PRIVATE
    assert format_epsilon(2.0) == "2" and format_epsilon(None) == DASH and format_epsilon(math.nan) == DASH


def test_readable_table_headers_numbers_and_infinite_epsilon():
    df = pd.DataFrame({"epsilon": [math.inf, 1.23456], "test_loss": [0.123456789, 2.0], "seconds": [math.inf, 0.5],
                       "labels_protected": [False, True], "kind": ["x", "y"], "round": [1, 2]})
    out = readable_table(df, labels={"test_loss": "test loss"}, drop=("kind",))
    assert list(out.columns) == ["ε", "Test loss", "Seconds", "Labels protected", "Round"]
    assert list(out["ε"]) == [NOT_PRIVATE, "1.235"]  # an infinite epsilon says what it means
    assert list(out["Seconds"]) == [DASH, "0.5"]  # other infinities are a dash, not "∞ (not private)"
    assert out["Test loss"].dtype.kind == "f" and out["Test loss"].iloc[0] == 0.1235  # finite: stays numeric
    assert list(out["Labels protected"]) == ["no", "yes"] and list(out["Round"]) == [1, 2]
    assert list(df.columns)[0] == "epsilon" and df["epsilon"].iloc[0] == math.inf  # the tidy frame is untouched


def test_readable_table_keeps_greek_headers_and_object_infinities():
    df = pd.DataFrame({"ε so far": [0.5, 1.0], "epsilon_spent": [math.inf, 0.3]}).astype({"epsilon_spent": object})
    out = readable_table(df, digits=3)
    assert list(out.columns) == ["ε so far", "Epsilon spent"]
    assert list(out["Epsilon spent"]) == [NOT_PRIVATE, "0.3"]  # one type per column for Arrow


def test_a_chart_warning_from_some_seeds_of_a_run_that_ignores_the_axis_says_how_many():
    from dpcore.ui.models import _RunWarnings

    said = _RunWarnings("ε", seeds=3)
    said.xs.add(None)
    said.found["weak"] = {None: {0}}  # a non-private run (drawn at every ε) warned on one seed of three
    assert said.messages() == ["In 1 of 3 seeds: weak"]
    said.found["weak"] = {None: {0, 1, 2}}
    assert said.messages() == ["weak"]


class _Recorder:
    """Stands in for a Streamlit container: records what ``table`` was given."""

    def table(self, data, **kwargs):
        self.data, self.kwargs = data, kwargs


def test_a_long_plain_table_scrolls_in_a_fixed_height_and_a_short_one_shows_whole():
    from dpcore.ui.common import PLAIN_TABLE_HEIGHT, PLAIN_TABLE_ROWS, show_plain_table

    short, long = _Recorder(), _Recorder()
    show_plain_table(pd.DataFrame({"epoch": range(1, PLAIN_TABLE_ROWS + 1)}), container=short)
    show_plain_table(pd.DataFrame({"epoch": range(1, 101), "test_loss": np.linspace(1, 0, 100)}), container=long)
    assert short.kwargs["height"] == "content" and len(short.data.data) == PLAIN_TABLE_ROWS  # 15 epochs: whole
    assert long.kwargs["height"] == PLAIN_TABLE_HEIGHT and len(long.data.data) == 100  # all rows, in a scroll box
    assert long.kwargs["hide_index"] is True and list(long.data.data.columns) == ["Epoch", "Test loss"]


def test_a_plain_table_writes_its_rounded_numbers_without_padding_zeros_and_keeps_them_numeric():
    from dpcore.ui.common import show_plain_table

    shown = _Recorder()
    show_plain_table(pd.DataFrame({"epoch": [1, 2, 3], "mse": [32171.4, 0.312249, 1.0], "epsilon": [1.0, 0.0831, 0]}),
                     container=shown)
    styled = shown.data  # a Styler: the browser shows its text, a test (and a copy) reads the numbers
    assert styled.data["Test MSE"].tolist() == [32170.0, 0.3122, 1.0]
    text = styled.to_html()
    assert ">32170<" in text and ">0.3122<" in text and ">1<" in text and ">0.0831<" in text and ">0<" in text
    assert "32170.0000" not in text and "1.0000" not in text


def test_a_plain_tables_numbers_are_kept_on_one_line():
    # the Noisy images comparison wrapped its headers to fit 1280 px, and its narrow δ column broke 1e-05 into "1e-"
    # over "05"; the words of its other columns still wrap
    from dpcore.ui.common import show_plain_table

    shown = _Recorder()
    show_plain_table(pd.DataFrame({"model": ["DP-SGD (central DP, trained on the clean images)"], "delta": [1e-5]}),
                     container=shown)
    rules = {r["selector"]: r["props"] for r in shown.data.table_styles}
    # the paragraph inside each of the δ column's cells (Streamlit sets the paragraph's own white-space); the model's
    # name may wrap
    assert rules == {"td.col1 p": [("white-space", "nowrap")]}, rules


def test_an_epsilon_of_thousands_is_written_with_separators_not_e_notation():
    from dpcore.images.sets import load_image_set
    from dpcore.ui.images import whole_image_note

    assert format_epsilon(9834.2) == "9,840" and format_epsilon(384000.0) == "384,000"  # rounded up
    assert format_epsilon(999.4) == "1,000" and format_epsilon(998.2) == "999"
    assert format_epsilon(0.5) == "0.5" and format_epsilon(True) == "yes"
    # Noisy images' sidebar: a 160×240 photograph at ε = 10 per pixel was "protected only at ε 3.84e+05"
    photos = load_image_set("photos", max_side=240)
    h, w = photos.image_shape[:2]
    note = whole_image_note(["laplace-pixel"], 10.0, 1e-5, photos, cell=8, m=1)
    assert f"ε {h * w * 10:,}" in note and "e+0" not in note  # h·w·ε, here 384,000


def test_the_sweep_summary_names_every_swept_axis_by_a_short_header_with_its_symbol():
    # the axes' full labels ("Noise multiplier σ (noise std / C)") widened the summary past a laptop's width and cut
    # off its last column, "ε spent"; the chart's axis title keeps the full label
    import pandas as pd

    from dpcore.sweep import AXES
    from dpcore.ui.sweep import display_summary

    summ = pd.DataFrame({"learner": ["dpsgd"], "role": ["swept"], "value": [1.0], "mean": [0.9], "std": [0.01],
                         "min": [0.89], "max": [0.91], "n": [3], "epsilon_spent": [1.0]})
    for name, axis in AXES.items():
        header = display_summary(summ, metric="accuracy", axis=name).columns[2]
        assert len(header) <= len("Share of training set"), (name, header)
        assert axis.symbol is None or header.endswith(axis.symbol), (name, header)


def test_the_runs_table_says_what_each_runs_epsilon_protects_when_the_runs_differ():
    """A sweep of DP-SGD, label DP and DP-FedAvg: the runs table names each run's unit ("Protects") and a federation's
    neighbour as a client; a sweep of whole records only has no such column."""
    from dpcore.ui.sweep import display_runs

    t = pd.DataFrame({"learner": ["dpsgd", "label-dp-rr", "dp-fedavg", "non-private"],
                      "role": ["swept", "swept", "swept", "baseline"], "value": [1.0, 1.0, 1.0, float("nan")],
                      "seed": [0, 0, 0, 0], "accuracy": [0.9, 0.8, 0.85, 0.95], "epsilon": [1.0, 1.0, 1.0, math.inf],
                      "epsilon_target": [1.0, 1.0, 1.0, float("nan")], "delta": [1e-5, 0.0, 1e-5, 0.0],
                      "neighbouring": ["add-remove", "replace-one", "add-remove", ""],
                      "unit": ["records", "labels", "clients", "records"], "noise_multiplier": [1.0] * 4,
                      "seconds": [0.1] * 4, "cached": [False] * 4})
    out = display_runs(t, axis="epsilon")
    assert out["Protects"].tolist()[:3] == ["each record", "each record's label", "each client's whole data"]
    assert out["Neighbours"].tolist()[:3] == ["one record added or removed", "one record replaced by another",
                                             "one client added or removed"]
    assert "Protects" not in display_runs(t[t.unit == "records"], axis="epsilon")
