"""A learner is added by its algorithm and its declaration alone: registered with
``family="network"`` it is offered on the Train page, trains there beside its non-private twin and has its own
budget paragraph shown; registered with ``family="clustering"`` the ``cluster`` command offers it. No page, list
or branch names it."""
from __future__ import annotations

import dataclasses

import pytest

from dpcore.learners import _LEARNERS, get_learner, learner_names, register  # _LEARNERS: test-only cleanup
from tests.pages.conftest import page

TOY = "toy-label-noise"
TOY_TITLE = "Toy learner the pages never heard of"


@pytest.fixture
def toy_network_learner():
    """A network learner declared outside the lists: label-DP's algorithm under a new name, title and budget text."""
    rr = get_learner("label-dp-rr")
    spec = register(dataclasses.replace(
        rr, name=TOY, title=TOY_TITLE,
        wording=dataclasses.replace(rr.wording, budget="**Toy budget.** Each label kept with probability "
                                                       "{p_keep:.3f}; ε = {epsilon:g} in all.")))
    try:
        yield spec
    finally:
        _LEARNERS.pop(TOY, None)


def test_a_network_learner_registered_with_its_family_is_in_the_train_pages_list(toy_network_learner):
    from dpcore.ui.training import train_learners

    assert TOY in train_learners("classification")
    assert TOY not in train_learners("regression")  # its declared tasks decide, as for the others
    assert "non-private" not in train_learners()  # the baseline is trained beside each run, not offered


def test_the_train_page_offers_trains_and_explains_a_learner_it_never_names(toy_network_learner):
    at = page("pages/2_Train_a_network.py")
    at.run()
    assert not at.exception
    box = at.selectbox(key="train.algorithm")
    assert TOY in box.options or TOY_TITLE in box.options
    at.selectbox(key="train.dataset").set_value("iris").run()
    at.selectbox(key="train.algorithm").set_value(TOY).run()
    assert not [r for r in at.radio if r.key == "train.mode"]  # no "Set σ directly": no direct_noise knob
    at.button(key="train.run").click().run()
    assert not at.exception
    assert any(m.label == "Test accuracy (private)" for m in at.metric)
    assert any(s.value.startswith("**Toy budget.** Each label kept with probability") for s in at.markdown)


def test_a_clustering_learner_is_offered_by_the_cluster_command():
    import argparse

    from dpcore.cli import cluster

    spec = register(dataclasses.replace(get_learner("input-perturbation"), name="toy-kmeans"))
    try:
        assert "toy-kmeans" in learner_names(family="clustering")
        parser = argparse.ArgumentParser()
        cluster.add_parser(parser.add_subparsers())
        args = parser.parse_args(["cluster", "--dataset", "iris", "--algorithm", spec.name])
        assert args.algorithm == "toy-kmeans"
    finally:
        _LEARNERS.pop("toy-kmeans", None)


def test_declarations_replace_the_name_branches():
    """What the pages used to decide by the name "dpsgd", each learner now says."""
    dpsgd = get_learner("dpsgd")
    assert dpsgd.direct_noise == "noise_multiplier" and dpsgd.canary_kind == "gradient"
    assert dpsgd.choice_warnings({"sampling": "shuffle"}) and not dpsgd.choice_warnings({"sampling": "poisson"})
    assert dpsgd.sets_noise_directly({"noise_multiplier": 2.0}) and not dpsgd.sets_noise_directly({})
    others = [s for n, s in _registered().items() if n != "dpsgd"]
    assert all(s.direct_noise is None and s.canary_kind == "input" for s in others)
    assert get_learner("output-perturbation").wording.budget
    assert learner_names(family="network", private=True) == ["dpsgd", "output-perturbation", "label-dp-laplace",
                                                             "label-dp-rr"]


def test_a_declaration_naming_a_knob_it_lacks_is_refused():
    with pytest.raises(ValueError, match="direct_noise"):
        dataclasses.replace(get_learner("label-dp-rr"), direct_noise="noise_multiplier")
    with pytest.raises(ValueError, match="canary_kind"):
        dataclasses.replace(get_learner("label-dp-rr"), canary_kind="weights")


def _registered():
    from dpcore.learners import learners

    return learners()
