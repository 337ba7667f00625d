"""The Federated page's explanations: the noise they quote is the noise the server adds, and they appear when due."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dpcore.federated import FedAvgConfig
from dpcore.federated.fedavg import noisy_server_average
from dpcore.ui.federated import (
    HEATMAP_CLIENTS,
    chance_warning,
    clients_figure,
    gap_caption,
    noise_on_average,
    step_caption,
)

CENTRAL = FedAvgConfig(clients=1000, client_fraction=0.2, clip_norm=1.5, noise_multiplier=2.0)


def test_quoted_noise_matches_the_servers_noise():
    d = 4000
    std, norm = noise_on_average(CENTRAL, 2.0, d)
    assert std == pytest.approx(2.0 * 1.5 / 200) and norm == pytest.approx(std * math.sqrt(d))
    # what the core actually adds to an all-zero sum of updates
    avg = noisy_server_average(torch.zeros(d, dtype=torch.float64), clip_norm=1.5, noise_multiplier=2.0,
                               expected_clients=200, generator=torch.Generator().manual_seed(0))
    assert float(avg.std()) == pytest.approx(std, rel=0.05) and float(avg.norm()) == pytest.approx(norm, rel=0.05)


def test_local_dp_noise_shrinks_only_with_the_square_root_of_the_clients():
    local = FedAvgConfig(mode="local", clients=1000, client_fraction=0.2, clip_norm=1.5, noise_multiplier=2.0)
    std, _ = noise_on_average(local, 2.0, 10)
    assert std == pytest.approx(2.0 * 1.5 / math.sqrt(200))
    assert "√(qN)" in step_caption(local, 2.0, 10)


def test_gap_caption_only_when_far_below():
    assert gap_caption(CENTRAL, 2.0, 7850, private_accuracy=0.86, nonprivate_accuracy=0.88) is None
    assert gap_caption(CENTRAL, 2.0, 7850, private_accuracy=0.5, nonprivate_accuracy=None) is None
    text = gap_caption(CENTRAL, 2.0, 7850, private_accuracy=0.5, nonprivate_accuracy=0.9)
    _, norm = noise_on_average(CENTRAL, 2.0, 7850)
    assert text is not None and f"{norm:.3g}" in text and f"{norm / 1.5:.3g} times" in text
    none = FedAvgConfig(mode="none")
    assert gap_caption(none, None, 7850, private_accuracy=0.5, nonprivate_accuracy=0.9) is None
    assert "no clipping, no noise" in step_caption(none, None, 7850)


def test_heatmap_draws_at_most_a_readable_number_of_clients():
    counts = np.ones((1000, 10), dtype=int)
    fig = clients_figure(counts, tuple(str(i) for i in range(10)))
    assert np.asarray(fig.data[0].z).shape == (HEATMAP_CLIENTS, 10) and fig.layout.height < 1000
    assert np.asarray(clients_figure(counts[:7], ("a",) * 10).data[0].z).shape == (7, 10)


def test_a_private_model_near_chance_is_warned_about_with_advice_for_its_mode():
    import dataclasses

    local = dataclasses.replace(CENTRAL, mode="local")
    assert "Raise ε, sample more clients" in chance_warning(CENTRAL, 0.11, 0.10)
    assert "compare with the central mode" in chance_warning(local, 0.11, 0.10)
    assert chance_warning(local, 0.084, 0.102).startswith("The model is no better than always answering")
    assert chance_warning(CENTRAL, 0.5, 0.10) is None  # well above chance
    assert chance_warning(dataclasses.replace(CENTRAL, mode="none", noise_multiplier=None), 0.1, 0.1) is None
    assert chance_warning(CENTRAL, 0.11, None) is None  # regression: no chance level


def test_the_rounds_chart_legend_grows_above_the_plot_never_into_it():
    import pandas as pd

    from dpcore.ui.federated import rounds_figures

    history = pd.DataFrame({"round": [1, 2, 3], "accuracy": [0.5, 0.8, 0.9], "epsilon": [1.0, 1.5, 2.0]})
    acc, _ = rounds_figures(history, rounds=3, reference=history.assign(accuracy=[0.6, 0.85, 0.92]), chance=0.1)
    legend = acc.layout.legend
    # its three entries wrap to three rows in a narrow column: anchored by the top at y = 1.15 they reached down
    # over the curves near accuracy 0.9 (presentation mode at 1280×720)
    assert legend.orientation == "h" and legend.yanchor == "bottom" and legend.y >= 1


@pytest.mark.parametrize("rounds", [1, 7, 12, 50, 80, 100, 1000])
def test_the_rounds_charts_label_round_one_and_several_later_rounds_whatever_the_width(rounds):
    import pandas as pd

    from dpcore.ui.federated import rounds_figures

    # Plotly's own ticks on a narrow column (presentation mode at 1280×720) were 0 and 50 for 80 rounds: the one
    # label left in the range [0.5, 80.5] was "50"
    history = pd.DataFrame({"round": range(1, rounds + 1), "accuracy": 0.5, "epsilon": 1.0})
    for fig in rounds_figures(history, rounds=rounds):
        ticks = list(fig.layout.xaxis.tickvals)
        assert ticks[0] == 1 and all(1 <= t <= rounds for t in ticks) and ticks == sorted(set(ticks))
        assert min(rounds, 3) <= len(ticks) <= 6
        assert ticks[-1] > rounds / 2  # the labels reach across the axis, not one tick in its middle


def test_with_declared_class_shares_the_tiles_and_warning_read_balanced_accuracy():
    """On the 90/10 readmissions upload with shares the page said 'no better than always answering the most common
    class (test accuracy 0.641 vs 0.899)' of a model answering by the shares, whose non-private twin scored 0.691."""
    from types import SimpleNamespace as NS

    import numpy as np
    import pandas as pd

    from dpcore import as_dataset
    from dpcore.datasets import train_test_split
    from dpcore.federated import FedAvgConfig
    from dpcore.learners.metrics import balanced_accuracy
    from dpcore.ui.federated import balanced_by_shares, shares_warning

    rng = np.random.default_rng(2)
    y = rng.random(400) < 0.1
    df = pd.DataFrame(rng.normal(size=(400, 2)), columns=["a", "b"]).assign(r=np.where(y, "yes", "no"))
    ds = as_dataset(df, label="r", bounds="*=-5:5", name="t").with_class_shares("no=0.9, yes=0.1")
    cfg = FedAvgConfig(mode="none", class_shares=ds.class_shares, seed=3)
    y_test = np.asarray(train_test_split(ds, seed=3).y_test)
    proba = np.column_stack([np.full(y_test.size, 0.95), np.full(y_test.size, 0.05)])
    proba[y_test == 1] = [0.8, 0.2]  # above its share only on the rare rows: found by the shares, not by argmax
    private, twin, one = balanced_by_shares(ds, cfg, NS(test_proba=proba), NS(test_proba=proba[:, ::-1]))
    assert private == 1.0 and one == 0.5
    assert twin == balanced_accuracy(y_test, np.argmax(proba[:, ::-1] / np.array(ds.class_shares), axis=1))
    assert balanced_by_shares(ds, FedAvgConfig(mode="none", seed=3), NS(test_proba=proba), None) is None
    central = FedAvgConfig(mode="central", noise_multiplier=1.0)
    said = shares_warning(central, 0.5, 0.5)
    assert said.startswith("Answering by the declared class shares, the model finds each class no better than")
    assert "Raise ε" in said and shares_warning(central, 0.8, 0.5) is None


def test_the_noise_the_explanations_quote_is_rounded_up_never_below_the_servers():
    # a calibrated σ of 1.2345: the step caption and the few-clients warning wrote it by :.3g, "σ = 1.23" and a
    # noise std of 0.154·S (1.2345 / 8 = 0.15431), less noise than the server adds; as the σ tile, they round up
    from dpcore.ui.federated import federation_warnings

    few = FedAvgConfig(clients=20, client_fraction=0.4, clip_norm=1.0, noise_multiplier=1.2345)
    said = " ".join(federation_warnings(few))
    assert "With σ = 1.24 " in said and "std 0.155·S" in said  # 1.2345 / 8 = 0.15431
    step = step_caption(few, 1.2345, 10)
    assert "= 1.24·1/8" in step and "= 0.155:" in step and "1.23" not in step
