"""A learner's config dataclass and its knobs start from the same values: the library, the command line and the
pages run the same defaults (FedAvgConfig once sampled half the clients where the knob said a fifth)."""
from __future__ import annotations

import pytest

from dpcore.federated.fedavg import FedAvgConfig
from dpcore.learners import learners
from dpcore.learners.knobs import config_defaults
from dpcore.pate.pipeline import PateConfig
from dpcore.training.engine import TrainConfig

SPECS = sorted(learners().values(), key=lambda s: s.name)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.config is not None], ids=lambda s: s.name)
def test_every_declared_knob_default_is_its_configs_default(spec):
    fields = config_defaults(spec.config)
    compared = [k for k in spec.knobs if k.name in fields and k.default is not None]
    assert compared, f"{spec.name}: no knob shares a field with {spec.config.__name__}"
    wrong = {k.name: (k.default, fields[k.name]) for k in compared if k.default != fields[k.name]}
    assert not wrong, f"{spec.name}: knob default vs {spec.config.__name__} default: {wrong}"


def test_the_learners_that_build_a_config_declare_it():
    declared = {s.name: s.config for s in SPECS if s.config is not None}
    assert {n for n, c in declared.items() if c is FedAvgConfig} == {"dp-fedavg", "fedavg-local-dp", "fedavg"}
    assert declared["pate"] is PateConfig
    assert declared["dpsgd"] is TrainConfig and declared["non-private"] is TrainConfig


def test_the_contradictions_once_found_are_gone():
    knob = learners()["dp-fedavg"].knob("client_fraction")
    assert FedAvgConfig(target_epsilon=1.0).client_fraction == knob.default == 0.2
    pate = learners()["pate"]
    assert (PateConfig().teacher_model, PateConfig().baseline) == (pate.knob("teacher_model").default,
                                                                   pate.knob("baseline").default) == ("knn", False)
