"""Tables: the first column stays in view while the rest scrolls, unless it is too long for a phone."""
from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest


def _tables():
    import pandas as pd

    from dpcore.ui.common import show_frame

    show_frame(pd.DataFrame({"Round": [1, 2], "Accuracy": [0.5, 0.6]}), key="short", wide_from=2)
    show_frame(pd.DataFrame({"Learner": ["DP-ERM, objective perturbation (Chaudhuri et al. Alg. 2)"], "ε": [1.0]}),
               key="long", wide_from=2)
    show_frame(pd.DataFrame({"ε claimed": ["0.5", "8", "∞ (no noise)"], "AUC": [0.5, 0.6, 1.0]}), key="ladder")


def test_a_short_first_column_is_pinned_and_a_column_of_long_names_is_not():
    at = AppTest.from_function(_tables).run()
    assert not at.exception
    short, long, _ = (json.loads(df.proto.columns) for df in at.dataframe)
    assert short["Round"]["pinned"]
    assert not long.get("Learner", {}).get("pinned")  # it would fill a 390 px screen, leaving the numbers no room
    cues = [m.value for m in at.markdown if "dp-scroll-cue" in m.value]
    assert "first column stays in place" in cues[0] and "first column" not in cues[1]  # the phone's cue is true


def test_a_pinned_first_column_is_as_wide_as_its_longest_cell():
    """The grid sized a pinned column by itself and cut the Attack page's ladder row to "∞ (no nois"; the helper
    now sets the width: at least 6.5 px a character of the longest cell (14 px Source Sans) and the cell's padding."""
    at = AppTest.from_function(_tables).run()
    short, _, ladder = (json.loads(df.proto.columns) for df in at.dataframe)
    assert ladder["ε claimed"]["pinned"]
    assert ladder["ε claimed"]["width"] >= 6.5 * len("∞ (no noise)") + 16
    assert short["Round"]["width"] >= 6.5 * len("Round") + 16
    assert ladder["ε claimed"]["width"] <= 180  # still leaves a phone room to scroll the numbers through


def _sweep_table():
    import pandas as pd

    from dpcore.ui.common import NOT_PRIVATE, show_frame

    show_frame(pd.DataFrame({"Model": ["DP-FedAvg", "FedAvg (non-private)"], "Test accuracy": [0.86, 0.89],
                             "ε": ["4", NOT_PRIVATE], "Noise multiplier σ": ["2.55", "—"]}), key="sweep")


def test_an_epsilon_column_holding_not_private_is_wide_enough_to_say_it():
    # the Federated page's clip-norm sweep table cut its ε column to "∞ (not pri"
    at = AppTest.from_function(_sweep_table).run()
    from dpcore.ui.common import NOT_PRIVATE, column_width

    columns = json.loads(at.dataframe[0].proto.columns)
    assert columns["ε"]["width"] >= column_width([NOT_PRIVATE])  # the pinned column's measure, checked there
    assert "width" not in columns.get("Test accuracy", {})  # the others keep the grid's own sizing


def _small_numbers():
    import pandas as pd

    from dpcore.ui.common import show_table

    show_table(pd.DataFrame({"Canary": [18, 16], "Non-private: probability": [0.994, 0.969],
                             "Private: probability": [0.00334, 1.49e-13], "Noise": [0.002, 10820.0]}), key="exposed")


def test_a_column_of_small_numbers_is_written_to_four_figures_not_cut_to_the_grids_four_decimals():
    # the Attack page's exposed faces canaries: 1.49e-13 under the picture read "0.0000000000001" in the table
    from dpcore.ui.common import SMALL_NUMBER_FORMAT

    at = AppTest.from_function(_small_numbers).run()
    assert not at.exception
    columns = json.loads(at.dataframe[0].proto.columns)
    assert SMALL_NUMBER_FORMAT == "%.4g"
    assert columns["Private: probability"]["type_config"]["format"] == SMALL_NUMBER_FORMAT
    assert "Non-private: probability" not in columns or "format" not in json.dumps(columns["Non-private: probability"])
    assert "format" not in json.dumps(columns.get("Noise", {}))  # 10,820 would read 1.082e+04


def _plain_tables():
    import pandas as pd

    from dpcore.ui.common import show_plain_table

    show_plain_table(pd.DataFrame({"model": ["Logistic regression on clean images (no privacy)"], "accuracy": [0.96],
                                   "epsilon": ["∞ (not private)"], "delta": [0.0], "seconds": [0.1],
                                   "labels_protected": [False]}), wide_from=4)
    show_plain_table(pd.DataFrame({"epoch": [1, 2], "test_loss": [2.2, 2.0]}))


def test_a_wide_plain_table_says_on_a_phone_that_it_scrolls_and_a_narrow_one_does_not():
    # the Noisy images comparison wrapped its words, yet its six columns ran past a 390 px screen with "Labels
    # protected" cut and no word that the table scrolls
    at = AppTest.from_function(_plain_tables).run()
    assert not at.exception
    assert len(at.table) == 2
    cues = [m.value for m in at.markdown if "dp-scroll-cue" in m.value]
    assert cues == ['<p class="dp-scroll-cue">⟷ This table scrolls sideways.</p>']  # the wide one's, once
