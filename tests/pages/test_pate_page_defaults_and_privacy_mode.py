"""The PATE page: the privacy box the mode does not use is disabled, the noise actually used
is shown, and the first visit shows PATE working without tripping the page's own weak-guarantee warning."""
from __future__ import annotations

import re

from tests.pages.conftest import page

PAGE = "pages/7_PATE.py"


def _metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def _used(at):
    return next(c.value for c in at.sidebar.caption if c.value.startswith("Used:"))


def _sigma(at):
    return float(_metric(at, "Noise on each vote").split("=")[1])


def test_default_run_shows_pate_working_without_a_weak_guarantee():
    at = page(PAGE).run()
    assert not at.exception and not at.error
    eps = float(_metric(at, "ε spent (data-independent)"))
    assert 2.0 <= eps <= 5.0 + 1e-9
    assert not any("almost no formal protection" in w.value for w in at.warning)
    assert not any("Too few examples per teacher" in w.value or "barely better" in w.value for w in at.warning)
    body = " ".join(m.value for m in at.markdown)
    chance = float(re.search(r"Chance level[^:]*: \**([0-9]+\.[0-9]+)", body).group(1))
    student = float(_metric(at, "Student accuracy"))
    assert student > chance + 0.5  # digits: chance 0.10
    assert student >= float(_metric(at, "Teacher accuracy"))  # the aggregate beats a single teacher


def test_privacy_mode_disables_the_unused_box_and_shows_the_noise_used():
    at = page(PAGE).run()
    eps_box, noise_box = at.number_input(key="pate.eps"), at.number_input(key="pate.noise")
    assert not eps_box.disabled and noise_box.disabled
    assert not any("(if set by" in w.label for w in at.number_input)
    used = _used(at)
    sigma = _sigma(at)
    assert "calibrated" in used and f"σ = {sigma:.3g}" in used and f"target {eps_box.value:g}" in used
    assert sigma != noise_box.value  # the greyed-out box is not what ran

    # switching the mode takes effect at once (the radio is outside the form) and swaps the boxes
    at.radio(key="pate.mode").set_value("noise scale").run()
    assert not at.exception and not at.error
    assert at.number_input(key="pate.eps").disabled and not at.number_input(key="pate.noise").disabled
    assert _sigma(at) == at.number_input(key="pate.noise").value
    eps_before = float(_metric(at, "ε spent (data-independent)"))
    assert "as set" in _used(at) and f"ε = {eps_before:.3g}" in _used(at)

    at.number_input(key="pate.noise").set_value(20.0)
    next(b for b in at.button if b.label == "Run PATE").click().run()
    assert not at.exception
    assert _sigma(at) == 20.0
    assert float(_metric(at, "ε spent (data-independent)")) < eps_before  # more noise, less privacy spent


def test_choosing_mnist_brings_its_own_defaults_and_a_cluster_query_says_what_it_is():
    from dpcore.datasets import train_test_split
    from dpcore.learners import get_learner

    at = page(PAGE).run()
    at.selectbox(key="pate.dataset").set_value("mnist5k")
    next(b for b in at.button if b.label == "Run PATE").click()
    at.run()
    assert not at.exception and not at.error
    expected = get_learner("pate").defaults(train_test_split("mnist5k", seed=0))  # the command line's defaults
    assert at.number_input(key="pate.teachers.mnist5k").value == expected["teachers"]
    assert at.radio(key="pate.query_mode.mnist5k").value == expected["query_mode"] == "clusters"
    assert at.radio(key="pate.features.mnist5k").value == "hog"
    assert at.radio(key="pate.teacher_model.mnist5k").value == "knn"
    assert any("This query is a cluster of" in m.value for m in at.markdown)
    assert float(_metric(at, "Student accuracy")) > 0.75
