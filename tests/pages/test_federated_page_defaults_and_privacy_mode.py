"""The Federated page: unused privacy boxes are disabled and the σ used is shown; the default
federation learns under a meaningful user-level ε; the server-step column and any large gap are explained; and
statistics of the private updates sit in a collapsed expander marked as not covered by ε."""
from __future__ import annotations

import math
import re

from tests.pages.conftest import page

PAGE = "pages/8_Federated_learning.py"


def _metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def _used(at):
    return next(c.value for c in at.sidebar.caption if c.value.startswith(("Used:", "Non-private")))


def _on_digits(**state):
    """The page opened on digits (as a link would), so the first run is not the default MNIST one."""
    at = page(PAGE)
    for key, value in {"fed.dataset": "digits", **state}.items():
        at.session_state[key] = value
    return at


def _accountant(at):
    """The accountant box under "More settings" (a privacy knob drawn from the learner's declaration)."""
    return next(w for w in at.get("selectbox") + at.get("radio") if w.key == "fed.accountant.digits")


def _disabled(at):
    dataset = at.selectbox(key="fed.dataset").value
    keys = {"clip": f"fed.clip_norm.{dataset}", "sigma": "fed.sigma", "eps": "fed.eps", "delta": "fed.delta"}
    return {k: at.number_input(key=key).disabled for k, key in keys.items()}


def test_default_federation_learns_under_a_meaningful_epsilon_and_explains_its_columns():
    at = page(PAGE).run()
    assert not at.exception and not at.error
    eps = float(_metric(at, "ε (user level)"))
    assert eps <= 5.0 + 1e-6
    assert not any("almost no formal protection" in w.value or "Few clients" in w.value for w in at.warning)
    private, reference = float(_metric(at, "Final test accuracy")), float(_metric(at, "Non-private FedAvg"))
    assert private > 0.8 and reference - private < 0.05  # DP-FedAvg within 5 points of FedAvg by default

    hist = at.dataframe[0].value
    assert "Share of updates clipped" not in hist and "Largest update norm sent" not in hist
    box = next(e for e in at.expander if "diagnostics" in e.label.lower())
    assert "NOT covered by ε" in box.label and not box.proto.expanded
    diag = box.dataframe[0].value
    # who joined each round is a release its ε does not cover (the amplification assumes it secret): it sits here,
    # not beside "ε so far"
    assert list(diag.columns) == ["Round", "Clients this round", "Share of updates clipped",
                                  "Largest update norm sent"]
    assert "Clients this round" not in hist
    assert "Test balanced accuracy" not in hist  # no class shares declared: the chart and the table read accuracy
    assert len(diag) == len(hist) and (diag["Largest update norm sent"] <= 1.0 + 1e-6).all()  # clip norm S = 1

    # the step-size column is explained, and the explanation's numbers are the ones that ran: its noise norm
    # sigma*S*sqrt(d)/(qN) is what the measured steps are made of (signal adds at most S = 1 on top)
    step = next(c.value for c in at.caption if c.value.startswith("Server step size"))
    d = int(re.search(r"d = ([0-9,]+)", step).group(1).replace(",", ""))
    assert d == 7850  # softmax regression on 784 pixels, 10 classes
    sigma, qn = float(_metric(at, "Noise multiplier σ")), float(_metric(at, "Clients per round qN"))
    predicted = sigma * 1.0 * math.sqrt(d) / qn
    shown = float(re.search(r"\(norm\) about that × √d = ([0-9]+\.?[0-9]*)", step).group(1))
    assert math.isclose(shown, predicted, rel_tol=0.01)
    steps = hist["Server step size (L2 norm)"]
    assert 0.9 * predicted <= steps.median() <= predicted + 1.0
    assert not any(c.value.startswith("Why the gap") for c in at.caption)  # private is close: nothing to explain
    # the formulas come after words a student reads: the noise's size as a standard deviation, a step as a length
    assert "how far the server moves the model" in step and "standard deviation in each parameter" in step
    assert any(c.value.startswith("Each round the server adds random Gaussian noise") and
               "standard deviation σ·S" in c.value for c in at.caption)


def test_privacy_boxes_follow_the_mode_and_the_sigma_used_is_shown():
    at = _on_digits(**{"fed.rounds": 2}).run()
    assert _disabled(at) == {"clip": False, "sigma": True, "eps": False, "delta": False}
    assert not _accountant(at).disabled
    assert not any("(if set by" in n.label for n in at.number_input)
    sigma = float(_metric(at, "Noise multiplier σ"))
    assert "calibrated" in _used(at) and f"σ = {sigma:.3g}" in _used(at)
    assert sigma != at.number_input(key="fed.sigma").value  # the greyed-out box is not what ran

    at.radio(key="fed.by").set_value("noise multiplier").run()  # outside the form: applies at once
    assert not at.exception and not at.error
    assert _disabled(at) == {"clip": False, "sigma": False, "eps": True, "delta": False}
    assert float(_metric(at, "Noise multiplier σ")) == at.number_input(key="fed.sigma").value
    assert "as set" in _used(at) and f"ε = {_metric(at, 'ε (user level)')}" in _used(at)

    at.radio(key="fed.mode").set_value("none").run()
    assert not at.exception and not at.error
    assert _disabled(at) == {"clip": True, "sigma": True, "eps": True, "delta": True}
    assert at.radio(key="fed.by").disabled
    assert _accountant(at).disabled and "Not used" in _accountant(at).help  # "More settings" follows the variant
    assert _metric(at, "ε (user level)") == "∞" and "not used" in _used(at)


def test_rounds_left_empty_follow_the_target_epsilon_and_say_so():
    at = _on_digits().run()
    assert at.number_input(key="fed.rounds").value is None  # empty: from ε
    assert "100 rounds, from the rule" in _used(at)  # the page's ε = 4
    at.number_input(key="fed.eps").set_value(1.0)
    next(b for b in at.button if b.label == "Train").click()
    at.run()
    assert not at.exception and "25 rounds, from the rule" in _used(at)
    assert len(at.dataframe[0].value) == 25
