"""The command line and the pages start from the same defaults, kept in one place: ε and δ in dpcore.defaults,
the sweep's values, seeds and workers in dpcore.sweep."""
from __future__ import annotations

import pathlib

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.cli import COMMANDS, build_parser
from dpcore.defaults import DELTA, EPSILON
from dpcore.sweep import DEFAULT_JOBS, DEFAULT_RANGES, DEFAULT_SEEDS, SweepConfig, default_values, value_range

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _command(name: str):
    return next(a for a in build_parser(name)._actions if a.dest == "command").choices[name]


@pytest.mark.parametrize("name", [n for n in COMMANDS if n in ("train", "cluster", "sweep", "audit")])
def test_every_command_that_takes_epsilon_and_delta_starts_from_the_shared_values(name):
    p = _command(name)
    # train's --epsilon is the learner's own default (LearnerSpec.default_epsilon, the one the Train page shows);
    # cluster's is EPSILON unless given, so that giving one to plain Lloyd can be noted as ignored
    assert p.get_default("epsilon") == (None if name in ("train", "cluster") else EPSILON)
    if any(a.dest == "delta" for a in p._actions):
        assert p.get_default("delta") == DELTA


@pytest.mark.parametrize("name", ["epsilon", "noise"])
def test_the_accounting_commands_read_epsilon_at_the_shared_delta(name):
    assert _command(name).get_default("delta") == DELTA


def test_the_accounting_commands_and_the_accountant_page_start_from_the_same_accountant():
    from dpcore.accounting import DEFAULT_ACCOUNTANT

    at = AppTest.from_file(str(ROOT / "pages" / "1_Accountant.py"), default_timeout=120)
    at.run()
    assert not at.exception
    assert at.radio(key="acct.acct").value == DEFAULT_ACCOUNTANT
    for name in ("epsilon", "noise"):
        assert _command(name).get_default("accountant") == DEFAULT_ACCOUNTANT


def test_a_sweep_without_values_runs_the_trade_off_explorers_default_range_seeds_and_workers():
    from dpcore.cli.sweep import _values

    p = _command("sweep")
    for axis, (lo, hi, n) in DEFAULT_RANGES.items():
        args = p.parse_args(["--dataset", "iris", "--algorithms", "dpsgd", "--axis", axis])
        assert tuple(_values(args)) == default_values(axis) == value_range(axis, lo, hi, n)
        assert len(default_values(axis)) == n
    assert (args.seeds, args.jobs, args.epsilon, args.delta) == (DEFAULT_SEEDS, DEFAULT_JOBS, EPSILON, DELTA)
    assert (SweepConfig.seeds, SweepConfig.epsilon, SweepConfig.delta) == (DEFAULT_SEEDS, EPSILON, DELTA)


def test_a_learners_own_knob_has_no_default_range_and_the_command_says_to_give_values():
    from dpcore.cli.sweep import _values
    from dpcore.exceptions import DPValueError

    args = _command("sweep").parse_args(["--dataset", "iris", "--algorithms", "dpsgd", "--axis", "epochs"])
    with pytest.raises(DPValueError, match="no default range.*--values"):
        _values(args)


def test_the_trade_off_explorer_opens_on_the_shared_range_seeds_workers_and_delta(tmp_path):
    at = AppTest.from_file(str(ROOT / "pages" / "5_Tradeoff_explorer.py"), default_timeout=120)
    at.run()
    assert not at.exception
    lo, hi, n = DEFAULT_RANGES["epsilon"]
    assert (at.number_input(key="sweep.min.epsilon").value, at.number_input(key="sweep.max.epsilon").value,
            at.number_input(key="sweep.points.epsilon").value) == (lo, hi, n)
    assert at.number_input(key="sweep.seeds").value == DEFAULT_SEEDS
    assert at.number_input(key="sweep.jobs").value == DEFAULT_JOBS
    assert at.number_input(key="sweep.delta").value == DELTA
    # the learners: the command without --algorithms sweeps the page's selection
    at.selectbox(key="sweep.dataset").set_value("diabetes").run()
    page_learners = next(m for m in at.multiselect if m.key.startswith("sweep.learners.")).value
    assert page_learners == ["functional-mechanism", "ssp"]
    import pandas as pd

    from dpcore.cli import main

    out = tmp_path / "sweep.csv"
    assert main(["sweep", "--dataset", "diabetes", "--values", "1", "--seeds", "1", "--no-cache", "--no-baselines",
                 "--jobs", "1", "--out", str(out)]) == 0
    assert sorted(pd.read_csv(out).learner.unique()) == sorted(page_learners)


def test_the_audit_command_attacks_the_attack_pages_learner_by_default():
    at = AppTest.from_file(str(ROOT / "pages" / "9_Attack_the_model.py"), default_timeout=180)
    at.session_state["audit.dataset"] = "iris"
    at.run()
    assert not at.exception
    assert _command("audit").get_default("algorithm") == at.selectbox(key="audit.learner").value == "dpsgd"


def test_the_audit_command_and_the_attack_page_start_from_the_same_shadows_canaries_pool_and_confidence():
    import inspect

    from dpcore.audit import DEFAULT_POOL_SIZE, DEFAULT_SHADOWS, membership_audit, run_audit
    from dpcore.audit.canaries import DEFAULT_CANARIES
    from dpcore.audit.run import DEFAULT_CONFIDENCE, STORY_CANARIES

    at = AppTest.from_file(str(ROOT / "pages" / "9_Attack_the_model.py"), default_timeout=180)
    at.session_state["audit.dataset"] = "iris"
    at.run()
    assert not at.exception
    assert at.select_slider(key="audit.shadows").value == DEFAULT_SHADOWS
    assert at.select_slider(key="audit.canaries").value == DEFAULT_CANARIES
    assert at.select_slider(key="audit.pool").value == DEFAULT_POOL_SIZE
    # the command: --confidence's default is the library's, and the other defaults its help states are the same
    p = _command("audit")
    assert p.get_default("confidence") == DEFAULT_CONFIDENCE
    for fn in (run_audit, membership_audit):
        params = inspect.signature(fn).parameters
        assert params["shadows"].default == DEFAULT_SHADOWS and params["confidence"].default == DEFAULT_CONFIDENCE
    helps = {a.dest: " ".join(a.help.split()) for a in p._actions if a.help}
    assert f"default {DEFAULT_SHADOWS}," in helps["shadows"]
    assert f"default {STORY_CANARIES}," in helps["canaries"] and f"default {DEFAULT_CANARIES}," in helps["canaries"]
    assert f"default {DEFAULT_POOL_SIZE}," in helps["pool_size"]
    assert f"default {DEFAULT_CONFIDENCE:g}," in helps["confidence"]


@pytest.mark.parametrize("page,key", [("3_Clustering.py", "cluster.epsilon"), ("9_Attack_the_model.py", "audit.eps")])
def test_pages_without_a_learner_default_open_on_the_shared_epsilon(page, key):
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=120)
    at.run()
    assert not at.exception
    assert at.number_input(key=key).value == EPSILON


def test_the_cluster_command_runs_dplloyd_on_the_clustering_pages_neighbouring_relation_and_says_so(capsys):
    at = AppTest.from_file(str(ROOT / "pages" / "3_Clustering.py"), default_timeout=120)
    at.run()
    page_relation = at.radio(key="cluster.neighbouring").value
    args = build_parser().parse_args(["cluster", "--dataset", "iris", "--algorithm", "dplloyd"])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert f"neighbouring: {page_relation}" in printed
    # and the same inputs give the page's number (the same seed fixes the noise)
    from dpcore.learners import run_learner

    same = run_learner("dplloyd", "iris", epsilon=EPSILON, seed=0, params={"neighbouring": page_relation})
    assert f"intra_cluster_variance: {same.metrics['intra_cluster_variance']:.6g}" in printed  # text: 6 figures


def test_the_noisy_images_training_and_label_boxes_open_on_the_shared_epsilon(monkeypatch):
    # the page's own ε 10 is for the pictures (dpcore.teaching.lesson.OWN_DEFAULTS); the model trained on them and
    # the label noise start from the shared ε, which the page wrote as a literal 1.0
    import dpcore.defaults

    monkeypatch.setattr(dpcore.defaults, "EPSILON", 2.0)  # a shared value only a page that reads it can show
    at = AppTest.from_file(str(ROOT / "pages" / "6_Noisy_images.py"), default_timeout=180)
    at.session_state["images.set.name"] = "digits"  # a labelled set: its label-noise section is drawn
    at.run()
    assert not at.exception
    assert at.number_input(key="images.train_eps").value == 2.0
    assert at.number_input(key="images.label_eps").value == 2.0


def test_the_classical_models_page_states_the_shared_delta_of_gaussian_ssp(monkeypatch):
    import dpcore.defaults

    monkeypatch.setattr(dpcore.defaults, "DELTA", 1e-6)  # it wrote "δ = 1e-5" whatever δ the runs used
    at = AppTest.from_file(str(ROOT / "pages" / "4_Classical_models.py"), default_timeout=180)
    at.session_state["classical.dataset"] = "diabetes"
    at.run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "δ = 1e-06" in captions and "1e-5" not in captions


def test_the_private_federated_learners_and_the_federated_page_open_on_one_epsilon():
    import dpcore.federated.learners as fl
    from dpcore.learners import get_learner
    from dpcore.ui import federated

    assert {get_learner(n).default_epsilon for n in ("dp-fedavg", "fedavg-local-dp")} == {fl.FEDERATED_EPSILON}
    assert federated.FED_SPEC.default_epsilon == fl.FEDERATED_EPSILON
