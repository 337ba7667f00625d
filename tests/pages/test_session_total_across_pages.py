"""A visitor's running privacy total gathers the private runs of every page on the same data set."""
from __future__ import annotations

import re

from .conftest import page


def _session_total(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("**Session total.**"))


def test_a_training_and_the_classical_charts_on_one_data_set_make_one_total():
    """DP-SGD on the Train page, then the Classical models page on the same data in the same session: the caption
    under its chart counts the training with the 34 private models of its two charts (2 ERMs at 6 epsilons and one
    at 5 training sizes, 2 seeds each). Their relations differ (DP-SGD: a record added or removed; DP-ERM: a record
    replaced), so the total says one bound for both, for a record replaced. Shown again on a rerun, nothing more is
    counted; with one seed the charts are 17 other models (seed 0's runs at the same inputs but in charts of other
    inputs are counted again: the key is the chart's inputs)."""
    at = page("app.py").run()
    at.switch_page("pages/2_Train_a_network.py").run()
    at.selectbox(key="train.dataset").set_value("breast_cancer").run()
    at.number_input(key="train.epochs.breast_cancer").set_value(2).run()
    at.button(key="train.run").click().run()
    assert not at.exception
    assert "**1 private training** on Breast" in _session_total(at)
    at.switch_page("pages/4_Classical_models.py").run()
    assert not at.exception
    text = _session_total(at)
    assert ("Where the 35 runs come from: Train a network 1 (the trained model); Classical models 34 (24 for the ε "
            "chart's points, 10 for the training-size chart's points).") in text
    assert re.search(r"\*\*Together\*\*, the 35 trainings are at most", text), text
    at.run()  # a rerun shows the same charts: the same releases, not new ones
    assert "Classical models 34 (" in _session_total(at)
    at.number_input(key="classical.seeds.classification").set_value(1).run()
    assert "Train a network 1 (the trained model); Classical models 51 (" in _session_total(at)
