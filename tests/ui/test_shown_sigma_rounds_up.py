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
