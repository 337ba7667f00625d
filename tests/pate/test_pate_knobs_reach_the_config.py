"""PATE's knobs are PateConfig's fields: each one given reaches the run's configuration under its own name, so a knob
is added to PateConfig and PATE_KNOBS and nowhere else (the page draws it, the command line takes it)."""
from __future__ import annotations

import dataclasses

import pytest

from dpcore.datasets import train_test_split
from dpcore.exceptions import DPValueError
from dpcore.learners.knobs import Knob
from dpcore.pate import learners as pate_learners
from dpcore.pate.pipeline import PateConfig


@pytest.fixture(scope="module")
def split():
    return train_test_split("iris", seed=0)


def test_every_knob_not_filled_by_a_rule_is_a_config_field_with_the_configs_default():
    fields = {f.name: f.default for f in dataclasses.fields(PateConfig)}
    for knob in pate_learners.PATE_KNOBS:
        if knob.name not in pate_learners.RULED_KNOBS:
            assert knob.name in fields and knob.default == fields[knob.name], knob.name


def test_each_knob_given_reaches_the_config(split):
    given = {"aggregator": "confident", "threshold": 0.7, "threshold_noise": 0.4, "public_fraction": 0.3,
             "teacher_model": "logreg", "student_model": "knn", "data_dependent": True, "accountant": "pld",
             "baseline": True}
    cfg = pate_learners.pate_config(split, epsilon=2.0, delta=1e-5, seed=0, params=given)
    assert {key: getattr(cfg, key) for key in given} == given


def test_a_value_given_as_on_a_command_line_is_read_by_its_knob(split):
    cfg = pate_learners.pate_config(split, epsilon=2.0, delta=1e-5, seed=0,
                                    params={"threshold": "0.7", "baseline": "yes", "accountant": " pld"})
    assert (cfg.threshold, cfg.baseline, cfg.accountant) == (0.7, True, "pld")
    with pytest.raises(DPValueError, match="threshold must be"):
        pate_learners.pate_config(split, epsilon=2.0, delta=1e-5, seed=0, params={"threshold": "abc"})


def test_a_knob_added_to_pate_reaches_the_config_with_no_other_edit(monkeypatch, split):
    wider = dataclasses.make_dataclass("WiderPateConfig", [("vote_temperature", float, 1.0)], bases=(PateConfig,),
                                       frozen=True, kw_only=True)
    knob = Knob("vote_temperature", "float", default=1.0, low=0.0, low_open=True, high=10.0, label="Vote temperature")
    monkeypatch.setattr(pate_learners, "PateConfig", wider)
    monkeypatch.setattr(pate_learners, "PATE_KNOBS", (*pate_learners.PATE_KNOBS, knob))
    cfg = pate_learners.pate_config(split, epsilon=2.0, delta=1e-5, seed=0, params={"vote_temperature": 2.5})
    assert cfg.vote_temperature == 2.5
