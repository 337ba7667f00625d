"""A noise multiplier a run used is written rounded UP where a reader may give it back as --noise-multiplier or to
the Train page's "Set σ directly": rounded down, it would train with less noise, and spend more ε, than the run it
was read from (the `noise` command rounds its calibrated σ up for the same reason)."""
from __future__ import annotations

import pytest

from dpcore.accounting import dpsgd_epsilon


@pytest.mark.parametrize("sigma, shown", [(1.2345, "1.24"), (0.56401, "0.565"), (12.3401, "12.4"), (4.0, "4"),
                                          (0.0012341, "0.00124")])
def test_the_train_pages_sigma_tile_rounds_up_at_three_figures(sigma, shown):
    from dpcore.ui.training import noise_tile

    label, value, _ = noise_tile({"noise_multiplier": sigma, "extras": {}})
    assert label == "Noise multiplier σ" and value == shown and float(value) >= sigma


def test_the_train_commands_text_sigma_given_back_never_spends_more_than_the_run():
    from dpcore.cli.train import text_line

    sigma = 0.7000014  # :.6g would write 0.700001, less noise than the run had
    line = text_line("noise_multiplier", sigma)
    assert line == "noise_multiplier: 0.700002"
    back = float(line.split(": ")[1])
    run = dict(sample_rate=0.01, steps=1000, delta=1e-5, accountant="rdp")
    assert dpsgd_epsilon(noise_multiplier=back, **run) <= dpsgd_epsilon(noise_multiplier=sigma, **run)


def test_a_calibrated_noise_is_written_rounded_up_on_the_federated_and_pate_captions():
    """The pages offer "as set" beside "calibrated": the σ (or PATE's noise scale) a calibrated run shows is the one
    a visitor would set, so it rounds up (6.0312 reads 6.04, where :.3g wrote 6.03; 9834.2 reads 9,840)."""
    from types import SimpleNamespace

    from dpcore.ui.common import format_noise
    from dpcore.ui.federated import sigma_used_caption
    from dpcore.ui.pate import noise_used_caption

    fed = SimpleNamespace(config=SimpleNamespace(private=True, rounds=3, noise_multiplier=None, target_epsilon=1.0),
                          noise_multiplier=6.0312, epsilon=0.9999, delta=1e-5)
    assert "Used: σ = 6.04, calibrated" in sigma_used_caption(fed)
    pate = SimpleNamespace(config=SimpleNamespace(aggregator="gnmax", queries=10, noise_scale=None, target_epsilon=1.0,
                                                  sigma1=None),
                           noise_scale=9834.2, epsilon=0.9999, epsilon_answers=None, released=None, delta=1e-5)
    assert "= 9,840, calibrated" in noise_used_caption(pate)
    assert format_noise(0.0012341) == "0.00124" and format_noise(float("inf")) == "—"


def test_a_tables_noise_column_rounds_up_as_the_tiles_do():
    """A σ read from a results table and set directly must not add less noise than the run had."""
    import numpy as np
    import pandas as pd

    from dpcore.ui.common import readable_table

    shown = readable_table(pd.DataFrame({"noise_multiplier": [6.03121, 1.23449, 4.0], "accuracy": [0.91234] * 3}))
    assert shown["Noise multiplier σ"].tolist() == [6.032, 1.235, 4.0]
    assert shown["Test accuracy"].tolist() == [0.9123] * 3  # other columns to nearest, as before
    with_gap = readable_table(pd.DataFrame({"noise_multiplier": [6.03121, np.nan]}))
    assert with_gap["Noise multiplier σ"].tolist() == ["6.032", "—"]


def test_the_laplace_noise_tiles_round_up_and_lnmax_says_its_per_answer_epsilon_rounded_up():
    """Output perturbation's and label DP's Laplace scales read to the nearest figure (2 / 0.6 = 3.3333 read 3.33,
    less noise than ε 0.6 per answer needs); LNMax's per-answer ε 2γ likewise (2 / 3.01 = 0.66445 read 0.664)."""
    from types import SimpleNamespace

    from dpcore.ui.pate import lnmax_caption
    from dpcore.ui.training import noise_tile

    _, value, _ = noise_tile({"noise_multiplier": None, "extras": {"noise_scale": 2 / 0.6, "epsilon_per_query": 0.6}})
    assert value == "3.34"
    labels = {"label_noise_scale": 2 / 0.6, "sensitivity_l1": 2.0}
    _, value, _ = noise_tile({"noise_multiplier": None, "extras": labels})
    assert value == "3.34"
    res = SimpleNamespace(noise_scale=3.01, epsilon_pure=0.66445 * 40)
    assert "(2γ = 0.665)-DP" in lnmax_caption(res)
