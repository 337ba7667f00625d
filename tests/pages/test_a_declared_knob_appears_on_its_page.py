"""A knob declared by a learner appears on its page without touching the page: the PATE and Federated pages draw
the knobs they do not place themselves under "More settings", from the learner's declaration (label, default,
range), and pass the chosen value to the run."""
from __future__ import annotations

import dataclasses

import pytest

from dpcore.learners import Knob
from tests.pages.conftest import page

NEW_KNOB = Knob("vote_temperature", "float", default=1.5, low=0.0, low_open=True, high=10.0,
                label="A knob the page has never heard of", help="declared by the learner only")


@pytest.mark.parametrize("path, module, attr, key", [
    ("pages/7_PATE.py", "dpcore.ui.pate", "PATE_SPEC", "pate.vote_temperature.digits"),
    ("pages/8_Federated_learning.py", "dpcore.ui.federated", "FED_SPEC", "fed.vote_temperature.mnist5k"),
])
def test_a_knob_added_to_the_learner_is_drawn_with_its_declared_label_and_default(monkeypatch, path, module, attr,
                                                                                   key):
    import importlib

    ui = importlib.import_module(module)
    spec = getattr(ui, attr)
    monkeypatch.setattr(ui, attr, dataclasses.replace(spec, knobs=spec.knobs + (NEW_KNOB,)))
    at = page(path)
    if "Federated" in path:  # a short first run: the default is 100 rounds on MNIST 5k
        at.session_state["fed.rounds"] = 2
    at.run()
    assert not at.exception
    box = at.number_input(key=key)
    assert box.label == NEW_KNOB.label and box.value == NEW_KNOB.default
    box.set_value(20.0)  # out of the declared range (0, 10]: said under the box, the default used meanwhile
    submit = [b for b in at.button if b.key and b.key.startswith("FormSubmitter")]
    (submit[0].click() if submit else at).run()
    assert not at.exception
    assert any(e.value.startswith(f"{NEW_KNOB.label} must be from 0.001 to 10; 20 is not") for e in at.error)


def test_the_pate_page_builds_the_same_run_as_the_command_line_for_the_same_knobs():
    from dpcore.datasets import train_test_split
    from dpcore.learners import get_learner
    from dpcore.pate.learners import pate_config
    from dpcore.ui.pate import page_config

    spec = get_learner("pate")
    split = train_test_split("mnist5k", seed=0)
    params = spec.defaults(split)
    cli = pate_config(split, epsilon=2.0, delta=1e-5, seed=3, params={})
    shown = page_config("mnist5k", epsilon=2.0, delta=1e-5, seed=3, params=params, secure=False)
    assert dataclasses.replace(shown, baseline=False) == cli  # the page adds only its non-private reference


def test_a_value_chosen_for_one_dataset_is_still_there_after_looking_at_another():
    at = page("pages/7_PATE.py").run()

    def submit():
        next(b for b in at.button if b.label == "Run PATE").click()
        at.run()

    at.number_input(key="pate.teachers.digits").set_value(20)
    submit()
    at.selectbox(key="pate.dataset").set_value("iris")
    submit()
    assert at.number_input(key="pate.teachers.iris").value != 20  # iris has its own default
    at.selectbox(key="pate.dataset").set_value("digits")
    submit()
    assert not at.exception and not any("Session State" in w.value for w in at.warning)
    assert at.number_input(key="pate.teachers.digits").value == 20
