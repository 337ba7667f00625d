"""A shuffled DP-SGD run (accounted without amplification: one Gaussian mechanism per epoch, one record replaced,
dpcore.accounting.shuffled_dpsgd_event) says so wherever its epsilon could be read or recomputed: its JSON (whose
sample_rate and steps would give a Poisson epsilon, far smaller), the audits (which test adding or removing a
record, not replacing one), and the sweep cache's key (a cached epsilon must follow a change of its accounting)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from dpcore.accounting import dpsgd_epsilon, epsilon_of_event, shuffled_dpsgd_event
from dpcore.exceptions import DPCoreWarning, DPValueError
from dpcore.training import TrainConfig, train


def _run(sampling: str):
    from dpcore.learners import run_learner

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        return run_learner("dpsgd", "breast_cancer", epsilon=1.0, seed=0, params={"sampling": sampling, "epochs": 3})


def test_a_shuffled_runs_json_says_its_sampling_and_its_epsilon_recomputes_from_its_accounted_epochs():
    out = _run("shuffle").to_json_dict()
    assert out["sampling"] == "shuffle" and out["accounted_epochs"] == 3
    assert "no amplification" in out["accounting"] and "replace-one" in out["accounting"]
    again = epsilon_of_event(shuffled_dpsgd_event(noise_multiplier=out["noise_multiplier"],
                                                  epochs=out["accounted_epochs"]), delta=out["delta"])
    assert again == pytest.approx(out["epsilon"], rel=2e-3)
    # what a reader would get reading sample_rate and steps as Poisson sampling: far below the epsilon spent
    poisson = dpsgd_epsilon(noise_multiplier=out["noise_multiplier"], sample_rate=out["sample_rate"],
                            steps=out["steps"], delta=out["delta"])
    assert poisson < out["epsilon"] / 2


def test_a_poisson_runs_json_says_its_sampling_and_nothing_else_changes():
    out = _run("poisson").to_json_dict()
    assert out["sampling"] == "poisson"
    assert "accounted_epochs" not in out and "accounting" not in out
    assert dpsgd_epsilon(noise_multiplier=out["noise_multiplier"], sample_rate=out["sample_rate"], steps=out["steps"],
                         delta=out["delta"]) == pytest.approx(out["epsilon"], rel=2e-3)


@pytest.mark.parametrize("attack", ["canaries", "one-run", "loss"])
def test_the_audits_refuse_a_private_run_on_shuffled_batches(attack):
    from dpcore.audit import run_audit

    with pytest.raises(DPValueError, match="sampling='shuffle'.*one record replaced.*sampling='poisson'"):
        run_audit("dpsgd", "iris", epsilon=1.0, attack=attack, params={"sampling": "shuffle", "epochs": 1})


def test_the_sweep_caches_key_changes_with_the_accounting_code(monkeypatch):
    """A cached row's epsilon was computed by dpcore.accounting: the learner's source digest reads it."""
    from dpcore.sweep import config

    read: list = []
    monkeypatch.setattr(config, "_files_digest", lambda files: read.extend(files) or "digest")
    config.source_digest("dpcore.training.learners")
    names = {f.as_posix() for f in read}
    assert any(n.endswith("dpcore/accounting/events.py") for n in names)
    assert any(n.endswith("dpcore/training/engine.py") for n in names)


def test_a_replaced_record_moves_one_step_of_its_first_epoch_by_at_most_two_clip_norms():
    """The mechanism behind the accounting, white box: the order depends on the seed alone, so with one record
    replaced (same seed, same noise) the steps before its batch release the same sum, its batch's sum moves by at
    most 2C, and nothing else in that step changes."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    X2, y2 = X.copy(), y.copy()
    X2[17], y2[17] = 50.0 * rng.normal(size=4), 1 - y[17]  # replaced: far away, other label
    C = 0.7
    cfg = TrainConfig(model="linear", epochs=1, batch_size=8, noise_multiplier=1.0, clip_norm=C, sampling="shuffle",
                      seed=11, ema=0.0)
    sums: dict = {0: [], 1: []}
    for k, (Xk, yk) in enumerate(((X, y), (X2, y2))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DPCoreWarning)
            train(Xk, yk, cfg, n_outputs=2, on_step=lambda s, v, k=k: sums[k].append(v.detach().clone()))
    diffs = [float(torch.linalg.vector_norm(a.double() - b.double())) for a, b in zip(sums[0], sums[1])]
    first = next(i for i, d in enumerate(diffs) if d > 0)
    assert all(d == 0 for d in diffs[:first])
    assert 0 < diffs[first] <= 2 * C * (1 + 1e-5)


def test_a_shuffled_and_a_poisson_run_in_one_batch_keep_their_own_odometers_and_equal_their_runs_alone():
    """With batch_size dividing n both samplings plan the same epoch ends at the same sigma and rate: the batched
    trainer must not let one read the other's epsilon (the sharing key holds the sampling); each equals its run
    trained alone, a max_epsilon stop included."""
    from dpcore.training.batched import TogetherRun, train_together

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    cfgs = [TrainConfig(model="linear", epochs=4, batch_size=30, noise_multiplier=3.0, seed=s, sampling=sampling,
                        max_epsilon=budget)
            for s, sampling, budget in ((0, "poisson", None), (1, "shuffle", None), (2, "shuffle", 6.0))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        together = train_together([TogetherRun(X, y, c, n_outputs=2) for c in cfgs])
        alone = [train(X, y, c, n_outputs=2) for c in cfgs]
    assert together[0].epsilon < together[1].epsilon / 2
    assert together[2].steps == 12 and together[2].stopped_early  # the fourth epoch would pass 6
    for t, a in zip(together, alone):
        assert t.dp_event == a.dp_event and t.epsilon == a.epsilon and t.steps == a.steps


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_a_shuffled_event_reads_the_same_epsilon_under_either_relation_and_matches_the_exact_gaussian(accountant):
    """The event is already in units of its sensitivity (2C against sigma*C: noise multiplier sigma/2), so the
    ledger composes its Gaussian atom as it is whatever the result's relation: read under replace-one (the
    session's ledger of shuffled runs) it gives the run's odometer's epsilon (add-or-remove ledger), neither
    doubled nor halved, and both sit at the exact epsilon of 2 sqrt(E)/sigma-GDP (Dong, Roth & Su 2022)."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    from dpcore.accounting import Neighbouring

    sigma, epochs, delta = 6.0, 8, 1e-5
    event = shuffled_dpsgd_event(noise_multiplier=sigma, epochs=epochs)
    add_remove, replace_one = (epsilon_of_event(event, delta=delta, accountant=accountant, neighbouring=rel)
                               for rel in (Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE))
    assert add_remove == replace_one
    mu = 2 * np.sqrt(epochs) / sigma
    exact = brentq(lambda e: norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2) - delta, 0, 50,
                   xtol=1e-12)
    assert exact * (1 - 1e-9) <= replace_one <= exact * (1.02 if accountant == "pld" else 1.35)
